//! `git swarm worktree …`: a task's own linked worktree, on a branch named
//! for it, whose commits are cherry-picked back onto the user's branch.
//!
//! Worktree management and cherry-picks are git's business, so this module
//! runs the `git` binary (never a shell) with an explicit argument list and
//! without the `GIT_*` variables an outer hook may have set, which would
//! otherwise point git at another index or repository. What git-swarm
//! created is remembered in the git common dir
//! (`<common>/swarm/worktrees/<task>.json`), never under `.swarm/`: it is
//! this clone's bookkeeping, and `abort` removes only what a record names.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::check::Warning;
use crate::error::{Error, Result};
use crate::problem::Problem;
use crate::store::Repo;

/// Where the records live, under the git common dir.
pub const RECORDS_DIR: &str = "swarm/worktrees";

/// The git config key naming where task worktrees go.
pub const DIR_KEY: &str = "swarm.worktreeDir";

/// Largest record read: a few paths and ids.
const RECORD_MAX: u64 = 64 * 1024;

/// The file `create` writes into git's administrative folder of the
/// worktree it made (`<common>/worktrees/<name>/`), holding the record's
/// marker. git removes that folder with the worktree, so a worktree added
/// later at the same path (even on the task's branch) has none: `abort`
/// removes only a worktree that has it.
const CREATED_MARK: &str = "git-swarm-created";

/// Variables that make git use another repository, work tree or index
/// than the one named on its command line: set by git for the hooks it
/// runs, so a command run from a hook would otherwise act on the wrong one.
pub const REDIRECTING_ENV: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_PREFIX",
    "GIT_NAMESPACE",
    "GIT_QUARANTINE_PATH",
];

/// What `worktree create` made, as remembered in the common dir.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    pub task: String,
    /// The worktree's top folder, absolute.
    pub path: PathBuf,
    /// `swarm/<task>`.
    pub branch: String,
    /// The commit the branch started from (40 hex).
    pub base: String,
    /// The message of the branch's first reflog entry, unique to this
    /// `create`: how `abort` knows the branch is still the one made here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
}

/// The branch `create` makes for `task`.
pub fn branch_name(task: &str) -> String {
    format!("swarm/{task}")
}

/// Task ids are the handoff's (a safe file stem and branch name).
pub use crate::handoff::is_valid_task;

fn check_task(task: &str) -> Result<()> {
    if is_valid_task(task) {
        Ok(())
    } else {
        Err(Error::usage(
            format!("`{task}` is not a valid task id"),
            "a task id is 2-80 lowercase letters, digits, `-`, `_` or `.`, starting with a letter or digit (no `..`)",
        ))
    }
}

pub mod checkout;
pub(crate) mod git;
mod merge;

use git::{branch_tip, canonical, commit_of, git, git_in, git_os, ok, registered, z_list};
pub use merge::merge;

/// The main worktree's top folder (git lists it first).
pub fn main_worktree(repo: &Repo) -> Result<PathBuf> {
    Ok(registered(repo)?
        .into_iter()
        .next()
        .map_or_else(|| repo.root.clone(), |w| w.path))
}

/// Where `create` puts `task`'s worktree: `configured` (`swarm.worktreeDir`,
/// `{repo}` and `{task}` substituted, relative to the main worktree's
/// parent; `/<task>` added when it has no `{task}`), else
/// `<parent of the main worktree>/<repo>.worktrees/<task>`.
pub fn worktree_path(main: &Path, task: &str, configured: Option<&Path>) -> PathBuf {
    let parent = main.parent().unwrap_or(main);
    let repo_name = main
        .file_name()
        .map_or_else(|| "repo".into(), |n| n.to_string_lossy().into_owned());
    match configured.filter(|c| !c.as_os_str().is_empty()) {
        Some(template) => {
            let text = template.to_string_lossy();
            let substituted = text.replace("{repo}", &repo_name).replace("{task}", task);
            let mut path = parent.join(substituted);
            if !text.contains("{task}") {
                path.push(task);
            }
            path
        }
        None => parent.join(format!("{repo_name}.worktrees")).join(task),
    }
}

