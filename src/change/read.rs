//! Reading the four kinds of change with gix.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::bstr::BString;
use gix::objs::tree::EntryKind;

use super::rename::{self, ABSENT, Kind, Renames, Typed, unpaired};
use super::{ChangedFile, Content, FileStatus, Snapshot, bytes, tree_entries};
use crate::error::{Error, Result};
use crate::pathglob::bytes_path;

/// The changed files, the snapshot, its tree (range, commit), and the
/// `diff.renameLimit` rename detection would have needed, when it was exceeded.
type Read = (Vec<ChangedFile>, Snapshot, Option<ObjectId>, Option<u64>);

/// A file the index adds to HEAD's tree.
fn index_added(path: BString, mode: gix::index::entry::Mode, id: &gix::oid) -> Typed {
    unpaired(path, FileStatus::Added, ABSENT, index_side(mode, id))
}

/// A file of HEAD's tree the index deletes.
fn index_deleted(path: BString, mode: gix::index::entry::Mode, id: &gix::oid) -> Typed {
    unpaired(path, FileStatus::Deleted, index_side(mode, id), ABSENT)
}

/// The content and kind of an index entry.
fn index_side(mode: gix::index::entry::Mode, id: &gix::oid) -> (Content, Kind) {
    use gix::index::entry::Mode;
    let content = if mode.contains(Mode::COMMIT) && !mode.contains(Mode::FILE) {
        Content::Gitlink(id.to_owned())
    } else {
        Content::Blob(id.to_owned())
    };
    (content, index_kind(mode))
}

fn is_type_change(a: gix::index::entry::Mode, b: gix::index::entry::Mode) -> bool {
    use gix::index::entry::Mode;
    let kind = |m: Mode| {
        if m == Mode::SYMLINK {
            1
        } else if m == Mode::COMMIT {
            2
        } else {
            0
        }
    };
    kind(a) != kind(b)
}

/// The kind of an index entry's content, for rename detection.
pub(super) fn index_kind(mode: gix::index::entry::Mode) -> Kind {
    use gix::index::entry::Mode;
    if mode == Mode::SYMLINK {
        Kind::Link
    } else if is_gitlink(mode) {
        Kind::Gitlink
    } else {
        Kind::Regular
    }
}

/// HEAD's tree (the empty tree before the first commit) against the index.
pub fn staged(repo: &gix::Repository) -> Result<Read> {
    let index = repo
        .index_or_empty()
        .map_err(|e| Error::git("reading the index", e))?;
    let head_tree = repo
        .head_tree_id_or_empty()
        .map_err(|e| Error::git("reading HEAD", e))?
        .detach();
    let renames = Renames::of(repo)?;
    if let Some(files) = super::staged::staged(repo, &index, head_tree)? {
        let (mut files, needed) = rename::pair(repo, files, renames, false)?;
        files.sort_by(|a, b| a.path.cmp(&b.path));
        return Ok((files, Snapshot::Index(index), None, needed));
    }
    let mut files = Vec::new();
    // Renames are paired below, as git pairs them, not by gix's tracker.
    repo.tree_index_status(
        &head_tree,
        &index,
        None,
        gix::status::tree_index::TrackRenames::Disabled,
        |change, _, _| {
            use gix::diff::index::ChangeRef;
            let file = match change {
                ChangeRef::Addition {
                    location,
                    entry_mode,
                    id,
                    ..
                } => index_added(location.into_owned(), entry_mode, &id),
                ChangeRef::Deletion {
                    location,
                    entry_mode,
                    id,
                    ..
                } => index_deleted(location.into_owned(), entry_mode, &id),
                ChangeRef::Modification {
                    location,
                    previous_entry_mode,
                    previous_id,
                    entry_mode,
                    id,
                    ..
                } => {
                    let status = if is_type_change(previous_entry_mode, entry_mode) {
                        FileStatus::TypeChanged
                    } else {
                        FileStatus::Modified
                    };
                    let old = index_side(previous_entry_mode, &previous_id);
                    unpaired(
                        location.into_owned(),
                        status,
                        old,
                        index_side(entry_mode, &id),
                    )
                }
                // Not reported with rename tracking disabled; kept as the
                // two paths it touches.
                ChangeRef::Rewrite {
                    source_location,
                    source_entry_mode,
                    source_id,
                    location,
                    entry_mode,
                    id,
                    ..
                } => {
                    files.push(index_deleted(
                        source_location.into_owned(),
                        source_entry_mode,
                        &source_id,
                    ));
                    index_added(location.into_owned(), entry_mode, &id)
                }
            };
            files.push(file);
            Ok(std::ops::ControlFlow::Continue(()))
        },
    )
    .map_err(|e| Error::git("comparing HEAD with the index", e))?;
    // A path with a merge conflict has no staged content (stages 1-3, not
    // 0): `git diff --cached` names it as unmerged and shows no lines.
    let mut unmerged: Vec<BString> = index
        .entries()
        .iter()
        .filter(|e| e.stage_raw() != 0)
        .map(|e| e.path(&index).to_owned())
        .collect();
    unmerged.dedup();
    files.retain(|f| unmerged.binary_search(&f.file.path).is_err());
    let (mut files, needed) = rename::pair(repo, files, renames, false)?;
    files.extend(unmerged.into_iter().map(|path| ChangedFile {
        path,
        old_path: None,
        status: FileStatus::Unmerged,
        old: Content::Absent,
        new: Content::Absent,
    }));
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok((files, Snapshot::Index(index), None, needed))
}

