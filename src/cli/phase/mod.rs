//! `git swarm phase …`: phases of work.

mod complete;

use super::{Outcome, Ui};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    Complete(complete::Args),
}

pub fn run(command: Command, ui: &mut Ui) -> Outcome {
    match command {
        Command::Complete(args) => complete::run(args, ui),
    }
}
