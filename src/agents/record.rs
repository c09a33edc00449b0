//! What install wrote to each file, kept in the git common dir
//! (`swarm/agents/installed/<worktree>/`, never committed):
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

fn dir(records: &Path) -> PathBuf {
    records.to_path_buf()
}

/// The folders install created (for any file), relative to the work tree:
/// one list, as two files may share a folder (`.cursor/`) that only the
/// last of them to go may take away.
fn dirs_path(records: &Path) -> PathBuf {
    dir(records).join("created-folders.json")
}

pub fn created_dirs(records: &Path) -> Vec<String> {
    safe_fs::read(&dirs_path(records), READ_MAX)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

pub fn save_created_dirs(records: &Path, dirs: &[String]) -> Result<()> {
    if dirs.is_empty() {
        return forget_path(&dirs_path(records));
    }
    let d = dir(records);
    std::fs::create_dir_all(&d).map_err(|e| Error::io(&d, e))?;
    let bytes = serde_json::to_vec(dirs).unwrap_or_default();
    safe_fs::replace(&dirs_path(records), &bytes)
}

/// One record per file, named after its path (`/` is not in a file name).
fn path(records: &Path, rel: &str) -> PathBuf {
    dir(records).join(format!("{}.json", rel.replace('/', "%2F")))
}

/// The record for `rel`; none when missing or unreadable (uninstall then
/// removes git-swarm's entries one by one, which is always safe).
pub fn load(records: &Path, rel: &str) -> Option<Record> {
    let bytes = safe_fs::read(&path(records, rel), READ_MAX).ok()?;
    serde_json::from_slice(&bytes).ok()
}

pub fn save(records: &Path, rel: &str, record: &Record) -> Result<()> {
    let d = dir(records);
    std::fs::create_dir_all(&d).map_err(|e| Error::io(&d, e))?;
    let bytes = serde_json::to_vec(record).unwrap_or_default();
    safe_fs::replace(&path(records, rel), &bytes)
}

pub fn forget(records: &Path, rel: &str) -> Result<()> {
    forget_path(&path(records, rel))
}

fn forget_path(p: &Path) -> Result<()> {
    match std::fs::remove_file(p) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(p, e)),
        _ => Ok(()),
    }
}
