//! The index's pattern section: the whole pattern fold, encoded, and beside
//! it each role's observed patterns as [`View`]s, so that a pattern command
//! decodes one role's patterns, with their strings borrowed from the mapped
//! file, instead of the whole fold.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::mapped::{Map, bytes_at, decode};
use crate::error::Result;
use crate::pattern::fold::{PatternFold, View};

/// The pattern section, as [`PatternViews::parts`] gives it: the whole
/// pattern fold, encoded, and beside it each role's observed patterns as
/// [`View`]s in id order (plus, under [`PROMOTED`], every promoted one) and
/// what it takes to patch them with events that came after it (see [`super::Patterns`]).
#[derive(Serialize, Deserialize)]
pub struct PatternSection<'a> {
    #[serde(borrow, with = "serde_bytes")]
    fold: &'a [u8],
    #[serde(borrow)]
    pub groups: Vec<(&'a str, &'a serde_bytes::Bytes)>,
    /// alias → pattern, sorted by alias.
    #[serde(borrow)]
    pub aliases: Vec<(&'a str, &'a str)>,
    /// Patterns never observed (shown or graded by id only), sorted: they
    /// have no view, so events for them need the whole fold.
    #[serde(borrow)]
    pub unobserved: Vec<&'a str>,
    /// Runs with an outcome: run → (pass, ms), sorted by run.
    #[serde(borrow)]
    pub outcomes: Vec<(&'a str, (bool, i64))>,
}

/// The group of promoted patterns (not a role name: those have no `*`).
pub const PROMOTED: &str = "*promoted";

pub(super) fn decode_patterns(bytes: &[u8]) -> Result<PatternFold> {
    let s: PatternSection = decode(bytes, "patterns")?;
    decode(s.fold, "patterns")
}

pub(super) fn encode_patterns(fold: &PatternFold) -> std::result::Result<Vec<u8>, postcard::Error> {
    let mut groups: std::collections::BTreeMap<&str, Vec<View<'_>>> = Default::default();
    for (id, p) in fold.observed() {
        let view = p.view(id);
        if view.stats.promoted.is_some() {
            groups.entry(PROMOTED).or_default().push(view.clone());
        }
        groups.entry(&p.role).or_default().push(view);
    }
    let encoded: Vec<(&str, Vec<u8>)> = groups
        .into_iter()
        .map(|(role, views)| postcard::to_stdvec(&views).map(|b| (role, b)))
        .collect::<std::result::Result<_, _>>()?;
    let fold_bytes = postcard::to_stdvec(fold)?;
    postcard::to_stdvec(&PatternSection {
        fold: &fold_bytes,
        groups: encoded
            .iter()
            .map(|(r, b)| (*r, serde_bytes::Bytes::new(b)))
            .collect(),
        aliases: fold.alias_pairs().collect(),
        unobserved: fold.unobserved().collect(),
        outcomes: fold
            .outcomes
            .iter()
            .map(|(run, o)| (run.as_str(), *o))
            .collect(),
    })
}

impl<'a> PatternSection<'a> {
    /// The views of group `name` (a role, or [`PROMOTED`]; none when there is no such group).
    pub fn group(&self, name: &str) -> Result<Vec<View<'a>>> {
        match self.groups.binary_search_by(|(g, _)| (*g).cmp(name)) {
            Ok(i) => decode(self.groups[i].1, "patterns"),
            Err(_) => Ok(Vec::new()),
        }
    }
}

/// The patterns `pattern inject` reads, left in the mapped index file.
#[derive(Debug)]
pub struct PatternViews {
    /// An index file whose checksums were found right, and where the section is in it.
    pub(super) map: Arc<Map>,
    pub(super) at: u64,
    pub(super) len: u64,
}

impl PatternViews {
    /// The whole pattern fold, decoded.
    pub fn fold(&self) -> Result<PatternFold> {
        decode_patterns(bytes_at(&self.map, self.at, self.len, "patterns")?)
    }

    /// The section, its fold left encoded.
    pub fn parts(&self) -> Result<PatternSection<'_>> {
        decode(
            bytes_at(&self.map, self.at, self.len, "patterns")?,
            "patterns",
        )
    }
}
