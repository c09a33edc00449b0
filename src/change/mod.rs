//! What a check looks at: a change read from git with gix, in process.
//!
//! The change is always explicit ([`Selection`]): the staged change (HEAD
//! tree against the index, the empty tree before the first commit), the
//! working tree (HEAD against the files on disk, untracked files that are
//! not ignored included, one by one), a range `A..B` or `A...B`, or one
//! commit against its first parent. Renames are paired as `git diff`
//! pairs them (see `rename`), as `diff.renames` configures, and both
//! paths count.
//!
//! Lines added by a file's change are computed on demand, with the same
//! algorithm as `git diff` (Myers), and binary files (a NUL byte in the
//! first 8000 bytes, git's rule) have none.

mod bytes;
mod read;
mod rename;
mod staged;

pub use bytes::{content, converts_crlf, to_git};
pub use read::{diff_trees, diff_trees_in, tree_of};
pub use rename::{Detect, Renames};

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::bstr::{BStr, BString, ByteSlice};
use serde::Serialize;

use crate::error::{Error, Result};
use crate::pathglob::PathGlob;
use crate::safe_fs::FileKind;

/// Which change to check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// HEAD's tree against the index (what `git commit` would record).
    Staged,
    /// HEAD's tree against the working tree, untracked files included.
    Worktree,
    /// `from..to`, or `from...to` (from the merge base) when `symmetric`.
    Range {
        from: String,
        to: String,
        symmetric: bool,
    },
    /// One commit against its first parent (the empty tree for a root commit).
    Commit(String),
}

impl Selection {
    /// Parses `A..B` or `A...B`. As in git, a side left out is `HEAD`
    /// (`A..` is `A..HEAD`, `...B` is `HEAD...B`, `..` is `HEAD..HEAD`).
    pub fn range(spec: &str) -> Result<Selection> {
        let bad = || {
            Error::usage(
                format!("`{spec}` is not a range"),
                "write A..B (the change from A to B) or A...B (from their merge base to B)",
            )
        };
        let (from, to, symmetric) = match spec.split_once("...") {
            Some((a, b)) => (a, b, true),
            None => {
                let (a, b) = spec.split_once("..").ok_or_else(bad)?;
                (a, b, false)
            }
        };
        if to.starts_with('.') {
            return Err(bad());
        }
        let head_if_empty = |side: &str| if side.is_empty() { "HEAD" } else { side }.to_owned();
        let (from, to) = (head_if_empty(from), head_if_empty(to));
        Ok(Selection::Range {
            from,
            to,
            symmetric,
        })
    }

    /// How the change is named in reports: `staged`, `worktree`, `A..B`, `commit C`.
    pub fn label(&self) -> String {
        match self {
            Selection::Staged => "staged".into(),
            Selection::Worktree => "worktree".into(),
            Selection::Range {
                from,
                to,
                symmetric,
            } => format!("{from}{}{to}", if *symmetric { "..." } else { ".." }),
            Selection::Commit(c) => format!("commit {c}"),
        }
    }
}

/// How a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, strum::IntoStaticStr)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum FileStatus {
    Added,
    Deleted,
    Modified,
    Renamed,
    Copied,
    /// Called "type changed" in a finding's text.
    #[strum(serialize = "type changed")]
    TypeChanged,
    /// A merge conflict not yet resolved: no staged content, only the path.
    Unmerged,
}

/// One side of a changed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    Absent,
    /// A blob (a file or a symlink's target) in the object database.
    Blob(ObjectId),
    /// A file (or symlink) in the working tree.
    File(PathBuf),
    /// A submodule entry: a commit id, no lines.
    Gitlink(ObjectId),
}

impl Content {
    /// The blob id for a blob; for a working-tree file, the id git would
    /// give it when staged (line endings converted as `core.autocrlf` says),
    /// so that an edit checked with `--worktree` and then staged is one
    /// change, not two.
    fn fingerprint_part(&self, hash: gix::hash::Kind, crlf: bool) -> String {
        match self {
            Content::Absent => "-".into(),
            Content::Blob(id) => id.to_string(),
            Content::Gitlink(id) => format!("gitlink:{id}"),
            Content::File(path) => match bytes::file_content(path) {
                Ok(Some(bytes)) => {
                    let bytes = bytes::to_git(bytes, crlf);
                    match gix::objs::compute_hash(hash, gix::objs::Kind::Blob, &bytes) {
                        Ok(id) => id.to_string(),
                        Err(_) => format!("file:{:032x}", xxhash_rust::xxh3::xxh3_128(&bytes)),
                    }
                }
                Ok(None) | Err(_) => "file:?".into(),
            },
        }
    }
}

