//! Git hooks: where git looks for them, and putting git-swarm's shims there
//! without losing anybody else's hook.
//!
//! A hook that is already in place is *moved aside* into `swarm-orig/` (see
//! [`kept`]) and the shim runs it first under its own name, rather than
//! having a marked block spliced into it: a rename keeps the user's file
//! byte for byte (and its mode, and a symlink stays the same symlink), works
//! whatever language the hook is written in, and uninstall is the rename
//! back. The shims (in `hooks/` at the project root, embedded here) are
//! recognised by their marker line, never by their name, so a hook we did
//! not write is never overwritten or removed.
//!
//! The CLI decides what to refuse (a hook framework in charge); this module
//! only looks at and changes the hooks directory.

use std::io::Write;
use std::path::{Component, Path, PathBuf};

use crate::error::{Error, Result};
use crate::safe_fs::is_executable;
use crate::store::Repo;

pub mod kept;

pub use kept::{KEPT_DIR, LEGACY_SUFFIX};

/// The hooks git-swarm installs, in the order it reports them.
pub const HOOKS: [&str; 4] = ["pre-commit", "pre-push", "post-merge", "post-checkout"];

/// Every hook git runs (githooks(5)), whether git-swarm has it or not: a
/// name that is none of these comes from a person or a script, never git.
pub const GIT_HOOKS: [&str; 28] = [
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-rebase",
    "post-checkout",
    "post-merge",
    "pre-push",
    "pre-receive",
    "update",
    "proc-receive",
    "post-receive",
    "post-update",
    "reference-transaction",
    "push-to-checkout",
    "pre-auto-gc",
    "post-rewrite",
    "sendemail-validate",
    "fsmonitor-watchman",
    "p4-changelist",
    "p4-prepare-changelist",
    "p4-post-changelist",
    "p4-pre-submit",
    "post-index-change",
];

/// Every shim has a line starting with this; later versions change the
/// `vN` after it, so an older shim is still recognised as ours.
pub const SHIM_MARKER: &str = "# git-swarm hook shim";

/// Set to `1`, skips git-swarm's part of every hook (the user's own hooks still run).
pub const SKIP_ENV: &str = "GIT_SWARM_SKIP";

/// Left in a hooks directory that `install` had to create, so that
/// `uninstall` removes it (and only it) again. Holds how many directory
/// levels were created.
const CREATED_MARKER: &str = ".git-swarm-created";

/// The shim for hook `name`, as installed.
pub fn shim(name: &str) -> Option<&'static str> {
    match name {
        "pre-commit" => Some(include_str!("../hooks/pre-commit")),
        "pre-push" => Some(include_str!("../hooks/pre-push")),
        "post-merge" => Some(include_str!("../hooks/post-merge")),
        "post-checkout" => Some(include_str!("../hooks/post-checkout")),
        _ => None,
    }
}

/// `<common git dir>/hooks`: where git looks when `core.hooksPath` is unset
/// (linked worktrees share it).
pub fn default_hooks_dir(repo: &Repo) -> PathBuf {
    repo.common_dir.join("hooks")
}

/// The directory git runs hooks from, found as git finds it: `core.hooksPath`
/// (with `~` expanded; a relative value is relative to the work tree root,
/// where git runs hooks), else [`default_hooks_dir`]. The directory may not
/// exist yet.
pub fn hooks_dir(repo: &Repo) -> Result<PathBuf> {
    match repo.config_path("core.hooksPath")? {
        Some(configured) if !configured.as_os_str().is_empty() => {
            Ok(resolve(&repo.root.join(configured)))
        }
        _ => Ok(default_hooks_dir(repo)),
    }
}

/// Whether `dir` is inside `repo` (its work tree, the main work tree, or
/// the git dir the worktrees share), so that only this repository runs the
/// hooks in it. A directory elsewhere, named by `core.hooksPath`, may be
/// shared: every repository configured with it runs its hooks. Both paths
/// are as [`hooks_dir`] and [`Repo::discover`] give them, symlinks resolved.
pub fn is_in_repository(repo: &Repo, dir: &Path) -> bool {
    let main_worktree = repo
        .common_dir
        .file_name()
        .filter(|name| *name == ".git")
        .and(repo.common_dir.parent());
    [
        Some(repo.root.as_path()),
        Some(repo.common_dir.as_path()),
        main_worktree,
    ]
    .into_iter()
    .flatten()
    .any(|top| dir.starts_with(top))
}

