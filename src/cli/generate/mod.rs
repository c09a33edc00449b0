//! `git swarm generate`: files made from the command definitions.

mod completions;
mod man;

use super::{Outcome, Ui};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    Man(man::Args),
    Completions(completions::Args),
}

pub fn run(command: Command, ui: &mut Ui) -> Outcome {
    match command {
        Command::Man(a) => man::run(a, ui),
        Command::Completions(a) => completions::run(a, ui),
    }
}