/// A file the change touches.
#[derive(Debug, Clone)]
pub struct ChangedFile {
    /// The path after the change (for a deletion, the deleted path).
    pub path: BString,
    /// The path before a rename or copy.
    pub old_path: Option<BString>,
    pub status: FileStatus,
    pub old: Content,
    pub new: Content,
}

impl ChangedFile {
    /// What `path` (one of [`Self::paths`]) holds at the end of the change:
    /// its blob id (as git would give a working-tree file), `-` when gone.
    pub fn end_id(&self, repo: &gix::Repository, path: &BStr) -> String {
        if path != self.path.as_bstr() {
            // The old side of a rename or copy: gone from there for a rename.
            return if self.status == FileStatus::Copied {
                self.old
                    .fingerprint_part(repo.object_hash(), bytes::converts_crlf(repo))
            } else {
                "-".into()
            };
        }
        self.new
            .fingerprint_part(repo.object_hash(), bytes::converts_crlf(repo))
    }

    /// Every path this change touches: the path, and the old one of a rename.
    pub fn paths(&self) -> impl Iterator<Item = &BStr> {
        std::iter::once(self.path.as_bstr()).chain(self.old_path.as_ref().map(|p| p.as_bstr()))
    }
}

/// A line added by a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddedLine {
    /// 1-based line number in the new file.
    pub line: u32,
    /// The line without its line ending.
    pub text: BString,
}

/// The files whole-snapshot checks (`grep_tree`) read.
enum Snapshot {
    /// The index (its entries are sorted by path).
    Index(gix::worktree::Index),
    /// A tree, read folder by folder as globs need them.
    Tree(ObjectId),
    /// The working tree: tracked paths that exist plus untracked ones, sorted.
    Worktree(Vec<BString>),
}

/// A file of the checked snapshot.
#[derive(Debug, Clone)]
pub struct SnapshotFile {
    pub path: BString,
    pub content: Content,
}

/// The files of a tree folder, with their blob ids.
type TreeFiles = std::rc::Rc<Vec<(BString, ObjectId)>>;

/// A change, ready to be checked.
pub struct Change {
    pub selection: Selection,
    pub files: Vec<ChangedFile>,
    /// The tree of the checked snapshot, for a range or commit (its `.swarm/` is the one used).
    pub snapshot_tree: Option<ObjectId>,
    /// When rename detection skipped its similarity matrix for
    /// `diff.renameLimit`: the limit it would have needed (as git warns).
    pub rename_limit_needed: Option<u64>,
    snapshot: Snapshot,
    root: PathBuf,
    added: std::cell::RefCell<HashMap<usize, std::rc::Rc<Vec<AddedLine>>>>,
    /// The repository's object hash and whether it converts CRLF: how
    /// working-tree files are named in the fingerprint.
    object_hash: gix::hash::Kind,
    crlf: bool,
    /// Flattened folders of a tree snapshot, by folder prefix (`""` is the whole tree).
    tree_files: std::cell::RefCell<HashMap<String, TreeFiles>>,
    /// Tree ids of a tree snapshot's folders (`None`: no such folder), so
    /// that the folders of many globs share the reads of their parents.
    folder_trees: std::cell::RefCell<HashMap<String, Option<ObjectId>>>,
}

