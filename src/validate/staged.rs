//! `validate` of what a commit would carry: the `.swarm/` of the index,
//! written out to a scratch folder and checked by [`super::validate`]
//! itself, so that the pre-commit hook and `git swarm validate` never
//! disagree about what is broken. Only the files the commit changes count
//! against it (see [`changed_problems`]): a file broken on HEAD that the
//! commit leaves alone is someone else's, and blocks nobody's unrelated work.
//!
//! Writing the files out costs a few milliseconds per hundred files, and is
//! only done for a change that touches `.swarm/`; in exchange every rule of
//! `validate` (the cross-file ones too: ids unique across folders, handoffs
//! standing against the log) applies unchanged, with no second reader of
//! each format to keep in step.

use std::path::Path;

use gix::ObjectId;

use crate::error::{Error, Result};
use crate::event::Clock;
use crate::index::DirectiveBlob;
use crate::problem::Problem;
use crate::safe_fs::FileKind;
use crate::store::{Repo, SWARM_DIR, Store};

/// Validates the `.swarm/` the index holds, given as its files
/// ([`crate::change::Change::staged_blobs_under`]). The problems name
/// paths from the repository root, as `validate` does in the working tree.
/// `None` when the index holds no `.swarm/` folder.
pub fn validate_index(
    repo: &Repo,
    objects: &gix::Repository,
    files: &[DirectiveBlob],
    clock: Clock,
) -> Result<Option<super::Report>> {
    let scratch = tempfile::Builder::new()
        .prefix("git-swarm-staged-")
        .tempdir()
        .map_err(|e| Error::io(&std::env::temp_dir(), e))?;
    let events_max = staged_events_max(objects, files)?;
    for (path, id, kind) in files {
        let limit = read_limit(path, events_max);
        write_out(objects, scratch.path(), path, *id, *kind, limit)?;
    }
    let mut staged = repo.clone();
    staged.root = scratch.path().to_path_buf();
    // What the commit brings, without the clone's pending log (which no
    // commit carries but `git swarm commit`'s, and that one from its files).
    staged.common_dir = scratch.path().join("no-git-dir");
    let store = match Store::open(&staged, clock) {
        Ok(store) => store,
        Err(Error::NotInitialised { .. }) => return Ok(None),
        // `.swarm` itself a link: nothing under it is read, nor validated.
        Err(Error::LinkedFolder { kind, .. }) => {
            let mut report = super::Report::default();
            report.problems.push(
                Problem::error(
                    SWARM_DIR,
                    crate::event::NOT_REGULAR,
                    format!("{kind}, not a folder: git-swarm reads nothing through it"),
                )
                .with_hint(
                    "commit a real `.swarm/` folder in its place (`git swarm init` makes one)",
                ),
            );
            return Ok(Some(report));
        }
        Err(e) => return Err(e),
    };
    super::validate(&store).map(Some)
}

/// The problems of `report` about the files in `changed` (paths from the
/// repository root): what a commit of them brings. A file's problems past
/// the report's cap come as one problem saying how many.
pub fn changed_problems(report: super::Report, changed: &[&str]) -> Vec<Problem> {
    let names_changed = |p: &Problem| {
        changed.contains(&p.path.as_str())
            // An id used twice is reported at the second file; the change
            // that brought the first one brought the clash as well.
            || (p.code == "duplicate_id"
                && changed
                    .iter()
                    .any(|c| p.message.ends_with(&format!("also used by {c}"))))
    };
    report
        .problems
        .into_list()
        .into_iter()
        .filter(names_changed)
        .collect()
}

/// The most `validate` reads of the file at `path` (a larger one it refuses
/// unread): `events.max_file_bytes` of the staged configuration for an
/// event file, the fixed limit of its kind for the others.
fn read_limit(path: &str, events_max: u64) -> u64 {
    let folder = path
        .strip_prefix(".swarm/")
        .and_then(|p| p.split_once('/'))
        .map(|(folder, _)| folder);
    match folder {
        Some("events") => events_max,
        Some("directives" | "quarantine") => crate::directive::limits::FILE_MAX,
        Some("proposals") => crate::proposal::PROPOSAL_MAX,
        Some("handoffs") => crate::handoff::HANDOFF_MAX,
        _ if path == ".swarm/config.toml" => crate::store::CONFIG_MAX,
        // `.gitattributes`: read up to 64 KB; any other file is not read.
        _ => 64 * 1024,
    }
}

/// `events.max_file_bytes` as the staged `config.toml` sets it (the
/// default when it cannot say).
fn staged_events_max(objects: &gix::Repository, files: &[DirectiveBlob]) -> Result<u64> {
    let default = crate::config::EventsConfig::default().max_file_bytes;
    let Some((_, id, None)) = files.iter().find(|(p, _, _)| p == ".swarm/config.toml") else {
        return Ok(default);
    };
    if header_size(objects, ".swarm/config.toml", *id)? > crate::store::CONFIG_MAX {
        return Ok(default);
    }
    let blob = objects
        .find_blob(*id)
        .map_err(|e| Error::git("reading .swarm/config.toml from the index", e))?;
    Ok(match std::str::from_utf8(&blob.data) {
        Ok(text) => {
            crate::config::Config::parse(text, ".swarm/config.toml")
                .0
                .events
                .max_file_bytes
        }
        Err(_) => default,
    })
}

fn header_size(objects: &gix::Repository, path: &str, id: ObjectId) -> Result<u64> {
    Ok(objects
        .find_header(id)
        .map_err(|e| Error::git(format!("reading {path} from the index"), e))?
        .size())
}

/// Writes the index entry `path` under `root` as what it is: a regular
/// file with its content (or, over `limit`, a sparse file of its size,
/// which `validate` refuses unread as it would the real one: a blob is
/// never inflated past what `validate` would read), a link (to nowhere:
/// `validate` never follows one, and the target is not read), or an empty
/// folder for a submodule.
fn write_out(
    objects: &gix::Repository,
    root: &Path,
    path: &str,
    id: ObjectId,
    kind: Option<FileKind>,
    limit: u64,
) -> Result<()> {
    let at = root.join(path);
    if let Some(parent) = at.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    match kind {
        None => {
            let size = header_size(objects, path, id)?;
            if size > limit {
                let file = std::fs::File::create(&at).map_err(|e| Error::io(&at, e))?;
                return file.set_len(size).map_err(|e| Error::io(&at, e));
            }
            let blob = objects
                .find_blob(id)
                .map_err(|e| Error::git(format!("reading {path} from the index"), e))?;
            std::fs::write(&at, &blob.data).map_err(|e| Error::io(&at, e))
        }
        Some(FileKind::Submodule) => std::fs::create_dir_all(&at).map_err(|e| Error::io(&at, e)),
        Some(_) => link(&at),
    }
}

#[cfg(unix)]
fn link(at: &Path) -> Result<()> {
    std::os::unix::fs::symlink("/nonexistent/git-swarm-staged-link", at)
        .map_err(|e| Error::io(at, e))
}

#[cfg(not(unix))]
fn link(_at: &Path) -> Result<()> {
    // Links are not made here: the entry is left out, as no reader would
    // have followed it.
    Ok(())
}
