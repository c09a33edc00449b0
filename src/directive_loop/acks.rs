//! Recording a delegate's acks (`git swarm ack`), checked against what the
//! delegation was shown: an ack for a directive not shown is not credited
//! (recorded as spoofed), and a critical shown and not acknowledged is an
//! `unacknowledged` violation. Running it again on the same message records
//! nothing new: what the delegation recorded already is looked up in the log.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::check::Warning;
use crate::directive::Priority;
use crate::directive_loop::marks::{self, AckStatus};
use crate::directive_loop::records;
use crate::error::{Error, Result};
use crate::event::{Body, Event, Kind};
use crate::store::Store;

/// Spoofed acks recorded (and listed) from one message, at most.
const SPOOFS_RECORDED: usize = 20;

/// The longest reason recorded, in characters: a reason is a sentence or
/// two, and every ack must fit an event line (`events.max_line_bytes`).
pub const MAX_REASON_CHARS: usize = 500;

/// What `git swarm ack` was given.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The delegation id `git swarm inject` printed.
    pub delegation: &'a str,
    /// The delegate's final message.
    pub message: &'a str,
    /// The message's file as warnings name it (`standard input` for `-`).
    pub source: &'a str,
    /// Leave the criticals shown and not acknowledged unrecorded (listed in
    /// [`Report::missing`]): an agent hook asks the delegate for them once
    /// before they count as `unacknowledged`.
    pub defer_unacknowledged: bool,
}

/// One directive's line in the report.
#[derive(Debug, Serialize)]
pub struct Line {
    pub id: String,
    /// applied, ignored, n_a, violated, spoofed, unacknowledged.
    pub outcome: String,
    pub reason: Option<String>,
    /// Recorded now (false: the same was recorded already).
    pub recorded: bool,
    pub note: Option<String>,
}

/// What [`record`] decided.
#[derive(Debug)]
pub struct Report {
    /// The delegation's id.
    pub delegation: String,
    pub lines: Vec<Line>,
    /// The events to append.
    pub events: Vec<Event>,
    /// Lines for the local audit log of unacknowledged criticals (see
    /// [`write_audit`]), once the events are appended.
    pub audit: Vec<String>,
    /// In the order they arose.
    pub warnings: Vec<Warning>,
    /// A violation is among the events: an escalation may be due once they
    /// are appended.
    pub violations: bool,
    /// The delegation was shown a critical directive (what to say when the
    /// message records nothing).
    pub criticals_shown: bool,
    /// The critical directives shown that neither this message nor an
    /// earlier one for the delegation acknowledges, in id order.
    pub missing: Vec<String>,
}

/// Refuses a `message` (read from `source`) with nothing but whitespace:
/// `lacks` says what it has none of, `hint` what to pass instead.
pub(crate) fn refuse_empty(message: &str, source: &str, lacks: &str, hint: &str) -> Result<()> {
    if message.trim().is_empty() {
        return Err(Error::usage(format!("{source} is empty: {lacks}"), hint));
    }
    Ok(())
}