impl Change {
    /// Reads the selected change of the repository at `root`.
    pub fn read(repo: &gix::Repository, root: &Path, selection: &Selection) -> Result<Change> {
        let (files, snapshot, snapshot_tree, rename_limit_needed) = match selection {
            Selection::Staged => read::staged(repo)?,
            Selection::Worktree => read::worktree(repo, root)?,
            Selection::Range {
                from,
                to,
                symmetric,
            } => read::range(repo, from, to, *symmetric)?,
            Selection::Commit(c) => read::commit(repo, c)?,
        };
        Ok(Change {
            selection: selection.clone(),
            files,
            snapshot_tree,
            rename_limit_needed,
            snapshot,
            root: root.to_path_buf(),
            added: Default::default(),
            object_hash: repo.object_hash(),
            crlf: bytes::converts_crlf(repo),
            tree_files: Default::default(),
            folder_trees: Default::default(),
        })
    }

    /// A stable name for this change's content: the same edits give the same
    /// fingerprint, so recording a violation twice for it is recognised.
    /// Event files are left out: `--record` appends to them, and under
    /// `--worktree` that would make every retry a new change (and a second
    /// violation, which escalates).
    pub fn fingerprint(&self) -> String {
        let ours = |p: &BString| p.starts_with(b".swarm/events/");
        let mut parts: Vec<String> = self
            .files
            .iter()
            .filter(|f| !ours(&f.path) && !f.old_path.as_ref().is_some_and(ours))
            .map(|f| {
                format!(
                    "{:?}\0{}\0{}\0{}\0{}",
                    f.status,
                    f.old_path.as_ref().map_or(BStr::new(""), |p| p.as_bstr()),
                    f.path,
                    f.old.fingerprint_part(self.object_hash, self.crlf),
                    f.new.fingerprint_part(self.object_hash, self.crlf)
                )
            })
            .collect();
        parts.sort();
        format!(
            "{:032x}",
            xxhash_rust::xxh3::xxh3_128(parts.join("\n").as_bytes())
        )
    }

    /// Does the change touch a path (a rename's source too) matching `glob`?
    pub fn touches(&self, glob: &PathGlob) -> bool {
        self.files
            .iter()
            .flat_map(|f| f.paths())
            .any(|p| glob.is_match_bytes(p))
    }

    /// The lines file `index` (into `files`) adds. Binary files and submodules add none.
    pub fn added_lines(
        &self,
        repo: &gix::Repository,
        index: usize,
    ) -> Result<std::rc::Rc<Vec<AddedLine>>> {
        if let Some(lines) = self.added.borrow().get(&index) {
            return Ok(lines.clone());
        }
        let file = &self.files[index];
        let old = bytes::content(repo, &file.old)?;
        let mut new = bytes::content(repo, &file.new)?;
        if matches!(file.new, Content::File(_)) {
            new = new.map(|bytes| bytes::to_git(bytes, bytes::converts_crlf(repo)));
        }
        let lines = std::rc::Rc::new(match (old, new) {
            (_, None) => Vec::new(),
            (old, Some(new)) => {
                let old = old.unwrap_or_default();
                if is_binary(&old) || is_binary(&new) {
                    Vec::new()
                } else {
                    added_lines(&old, &new)
                }
            }
        });
        self.added.borrow_mut().insert(index, lines.clone());
        Ok(lines)
    }

    /// The files of the checked snapshot whose path matches `glob` (all
    /// files without one), sorted by path. Only the range of paths that can
    /// match is looked at: the glob's literal folder prefix.
    pub fn snapshot_files(
        &self,
        repo: &gix::Repository,
        glob: Option<&PathGlob>,
    ) -> Result<Vec<SnapshotFile>> {
        let prefix = glob.map_or("", |g| g.literal_prefix());
        let keep = |p: &BStr| glob.is_none_or(|g| g.is_match_bytes(p));
        let mut out = Vec::new();
        match &self.snapshot {
            Snapshot::Index(index) => {
                let entries = index.entries();
                let range = if prefix.is_empty() {
                    Some(0..entries.len())
                } else {
                    index.prefixed_entries_range(prefix.into())
                };
                for e in range.map_or(&entries[..0], |r| &entries[r]) {
                    let path = e.path(index);
                    if e.stage_raw() == 0
                        && !e.mode.contains(gix::index::entry::Mode::COMMIT)
                        && keep(path)
                    {
                        out.push(SnapshotFile {
                            path: path.to_owned(),
                            content: Content::Blob(e.id),
                        });
                    }
                }
            }
            Snapshot::Worktree(paths) => {
                let start = paths.partition_point(|p| p.as_slice() < prefix.as_bytes());
                for p in paths[start..]
                    .iter()
                    .take_while(|p| p.starts_with(prefix.as_bytes()))
                {
                    if keep(p.as_bstr()) {
                        out.push(SnapshotFile {
                            path: p.clone(),
                            content: Content::File(self.root.join(crate::pathglob::bytes_path(p))),
                        });
                    }
                }
            }
            Snapshot::Tree(id) => {
                // Read only the folder the prefix names (its last `/`).
                let folder = prefix.rfind('/').map_or("", |i| &prefix[..i]);
                for (path, blob) in self.tree_folder(repo, *id, folder)?.iter() {
                    if path.starts_with(prefix.as_bytes()) && keep(path.as_bstr()) {
                        out.push(SnapshotFile {
                            path: path.clone(),
                            content: Content::Blob(*blob),
                        });
                    }
                }
            }
        }
        Ok(out)
    }

