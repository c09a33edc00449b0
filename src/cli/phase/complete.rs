//! `git swarm phase complete`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::directive_loop::gate::{self, Decision};
use git_swarm::directive_loop::records::Blocker;

use crate::cli::{Format, Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The phase.
    #[arg(value_name = "PHASE")]
    phase: String,
    /// Directives to accept despite their state (comma-separated ids, repeatable).
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "ID,..",
        requires = "justification"
    )]
    accept_violations: Vec<String>,
    /// Why the violations are accepted (at least 10 characters).
    #[arg(long, value_name = "TEXT", requires = "accept_violations")]
    justification: Option<String>,
    /// Complete the phase even though no directive was shown in it.
    #[arg(long)]
    allow_empty: bool,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    crate::cli::args::check_phase_name(&args.phase)?;
    let store = crate::cli::store(ui)?;
    let index = git_swarm::index::load(&store)?.index;
    let events = crate::cli::read_log(&store, ui)?;
    let report = gate::complete(
        &store,
        &index,
        &events,
        &gate::Request {
            phase: &args.phase,
            accept: &args.accept_violations,
            justification: args.justification.as_deref(),
            allow_empty: args.allow_empty,
        },
    )?;
    ui.warnings(&report.warnings);
    if !report.overrides.is_empty() {
        crate::cli::append(&store, &report.overrides, ui)?;
        ui.note(&format!(
            "recorded {} override(s) for phase {}",
            report.overrides.len(),
            args.phase
        ));
    }
    let (records, already, event) = match report.decision {
        Decision::Blocked(blockers) => {
            render_blocked(&args, &blockers, ui)?;
            return Ok(ExitCode::from(1));
        }
        Decision::Complete {
            records,
            already,
            event,
        } => (records, already, event),
    };
    if let Some(e) = event {
        crate::cli::append(&store, &[e], ui)?;
    }
    if args.format == Format::Json {
        ui.json(&serde_json::json!({
            "phase": args.phase,
            "complete": true,
            "already_complete": already,
            "directives": records,
            "blockers": [],
        }))?;
    } else {
        writeln!(
            ui.out,
            "phase {} {}: {} directive(s) shown, {} critical, none unresolved",
            args.phase,
            if already {
                "was already complete"
            } else {
                "complete"
            },
            records.len(),
            records.iter().filter(|r| r.critical).count()
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn render_blocked(args: &Args, blockers: &[Blocker], ui: &mut Ui) -> std::io::Result<()> {
    if args.format == Format::Json {
        return ui.json(&serde_json::json!({
            "phase": args.phase,
            "complete": false,
            "blockers": blockers,
        }));
    }
    writeln!(ui.out, "PHASE_COMPLETE_BLOCKED:")?;
    for b in blockers {
        writeln!(
            ui.out,
            "- {}: {}",
            crate::cli::clean(&b.id),
            crate::cli::clean(&b.reason)
        )?;
    }
    ui.hint(&format!(
        "resolve them (ack, review verdicts) or accept with `git swarm phase complete {} --accept-violations ID,.. --justification TEXT`",
        args.phase
    ));
    Ok(())
}