/// `path` without `.`/`..` and symlinks where it exists, so that the same
/// directory is always reported the same way.
fn resolve(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(canonical) = std::fs::canonicalize(&existing) {
            let mut out = canonical;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return lexical(&out);
        }
        match (existing.file_name(), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_os_string());
                existing = parent.to_path_buf();
            }
            _ => return lexical(path),
        }
    }
}

/// Drops `.` and resolves `..` textually (for the part that does not exist yet).
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// A hook manager that owns the hooks of a repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, strum::IntoStaticStr)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum Framework {
    Husky,
    Lefthook,
    PreCommit,
}

impl Framework {
    pub fn name(self) -> &'static str {
        self.into()
    }
}

/// A framework found, and what gave it away.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Detected {
    pub framework: Framework,
    /// One entry per sign, e.g. `lefthook.yml` or `hook pre-commit was written by husky`.
    pub evidence: Vec<String>,
}

const LEFTHOOK_CONFIGS: [&str; 4] = [
    "lefthook.yml",
    ".lefthook.yml",
    "lefthook.yaml",
    ".lefthook.yaml",
];

/// Text that each framework writes into the hooks it installs.
const HOOK_SIGNATURES: [(Framework, &str); 4] = [
    (Framework::PreCommit, "File generated by pre-commit"),
    (Framework::Husky, "husky"),
    (Framework::Lefthook, "lefthook"),
    (Framework::Lefthook, "LEFTHOOK"),
];

/// Husky, lefthook or the pre-commit framework, by their config files in
/// the work tree, by `core.hooksPath` pointing into `.husky`, and by the
/// hooks they wrote into `hooks_dir` (kept aside by us or not).
pub fn detect_frameworks(repo: &Repo, hooks_dir: &Path) -> Vec<Detected> {
    let mut found: Vec<Detected> = Vec::new();
    let mut note = |framework: Framework, evidence: String| match found
        .iter_mut()
        .find(|d| d.framework == framework)
    {
        Some(d) => {
            if !d.evidence.contains(&evidence) {
                d.evidence.push(evidence);
            }
        }
        None => found.push(Detected {
            framework,
            evidence: vec![evidence],
        }),
    };
    if repo.root.join(".husky").is_dir() {
        note(Framework::Husky, ".husky/".into());
    }
    if hooks_dir.components().any(|c| c.as_os_str() == ".husky") {
        note(Framework::Husky, "core.hooksPath points into .husky".into());
    }
    for name in LEFTHOOK_CONFIGS {
        if repo.root.join(name).is_file() {
            note(Framework::Lefthook, name.into());
        }
    }
    if repo.root.join(".pre-commit-config.yaml").is_file() {
        note(Framework::PreCommit, ".pre-commit-config.yaml".into());
    }
    for hook in HOOKS {
        let kept = [
            format!("{KEPT_DIR}/{hook}"),
            format!("{hook}{LEGACY_SUFFIX}"),
        ];
        for file in std::iter::once(hook.to_owned()).chain(kept) {
            let Ok(bytes) = std::fs::read(hooks_dir.join(&file)) else {
                continue;
            };
            if is_shim(&bytes) {
                continue;
            }
            for (framework, signature) in HOOK_SIGNATURES {
                if memchr::memmem::find(&bytes, signature.as_bytes()).is_some() {
                    note(
                        framework,
                        format!("hook {file} was written by {}", framework.name()),
                    );
                }
            }
        }
    }
    found
}

fn is_shim(bytes: &[u8]) -> bool {
    memchr::memmem::find(bytes, SHIM_MARKER.as_bytes()).is_some()
}

/// What is at a hook's path.
enum Entry {
    Missing,
    /// Our shim; `current` when it is this version's and executable.
    Ours {
        current: bool,
    },
    /// Someone else's file or symlink.
    Foreign,
    /// A directory or other thing that is not a hook.
    Other,
}

