//! One side of a diff: the files of `.swarm/` in a tree or in the working
//! tree, each named by its git blob id so that a file the two sides share
//! is recognised without reading it.
//!
//! Only what git-swarm reads is listed: `config.toml` and the files directly
//! in `directives/`, `quarantine/`, `handoffs/`, `proposals/` and `events/`
//! (every other path is only listed, by blob id, in `others`). A symlink or a submodule in
//! their place is listed with its kind and never read; every read is bounded.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gix::ObjectId;

use crate::error::{Error, Result};
use crate::problem::Problem;
use crate::safe_fs::FileKind;

/// The folders of `.swarm/` a diff compares.
pub const FOLDERS: [&str; 5] = [
    "directives",
    "quarantine",
    "handoffs",
    "proposals",
    "events",
];

/// One file of a side.
#[derive(Debug, Clone)]
pub struct File {
    /// Its git blob id (for a working-tree file, the id `git add` would give it).
    pub id: ObjectId,
    /// What it is when it is no regular file: never read.
    pub kind: Option<FileKind>,
    /// The bytes of a working-tree file, read once when it was listed.
    data: Option<std::sync::Arc<Vec<u8>>>,
    /// Why a working-tree file could not be read (over its limit).
    unread: Option<Problem>,
}

impl File {
    /// Is it the same file as `other` (same content, same kind)?
    pub fn same(&self, other: &File) -> bool {
        self.id == other.id && self.kind == other.kind
    }
}

/// Where a side's files come from.
#[derive(Debug, Clone)]
pub enum Source {
    /// A tree (of a commit); `None`: the empty tree (before the first commit).
    Tree(Option<ObjectId>),
    /// The working tree at this root.
    Worktree(PathBuf),
}

/// The files of `.swarm/` on one side, by path below `.swarm/`
/// (`directives/no-unwrap.toml`, `config.toml`).
#[derive(Debug, Default)]
pub struct Side {
    pub files: BTreeMap<String, File>,
    /// The tree id of each folder of a tree side (`directives` → id).
    pub trees: BTreeMap<String, ObjectId>,
    /// `.swarm/` or one of its folders that is no folder (a link, a
    /// submodule): nothing below it is read.
    pub problems: Vec<Problem>,
    /// Every other path below `.swarm/` (`.gitattributes`, `README.md`,
    /// `local/phase`, a folder inside `directives/`…) and its blob id:
    /// nothing git-swarm reads, but a pull request can add it, so a diff
    /// names it. At most [`OTHERS_MAX`].
    pub others: BTreeMap<String, ObjectId>,
}

/// Most other paths listed on a side.
pub const OTHERS_MAX: usize = 10_000;
/// Deepest folder below `.swarm/` whose files are listed as others.
const OTHERS_DEPTH: usize = 8;

/// The size limit of a file of `.swarm/` by its path below `.swarm/`.
pub fn limit_of(path: &str, events_max: u64) -> u64 {
    match path.split_once('/').map_or("", |(folder, _)| folder) {
        "events" => events_max,
        "handoffs" => crate::handoff::HANDOFF_MAX,
        "proposals" => crate::proposal::PROPOSAL_MAX,
        "" => crate::store::CONFIG_MAX,
        _ => crate::directive::limits::FILE_MAX,
    }
}

impl Side {
    /// Lists the side `source` of `repo`.
    pub fn read(repo: &gix::Repository, source: &Source, events_max: u64) -> Result<Side> {
        match source {
            Source::Tree(None) => Ok(Side::default()),
            Source::Tree(Some(tree)) => tree_side(repo, *tree),
            Source::Worktree(root) => worktree_side(repo, root, events_max),
        }
    }

    /// The bytes of `path`, bounded by `limit`; `Err` with the problem that
    /// kept it from being read (over the limit, not a regular file).
    pub fn bytes(
        &self,
        repo: &gix::Repository,
        path: &str,
        limit: u64,
    ) -> Result<std::result::Result<std::sync::Arc<Vec<u8>>, Problem>> {
        let Some(file) = self.files.get(path) else {
            return Ok(Ok(Default::default()));
        };
        let rel = format!(".swarm/{path}");
        if let Some(kind) = file.kind {
            return Ok(Err(not_regular(&rel, kind)));
        }
        if let Some(problem) = &file.unread {
            return Ok(Err(problem.clone()));
        }
        if let Some(data) = &file.data {
            return Ok(Ok(data.clone()));
        }
        let reading = || format!("reading {rel}");
        // A blob's size is in its header: one over the limit is never inflated.
        let size = repo
            .find_header(file.id)
            .map_err(|e| Error::git(reading(), e))?
            .size();
        if size > limit {
            return Ok(Err(too_large(&rel, limit)));
        }
        let blob = repo
            .find_blob(file.id)
            .map_err(|e| Error::git(reading(), e))?;
        Ok(Ok(std::sync::Arc::new(blob.detach().data)))
    }
}