/// HEAD's tree against the files in the working tree, untracked files included.
pub fn worktree(repo: &gix::Repository, root: &Path) -> Result<Read> {
    use gix::status::index_worktree::Item as Wt;
    let index = repo
        .index_or_empty()
        .map_err(|e| Error::git("reading the index", e))?;
    let mut paths: BTreeSet<BString> = BTreeSet::new();
    let mut untracked = Vec::new();
    let status = repo
        .status(gix::progress::Discard)
        .map_err(|e| Error::git("reading the working tree", e))?
        .untracked_files(gix::status::UntrackedFiles::Files)
        .index_worktree_rewrites(None)
        .index_worktree_submodules(gix::status::Submodule::Given {
            ignore: gix::submodule::config::Ignore::All,
            check_dirty: false,
        })
        .into_iter(None)
        .map_err(|e| Error::git("reading the working tree", e))?;
    for item in status {
        let item = item.map_err(|e| Error::git("reading the working tree", e))?;
        match item {
            gix::status::Item::TreeIndex(change) => {
                paths.extend(tree_index_paths(&change));
            }
            gix::status::Item::IndexWorktree(Wt::Modification { rela_path, .. }) => {
                paths.insert(rela_path);
            }
            gix::status::Item::IndexWorktree(Wt::DirectoryContents { entry, .. }) => {
                if entry.status == gix::dir::entry::Status::Untracked
                    && matches!(
                        entry.disk_kind,
                        Some(gix::dir::entry::Kind::File | gix::dir::entry::Kind::Symlink)
                    )
                {
                    untracked.push(entry.rela_path.clone());
                    paths.insert(entry.rela_path);
                }
            }
            gix::status::Item::IndexWorktree(Wt::Rewrite {
                dirwalk_entry,
                source,
                ..
            }) => {
                paths.insert(dirwalk_entry.rela_path);
                paths.insert(source.rela_path().to_owned());
            }
        }
    }

    // Submodules are compared by the commit checked out in them, which the
    // status walk above was told not to look at: every one is a candidate.
    let gitlinks: BTreeMap<BString, ObjectId> = index
        .entries()
        .iter()
        .filter(|e| e.stage_raw() == 0 && is_gitlink(e.mode))
        .map(|e| (e.path(&index).to_owned(), e.id))
        .collect();
    paths.extend(gitlinks.keys().cloned());

    let head = repo
        .head_tree_id_or_empty()
        .map_err(|e| Error::git("reading HEAD", e))?
        .detach();
    let convert = bytes::converts_crlf(repo);
    // As git: with core.fileMode false, the executable bit on disk is not a change.
    let file_mode = repo
        .config_snapshot()
        .boolean("core.fileMode")
        .unwrap_or(cfg!(unix));
    let head_files: BTreeMap<BString, (ObjectId, EntryKind)> = if paths.is_empty() {
        BTreeMap::new()
    } else {
        flatten_tree_modes(repo, head, BString::default())?
            .into_iter()
            .map(|(p, id, kind)| (p, (id, kind)))
            .collect()
    };
    let mut files = Vec::new();
    for path in paths {
        let on_disk = root.join(bytes_path(&path));
        let entry = WorktreeEntry {
            head: head_files.get(&path).copied(),
            gitlink: gitlinks.get(&path).copied(),
            meta: std::fs::symlink_metadata(&on_disk).ok(),
            on_disk,
        };
        if let Some((status, old, new)) = entry.compare(repo, convert, file_mode)? {
            let old_kind = match (&old, entry.head) {
                (Content::Absent, _) => Kind::Absent,
                (Content::Gitlink(_), _) | (_, Some((_, EntryKind::Commit))) => Kind::Gitlink,
                (_, Some((_, EntryKind::Link))) => Kind::Link,
                _ => Kind::Regular,
            };
            let new_kind = match (&new, &entry.meta) {
                (Content::Absent, _) => Kind::Absent,
                (Content::Gitlink(_), _) => Kind::Gitlink,
                (_, Some(m)) if m.file_type().is_symlink() => Kind::Link,
                _ => Kind::Regular,
            };
            files.push(unpaired(path, status, (old, old_kind), (new, new_kind)));
        }
    }
    // Paired as `git add -A` then `git diff --cached -M` would pair them:
    // a file moved on disk (staged or not) is a rename.
    let (mut files, needed) = rename::pair(repo, files, Renames::of(repo)?, convert)?;
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let mut snapshot: Vec<BString> = index
        .entries()
        .iter()
        .filter(|e| e.stage_raw() == 0 && !e.mode.contains(gix::index::entry::Mode::COMMIT))
        .map(|e| e.path(&index).to_owned())
        .filter(|p| root.join(bytes_path(p)).is_file())
        .collect();
    snapshot.extend(untracked);
    snapshot.sort();
    snapshot.dedup();
    Ok((files, Snapshot::Worktree(snapshot), None, needed))
}

