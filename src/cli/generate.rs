//! `git swarm generate`: files made from the command definitions.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::CommandFactory;
use git_swarm::Error;

use super::{Cli, Outcome, Ui};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Write git-swarm.1 and a page per subcommand into DIR (git shows
    /// git-swarm.1 for `git swarm --help` once DIR is on the MANPATH).
    Man {
        /// Where to write the pages, e.g. ~/.local/share/man/man1.
        dir: PathBuf,
    },
    /// Print a completion script for SHELL.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

pub fn run(cmd: Command, ui: &mut Ui) -> Outcome {
    match cmd {
        Command::Man { dir } => {
            std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
            // Every subcommand, the deferred groups' too, before renaming
            // them; without `help` subcommands, as clap_mangen builds it.
            let mut command = Cli::command().disable_help_subcommand(true);
            command.build();
            // Pages are named after the binary (git-swarm-list.1), as git expects.
            command = command.bin_name("git-swarm").display_name("git-swarm");
            rename_for_man(&mut command, "git-swarm", "git swarm");
            clap_mangen::generate_to(command, &dir).map_err(|e| Error::io(&dir, e))?;
            writeln!(ui.out, "Wrote the man pages to {}", dir.display())?;
        }
        Command::Completions { shell } => {
            let mut command = Cli::command();
            // Into memory first: clap_complete panics on a failed write, and
            // a closed pipe or a full disk is the Ui's to report.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut command, "git-swarm", &mut script);
            ui.out.write_all(&script)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Names each subcommand's page after its path (`git-swarm-pattern-inject`)
/// and its synopsis after the words that run it (`git swarm pattern inject`).
fn rename_for_man(cmd: &mut clap::Command, prefix: &str, bin: &str) {
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    for name in names {
        let display = format!("{prefix}-{name}");
        let words = format!("{bin} {name}");
        if let Some(sub) = cmd.find_subcommand_mut(&name) {
            let mut taken = std::mem::take(sub)
                .display_name(display.clone())
                .bin_name(words.clone());
            rename_for_man(&mut taken, &display, &words);
            *sub = taken;
        }
    }
}
