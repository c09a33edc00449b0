//! `git swarm phase …`: phases of work.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::directive_loop::gate::{self, Decision};
use git_swarm::directive_loop::records::Blocker;

use super::{Format, Outcome, Ui};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Start a phase: tool calls are reflected in it from now on.
    ///
    /// Records a `phase_started` event and remembers the phase in
    /// `.git/swarm/local/phase` (this clone only), where `git swarm reflect micro`
    /// reads it when neither `--phase` nor GIT_SWARM_PHASE names one: a
    /// harness's hook runs a fixed command line and cannot pass it.
    Start(StartArgs),
    /// Complete a phase, unless a critical directive of it is unresolved.
    ///
    /// The phase's directives are those shown by `git swarm inject --phase P`.
    /// Each critical one (critical when shown, or escalated since) needs a
    /// terminal outcome in the phase (an `applied` ack or a `verified` verdict,
    /// or an `ignored`/`n_a` one with a reason), and its last violation must be
    /// followed by an applied or verified outcome. Otherwise this prints
    /// `PHASE_COMPLETE_BLOCKED:` and one `- <id>: <reason>` line per directive,
    /// and exits 1. `--accept-violations` overrides named directives, with a
    /// justification of at least 10 characters, recorded as `override` events.
    ///
    /// A phase in which no directive was shown is refused (exit 2) as a likely
    /// typo, naming the phases that exist; `--allow-empty` completes it.
    Complete(CompleteArgs),
}

pub fn run(command: Command, ui: &mut Ui) -> Outcome {
    match command {
        Command::Start(args) => start(args, ui),
        Command::Complete(args) => complete(args, ui),
    }
}

#[derive(Debug, clap::Args)]
pub struct StartArgs {
    /// The phase.
    #[arg(value_name = "PHASE")]
    phase: String,
}

fn start(args: StartArgs, ui: &mut Ui) -> Outcome {
    super::args::check_phase_name(&args.phase)?;
    let store = super::store(ui)?;
    let event = store.event(git_swarm::event::Body::PhaseStarted {
        phase: args.phase.clone(),
    });
    super::append(&store, &[event], ui)?;
    git_swarm::reflect::open_phase(&store, &args.phase)?;
    writeln!(ui.out, "phase {} started", args.phase)?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Debug, clap::Args)]
pub struct CompleteArgs {
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

/// `git swarm phase complete`.
fn complete(args: CompleteArgs, ui: &mut Ui) -> Outcome {
    super::args::check_phase_name(&args.phase)?;
    let store = super::store(ui)?;
    let index = git_swarm::index::load(&store)?.index;
    let events = super::read_log(&store, ui)?;
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
        super::append(&store, &report.overrides, ui)?;
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
        super::append(&store, &[e], ui)?;
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

fn render_blocked(args: &CompleteArgs, blockers: &[Blocker], ui: &mut Ui) -> std::io::Result<()> {
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
            super::clean(&b.id),
            super::clean(&b.reason)
        )?;
    }
    ui.hint(&format!(
        "resolve them (ack, review verdicts) or accept with `git swarm phase complete {} --accept-violations ID,.. --justification TEXT`",
        args.phase
    ));
    Ok(())
}
