//! A repository's `.swarm/`: finding it, reading its settings, and the
//! writes every command shares (new files, events).

use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::directive::{Directive, Quarantined};
use crate::error::{Error, Result};
use crate::event::{Body, Clock, Event};
use crate::problem::Problem;

/// `GIT_DIR`, `GIT_WORK_TREE` and `GIT_IMPLICIT_WORK_TREE` as the front end
/// read them: the library does not read the environment itself. (gix also
/// reads the first two; these are what git does beyond it.)
#[derive(Debug, Clone, Default)]
pub struct GitEnv {
    pub git_dir: Option<std::ffi::OsString>,
    pub work_tree: Option<std::ffi::OsString>,
    pub implicit_work_tree: Option<std::ffi::OsString>,
}

/// Where a repository keeps its work tree and its (per-worktree) git dir.
#[derive(Debug, Clone)]
pub struct Repo {
    /// Top of the work tree.
    pub root: PathBuf,
    /// The git dir of this worktree (`.git`, or `.git/worktrees/<name>` in a linked worktree).
    pub git_dir: PathBuf,
    /// The git dir every worktree shares (holds `config`, `hooks/`, refs); equals
    /// `git_dir` outside linked worktrees.
    pub common_dir: PathBuf,
    /// The repository as discovered, kept so that reading its config or its
    /// objects does not discover it again.
    repo: gix::ThreadSafeRepository,
}

impl Repo {
    /// Every value of the multi-valued git config `key` (e.g.
    /// `swarm.allowTool`), in git's order (system, global, local, worktree,
    /// environment, `git -c`), never from a file of the work tree. Empty when
    /// the key is unset or the configuration cannot be read.
    pub fn config_values(&self, key: &str) -> Vec<String> {
        self.gix()
            .config_snapshot()
            .strings(key)
            .unwrap_or_default()
            .into_iter()
            .map(|v| v.to_string())
            .collect()
    }

    /// Finds the repository containing `cwd`, as git does (honouring
    /// `GIT_DIR` and `GIT_WORK_TREE`, given in `env`).
    pub fn discover(cwd: &Path, env: &GitEnv) -> Result<Repo> {
        let repo =
            gix::ThreadSafeRepository::discover_with_environment_overrides(cwd).map_err(|e| {
                Error::NotARepository {
                    path: cwd.to_path_buf(),
                    source: Box::new(e),
                }
            })?;
        let repo = explicit_git_dir_work_tree(repo, cwd, env)?;
        let Some(root) = repo.work_dir() else {
            return Err(Error::BareRepository {
                path: repo.git_dir().to_path_buf(),
            });
        };
        let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        Ok(Repo {
            root: canonical(root),
            git_dir: canonical(repo.git_dir()),
            // gix may give `.git/worktrees/<id>/../..` here; canonicalising makes it `.git`.
            common_dir: canonical(repo.common_dir.as_deref().unwrap_or(repo.git_dir())),
            repo,
        })
    }

    /// A gix handle on the repository (honouring `GIT_INDEX_FILE`, as the
    /// discovery honoured `GIT_DIR` and `GIT_WORK_TREE`).
    pub fn gix(&self) -> gix::Repository {
        self.repo.to_thread_local()
    }

    /// The path-valued git config `key` (e.g. `core.hooksPath`) as git reads
    /// it: last value wins, `~/` and `~user/` expanded. Relative values are
    /// returned as written; what they are relative to depends on the key.
    pub fn config_path(&self, key: &str) -> Result<Option<PathBuf>> {
        self.gix()
            .config_snapshot()
            .trusted_path(key)
            .map_err(|e| {
                Error::refused(
                    format!("git config `{key}` cannot be read as a path"),
                    Some(format!(
                        "fix it with `git config {key} PATH`, or remove it with `git config --unset {key}`"
                    )),
                    e,
                )
            })
    }
}