/// The problem of a path under `.swarm/` that is `kind`, not a regular file.
pub fn not_regular(rel: &str, kind: FileKind) -> Problem {
    Problem::error(
        rel,
        crate::event::NOT_REGULAR,
        format!("{kind}, not a regular file: skipped, not read"),
    )
    .with_hint(
        "replace it with a regular file: a link committed under .swarm/ could point anywhere",
    )
}

fn too_large(rel: &str, limit: u64) -> Problem {
    Problem::error(
        rel,
        "too_large",
        format!("file is over its {limit}-byte limit: skipped, not read"),
    )
    .with_hint("files under .swarm/ are small text files; remove what is not one")
}

fn linked_folder(rel: &str, kind: FileKind) -> Problem {
    Problem::error(
        rel,
        crate::event::NOT_REGULAR,
        format!("{kind}, not a folder: skipped, nothing in it is read"),
    )
    .with_hint(
        "commit a real folder in its place: a link committed under .swarm/ could point anywhere",
    )
}

/// The kind of a tree entry that is no regular file; `None` for a blob.
fn entry_kind(mode: gix::objs::tree::EntryMode) -> Option<Option<FileKind>> {
    if mode.is_link() {
        Some(Some(FileKind::Symlink))
    } else if mode.is_commit() {
        Some(Some(FileKind::Submodule))
    } else if mode.is_blob() {
        Some(None)
    } else {
        None
    }
}

fn tree_side(repo: &gix::Repository, tree: ObjectId) -> Result<Side> {
    let mut side = Side::default();
    // Each entry of the tree `id` (name, mode, id), read in place.
    let entries = |id: ObjectId,
                   what: &str,
                   each: &mut dyn FnMut(&[u8], gix::objs::tree::EntryMode, ObjectId)|
     -> Result<()> {
        let tree = repo
            .find_tree(id)
            .map_err(|e| Error::git(format!("reading {what}"), e))?;
        for entry in tree.iter() {
            let entry = entry.map_err(|e| Error::git(format!("reading {what}"), e))?;
            each(entry.filename(), entry.mode(), entry.oid().to_owned());
        }
        Ok(())
    };
    let mut swarm = None;
    entries(tree, "a tree", &mut |name, mode, oid| {
        if name == crate::store::SWARM_DIR.as_bytes() {
            swarm = Some((mode, oid));
        }
    })?;
    let Some((mode, swarm)) = swarm else {
        return Ok(side);
    };
    if !mode.is_tree() {
        if let Some(Some(kind)) = entry_kind(mode) {
            side.problems.push(linked_folder(".swarm", kind));
        }
        return Ok(side);
    }
    let mut folders = Vec::new();
    let mut unknown = Vec::new();
    entries(swarm, ".swarm", &mut |name, mode, oid| {
        let Ok(name) = std::str::from_utf8(name) else {
            unknown.push((String::from_utf8_lossy(name).into_owned(), mode, oid));
            return;
        };
        if name == "config.toml" {
            if let Some(kind) = entry_kind(mode) {
                side.files.insert(name.to_owned(), tree_file(oid, kind));
            }
        } else if FOLDERS.contains(&name) {
            if mode.is_tree() {
                folders.push((name.to_owned(), oid));
            } else if let Some(Some(kind)) = entry_kind(mode) {
                side.problems
                    .push(linked_folder(&format!(".swarm/{name}"), kind));
            }
        } else {
            unknown.push((name.to_owned(), mode, oid));
        }
    })?;
    for (name, oid) in folders {
        side.trees.insert(name.clone(), oid);
        entries(oid, &format!(".swarm/{name}"), &mut |file, mode, id| {
            let Ok(file) = std::str::from_utf8(file) else {
                return;
            };
            if mode.is_tree() {
                unknown.push((format!("{name}/{file}"), mode, id));
            } else if let Some(kind) = entry_kind(mode) {
                side.files
                    .insert(format!("{name}/{file}"), tree_file(id, kind));
            }
        })?;
    }
    // What git-swarm does not read, folders walked, breadth first and bounded.
    let mut depth = 0;
    while !unknown.is_empty() && side.others.len() < OTHERS_MAX {
        let mut deeper = Vec::new();
        for (path, mode, oid) in std::mem::take(&mut unknown) {
            if !mode.is_tree() {
                side.others.insert(path, oid);
            } else if depth < OTHERS_DEPTH {
                entries(oid, &format!(".swarm/{path}"), &mut |name, mode, id| {
                    deeper.push((
                        format!("{path}/{}", String::from_utf8_lossy(name)),
                        mode,
                        id,
                    ));
                })?;
            } else {
                side.others.insert(format!("{path}/"), oid);
            }
            if side.others.len() >= OTHERS_MAX {
                break;
            }
        }
        unknown = deeper;
        depth += 1;
    }
    Ok(side)
}

