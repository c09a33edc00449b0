//! The reviewer's side of a phase (`git swarm review`): the block of what
//! to verify, and the verdicts read back. Where the machine has an answer
//! (the predicates passed or failed) and the reviewer disagrees, the
//! machine's stands and both are recorded; a critical directive with no
//! verdict is a violation (`reviewer_omitted`) unless the machine passed it.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::check::{Outcome as Machine, Warning};
use crate::directive_loop::inject::{sanitise, verification};
use crate::directive_loop::marks::{self, VerdictStatus};
use crate::directive_loop::records::PhaseRecord;
use crate::error::{Error, Result};
use crate::event::{Body, Event};
use crate::index::Index;
use crate::store::Store;

/// The block's size bound: directives beyond it are named, not shown.
const BLOCK_CHARS: usize = 24_000;

/// The `<directives_to_verify>` block for a phase's `records`.
pub fn render_block(phase: &str, records: &[PhaseRecord], index: &Index) -> String {
    let mut out = format!("<directives_to_verify phase=\"{phase}\">\n");
    out.push_str("Give one verdict line per directive below, one of\n");
    out.push_str("VERIFIED:<id> evidence=<what shows it> | VIOLATED:<id> evidence=<where> | N/A:<id> reason=<why>\n");
    out.push_str("Critical directives without a verdict count as violations.\n");
    let mut used = 0;
    let mut omitted = Vec::new();
    for r in records {
        let d = index.directive(&r.id).and_then(|e| e.directive.as_ref());
        let priority = if r.critical {
            "critical"
        } else {
            "not critical"
        };
        let mut entry = format!("- id: {}\n  priority: {priority}\n", r.id);
        match d {
            Some(d) => {
                entry.push_str(&format!("  lesson: {}\n", sanitise(&d.lesson)));
                let checks = verification(d);
                if !checks.is_empty() {
                    entry.push_str(&format!("  verification: {}\n", checks.join("; ")));
                }
            }
            None => entry.push_str("  lesson: (no longer in .swarm/directives/)\n"),
        }
        if used + entry.len() > BLOCK_CHARS {
            omitted.push(r.id.clone());
            continue;
        }
        used += entry.len();
        out.push_str(&entry);
    }
    if !omitted.is_empty() {
        out.push_str(&format!(
            "({} more, over the size bound: {})\n",
            omitted.len(),
            omitted.join(", ")
        ));
    }
    out.push_str("</directives_to_verify>\n");
    out
}

/// The verdicts a reviewer's message gives for a phase's directives.
#[derive(Debug, Default)]
pub struct Verdicts {
    /// The last verdict for each directive of the phase.
    pub given: BTreeMap<String, marks::Verdict>,
    /// Ids with a verdict that were not shown in the phase, in text order.
    pub outside: Vec<String>,
    /// Evidence cut to length (see [`super::acks::cap_reason`]).
    pub warnings: Vec<Warning>,
}

/// Reads the verdict lines of `message` (from `source`, as messages name
/// it); an empty message is refused: every critical would be recorded as
/// omitted by the reviewer, from no review at all.
pub fn read_verdicts(message: &str, source: &str, records: &[PhaseRecord]) -> Result<Verdicts> {
    super::acks::refuse_empty(
        message,
        source,
        "no verdicts to record",
        "pass the reviewer's final message, with a VERIFIED:/VIOLATED:/N/A: line per directive",
    )?;
    let mut out = Verdicts::default();
    for mut v in marks::parse_verdicts(message) {
        if let Some(ev) = &mut v.evidence {
            let place = format!("{source}:{}", v.line);
            out.warnings
                .extend(super::acks::cap_reason(ev, &place, "evidence", &v.id));
        }
        if records.iter().any(|r| r.id == v.id) {
            out.given.insert(v.id.clone(), v);
        } else if !out.outside.contains(&v.id) {
            out.outside.push(v.id.clone());
        }
    }
    Ok(out)
}

