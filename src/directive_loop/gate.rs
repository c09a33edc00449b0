//! The gate that closes a phase (`git swarm phase complete`).
//!
//! Each critical directive of the phase (critical when shown, or escalated
//! since) needs a terminal outcome in it, and its last violation a later
//! applied or verified outcome; a human may accept what blocks, with a
//! justification, as recorded `override` events.

use crate::check::Warning;
use crate::directive_loop::records::{self, Blocker, PhaseRecord};
use crate::error::{Error, Result};
use crate::event::{Body, Event, PhaseStatus};
use crate::index::Index;
use crate::store::Store;

/// The shortest justification accepted for an override (and for the other
/// human decisions recorded with one: a retirement, a deescalation).
pub const MIN_JUSTIFICATION: usize = 10;

/// `text` trimmed, refused when shorter than [`MIN_JUSTIFICATION`]: the
/// error says what `needs` it, and `hint` how to write one.
pub fn justification<'a>(text: &'a str, needs: &str, hint: &str) -> Result<&'a str> {
    let text = text.trim();
    let chars = text.chars().count();
    if chars < MIN_JUSTIFICATION {
        return Err(Error::usage(
            format!(
                "the justification is {chars} character(s); {needs} needs at least {MIN_JUSTIFICATION}"
            ),
            hint,
        ));
    }
    Ok(text)
}

/// What `git swarm phase complete` was asked.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub phase: &'a str,
    /// Directives to accept despite their state (an id given twice is one).
    pub accept: &'a [String],
    pub justification: Option<&'a str>,
    /// Complete the phase even though no directive was shown in it.
    pub allow_empty: bool,
}

/// Whether the phase completes.
#[derive(Debug)]
pub enum Decision {
    /// Critical directives block it.
    Blocked(Vec<Blocker>),
    Complete {
        /// The phase's directives, overrides included.
        records: Vec<PhaseRecord>,
        /// It was recorded as complete before.
        already: bool,
        /// The `phase` event to append (none when complete already).
        event: Option<Event>,
    },
}

/// What [`complete`] decided.
#[derive(Debug)]
pub struct Report {
    /// `override` events, appended whatever the decision.
    pub overrides: Vec<Event>,
    /// Accepted ids that had nothing to override.
    pub warnings: Vec<Warning>,
    pub decision: Decision,
}

/// Decides whether `req.phase` completes, from the log `events` (read with
/// [`records::read_log`]) and the `index` (escalations, retirements).
pub fn complete(
    store: &Store,
    index: &Index,
    events: &[Event],
    req: &Request<'_>,
) -> Result<Report> {
    let phase = req.phase;
    let mut records = records::phase_records(events, phase, index);
    let mut blockers = records::phase_blockers(&records, &index.fold);
    let done = records::phase_completed(events, phase).is_some();

    let mut accepted: Vec<String> = Vec::new();
    for id in req.accept {
        if !accepted.contains(id) {
            accepted.push(id.clone());
        }
    }
    let mut overrides = Vec::new();
    let mut warnings = Vec::new();
    if !accepted.is_empty() {
        let justification = justification(
            req.justification.unwrap_or(""),
            "an override",
            "say why these violations are acceptable, in a sentence",
        )?;
        for id in &accepted {
            if !records.iter().any(|r| &r.id == id) {
                return Err(Error::usage(
                    format!("`{id}` was not shown in phase `{phase}`"),
                    format!(
                        "only the phase's directives can be accepted; `git swarm review --phase {phase}` lists them"
                    ),
                ));
            }
        }
        // An override records a decision about a blocker: an id that does
        // not block (or a phase already complete) has nothing to override.
        for id in &accepted {
            match blockers.iter().find(|b| &b.id == id) {
                Some(b) if !done => {
                    let e = store.event(Body::Override {
                        phase: phase.to_owned(),
                        justification: justification.to_owned(),
                        blocked: b.reason.clone(),
                    });
                    overrides.push(e.about(id));
                }
                _ => warnings.push(Warning::new(
                    format!(
                        "`{id}` {}: no override recorded for it",
                        if done {
                            format!("is in phase {phase}, which was already complete")
                        } else {
                            format!("does not block phase {phase}")
                        }
                    ),
                    None,
                )),
            }
        }
        blockers.retain(|b| !accepted.contains(&b.id));
        for r in records.iter_mut().filter(|r| {
            overrides
                .iter()
                .any(|o| o.directive.as_ref() == Some(&r.id))
        }) {
            r.overridden = true;
        }
    }

    let decision = if !blockers.is_empty() {
        Decision::Blocked(blockers)
    } else if records.is_empty() && !done && !req.allow_empty {
        // Nothing to gate is more often a mistyped name than a phase in
        // which nothing was in scope: the latter is said explicitly.
        let hint = format!(
            "{}; --allow-empty completes a phase in which nothing was in scope",
            records::unknown_phase_hint(events, phase)
        );
        return Err(Error::usage(
            format!("no directive was shown in phase `{phase}`: nothing recorded"),
            hint,
        ));
    } else {
        let event = (!done).then(|| {
            store.event(Body::Phase {
                phase: phase.to_owned(),
                status: PhaseStatus::Complete,
                directives: records.iter().map(|r| r.id.clone()).collect(),
            })
        });
        Decision::Complete {
            records,
            already: done,
            event,
        }
    };
    Ok(Report {
        overrides,
        warnings,
        decision,
    })
}
