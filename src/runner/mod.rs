//! The `tool:` runner: runs one allowlisted program, without a shell, in a
//! small sandbox, and says how it went.
//!
//! A repository's directives are written by whoever can push to it, so a
//! `tool:` predicate is untrusted input that asks to run a program on the
//! user's machine. The runner therefore fails closed:
//!
//! - the program is a bare name, on the user's allowlist (git config
//!   `swarm.allowTool` plus [`DEFAULT_PROGRAMS`]), found in an absolute
//!   `PATH` directory outside the repository — never a file of the
//!   repository, and the allowlist never comes from the repository;
//! - `git` only runs a fixed set of read-only subcommands, without `-c`,
//!   `--config-env`, `--exec-path` or any other global option that changes
//!   what git runs, and without options that write files or start a pager;
//! - arguments that name paths stay inside the repository: no absolute
//!   path, no `..`, no symlink that leads out;
//! - the environment is cleared but for a minimal set, stdin is closed,
//!   no file descriptor but 0, 1 and 2 is passed on, output is capped, and
//!   the program's whole process group is killed when it exits, when it
//!   times out, when the runner returns early or panics, and when
//!   git-swarm gets SIGINT, SIGTERM, SIGHUP or SIGQUIT (it then ends by
//!   that signal, after the group is gone).
//!
//! What runs at all is also gated by trust (see [`crate::trust`]): the
//! repository's set of tool predicates must have been approved with
//! `git swarm trust`. The rules are documented for users in
//! `docs/checks.md`.

mod interrupt;
mod process;
mod rules;

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::config::RunnerConfig;
use crate::store::Repo;

pub use process::Captured;

/// Programs allowed without any configuration. All of them only read: none
/// runs code from the repository (which rules out build tools such as
/// `cargo` or `make`, which run build scripts) or writes files.
pub const DEFAULT_PROGRAMS: &[&str] = &["cmp", "diff", "false", "git", "grep", "test", "true"];

/// The git config key listing the programs a user allows, one per value.
pub const ALLOW_KEY: &str = "swarm.allowTool";

/// What the runner takes from the user's environment. The library never
/// reads the environment itself; the command line passes these in.
#[derive(Debug, Clone, Default)]
pub struct UserEnv {
    /// The user's `PATH`. Only its absolute directories outside the
    /// repository are searched, and only they are passed on.
    pub path: Option<OsString>,
    /// The user's home directory, passed on as `HOME` (tools read their
    /// own user configuration there, e.g. git its `~/.gitconfig`).
    pub home: Option<PathBuf>,
    /// The index git is working with (`GIT_INDEX_FILE`, which git sets for
    /// the hooks of `git commit -a` and `git commit PATH`), as an absolute
    /// path. It is passed on as `GIT_INDEX_FILE`, so that a tool such as
    /// `git diff --cached` sees what is being committed; a relative path is
    /// not passed on.
    pub index_file: Option<PathBuf>,
}

/// The programs a user allows `tool:` predicates to run, and where they
/// are looked up.
#[derive(Debug, Clone)]
pub struct Allowlist {
    programs: BTreeSet<String>,
    ignored: Vec<String>,
    env: UserEnv,
}

impl Allowlist {
    /// The defaults plus `values` (the values of `swarm.allowTool`, in
    /// config order). An empty value clears everything before it, the
    /// defaults included, as an empty `credential.helper` does in git. A
    /// value that is not a bare program name is ignored (see [`Self::ignored`]).
    pub fn new(values: impl IntoIterator<Item = String>, env: UserEnv) -> Allowlist {
        let mut programs: BTreeSet<String> =
            DEFAULT_PROGRAMS.iter().map(|p| (*p).to_owned()).collect();
        let mut ignored = Vec::new();
        for value in values {
            let name = value.trim();
            if name.is_empty() {
                programs.clear();
            } else if rules::is_bare_name(name) {
                programs.insert(name.to_owned());
            } else {
                ignored.push(value);
            }
        }
        Allowlist {
            programs,
            ignored,
            env,
        }
    }

    /// The allowlist from the user's git config for `repo` (global, local,
    /// and system unless `GIT_CONFIG_NOSYSTEM`): never from a file in the
    /// work tree.
    pub fn for_repo(repo: &Repo, env: UserEnv) -> Allowlist {
        Allowlist::new(repo.config_values(ALLOW_KEY), env)
    }

