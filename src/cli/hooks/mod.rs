//! `git swarm hooks install|uninstall|status`.

mod install;
mod status;
mod uninstall;

use std::path::Path;

use git_swarm::Repo;

use super::{Outcome, Ui};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    Install(install::Args),
    Uninstall(uninstall::Args),
    Status(status::Args),
}

pub fn run(cmd: Command, ui: &mut Ui) -> Outcome {
    match cmd {
        Command::Install(args) => install::run(args, ui),
        Command::Uninstall(args) => uninstall::run(args, ui),
        Command::Status(args) => status::run(args, ui),
    }
}

/// `path` relative to the work tree when it is inside it (`.git/hooks`), else as it is.
fn shown(repo: &Repo, path: &Path) -> String {
    path.strip_prefix(&repo.root)
        .ok()
        .filter(|rel| !rel.as_os_str().is_empty())
        .unwrap_or(path)
        .display()
        .to_string()
}
