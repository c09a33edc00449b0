//! The hive: directives shared by many repositories, kept in a git
//! repository of their own (DESIGN §7f, docs/hive.md).
//!
//! A project subscribes to a hive in `.swarm/config.toml` (`[[hive]]`: a
//! name, a URL and a pinned commit). The hive is fetched into a bare mirror
//! in the common git dir, and the directives of the pinned commit's tree
//! are checked and written out once into a folder named by that commit,
//! which no later fetch changes: every command reads them from there as it
//! reads the project's own, and nothing of a hive is read from a work tree
//! (uncommitted changes there are never used). Those folders and the mirror
//! live in the git dir, where no pull request writes.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Error, Result};
use crate::problem::Problem;
use crate::store::Store;

mod branch;
pub mod promote;
pub mod report;

pub use crate::index::hive::{
    directive_file, entries_of, is_fetched, state_key, subscribed_entries, subscription, unfetched,
};
pub use crate::pins::{
    MAX_DIRECTIVES, hives_dir, mirror_dir, origin_name, pinned_dir, short, subscriptions_in_tree,
    trusted_subscriptions,
};

/// Whether `url` names a local path rather than a remote (as git tells
/// them: a URL has `://`, an scp-like address a colon before any slash).
pub(crate) fn is_local(url: &str) -> bool {
    if url.contains("://") {
        return url.starts_with("file://");
    }
    match (url.find(':'), url.find('/')) {
        (Some(colon), Some(slash)) => slash < colon,
        (Some(_), None) => false,
        _ => true,
    }
}

/// Refuses a hive's `url` that is not safe to fetch from or push to: one
/// a pull request could have made run something (see
/// [`crate::config::url_problem`]), a local hive reached through a symlink
/// (which could be re-pointed at another repository between two fetches,
/// with no trace in the project), or one inside this repository's work
/// tree `root` (a pull request fills it: pushing runs that repository's
/// hooks).
pub fn check_source(url: &str, root: &Path) -> Result<()> {
    if let Some(why) = crate::config::url_problem(url) {
        return Err(Error::usage(
            format!("hive URL {why}"),
            "name the hive by a URL git fetches over file, git, http(s) or ssh, or by its absolute path",
        ));
    }
    if !is_local(url) {
        return Ok(());
    }
    let path = Path::new(url.strip_prefix("file://").unwrap_or(url));
    refuse_links_on_the_way(url, path)?;
    if !path.exists() {
        return Err(Error::usage(
            format!("no hive at {url}"),
            "name a git repository made with `git swarm hive init`, by its path or URL",
        ));
    }
    // Real paths: a `..` (links are refused above) must not lead back in.
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let inside = std::fs::canonicalize(root).is_ok_and(|root| real.starts_with(&root));
    if inside || real.starts_with(root) {
        return Err(Error::usage(
            format!("the hive {url} is inside this repository's work tree"),
            "a hive is a repository of its own: a folder a pull request can fill is never fetched from or pushed to",
        ));
    }
    Ok(())
}

/// Refuses a local hive `path` (named `url`) that is, or is reached
/// through, a symlink: a link could be re-pointed at another repository
/// between two fetches, with no trace in the project.
pub fn refuse_links_on_the_way(url: &str, path: &Path) -> Result<()> {
    let link = path
        .ancestors()
        .find(|a| !a.as_os_str().is_empty() && a.symlink_metadata().is_ok_and(|m| m.is_symlink()));
    match link {
        Some(link) => Err(Error::usage(
            format!(
                "the hive {url} is reached through a symlink ({})",
                link.display()
            ),
            "name the hive's real path: a link could be pointed at another repository",
        )),
        None => Ok(()),
    }
}

/// git, run outside any repository of the caller's environment.
pub fn git() -> Command {
    let mut cmd = Command::new("git");
    for key in crate::worktree::REDIRECTING_ENV {
        cmd.env_remove(key);
    }
    // Only these transports, whatever the user's git config allows: a
    // remote helper (`ext::`) runs a command a pull request names.
    cmd.env("GIT_ALLOW_PROTOCOL", "file:git:http:https:ssh")
        .env("GIT_PROTOCOL_FROM_USER", "0")
        .env("GIT_TERMINAL_PROMPT", "0");
    cmd.stdin(std::process::Stdio::null());
    cmd
}