    pub fn allows(&self, program: &str) -> bool {
        self.programs.contains(program)
    }

    /// The allowed program names, sorted.
    pub fn programs(&self) -> impl Iterator<Item = &str> {
        self.programs.iter().map(String::as_str)
    }

    /// Values of `swarm.allowTool` that were not bare program names.
    pub fn ignored(&self) -> &[String] {
        &self.ignored
    }
}

/// Bounds on one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time before the process group is killed.
    pub timeout: Duration,
    /// Bytes of each of stdout and stderr kept (half from the start, half
    /// from the end); the rest is read and thrown away, so a program that
    /// prints without end neither blocks nor fills memory.
    pub output_cap: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits::from_config(&RunnerConfig::default())
    }
}

impl Limits {
    /// The limits set in `.swarm/config.toml` (`[runner]`).
    pub fn from_config(config: &RunnerConfig) -> Limits {
        Limits {
            timeout: Duration::from_secs(config.timeout_secs),
            output_cap: 1024 * 1024,
        }
    }
}

/// How a run went.
#[derive(Debug)]
pub enum ToolOutcome {
    /// The program exited 0.
    Passed { output: Captured, elapsed: Duration },
    /// The program exited non-zero, or was killed by a signal.
    Failed {
        /// The exit code; `None` when a signal ended it.
        code: Option<i32>,
        signal: Option<i32>,
        output: Captured,
        elapsed: Duration,
    },
    /// The runner would not start it.
    Refused(Refusal),
    /// It ran past the timeout; its process group was killed.
    TimedOut { after: Duration, output: Captured },
    /// It could not be run (not found on PATH, could not be started…).
    Error {
        message: String,
        hint: Option<String>,
    },
}

impl ToolOutcome {
    fn error(message: String) -> ToolOutcome {
        ToolOutcome::Error {
            message,
            hint: None,
        }
    }

    pub fn passed(&self) -> bool {
        matches!(self, ToolOutcome::Passed { .. })
    }

    /// What the program printed, when it ran.
    pub fn output(&self) -> Option<&Captured> {
        match self {
            ToolOutcome::Passed { output, .. }
            | ToolOutcome::Failed { output, .. }
            | ToolOutcome::TimedOut { output, .. } => Some(output),
            ToolOutcome::Refused(_) | ToolOutcome::Error { .. } => None,
        }
    }
}

/// Why the runner refused to start a program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub kind: RefusalKind,
    /// What was refused, naming the argument.
    pub message: String,
    /// What to do about it.
    pub hint: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusalKind {
    /// No program at all.
    Empty,
    /// The program is given as a path (`./x`, `/bin/x`).
    ProgramPath,
    /// The program is not on the allowlist.
    NotAllowed,
    /// The program found on PATH lives inside the repository.
    ProgramInRepository,
    /// A git global option that changes what git runs (`-c`, `--exec-path`…).
    GitOption,
    /// A git subcommand outside the read-only set (aliases included).
    GitSubcommand,
    /// An absolute path argument.
    AbsolutePath,
    /// A path argument with a `..` component.
    ParentPath,
    /// A path argument through a symlink that leads out of the repository.
    SymlinkOutside,
    /// An argument with a NUL byte.
    Nul,
}

/// `argv` as a shell would need it quoted, for messages.
pub fn display_argv(argv: &[String]) -> String {
    shlex::try_join(argv.iter().map(String::as_str)).unwrap_or_else(|_| argv.join(" "))
}

/// Runs `argv` in `repo_root` if the rules allow it; see the module docs.
pub fn run_tool(
    argv: &[String],
    repo_root: &Path,
    allow: &Allowlist,
    limits: &Limits,
) -> ToolOutcome {
    let root = match std::fs::canonicalize(repo_root) {
        Ok(r) => r,
        Err(e) => {
            return ToolOutcome::error(format!(
                "cannot resolve the repository root {}: {e}",
                repo_root.display()
            ));
        }
    };
    if let Err(refusal) = rules::check(argv, &root, allow) {
        return ToolOutcome::Refused(refusal);
    }
    let search = rules::search_path(allow.env.path.as_deref(), &root);
    let program = match rules::resolve(&argv[0], &search, &root) {
        Ok(p) => p,
        Err(rules::Resolve::Refused(r)) => return ToolOutcome::Refused(r),
        Err(rules::Resolve::NotFound) => {
            return ToolOutcome::Error {
                message: format!("`{}` is allowed but not found on PATH", argv[0]),
                hint: Some(
                    "install it, or check PATH (only absolute directories outside the repository are searched)"
                        .into(),
                ),
            };
        }
    };
    process::run(&program, &argv[1..], &root, &search, &allow.env, limits)
}

