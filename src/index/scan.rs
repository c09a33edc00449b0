//! Stamping the files the index depends on.

use std::path::Path;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::event::is_month_file;
use crate::store::Store;

/// Size, mtime and inode of a file: what the fingerprint is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    pub len: u64,
    pub mtime_ns: i64,
    pub ino: u64,
}

impl Stamp {
    pub(super) fn of(meta: &std::fs::Metadata) -> Stamp {
        let mtime_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
            .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
        #[cfg(unix)]
        let ino = std::os::unix::fs::MetadataExt::ino(meta);
        #[cfg(not(unix))]
        let ino = 0;
        Stamp {
            len: meta.len(),
            mtime_ns,
            ino,
        }
    }
}

/// The files the index is built from, with their stamps.
#[derive(Debug, Default)]
pub struct Scan {
    pub(super) config: Option<Stamp>,
    pub(super) directives: Vec<(String, Stamp)>,
    pub(super) quarantine: Vec<(String, Stamp)>,
    pub(super) events: Vec<(String, Stamp)>,
}

impl Scan {
    /// Fingerprint of the directive and quarantine files alone.
    pub fn entries_fingerprint(&self) -> u64 {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        for (tag, files) in [("d", &self.directives), ("q", &self.quarantine)] {
            for (n, s) in files {
                h.update(tag.as_bytes());
                h.update(n.as_bytes());
                h.update(&[0]);
                h.update(&s.len.to_le_bytes());
                h.update(&s.mtime_ns.to_le_bytes());
                h.update(&s.ino.to_le_bytes());
            }
        }
        h.digest()
    }

    pub fn fingerprint(&self) -> u64 {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        let mut add = |tag: &str, name: &str, s: &Stamp| {
            h.update(tag.as_bytes());
            h.update(name.as_bytes());
            h.update(&[0]);
            h.update(&s.len.to_le_bytes());
            h.update(&s.mtime_ns.to_le_bytes());
            h.update(&s.ino.to_le_bytes());
        };
        if let Some(s) = &self.config {
            add("c", "config.toml", s);
        }
        for (n, s) in &self.directives {
            add("d", n, s);
        }
        for (n, s) in &self.quarantine {
            add("q", n, s);
        }
        for (n, s) in &self.events {
            add("e", n, s);
        }
        h.digest()
    }
}

/// Stats every file the index depends on.
pub fn scan(store: &Store) -> Result<Scan> {
    let swarm = &store.swarm_dir;
    Ok(Scan {
        config: config_stamp(swarm)?,
        directives: scan_dir(&swarm.join("directives"), |n| n.ends_with(".toml"))?,
        quarantine: scan_dir(&swarm.join("quarantine"), |n| n.ends_with(".toml"))?,
        events: scan_dir(&swarm.join("events"), is_month_file)?,
    })
}

/// Stats `config.toml` and the event files only.
pub fn scan_events(store: &Store) -> Result<Scan> {
    let swarm = &store.swarm_dir;
    Ok(Scan {
        config: config_stamp(swarm)?,
        events: scan_dir(&swarm.join("events"), is_month_file)?,
        ..Scan::default()
    })
}

fn config_stamp(swarm: &Path) -> Result<Option<Stamp>> {
    match std::fs::metadata(swarm.join("config.toml")) {
        Ok(m) => Ok(Some(Stamp::of(&m))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(&swarm.join("config.toml"), e)),
    }
}

fn scan_dir(dir: &Path, keep: impl Fn(&str) -> bool) -> Result<Vec<(String, Stamp)>> {
    let listing = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(dir, e)),
    };
    let mut entries = Vec::new();
    for entry in listing {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        // A name that is not UTF-8 cannot be a directive or event file; `validate` reports it.
        if let Ok(name) = entry.file_name().into_string()
            && keep(&name)
        {
            entries.push((name, entry));
        }
    }
    // Like git's preloaded index, stat large folders on several threads.
    let threads = if entries.len() < 2048 {
        1
    } else {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(4)
    };
    let chunk = entries.len().div_ceil(threads).max(1);
    let stamped: Vec<Result<Vec<(String, Stamp)>>> = std::thread::scope(|s| {
        let handles: Vec<_> = entries
            .chunks(chunk)
            .map(|part| s.spawn(move || stamp_all(part)))
            .collect();
        handles
            .into_iter()
            .map(|h| super::join(h, "file stamps"))
            .collect()
    });
    let mut out = Vec::with_capacity(entries.len());
    for part in stamped {
        out.extend(part?);
    }
    out.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

fn stamp_all(entries: &[(String, std::fs::DirEntry)]) -> Result<Vec<(String, Stamp)>> {
    let mut out = Vec::with_capacity(entries.len());
    for (name, entry) in entries {
        // Stat relative to the directory (cheap); follow a symlink like a read
        // would, and a dangling link reads as missing.
        let is_link = entry.file_type().is_ok_and(|t| t.is_symlink());
        let meta = if is_link {
            std::fs::metadata(entry.path())
        } else {
            entry.metadata()
        };
        match meta {
            Ok(meta) if meta.is_file() => out.push((name.clone(), Stamp::of(&meta))),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&entry.path(), e)),
        }
    }
    Ok(out)
}