/// Runs `cmd` (from [`git`]) against a hive; if it fails, a user's error
/// (exit 2: a URL, an access, a revision) saying `what`, with git's own
/// words after it.
pub(crate) fn run_git(cmd: Command, what: &str) -> Result<String> {
    run(cmd, None, what).map_err(|said| {
        Error::usage(
            if said.is_empty() {
                what.to_owned()
            } else {
                format!("{what}: {said}")
            },
            "check the hive's URL, your access to it, and its branches (`git ls-remote URL` lists them)",
        )
    })
}

/// Runs `cmd` (from [`git`]) on a repository of this machine (a mirror,
/// a new hive), with `input` on its stdin; if it fails, git's error.
pub fn run_local(cmd: Command, input: Option<&[u8]>, what: &str) -> Result<String> {
    run(cmd, input, what).map_err(|said| Error::git(what.to_owned(), said))
}

/// `cmd`'s stdout, trimmed; or what git said, one line of at most 600
/// characters (a remote's words are not ours to print at length).
fn run(mut cmd: Command, input: Option<&[u8]>, what: &str) -> std::result::Result<String, String> {
    use std::process::Stdio;
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    if input.is_some() {
        cmd.stdin(Stdio::piped());
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("{what}: cannot run git: {e}"))?;
    if let (Some(mut stdin), Some(input)) = (child.stdin.take(), input) {
        use std::io::Write;
        // A git that exits early closes the pipe; its status says why.
        let _ = stdin.write_all(input);
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(crate::worktree::git::said(&out.stderr)
            .chars()
            .take(600)
            .collect());
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// A folder of the git dir that must be a folder of its own.
fn own_folder(path: &Path) -> Result<bool> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => Ok(true),
        Ok(m) => Err(Error::LinkedFolder {
            path: path.to_path_buf(),
            kind: crate::file_kind::FileKind::of(&m).unwrap_or(crate::file_kind::FileKind::File),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// Fetches the hive `name` from `url` into its mirror; returns the commit
/// of the hive's default branch.
pub fn fetch(common_dir: &Path, root: &Path, name: &str, url: &str) -> Result<String> {
    check_source(url, root)?;
    let hives = hives_dir(common_dir);
    std::fs::create_dir_all(&hives).map_err(|e| Error::io(&hives, e))?;
    own_folder(&hives)?;
    let mirror = mirror_dir(common_dir, name);
    if !own_folder(&mirror)? {
        let mut init = git();
        init.args(["init", "--bare", "--quiet"]).arg(&mirror);
        run_git(init, &format!("cannot make the mirror of hive `{name}`"))?;
    }
    let source = url.to_owned();
    let mut fetch = git();
    fetch
        .arg("-C")
        .arg(&mirror)
        .args(["fetch", "--quiet", "--no-tags", "--force", "--prune", "--"])
        .arg(&source)
        .args(["+HEAD:refs/hive/head", "+refs/heads/*:refs/heads/*"]);
    run_git(fetch, &format!("cannot fetch hive `{name}` from {url}"))?;
    let mut head = git();
    head.arg("-C").arg(&mirror).args([
        "rev-parse",
        "--verify",
        "--quiet",
        "refs/hive/head^{commit}",
    ]);
    run_git(
        head,
        &format!("hive `{name}` at {url} has no default branch"),
    )
}

/// The commit `spec` names in the mirror of `name` (a branch of the hive,
/// or a commit), as 40 hex digits.
pub fn resolve(common_dir: &Path, name: &str, spec: &str) -> Result<String> {
    let mirror = mirror_dir(common_dir, name);
    let mut cmd = git();
    cmd.arg("-C").arg(&mirror).args([
        "rev-parse",
        "--verify",
        "--quiet",
        "--end-of-options",
        &format!("{spec}^{{commit}}"),
    ]);
    run_git(cmd, &format!("`{spec}` names no commit of hive `{name}`"))
}

/// The directive files of `.swarm/directives/` in `rev`'s tree of the
/// mirror of `name`: (file name, bytes). Anything but a regular file (a
/// link, a folder, a submodule) is a problem; bounded in count and size.
fn read_tree(common_dir: &Path, name: &str, rev: &str) -> Result<(Vec<HiveFile>, Vec<Problem>)> {
    let mirror = mirror_dir(common_dir, name);
    own_folder(&mirror)?;
    let not_here = || {
        Error::usage(
            format!("hive `{name}`: its pinned revision {rev} is not here"),
            "`git swarm hive fetch` fetches it; a revision the hive does not have is refused",
        )
    };
    let repo = gix::open(&mirror).map_err(|_| not_here())?;
    let id = gix::ObjectId::from_hex(rev.as_bytes()).map_err(|_| not_here())?;
    let commit = repo.find_commit(id).map_err(|_| not_here())?;
    let tree = commit
        .tree()
        .map_err(|e| Error::git(format!("hive `{name}` at {rev}"), e.to_string()))?;
    let mut files = Vec::new();
    let mut problems = Vec::new();
    let mut total = 0u64;
    let Some(entry) = tree
        .lookup_entry_by_path(".swarm/directives")
        .map_err(|e| Error::git(format!("hive `{name}` at {rev}"), e.to_string()))?
    else {
        return Ok((files, problems));
    };
    if !entry.mode().is_tree() {
        problems.push(Problem::error(
            ".swarm/directives",
            crate::event::NOT_REGULAR,
            format!("hive `{name}` at {rev}: .swarm/directives is not a folder"),
        ));
        return Ok((files, problems));
    }
    let dir = repo
        .find_tree(entry.oid())
        .map_err(|e| Error::git(format!("hive `{name}` at {rev}"), e.to_string()))?;
    for e in dir.iter() {
        let e = e.map_err(|e| Error::git(format!("hive `{name}` at {rev}"), e.to_string()))?;
        let file = e.filename().to_string();
        if !file.ends_with(".toml") {
            continue;
        }
        let rel = format!(".swarm/directives/{}", file.escape_debug());
        // A tree entry's name is bytes: only a directive id's file name is
        // ever written out.
        if !file
            .strip_suffix(".toml")
            .is_some_and(crate::directive::is_valid_id)
        {
            problems.push(
                Problem::error(
                    &rel,
                    "hive",
                    "not a directive file name (`<id>.toml`, the id lowercase letters, digits, `.`, `_`, `-`)",
                )
                .at(1, 1),
            );
            continue;
        }
        if !e.mode().is_blob() || e.mode().is_link() {
            problems.push(
                Problem::error(
                    &rel,
                    crate::event::NOT_REGULAR,
                    "not a regular file in the hive: a link or a folder is never read",
                )
                .at(1, 1),
            );
            continue;
        }
        if files.len() >= MAX_DIRECTIVES {
            problems.push(Problem::error(
                ".swarm/directives",
                "hive",
                format!(
                    "hive `{name}` has more than {MAX_DIRECTIVES} directives: the rest are not read"
                ),
            ));
            break;
        }
        let size = repo
            .find_header(e.oid())
            .map_err(|e| Error::git(format!("hive `{name}` at {rev}"), e.to_string()))?
            .size();
        if size > crate::directive::limits::FILE_MAX {
            // Never inflated: its size is in the object's header.
            problems.extend(crate::index::too_large_entry(&rel, &file).problems);
            continue;
        }
        total += size;
        if total > BYTES_MAX {
            problems.push(Problem::error(
                ".swarm/directives",
                "hive",
                format!(
                    "hive `{name}`'s directives hold more than {} MiB: the rest are not read",
                    BYTES_MAX >> 20
                ),
            ));
            break;
        }
        let blob = repo
            .find_object(e.oid())
            .map_err(|e| Error::git(format!("hive `{name}` at {rev}"), e.to_string()))?;
        files.push((file, blob.data.clone()));
    }
    Ok((files, problems))
}

/// Most bytes of directive files read from one hive revision: with the
/// count, what bounds the memory a hostile hive can take.
const BYTES_MAX: u64 = 32 << 20;

/// Most problems of a hive's revision listed; the rest are counted.
const PROBLEMS_LISTED: usize = 50;

/// A directive file of a hive's tree: its name and bytes.
type HiveFile = (String, Vec<u8>);

/// Checks the directives of hive `name` at `rev` and writes them out into
/// their pinned folder (once: a revision's content never changes). Any
/// directive with an error fails it, naming each file and line, and
/// nothing is written.
pub fn materialize(common_dir: &Path, name: &str, rev: &str) -> Result<PathBuf> {
    // The mirror may hold another repository's objects (the name fetched
    // from another URL before): the pin must be on a branch of this one.
    let mut contains = git();
    contains.arg("-C").arg(mirror_dir(common_dir, name)).args([
        "for-each-ref",
        "--count=1",
        "--format=%(refname)",
        "--contains",
        rev,
        "refs/heads",
        "refs/hive",
    ]);
    if run_git(contains, "").map_or(true, |refs| refs.is_empty()) {
        return Err(Error::usage(
            format!("hive `{name}`: its pinned revision {rev} is not here"),
            "`git swarm hive fetch` fetches it; a revision the hive's branches do not hold is refused",
        ));
    }
    let dir = pinned_dir(common_dir, name, rev);
    if own_folder(&dir)? {
        return Ok(dir);
    }
    let (files, mut problems) = read_tree(common_dir, name, rev)?;
    for (file, bytes) in &files {
        let entry = crate::index::entry_from_bytes(
            bytes,
            &format!(".swarm/directives/{file}"),
            file,
            false,
        );
        problems.extend(entry.problems.into_iter().filter(Problem::is_error));
    }
    if !problems.is_empty() {
        problems.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
        let head = Problem::error(
            format!("hive {name} at {}", short(rev)),
            "hive",
            format!(
                "{} problem(s) in its directives: it is not used at this revision, and nothing was changed",
                problems.len()
            ),
        )
        .with_hint("fix them in the hive (a pull request there), then run this again");
        problems.insert(0, head);
        if problems.len() > PROBLEMS_LISTED + 1 {
            let more = problems.len() - PROBLEMS_LISTED - 1;
            problems.truncate(PROBLEMS_LISTED + 1);
            problems.push(Problem::error(
                format!("hive {name} at {}", short(rev)),
                "hive",
                format!("{more} more problem(s), not listed"),
            ));
        }
        return Err(Error::Invalid(problems));
    }
    let hives = hives_dir(common_dir);
    let tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}@"))
        .tempdir_in(&hives)
        .map_err(|e| Error::io(&hives, e))?;
    let mut blobs = Vec::with_capacity(files.len() * 20);
    let mut ids: Vec<crate::reviewed::Blob> = Vec::with_capacity(files.len());
    for (file, bytes) in &files {
        let path = tmp.path().join(file);
        std::fs::write(&path, bytes).map_err(|e| Error::io(&path, e))?;
        ids.extend(crate::reviewed::blob_id(bytes));
    }
    // The files' blob ids, for the review (see `crate::pins::BLOBS`).
    ids.sort_unstable();
    ids.iter().for_each(|b| blobs.extend_from_slice(b));
    let path = tmp.path().join(crate::pins::BLOBS);
    std::fs::write(&path, &blobs).map_err(|e| Error::io(&path, e))?;
    let kept = tmp.keep();
    if let Err(e) = std::fs::rename(&kept, &dir) {
        let _ = std::fs::remove_dir_all(&kept);
        // Another process wrote it first: the same content.
        if !own_folder(&dir)? {
            return Err(Error::io(&dir, e));
        }
    }
    Ok(dir)
}

/// Fetches and writes out the pins of the trusted revision's subscriptions
/// that are not here yet, so that a project's reviewed hive directives are
/// known as such. Best effort: what fails is left as not reviewed.
pub fn fetch_trusted(store: &Store, repo: &gix::Repository, commit: gix::ObjectId) {
    for sub in trusted_subscriptions(repo, commit) {
        if pinned_dir(&store.common_dir, &sub.name, &sub.rev).is_dir() {
            continue;
        }
        if fetch(&store.common_dir, &store.root, &sub.name, &sub.url).is_ok() {
            let _ = materialize(&store.common_dir, &sub.name, &sub.rev);
        }
    }
}