/// The events the message's acks add to the log `events` (read with
/// [`records::read_log`]).
pub fn record(store: &Store, events: &[Event], req: &Request<'_>) -> Result<Report> {
    let Some(delegation) = records::delegation(events, req.delegation) else {
        return Err(Error::usage(
            format!("no delegation `{}` in the event log", req.delegation),
            "use the id in the `delegation=\"…\"` of the block `git swarm inject` printed",
        ));
    };
    // What this delegation has recorded already: a second run adds nothing.
    let mine: Vec<&Event> = events
        .iter()
        .filter(|e| e.str_field("delegation") == Some(delegation.id.as_str()))
        .collect();
    let already = |kind: Kind, id: &str| {
        mine.iter().any(|e| {
            e.known_kind() == Some(kind)
                && (e.directive.as_deref() == Some(id) || e.str_field("claimed") == Some(id))
        })
    };
    // The same ack, reason included: a second message that adds the reason
    // an earlier one lacked is recorded, and completes the ack for the gate.
    let same_ack = |id: &str, status: &str, reason: Option<&str>| {
        mine.iter().any(|e| {
            e.known_kind() == Some(Kind::Ack)
                && e.directive.as_deref() == Some(id)
                && e.str_field("status") == Some(status)
                && e.str_field("reason") == reason
        })
    };

    let mut warnings = Vec::new();
    // A silent delegate (an empty or blank final message) acknowledges
    // nothing: it is read like any message without acks, so that the
    // criticals it was shown are recorded unacknowledged, with a warning
    // in case the wrong file was passed.
    let silent = req.message.trim().is_empty();
    // The last ack of each id in the message stands.
    let mut acks: BTreeMap<String, marks::Ack> = BTreeMap::new();
    for mut a in marks::parse_acks(req.message) {
        if let Some(r) = &mut a.reason {
            let place = format!("{}:{}", req.source, a.line);
            warnings.extend(cap_reason(r, &place, "reason", &a.id));
        }
        acks.insert(a.id.clone(), a);
    }
    let mut lines = Vec::new();
    let mut new_events = Vec::new();
    // Past a few, spoofed acks say nothing new of the delegate, and a message
    // of a million of them must not grow the tracked log by as many lines.
    let mut spoofed = 0usize;
    let mut unrecorded_spoofs = 0usize;
    for (id, a) in &acks {
        let status = match a.status {
            AckStatus::Applied => "applied",
            AckStatus::Ignored => "ignored",
            AckStatus::NotApplicable => "n_a",
            AckStatus::Violated => "violated",
        };
        if !delegation.shows(id) {
            spoofed += 1;
            if spoofed > SPOOFS_RECORDED {
                unrecorded_spoofs += 1;
                continue;
            }
            let recorded = !already(Kind::SpoofedAck, id);
            if recorded {
                new_events.push(store.event(Body::SpoofedAck {
                    delegation: delegation.id.clone(),
                    claimed: id.clone(),
                    status: status.to_owned(),
                }));
            }
            lines.push(Line {
                id: id.clone(),
                outcome: "spoofed".into(),
                reason: a.reason.clone(),
                recorded,
                note: Some("not shown in this delegation: not credited".into()),
            });
            continue;
        }
        let recorded = !same_ack(id, status, a.reason.as_deref());
        if recorded {
            let e = store.event(Body::Ack {
                delegation: delegation.id.clone(),
                status: status.to_owned(),
                reason: a.reason.clone(),
                phase: delegation.phase.clone(),
            });
            new_events.push(e.by_role(delegation.role.clone()).about(id));
        }
        let note = if a.status == AckStatus::Violated {
            Some("admitted: a violation".to_owned())
        } else {
            (a.status != AckStatus::Applied && a.reason.is_none())
                .then(|| "no reason given: not a terminal outcome for the phase gate".to_owned())
        };
        lines.push(Line {
            id: id.clone(),
            outcome: status.into(),
            reason: a.reason.clone(),
            recorded,
            note,
        });
    }
    // A critical acknowledged by this message or an earlier one for the
    // same delegation is acknowledged: a follow-up message need not repeat it.
    let mut audit = Vec::new();
    let mut missing = Vec::new();
    for s in delegation.shown.iter().filter(|s| {
        s.priority == Priority::Critical && !acks.contains_key(&s.id) && !already(Kind::Ack, &s.id)
    }) {
        missing.push(s.id.clone());
        if req.defer_unacknowledged {
            continue;
        }
        let recorded = !already(Kind::Unacknowledged, &s.id);
        if recorded {
            let e = store
                .event(Body::Unacknowledged {
                    delegation: delegation.id.clone(),
                    phase: delegation.phase.clone(),
                })
                .by_role(delegation.role.clone())
                .about(&s.id);
            audit.push(e.to_line());
            new_events.push(e);
        }
        lines.push(Line {
            id: s.id.clone(),
            outcome: "unacknowledged".into(),
            reason: None,
            recorded,
            note: Some("critical, shown, and not acknowledged: a violation".into()),
        });
    }
    if silent {
        let consequence = if missing.is_empty() || req.defer_unacknowledged {
            ""
        } else {
            ", so the critical directives shown are recorded unacknowledged"
        };
        warnings.push(Warning::new(
            format!("{} is empty: no acks in it{consequence}", req.source),
            Some("a silent delegate acknowledges nothing; if this is not the delegate's final message, pass that one (FILE, or `-` for standard input)"),
        ));
    }
    if unrecorded_spoofs > 0 {
        warnings.push(Warning::new(
            format!(
                "{unrecorded_spoofs} more ack(s) for directives not shown were neither credited nor recorded (at most {SPOOFS_RECORDED} a message)"
            ),
            None,
        ));
    }
    let violations = lines
        .iter()
        .any(|l| l.recorded && matches!(l.outcome.as_str(), "violated" | "unacknowledged"));
    let criticals_shown = delegation
        .shown
        .iter()
        .any(|s| s.priority == Priority::Critical);
    Ok(Report {
        delegation: delegation.id,
        lines,
        events: new_events,
        audit,
        warnings,
        violations,
        criticals_shown,
        missing,
    })
}

/// Cuts `text` (a reason or evidence given for directive `id`, at `place`)
/// to [`MAX_REASON_CHARS`], with the warning that says so: one long text
/// must not fail the whole command by making an event line too long.
pub fn cap_reason(text: &mut String, place: &str, what: &str, id: &str) -> Option<Warning> {
    let (cut, _) = text.char_indices().nth(MAX_REASON_CHARS)?;
    let warning = Warning::new(
        format!(
            "{place}: the {what} for `{id}` is {} characters: only the first {MAX_REASON_CHARS} are recorded",
            text.chars().count()
        ),
        Some("keep it to a sentence or two"),
    );
    text.truncate(cut);
    text.push('…');
    Some(warning)
}

/// Appends lines to the local audit log of unacknowledged criticals.
pub fn write_audit(store: &Store, lines: &[String]) -> Result<()> {
    use std::io::Write as _;
    let dir = store.create_local_dir()?;
    let path = dir.join("unacknowledged-criticals.jsonl");
    let mut f = crate::safe_fs::open(&path, std::fs::OpenOptions::new().create(true).append(true))
        .map_err(|e| Error::io(&path, e))?;
    f.write_all(lines.concat().as_bytes())
        .map_err(|e| Error::io(&path, e))?;
    Ok(())
}
