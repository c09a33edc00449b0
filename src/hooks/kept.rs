//! Where a hook that was in place before `install` is kept, and how it is
//! run and put back.
//!
//! A hook may dispatch on the name it was run under (`basename "$0"`: a
//! shared `dispatch` script that `pre-commit` and `post-merge` link to,
//! husky's `.husky/_/h`), so it must keep running under its own name. It is
//! kept as `<hooks>/swarm-orig/<name>`: moved there by a rename, which keeps
//! its bytes and mode. A symlink cannot simply be moved there, since a
//! relative target would then resolve from `swarm-orig/` and a link to a
//! sibling hook (`post-merge -> pre-commit`) would lead to git-swarm's shim
//! that replaced it. So a symlink itself is kept, unchanged, as
//! `swarm-orig/<name>.link` (what uninstall puts back), and
//! `swarm-orig/<name>` is a new link to where it led before install.
//!
//! Installs by earlier versions kept the hook beside the shim as
//! `<name>.swarm-orig`; uninstall still puts those back, and install moves
//! them into `swarm-orig/`.

use std::path::{Path, PathBuf};

use super::{Entry, HOOKS, exists, inspect};
use crate::error::{Error, Result};

/// The folder, inside the hooks directory, that keeps the hooks found in place.
pub const KEPT_DIR: &str = "swarm-orig";

/// What earlier versions renamed a hook to, beside the shim (`pre-commit.swarm-orig`).
pub const LEGACY_SUFFIX: &str = ".swarm-orig";

/// Symlink steps followed before giving up (as the kernel does, with ELOOP).
const MAX_LINKS: usize = 40;

/// `swarm-orig/<name>`: what the shim runs.
pub fn run_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(KEPT_DIR).join(name)
}

/// `swarm-orig/<name>.link`: a symlink that was at `<name>`, unchanged.
pub fn link_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(KEPT_DIR).join(format!("{name}.link"))
}

/// `<name>.swarm-orig`: where earlier versions kept the hook.
pub fn legacy_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}{LEGACY_SUFFIX}"))
}

fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// The kept hook for `name`, as uninstall would put it back: the kept
/// symlink, the kept file, or an earlier version's `<name>.swarm-orig`.
pub fn original(dir: &Path, name: &str) -> Option<PathBuf> {
    [
        link_path(dir, name),
        run_path(dir, name),
        legacy_path(dir, name),
    ]
    .into_iter()
    .find(|p| exists(p))
}

/// Whether a hook is kept in this version's layout (not as `<name>.swarm-orig`).
pub fn in_layout(dir: &Path, name: &str) -> bool {
    exists(&link_path(dir, name)) || exists(&run_path(dir, name))
}

/// Moves `from` (the hook at `<name>`, or an earlier `<name>.swarm-orig`)
/// into `swarm-orig/`. The link that runs a kept symlink is made later, by
/// [`link_runnable`], once every hook has been moved.
pub fn keep(dir: &Path, name: &str, from: &Path) -> Result<()> {
    let kept_dir = dir.join(KEPT_DIR);
    if !kept_dir.is_dir() {
        std::fs::create_dir(&kept_dir).map_err(|e| Error::io(&kept_dir, e))?;
    }
    let to = if is_symlink(from) {
        link_path(dir, name)
    } else {
        run_path(dir, name)
    };
    std::fs::rename(from, &to).map_err(|e| Error::io(from, e))
}

/// Puts the kept hook back at `to` (`<name>`); removes the link made to run
/// a kept symlink. `None` when nothing was kept.
pub fn restore(dir: &Path, name: &str, to: &Path) -> Result<Option<PathBuf>> {
    let link = link_path(dir, name);
    let run = run_path(dir, name);
    if is_symlink(&link) {
        std::fs::rename(&link, to).map_err(|e| Error::io(&link, e))?;
        // With a kept symlink, `run` is always the link (or copy) made to run it.
        if is_symlink(&run) || run.is_file() {
            std::fs::remove_file(&run).map_err(|e| Error::io(&run, e))?;
        }
        return Ok(Some(link));
    }
    for kept in [run, legacy_path(dir, name)] {
        if exists(&kept) {
            std::fs::rename(&kept, to).map_err(|e| Error::io(&kept, e))?;
            return Ok(Some(kept));
        }
    }
    Ok(None)
}

/// Removes `swarm-orig/` once nothing is kept in it.
pub fn remove_dir_if_empty(dir: &Path) {
    let kept_dir = dir.join(KEPT_DIR);
    if kept_dir.is_dir() && !is_symlink(&kept_dir) {
        // Fails when something is still in it, and then it stays.
        let _ = std::fs::remove_dir(&kept_dir);
    }
}