fn inspect(path: &Path, name: &str) -> Result<Entry> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Entry::Missing),
        Err(e) => return Err(Error::io(path, e)),
    };
    if meta.file_type().is_symlink() {
        return Ok(Entry::Foreign);
    }
    if !meta.is_file() {
        return Ok(Entry::Other);
    }
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    if !is_shim(&bytes) {
        return Ok(Entry::Foreign);
    }
    let current = shim(name).is_some_and(|s| s.as_bytes() == bytes) && is_executable(&meta);
    Ok(Entry::Ours { current })
}

fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// What `install` did with one hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Installed {
    /// No hook was there; the shim is.
    Added,
    /// The hook that was there is now `original`, and the shim runs it.
    Wrapped { original: PathBuf },
    /// An older shim of ours was replaced by this version's.
    Updated,
    /// This version's shim was already there; nothing changed.
    Unchanged,
    /// Left alone, for `reason`.
    Refused { reason: String, hint: String },
}

#[derive(Debug, Clone)]
pub struct InstallReport {
    pub dir: PathBuf,
    /// The hooks directory did not exist and was created.
    pub created_dir: bool,
    /// A link that runs a kept symlink was made or repaired.
    pub relinked: bool,
    pub hooks: Vec<(&'static str, Installed)>,
}

impl InstallReport {
    pub fn changed(&self) -> bool {
        self.created_dir
            || self.relinked
            || self
                .hooks
                .iter()
                .any(|(_, h)| !matches!(h, Installed::Unchanged | Installed::Refused { .. }))
    }

