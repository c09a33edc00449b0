//! `git swarm reflect meso`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::reflect::meso::{self, GroupOutcome};

use crate::cli::{Format, Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The phase whose candidates are folded.
    #[arg(long, value_name = "PHASE")]
    phase: String,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    crate::cli::args::check_phase_name(&args.phase)?;
    let store = crate::cli::store(ui)?;
    let (_, entries) = git_swarm::index::load(&store)?.index.split_directives();
    let active: Vec<_> = entries.into_iter().filter_map(|e| e.directive).collect();
    let report = meso::fold(&store, &active, &args.phase)?;
    ui.problems(&report.problems);
    // Lessons are written; their events go before the candidates go, so a
    // run cut short here is finished by the next (the lesson's id is known).
    crate::cli::append(&store, &report.events, ui)?;
    if !report.used.is_empty() {
        meso::consume(&store, &report.used)?;
    }
    if args.format == Format::Json {
        ui.json(&report)?;
        return Ok(ExitCode::SUCCESS);
    }
    if report.groups.is_empty() {
        writeln!(ui.out, "no insight candidates in phase {}", args.phase)?;
    }
    if report.expired > 0 {
        writeln!(
            ui.out,
            "dropped {} insight candidate(s) older than {} days, of any phase, never folded",
            report.expired,
            meso::CANDIDATE_DAYS
        )?;
    }
    for g in &report.groups {
        let seen = format!(
            "{} candidate{} in {} task{}",
            g.candidates,
            if g.candidates == 1 { "" } else { "s" },
            g.tasks.len(),
            if g.tasks.len() == 1 { "" } else { "s" }
        );
        let sig = crate::cli::clean(&g.signature);
        let line = match &g.outcome {
            GroupOutcome::Added { id, path } => format!("added {id} ({path}): {sig}, {seen}"),
            GroupOutcome::Quarantined { id, path, reason } => {
                format!("quarantined {id} ({path}, {reason}): {sig}, {seen}")
            }
            GroupOutcome::Existing { id } => format!("already written {id}: {sig}, {seen}"),
            GroupOutcome::Covered { by } => format!("covered by {by}: {sig}, {seen}"),
            GroupOutcome::Waiting => format!("waiting for a second task: {sig}, {seen}"),
        };
        writeln!(ui.out, "{line}")?;
    }
    Ok(ExitCode::SUCCESS)
}
