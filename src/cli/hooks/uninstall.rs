//! `git swarm hooks uninstall`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::hooks::{self, Uninstalled};

use super::super::{Outcome, Ui};

/// Remove git-swarm's hooks and put back the ones they wrapped.
///
/// Removes only the shims git-swarm wrote, puts the hook each removed shim
/// ran (kept in `swarm-orig/`, or as `<name>.swarm-orig` by earlier
/// versions) back as `<name>`, and removes the hooks directory if install
/// created it and nothing else is in it: the directory is left as it was
/// before install. A hook git-swarm did not write is never touched, nor a
/// kept hook with no shim of git-swarm's in its place.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args, ui: &mut Ui) -> Outcome {
    let repo = super::super::repo()?;
    let dir = hooks::hooks_dir(&repo)?;
    let report = hooks::uninstall(&dir)?;
    let shown = super::shown(&repo, &dir);
    let changed = !report.removed_dirs.is_empty()
        || report
            .hooks
            .iter()
            .any(|(_, h)| matches!(h, Uninstalled::Removed | Uninstalled::Restored { .. }));
    if changed {
        writeln!(ui.out, "Uninstalled git-swarm's hooks from {shown}:")?;
        for (name, what) in &report.hooks {
            let line = match what {
                Uninstalled::Removed => "removed".to_owned(),
                Uninstalled::Restored { original } => format!(
                    "removed; the hook it wrapped is back from {}",
                    hooks::shown_in(&dir, original)
                ),
                Uninstalled::NotInstalled | Uninstalled::StrayOriginal { .. } => {
                    "not installed".to_owned()
                }
            };
            writeln!(ui.out, "  {name:<14} {line}")?;
        }
        for removed in &report.removed_dirs {
            writeln!(
                ui.out,
                "Removed {}: install had created it and it is empty now.",
                super::shown(&repo, removed)
            )?;
        }
    } else {
        writeln!(ui.out, "No git-swarm hooks in {shown}; nothing changed.")?;
    }
    // Without our shim next to it, a kept-aside hook is not ours to put back:
    // say that it is there, and leave the choice to the user.
    for (name, what) in &report.hooks {
        if let Uninstalled::StrayOriginal {
            original,
            hook_present,
        } = what
        {
            let kept = hooks::shown_in(&dir, original);
            let todo = if *hook_present {
                format!("keep the one you want as {name} and remove the other")
            } else {
                format!("rename it to {name} if git should run it, or remove it")
            };
            ui.note(&format!(
                "{kept} in {shown} is not next to git-swarm's {name} shim, so it was left as it is; {todo}."
            ));
        }
    }
    Ok(ExitCode::SUCCESS)
}