fn tree_index_paths(change: &gix::diff::index::Change) -> Vec<BString> {
    use gix::diff::index::ChangeRef;
    match change {
        ChangeRef::Addition { location, .. }
        | ChangeRef::Deletion { location, .. }
        | ChangeRef::Modification { location, .. } => {
            vec![location.clone().into_owned()]
        }
        ChangeRef::Rewrite {
            source_location,
            location,
            ..
        } => vec![
            source_location.clone().into_owned(),
            location.clone().into_owned(),
        ],
    }
}

/// One path of a `--worktree` change: HEAD's entry, the index's gitlink if
/// it records a submodule there, and what is on disk.
struct WorktreeEntry {
    head: Option<(ObjectId, EntryKind)>,
    gitlink: Option<ObjectId>,
    on_disk: PathBuf,
    meta: Option<std::fs::Metadata>,
}

impl WorktreeEntry {
    /// The status and the two sides, as `git diff HEAD` sees them; `None`
    /// when the path is unchanged.
    fn compare(
        &self,
        repo: &gix::Repository,
        convert: bool,
        file_mode: bool,
    ) -> Result<Option<(FileStatus, Content, Content)>> {
        let file = match &self.meta {
            Some(m) if m.is_file() || m.file_type().is_symlink() => {
                Content::File(self.on_disk.clone())
            }
            _ => Content::Absent,
        };
        let old = match self.head {
            Some((id, EntryKind::Commit)) => Content::Gitlink(id),
            Some((id, _)) => Content::Blob(id),
            None => Content::Absent,
        };
        if matches!(old, Content::Gitlink(_)) || self.gitlink.is_some() {
            // A submodule: the commit its working tree has checked out, or,
            // where it is not checked out, the one the index records (git
            // shows no change for a submodule that was never initialised).
            let now = self
                .gitlink
                .map(|recorded| submodule_head(&self.on_disk).unwrap_or(recorded));
            return Ok(Some(match (old, now) {
                (Content::Gitlink(was), Some(now)) if was == now => return Ok(None),
                (Content::Absent, Some(now)) => {
                    (FileStatus::Added, Content::Absent, Content::Gitlink(now))
                }
                (old @ Content::Gitlink(_), Some(now)) => {
                    (FileStatus::Modified, old, Content::Gitlink(now))
                }
                (old, Some(now)) => (FileStatus::TypeChanged, old, Content::Gitlink(now)),
                // No longer a submodule in the index: whatever is on disk now.
                (old, None) => match file {
                    Content::Absent => (FileStatus::Deleted, old, Content::Absent),
                    file => (FileStatus::TypeChanged, old, file),
                },
            }));
        }
        let status = match (&old, &file, &self.meta) {
            (Content::Absent, Content::Absent, _) => return Ok(None),
            (Content::Absent, _, _) => FileStatus::Added,
            (_, Content::Absent, _) => FileStatus::Deleted,
            (Content::Blob(id), Content::File(p), Some(meta)) => {
                let old_kind = self.head.map_or(EntryKind::Blob, |(_, k)| k);
                let is_link = meta.file_type().is_symlink();
                if (old_kind == EntryKind::Link) != is_link {
                    FileStatus::TypeChanged
                } else if !same_blob(repo, *id, p, convert)?
                    || (file_mode
                        && !is_link
                        && (old_kind == EntryKind::BlobExecutable) != git_executable(meta))
                {
                    FileStatus::Modified
                } else {
                    return Ok(None);
                }
            }
            _ => FileStatus::Modified,
        };
        Ok(Some((status, old, file)))
    }
}