/// The work tree git uses when `GIT_DIR` names the repository
/// (`setup_explicit_git_dir` in git's `setup.c`), applied to what gix opened,
/// which guesses otherwise. Unless `GIT_WORK_TREE` is set (gix honours it):
/// none when `core.bare`; else `core.worktree` (relative to the git dir);
/// else none when `GIT_IMPLICIT_WORK_TREE` is false; else the current
/// directory. As in git, only the git dir's own `config` and
/// `config.worktree` count for `core.bare` and `core.worktree`.
fn explicit_git_dir_work_tree(
    repo: gix::ThreadSafeRepository,
    cwd: &Path,
    env: &GitEnv,
) -> Result<gix::ThreadSafeRepository> {
    if env.git_dir.is_none() || env.work_tree.is_some() {
        return Ok(repo);
    }
    let mut local = repo.to_thread_local();
    let absolute = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| cwd.join(p));
    let git_dir = absolute(local.git_dir());
    let (configured, bare) = {
        let snapshot = local.config_snapshot();
        let config = snapshot.plumbing();
        let own = |meta: &gix::config::file::Metadata| {
            matches!(
                meta.source,
                gix::config::Source::Local | gix::config::Source::Worktree
            ) && meta
                .path
                .as_deref()
                .is_some_and(|p| absolute(p).starts_with(&git_dir))
        };
        (
            config.string_filter("core.worktree", own),
            matches!(config.boolean_filter("core.bare", own), Ok(Some(true))),
        )
    };
    let implicit = || {
        env.implicit_work_tree
            .clone()
            .and_then(|v| gix::config::Boolean::try_from(v).ok())
            .is_none_or(|b| b.0)
    };
    let work_tree = if bare {
        None
    } else if let Some(configured) = configured {
        let path = gix::path::from_bstring(configured)
            .map_err(|e| Error::git("reading core.worktree", e))?;
        Some(git_dir.join(path))
    } else if implicit() {
        Some(cwd.to_path_buf())
    } else {
        None
    };
    if let Some(dir) = &work_tree {
        std::fs::read_dir(dir).map_err(|e| {
            Error::refused(
                format!("the work tree {} cannot be read", dir.display()),
                Some("with GIT_DIR set, the work tree is GIT_WORK_TREE, else core.worktree, else the current directory".into()),
                e,
            )
        })?;
    }
    local
        .set_workdir(work_tree)
        .map_err(|e| Error::git("setting the work tree", e))?;
    Ok(local.into())
}

/// An opened `.swarm/`.
#[derive(Debug, Clone)]
pub struct Store {
    pub root: PathBuf,
    pub swarm_dir: PathBuf,
    pub git_dir: PathBuf,
    /// The clone's git dir, shared by its worktrees: where recorded events
    /// wait ([`Store::pending_dir`]).
    pub common_dir: PathBuf,
    pub config: Config,
    /// Problems with `config.toml` (the defaults are then in use) and with
    /// folders of `.swarm/` (a link or not a folder is skipped). Every
    /// command reports them; `validate` fails on them.
    pub config_problems: Vec<Problem>,
    pub clock: Clock,
}

pub const SWARM_DIR: &str = ".swarm";

/// The folder of `$GIT_COMMON_DIR/swarm/` where recorded events wait.
pub const PENDING: &str = "pending";

/// How the index names a pending log file: `pending/2026-11.jsonl`.
pub const PENDING_PREFIX: &str = "pending/";

/// The folders of `.swarm/` that git-swarm reads or writes.
pub const FOLDERS: [&str; 6] = [
    "directives",
    "quarantine",
    "events",
    "local",
    "handoffs",
    "proposals",
];

/// Largest `config.toml` read, in bytes: the template is some 3 KB, and a
/// file over this is no settings file (nor a read worth waiting for).
pub const CONFIG_MAX: u64 = 1024 * 1024;

