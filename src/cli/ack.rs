//! `git swarm ack`.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;

use serde::Serialize;

use git_swarm::Error;
use git_swarm::directive::Priority;
use git_swarm::directive_loop::marks::{self, AckStatus};
use git_swarm::directive_loop::records as learning;

use super::{Format, Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The delegation id printed by `git swarm inject`.
    #[arg(long, value_name = "ID")]
    delegation: String,
    /// The delegate's final message (`-`: standard input).
    #[arg(value_name = "FILE", default_value = "-")]
    file: String,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

/// Spoofed acks recorded (and listed) from one message, at most.
const SPOOFS_RECORDED: usize = 20;

/// The longest reason recorded, in characters: a reason is a sentence or
/// two, and every ack must fit an event line (`events.max_line_bytes`).
pub const MAX_REASON_CHARS: usize = 500;

#[derive(Debug, Serialize)]
struct Line {
    id: String,
    /// applied, ignored, n_a, spoofed, unacknowledged.
    outcome: String,
    reason: Option<String>,
    /// Recorded now (false: the same was recorded already).
    recorded: bool,
    note: Option<String>,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    let text = super::inject::read_input(&args.file, "message")?;
    let shown_file = if args.file == "-" {
        "standard input"
    } else {
        args.file.as_str()
    };
    if text.trim().is_empty() {
        // Every critical would become an unacknowledged violation, from no message at all.
        return Err(Error::Usage {
            message: format!("{shown_file} is empty: the final message has no acks to record"),
            hint: Some(
                "pass the delegate's final message (FILE, or `-` for standard input); nothing was recorded"
                    .into(),
            ),
        }
        .into());
    }
    let store = super::store(ui)?;
    let (events, problems) = learning::read_log(&store)?;
    for p in &problems {
        ui.problem(p);
    }
    let Some(delegation) = learning::delegation(&events, &args.delegation) else {
        return Err(Error::Usage {
            message: format!("no delegation `{}` in the event log", args.delegation),
            hint: Some(
                "use the id in the `delegation=\"…\"` of the block `git swarm inject` printed"
                    .into(),
            ),
        }
        .into());
    };
    // What this delegation has recorded already: a second run adds nothing.
    let str_of = |e: &git_swarm::event::Event, k: &str| {
        e.data.get(k).and_then(|v| v.as_str()).map(str::to_owned)
    };
    let mine: Vec<&git_swarm::event::Event> = events
        .iter()
        .filter(|e| str_of(e, "delegation").as_deref() == Some(delegation.id.as_str()))
        .collect();
    let already = |kind: &str, id: &str, status: Option<&str>| {
        mine.iter().any(|e| {
            e.kind == kind
                && (e.directive.as_deref() == Some(id)
                    || str_of(e, "claimed").as_deref() == Some(id))
                && (status.is_none() || str_of(e, "status").as_deref() == status)
        })
    };
    // The same ack, reason included: a second message that adds the reason
    // an earlier one lacked is recorded, and completes the ack for the gate.
    let same_ack = |id: &str, status: &str, reason: Option<&str>| {
        mine.iter().any(|e| {
            e.kind == "ack"
                && e.directive.as_deref() == Some(id)
                && str_of(e, "status").as_deref() == Some(status)
                && str_of(e, "reason").as_deref() == reason
        })
    };

    // The last ack of each id in the message stands.
    let mut acks: BTreeMap<String, marks::Ack> = BTreeMap::new();
    for mut a in marks::parse_acks(&text) {
        if let Some(r) = &mut a.reason {
            cap_reason(r, &format!("{shown_file}:{}", a.line), "reason", &a.id, ui);
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
            let recorded = !already("spoofed_ack", id, None);
            if recorded {
                new_events.push(
                    store
                        .event("spoofed_ack")
                        .with("delegation", delegation.id.clone())
                        .with("claimed", id.clone())
                        .with("status", status),
                );
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
            let mut e = store
                .event("ack")
                .with("delegation", delegation.id.clone())
                .with("status", status);
            if let Some(r) = &a.reason {
                e = e.with("reason", r.clone());
            }
            if let Some(p) = &delegation.phase {
                e = e.with("phase", p.clone());
            }
            e.actor.role = delegation.role.clone();
            e.directive = Some(id.clone());
            new_events.push(e);
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
    for s in delegation.shown.iter().filter(|s| {
        s.priority == Priority::Critical
            && !acks.contains_key(&s.id)
            && !already("ack", &s.id, None)
    }) {
        let recorded = !already("unacknowledged", &s.id, None);
        if recorded {
            let mut e = store
                .event("unacknowledged")
                .with("delegation", delegation.id.clone());
            if let Some(p) = &delegation.phase {
                e = e.with("phase", p.clone());
            }
            e.actor.role = delegation.role.clone();
            e.directive = Some(s.id.clone());
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
    if unrecorded_spoofs > 0 {
        ui.warning(
            &format!(
                "{unrecorded_spoofs} more ack(s) for directives not shown were neither credited nor recorded (at most {SPOOFS_RECORDED} a message)"
            ),
            None,
        );
    }
    let violations = new_events.iter().any(|e| {
        e.kind == "unacknowledged"
            || (e.kind == "ack"
                && e.data.get("status").and_then(|s| s.as_str()) == Some("violated"))
    });
    if !new_events.is_empty() {
        super::append(&store, &new_events, ui)?;
    }
    if !audit.is_empty() {
        write_audit(&store, &audit)?;
    }
    if violations {
        super::escalate_from_index(&store, ui)?;
    }
    if args.format == Format::Json {
        ui.json(&serde_json::json!({
            "delegation": delegation.id,
            "acks": lines,
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    if lines.is_empty() {
        let criticals = delegation
            .shown
            .iter()
            .any(|s| s.priority == Priority::Critical);
        writeln!(
            ui.out,
            "{}",
            if criticals {
                "no acks in the message, and every critical directive shown is acknowledged already: nothing to record"
            } else {
                "no acks in the message, and no critical directive was shown: nothing to record"
            }
        )?;
    }
    for l in &lines {
        let mut s = format!("{:<15} {}", l.outcome, l.id);
        if let Some(r) = &l.reason {
            s.push_str(&format!("  reason: {r}"));
        }
        if let Some(n) = &l.note {
            s.push_str(&format!("  ({n})"));
        }
        if !l.recorded {
            s.push_str("  [recorded before]");
        }
        writeln!(ui.out, "{}", super::clean(&s))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Cuts `text` (a reason or evidence given for directive `id`, at `place`)
/// to [`MAX_REASON_CHARS`], saying so: one long text must not fail the
/// whole command by making an event line too long.
pub fn cap_reason(text: &mut String, place: &str, what: &str, id: &str, ui: &mut Ui) {
    if let Some((cut, _)) = text.char_indices().nth(MAX_REASON_CHARS) {
        ui.warning(
            &format!(
                "{place}: the {what} for `{id}` is {} characters: only the first {MAX_REASON_CHARS} are recorded",
                text.chars().count()
            ),
            Some("keep it to a sentence or two"),
        );
        text.truncate(cut);
        text.push('…');
    }
}

/// Appends lines to the local audit log of unacknowledged criticals.
fn write_audit(store: &git_swarm::Store, lines: &[String]) -> Result<(), Error> {
    use std::io::Write as _;
    let dir = store.local_dir();
    git_swarm::safe_fs::create_dir_all(&store.swarm_dir, &dir)?;
    let path = dir.join("unacknowledged-criticals.jsonl");
    let mut f =
        git_swarm::safe_fs::open(&path, std::fs::OpenOptions::new().create(true).append(true))
            .map_err(|e| Error::io(&path, e))?;
    f.write_all(lines.concat().as_bytes())
        .map_err(|e| Error::io(&path, e))?;
    Ok(())
}
