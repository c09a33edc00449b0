//! What `check` reads of the directives of a committed (or staged)
//! `.swarm/directives/` ([`CheckEntry`]), cached in the git dir under the
//! folder's tree id or a hash of the files' names and blob ids: a tree
//! never changes, so neither does its parse, and parsing a thousand TOML
//! files on every pre-push cost more than the diff.

use std::path::{Path, PathBuf};

use super::entries::entry_from_bytes;
use super::entries::{not_regular_entry, too_large_entry};
use super::sealed::SealedFile;
use crate::check::CheckEntry;
use crate::error::{Error, Result};
use crate::safe_fs::FileKind;

/// Bump when `CheckEntry` (or what it holds) changes layout.
const FORMAT: &[u8] = b"git-swarm tree directives v6\n";

/// The directives of a snapshot as the cache keeps them: decode them with
/// [`SnapshotDirectives::entries`].
pub struct SnapshotDirectives {
    body: Body,
}

enum Body {
    /// The cache file, mapped.
    Cached(SealedFile),
    /// Just parsed (and written to the cache, when it could be).
    Encoded(Vec<u8>),
}

impl SnapshotDirectives {
    fn encode(entries: &[CheckEntry]) -> Result<SnapshotDirectives> {
        let body = postcard::to_stdvec(entries)
            .map_err(|source| super::Error::EncodeSnapshot { source })?;
        Ok(SnapshotDirectives {
            body: Body::Encoded(body),
        })
    }

    /// The directive files, sorted by file name, with their strings borrowed from `self`.
    pub fn entries(&self) -> Result<Vec<CheckEntry<'_>>> {
        let body = match &self.body {
            Body::Cached(file) => file.body(),
            Body::Encoded(body) => body,
        };
        postcard::from_bytes(body).map_err(|source| super::Error::DecodeSnapshot { source }.into())
    }
}

/// How many trees' parses are kept; the oldest are removed.
const KEEP: usize = 16;

/// The directive files of `.swarm/directives/` in `tree`, sorted by file name.
pub fn directives_in_tree(
    git_dir: &Path,
    repo: &gix::Repository,
    tree: gix::ObjectId,
) -> Result<SnapshotDirectives> {
    let tree = repo
        .find_tree(tree)
        .map_err(|e| Error::git("reading the checked tree", e))?;
    // A committed link is a blob holding the target's path: never followed,
    // whether it stands for `.swarm/`, the folder or one of its files.
    let mut entry = None;
    for folder in [".swarm", ".swarm/directives"] {
        match tree
            .lookup_entry_by_path(folder)
            .map_err(|e| Error::git(format!("reading {folder}"), e))?
        {
            Some(e) if e.mode().is_link() => return linked_folder(folder, FileKind::Symlink),
            Some(e) if e.mode().is_commit() => return linked_folder(folder, FileKind::Submodule),
            Some(e) if e.mode().is_tree() => entry = Some(e),
            _ => return SnapshotDirectives::encode(&[]),
        }
    }
    let Some(entry) = entry else {
        return SnapshotDirectives::encode(&[]);
    };
    // The folder's tree id fixes every file in it: a tree seen before is not read again.
    let mut key = cache_key();
    key.update(b"tree\0");
    key.update(entry.oid().as_bytes());
    let cache = cache_path(git_dir, &key);
    if let Some(entries) = read_cache(&cache) {
        return Ok(entries);
    }
    let dir = repo
        .find_tree(entry.oid())
        .map_err(|e| Error::git("reading .swarm/directives", e))?;
    let mut blobs = Vec::new();
    for e in dir.iter() {
        let e = e.map_err(|e| Error::git("reading .swarm/directives", e))?;
        let Ok(name) = std::str::from_utf8(e.filename()) else {
            continue;
        };
        let mode = e.mode();
        let kind = if mode.is_link() {
            Some(FileKind::Symlink)
        } else if mode.is_commit() {
            Some(FileKind::Submodule)
        } else if mode.is_blob() {
            None
        } else {
            continue;
        };
        blobs.push((name.to_owned(), e.oid().to_owned(), kind));
    }
    parse_blobs(repo, &blobs, &cache)
}

/// A directive file as a tree or the index holds it: file name, object id,
/// and what it is when it is no regular file (a symlink, whose blob is the
/// target's path; a submodule, whose id is a commit's): never read.
pub type DirectiveBlob = (String, gix::ObjectId, Option<FileKind>);

