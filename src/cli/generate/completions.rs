//! `git swarm generate completions`.

use std::io::Write;
use std::process::ExitCode;

use clap::CommandFactory;

use crate::cli::{Cli, Outcome, Ui};

#[derive(Debug, clap::Args)]
// Without SHELL, the help, which lists the shells (clap's error for a
// missing argument names none of its values).
#[command(arg_required_else_help = true)]
pub struct Args {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

pub fn run(Args { shell }: Args, ui: &mut Ui) -> Outcome {
    let mut command = for_completion();
    // Into memory first: clap_complete panics on a failed write, and
    // a closed pipe or a full disk is the Ui's to report.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "git-swarm", &mut script);
    if shell == clap_complete::Shell::Bash {
        // clap_complete names the root's bash function after
        // `git__swarm` but looks its subcommands up under
        // `git__subcmd__swarm__…` (a `-` in the binary's name is
        // replaced two ways), so no subcommand's options would complete.
        let text = String::from_utf8_lossy(&script).replace("git__subcmd__swarm", "git__swarm")
            + GIT_BASH_COMPLETION;
        script = text.into_bytes();
    }
    ui.out.write_all(&script)?;
    Ok(ExitCode::SUCCESS)
}

/// The command tree as a user types it. clap_complete offers every
/// subcommand, hidden ones too, so the plumbing that git and scripts call
/// (`hook`, `run-tool`, `changes`) is left out of a copy of the root. The
/// tree is built first: that names each subcommand after `git-swarm` (the
/// completion functions are named after those names).
fn for_completion() -> clap::Command {
    let mut full = Cli::command().bin_name("git-swarm");
    full.build();
    let visible: Vec<clap::Command> = full
        .get_subcommands()
        // `help` is made again for the copy, naming only what is left.
        .filter(|sub| !sub.is_hide_set() && sub.get_name() != "help")
        .cloned()
        .collect();
    clap::Command::new("git-swarm")
        .bin_name("git-swarm")
        .version(env!("CARGO_PKG_VERSION"))
        .propagate_version(true)
        .about(full.get_about().cloned().unwrap_or_default())
        .subcommands(visible)
}

/// Appended to the bash script: git's own completion completes `git swarm
/// …` by calling `_git_swarm` with the words of the whole git command line
/// (`words`, `cword`, and `__git_cmd_idx` at `swarm`), so it hands the
/// generated function the words from `swarm` on, as if `git-swarm` had been
/// typed. git's completion runs with `-o nospace` (it adds the spaces
/// itself); turning that off for this completion lets bash add them.
const GIT_BASH_COMPLETION: &str = r#"
# `git swarm <TAB>`, through git's completion, which calls _git_swarm.
_git_swarm() {
    local idx=${__git_cmd_idx:-1}
    local COMP_WORDS=(git-swarm "${words[@]:idx+1}")
    local COMP_CWORD=$((cword - idx))
    compopt +o nospace 2>/dev/null
    _git__swarm git-swarm "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
}
"#;