/// Runs the user's own program `argv` — a command line from their git
/// config, such as `swarm.curator`, never from a file of the repository —
/// in `repo_root` with their environment, `input` on its stdin, within
/// `limits` (its process group killed at the timeout, its output capped).
/// The program is found as [`resolve_user_program`] says.
pub fn run_user_program(
    argv: &[String],
    repo_root: &Path,
    env: &UserEnv,
    input: &[u8],
    limits: &Limits,
) -> ToolOutcome {
    let (program, root) = match resolve_user_program(argv, repo_root, env) {
        Ok(found) => found,
        Err(outcome) => return *outcome,
    };
    process::run_with_input(&program, &argv[1..], &root, input, limits)
}

/// The program `argv` names and the canonical repository root, or why it
/// cannot run ([`ToolOutcome::Refused`] or [`ToolOutcome::Error`]).
///
/// The program is an absolute path, `~/…` under `env.home`, or a bare
/// name looked up in the absolute `PATH` directories outside the
/// repository: a relative path, or a program inside the repository, would
/// run a file that a pull request can change, and is refused.
pub fn resolve_user_program(
    argv: &[String],
    repo_root: &Path,
    env: &UserEnv,
) -> Result<(PathBuf, PathBuf), Box<ToolOutcome>> {
    let refused = |kind, message: String, hint: &str| {
        Box::new(ToolOutcome::Refused(Refusal {
            kind,
            message,
            hint: hint.to_owned(),
        }))
    };
    let root = std::fs::canonicalize(repo_root).map_err(|e| {
        Box::new(ToolOutcome::error(format!(
            "cannot resolve the repository root {}: {e}",
            repo_root.display()
        )))
    })?;
    let Some(name) = argv.first().filter(|n| !n.is_empty()) else {
        return Err(refused(
            RefusalKind::Empty,
            "no program to run".into(),
            "give a program",
        ));
    };
    if argv.iter().any(|a| a.contains('\0')) {
        return Err(refused(
            RefusalKind::Nul,
            "an argument contains a NUL byte".into(),
            "remove the NUL byte",
        ));
    }
    if rules::is_bare_name(name) {
        let search = rules::search_path(env.path.as_deref(), &root);
        return match rules::resolve(name, &search, &root) {
            Ok(p) => Ok((p, root)),
            Err(rules::Resolve::Refused(r)) => Err(Box::new(ToolOutcome::Refused(r))),
            Err(rules::Resolve::NotFound) => Err(Box::new(ToolOutcome::Error {
                message: format!("`{name}` is not found on PATH"),
                hint: Some(
                    "install it, or give its absolute path (only absolute PATH directories outside the repository are searched)"
                        .into(),
                ),
            })),
        };
    }
    let path = match (name.strip_prefix("~/"), &env.home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(name),
    };
    if !path.is_absolute() {
        return Err(refused(
            RefusalKind::ProgramPath,
            format!("`{}` is a relative path", name.escape_debug()),
            "give an absolute path or a program on PATH: a relative path would name a file of the repository",
        ));
    }
    let real = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
    if real.starts_with(&root) {
        return Err(refused(
            RefusalKind::ProgramInRepository,
            format!("`{}` is a file in the repository", path.display()),
            "programs from the repository never run; install it outside the repository",
        ));
    }
    match std::fs::metadata(&path) {
        Ok(m) if m.is_file() && crate::safe_fs::is_executable(&m) => Ok((path, root)),
        _ => Err(Box::new(ToolOutcome::Error {
            message: format!("`{}` is not an executable file", path.display()),
            hint: Some("check the path, and that the file is executable".into()),
        })),
    }
}
