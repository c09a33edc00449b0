//! The index on disk: `GITSWARM` magic, format version (u32 LE), four zero
//! bytes, then four sections, each a length (u64 LE), the xxh3-64 of its
//! bytes (u64 LE) and its bytes, zero-padded to a multiple of eight. The
//! checksums are checked before a section is decoded, so that damage makes
//! the index rebuilt rather than decoded into wrong values. The sections:
//! the head (event files, the fold, a fingerprint of the directive files),
//! the pattern fold (decoded only by the pattern commands and when pattern
//! events arrive), the entries (the directive files' stamps and parsed
//! contents), all three postcard, and the retrieval corpus of the active
//! directives (built whenever the entries are encoded, so `inject` never
//! decodes them; read in place, see [`crate::retrieve::Corpus::load`]).
//!
//! Written atomically (temp file + rename), and read through a memory map:
//! since the file is only ever replaced, a mapping keeps seeing the version
//! it opened, and sections are decoded straight from the page cache.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::Error;
use super::contents::{
    DirectiveEntry, FileStamp, Index, Listing, Names, Stamp, Summary, corpus_of,
};
use super::mapped::{Map, bytes_at, decode};
use super::pattern_section::{PatternViews, decode_patterns, encode_patterns};
use crate::error::Result;
use crate::pattern::fold::PatternFold;
use crate::retrieve::Corpus;
use crate::store::Store;

const MAGIC: &[u8; 8] = b"GITSWARM";
/// Bump when the layout of anything stored changes (this file's structs,
/// `Fold`, `Directive`, `Problem`), what the readers let into it (an
/// event file over a new bound), or what an older version stored wrongly
/// (30: an event naming several directives new to the fold counted on
/// the wrong rows); an index of another format is rebuilt.
const FORMAT: u32 = 30;

/// The head's first fields, enough to start stat'ing the directive files
/// before the fold is decoded: `(HeadStart, event_files, fold)` is written
/// in one and read back in two parts (postcard writes fields in a row).
#[derive(Serialize, Deserialize)]
struct HeadStart<'a> {
    /// The `.swarm/` this was built from (an index copied elsewhere is rebuilt).
    swarm_dir: &'a str,
    fingerprint: u64,
    built_at_ns: i64,
    config: Option<Stamp>,
    entries_fingerprint: u64,
    entries_racy: bool,
    hive_key: u64,
    directive_count: usize,
    quarantine_count: usize,
    #[serde(borrow)]
    listing: Option<(Stamp, &'a str)>,
    entry_errors: u64,
}

/// The entries section: the directive and quarantine files' stamps, then the parses.
type Entries = (
    Vec<FileStamp>,
    Vec<FileStamp>,
    Vec<DirectiveEntry>,
    Vec<DirectiveEntry>,
);

/// An index read from disk: the head decoded, the other sections left in
/// the open file (the same version, whatever is renamed over it) until needed.
pub struct OnDisk {
    /// `event_files` and `fold` are empty until [`OnDisk::load_rest`].
    pub index: Index,
    map: Arc<Map>,
    /// The head's event files and fold.
    rest: Span,
    patterns: Span,
    entries: Span,
    corpus: Span,
}

/// Where a section's bytes are in the file, and their checksum.
#[derive(Debug, Clone, Copy, Default)]
struct Span {
    at: u64,
    len: u64,
    sum: u64,
}

/// A section's length and checksum fields, before its bytes.
const SECTION_FIELDS: u64 = 16;

/// The magic and format, padded: where the first section's fields are.
const FIXED: u64 = 16;

/// Every section's fields (so its bytes) start on a multiple of this.
const ALIGN: u64 = 8;

/// The magic and the format, padded with zeros to [`FIXED`] bytes.
fn magic_and_format() -> [u8; FIXED as usize] {
    let mut fixed = [0; FIXED as usize];
    fixed[..8].copy_from_slice(MAGIC);
    fixed[8..12].copy_from_slice(&FORMAT.to_le_bytes());
    fixed
}

impl OnDisk {
    /// Decodes the rest of the head (the event files and the fold) into `self.index`.
    pub fn load_rest(&mut self) -> Result<()> {
        let bytes = bytes_at(&self.map, self.rest.at, self.rest.len, "head")?;
        (self.index.summary.event_files, self.index.summary.fold) = decode(bytes, "head")?;
        Ok(())
    }

    /// Decodes the entries section into `self.index`.
    pub fn load_entries(&mut self) -> Result<()> {
        let bytes = section(&self.map, self.entries, "entries")?;
        let index = &mut self.index;
        let entries: Entries = decode(bytes, "entries")?;
        (
            index.directive_stamps,
            index.quarantine_stamps,
            index.directives,
            index.quarantine,
        ) = entries;
        Ok(())
    }

