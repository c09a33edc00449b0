//! `git swarm review`.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;

use git_swarm::change::Change;
use git_swarm::check::{self, Candidate, CheckDirective, CheckEntry, Outcome as Machine};
use git_swarm::directive::{Directive, Priority};
use git_swarm::directive_loop::records::{PhaseRecord, phase_records};
use git_swarm::directive_loop::{escalation, review};
use git_swarm::{Error, Store};

use super::{Format, Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The phase.
    #[arg(long, value_name = "PHASE")]
    phase: String,
    /// The reviewer's message with its verdict lines (`-`: standard input).
    #[arg(long, alias = "verdict", value_name = "FILE")]
    verdicts: Option<String>,
    // The change the predicates run against, named as for `check`.
    #[command(flatten)]
    change: super::check::ChangeArgs,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    super::args::check_phase_name(&args.phase)?;
    if args.change.given() && args.verdicts.is_none() {
        return Err(Error::usage("a change (--staged, --worktree, --range, --commit) is only used with --verdicts", "pass the reviewer's message with --verdicts FILE to check their verdicts against the change")
        .into());
    }
    let store = super::store(ui)?;
    let loaded = super::load_index(&store, ui)?;
    let index = &loaded.index;
    let events = super::read_log(&store, ui)?;
    let records = phase_records(&events, &args.phase, index);
    if args.verdicts.is_some() {
        review::check_reviewable(&events, &args.phase, &records)?;
    }
    match &args.verdicts {
        None => block(&args, &records, index, ui),
        Some(file) => verdicts(&args, file, &store, &records, index, ui),
    }
}

fn block(
    args: &Args,
    records: &[PhaseRecord],
    index: &git_swarm::index::Index,
    ui: &mut Ui,
) -> Outcome {
    if args.format == Format::Json {
        let list: Vec<serde_json::Value> = records
            .iter()
            .map(|r| {
                let d = index.directive(&r.id).and_then(|e| e.directive.as_ref());
                serde_json::json!({
                    "id": r.id,
                    "critical": r.critical,
                    "lesson": d.map(|d| d.lesson.clone()),
                    "verify": d.map(|d| d.verify.clone()).unwrap_or_default(),
                    "verification_checks": d.map(|d| d.verification_checks.clone()).unwrap_or_default(),
                })
            })
            .collect();
        return ui.json_result(&serde_json::json!({"phase": args.phase, "directives": list}));
    }
    if records.is_empty() {
        ui.note(&format!(
            "no directive was shown in phase {} (`git swarm inject --phase {}` shows them)",
            args.phase, args.phase
        ));
        return Ok(ExitCode::SUCCESS);
    }
    ui.write_out(review::render_block(&args.phase, records, index).as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

fn verdicts(
    args: &Args,
    file: &str,
    store: &Store,
    records: &[PhaseRecord],
    index: &git_swarm::index::Index,
    ui: &mut Ui,
) -> Outcome {
    let text = super::args::read_input(file, "verdicts")?;
    let verdicts = review::read_verdicts(&text, super::args::shown_file(file), records)?;
    ui.warnings(&verdicts.warnings);
    let machine = machine_results(args, store, records, index, ui)?;
    let report = review::decide(store, &args.phase, records, &verdicts, &machine);
    if !report.events.is_empty() {
        super::append(store, &report.events, ui)?;
    }
    if report.violations() {
        super::escalate(store, &escalation::due_from_index(store)?, ui)?;
    }
    if args.format == Format::Json {
        return ui.json_result(&serde_json::json!({
            "phase": args.phase,
            "verdicts": report.recorded,
            "not_in_phase": verdicts.outside,
        }));
    }
    for r in &report.recorded {
        let mut line = format!(
            "{:<9} {}  (reviewer: {}, machine: {})",
            r.verdict, r.id, r.reviewer, r.machine
        );
        if r.disagreement {
            line.push_str("  the machine's answer stands");
        }
        if let Some(reason) = &r.reason {
            line.push_str(&format!("  reason: {reason}"));
        }
        writeln!(ui.out, "{}", super::clean(&line))?;
    }
    ui.warnings(&report.ignored);
    writeln!(
        ui.out,
        "recorded {} verdict(s) for phase {}",
        report.recorded.len(),
        args.phase
    )?;
    Ok(ExitCode::SUCCESS)
}

/// Each phase directive's outcome against the given change (none given: empty).
fn machine_results(
    args: &Args,
    store: &Store,
    records: &[PhaseRecord],
    index: &git_swarm::index::Index,
    ui: &mut Ui,
) -> Result<BTreeMap<String, Machine>, Error> {
    if !args.change.given() {
        return Ok(BTreeMap::new());
    }
    let selection = args.change.selection()?;
    let repo = super::repo()?;
    let gix = super::check::open_gix(&repo)?;
    let change = Change::read(&gix, &repo.root, &selection)?;
    // Each record's directive, with its file: what the candidates borrow.
    let views: Vec<(&PhaseRecord, String, CheckDirective, bool)> = records
        .iter()
        .filter_map(|r| {
            let e = index.directive(&r.id)?;
            let d: &Directive = e.directive.as_ref()?;
            Some((
                r,
                format!(".swarm/directives/{}", e.file),
                CheckDirective::of(d),
                // Edited since it was shown, its file may not pass the gate now.
                !e.problems.iter().any(|p| p.is_error()),
            ))
        })
        .collect();
    let candidates: Vec<Candidate> = views
        .iter()
        .map(|(r, file, d, gated)| {
            let (priority, enforcement) = index.fold.effective_of(d.id, d.priority, d.enforcement);
            Candidate {
                directive: d,
                path: file,
                enforcement,
                priority: if r.critical {
                    Priority::Critical
                } else {
                    priority
                },
                gated: *gated,
            }
        })
        .collect();
    let limits = git_swarm::runner::Limits::from_config(&store.config.runner);
    let entries: Vec<CheckEntry> = index.directives.iter().map(CheckEntry::of).collect();
    let tools = super::check::tool_runner(&repo, &entries, &candidates, limits, ui);
    let report = check::evaluate(&gix, &change, &candidates, tools.as_ref())?;
    ui.warnings(&report.warnings);
    Ok(report
        .results
        .into_iter()
        .map(|r| (r.id.to_owned(), r.outcome))
        .collect())
}
