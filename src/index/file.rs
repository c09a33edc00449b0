//! The index on disk: `GITSWARM` magic, format version (u32 LE), then two
//! sections, each a length (u64 LE) and postcard bytes: the head (stamps,
//! event files, the fold) and the entries (parsed directive files).
//! Written atomically (temp file + rename).

use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{DirectiveEntry, EventFileEntry, FileStamp, Index, Stamp};
use crate::error::{Error, Result};
use crate::fold::Fold;
use crate::store::Store;

const MAGIC: &[u8; 8] = b"GITSWARM";
/// Bump when the layout of anything stored changes (this file's structs,
/// `Fold`, `Directive`, `Problem`); an index of another format is rebuilt.
const FORMAT: u32 = 4;

#[derive(Serialize, Deserialize)]
struct Head {
    /// The `.swarm/` this was built from (an index copied elsewhere is rebuilt).
    swarm_dir: String,
    fingerprint: u64,
    built_at_ns: i64,
    config: Option<Stamp>,
    directive_stamps: Vec<FileStamp>,
    quarantine_stamps: Vec<FileStamp>,
    entry_errors: u64,
    event_files: Vec<EventFileEntry>,
    fold: Fold,
}

#[derive(Serialize)]
struct EntriesRef<'a> {
    directives: &'a [DirectiveEntry],
    quarantine: &'a [DirectiveEntry],
}

#[derive(Deserialize)]
struct Entries {
    directives: Vec<DirectiveEntry>,
    quarantine: Vec<DirectiveEntry>,
}

/// An index read from disk: the head decoded, the entries still as bytes.
pub struct OnDisk {
    pub index: Index,
    pub entries: Vec<u8>,
}

/// Reads the index; `None` if it is missing, of another format, for another
/// `.swarm/`, or damaged in any way (it is then rebuilt).
pub fn read(path: &Path, store: &Store) -> Option<OnDisk> {
    let bytes = std::fs::read(path).ok()?;
    let rest = bytes.strip_prefix(MAGIC.as_slice())?;
    let (format, rest) = rest.split_at_checked(4)?;
    if u32::from_le_bytes(format.try_into().ok()?) != FORMAT {
        return None;
    }
    let (head, rest) = section(rest)?;
    let (entries, rest) = section(rest)?;
    if !rest.is_empty() {
        return None;
    }
    let head: Head = postcard::from_bytes(head).ok()?;
    if head.swarm_dir != store.swarm_dir.to_string_lossy() {
        return None;
    }
    let index = Index {
        fingerprint: head.fingerprint,
        built_at_ns: head.built_at_ns,
        config: head.config,
        directive_stamps: head.directive_stamps,
        quarantine_stamps: head.quarantine_stamps,
        entry_errors: head.entry_errors,
        directives: Vec::new(),
        quarantine: Vec::new(),
        event_files: head.event_files,
        fold: head.fold,
    };
    Some(OnDisk {
        index,
        entries: entries.to_vec(),
    })
}

fn section(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let (len, rest) = bytes.split_at_checked(8)?;
    let len = usize::try_from(u64::from_le_bytes(len.try_into().ok()?)).ok()?;
    rest.split_at_checked(len)
}

/// Decodes the entries section into `index`.
pub fn decode_entries(bytes: &[u8], index: &mut Index) -> Result<()> {
    let entries: Entries = postcard::from_bytes(bytes).map_err(|e| Error::Index {
        message: format!("the index's entries do not decode: {e}"),
    })?;
    index.directives = entries.directives;
    index.quarantine = entries.quarantine;
    Ok(())
}

/// Writes `index`; `entries` are the entries section's bytes when they are
/// unchanged (and `index.directives` may not be loaded).
pub fn write(path: &Path, store: &Store, index: &Index, entries: Option<&[u8]>) -> Result<()> {
    let encode_error = |e: postcard::Error| Error::Index {
        message: e.to_string(),
    };
    let head = postcard::to_stdvec(&HeadRef {
        swarm_dir: &store.swarm_dir.to_string_lossy(),
        fingerprint: index.fingerprint,
        built_at_ns: index.built_at_ns,
        config: index.config,
        directive_stamps: &index.directive_stamps,
        quarantine_stamps: &index.quarantine_stamps,
        entry_errors: index.entry_errors,
        event_files: &index.event_files,
        fold: &index.fold,
    })
    .map_err(encode_error)?;
    let encoded;
    let entries = match entries {
        Some(bytes) => bytes,
        None => {
            encoded = postcard::to_stdvec(&EntriesRef {
                directives: &index.directives,
                quarantine: &index.quarantine,
            })
            .map_err(encode_error)?;
            &encoded
        }
    };
    let mut buf = Vec::with_capacity(28 + head.len() + entries.len());
    buf.extend_from_slice(MAGIC);
    buf.extend_from_slice(&FORMAT.to_le_bytes());
    for part in [&head[..], entries] {
        buf.extend_from_slice(&(part.len() as u64).to_le_bytes());
        buf.extend_from_slice(part);
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| Error::io(dir, e))?;
    tmp.write_all(&buf).map_err(|e| Error::io(tmp.path(), e))?;
    tmp.persist(path).map_err(|e| Error::io(path, e.error))?;
    Ok(())
}

/// [`Head`] borrowed, for writing without cloning.
#[derive(Serialize)]
struct HeadRef<'a> {
    swarm_dir: &'a str,
    fingerprint: u64,
    built_at_ns: i64,
    config: Option<Stamp>,
    directive_stamps: &'a [FileStamp],
    quarantine_stamps: &'a [FileStamp],
    entry_errors: u64,
    event_files: &'a [EventFileEntry],
    fold: &'a Fold,
}