    /// The trees that determine the content of `folder` (`""`: the whole
    /// snapshot) in the snapshot, from the root down: `visit` is called with
    /// each level's path and tree id, and the walk stops as soon as it
    /// returns true, so a caller that recognises a tree reads nothing below
    /// it. A tree snapshot reads each level's parent (shared by every
    /// folder below it); the index's cache-tree extension gives its valid
    /// levels without reading anything. A working tree has no tree ids.
    pub fn folder_trees(
        &self,
        repo: &gix::Repository,
        folder: &str,
        mut visit: impl FnMut(&str, &gix::oid) -> bool,
    ) -> Result<()> {
        let levels = std::iter::once("").chain(
            folder
                .match_indices('/')
                .map(|(i, _)| &folder[..i])
                .chain((!folder.is_empty()).then_some(folder)),
        );
        match &self.snapshot {
            Snapshot::Tree(root) => {
                for level in levels {
                    match self.folder_tree(repo, *root, level)? {
                        Some(id) if !visit(level, &id) => {}
                        _ => break,
                    }
                }
            }
            Snapshot::Index(index) => {
                let mut node = index.tree();
                for level in levels {
                    let Some(tree) = node.filter(|t| t.num_entries.is_some()) else {
                        break;
                    };
                    if visit(level, &tree.id) {
                        break;
                    }
                    let name = folder[level.len()..].trim_start_matches('/');
                    let name = name.split('/').next().unwrap_or("");
                    node = tree
                        .children
                        .iter()
                        .find(|t| t.name.as_slice() == name.as_bytes());
                }
            }
            Snapshot::Worktree(_) => {}
        }
        Ok(())
    }

    /// For a staged change: the `.swarm/directives/` files in the index, as
    /// (file name, object id, what it is when no regular file) — the
    /// directives a commit of it would carry.
    pub fn staged_directive_blobs(&self) -> Option<Vec<crate::index::DirectiveBlob>> {
        let Snapshot::Index(index) = &self.snapshot else {
            return None;
        };
        let prefix = ".swarm/directives/";
        let entries = index.entries();
        let range = index.prefixed_entries_range(prefix.into()).unwrap_or(0..0);
        Some(
            entries[range]
                .iter()
                .filter(|e| e.stage_raw() == 0)
                .filter_map(|e| {
                    let name = e.path(index).strip_prefix(prefix.as_bytes())?;
                    let name = std::str::from_utf8(name).ok()?;
                    let kind = index_entry_kind(e.mode)?;
                    (!name.contains('/')).then(|| (name.to_owned(), e.id, kind))
                })
                .collect(),
        )
    }

    /// For a staged change: every file of the index at `folder` or under
    /// it (merged entries only), as (path, object id, what it is when no
    /// regular file): what a commit of it would carry there.
    pub fn staged_blobs_under(&self, folder: &str) -> Option<Vec<crate::index::DirectiveBlob>> {
        let Snapshot::Index(index) = &self.snapshot else {
            return None;
        };
        let entries = index.entries();
        let range = index.prefixed_entries_range(folder.into()).unwrap_or(0..0);
        Some(
            entries[range]
                .iter()
                .filter(|e| e.stage_raw() == 0)
                .filter_map(|e| {
                    let path = std::str::from_utf8(e.path(index)).ok()?;
                    // The prefix `.swarm` also names `.swarm-template/`.
                    let under = path == folder
                        || path
                            .strip_prefix(folder)
                            .is_some_and(|r| r.starts_with('/'));
                    let kind = index_entry_kind(e.mode)?;
                    under.then(|| (path.to_owned(), e.id, kind))
                })
                .collect(),
        )
    }

