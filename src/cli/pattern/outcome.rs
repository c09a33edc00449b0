//! `git swarm pattern outcome`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::pattern::outcome;

use crate::cli::{Outcome, Ui};

/// Record how a run's merged work ended, grading the patterns it used.
///
/// The patterns observed in the run or injected for it (`pattern inject
/// --run`) each get `patterns.outcome_weight` (0.5) added to their
/// validations on `--pass`, or to their weighted ignores on `--fail`. A
/// run has one outcome: a second is refused, and so is an outcome for a
/// run no pattern was observed in or injected for (a mistyped run id).
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("result").required(true).args(["pass", "fail"])))]
pub struct Args {
    /// The pipeline run: one that patterns were observed in or injected for.
    #[arg(long, value_name = "RUN")]
    run: String,
    /// The work held up.
    #[arg(long)]
    pass: bool,
    /// The work failed.
    #[arg(long)]
    fail: bool,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    crate::cli::args::check_run(&args.run)?;
    let store = crate::cli::store(ui)?;
    let fold = super::patterns(&store)?;
    let report = outcome::record(&store, &fold, &args.run, args.pass)?;
    crate::cli::append(&store, &[report.event], ui)?;
    writeln!(
        ui.out,
        "Recorded outcome {} of run {}: {} pattern(s) graded.",
        report.result,
        crate::cli::clean(&args.run),
        report.graded
    )?;
    Ok(ExitCode::SUCCESS)
}