/// The directives of a snapshot whose `.swarm/` or `.swarm/directives` is
/// a symlink or a submodule: none, and the problem that says so.
fn linked_folder(folder: &str, kind: FileKind) -> Result<SnapshotDirectives> {
    let mut entry = not_regular_entry(folder, folder, kind);
    for p in &mut entry.problems {
        p.message = format!("{kind}, not a folder: skipped, no directive in it is read");
        p.hint = Some("commit a real folder in its place: a link committed under .swarm/ could point anywhere".into());
    }
    let views = [CheckEntry {
        path: folder.into(),
        errors: entry.problems.into_boxed_slice(),
        directive: None,
    }];
    SnapshotDirectives::encode(&views)
}

/// The directive files given as [`DirectiveBlob`]s — from a tree or from
/// the index — parsed, or read from the cache kept under their ids.
pub fn directives_from_blobs(
    git_dir: &Path,
    repo: &gix::Repository,
    blobs: &[DirectiveBlob],
) -> Result<SnapshotDirectives> {
    let mut key = cache_key();
    key.update(b"blobs\0");
    let mut sorted: Vec<&DirectiveBlob> = blobs.iter().collect();
    sorted.sort();
    for (name, id, kind) in sorted {
        key.update(name.as_bytes());
        key.update(&[0]);
        key.update(id.as_bytes());
        key.update(&[kind.map_or(0, |k| k as u8 + 1)]);
    }
    let cache = cache_path(git_dir, &key);
    if let Some(entries) = read_cache(&cache) {
        return Ok(entries);
    }
    parse_blobs(repo, blobs, &cache)
}

/// Keys start with the version and the format: a parse by another version
/// of git-swarm (another schema, other checks) is not reused, nor replaced.
fn cache_key() -> xxhash_rust::xxh3::Xxh3 {
    let mut key = xxhash_rust::xxh3::Xxh3::new();
    key.update(env!("CARGO_PKG_VERSION").as_bytes());
    key.update(&[0]);
    key.update(FORMAT);
    key
}

fn cache_path(git_dir: &Path, key: &xxhash_rust::xxh3::Xxh3) -> PathBuf {
    git_dir
        .join("swarm")
        .join("trees")
        .join(format!("{:032x}", key.digest128()))
}

/// Parses the `.toml` blobs among `blobs`, sorted by file name, and keeps
/// the parse in `cache`; a symlink or a submodule is reported, not read.
fn parse_blobs(
    repo: &gix::Repository,
    blobs: &[DirectiveBlob],
    cache: &Path,
) -> Result<SnapshotDirectives> {
    let mut blobs: Vec<&DirectiveBlob> = blobs
        .iter()
        .filter(|(name, _, _)| name.ends_with(".toml"))
        .collect();
    blobs.sort();
    let mut out = Vec::with_capacity(blobs.len());
    for (name, id, kind) in blobs {
        let rel = format!(".swarm/directives/{name}");
        if let Some(kind) = kind {
            out.push(not_regular_entry(&rel, name, *kind));
            continue;
        }
        // A blob's size is in its header: one over the limit (a few MB of
        // zeros compress to nothing) is never inflated.
        let size = repo
            .find_header(*id)
            .map_err(|err| Error::git(format!("reading .swarm/directives/{name}"), err))?
            .size();
        if size > crate::directive::limits::FILE_MAX {
            out.push(too_large_entry(&rel, name));
            continue;
        }
        let blob = repo
            .find_blob(*id)
            .map_err(|err| Error::git(format!("reading .swarm/directives/{name}"), err))?;
        out.push(entry_from_bytes(&blob.data, &rel, name, false));
    }
    let views: Vec<CheckEntry> = out.iter().map(CheckEntry::of).collect();
    let parsed = SnapshotDirectives::encode(&views)?;
    // Only a cache: a read-only git dir must not stop a check.
    if let Body::Encoded(body) = &parsed.body {
        let _ = write_cache(cache, body);
    }
    Ok(parsed)
}

/// The cache file, mapped, when it is there, whole and of this format.
fn read_cache(path: &Path) -> Option<SnapshotDirectives> {
    Some(SnapshotDirectives {
        body: Body::Cached(SealedFile::open(path, FORMAT)?),
    })
}

fn write_cache(path: &Path, body: &[u8]) -> Result<()> {
    super::write_sealed(path, FORMAT, body, KEEP)
}
