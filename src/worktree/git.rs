//! Running git: an explicit argument list, no shell, and none of the
//! variables an outer hook set that would send git to another repository.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::error::{Error, Result};
use crate::store::Repo;

use super::REDIRECTING_ENV;

/// `git` with an explicit argument list, run in `dir`.
pub(super) fn git_in(dir: &Path, args: &[&OsStr]) -> Result<Output> {
    run(dir, args, &[], None)
}

/// `git` in `dir` with extra variables and, when given, bytes on its stdin.
pub(super) fn run(
    dir: &Path,
    args: &[&OsStr],
    vars: &[(&str, &str)],
    input: Option<&[u8]>,
) -> Result<Output> {
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(dir).args(args);
    for var in REDIRECTING_ENV {
        cmd.env_remove(var);
    }
    // `git status` would otherwise refresh the index file on the side, and
    // `merge` promises the index exactly as it was when a pick stops.
    cmd.env("GIT_OPTIONAL_LOCKS", "0");
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let spawn_failed =
        |e| Error::refused("could not run git", Some("git must be on PATH".into()), e);
    let Some(input) = input else {
        cmd.stdin(std::process::Stdio::null());
        return cmd.output().map_err(spawn_failed);
    };
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().map_err(spawn_failed)?;
    if let Some(mut stdin) = child.stdin.take() {
        use std::io::Write;
        // A git that exits early closes the pipe; its status says why.
        let _ = stdin.write_all(input);
    }
    child.wait_with_output().map_err(spawn_failed)
}

/// `git` on `repo` with extra variables and bytes on its stdin.
pub(super) fn git_with(
    repo: &Repo,
    args: &[&str],
    vars: &[(&str, &str)],
    input: &[u8],
) -> Result<Output> {
    let mut full: Vec<OsString> = vec![
        format!("--git-dir={}", repo.git_dir.display()).into(),
        format!("--work-tree={}", repo.root.display()).into(),
    ];
    full.extend(args.iter().map(OsString::from));
    run(
        &repo.root,
        &full.iter().map(OsString::as_os_str).collect::<Vec<_>>(),
        vars,
        Some(input),
    )
}

/// What git wrote on stderr, one readable line: its lines joined, without
/// their `error:`/`fatal:` labels, and its `hint:` lines left out
/// (git-swarm gives its own).
pub(crate) fn said(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let mut lines: Vec<&str> = Vec::new();
    for line in text.lines().map(str::trim) {
        let line = ["error: ", "fatal: ", "warning: "]
            .iter()
            .fold(line, |l, label| l.strip_prefix(label).unwrap_or(l));
        if !line.is_empty() && !line.starts_with("hint:") && !lines.contains(&line) {
            lines.push(line);
        }
    }
    lines.join("; ")
}

/// `git` on the repository `repo` (its git dir and work tree named, so that
/// a repository found through `GIT_DIR` is still the one acted on).
pub(super) fn git(repo: &Repo, args: &[&str]) -> Result<Output> {
    git_os(repo, &args.iter().map(OsStr::new).collect::<Vec<_>>())
}

pub(super) fn git_os(repo: &Repo, args: &[&OsStr]) -> Result<Output> {
    let mut full: Vec<OsString> = vec![
        format!("--git-dir={}", repo.git_dir.display()).into(),
        format!("--work-tree={}", repo.root.display()).into(),
    ];
    full.extend(args.iter().map(|a| a.to_os_string()));
    git_in(
        &repo.root,
        &full.iter().map(OsString::as_os_str).collect::<Vec<_>>(),
    )
}

/// The output of a git command that must succeed.
pub(super) fn ok(out: Output, what: &str) -> Result<String> {
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(Error::git(
            what.to_owned(),
            std::io::Error::other(said(&out.stderr)),
        ))
    }
}

/// NUL-separated output as strings.
pub(super) fn z_list(s: &str) -> Vec<String> {
    s.split('\0')
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The commit `rev` names, or none.
pub(super) fn commit_of(repo: &Repo, rev: &str) -> Result<Option<String>> {
    let spec = format!("{rev}^{{commit}}");
    let out = git(
        repo,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &spec,
        ],
    )?;
    Ok(out
        .status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned()))
}

pub(super) fn branch_tip(repo: &Repo, branch: &str) -> Result<Option<String>> {
    commit_of(repo, &format!("refs/heads/{branch}"))
}

/// A worktree git knows about (`git worktree list --porcelain`).
#[derive(Debug, Clone)]
pub(super) struct Registered {
    pub(super) path: PathBuf,
    pub(super) branch: Option<String>,
}

pub(super) fn registered(repo: &Repo) -> Result<Vec<Registered>> {
    let text = ok(
        git(repo, &["worktree", "list", "--porcelain", "-z"])?,
        "listing the worktrees",
    )?;
    let mut out: Vec<Registered> = Vec::new();
    for field in text.split('\0') {
        if let Some(path) = field.strip_prefix("worktree ") {
            out.push(Registered {
                path: canonical(Path::new(path)),
                branch: None,
            });
        } else if let (Some(branch), Some(last)) =
            (field.strip_prefix("branch refs/heads/"), out.last_mut())
        {
            last.branch = Some(branch.to_owned());
        }
    }
    Ok(out)
}

pub(super) fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}
