//! `git swarm hooks uninstall`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::hooks::{self, Uninstalled};

use super::super::{Outcome, Ui};

/// Remove git-swarm's hooks and put back the ones they wrapped.
///
/// Removes only the shims git-swarm wrote, renames each kept
/// `<name>.swarm-orig` back to `<name>`, and removes the hooks directory if
/// install created it and nothing else is in it: the directory is left as
/// it was before install. A hook git-swarm did not write is never touched.
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
    if !changed
        && !report
            .hooks
            .iter()
            .any(|(_, h)| matches!(h, Uninstalled::Refused { .. }))
    {
        writeln!(ui.out, "No git-swarm hooks in {shown}; nothing changed.")?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(ui.out, "Uninstalled git-swarm's hooks from {shown}:")?;
    let mut refused = false;
    for (name, what) in &report.hooks {
        let line = match what {
            Uninstalled::Removed => "removed".to_owned(),
            Uninstalled::Restored { .. } => {
                format!(
                    "removed; the hook it wrapped is back from {name}{}",
                    hooks::ORIGINAL_SUFFIX
                )
            }
            Uninstalled::NotInstalled => "not installed".to_owned(),
            Uninstalled::Refused { reason, hint } => {
                refused = true;
                ui.error(reason, Some(&shown), Some(hint));
                "left alone (see above)".to_owned()
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
    Ok(if refused {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
