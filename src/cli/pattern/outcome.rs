//! `git swarm pattern outcome`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::pattern::outcome;

use crate::cli::{Outcome, Ui};

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
    let fold = git_swarm::index::load_patterns(&store)?;
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