    /// For a staged change: the `.swarm/directives/` files with an
    /// unresolved merge conflict, whose directives the commit cannot carry yet.
    pub fn unmerged_directive_files(&self) -> Vec<String> {
        self.files
            .iter()
            .filter(|f| f.status == FileStatus::Unmerged)
            .filter_map(|f| {
                // Only what would be read as a directive: a `.toml` file
                // directly in the folder (`validate` ignores the rest).
                let name = f.path.strip_prefix(b".swarm/directives/")?;
                (!name.contains(&b'/') && name.ends_with(b".toml"))
                    .then(|| f.path.to_str_lossy().into_owned())
            })
            .collect()
    }

    fn tree_folder(
        &self,
        repo: &gix::Repository,
        tree: ObjectId,
        folder: &str,
    ) -> Result<std::rc::Rc<Vec<(BString, ObjectId)>>> {
        if let Some(files) = self.tree_files.borrow().get(folder) {
            return Ok(files.clone());
        }
        let files = match self.folder_tree(repo, tree, folder)? {
            Some(id) => read::flatten_folder(repo, id, folder)?,
            None => Vec::new(),
        };
        let files = std::rc::Rc::new(files);
        self.tree_files
            .borrow_mut()
            .insert(folder.to_owned(), files.clone());
        Ok(files)
    }

    /// The tree id of `folder` (`""`: the root) in the tree `root`.
    fn folder_tree(
        &self,
        repo: &gix::Repository,
        root: ObjectId,
        folder: &str,
    ) -> Result<Option<ObjectId>> {
        if folder.is_empty() {
            return Ok(Some(root));
        }
        if let Some(id) = self.folder_trees.borrow().get(folder) {
            return Ok(*id);
        }
        let (parent, _) = folder.rsplit_once('/').unwrap_or(("", folder));
        if let Some(parent_id) = self.folder_tree(repo, root, parent)? {
            // Every subfolder of the parent at once: sibling globs then cost nothing.
            let mut known = self.folder_trees.borrow_mut();
            for (name, id) in read::subtrees(repo, parent_id)? {
                let path = if parent.is_empty() {
                    name
                } else {
                    format!("{parent}/{name}")
                };
                known.insert(path, Some(id));
            }
        }
        let mut known = self.folder_trees.borrow_mut();
        Ok(*known.entry(folder.to_owned()).or_insert(None))
    }
}

/// Pairs `deleted` files with `added` ones as `git diff -M` does (see
/// `rename`), for a caller that found them itself: each a path and its
/// content (a blob, or a working-tree file). Returns the renames and copies
/// as changed files, `old_path` set, and the files left unpaired as added
/// or deleted.
pub fn pair_renames(
    repo: &gix::Repository,
    deleted: Vec<(BString, Content)>,
    added: Vec<(BString, Content)>,
    renames: Renames,
) -> Result<Vec<ChangedFile>> {
    use rename::Kind;
    let kind = |c: &Content| match c {
        Content::Absent => Kind::Absent,
        Content::Gitlink(_) => Kind::Gitlink,
        Content::Blob(_) | Content::File(_) => Kind::Regular,
    };
    let mut files = Vec::with_capacity(deleted.len() + added.len());
    for (path, old) in deleted {
        let k = kind(&old);
        files.push(rename::unpaired(
            path,
            FileStatus::Deleted,
            (old, k),
            rename::ABSENT,
        ));
    }
    for (path, new) in added {
        let k = kind(&new);
        files.push(rename::unpaired(
            path,
            FileStatus::Added,
            rename::ABSENT,
            (new, k),
        ));
    }
    let crlf = bytes::converts_crlf(repo);
    Ok(rename::pair(repo, files, renames, crlf)?.0)
}