fn tree_file(id: ObjectId, kind: Option<FileKind>) -> File {
    File {
        id,
        kind,
        data: None,
        unread: None,
    }
}

fn worktree_side(repo: &gix::Repository, root: &Path, events_max: u64) -> Result<Side> {
    let mut side = Side::default();
    let swarm = root.join(crate::store::SWARM_DIR);
    if let Some(kind) = crate::safe_fs::not_a_folder(&swarm) {
        if kind != FileKind::File {
            side.problems.push(linked_folder(".swarm", kind));
        }
        return Ok(side);
    }
    let crlf = crate::change::converts_crlf(repo);
    let add = |side: &mut Side, rel: String, path: &Path| -> Result<()> {
        let shown = format!(".swarm/{rel}");
        let meta = match std::fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(Error::io(path, e)),
        };
        if meta.is_dir() {
            return Ok(());
        }
        if let Some(kind) = FileKind::of(&meta) {
            // A link's blob would be its target's path: hashed as git would, never followed.
            let target = std::fs::read_link(path)
                .map(|t| t.into_os_string().into_encoded_bytes())
                .unwrap_or_default();
            let id = hash(repo, &target)?;
            side.files.insert(
                rel,
                File {
                    id,
                    kind: Some(kind),
                    data: None,
                    unread: None,
                },
            );
            return Ok(());
        }
        let limit = limit_of(&rel, events_max);
        let file = match crate::safe_fs::read(path, limit) {
            Ok(bytes) => {
                let bytes = crate::change::to_git(bytes, crlf);
                File {
                    id: hash(repo, &bytes)?,
                    kind: None,
                    data: Some(std::sync::Arc::new(bytes)),
                    unread: None,
                }
            }
            Err(e) => {
                let problem = if let Some(kind) = crate::safe_fs::not_regular(&e) {
                    not_regular(&shown, kind)
                } else if crate::safe_fs::over_limit(&e).is_some() {
                    too_large(&shown, limit)
                } else {
                    return Err(Error::io(path, e));
                };
                File {
                    // No blob has this id: the file differs from every side's.
                    id: ObjectId::null(repo.object_hash()),
                    kind: None,
                    data: None,
                    unread: Some(problem),
                }
            }
        };
        side.files.insert(rel, file);
        Ok(())
    };
    add(&mut side, "config.toml".into(), &swarm.join("config.toml"))?;
    worktree_others(repo, &swarm, &mut side)?;
    for folder in FOLDERS {
        let dir = swarm.join(folder);
        if let Some(kind) = crate::safe_fs::not_a_folder(&dir) {
            side.problems
                .push(linked_folder(&format!(".swarm/{folder}"), kind));
            continue;
        }
        let Some(listing) = crate::safe_fs::read_dir(&dir).map_err(|e| Error::io(&dir, e))? else {
            continue;
        };
        let mut names = Vec::new();
        for entry in listing {
            let entry = entry.map_err(|e| Error::io(&dir, e))?;
            if let Some(name) = entry.file_name().to_str() {
                names.push(name.to_owned());
            }
        }
        names.sort();
        for name in names {
            add(&mut side, format!("{folder}/{name}"), &dir.join(&name))?;
        }
    }
    Ok(side)
}

/// The files directly in the working tree's `.swarm/` that git-swarm does
/// not read (`.gitattributes`, `README.md`, …), as git would hash them.
/// Folders other than git-swarm's are not walked here: `local/` is per
/// clone and ignored by git, and a committed one shows in a diff of commits.
fn worktree_others(repo: &gix::Repository, swarm: &Path, side: &mut Side) -> Result<()> {
    let Some(listing) = crate::safe_fs::read_dir(swarm).map_err(|e| Error::io(swarm, e))? else {
        return Ok(());
    };
    for entry in listing.take(OTHERS_MAX) {
        let entry = entry.map_err(|e| Error::io(swarm, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == "config.toml" || FOLDERS.contains(&name.as_str()) {
            continue;
        }
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            continue;
        }
        let bytes = if meta.file_type().is_symlink() {
            std::fs::read_link(&path)
                .map(|t| t.into_os_string().into_encoded_bytes())
                .unwrap_or_default()
        } else {
            match crate::safe_fs::read(&path, crate::store::CONFIG_MAX) {
                Ok(bytes) => bytes,
                // Too large, a FIFO, unreadable: differs from any blob.
                Err(_) => {
                    side.others.insert(name, ObjectId::null(repo.object_hash()));
                    continue;
                }
            }
        };
        side.others.insert(name, hash(repo, &bytes)?);
    }
    Ok(())
}

fn hash(repo: &gix::Repository, bytes: &[u8]) -> Result<ObjectId> {
    gix::objs::compute_hash(repo.object_hash(), gix::objs::Kind::Blob, bytes)
        .map_err(|e| Error::git("hashing a file", e))
}
