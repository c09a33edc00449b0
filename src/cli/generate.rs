//! `git swarm generate`: files made from the command definitions.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::CommandFactory;
use git_swarm::Error;

use super::{Cli, Outcome, Ui};

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
    Man {
        /// Where to write the pages (default: `share/man/man1` beside git-swarm's `bin/`).
        dir: Option<PathBuf>,
    },
    /// Print a completion script for SHELL.
    ///
    /// For bash, save it as
    /// `~/.local/share/bash-completion/completions/git-swarm`: bash-completion
    /// loads it for `git-swarm` and, through git's completion, for
    /// `git swarm` too (it defines `_git_swarm`).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

pub fn run(cmd: Command, ui: &mut Ui) -> Outcome {
    match cmd {
        Command::Man { dir } => {
            let (dir, bin) = match dir {
                Some(dir) => (dir, None),
                None => {
                    let (dir, bin) = default_man_dir()?;
                    (dir, Some(bin))
                }
            };
            std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
            // Built (settings propagated to every subcommand) before renaming
            // them; without `help` subcommands, as clap_mangen builds it.
            let mut command = Cli::command().disable_help_subcommand(true);
            command.build();
            // Pages are named after the binary (git-swarm-list.1), as git expects.
            command = command.bin_name("git-swarm").display_name("git-swarm");
            rename_for_man(&mut command, "git-swarm", "git swarm");
            clap_mangen::generate_to(command, &dir).map_err(|e| Error::io(&dir, e))?;
            writeln!(ui.out, "Wrote the man pages to {}", dir.display())?;
            if let Some(bin) = bin {
                writeln!(
                    ui.out,
                    "`man git-swarm` and `git swarm --help` find them there while {} is on PATH.",
                    bin.display()
                )?;
            }
        }
        Command::Completions { shell } => {
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
                let text = String::from_utf8_lossy(&script)
                    .replace("git__subcmd__swarm", "git__swarm")
                    + GIT_BASH_COMPLETION;
                script = text.into_bytes();
            }
            ui.out.write_all(&script)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `share/man/man1` beside the folder of the `git-swarm` that PATH finds
/// (the one git runs for `git swarm`), else beside this executable; and
/// that folder.
fn default_man_dir() -> Result<(PathBuf, PathBuf), Error> {
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .find(|dir| dir.is_absolute() && dir.join("git-swarm").is_file())
    });
    let bin = match on_path {
        Some(dir) => dir,
        None => std::env::current_exe()
            .map_err(|e| Error::io(Path::new("git-swarm"), e))?
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default(),
    };
    bin.parent()
        .filter(|prefix| !prefix.as_os_str().is_empty())
        .map(|prefix| (prefix.join("share/man/man1"), bin.clone()))
        .ok_or_else(|| Error::Usage {
            message: format!(
                "there is no folder above {} for the man pages",
                bin.display()
            ),
            hint: Some("give the folder: `git swarm generate man DIR`".into()),
        })
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
    let mut root = clap::Command::new("git-swarm")
        .bin_name("git-swarm")
        .version(env!("CARGO_PKG_VERSION"))
        .propagate_version(true)
        .subcommands(visible);
    if let Some(about) = full.get_about() {
        root = root.about(about.clone());
    }
    root
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