/// One verdict as recorded.
#[derive(Debug, Serialize)]
pub struct Recorded {
    pub id: String,
    pub verdict: String,
    pub reviewer: String,
    pub machine: String,
    pub evidence: Option<String>,
    pub reason: Option<String>,
    pub disagreement: bool,
}

/// What [`decide`] decided: one `verdict` event per directive that has one.
#[derive(Debug)]
pub struct Report {
    pub recorded: Vec<Recorded>,
    pub events: Vec<Event>,
    /// One for each verdict for a directive not shown in the phase.
    pub ignored: Vec<Warning>,
}

impl Report {
    /// A violation is among the verdicts: an escalation may be due once
    /// the events are appended.
    pub fn violations(&self) -> bool {
        self.recorded.iter().any(|r| r.verdict == "violated")
    }
}

/// Weighs the reviewer's verdicts against the machine's results (`machine`:
/// each directive's outcome on the change; empty when none was given).
pub fn decide(
    store: &Store,
    phase: &str,
    records: &[PhaseRecord],
    verdicts: &Verdicts,
    machine: &BTreeMap<String, Machine>,
) -> Report {
    let mut recorded = Vec::new();
    let mut events = Vec::new();
    for r in records {
        let reviewer = verdicts.given.get(&r.id);
        let m = machine.get(&r.id).copied();
        let m_word = m.map_or("not run", Machine::as_str);
        let reviewer_word = reviewer.map_or("omitted", |v| verdict_word(v.status));
        let (verdict, reason, disagreement) = match (reviewer.map(|v| v.status), m) {
            (Some(VerdictStatus::Violated), Some(Machine::Pass)) => ("verified", None, true),
            (Some(VerdictStatus::Verified | VerdictStatus::NotApplicable), Some(Machine::Fail)) => {
                ("violated", None, true)
            }
            (Some(s), _) => (verdict_word(s), None, false),
            (None, Some(Machine::Pass)) => ("verified", None, false),
            (None, Some(Machine::Fail)) => ("violated", None, false),
            (None, _) if r.critical => ("violated", Some("reviewer_omitted".to_owned()), false),
            (None, _) => continue,
        };
        let reason = reason.or_else(|| {
            reviewer
                .and_then(|v| v.evidence.clone())
                .filter(|_| verdict == "n_a")
        });
        let evidence = reviewer.and_then(|v| v.evidence.clone());
        let e = store.event(Body::Verdict {
            phase: phase.to_owned(),
            verdict: verdict.to_owned(),
            reviewer: reviewer_word.to_owned(),
            machine: m_word.to_owned(),
            disagreement,
            evidence: evidence.clone(),
            reason: reason.clone(),
        });
        events.push(e.about(&r.id));
        recorded.push(Recorded {
            id: r.id.clone(),
            verdict: verdict.into(),
            reviewer: reviewer_word.into(),
            machine: m_word.into(),
            evidence,
            reason,
            disagreement,
        });
    }
    let ignored = verdicts
        .outside
        .iter()
        .map(|id| {
            let hint = crate::suggest::closest(id, records.iter().map(|r| r.id.as_str())).map(|m| {
                format!(
                    "did you mean `{m}`? `git swarm review --phase {phase}` lists the phase's directives"
                )
            });
            Warning::new(
                format!("verdict for `{id}` ignored: it was not shown in phase {phase}"),
                hint.as_deref(),
            )
        })
        .collect();
    Report {
        recorded,
        events,
        ignored,
    }
}

fn verdict_word(s: VerdictStatus) -> &'static str {
    match s {
        VerdictStatus::Verified => "verified",
        VerdictStatus::Violated => "violated",
        VerdictStatus::NotApplicable => "n_a",
    }
}

/// Refuses verdicts for a phase nothing was shown in: they could only be
/// ignored, and that is more often a mistyped name than a review of nothing.
pub fn check_reviewable(events: &[Event], phase: &str, records: &[PhaseRecord]) -> Result<()> {
    if records.is_empty() {
        return Err(Error::usage(
            format!("no directive was shown in phase `{phase}`: no verdict recorded"),
            super::records::unknown_phase_hint(events, phase),
        ));
    }
    Ok(())
}
