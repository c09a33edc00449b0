//! Storing a deliberation's observations as patterns (`git swarm pattern
//! extract`, docs/patterns.md).
//!
//! A pattern's id is a hash of its normalised text and the role: the same
//! text from the same role is one more observation of the same pattern, and
//! a near-duplicate (token Jaccard of at least `patterns.near_duplicate`)
//! joins the existing pattern. A pattern is observed at most once per run.

use crate::event::{Body, Event, Kind};
use crate::index::RolePatterns;
use crate::pattern::text::{self, Observation};
use crate::store::Store;

/// What `git swarm pattern extract` was given.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The role that wrote the deliberation.
    pub role: &'a str,
    pub run: &'a str,
    /// Labels and files of the work: the patterns' context.
    pub labels: &'a [String],
    pub files: &'a [String],
}

/// What became of one observation.
#[derive(Debug)]
pub struct Row {
    /// The pattern it is an observation of.
    pub id: String,
    /// `new`, `again`, `joined (J)`, or `already recorded for this run`.
    pub how: String,
    /// Its index among the observations given.
    pub observation: usize,
}

/// What [`observe`] decided.
#[derive(Debug)]
pub struct Report {
    /// One `pattern_observed` event per pattern observed now.
    pub events: Vec<Event>,
    pub rows: Vec<Row>,
}

/// The events that record `observations` against the role's patterns
/// `stored`.
pub fn observe(
    store: &Store,
    stored: &RolePatterns<'_>,
    observations: &[Observation],
    req: &Request<'_>,
) -> Report {
    let cfg = &store.config.patterns;
    // Existing patterns of the role, tokenised once, for near-duplicates.
    let mut known: Vec<(String, Vec<String>)> = stored
        .views
        .iter()
        .map(|p| (p.id.to_owned(), text::tokens(&text::normalise(p.text))))
        .collect();
    let mut events = Vec::new();
    let mut rows = Vec::new();
    for (i, o) in observations.iter().enumerate() {
        let own = text::pattern_id(&o.normalised, req.role);
        let toks = text::tokens(&o.normalised);
        let (id, mut how) = match stored.resolve(&own) {
            Some(p) => (p.id.to_owned(), "again".to_owned()),
            // A record shown or graded by id before it was ever observed.
            None if stored.has_record(&own) => (own.clone(), "again".to_owned()),
            None => {
                let best = known
                    .iter()
                    .filter(|(id, _)| *id != own)
                    .map(|(id, t)| (id, text::jaccard(&toks, t)))
                    .max_by(|a, b| a.1.total_cmp(&b.1).then_with(|| b.0.cmp(a.0)));
                match best {
                    Some((id, j)) if j >= cfg.near_duplicate => {
                        (id.clone(), format!("joined ({j:.2})"))
                    }
                    _ => (own.clone(), "new".to_owned()),
                }
            }
        };
        let seen = stored
            .resolve(&id)
            .is_some_and(|p| p.has(Kind::PatternObserved, req.run))
            || events
                .iter()
                .any(|e: &Event| e.str_field("pattern") == Some(&id));
        if seen {
            how = "already recorded for this run".to_owned();
        } else {
            if how == "new" {
                known.push((id.clone(), toks));
            }
            let e = store.event(Body::PatternObserved {
                pattern: id.clone(),
                alias: (id != own).then(|| own.clone()),
                role: req.role.to_owned(),
                text: o.text.clone(),
                category: o.category,
                run: req.run.to_owned(),
                labels: req.labels.to_vec(),
                files: req.files.to_vec(),
            });
            events.push(e.by_role(Some(req.role.to_owned())));
        }
        rows.push(Row {
            id,
            how,
            observation: i,
        });
    }
    Report { events, rows }
}