    /// Loads the corpus section into `self.index.corpus`: checked, and
    /// read in place (see [`crate::retrieve::Corpus::load`]).
    pub fn load_corpus(&mut self) -> Result<()> {
        section(&self.map, self.corpus, "corpus")?;
        let range = self.corpus.at as usize..(self.corpus.at + self.corpus.len) as usize;
        let shared: crate::retrieve::Shared = self.map.clone();
        let corpus = Corpus::load(shared, range).map_err(|source| Error::Corpus { source })?;
        self.index.corpus = Some(corpus);
        Ok(())
    }

    /// Decodes the pattern fold into `self.index.patterns`.
    pub fn load_patterns(&mut self) -> Result<()> {
        let bytes = section(&self.map, self.patterns, "patterns")?;
        self.index.patterns = Some(decode_patterns(bytes)?);
        Ok(())
    }

    /// The pattern section, for [`PatternViews`], once its bytes are checked.
    pub fn pattern_views(&self) -> Result<PatternViews> {
        section(&self.map, self.patterns, "patterns")?;
        Ok(PatternViews {
            map: Arc::clone(&self.map),
            at: self.patterns.at,
            len: self.patterns.len,
        })
    }

    /// The file's size in bytes.
    pub fn file_len(&self) -> u64 {
        self.map.bytes().len() as u64
    }

    /// The index, and the open file its sections can be copied or decoded from.
    pub fn into_parts(self) -> (Index, Old) {
        // Entries and corpus with their length and checksum fields.
        let rest_at = self.entries.at - SECTION_FIELDS;
        let old = Old {
            map: self.map,
            patterns: self.patterns,
            rest_at,
            rest_len: self.corpus.at + self.corpus.len - rest_at,
        };
        (self.index, old)
    }
}

/// An index file still open after its head was read: where a new index
/// copies unchanged sections from.
pub struct Old {
    map: Arc<Map>,
    patterns: Span,
    rest_at: u64,
    rest_len: u64,
}

impl Old {
    /// Decodes the pattern fold.
    pub fn patterns(&mut self) -> Result<crate::pattern::fold::PatternFold> {
        let bytes = section(&self.map, self.patterns, "patterns")?;
        decode_patterns(bytes)
    }
}

/// A section's bytes, once their checksum is found right.
fn section<'a>(map: &'a Map, span: Span, what: &'static str) -> Result<&'a [u8]> {
    let bytes = bytes_at(map, span.at, span.len, what)?;
    if xxhash_rust::xxh3::xxh3_64(bytes) != span.sum {
        return Err(Error::Damaged { what }.into());
    }
    Ok(bytes)
}

/// Where a written index's sections come from; by default, encoded.
#[derive(Default)]
pub struct Sources {
    /// The old file, to copy from.
    pub old: Option<Old>,
    /// Copy the entries and corpus from `old` rather than encode them.
    pub copy_entries: bool,
    /// Copy the pattern fold from `old` rather than encode `index.patterns`.
    pub copy_patterns: bool,
}

/// Reads the index's head but for [`OnDisk::load_rest`]; `None` if it is
/// missing, of another format, for another `.swarm/`, or damaged.
pub fn read(path: &Path, store: &Store) -> Option<OnDisk> {
    let file = crate::safe_fs::open_read(path).ok()?;
    let map = Arc::new(Map::open(&file)?);
    let all = map.bytes();
    // Padding is zeros, checked too: a damaged byte anywhere in the file is found.
    if all.get(..FIXED as usize)? != magic_and_format() {
        return None;
    }
    let field = |at: u64| {
        Some(u64::from_le_bytes(
            all.get(at as usize..)?.get(..8)?.try_into().ok()?,
        ))
    };
    let mut spans = [Span::default(); 4];
    let mut pos = FIXED;
    for span in &mut spans {
        let (len, sum) = (field(pos)?, field(pos + 8)?);
        let at = pos + SECTION_FIELDS;
        let end = at.checked_add(len)?;
        pos = (end.checked_next_multiple_of(ALIGN)).filter(|&next| next <= all.len() as u64)?;
        if all[end as usize..pos as usize].iter().any(|&z| z != 0) {
            return None;
        }
        *span = Span { at, len, sum };
    }
    if pos != all.len() as u64 {
        return None;
    }
    let [head, patterns, entries, corpus] = spans;
    let head_bytes = section(&map, head, "head").ok()?;
    let (start, rest) = postcard::take_from_bytes::<HeadStart>(head_bytes).ok()?;
    if start.swarm_dir != store.swarm_dir.to_string_lossy() {
        return None;
    }
    let rest = Span {
        at: head.at + (head_bytes.len() - rest.len()) as u64,
        len: rest.len() as u64,
        sum: 0,
    };
    // Where the names lie in the file: they stay there.
    let base = all.as_ptr() as usize;
    let listing = start.listing.map(|(dir, names)| Listing {
        dir,
        names: Names::Mapped {
            map: Arc::clone(&map),
            at: names.as_ptr() as usize - base,
            len: names.len(),
        },
    });
    let index = Index {
        fingerprint: start.fingerprint,
        built_at_ns: start.built_at_ns,
        config: start.config,
        entries_fingerprint: start.entries_fingerprint,
        entries_racy: start.entries_racy,
        hive_key: start.hive_key,
        listing,
        summary: Summary {
            directive_count: start.directive_count,
            quarantine_count: start.quarantine_count,
            entry_errors: start.entry_errors,
            ..Summary::default()
        },
        ..Index::default()
    };
    Some(OnDisk {
        index,
        map,
        rest,
        patterns,
        entries,
        corpus,
    })
}

