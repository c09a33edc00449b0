//! What install wrote to each file, kept in the git common dir
//! (`swarm/agents/installed/`, shared by every worktree, never committed):
//! the file's bytes before install (none: install created it) and after.
//! Uninstall gives the former back only while the file is still exactly the
//! latter, so a change made since is never undone.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{Error, Result, safe_fs};

/// Bumped when the record's meaning changes: an older record is ignored.
pub const VERSION: u32 = 1;

/// A record is a file's bytes twice over: bounded like the configs.
const READ_MAX: u64 = 16 * 1024 * 1024;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    pub version: u32,
    /// The file before install; `None` when install created it.
    pub original: Option<String>,
    /// The file as install last wrote it.
    pub written: String,
}

impl Record {
    pub fn new(original: Option<String>, written: String) -> Self {
        Record {
            version: VERSION,
            original,
            written,
        }
    }
}

fn dir(common: &Path) -> PathBuf {
    common.join("swarm").join("agents").join("installed")
}

/// The folders install created (for any file), relative to the work tree:
/// one list, as two files may share a folder (`.cursor/`) that only the
/// last of them to go may take away.
fn dirs_path(common: &Path) -> PathBuf {
    dir(common).join("created-folders.json")
}

pub fn created_dirs(common: &Path) -> Vec<String> {
    safe_fs::read(&dirs_path(common), READ_MAX)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

pub fn save_created_dirs(common: &Path, dirs: &[String]) -> Result<()> {
    if dirs.is_empty() {
        return forget_path(&dirs_path(common));
    }
    let d = dir(common);
    std::fs::create_dir_all(&d).map_err(|e| Error::io(&d, e))?;
    let bytes = serde_json::to_vec(dirs).unwrap_or_default();
    safe_fs::replace(&dirs_path(common), &bytes)
}

/// One record per file, named after its path (`/` is not in a file name).
fn path(common: &Path, rel: &str) -> PathBuf {
    dir(common).join(format!("{}.json", rel.replace('/', "%2F")))
}

/// The record for `rel`; none when missing or unreadable (uninstall then
/// removes git-swarm's entries one by one, which is always safe).
pub fn load(common: &Path, rel: &str) -> Option<Record> {
    let bytes = safe_fs::read(&path(common, rel), READ_MAX).ok()?;
    serde_json::from_slice(&bytes).ok()
}

pub fn save(common: &Path, rel: &str, record: &Record) -> Result<()> {
    let d = dir(common);
    std::fs::create_dir_all(&d).map_err(|e| Error::io(&d, e))?;
    let bytes = serde_json::to_vec(record).unwrap_or_default();
    safe_fs::replace(&path(common, rel), &bytes)
}

pub fn forget(common: &Path, rel: &str) -> Result<()> {
    forget_path(&path(common, rel))
}

fn forget_path(p: &Path) -> Result<()> {
    match std::fs::remove_file(p) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(p, e)),
        _ => Ok(()),
    }
}