fn is_gitlink(mode: gix::index::entry::Mode) -> bool {
    mode.contains(gix::index::entry::Mode::COMMIT) && !mode.contains(gix::index::entry::Mode::FILE)
}

/// The commit checked out in the submodule at `dir`, if it is one.
fn submodule_head(dir: &Path) -> Option<ObjectId> {
    if !dir.join(".git").exists() {
        return None;
    }
    let sub = gix::open(dir).ok()?;
    sub.head_id().ok().map(gix::Id::detach)
}

/// The executable bit as git records it for a file: the owner's `x`
/// (unlike a hook's "can it run", see `hooks`); none off Unix.
#[cfg(unix)]
fn git_executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o100 != 0
}

#[cfg(not(unix))]
fn git_executable(_: &std::fs::Metadata) -> bool {
    false
}

/// Does the file at `path` hash to blob `id` (so it is unchanged from HEAD)?
fn same_blob(repo: &gix::Repository, id: ObjectId, path: &Path, convert: bool) -> Result<bool> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| Error::io(path, e))?;
    let bytes = if meta.file_type().is_symlink() {
        let target = std::fs::read_link(path).map_err(|e| Error::io(path, e))?;
        target.into_os_string().into_encoded_bytes()
    } else {
        bytes::to_git(
            std::fs::read(path).map_err(|e| Error::io(path, e))?,
            convert,
        )
    };
    let hash = gix::objs::compute_hash(repo.object_hash(), gix::objs::Kind::Blob, &bytes)
        .map_err(|e| Error::git("hashing a file", e))?;
    Ok(hash == id)
}

/// How to get history a shallow clone does not have.
const DEEPEN: &str =
    "fetch more history with `git fetch --deepen=<n>`, or all of it with `git fetch --unshallow`";

/// Is the repository a shallow clone (history cut at the commits its
/// `shallow` file lists)?
fn is_shallow(repo: &gix::Repository) -> bool {
    repo.is_shallow().unwrap_or(false)
}

/// The object `spec` names, with annotated tags peeled (as `git diff`
/// peels them), and its tree.
pub fn tree_of(repo: &gix::Repository, spec: &str) -> Result<(ObjectId, ObjectId)> {
    // gix's own message names its parser's internals (`delegate.traverse(…)`).
    let id = repo.rev_parse_single(spec).map_err(|_| {
        Error::usage(
            format!("`{spec}` does not name a revision in this repository"),
            if is_shallow(repo) {
                format!(
                    "this clone is shallow, and it may lie beyond the history fetched: {DEEPEN}"
                )
            } else {
                "name a commit, branch or tag that `git rev-parse --verify` accepts".into()
            },
        )
    })?;
    let object = id
        .object()
        .map_err(|e| Error::git(format!("reading {spec}"), e))?
        .peel_tags_to_end()
        .map_err(|e| Error::git(format!("peeling the tag {spec}"), e))?;
    let peeled = object.id;
    if object.kind == gix::object::Kind::Blob {
        return Err(Error::usage(
            format!("`{spec}` names a file's content (a blob), not a commit"),
            "name a commit, branch or tag (`HEAD`, not `HEAD:path`); the whole tree is checked",
        ));
    }
    let tree = object
        .peel_to_tree()
        .map_err(|e| Error::git(format!("{spec} has no tree"), e))?
        .id;
    Ok((peeled, tree))
}

