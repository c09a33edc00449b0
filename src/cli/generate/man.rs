//! `git swarm generate man`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::CommandFactory;
use git_swarm::Error;

use crate::cli::{Cli, Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Where to write the pages (default: `share/man/man1` beside git-swarm's `bin/`).
    dir: Option<PathBuf>,
}

pub fn run(Args { dir }: Args, ui: &mut Ui) -> Outcome {
    let (dir, bin) = match dir {
        Some(dir) => (dir, None),
        None => default_man_dir().map(|(dir, bin)| (dir, Some(bin)))?,
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
        if let Some(root) = dir.parent()
            && let Some(manpath) = std::env::var_os("MANPATH")
            && !looks_in(&manpath, root)
        {
            ui.warning(
                &format!(
                    "MANPATH is set and leaves {} out, so `man` does not look beside PATH",
                    root.display()
                ),
                Some(&format!(
                    "add it: `export MANPATH=\"{}:$MANPATH\"` (an empty entry, as in `MANPATH=:$MANPATH`, also brings back the folders beside PATH)",
                    root.display()
                )),
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether `man`, with MANPATH set to `manpath`, looks in `root`: listed,
/// or an empty entry, where man-db and BSD `man` put their default path
/// (which holds the folders beside PATH).
fn looks_in(manpath: &std::ffi::OsStr, root: &Path) -> bool {
    std::env::split_paths(manpath).any(|p| p.as_os_str().is_empty() || p == root)
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
        .ok_or_else(|| {
            Error::usage(
                format!(
                    "there is no folder above {} for the man pages",
                    bin.display()
                ),
                "give the folder: `git swarm generate man DIR`",
            )
        })
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
