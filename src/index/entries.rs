//! Directive and quarantine files as the index holds them.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use super::contents::{DirectiveEntry, FileStamp, Stamp};
use crate::directive::{parse_directive_toml, parse_quarantined_toml};
use crate::problem::Problem;
use crate::store::Store;

/// Reads and checks the files of `folder` (`directives` or `quarantine`),
/// but moves over the entries of `old` whose file is unchanged in `seen`.
pub fn load_changed(
    store: &Store,
    folder: &str,
    files: &[(String, Stamp)],
    old: Vec<DirectiveEntry>,
    seen: &[FileStamp],
) -> Vec<DirectiveEntry> {
    let quarantine = folder == "quarantine";
    let dir = store.swarm_dir.join(folder);
    let mut old = old.into_iter().peekable();
    let mut out = Vec::with_capacity(files.len());
    for (name, stamp) in files {
        // Both lists are sorted by file name: walk them together.
        while old.peek().is_some_and(|e| e.file < *name) {
            old.next();
        }
        let same = seen
            .binary_search_by(|f| f.file.as_str().cmp(name))
            .is_ok_and(|i| seen[i].stamp == *stamp && !seen[i].racy);
        let rel = format!(".swarm/{folder}/{name}");
        match old.next_if(|e| e.file == *name) {
            Some(entry) if same => out.push(entry),
            Some(entry) if entry.blob.is_some() => {
                out.push(read_entry_again(
                    &dir.join(name),
                    &rel,
                    name,
                    quarantine,
                    entry,
                ));
            }
            _ => out.push(read_entry(&dir.join(name), &rel, name, quarantine)),
        }
    }
    out
}

/// [`read_entry`] for a file the index parsed before: when its bytes are the
/// ones `old` was parsed from (the same blob id), `old` stands. A racy file
/// (see [`super::contents::racy`]) is read at every refresh until it
/// settles, and is then mostly unchanged: its parse, a function of its
/// bytes, need not be done again.
fn read_entry_again(
    path: &Path,
    rel: &str,
    name: &str,
    quarantine: bool,
    old: DirectiveEntry,
) -> DirectiveEntry {
    match crate::safe_fs::read(path, crate::directive::limits::FILE_MAX) {
        Ok(bytes) if crate::reviewed::blob_id(&bytes) == old.blob => old,
        Ok(bytes) => entry_from_bytes(&bytes, rel, name, quarantine),
        Err(_) => read_entry(path, rel, name, quarantine),
    }
}

/// Reads and checks one directive or quarantine file.
pub fn read_entry(path: &Path, rel: &str, name: &str, quarantine: bool) -> DirectiveEntry {
    let e = match crate::safe_fs::read(path, crate::directive::limits::FILE_MAX) {
        Ok(bytes) => return entry_from_bytes(&bytes, rel, name, quarantine),
        Err(e) => e,
    };
    if let Some(kind) = crate::safe_fs::not_regular(&e) {
        return not_regular_entry(rel, name, kind);
    }
    let message = if crate::safe_fs::over_limit(&e).is_some() {
        e.to_string()
    } else {
        format!("cannot read: {e}")
    };
    unreadable_entry(rel, name, message)
}

/// The entry of a directive or quarantine file that is `kind` (a symlink,
/// a FIFO, a device): not read, nor its target named.
pub fn not_regular_entry(rel: &str, name: &str, kind: crate::safe_fs::FileKind) -> DirectiveEntry {
    unread_entry(
        name,
        Problem::error(
            rel,
            crate::event::NOT_REGULAR,
            format!("{kind}, not a regular file: skipped, not read"),
        )
        .with_hint("replace it with a regular directive file, or remove it: a link committed under .swarm/ could point anywhere"),
    )
}

/// What is known of a directive or quarantine file over the size limit.
pub fn too_large_entry(rel: &str, name: &str) -> DirectiveEntry {
    let limit = crate::directive::limits::FILE_MAX;
    unreadable_entry(rel, name, format!("file is over the {limit}-byte limit"))
}