/// The change from `from` to `to` (from their merge base when `symmetric`).
pub fn range(repo: &gix::Repository, from: &str, to: &str, symmetric: bool) -> Result<Read> {
    let (from_id, from_tree) = tree_of(repo, from)?;
    let (to_id, to_tree) = tree_of(repo, to)?;
    let old_tree = if symmetric {
        let shallow = is_shallow(repo);
        let no_base = |source: Option<crate::error::Cause>| {
            let (message, hint) = if shallow {
                // As in git, the history stops at the shallow boundary; the
                // base may well be beyond it.
                (
                    format!("`{from}` and `{to}` have no merge base in this shallow clone"),
                    format!(
                        "it may lie beyond the history fetched: {DEEPEN}; use A..B for unrelated histories"
                    ),
                )
            } else {
                (
                    format!("`{from}` and `{to}` have no merge base"),
                    "use A..B for unrelated histories".to_owned(),
                )
            };
            match source {
                Some(source) => Error::refused(message, Some(hint), source),
                None => Error::usage(message, hint),
            }
        };
        let base = repo
            .merge_base(from_id, to_id)
            .map_err(|e| no_base(Some(e.into())))?
            .ok_or_else(|| no_base(None))?;
        tree_of(repo, &base.to_string())?.1
    } else {
        from_tree
    };
    let (files, needed) = diff_trees(repo, Some(old_tree), to_tree, Renames::of(repo)?)?;
    Ok((files, Snapshot::Tree(to_tree), Some(to_tree), needed))
}

/// Commit `spec` against its first parent.
pub fn commit(repo: &gix::Repository, spec: &str) -> Result<Read> {
    let (id, tree) = tree_of(repo, spec)?;
    let commit = repo.find_commit(id).map_err(|e| {
        Error::refused(
            format!("`{spec}` is not a commit"),
            Some("name a commit; use --range for a range".into()),
            e,
        )
    })?;
    // As in git, a commit at the boundary of a shallow clone has no parents
    // (its parents are not there): like a root commit, every file is added.
    let at_boundary = repo
        .shallow_commits()
        .map_err(|e| Error::git("reading the shallow file", e))?
        .is_some_and(|boundary| boundary.iter().any(|b| *b == id));
    let parent_tree = match commit.parent_ids().next() {
        Some(_) if at_boundary => None,
        Some(parent) => {
            let parent = parent.detach();
            let reading = || format!("reading {parent}, the first parent of `{spec}`");
            let tree = repo
                .find_commit(parent)
                .map_err(|e| Error::git(reading(), e))?
                .tree_id()
                .map_err(|e| Error::git(reading(), e))?;
            Some(tree.detach())
        }
        None => None,
    };
    let (files, needed) = diff_trees(repo, parent_tree, tree, Renames::of(repo)?)?;
    Ok((files, Snapshot::Tree(tree), Some(tree), needed))
}

/// The files that differ between the trees `old` (none: the empty tree)
/// and `new`, renames paired as `renames` says, sorted by path; and the
/// `diff.renameLimit` pairing would have needed, when it was exceeded.
pub fn diff_trees(
    repo: &gix::Repository,
    old: Option<ObjectId>,
    new: ObjectId,
    renames: Renames,
) -> Result<(Vec<ChangedFile>, Option<u64>)> {
    let mut state = gix::diff::tree::State::default();
    diff_trees_in(repo, &repo.objects, &mut state, old, new, renames)
}