/// The entries of tree `id`.
fn tree_entries(repo: &gix::Repository, id: ObjectId) -> Result<Vec<gix::objs::tree::Entry>> {
    let tree = repo
        .find_tree(id)
        .map_err(|e| Error::git("reading a tree", e))?;
    let decoded = tree
        .decode()
        .map_err(|e| Error::git("reading a tree entry", e))?;
    Ok(decoded.to_owned().entries)
}

/// git's rule: a NUL byte in the first 8000 bytes makes a file binary.
pub fn is_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(8000)].contains(&0)
}

/// The lines of `old` (1-based) that a line diff to `new` marks as removed
/// or changed (Myers, as `git diff`).
pub fn removed_lines(old: &[u8], new: &[u8]) -> Vec<u32> {
    use gix::diff::blob::{Algorithm, Diff, InternedInput};
    let input = InternedInput::new(old, new);
    let mut diff = Diff::compute(Algorithm::Myers, &input);
    diff.postprocess_lines(&input);
    (0..old.lines_with_terminator().count())
        .filter_map(|i| u32::try_from(i).ok())
        .filter(|&i| diff.is_removed(i))
        .map(|i| i + 1)
        .collect()
}

/// The lines of `new` that a line diff from `old` marks as added (Myers, as `git diff`).
pub fn added_lines(old: &[u8], new: &[u8]) -> Vec<AddedLine> {
    use gix::diff::blob::{Algorithm, Diff, InternedInput};
    let input = InternedInput::new(old, new);
    let mut diff = Diff::compute(Algorithm::Myers, &input);
    diff.postprocess_lines(&input);
    let mut out = Vec::new();
    for (i, line) in new.lines_with_terminator().enumerate() {
        let Ok(token) = u32::try_from(i) else { break };
        if diff.is_added(token) {
            let text = line.strip_suffix(b"\n").unwrap_or(line);
            out.push(AddedLine {
                line: token + 1,
                text: text.into(),
            });
        }
    }
    out
}

/// What an index entry of `mode` is when it is no regular file; `None`
/// for a sparse directory entry, which is no file at all. A symlink's blob
/// is its target's path and a submodule's id a commit's: neither is read.
fn index_entry_kind(mode: gix::index::entry::Mode) -> Option<Option<FileKind>> {
    use gix::index::entry::Mode;
    if mode == Mode::SYMLINK {
        Some(Some(FileKind::Symlink))
    } else if mode == Mode::COMMIT {
        Some(Some(FileKind::Submodule))
    } else if mode == Mode::DIR {
        None
    } else {
        Some(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(
            Selection::range("main..HEAD").expect("valid test input"),
            Selection::Range {
                from: "main".into(),
                to: "HEAD".into(),
                symmetric: false
            }
        );
        assert_eq!(
            Selection::range("a...b").expect("valid test input"),
            Selection::Range {
                from: "a".into(),
                to: "b".into(),
                symmetric: true
            }
        );
        // A side left out is HEAD, as git reads it.
        for (spec, from, to, symmetric) in [
            ("a..", "a", "HEAD", false),
            ("..b", "HEAD", "b", false),
            ("a...", "a", "HEAD", true),
            ("...b", "HEAD", "b", true),
            ("..", "HEAD", "HEAD", false),
            ("...", "HEAD", "HEAD", true),
        ] {
            assert_eq!(
                Selection::range(spec).expect("valid test input"),
                Selection::Range {
                    from: from.into(),
                    to: to.into(),
                    symmetric
                },
                "{spec}"
            );
        }
        for bad in ["main", "a....b", "...."] {
            assert!(Selection::range(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn added_lines_are_the_new_ones() {
        let old = b"a\nb\nc\n";
        let new = b"a\nB\nc\nd";
        let lines: Vec<(u32, String)> = added_lines(old, new)
            .into_iter()
            .map(|l| (l.line, l.text.to_string()))
            .collect();
        assert_eq!(lines, [(2, "B".to_owned()), (4, "d".to_owned())]);
        let crlf: Vec<String> = added_lines(b"", b"x\r\ny\r\n")
            .into_iter()
            .map(|l| l.text.to_string())
            .collect();
        assert_eq!(crlf, ["x\r", "y\r"]);
    }
}