/// `path` with `.` dropped and each `..` taking off the part before it, on
/// the text alone: `missing/../repo/x` is `repo/x` even though `missing`
/// does not exist. Used after [`resolve_existing_prefix`], so that every
/// `..` left follows a folder that does not exist (and so is no symlink).
fn lexical(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push(part);
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// The `[contract] base` of `.swarm/handoffs/<task>.toml`, if there is one;
/// the file is read and checked whole, as every handoff command reads it.
fn handoff_base(repo: &Repo, task: &str) -> Result<Option<String>> {
    let path = repo
        .root
        .join(crate::store::SWARM_DIR)
        .join("handoffs")
        .join(format!("{task}.toml"));
    if path.symlink_metadata().is_err() {
        return Ok(None);
    }
    match crate::handoff::load_in(&repo.root, &path) {
        Ok(h) => Ok(Some(h.contract.base)),
        Err(problem) => {
            let rel = problem.path.clone();
            Err(Error::Invalid(vec![problem.with_hint(format!(
                "fix {rel} (`git swarm validate`), or pass --base REV"
            ))]))
        }
    }
}

fn record_path(repo: &Repo, task: &str) -> PathBuf {
    repo.common_dir
        .join(RECORDS_DIR)
        .join(format!("{task}.json"))
}

/// The record of `task`, if `create` left one.
pub fn load(repo: &Repo, task: &str) -> Result<Option<Record>> {
    check_task(task)?;
    let path = record_path(repo, task);
    match read_record(&path) {
        Ok(record) => Ok(Some(record)),
        Err(ReadError::Missing) => Ok(None),
        Err(ReadError::Bad(problem)) => Err(Error::Invalid(vec![problem])),
    }
}

enum ReadError {
    Missing,
    Bad(Problem),
}

fn read_record(path: &Path) -> std::result::Result<Record, ReadError> {
    let shown = path.display().to_string();
    let bytes = match crate::safe_fs::read(path, RECORD_MAX) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(ReadError::Missing),
        Err(e) => {
            return Err(ReadError::Bad(
                Problem::error(shown, "unreadable", e.to_string()).with_hint(
                    "remove it; `git swarm worktree prune` forgets records it cannot read",
                ),
            ));
        }
    };
    let expected = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    match serde_json::from_slice::<Record>(&bytes) {
        Ok(record) if record.task != expected || !is_valid_task(&record.task) => {
            Err(ReadError::Bad(
                Problem::error(
                    shown,
                    "id_mismatch",
                    format!("the record names task `{}`, not `{expected}`", record.task),
                )
                .with_hint("remove it; git-swarm writes these records itself"),
            ))
        }
        // The base is passed to git: only a full object id, never an option.
        Ok(record)
            if !matches!(record.base.len(), 40 | 64)
                || !record.base.bytes().all(|b| b.is_ascii_hexdigit()) =>
        {
            Err(ReadError::Bad(
                Problem::error(
                    shown,
                    "invalid_record",
                    format!("`base` is `{}`, not a full commit id", record.base),
                )
                .with_hint("remove it; git-swarm writes these records itself"),
            ))
        }
        Ok(record) => Ok(record),
        Err(e) => Err(ReadError::Bad(
            Problem::error(shown, "invalid_record", e.to_string())
                .at(e.line() as u32, e.column() as u32)
                .with_hint("remove it; git-swarm writes these records itself"),
        )),
    }
}

/// The records found (each with its file) and the files that could not be read.
pub type Loaded = (Vec<(PathBuf, Record)>, Vec<(PathBuf, Problem)>);