impl Store {
    /// Opens the `.swarm/` of `repo`; fails if there is none.
    pub fn open(repo: &Repo, clock: Clock) -> Result<Store> {
        let swarm_dir = repo.root.join(SWARM_DIR);
        // `.swarm/` as a link would make every file in it one: refused whole.
        if let Some(kind @ crate::safe_fs::FileKind::Symlink) =
            crate::safe_fs::not_a_folder(&swarm_dir)
        {
            return Err(Error::LinkedFolder {
                path: swarm_dir,
                kind,
            });
        }
        if !swarm_dir.is_dir() {
            return Err(Error::NotInitialised {
                root: repo.root.clone(),
            });
        }
        let config_path = swarm_dir.join("config.toml");
        let rel = ".swarm/config.toml";
        let defaults = |problem: Problem| (Config::default(), vec![problem]);
        let (config, mut config_problems) = match crate::safe_fs::read(&config_path, CONFIG_MAX) {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(text) => Config::parse(&text, rel),
                Err(_) => defaults(
                    Problem::error(rel, "not_utf8", "file is not valid UTF-8")
                        .with_hint("re-save config.toml as UTF-8"),
                ),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Config::default(), Vec::new()),
            Err(e) => match crate::safe_fs::not_regular(&e) {
                Some(kind) => defaults(
                    Problem::error(
                        rel,
                        crate::event::NOT_REGULAR,
                        format!("{kind}, not a regular file: not read, the defaults are in use"),
                    )
                    .with_hint("replace it with a regular file, or remove it: a link committed under .swarm/ could point anywhere"),
                ),
                None if crate::safe_fs::over_limit(&e).is_some() => defaults(
                    Problem::error(rel, "too_large", format!("{e}: not read, the defaults are in use"))
                        .with_hint("config.toml holds a few settings; remove what is not one"),
                ),
                None => return Err(Error::io(&config_path, e)),
            },
        };
        for folder in FOLDERS {
            if let Some(kind) = crate::safe_fs::not_a_folder(&swarm_dir.join(folder)) {
                config_problems.push(
                    Problem::error(
                        format!(".swarm/{folder}"),
                        crate::event::NOT_REGULAR,
                        format!("{kind}, not a folder: skipped, nothing in it is read and nothing is written through it"),
                    )
                    .with_hint(format!("replace it with a real folder (`rm` it, then `mkdir .swarm/{folder}`): a link committed under .swarm/ could point anywhere")),
                );
            }
        }
        Ok(Store {
            root: repo.root.clone(),
            swarm_dir,
            git_dir: repo.git_dir.clone(),
            common_dir: repo.common_dir.clone(),
            config,
            config_problems,
            clock,
        })
    }

    pub fn directives_dir(&self) -> PathBuf {
        self.swarm_dir.join("directives")
    }

    pub fn quarantine_dir(&self) -> PathBuf {
        self.swarm_dir.join("quarantine")
    }

    /// The tracked log: `.swarm/events/`, changed only by commits.
    pub fn events_dir(&self) -> PathBuf {
        self.swarm_dir.join("events")
    }

    /// Where recorded events wait until `git swarm commit` moves them into
    /// the tracked log in a commit of their own: the clone's git dir, so
    /// that no pull, merge, rebase, checkout or stash ever meets them, and
    /// every worktree of the clone folds them (a removed worktree loses none).
    pub fn pending_dir(&self) -> PathBuf {
        self.common_dir.join("swarm").join(PENDING)
    }

    /// Where events are appended, and the tracked log they must not repeat.
    pub fn log(&self) -> crate::event::LogDirs {
        crate::event::LogDirs {
            pending: self.pending_dir(),
            tracked: Some(self.events_dir()),
        }
    }

    /// The two folders of the log, each with the name problems give it:
    /// the tracked one first.
    pub fn log_dirs(&self) -> [(PathBuf, String); 2] {
        let pending = self.pending_dir();
        let rel = self.rel(&pending);
        [
            (self.events_dir(), ".swarm/events".to_owned()),
            (pending, rel),
        ]
    }

    /// Every file of the log, tracked then pending, each sorted by name,
    /// with the path problems name it by.
    pub fn event_files(&self) -> Result<Vec<(PathBuf, String)>> {
        let mut out = Vec::new();
        for (dir, rel) in self.log_dirs() {
            for path in crate::event::event_files(&dir)? {
                let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
                let shown = format!("{rel}/{}", name.unwrap_or_default());
                out.push((path, shown));
            }
        }
        Ok(out)
    }

    /// The path and the name shown for the log file the index calls `name`:
    /// `YYYY-MM.jsonl` in `.swarm/events/`, `pending/YYYY-MM.jsonl` in
    /// [`Store::pending_dir`].
    pub fn event_file(&self, name: &str) -> (PathBuf, String) {
        match name.strip_prefix(PENDING_PREFIX) {
            Some(month) => {
                let path = self.pending_dir().join(month);
                let rel = self.rel(&path);
                (path, rel)
            }
            None => (
                self.events_dir().join(name),
                format!(".swarm/events/{name}"),
            ),
        }
    }

    pub fn local_dir(&self) -> PathBuf {
        self.git_dir.join("swarm").join("local")
    }

    /// Creates [`Store::local_dir`] (never through a link) and returns it.
    pub fn create_local_dir(&self) -> Result<PathBuf> {
        let local = self.local_dir();
        crate::safe_fs::create_dir_all(&self.git_dir, &local)?;
        Ok(local)
    }

    /// Path relative to the work tree root, `/`-separated, for messages.
    pub fn rel(&self, path: &Path) -> String {
        let rel = path.strip_prefix(&self.root).unwrap_or(path);
        rel.to_string_lossy().replace('\\', "/")
    }

    /// Appends events to the log (see [`crate::event::append`]); returns
    /// the torn lines it found and saved aside, which the caller reports.
    #[must_use = "torn lines saved aside must be reported"]
    pub fn append(&self, events: &[Event]) -> Result<Vec<PathBuf>> {
        crate::event::append(&self.pending_dir(), events, &self.config.events)
    }

    /// Fails, naming the file, if `event` could not be appended now (see
    /// [`crate::event::check_appendable`]).
    pub fn check_appendable(&self, event: &Event) -> Result<()> {
        crate::event::check_appendable(&self.pending_dir(), event, &self.config.events)
    }

    /// A new event stamped with this store's clock.
    pub fn event(&self, body: Body) -> Event {
        Event::new(body, self.clock.now())
    }

    /// A new event of a kind given by name (`record`), stamped with this store's clock.
    pub fn custom_event(&self, kind: &str) -> Event {
        Event::custom(kind, self.clock.now())
    }

    /// Does an entry with this id exist, active or quarantined?
    pub fn id_taken(&self, id: &str) -> Option<PathBuf> {
        [self.directives_dir(), self.quarantine_dir()]
            .into_iter()
            .map(|d| d.join(format!("{id}.toml")))
            .find(|p| p.exists())
    }

    /// Writes a directive that passed the gate to `directives/<id>.toml`;
    /// refuses to overwrite.
    pub fn write_directive(&self, d: &Directive) -> Result<PathBuf> {
        self.write_entry(self.directives_dir(), &d.id, &d.to_toml())
    }

    /// Mints an entry through the actionability gate: to `directives/` when
    /// it passes, else to `quarantine/` with the reason, never lost. Returns
    /// what was written with its `added` or `quarantined` event, for the
    /// caller to append.
    pub fn mint(&self, d: Directive) -> Result<Minted> {
        match crate::directive::check_gate(&d) {
            Ok(()) => {
                let path = self.write_directive(&d)?;
                let event = self
                    .event(Body::Added {
                        path: self.rel(&path),
                    })
                    .about(&d.id);
                Ok(Minted::Added { path, event })
            }
            Err(failure) => {
                let q = Quarantined::new(d, failure.reason, Some(failure.detail()));
                let path = self.write_quarantined(&q)?;
                let event = self
                    .event(Body::Quarantined {
                        path: self.rel(&path),
                        reason: failure.reason.as_str().to_owned(),
                        detail: failure.detail(),
                    })
                    .about(&q.directive.id);
                Ok(Minted::Quarantined {
                    path,
                    event,
                    failure,
                })
            }
        }
    }

    /// Writes an entry that failed the gate to `quarantine/<id>.toml`.
    pub fn write_quarantined(&self, q: &Quarantined) -> Result<PathBuf> {
        self.write_entry(self.quarantine_dir(), &q.directive.id, &q.to_toml())
    }

    fn write_entry(&self, dir: PathBuf, id: &str, toml: &str) -> Result<PathBuf> {
        let path = dir.join(format!("{id}.toml"));
        create_new(
            &self.swarm_dir,
            &path,
            toml.as_bytes(),
            &self.rel(&path),
            id,
        )?;
        Ok(path)
    }
}

