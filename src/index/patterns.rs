//! The patterns `pattern inject`, `extract` and `feedback` read: one
//! role's views, read in place from the index's pattern section, patched
//! with the pattern events appended since it was written.

use std::cell::OnceCell;
use std::collections::BTreeMap;

use super::pattern_section::{self, PatternViews};
use crate::error::Result;
use crate::fold::EventHead;
use crate::pattern::fold::{Pattern, PatternFold, View};

/// The observed patterns, as [`super::load_pattern_views`] gives them.
#[derive(Debug)]
pub struct Patterns(Source);

#[derive(Debug)]
enum Source {
    /// The whole fold, decoded because it was just updated (or rebuilt).
    Fold(PatternFold),
    /// The index file's pattern section, and the pattern events appended
    /// since it was written, in order, not folded into it.
    Section {
        views: PatternViews,
        pending: Vec<EventHead>,
        patched: OnceCell<Patched>,
    },
}

/// The patterns the pending events touch, after those events: each seeded
/// from its view, or the whole fold when one of them has a record but no view.
#[derive(Debug)]
enum Patched {
    Touched(PatternFold),
    Whole(PatternFold),
}

/// One role's observed patterns, in id order, with the aliases of
/// near-duplicates (see [`Patterns::role_patterns`]).
#[derive(Debug)]
pub struct RolePatterns<'a> {
    pub views: Vec<View<'a>>,
    aliases: Vec<(&'a str, &'a str)>,
    /// Patterns of any role with a record but never observed, sorted.
    unobserved: Vec<&'a str>,
}

impl Patterns {
    pub(super) fn from_fold(fold: PatternFold) -> Patterns {
        Patterns(Source::Fold(fold))
    }

    pub(super) fn from_section(views: PatternViews, pending: Vec<EventHead>) -> Patterns {
        Patterns(Source::Section {
            views,
            pending,
            patched: OnceCell::new(),
        })
    }

    /// The observed patterns `pattern inject` ranks for `role`: its own and
    /// the promoted ones of other roles (from the fold, all of them).
    pub fn pattern_views(&self, role: &str) -> Result<Vec<View<'_>>> {
        fn all(fold: &PatternFold) -> Vec<View<'_>> {
            fold.observed().map(|(id, p)| p.view(id)).collect()
        }
        let views = match &self.0 {
            Source::Fold(fold) => return Ok(all(fold)),
            Source::Section { views, .. } => views,
        };
        let parts = views.parts()?;
        let own = parts.group(role)?;
        let promoted = parts.group(pattern_section::PROMOTED)?;
        let (own, promoted) = match self.patched(role, &[&own, &promoted])? {
            None => (own, promoted),
            Some(Patched::Whole(fold)) => return Ok(all(fold)),
            Some(Patched::Touched(touched)) => (
                patch_group(own, touched, |p| p.role == role),
                patch_group(promoted, touched, |p| p.stats.promoted.is_some()),
            ),
        };
        let mut views: Vec<View<'_>> = own;
        views.extend(promoted.into_iter().filter(|p| p.role != role));
        Ok(views)
    }

    /// The observed patterns of `role` alone, as `pattern feedback` reads
    /// them: one role's views, not the whole fold.
    pub fn role_patterns(&self, role: &str) -> Result<RolePatterns<'_>> {
        fn whole<'a>(fold: &'a PatternFold, role: &str) -> RolePatterns<'a> {
            RolePatterns {
                views: fold
                    .observed()
                    .filter(|(_, p)| p.role == role)
                    .map(|(id, p)| p.view(id))
                    .collect(),
                aliases: fold.alias_pairs().collect(),
                unobserved: fold.unobserved().collect(),
            }
        }
        let views = match &self.0 {
            Source::Fold(fold) => return Ok(whole(fold, role)),
            Source::Section { views, .. } => views,
        };
        let parts = views.parts()?;
        let own = parts.group(role)?;
        Ok(match self.patched(role, &[&own])? {
            None => RolePatterns {
                views: own,
                aliases: parts.aliases,
                unobserved: parts.unobserved,
            },
            Some(Patched::Whole(fold)) => whole(fold, role),
            Some(Patched::Touched(touched)) => {
                let views = patch_group(own, touched, |p| p.role == role);
                // The aliases the new events add come after the index's: the first stays.
                let mut aliases = parts.aliases;
                for (a, p) in &touched.aliases {
                    if let Err(at) = aliases.binary_search_by(|(x, _)| (*x).cmp(a.as_str())) {
                        aliases.insert(at, (a.as_str(), p.as_str()));
                    }
                }
                // New records the events made without observing them.
                let mut records = parts.unobserved;
                records.extend(touched.unobserved());
                records.sort_unstable();
                records.dedup();
                RolePatterns {
                    views,
                    aliases,
                    unobserved: records,
                }
            }
        })
    }

    /// The pending pattern events applied to the patterns they touch, once
    /// (`known`: groups decoded already, where to look first); `None` when
    /// there are none.
    fn patched(&self, role: &str, known: &[&[View<'_>]]) -> Result<Option<&Patched>> {
        let Source::Section {
            views,
            pending,
            patched,
        } = &self.0
        else {
            return Ok(None);
        };
        if pending.is_empty() {
            return Ok(None);
        }
        if patched.get().is_none() {
            // A reader asks once; should it fail, the error goes to that one call.
            let _ = patched.set(patch(views, pending, (role, known))?);
        }
        Ok(patched.get())
    }
}

impl<'a> RolePatterns<'a> {
    /// Does the fold hold a record for this id (through an alias), observed
    /// or not — as [`PatternFold::resolve`] finds one?
    pub fn has_record(&self, id: &str) -> bool {
        self.resolve(id).is_some() || self.unobserved.binary_search(&self.target(id)).is_ok()
    }

    /// The pattern an id names, following a near-duplicate's alias, as
    /// [`PatternFold::resolve`] does.
    pub fn resolve(&self, id: &str) -> Option<&View<'a>> {
        let id = self.target(id);
        self.views
            .binary_search_by(|v| v.id.cmp(id))
            .ok()
            .map(|i| &self.views[i])
    }

    /// The pattern an id stands for: the one it joined, if it is an alias.
    fn target<'s>(&'s self, id: &'s str) -> &'s str {
        match self.aliases.binary_search_by(|(a, _)| (*a).cmp(id)) {
            Ok(i) => self.aliases[i].1,
            Err(_) => id,
        }
    }
}

