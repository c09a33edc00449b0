//! `git swarm deescalate`.

use std::io::Write;
use std::process::ExitCode;

use super::{Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The escalated directive.
    #[arg(value_name = "ID")]
    id: String,
    /// Why the escalation can end (at least 10 characters).
    #[arg(long, value_name = "TEXT")]
    justification: String,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    let store = super::store(ui)?;
    let e =
        git_swarm::directive_loop::escalation::deescalate(&store, &args.id, &args.justification)?;
    super::append(&store, &[e], ui)?;
    writeln!(
        ui.out,
        "deescalated {}: back to the priority and enforcement its file declares",
        args.id
    )?;
    Ok(ExitCode::SUCCESS)
}