/// Makes `swarm-orig/<name>` a link to where each kept symlink led before
/// install, for every hook whose shim is in place. Run after all hooks were
/// moved, so that a link to a sibling hook leads to that hook's kept
/// original, not to the shim. Returns whether anything changed.
pub fn link_runnable(dir: &Path) -> Result<bool> {
    let mut changed = false;
    for name in HOOKS {
        let link = link_path(dir, name);
        if !is_symlink(&link) || !matches!(inspect(&dir.join(name), name)?, Entry::Ours { .. }) {
            continue;
        }
        let target = match led_to(dir, &link)? {
            // The kernel follows the chain from `swarm-orig/` as it did from
            // the hooks directory, one level up: `../` before a relative target.
            Led::Unchanged => {
                let text = std::fs::read_link(&link).map_err(|e| Error::io(&link, e))?;
                if text.is_absolute() {
                    text
                } else {
                    Path::new("..").join(text)
                }
            }
            Led::Through(path) => relative_to_kept_dir(dir, &path),
        };
        let run = run_path(dir, name);
        if std::fs::read_link(&run).is_ok_and(|t| t == target) {
            continue;
        }
        if is_symlink(&run) {
            std::fs::remove_file(&run).map_err(|e| Error::io(&run, e))?;
        } else if exists(&run) {
            // Not a link of ours: leave it, the shim runs it.
            continue;
        }
        symlink(&target, &run)?;
        changed = true;
    }
    Ok(changed)
}

#[cfg(unix)]
fn symlink(target: &Path, at: &Path) -> Result<()> {
    std::os::unix::fs::symlink(target, at).map_err(|e| Error::io(at, e))
}

#[cfg(not(unix))]
fn symlink(target: &Path, at: &Path) -> Result<()> {
    std::fs::copy(target, at)
        .map(drop)
        .map_err(|e| Error::io(at, e))
}

/// Where a kept symlink leads when run from `swarm-orig/`.
enum Led {
    /// Nowhere its chain passes is a hook that git-swarm's shim replaced:
    /// its own target, one level up, leads where it did.
    Unchanged,
    /// The chain passes a replaced hook; this is where it led before install.
    Through(PathBuf),
}

/// Follows the kept symlink `link`, which was at `<dir>/<name>`. Its
/// relative targets resolve from `dir`, where it was; a step onto a hook
/// that git-swarm's shim replaced continues from that hook's kept original.
/// A dangling chain gives the missing path (git ran nothing there, and
/// neither will the shim).
fn led_to(dir: &Path, link: &Path) -> Result<Led> {
    let mut base = dir.to_path_buf();
    let mut text = std::fs::read_link(link).map_err(|e| Error::io(link, e))?;
    let mut at = dir.to_path_buf();
    let mut through = false;
    for _ in 0..MAX_LINKS {
        at = super::lexical(&base.join(&text));
        let replaced = HOOKS
            .into_iter()
            .find(|hook| at.parent() == Some(dir) && at.file_name() == Some(hook.as_ref()));
        if let Some(hook) = replaced
            && matches!(inspect(&at, hook)?, Entry::Ours { .. })
        {
            through = true;
            let kept_link = [link_path(dir, hook), legacy_path(dir, hook)]
                .into_iter()
                .find(|p| is_symlink(p));
            if let Some(kept_link) = kept_link {
                text = std::fs::read_link(&kept_link).map_err(|e| Error::io(&kept_link, e))?;
                base = dir.to_path_buf();
                continue;
            }
            let legacy = legacy_path(dir, hook);
            return Ok(Led::Through(if exists(&legacy) {
                legacy
            } else {
                run_path(dir, hook)
            }));
        }
        if !is_symlink(&at) {
            break;
        }
        text = std::fs::read_link(&at).map_err(|e| Error::io(&at, e))?;
        base = at
            .parent()
            .map_or_else(|| dir.to_path_buf(), Path::to_path_buf);
    }
    Ok(if through {
        Led::Through(at)
    } else {
        Led::Unchanged
    })
}

/// `target` as a link in `swarm-orig/` names it: relative when it is inside
/// the hooks directory (so the repository can move), else absolute.
fn relative_to_kept_dir(dir: &Path, target: &Path) -> PathBuf {
    if let Ok(rel) = target.strip_prefix(dir.join(KEPT_DIR)) {
        return rel.to_path_buf();
    }
    match target.strip_prefix(dir) {
        Ok(rel) => Path::new("..").join(rel),
        Err(_) => target.to_path_buf(),
    }
}