    pub fn refused(&self) -> bool {
        self.hooks
            .iter()
            .any(|(_, h)| matches!(h, Installed::Refused { .. }))
    }
}

/// Puts a shim for every hook in [`HOOKS`] into `dir`, creating `dir` if
/// needed. A hook someone else wrote is kept in `swarm-orig/` and run by
/// the shim under its own name; a hook that cannot be moved aside without
/// losing something is left alone and reported. Running it again changes
/// nothing.
pub fn install(dir: &Path) -> Result<InstallReport> {
    let created_dir = create_dir(dir)?;
    let mut hooks = Vec::new();
    for name in HOOKS {
        hooks.push((name, install_one(dir, name)?));
    }
    let relinked = kept::link_runnable(dir)?;
    Ok(InstallReport {
        dir: dir.to_path_buf(),
        created_dir,
        relinked,
        hooks,
    })
}

fn create_dir(dir: &Path) -> Result<bool> {
    if dir.is_dir() {
        return Ok(false);
    }
    let levels = dir
        .ancestors()
        .take_while(|a| !a.as_os_str().is_empty() && !exists(a))
        .count();
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let marker = dir.join(CREATED_MARKER);
    let text = format!(
        "# `git swarm hooks install` created this directory ({levels} level(s) deep);\n\
         # `git swarm hooks uninstall` removes it again once nothing else is in it.\n\
         levels={levels}\n"
    );
    std::fs::write(&marker, text).map_err(|e| Error::io(&marker, e))?;
    Ok(true)
}

fn install_one(dir: &Path, name: &'static str) -> Result<Installed> {
    let path = dir.join(name);
    let kept_name = format!("{KEPT_DIR}/{name}");
    match inspect(&path, name)? {
        Entry::Ours { current } => {
            // An earlier version kept the hook beside the shim, where it ran
            // under another name: move it into this version's layout.
            let legacy = kept::legacy_path(dir, name);
            let legacy_name = format!("{name}{LEGACY_SUFFIX}");
            let migrate = exists(&legacy);
            if migrate && kept::in_layout(dir, name) {
                return Ok(Installed::Refused {
                    reason: format!("{name} has two kept hooks, {legacy_name} and {kept_name}"),
                    hint: format!(
                        "run `git swarm hooks uninstall`, keep the one you want as {name}, remove the other, then install again"
                    ),
                });
            }
            if migrate {
                kept::keep(dir, name, &legacy)?;
            }
            if !current && let Err(e) = write_shim(&path, name, true) {
                if migrate {
                    let _ = kept::restore(dir, name, &legacy);
                }
                return Err(e);
            }
            Ok(if current && !migrate {
                Installed::Unchanged
            } else {
                Installed::Updated
            })
        }
        Entry::Missing => match kept::original(dir, name) {
            Some(stray) => {
                let stray = shown_in(dir, &stray);
                Ok(Installed::Refused {
                    reason: format!("{stray} is there without git-swarm's {name} shim"),
                    hint: format!(
                        "move {stray} back to {name} if it is still wanted (or delete it), then install again"
                    ),
                })
            }
            None => {
                write_shim(&path, name, false)?;
                Ok(Installed::Added)
            }
        },
        Entry::Other => Ok(Installed::Refused {
            reason: format!("{name} is not a file"),
            hint: format!("move {name} out of the hooks directory, then install again"),
        }),
        Entry::Foreign => {
            if let Some(in_the_way) = kept::original(dir, name) {
                let in_the_way = shown_in(dir, &in_the_way);
                return Ok(Installed::Refused {
                    reason: format!(
                        "{name} is not git-swarm's, and {in_the_way} (an earlier hook kept aside) is in the way"
                    ),
                    hint: format!(
                        "keep the one you want as {name}, remove {in_the_way}, then install again"
                    ),
                });
            }
            kept::keep(dir, name, &path)?;
            if let Err(e) = write_shim(&path, name, false) {
                // Put the user's hook back rather than leave no hook at all.
                let _ = kept::restore(dir, name, &path);
                return Err(e);
            }
            Ok(Installed::Wrapped {
                original: dir.join(kept_name),
            })
        }
    }
}

/// `path` relative to the hooks directory `dir`, for messages.
pub fn shown_in(dir: &Path, path: &Path) -> String {
    path.strip_prefix(dir).unwrap_or(path).display().to_string()
}

/// Writes the shim whole or not at all (a temporary file renamed into place);
/// only replaces an existing file when `replace` (an older shim of ours).
fn write_shim(path: &Path, name: &str, replace: bool) -> Result<()> {
    let text = shim(name).ok_or_else(|| {
        Error::usage(
            format!("git-swarm has no `{name}` hook"),
            format!("the hooks are {}", HOOKS.join(", ")),
        )
    })?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".git-swarm-tmp-")
        .tempfile_in(dir)
        .map_err(|e| Error::io(dir, e))?;
    tmp.write_all(text.as_bytes())
        .map_err(|e| Error::io(tmp.path(), e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::Permissions::from_mode(0o755);
        std::fs::set_permissions(tmp.path(), mode).map_err(|e| Error::io(tmp.path(), e))?;
    }
    let persisted = if replace {
        tmp.persist(path).map(drop)
    } else {
        tmp.persist_noclobber(path).map(drop)
    };
    persisted.map_err(|e| Error::io(path, e.error))
}

/// What `uninstall` did with one hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Uninstalled {
    /// The shim was removed; there was no earlier hook.
    Removed,
    /// The shim was removed and the earlier hook is back under its name.
    Restored { original: PathBuf },
    /// No shim of ours was there; nothing changed.
    NotInstalled,
    /// No shim of ours was there, but a kept hook is (in `swarm-orig/`, or
    /// an earlier version's `<name>.swarm-orig`); nothing changed. `hook_present` when something else is at `<name>`.
    StrayOriginal {
        original: PathBuf,
        hook_present: bool,
    },
}