/// [`diff_trees`], with the folders below the top read from `objects`
/// and the diff's buffers kept in `state`: a history walk reads through a
/// cache of its own, and reuses buffers as large as its largest folder.
pub fn diff_trees_in(
    repo: &gix::Repository,
    objects: &impl gix::objs::Find,
    state: &mut gix::diff::tree::State,
    old: Option<ObjectId>,
    new: ObjectId,
    renames: Renames,
) -> Result<(Vec<ChangedFile>, Option<u64>)> {
    use gix::diff::tree::recorder::Change as R;
    let find = |id: ObjectId| {
        repo.find_tree(id)
            .map_err(|e| Error::git("reading a tree", e))
    };
    let new_tree = find(new)?;
    let old_tree = match old {
        Some(id) => find(id)?,
        None => repo.empty_tree(),
    };
    let mut recorder = gix::diff::tree::Recorder::default();
    gix::diff::tree(
        gix::objs::TreeRefIter::from_bytes(&old_tree.data, old_tree.id.kind()),
        gix::objs::TreeRefIter::from_bytes(&new_tree.data, new_tree.id.kind()),
        &mut *state,
        objects,
        &mut recorder,
    )
    .map_err(|e| Error::git("comparing trees", e))?;
    let side = |mode: gix::object::tree::EntryMode, id: ObjectId| {
        if mode.is_commit() {
            (Content::Gitlink(id), Kind::Gitlink)
        } else if mode.is_link() {
            (Content::Blob(id), Kind::Link)
        } else {
            (Content::Blob(id), Kind::Regular)
        }
    };
    let added = |path, mode, id| unpaired(path, FileStatus::Added, ABSENT, side(mode, id));
    let deleted = |path, mode, id| unpaired(path, FileStatus::Deleted, side(mode, id), ABSENT);
    let mut files = Vec::new();
    for change in recorder.records {
        files.push(match change {
            R::Addition {
                entry_mode,
                oid,
                path,
                ..
            } if !entry_mode.is_tree() => added(path, entry_mode, oid),
            R::Deletion {
                entry_mode,
                oid,
                path,
                ..
            } if !entry_mode.is_tree() => deleted(path, entry_mode, oid),
            R::Modification {
                previous_entry_mode,
                previous_oid,
                entry_mode,
                oid,
                path,
            } if !entry_mode.is_tree() || !previous_entry_mode.is_tree() => {
                // A file turned into a directory (or back) is a deletion plus additions git lists apart.
                if previous_entry_mode.is_tree() {
                    added(path, entry_mode, oid)
                } else if entry_mode.is_tree() {
                    deleted(path, previous_entry_mode, previous_oid)
                } else {
                    let (old, new) = (
                        side(previous_entry_mode, previous_oid),
                        side(entry_mode, oid),
                    );
                    let status = if old.1 == new.1 {
                        FileStatus::Modified
                    } else {
                        FileStatus::TypeChanged
                    };
                    unpaired(path, status, old, new)
                }
            }
            _ => continue,
        });
    }
    let (mut files, needed) = rename::pair(repo, files, renames, false)?;
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok((files, needed))
}

/// Every file of the tree `tree`, the folder `folder` (`""`: the root) of
/// a snapshot, with its blob id and full path, sorted by path.
pub fn flatten_folder(
    repo: &gix::Repository,
    tree: ObjectId,
    folder: &str,
) -> Result<Vec<(BString, ObjectId)>> {
    Ok(flatten_tree_modes(repo, tree, BString::from(folder))?
        .into_iter()
        .filter(|(_, _, kind)| *kind != EntryKind::Commit)
        .map(|(p, id, _)| (p, id))
        .collect())
}

/// The subfolders of the tree `parent` whose names are UTF-8 (a glob's
/// folder always is), with their tree ids.
pub fn subtrees(repo: &gix::Repository, parent: ObjectId) -> Result<Vec<(String, ObjectId)>> {
    Ok(tree_entries(repo, parent)?
        .into_iter()
        .filter(|e| e.mode.is_tree())
        .filter_map(|e| Some((String::from_utf8(e.filename.into()).ok()?, e.oid)))
        .collect())
}

fn flatten_tree_modes(
    repo: &gix::Repository,
    id: ObjectId,
    prefix: BString,
) -> Result<Vec<(BString, ObjectId, EntryKind)>> {
    let mut out = Vec::new();
    let mut stack = vec![(prefix, id)];
    while let Some((prefix, tree_id)) = stack.pop() {
        for entry in tree_entries(repo, tree_id)? {
            let mut path = prefix.clone();
            if !path.is_empty() {
                path.push(b'/');
            }
            path.extend_from_slice(&entry.filename);
            if entry.mode.is_tree() {
                stack.push((path, entry.oid));
            } else {
                out.push((path, entry.oid, entry.mode.kind()));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}
