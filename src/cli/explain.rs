//! `git swarm explain`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::event::{Event, Kind};
use git_swarm::explain::{ExplainedEvent, Explanation};

use super::{Format, Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The directive to explain.
    #[arg(value_name = "ID")]
    id: String,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    let repo = super::repo()?;
    let store = super::store(ui)?;
    let loaded = super::load_index(&store, ui)?;
    let index = &loaded.index;
    let directive = index.directive(&args.id).and_then(|e| e.directive.as_ref());
    let events = super::read_log(&store, ui)?;
    let gix_repo = repo.gix();
    let quarantined = index
        .quarantined(&args.id)
        .filter(|_| index.directive(&args.id).is_none())
        .map(|q| {
            q.quarantine
                .as_ref()
                .map_or("", |(reason, _)| reason.as_str())
        });
    let explanation = git_swarm::explain::explain(
        &args.id,
        directive,
        quarantined,
        &index.fold,
        &events,
        Some(&gix_repo),
        store.config.events.max_file_bytes,
    )?;
    if index.directive(&args.id).is_none() && quarantined.is_none() && explanation.events.is_empty()
    {
        return Err(super::show::unknown_directive(&store, &args.id).into());
    }
    if args.format == Format::Json {
        return ui.json_result(&explanation);
    }
    let mut out = Vec::new();
    text(&explanation, &mut out)?;
    ui.write_out(&out)?;
    Ok(ExitCode::SUCCESS)
}

fn text(x: &Explanation, o: &mut Vec<u8>) -> std::io::Result<()> {
    let clean = super::clean;
    let pair = |p: Option<git_swarm::directive::Priority>,
                e: Option<git_swarm::directive::Enforcement>| match (p, e) {
        (Some(p), Some(e)) => format!("{}/{}", p.as_str(), e.as_str()),
        _ => "unknown".to_owned(),
    };
    let retired = x.status.as_deref() == Some("retired");
    let declared = pair(x.declared_priority, x.declared_enforcement);
    // A retired directive, a quarantined entry or a broken file: nothing of it runs.
    let in_force = if x.effective_priority.is_none() || retired {
        let retired = if retired { ", retired" } else { "" };
        match x.declared_priority {
            Some(_) => format!("nothing in force (declared {declared}{retired})"),
            None => "nothing in force".to_owned(),
        }
    } else {
        let effective = pair(x.effective_priority, x.effective_enforcement);
        format!("{effective} in force (declared {declared})")
    };
    writeln!(o, "{}: {in_force}", clean(&x.id))?;
    writeln!(o, "  {}", clean(&x.why))?;
    if x.unremediated {
        writeln!(
            o,
            "  a violation has no later remediation (a passing check on its branch, an applied ack or a verified verdict)"
        )?;
    }
    for ep in &x.episodes {
        writeln!(
            o,
            "  episode {}: opened {} by {} and {}, {}",
            clean(&ep.episode),
            ep.start,
            ep.violations[0],
            ep.violations[1],
            ep.ended
                .as_deref()
                .map_or("open".to_owned(), |t| format!("ended {t}"))
        )?;
    }
    if x.events.is_empty() {
        writeln!(o, "no events about it")?;
    } else {
        writeln!(o, "events, oldest first:")?;
    }
    for e in &x.events {
        writeln!(o, "  {}", clean(&line(e)))?;
    }
    if x.shown > 0 {
        writeln!(
            o,
            "shown to delegates {} time(s) (`shown` events, not listed)",
            x.shown
        )?;
    }
    Ok(())
}

/// One event: when, what, its id, and the commit that recorded it.
fn line(x: &ExplainedEvent) -> String {
    let e = &x.event;
    let commit = match &x.commit {
        Some(c) => format!(
            "recorded in {} {}",
            c.id.get(..12).unwrap_or(&c.id),
            c.summary
        ),
        None => "uncommitted".to_owned(),
    };
    format!(
        "{}  {:<14} {}  [{}]  {commit}",
        e.ts,
        e.kind,
        detail(e),
        e.id
    )
}

fn detail(e: &Event) -> String {
    let f = |name| e.str_field(name);
    let with = |label: &str, v: Option<&str>| match v.unwrap_or_default() {
        "" => String::new(),
        v => format!(", {label} {v}"),
    };
    let s = Option::unwrap_or_default;
    let Some(kind) = e.known_kind() else {
        return String::new();
    };
    match kind {
        Kind::Check | Kind::CheckPassed => format!(
            "{} on {}{}",
            if kind == Kind::Check {
                "failed"
            } else {
                "passed"
            },
            match s(f("branch")) {
                "" => "no branch",
                b => b,
            },
            with("change", f("selection"))
        ),
        Kind::Ack => format!(
            "{}{}{}",
            s(f("status")),
            with("reason", f("reason")),
            with("delegation", f("delegation"))
        ),
        Kind::Unacknowledged => format!(
            "shown and not acknowledged{}",
            with("delegation", f("delegation"))
        ),
        Kind::SpoofedAck => format!(
            "{} claimed but not shown{}",
            s(f("status")),
            with("delegation", f("delegation"))
        ),
        Kind::Verdict => format!(
            "{} (reviewer {}, machine {}){}",
            s(f("verdict")),
            s(f("reviewer")),
            s(f("machine")),
            with("phase", f("phase"))
        ),
        Kind::Escalation => format!("{}: {}", s(f("episode")), s(f("reason"))),
        Kind::Deescalation => format!("{}: {}", s(f("episode")), s(f("justification"))),
        Kind::Override => format!("phase {}: {}", s(f("phase")), s(f("justification"))),
        Kind::Retired => s(f("reason")).to_owned(),
        _ => String::new(),
    }
}