#[derive(Debug, Clone)]
pub struct UninstallReport {
    pub dir: PathBuf,
    pub hooks: Vec<(&'static str, Uninstalled)>,
    /// The hooks directory (and parents) `install` had created, now removed.
    pub removed_dirs: Vec<PathBuf>,
}

/// Removes git-swarm's shims from `dir`, puts the hook each one kept aside
/// back under its name, and removes the directory if `install` created it
/// and it is now empty: `dir` is left as it was before `install`. Nothing
/// but our shims (and what they kept aside) is touched.
pub fn uninstall(dir: &Path) -> Result<UninstallReport> {
    let mut hooks = Vec::new();
    if dir.is_dir() {
        for name in HOOKS {
            hooks.push((name, uninstall_one(dir, name)?));
        }
        kept::remove_dir_if_empty(dir);
    } else {
        hooks.extend(HOOKS.map(|name| (name, Uninstalled::NotInstalled)));
    }
    let removed_dirs = remove_created_dir(dir)?;
    Ok(UninstallReport {
        dir: dir.to_path_buf(),
        hooks,
        removed_dirs,
    })
}

/// Only where our shim is does uninstall touch anything: a kept hook is
/// put back in its place, and nowhere else. Without the shim there is no
/// telling whether install ever kept that file aside (it may have left the
/// hook alone, or never run), and renaming it would turn on a hook that was
/// off.
fn uninstall_one(dir: &Path, name: &'static str) -> Result<Uninstalled> {
    let path = dir.join(name);
    match inspect(&path, name)? {
        Entry::Ours { .. } => {
            std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
            Ok(match kept::restore(dir, name, &path)? {
                Some(original) => Uninstalled::Restored { original },
                None => Uninstalled::Removed,
            })
        }
        other => Ok(match kept::original(dir, name) {
            Some(original) => Uninstalled::StrayOriginal {
                original,
                hook_present: !matches!(other, Entry::Missing),
            },
            None => Uninstalled::NotInstalled,
        }),
    }
}

fn remove_created_dir(dir: &Path) -> Result<Vec<PathBuf>> {
    let marker = dir.join(CREATED_MARKER);
    let text = match std::fs::read_to_string(&marker) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(&marker, e)),
    };
    let levels = text
        .lines()
        .find_map(|l| l.strip_prefix("levels="))
        .and_then(|n| n.trim().parse::<usize>().ok())
        .unwrap_or(1);
    std::fs::remove_file(&marker).map_err(|e| Error::io(&marker, e))?;
    let mut removed = Vec::new();
    for level in dir.ancestors().take(levels) {
        // Fails when something else is in it: then it, and its parents, stay.
        if std::fs::remove_dir(level).is_err() {
            break;
        }
        removed.push(level.to_path_buf());
    }
    Ok(removed)
}

/// The state of one hook, for `status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HookState {
    /// Our shim, and no earlier hook.
    Installed,
    /// Our shim, running the earlier hook kept in `swarm-orig/`.
    Wrapped,
    /// No hook.
    Absent,
    /// A hook git-swarm did not write, which does not call git-swarm.
    Foreign,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HookStatus {
    pub name: &'static str,
    pub state: HookState,
    /// For our shim: is it this version's, and executable? (`install` updates it.)
    pub current: bool,
    /// A kept hook is there although no shim of ours is.
    pub stray_original: bool,
    /// Where the earlier hook is kept, relative to the hooks directory
    /// (`swarm-orig/pre-commit`; `pre-commit.swarm-orig` from an earlier
    /// version, which `install` moves).
    pub original: Option<String>,
}

/// What is installed in `dir`, hook by hook.
pub fn status(dir: &Path) -> Result<Vec<HookStatus>> {
    HOOKS
        .iter()
        .map(|&name| {
            let original = kept::original(dir, name);
            let kept = original.is_some();
            let (state, current) = match inspect(&dir.join(name), name)? {
                Entry::Ours { current } if kept => (HookState::Wrapped, current),
                Entry::Ours { current } => (HookState::Installed, current),
                Entry::Missing => (HookState::Absent, false),
                Entry::Foreign | Entry::Other => (HookState::Foreign, false),
            };
            let ours = matches!(state, HookState::Installed | HookState::Wrapped);
            Ok(HookStatus {
                name,
                state,
                current,
                stray_original: kept && !ours,
                original: original.map(|p| shown_in(dir, &p)),
            })
        })
        .collect()
}

/// One line git writes on a pre-push hook's stdin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushUpdate {
    /// `refs/heads/topic`, or `(delete)` for a deletion.
    pub local_ref: String,
    /// All zeros for a deletion.
    pub local_oid: gix::ObjectId,
    pub remote_ref: String,
    /// All zeros when the remote does not have `remote_ref` yet (a new branch).
    pub remote_oid: gix::ObjectId,
}

impl PushUpdate {
    pub fn is_deletion(&self) -> bool {
        self.local_oid.is_null()
    }

    pub fn is_new(&self) -> bool {
        self.remote_oid.is_null()
    }
}

