//! `git swarm generate`: files made from the command definitions.

mod completions;
mod man;

use super::{Outcome, Ui};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Write git-swarm.1 and a page per subcommand into DIR.
    ///
    /// Without DIR, the pages go to `share/man/man1` beside the `bin/` folder
    /// that holds the `git-swarm` on PATH (`~/.cargo/bin` gives
    /// `~/.cargo/share/man/man1`). man-db, the `man` of most Linux
    /// distributions, looks there for every folder on PATH, so `man
    /// git-swarm` and `git swarm --help` find the pages with no MANPATH set.
    /// Another `man`, or a DIR elsewhere, needs the folder above `man1` on
    /// MANPATH.
    Man(man::Args),
    /// Print a completion script for SHELL.
    ///
    /// For bash, save it as
    /// `~/.local/share/bash-completion/completions/git-swarm`: bash-completion
    /// loads it for `git-swarm` and, through git's completion, for
    /// `git swarm` too (it defines `_git_swarm`).
    Completions(completions::Args),
}

pub fn run(command: Command, ui: &mut Ui) -> Outcome {
    match command {
        Command::Man(a) => man::run(a, ui),
        Command::Completions(a) => completions::run(a, ui),
    }
}
