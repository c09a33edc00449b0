//! `git swarm commit`: the pending events, in a commit of their own.

use std::io::Write;
use std::process::ExitCode;

use super::{Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The commit message (default: `swarm: record N events`).
    #[arg(short, long, value_name = "MESSAGE")]
    message: Option<String>,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    let store = super::store(ui)?;
    let done = git_swarm::event::commit::commit(&store, args.message.as_deref())?;
    ui.capped(&done.problems);
    super::report_torn(&store, &done.torn, ui);
    if done.events == 0 {
        writeln!(ui.out, "no events waiting to be committed")?;
    } else {
        writeln!(
            ui.out,
            "committed {} event{} in {}",
            done.events,
            if done.events == 1 { "" } else { "s" },
            done.files.join(", ")
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