/// Parses a pre-push hook's stdin: `<local ref> <local oid> <remote ref>
/// <remote oid>` per line.
pub fn parse_push_updates(stdin: &[u8]) -> Result<Vec<PushUpdate>> {
    let text = String::from_utf8_lossy(stdin);
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            let bad = |what: &str| {
                Error::usage(
                    format!(
                        "pre-push input line {}: {what}: `{}`",
                        i + 1,
                        line.escape_debug()
                    ),
                    "git writes `<local ref> <local oid> <remote ref> <remote oid>` per line",
                )
            };
            let fields: Vec<&str> = line.split(' ').collect();
            let [local_ref, local_oid, remote_ref, remote_oid] = fields[..] else {
                return Err(bad("expected 4 fields"));
            };
            let oid = |hex: &str| {
                gix::ObjectId::from_hex(hex.as_bytes()).map_err(|_| bad("not an object id"))
            };
            Ok(PushUpdate {
                local_ref: local_ref.to_owned(),
                local_oid: oid(local_oid)?,
                remote_ref: remote_ref.to_owned(),
                remote_oid: oid(remote_oid)?,
            })
        })
        .collect()
}

/// The changes a pre-push hook checks for one pushed ref: nothing for a
/// deletion; otherwise each pushed commit against its first parent, oldest
/// first. The pushed commits are those of `local` that the remote's old tip
/// does not have (for an update the clone can see) or, for a new ref (or
/// a remote tip this clone lacks), that are on no remote-tracking ref.
/// Checking commits one by one, not one diff of the range's ends, sees a
/// line that one pushed commit adds and a later one removes: it would still
/// reach the remote's history.
///
/// Either side may be an annotated tag rather than a commit (`git push
/// origin v1.0`, `--follow-tags`, a tag moved with `-f`): it stands for the
/// commit it points at. A tag of a tree or a blob brings no commits, so
/// there is nothing to check for it.
pub fn push_selections(
    repo: &gix::Repository,
    update: &PushUpdate,
) -> crate::Result<Vec<crate::change::Selection>> {
    use crate::change::Selection;
    if update.is_deletion() {
        return Ok(Vec::new());
    }
    let Some(local) = commit_of(repo, update.local_oid).map_err(|e| {
        crate::Error::git(format!("reading the pushed object {}", update.local_oid), e)
    })?
    else {
        return Ok(Vec::new());
    };
    // A remote tip this clone cannot read as a commit says nothing about
    // what the remote has: fall back to the remote-tracking refs.
    let remote = if update.is_new() {
        None
    } else {
        commit_of(repo, update.remote_oid).ok().flatten()
    };
    let hidden: Vec<gix::ObjectId> = match remote {
        Some(remote) => vec![remote],
        None => {
            let mut tips = Vec::new();
            let refs = repo
                .references()
                .map_err(|e| crate::Error::git("listing refs", e))?;
            for r in refs
                .remote_branches()
                .map_err(|e| crate::Error::git("listing remote refs", e))?
            {
                let Ok(mut r) = r else { continue };
                if let Ok(id) = r.peel_to_id()
                    && let Ok(Some(commit)) = commit_of(repo, id.detach())
                {
                    tips.push(commit);
                }
            }
            tips
        }
    };
    let walk = repo
        .rev_walk([local])
        .with_hidden(hidden)
        .all()
        .map_err(|e| crate::Error::git("walking the pushed commits", e))?;
    let mut commits = Vec::new();
    for info in walk {
        let info = info.map_err(|e| crate::Error::git("walking the pushed commits", e))?;
        commits.push(Selection::Commit(info.id.to_string()));
    }
    commits.reverse();
    Ok(commits)
}

/// The commit `id` stands for: itself, or the commit an annotated tag (or a
/// chain of them) points at. `None` for a tree or a blob, or a tag of one.
fn commit_of(
    repo: &gix::Repository,
    id: gix::ObjectId,
) -> std::result::Result<Option<gix::ObjectId>, crate::error::Cause> {
    let object = repo.find_object(id)?.peel_tags_to_end()?;
    Ok((object.kind == gix::object::Kind::Commit).then_some(object.id))
}