pub use crate::safe_fs::create_new;

/// The text of a file under `.swarm/` that one reader owns (a proposal, a
/// handoff), or the problem that keeps it from being read, named by `rel`:
/// not a regular file, over `max` bytes (`what` is the kind of file and
/// `shorten` what to cut, for the hint), unreadable or not UTF-8.
pub fn read_owned_text(
    path: &Path,
    rel: &str,
    max: u64,
    what: &str,
    shorten: &str,
) -> std::result::Result<String, Problem> {
    let bytes = crate::safe_fs::read(path, max).map_err(|e| {
        match crate::safe_fs::not_regular(&e) {
            Some(kind) => Problem::error(
                rel,
                crate::event::NOT_REGULAR,
                format!("{kind}, not a regular file: not read"),
            )
            .with_hint("replace it with a regular file: a link committed under .swarm/ could point anywhere"),
            None => match crate::safe_fs::over_limit(&e) {
                Some(limit) => Problem::error(rel, "too_large", e.to_string()).with_hint(format!(
                    "{what} is at most {limit} bytes: {shorten}, or remove the file if it is not one"
                )),
                None => Problem::error(rel, "unreadable", e.to_string()),
            },
        }
    })?;
    String::from_utf8(bytes).map_err(|_| Problem::error(rel, "not_utf8", "file is not valid UTF-8"))
}

/// What [`Store::mint`] wrote.
#[derive(Debug)]
pub enum Minted {
    Added {
        path: PathBuf,
        event: Event,
    },
    Quarantined {
        path: PathBuf,
        event: Event,
        failure: crate::directive::GateFailure,
    },
}