/// Writes `index` atomically, its sections taken from `sources`.
pub fn write(path: &Path, store: &Store, index: &Index, sources: Sources) -> Result<()> {
    let encode_error = |source: postcard::Error| crate::Error::from(Error::Encode { source });
    let start = HeadStart {
        swarm_dir: &store.swarm_dir.to_string_lossy(),
        fingerprint: index.fingerprint,
        built_at_ns: index.built_at_ns,
        config: index.config,
        entries_fingerprint: index.entries_fingerprint,
        entries_racy: index.entries_racy,
        hive_key: index.hive_key,
        directive_count: index.directive_count,
        quarantine_count: index.quarantine_count,
        listing: (index.listing.as_ref()).map(|l| (l.dir, l.names.as_str())),
        entry_errors: index.entry_errors,
    };
    let head =
        postcard::to_stdvec(&(start, &index.event_files, &index.fold)).map_err(encode_error)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| crate::Error::io(dir, e))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| crate::Error::io(dir, e))?;
    let io = |e: std::io::Error| crate::Error::io(path, e);
    let mut out = Out {
        file: tmp.as_file_mut(),
        pos: 0,
    };
    out.write(&magic_and_format()).map_err(io)?;
    // Copied sections are checked when they are decoded.
    let copy = |out: &mut Out<_>, old: &Old, at: u64, len: u64| -> Result<()> {
        out.write(bytes_at(&old.map, at, len, "old sections")?)
            .map_err(io)
    };
    let write_section = |out: &mut Out<_>, bytes: &[u8]| -> Result<()> {
        out.write(&section_fields(bytes)).map_err(io)?;
        out.write(bytes).map_err(io)
    };
    write_section(&mut out, &head)?;
    match &sources.old {
        // With its length and checksum fields.
        Some(old) if sources.copy_patterns => {
            let p = old.patterns;
            copy(&mut out, old, p.at - SECTION_FIELDS, p.len + SECTION_FIELDS)?;
        }
        _ => {
            let empty = PatternFold::default();
            let encoded =
                encode_patterns(index.patterns.as_ref().unwrap_or(&empty)).map_err(encode_error)?;
            write_section(&mut out, &encoded)?;
        }
    }
    match &sources.old {
        Some(old) if sources.copy_entries => copy(&mut out, old, old.rest_at, old.rest_len)?,
        _ => {
            let encoded = postcard::to_stdvec(&(
                &index.directive_stamps,
                &index.quarantine_stamps,
                &index.directives,
                &index.quarantine,
            ))
            .map_err(encode_error)?;
            write_section(&mut out, &encoded)?;
            match &index.corpus {
                Some(c) => write_section(&mut out, &c.encoded())?,
                None => write_section(&mut out, &corpus_of(&index.directives).encoded())?,
            }
        }
    }
    tmp.persist(path)
        .map_err(|e| crate::Error::io(path, e.error))?;
    Ok(())
}

/// The file being written, and how far: each section starts on a multiple
/// of [`ALIGN`], so that the corpus can be read in place as words.
struct Out<W> {
    file: W,
    pos: u64,
}

impl<W: Write> Out<W> {
    /// Writes `bytes`, then zeros to the next multiple of [`ALIGN`].
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.file.write_all(bytes)?;
        self.pos += bytes.len() as u64;
        let pad = self.pos.next_multiple_of(ALIGN) - self.pos;
        if pad > 0 {
            self.file.write_all(&[0; ALIGN as usize][..pad as usize])?;
        }
        self.pos += pad;
        Ok(())
    }
}

/// A section's length and checksum fields, for `bytes`.
fn section_fields(bytes: &[u8]) -> [u8; SECTION_FIELDS as usize] {
    let mut fields = [0; SECTION_FIELDS as usize];
    fields[..8].copy_from_slice(&(bytes.len() as u64).to_le_bytes());
    fields[8..].copy_from_slice(&xxhash_rust::xxh3::xxh3_64(bytes).to_le_bytes());
    fields
}