/// Every record, by task, and the record files that could not be read.
pub fn load_all(repo: &Repo) -> Result<Loaded> {
    let dir = repo.common_dir.join(RECORDS_DIR);
    let mut records = Vec::new();
    let mut problems = Vec::new();
    let Some(entries) = crate::safe_fs::read_dir(&dir).map_err(|e| Error::io(&dir, e))? else {
        return Ok((records, problems));
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    for path in paths {
        match read_record(&path) {
            Ok(record) => records.push((path, record)),
            Err(ReadError::Missing) => {}
            Err(ReadError::Bad(problem)) => problems.push((path, problem)),
        }
    }
    Ok((records, problems))
}

fn no_record(task: &str) -> Error {
    Error::usage(
        format!("no worktree was created for task `{task}` by `git swarm worktree create`"),
        "`git swarm worktree list` shows the task worktrees",
    )
}

/// Creates `task`'s worktree and branch at `base` (else the handoff's
/// base, else `HEAD`), and remembers them.
pub fn create(repo: &Repo, task: &str, base: Option<&str>) -> Result<Created> {
    check_task(task)?;
    let branch = branch_name(task);
    ok(
        git(repo, &["check-ref-format", &format!("refs/heads/{branch}")])?,
        &format!("`{branch}` is not a valid branch name"),
    )?;
    let record_file = record_path(repo, task);
    if record_file.exists() {
        return Err(Error::usage(
            format!(
                "a worktree for task `{task}` was already created ({})",
                record_file.display()
            ),
            format!(
                "merge it with `git swarm worktree merge {task}`, remove it with `git swarm worktree abort {task}`, or `git swarm worktree prune` if its folder is gone"
            ),
        ));
    }
    if branch_tip(repo, &branch)?.is_some() {
        return Err(Error::usage(
            format!("the branch `{branch}` exists already"),
            format!(
                "git-swarm never reuses a branch it did not create: rename or delete it (`git branch -m {branch} NEW`)"
            ),
        ));
    }
    let from_handoff = handoff_base(repo, task)?;
    let wanted = base.or(from_handoff.as_deref()).unwrap_or("HEAD");
    let Some(base_commit) = commit_of(repo, wanted)? else {
        return Err(Error::usage(
            format!("`{wanted}` does not name a commit"),
            "pass --base REV with a commit, branch or tag (`git rev-parse REV` must work); a new repository needs a first commit",
        ));
    };
    if let (Some(given), Some(contract)) = (base, &from_handoff)
        && commit_of(repo, contract)?.as_deref() != Some(base_commit.as_str())
    {
        return Err(Error::usage(
            format!("--base {given} is not the base of the handoff for `{task}` ({contract})"),
            "leave out --base: the worktree starts at the handoff's base",
        ));
    }
    let main = main_worktree(repo)?;
    let configured = repo.config_path(DIR_KEY)?;
    // Symlinks in the existing part resolved, then the `..` after a missing
    // folder on the text: the path git will create, as the system sees it.
    let path = lexical(&resolve_existing_prefix(&worktree_path(
        &main,
        task,
        configured.as_deref(),
    )));
    if path.starts_with(&main) || path.starts_with(&repo.root) {
        return Err(Error::usage(
            format!("{} is inside the repository's working tree", path.display()),
            format!(
                "set `git config {DIR_KEY}` to a path outside it, e.g. `../{{repo}}.worktrees/{{task}}`"
            ),
        ));
    }
    if std::fs::symlink_metadata(&path).is_ok() {
        return Err(Error::usage(
            format!("{} exists already", path.display()),
            "move it away, or choose another place with `git config swarm.worktreeDir PATH`",
        ));
    }
    let marker = format!(
        "git swarm worktree create {task} {}-{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
        std::process::id()
    );
    let record = Record {
        task: task.to_owned(),
        path: path.clone(),
        branch: branch.clone(),
        base: base_commit.clone(),
        created: Some(marker.clone()),
    };
    // The record first: a worktree left by a crash is then still one that
    // `abort` and `prune` know about.
    let mut bytes =
        serde_json::to_vec_pretty(&record).map_err(|e| Error::io(&record_file, e.into()))?;
    bytes.push(b'\n');
    let records_root = repo.common_dir.join("swarm");
    crate::safe_fs::create_new(
        &records_root,
        &record_file,
        &bytes,
        &record_file.display().to_string(),
        task,
    )?;
    // The branch is made first, with the record's marker as its first
    // reflog message (the empty old value: only if it does not exist).
    let full = format!("refs/heads/{branch}");
    let made = git(
        repo,
        &[
            "update-ref",
            "--create-reflog",
            "-m",
            &marker,
            &full,
            &base_commit,
            "",
        ],
    )
    .and_then(|out| ok(out, "creating the task branch"));
    if let Err(e) = made {
        let _ = std::fs::remove_file(&record_file);
        return Err(e);
    }
    let added = git_os(
        repo,
        &[
            OsStr::new("worktree"),
            OsStr::new("add"),
            OsStr::new("--quiet"),
            path.as_os_str(),
            OsStr::new(&branch),
        ],
    )
    .and_then(|out| ok(out, "`git worktree add` failed"));
    let marked = added.and_then(|_| mark_created(repo, &path, &marker));
    if let Err(e) = marked {
        let _ = git_os(
            repo,
            &[
                OsStr::new("worktree"),
                OsStr::new("remove"),
                OsStr::new("--force"),
                path.as_os_str(),
            ],
        );
        let _ = git(repo, &["update-ref", "-d", &full, &base_commit]);
        let _ = std::fs::remove_file(&record_file);
        return Err(e);
    }
    let record = Record {
        path: canonical(&path),
        ..record
    };
    let warnings = hooks_left_behind(repo, &record.path);
    Ok(Created { record, warnings })
}

/// Writes `marker` into the administrative folder git made for the
/// worktree at `path` (see [`CREATED_MARK`]).
fn mark_created(repo: &Repo, path: &Path, marker: &str) -> Result<()> {
    let Some(admin) = admin_dir(repo, path) else {
        return Err(Error::usage(
            format!(
                "git made the worktree {} but git-swarm cannot find git's folder for it",
                path.display()
            ),
            "it was removed again; report this with the output of `git worktree list --porcelain`",
        ));
    };
    let file = admin.join(CREATED_MARK);
    std::fs::write(&file, marker).map_err(|e| Error::io(&file, e))
}

/// git's administrative folder for the worktree registered at `path`
/// (`<common>/worktrees/<name>/`, whose `gitdir` file names `<path>/.git`),
/// found from the git side: it is there even when the folder was deleted.
fn admin_dir(repo: &Repo, path: &Path) -> Option<PathBuf> {
    let root = repo.common_dir.join("worktrees");
    let path = canonical(path);
    let listing = crate::safe_fs::read_dir(&root).ok()??;
    for entry in listing.flatten() {
        let admin = entry.path();
        let Ok(bytes) = crate::safe_fs::read(&admin.join("gitdir"), RECORD_MAX) else {
            continue;
        };
        let Ok(text) = std::str::from_utf8(&bytes) else {
            continue;
        };
        let dotgit = Path::new(text.trim_end_matches(['\n', '\r']));
        if dotgit.file_name() == Some(OsStr::new(".git"))
            && dotgit.parent().map(canonical) == Some(path.clone())
        {
            return Some(admin);
        }
    }
    None
}

/// Whether the worktree at `path` is the one `create` made for `record`:
/// git's folder for it holds the record's marker.
fn created_here(repo: &Repo, path: &Path, record: &Record) -> bool {
    let Some(marker) = record.created.as_deref() else {
        return false;
    };
    admin_dir(repo, path)
        .and_then(|admin| crate::safe_fs::read(&admin.join(CREATED_MARK), RECORD_MAX).ok())
        .is_some_and(|bytes| bytes == marker.as_bytes())
}

/// What `create` made, and what the user should know about it.
#[derive(Debug, Clone)]
pub struct Created {
    pub record: Record,
    pub warnings: Vec<Warning>,
}

/// git-swarm's hooks, installed for `repo`, that git will not run in the
/// new worktree: a relative `core.hooksPath` is relative to each
/// worktree's top, so a hooks folder that is not committed is not there.
fn hooks_left_behind(repo: &Repo, worktree: &Path) -> Vec<Warning> {
    let ours = |dir: &Path| {
        crate::hooks::status(dir).is_ok_and(|hooks| {
            hooks.iter().any(|h| {
                matches!(
                    h.state,
                    crate::hooks::HookState::Installed | crate::hooks::HookState::Wrapped
                )
            })
        })
    };
    let Ok(main_dir) = crate::hooks::hooks_dir(repo) else {
        return Vec::new();
    };
    let Ok(task_repo) = Repo::discover(worktree, &crate::store::GitEnv::default()) else {
        return Vec::new();
    };
    match crate::hooks::hooks_dir(&task_repo) {
        Ok(task_dir) if task_dir != main_dir && ours(&main_dir) && !ours(&task_dir) => {
            vec![Warning::new(
                format!(
                    "git-swarm's hooks are installed in {}, but git runs the new worktree's hooks from {}, where they are not",
                    main_dir.display(),
                    task_dir.display()
                ),
                Some(
                    "core.hooksPath is relative to each worktree: commit the hooks folder, set core.hooksPath to an absolute path, or run `git swarm hooks install` in the new worktree",
                ),
            )]
        }
        _ => Vec::new(),
    }
}

/// `path` with its longest existing prefix resolved (the rest as written),
/// so that a path inside the repository is recognised through a symlink.
fn resolve_existing_prefix(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    while !existing.exists() {
        match (existing.file_name(), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_os_string());
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
    let mut out = canonical(&existing);
    for part in rest.iter().rev() {
        out.push(part);
    }
    out
}

/// A commit `merge` picked: the task's commit and the new one.
#[derive(Debug, Clone, Serialize)]
pub struct Picked {
    pub from: String,
    pub to: String,
    pub subject: String,
}

/// What `merge` did.
#[derive(Debug, Clone)]
pub enum Merged {
    /// Every commit picked, oldest first, onto `onto` (a branch, or `HEAD` when detached).
    /// `already`: commits left out because the branch has their change.
    Picked {
        onto: String,
        picks: Vec<Picked>,
        already: usize,
    },
    /// No commit to pick: none since the base, or `already` on the branch.
    Nothing { branch: String, already: usize },
    /// A pick stopped; everything was put back as it was.
    Conflict {
        commit: String,
        subject: String,
        files: Vec<String>,
        /// What git said, for a stop that was not a content conflict.
        git_said: String,
        rolled_back: usize,
    },
}

/// Why `merge` refused to start: a sentence and what to do.
fn refuse(message: String, hint: &str) -> Error {
    Error::usage(message, hint)
}

fn listing(paths: &[String]) -> String {
    let shown: Vec<&str> = paths.iter().take(10).map(String::as_str).collect();
    let more = paths.len().saturating_sub(shown.len());
    let mut s = shown.join(", ");
    if more > 0 {
        s.push_str(&format!(" and {more} more"));
    }
    s
}

/// What `abort` removed.
#[derive(Debug, Clone)]
pub struct Aborted {
    pub record: Record,
    /// The worktree was there and was removed.
    pub removed_worktree: bool,
    /// The branch was deleted; its last commit, to restore it by.
    pub deleted_branch: Option<String>,
    /// Why the branch was left alone.
    pub kept_branch: Option<String>,
}

/// Removes `task`'s worktree and the branch `create` made, and nothing
/// else; a worktree with uncommitted changes, or a branch with commits no
/// other branch has, only with `force`. A worktree at the recorded path
/// that `create` did not make (see [`CREATED_MARK`]) is refused, forced or
/// not: nothing is removed.
pub fn abort(repo: &Repo, task: &str, force: bool) -> Result<Aborted> {
    let record = load(repo, task)?.ok_or_else(|| no_record(task))?;
    let worktrees = registered(repo)?;
    let path = canonical(&record.path);
    if path == repo.root {
        return Err(refuse(
            format!("this is the task's own worktree ({})", repo.root.display()),
            "run `git swarm worktree abort` from another worktree (the main one)",
        ));
    }
    let expected = branch_name(task);
    let at_path = worktrees.iter().find(|w| w.path == path);
    // Only the worktree `create` made is removed: one the user put at the
    // same path since (on any branch, the task's too) is theirs.
    let ours = match at_path {
        Some(w)
            if w.branch.as_deref() == Some(expected.as_str())
                && record.branch == expected
                && created_here(repo, &path, &record) =>
        {
            true
        }
        Some(w) => {
            let on = w
                .branch
                .as_deref()
                .map_or_else(|| "a detached HEAD".to_owned(), |b| format!("`{b}`"));
            return Err(refuse(
                format!(
                    "the worktree at {} (on {on}) is not the one `git swarm worktree create {task}` made: nothing was removed",
                    path.display()
                ),
                &format!(
                    "it is left as it is; move it away (`git worktree move {} NEW-PATH`) and run `git swarm worktree abort {task}` again to drop the task's branch and record",
                    path.display()
                ),
            ));
        }
        None => false,
    };
    let (tip, kept_branch) = branch_verdict(repo, &record, &expected, &path, &worktrees)?;
    if ours && path.is_dir() && !force {
        let dirty = z_list(&ok(
            git_in(
                &path,
                &["status".as_ref(), "--porcelain=v1".as_ref(), "-z".as_ref()],
            )?,
            "reading the task worktree's status",
        )?);
        if !dirty.is_empty() {
            let paths: Vec<String> = dirty
                .iter()
                .filter(|e| e.len() > 3)
                .map(|e| e[3..].to_owned())
                .collect();
            return Err(refuse(
                format!(
                    "the worktree {} has uncommitted changes: {}",
                    path.display(),
                    listing(&paths)
                ),
                "commit them on the task branch, or pass --force to throw them away",
            ));
        }
    }
    if let (Some(tip), None, false) = (&tip, &kept_branch, force) {
        let unmerged = unmerged(repo, &record, tip)?;
        if let Some(newest) = unmerged.first() {
            return Err(refuse(
                format!(
                    "`{}` has {} commit{} no other branch has (the newest {})",
                    record.branch,
                    unmerged.len(),
                    if unmerged.len() == 1 { "" } else { "s" },
                    short(newest)
                ),
                &format!(
                    "merge them first (`git swarm worktree merge {task}`), or pass --force to delete them (the command prints the commit that restores them)"
                ),
            ));
        }
    }
    let mut removed_worktree = false;
    if ours && !path.is_dir() {
        // Deleted by hand: only this worktree's entry is dropped from git's
        // list (`git worktree prune` would drop every missing one).
        let args: Vec<&OsStr> = vec![
            "worktree".as_ref(),
            "remove".as_ref(),
            "--force".as_ref(),
            path.as_os_str(),
        ];
        ok(git_os(repo, &args)?, "`git worktree remove` failed")?;
    } else if ours {
        let mut args: Vec<&OsStr> = vec!["worktree".as_ref(), "remove".as_ref()];
        if force {
            args.push("--force".as_ref());
        }
        args.push(path.as_os_str());
        ok(git_os(repo, &args)?, "`git worktree remove` failed")?;
        removed_worktree = true;
    }
    let mut deleted_branch = None;
    if let (Some(tip), None) = (tip, &kept_branch) {
        // The old value guards against the branch moving meanwhile.
        ok(
            git(
                repo,
                &[
                    "update-ref",
                    "-d",
                    &format!("refs/heads/{}", record.branch),
                    &tip,
                ],
            )?,
            "deleting the task branch",
        )?;
        deleted_branch = Some(tip);
    }
    let file = record_path(repo, task);
    std::fs::remove_file(&file).map_err(|e| Error::io(&file, e))?;
    Ok(Aborted {
        record,
        removed_worktree,
        deleted_branch,
        kept_branch,
    })
}

/// The task branch's tip, and why it must be kept if it must: only the
/// branch `create` made (its name, descending from the base, its first
/// reflog entry the record's marker) and checked out nowhere else.
fn branch_verdict(
    repo: &Repo,
    record: &Record,
    expected: &str,
    path: &Path,
    worktrees: &[git::Registered],
) -> Result<(Option<String>, Option<String>)> {
    if record.branch != expected {
        return Ok((
            None,
            Some(format!(
                "the record names `{}`, not `{expected}`",
                record.branch
            )),
        ));
    }
    let Some(tip) = branch_tip(repo, &record.branch)? else {
        return Ok((None, Some("it no longer exists".into())));
    };
    if let Some(other) = worktrees
        .iter()
        .find(|w| w.path != path && w.branch.as_deref() == Some(record.branch.as_str()))
    {
        return Ok((
            None,
            Some(format!("it is checked out in {}", other.path.display())),
        ));
    }
    let descends = git(repo, &["merge-base", "--is-ancestor", &record.base, &tip])?;
    if !descends.status.success() {
        return Ok((
            None,
            Some(format!(
                "it does not descend from the base {}: not the branch `worktree create` made",
                short(&record.base)
            )),
        ));
    }
    if let Some(marker) = &record.created {
        let full = format!("refs/heads/{}", record.branch);
        let log = git(repo, &["reflog", "show", "--format=%gs", &full])?;
        let first = String::from_utf8_lossy(&log.stdout)
            .lines()
            .last()
            .map(str::to_owned);
        if first.as_deref() != Some(marker.as_str()) {
            return Ok((
                None,
                Some("its first reflog entry is not the one `worktree create` wrote: not the branch it made".into()),
            ));
        }
    }
    Ok((Some(tip), None))
}

/// The task's commits (newest first) whose change the current branch does
/// not have and that no other branch holds.
fn unmerged(repo: &Repo, record: &Record, tip: &str) -> Result<Vec<String>> {
    let not_base = format!("^{}", record.base);
    let lines = |out: String| -> Vec<String> { out.lines().map(str::to_owned).collect() };
    let missing_here = if commit_of(repo, "HEAD")?.is_some() {
        lines(ok(
            git(
                repo,
                &[
                    "rev-list",
                    "--cherry-pick",
                    "--right-only",
                    &format!("HEAD...{tip}"),
                    &not_base,
                ],
            )?,
            "listing the task's commits",
        )?)
    } else {
        lines(ok(
            git(repo, &["rev-list", tip, &not_base])?,
            "listing the task's commits",
        )?)
    };
    if missing_here.is_empty() {
        return Ok(missing_here);
    }
    // `--exclude` before `--branches` takes names without `refs/heads/`.
    let exclude = format!("--exclude={}", record.branch);
    let only_here = lines(ok(
        git(
            repo,
            &["rev-list", tip, &not_base, "--not", &exclude, "--branches"],
        )?,
        "listing the task's commits",
    )?);
    Ok(missing_here
        .into_iter()
        .filter(|c| only_here.contains(c))
        .collect())
}

/// A short commit id for messages.
pub fn short(oid: &str) -> &str {
    oid.get(..12).unwrap_or(oid)
}

/// One row of `list`.
#[derive(Debug, Clone, Serialize)]
pub struct Listed {
    pub task: String,
    pub path: PathBuf,
    pub branch: String,
    pub base: String,
    /// Whether git still has the worktree and its folder exists.
    pub present: bool,
    /// Commits on the branch since the base; none when the branch is gone.
    pub ahead: Option<u64>,
    /// Uncommitted changes (untracked files included); none when the worktree is gone.
    pub dirty: Option<bool>,
}

/// Every task worktree `create` made, and the records that could not be read.
pub fn list(repo: &Repo) -> Result<(Vec<Listed>, Vec<Problem>)> {
    let (records, problems) = load_all(repo)?;
    let worktrees = registered(repo)?;
    let mut rows = Vec::new();
    for (_, r) in records {
        let path = canonical(&r.path);
        let present = path.is_dir() && worktrees.iter().any(|w| w.path == path);
        let ahead = match branch_tip(repo, &r.branch)? {
            Some(tip) => ok(
                git(
                    repo,
                    &["rev-list", "--count", &format!("{}..{tip}", r.base)],
                )?,
                "counting the task's commits",
            )?
            .trim()
            .parse()
            .ok(),
            None => None,
        };
        let dirty = if present {
            let out = git_in(
                &path,
                &["status".as_ref(), "--porcelain=v1".as_ref(), "-z".as_ref()],
            )?;
            out.status.success().then_some(!out.stdout.is_empty())
        } else {
            None
        };
        rows.push(Listed {
            task: r.task,
            path,
            branch: r.branch,
            base: r.base,
            present,
            ahead,
            dirty,
        });
    }
    Ok((rows, problems.into_iter().map(|(_, p)| p).collect()))
}

/// Runs `git worktree prune`, then forgets the records whose worktree is
/// gone (their branches are kept: they may hold the only copy of work) and
/// the record files that cannot be read. Returns what was forgotten.
pub fn prune(repo: &Repo) -> Result<(Vec<Record>, Vec<Problem>)> {
    ok(
        git(repo, &["worktree", "prune"])?,
        "`git worktree prune` failed",
    )?;
    let (records, problems) = load_all(repo)?;
    let worktrees = registered(repo)?;
    let mut forgotten = Vec::new();
    for (file, r) in records {
        let path = canonical(&r.path);
        if !(path.is_dir() && worktrees.iter().any(|w| w.path == path)) {
            std::fs::remove_file(&file).map_err(|e| Error::io(&file, e))?;
            forgotten.push(r);
        }
    }
    for (file, _) in &problems {
        std::fs::remove_file(file).map_err(|e| Error::io(file, e))?;
    }
    Ok((forgotten, problems.into_iter().map(|(_, p)| p).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_path_sits_beside_the_main_worktree() {
        let main = Path::new("/src/app");
        assert_eq!(
            worktree_path(main, "auth-login", None),
            Path::new("/src/app.worktrees/auth-login")
        );
        assert_eq!(
            worktree_path(main, "t1", Some(Path::new("wt/{repo}-{task}"))),
            Path::new("/src/wt/app-t1")
        );
        assert_eq!(
            worktree_path(main, "t1", Some(Path::new("/scratch/{repo}"))),
            Path::new("/scratch/app/t1")
        );
        assert_eq!(
            lexical(&worktree_path(
                main,
                "t1",
                Some(Path::new("gone/../app/./in/{task}"))
            )),
            Path::new("/src/app/in/t1")
        );
    }
}