/// Folds `pending` into the patterns they touch, each seeded from its view;
/// the whole fold when one of them has a record but no view.
fn patch(
    v: &PatternViews,
    pending: &[EventHead],
    (first, known): (&str, &[&[View<'_>]]),
) -> Result<Patched> {
    let parts = v.parts()?;
    let mut wanted: BTreeMap<&str, Option<&str>> = BTreeMap::new();
    for e in pending.iter().filter_map(|h| h.pattern.as_ref()) {
        for id in e.ids() {
            // An observation names its role: the group to look in.
            let hint = e
                .role
                .as_deref()
                .filter(|_| e.pattern.as_deref() == Some(id));
            let slot = wanted.entry(id.as_str()).or_insert(None);
            if slot.is_none() {
                *slot = hint;
            }
        }
    }
    if wanted
        .keys()
        .any(|id| parts.unobserved.binary_search(id).is_ok())
    {
        let mut fold = v.fold()?;
        for h in pending {
            fold.apply_head(h);
        }
        return Ok(Patched::Whole(fold));
    }
    let mut fold = PatternFold {
        outcomes: parts
            .outcomes
            .iter()
            .map(|(run, o)| ((*run).to_owned(), *o))
            .collect(),
        ..PatternFold::default()
    };
    fn seed(views: &[View<'_>], wanted: &mut BTreeMap<&str, Option<&str>>, fold: &mut PatternFold) {
        wanted.retain(|id, _| match views.binary_search_by(|v| v.id.cmp(id)) {
            Ok(i) => {
                fold.patterns
                    .insert((*id).to_owned(), Pattern::from_view(&views[i]));
                false
            }
            Err(_) => true,
        });
    }
    // Every observed pattern is in its role's group (a promoted one in
    // that group too): the reader's groups first, the others as needed.
    for views in known {
        seed(views, &mut wanted, &mut fold);
    }
    for (group, _) in &parts.groups {
        if wanted.is_empty() {
            break;
        }
        let unhinted = wanted.values().any(Option::is_none);
        if *group == pattern_section::PROMOTED
            || *group == first
            || (!unhinted && !wanted.values().any(|h| h == &Some(*group)))
        {
            continue;
        }
        seed(&parts.group(group)?, &mut wanted, &mut fold);
    }
    for h in pending {
        fold.apply_head(h);
    }
    Ok(Patched::Touched(fold))
}

/// A group's views with the touched patterns in their new state: replaced,
/// and those that now belong to it (`belongs`) added, in id order.
fn patch_group<'a>(
    group: Vec<View<'a>>,
    touched: &'a PatternFold,
    belongs: impl Fn(&Pattern) -> bool,
) -> Vec<View<'a>> {
    let mut out: Vec<View<'a>> = group
        .into_iter()
        .filter(|v| !touched.patterns.contains_key(v.id))
        .collect();
    out.extend(
        touched
            .observed()
            .filter(|(_, p)| belongs(p))
            .map(|(id, p)| p.view(id)),
    );
    out.sort_unstable_by(|a, b| a.id.cmp(b.id));
    out
}
