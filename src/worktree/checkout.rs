//! A tree to run a check's tools in: the commit that was checked, so that
//! a criterion judges the same files git said were touched.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::store::Repo;

use super::git::{self, git_in};

/// Where tools run: a folder already at the commit, or a detached worktree
/// made for the run and removed when this is dropped (an error included).
#[derive(Debug)]
pub enum Checkout {
    Here(PathBuf),
    Temporary { path: PathBuf, git_dir: PathBuf },
}

impl Checkout {
    pub fn path(&self) -> &Path {
        match self {
            Checkout::Here(p) | Checkout::Temporary { path: p, .. } => p,
        }
    }
}

impl Drop for Checkout {
    fn drop(&mut self) {
        if let Checkout::Temporary { path, git_dir } = self {
            let remove = git_in(
                git_dir,
                &[
                    OsStr::new("worktree"),
                    OsStr::new("remove"),
                    OsStr::new("--force"),
                    path.as_os_str(),
                ],
            );
            if !remove.is_ok_and(|o| o.status.success()) {
                // Whatever the removal left: the folder, then git's record of it.
                let _ = std::fs::remove_dir_all(&*path);
                let _ = git_in(git_dir, &[OsStr::new("worktree"), OsStr::new("prune")]);
            }
        }
    }
}

/// The tree at `commit`: `folder` itself when its HEAD is `commit` and
/// nothing in it differs (untracked files included), else a detached
/// worktree at `commit` under the git common dir.
pub fn at_commit(repo: &Repo, folder: &Path, commit: &str) -> Result<Checkout> {
    let head = git_in(
        folder,
        &[
            OsStr::new("rev-parse"),
            OsStr::new("--verify"),
            OsStr::new("HEAD"),
        ],
    )?;
    let at_commit = head.status.success() && String::from_utf8_lossy(&head.stdout).trim() == commit;
    if at_commit {
        let status = git_in(
            folder,
            &[
                OsStr::new("status"),
                OsStr::new("--porcelain"),
                OsStr::new("-z"),
            ],
        )?;
        if status.status.success() && status.stdout.is_empty() {
            return Ok(Checkout::Here(folder.to_path_buf()));
        }
    }
    let dir = repo.common_dir.join("swarm").join("checkouts");
    std::fs::create_dir_all(&dir).map_err(|e| crate::error::Error::io(&dir, e))?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let path = dir.join(format!(
        "{}-{}-{nanos}",
        super::short(commit),
        std::process::id()
    ));
    let out = git_in(
        &repo.common_dir,
        &[
            OsStr::new("worktree"),
            OsStr::new("add"),
            OsStr::new("--detach"),
            OsStr::new("--quiet"),
            path.as_os_str(),
            OsStr::new(commit),
        ],
    )?;
    // Made (maybe partly) from here on: dropping it removes it.
    let checkout = Checkout::Temporary {
        path,
        git_dir: repo.common_dir.clone(),
    };
    git::ok(out, "checking out the checked commit for its tools")?;
    Ok(checkout)
}
