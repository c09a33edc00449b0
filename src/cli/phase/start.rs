//! `git swarm phase start`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::event::Body;

use crate::cli::{Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The phase.
    #[arg(value_name = "PHASE")]
    phase: String,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    crate::cli::args::check_phase_name(&args.phase)?;
    let store = crate::cli::store(ui)?;
    let event = store.event(Body::PhaseStarted {
        phase: args.phase.clone(),
    });
    crate::cli::append(&store, &[event], ui)?;
    git_swarm::reflect::open_phase(&store, &args.phase)?;
    writeln!(ui.out, "phase {} started", args.phase)?;
    Ok(ExitCode::SUCCESS)
}
