//! `git swarm handoff list|show|release`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::handoff::{self, Handoff, Released, Standing};

use super::super::{Format, Outcome, Ui, clean};

#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Only the handoffs of this epic.
    #[arg(long, value_name = "ID")]
    epic: Option<String>,
    /// Only those still holding their paths (not completed, not released).
    #[arg(long)]
    open: bool,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn list(args: ListArgs, ui: &mut Ui) -> Outcome {
    let store = super::super::store(ui)?;
    let (handoffs, problems) = handoff::load_all(&store)?;
    ui.problems(&problems);
    let log = super::super::read_log(&store, ui)?;
    let max = store.config.handoffs.max_review_attempts;
    let rows: Vec<(&Handoff, Standing)> = handoffs
        .iter()
        .filter(|h| args.epic.is_none() || h.epic == args.epic)
        .map(|h| (h, handoff::standing(&h.task, &log, max)))
        .filter(|(_, s)| !args.open || s.holds_ownership())
        .collect();
    if args.format == Format::Json {
        let list: Vec<serde_json::Value> = rows
            .iter()
            .map(|(h, s)| {
                serde_json::json!({
                    "task": h.task,
                    "standing": s,
                    "epic": h.epic,
                    "role": h.role,
                    "owns": h.contract.owns,
                })
            })
            .collect();
        return ui.json_result(&list);
    }
    if rows.is_empty() {
        writeln!(ui.out, "no handoffs")?;
    }
    for (h, s) in rows {
        writeln!(
            ui.out,
            "{}  {:<9}  {}  {}  {}",
            h.task,
            s.as_str(),
            clean(h.epic.as_deref().unwrap_or("-")),
            clean(h.role.as_deref().unwrap_or("-")),
            clean(&h.contract.owns.join(", "))
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// The task's id.
    #[arg(value_name = "TASK")]
    task: String,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn show(args: ShowArgs, ui: &mut Ui) -> Outcome {
    let store = super::super::store(ui)?;
    let h = handoff::find(&store, &args.task)?;
    let log = super::super::read_log(&store, ui)?;
    let standing = handoff::standing(&h.task, &log, store.config.handoffs.max_review_attempts);
    let events: Vec<&git_swarm::event::Event> = handoff::events_of(&h.task, &log).collect();
    let rel = store.rel(&handoff::path(&store, &h.task));
    if args.format == Format::Json {
        let mut v = h.to_json();
        if let Some(map) = v.as_object_mut() {
            map.insert("path".into(), rel.into());
            map.insert("standing".into(), standing.as_str().into());
            map.insert(
                "events".into(),
                serde_json::to_value(&events).unwrap_or_default(),
            );
        }
        return ui.json_result(&v);
    }
    let mut out = format!("{}  {}  ({rel})\n", h.task, standing.as_str());
    let mut field = |name: &str, value: String| {
        if !value.is_empty() {
            out.push_str(&format!("{name:<10} {}\n", clean(&value)));
        }
    };
    let c = &h.contract;
    field("epic", h.epic.clone().unwrap_or_default());
    field("role", h.role.clone().unwrap_or_default());
    field("created", h.created_at.to_string());
    field("base", c.base.clone());
    field("owns", c.owns.join(", "));
    field("readonly", c.readonly.join(", "));
    field("depends", c.depends.join(", "));
    for criterion in &c.criteria {
        field("criterion", criterion.clone());
    }
    field("summary", h.context.summary.clone().unwrap_or_default());
    field("next", h.context.next.clone().unwrap_or_default());
    field(
        "escalate",
        format!("{}: {}", h.escalation.contact, h.escalation.scope_change),
    );
    out.push_str(if events.is_empty() {
        "\nno events\n"
    } else {
        "\nevents\n"
    });
    for e in events {
        let mut fields: Vec<String> = e
            .data
            .iter()
            .filter(|(k, _)| k.as_str() != "task")
            .map(|(k, v)| match v.as_str() {
                Some(s) => format!("{k}={s}"),
                None => format!("{k}={v}"),
            })
            .collect();
        if let Some(d) = &e.directive {
            fields.push(format!("directive={d}"));
        }
        out.push_str(&format!(
            "  {}  {:<17}  {}\n",
            e.ts,
            e.kind,
            clean(&fields.join(" "))
        ));
    }
    ui.write_out(out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Debug, clap::Args)]
pub struct ReleaseArgs {
    /// The task's id.
    #[arg(value_name = "TASK")]
    task: String,
    /// Why the task is given up (at least 10 characters).
    #[arg(long, value_name = "TEXT")]
    reason: String,
}

pub fn release(args: ReleaseArgs, ui: &mut Ui) -> Outcome {
    let store = super::super::store(ui)?;
    let h = handoff::find(&store, &args.task)?;
    let log = super::super::read_log(&store, ui)?;
    match handoff::release(&store, &h, &args.reason, &log)? {
        Released::Now(e) => {
            super::super::append(&store, std::slice::from_ref(&e), ui)?;
            writeln!(
                ui.out,
                "released {}: its owned paths are free ({})",
                h.task,
                clean(&h.contract.owns.join(", "))
            )?;
            Ok(ExitCode::SUCCESS)
        }
        Released::Already(s) => {
            ui.error(
                &format!(
                    "handoff `{}` is {} already: it holds nothing to release",
                    h.task,
                    s.as_str()
                ),
                None,
                Some(
                    "`git swarm handoff show TASK` shows its events; new work needs a new handoff",
                ),
            );
            Ok(ExitCode::from(1))
        }
    }
}