/// The entry of a file that could not be read, the problem at its start
/// (reports keep the `path:line:col` form that editors and CI parse).
fn unreadable_entry(rel: &str, name: &str, message: String) -> DirectiveEntry {
    unread_entry(
        name,
        Problem::error(rel, "unreadable", message)
            .at(1, 1)
            .with_hint("a directive file is a small TOML file; replace this one"),
    )
}

/// The entry of a file that was not read, with the problem that says why.
fn unread_entry(name: &str, problem: Problem) -> DirectiveEntry {
    DirectiveEntry {
        file: name.to_owned(),
        problems: vec![problem],
        ..DirectiveEntry::default()
    }
}

/// Checks one directive or quarantine file given as bytes (from disk or from a tree).
pub fn entry_from_bytes(bytes: &[u8], rel: &str, name: &str, quarantine: bool) -> DirectiveEntry {
    if bytes.len() as u64 > crate::directive::limits::FILE_MAX {
        return too_large_entry(rel, name);
    }
    let mut entry = DirectiveEntry {
        file: name.to_owned(),
        blob: crate::reviewed::blob_id(bytes),
        ..DirectiveEntry::default()
    };
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let good = String::from_utf8_lossy(&bytes[..e.valid_up_to()]).into_owned();
            entry.problems.push(
                Problem::error(rel, "not_utf8", "file is not valid UTF-8")
                    .at_offset(&good, good.len())
                    .with_hint("TOML files are UTF-8; re-save the file as UTF-8"),
            );
            return entry;
        }
    };
    let stem = name.strip_suffix(".toml").unwrap_or(name);
    // The id the file gives, checked against its name even in a file with other problems.
    let id = if quarantine {
        let (q, problems) = parse_quarantined_toml(text, rel);
        entry.problems = problems;
        let id = q.as_ref().map(|q| q.directive.id.clone());
        if let Some(q) = q {
            entry.quarantine = Some((q.quarantine_reason.as_str().to_owned(), q.quarantine_detail));
            entry.directive = Some(q.directive);
        }
        id
    } else {
        let loaded = parse_directive_toml(text, rel);
        entry.problems = loaded.problems.clone();
        entry.problems.extend(loaded.gate_problems(text, rel));
        let id = loaded.id().map(str::to_owned);
        entry.directive = loaded.directive;
        id
    };
    if let Some(id) = id
        && id != stem
    {
        let offset = crate::directive::key_offset(text, "id").unwrap_or(0);
        entry.problems.push(
            Problem::error(
                rel,
                "id_mismatch",
                format!("id `{id}` does not match the file name `{name}`"),
            )
            .at_offset(text, offset)
            .with_hint(format!(
                "rename the file to `{id}.toml`, or set `id = \"{stem}\"`"
            )),
        );
    }
    entry
}

/// Why [`read_capped`] read nothing.
#[derive(Debug, thiserror::Error)]
pub enum CappedReadError {
    #[error("cannot read: {0}")]
    Io(#[source] std::io::Error),
    #[error("file is over the {max}-byte limit")]
    TooLarge { max: u64 },
}

/// Reads a file the user named (not one under `.swarm/`) of at most `max`
/// bytes; a larger one is refused unread.
pub fn read_capped(path: &Path, max: u64) -> Result<Vec<u8>, CappedReadError> {
    let file = open_readable(path).map_err(CappedReadError::Io)?;
    let mut bytes = Vec::new();
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(CappedReadError::Io)?;
    if bytes.len() as u64 > max {
        return Err(CappedReadError::TooLarge { max });
    }
    Ok(bytes)
}

/// Opens a file to read, without waiting on a FIFO: only a regular file
/// (a symlink to one included) is read.
fn open_readable(path: &Path) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a folder, FIFO or device)",
        ));
    }
    Ok(file)
}
