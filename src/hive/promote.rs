//! `git swarm hive promote`: a project's directive proposed to a hive, as
//! a branch of the hive for its owners to review (DESIGN §7f,
//! docs/hive.md).
//!
//! Only knowledge that has proven itself leaves a project: the directive
//! must be the project's own, active, pass the actionability gate, be on
//! the project's trusted revision (reviewed there, not minted by a machine
//! and left unread), and meet the hive's bar (`[promotion]` of the hive's
//! config.toml at its head): applied in enough delegations, violated few
//! enough times. Nothing is merged into the hive: the branch is pushed for
//! a pull request, and projects take the lesson when they move their pin.
//!
//! The commit is made with git's plumbing in the hive's mirror, with a
//! throwaway index: the hive's work tree, if it has one, is never touched,
//! and the commit is the user's (their git identity, their hooks on the
//! hive's side).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::config::{HiveSubscription, PromotionConfig};
use crate::directive::Status;
use crate::error::{Error, Result};
use crate::event::Event;
use crate::problem::Problem;
use crate::reviewed::Review;
use crate::store::Store;

use super::report::{Signals, signals};
use super::{mirror_dir, run_git};

/// What a promotion asks for.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// The project's directive.
    pub id: &'a str,
    pub hive: &'a HiveSubscription,
    /// The hive branch to write (default: [`default_branch`]).
    pub branch: Option<&'a str>,
    /// Where the command runs: a hive given by a relative path is found from here.
    pub cwd: &'a Path,
    /// The project's name (see [`project_name`]).
    pub project: &'a str,
    /// The project's current commit, named in the provenance.
    pub head: Option<&'a str>,
}

/// How a promotion ended.
#[derive(Debug, Clone)]
pub enum Promotion {
    /// The directive falls short of the hive's bar: nothing was written.
    Blocked {
        record: Signals,
        bar: PromotionConfig,
        /// One sentence per shortfall.
        reasons: Vec<String>,
    },
    Pushed(Promoted),
}

/// A promotion pushed to the hive.
#[derive(Debug, Clone)]
pub struct Promoted {
    pub branch: String,
    pub commit: String,
    /// The hive's head the branch starts from.
    pub base: String,
    pub record: Signals,
    /// The provenance written into the directive's `source`.
    pub source: String,
}

/// The project's name in a hive: its root folder's name, in the letters a
/// branch name and an event field hold (lowercase, digits, `-`, `_`), at
/// most 40; `project` when nothing is left.
pub fn project_name(root: &Path) -> String {
    let raw = root
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let mut name = String::new();
    for c in raw.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '_' {
            c
        } else {
            '-'
        };
        if !(c == '-' && (name.is_empty() || name.ends_with('-'))) {
            name.push(c);
        }
    }
    let name: String = name.trim_end_matches('-').chars().take(40).collect();
    let name = name.trim_end_matches('-');
    if name.is_empty() {
        "project".to_owned()
    } else {
        name.to_owned()
    }
}

/// The project's name in a hive (see [`project_name`]): of its main
/// worktree's folder, so that a linked worktree reports as its project.
pub fn project_name_of(store: &Store) -> String {
    let main = store
        .common_dir
        .file_name()
        .filter(|n| *n == ".git")
        .and(store.common_dir.parent());
    project_name(main.unwrap_or(&store.root))
}

/// The branch a promotion goes to unless told: `promote/<project>/<id>`.
pub fn default_branch(project: &str, id: &str) -> String {
    format!("promote/{project}/{id}")
}

/// The provenance line a promoted directive carries in `source`.
pub fn provenance(project: &str, head: Option<&str>, record: &Signals) -> String {
    let at = head.map_or_else(String::new, |c| format!(" at {}", super::short(c)));
    format!(
        "promoted from {project}{at}: shown {}, applied {}, violated {} (git swarm hive promote)",
        record.shown, record.applied, record.violated
    )
}

/// What keeps `record` from the hive's `bar`: one sentence each.
pub fn shortfalls(record: &Signals, bar: &PromotionConfig) -> Vec<String> {
    let mut out = Vec::new();
    if record.applied < u64::from(bar.min_applied) {
        out.push(format!(
            "acknowledged as applied in {} delegation{}; the hive asks for at least {}",
            record.applied,
            if record.applied == 1 { "" } else { "s" },
            bar.min_applied
        ));
    }
    if record.violated > u64::from(bar.max_violations) {
        out.push(format!(
            "violated {} time{}; the hive allows at most {}",
            record.violated,
            if record.violated == 1 { "" } else { "s" },
            bar.max_violations
        ));
    }
    out
}

/// The project's directive `id` as a candidate: its file's text, once it
/// is the project's own, active, actionable and reviewed. Each refusal is
/// bad input (exit 2) with what to do.
pub fn candidate(store: &Store, review: &Review, id: &str) -> Result<String> {
    if !crate::directive::is_valid_id(id) {
        return Err(Error::usage(
            format!("`{}` is not a directive id", id.escape_debug()),
            "`git swarm list` shows this project's directives",
        ));
    }
    let rel = format!(".swarm/directives/{id}.toml");
    let path = store.directives_dir().join(format!("{id}.toml"));
    let bytes = match crate::safe_fs::read(&path, crate::directive::limits::FILE_MAX) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(not_the_projects(store, id));
        }
        Err(e) => return Err(Error::io(&path, e)),
    };
    let entry = crate::index::entry_from_bytes(&bytes, &rel, &format!("{id}.toml"), false);
    let errors: Vec<Problem> = entry
        .problems
        .iter()
        .filter(|p| p.is_error())
        .cloned()
        .collect();
    let Some(directive) = entry.directive.as_ref().filter(|_| errors.is_empty()) else {
        // The gate's problems name each field with line and column.
        return Err(Error::Invalid(errors));
    };
    if let Err(failure) = crate::directive::check_gate(directive) {
        return Err(Error::usage(
            format!(
                "`{id}` does not pass the actionability gate ({}): {}",
                failure.reason.as_str(),
                failure.detail()
            ),
            "fix it in the project first (`git swarm edit`); only an actionable lesson goes to a hive",
        ));
    }
    if directive.status == Status::Retired {
        return Err(Error::usage(
            format!("`{id}` is retired"),
            "only an active directive goes to a hive; `git swarm edit` brings one back",
        ));
    }
    if !review.is_reviewed(entry.blob.as_ref()) {
        return Err(Error::usage(
            format!(
                "`{id}` is not reviewed: its content is not on {}",
                review.revision_name()
            ),
            "a hive takes only reviewed lessons: commit it and merge it there (through a pull request), then promote it",
        ));
    }
    String::from_utf8(bytes).map_err(|_| {
        Error::usage(
            format!("{rel} is not UTF-8"),
            "re-save it as UTF-8, then run this again",
        )
    })
}

/// Why `id`, which the project has no file of, cannot be promoted.
fn not_the_projects(store: &Store, id: &str) -> Error {
    if let Some((_, sub)) = super::directive_file(store, id) {
        return Error::usage(
            format!(
                "`{id}` is a directive of hive `{}` ({}), not this project's",
                sub.name,
                super::origin_name(&sub.name, id)
            ),
            "only a project's own directive is promoted; change a hive's directive through a pull request on the hive",
        );
    }
    if store
        .quarantine_dir()
        .join(format!("{id}.toml"))
        .symlink_metadata()
        .is_ok()
    {
        return Error::usage(
            format!("`{id}` is in quarantine: it did not pass the actionability gate"),
            "fix it and `git swarm harden` promotes it into the project's directives first",
        );
    }
    Error::usage(
        format!("this project has no directive `{id}`"),
        "`git swarm list` shows this project's directives",
    )
}

/// `text` (a directive file) with `source` set to `source`, every other
/// byte kept as written.
pub fn with_source(text: &str, source: &str) -> Result<String> {
    let mut doc = text.parse::<toml_edit::DocumentMut>().map_err(|e| {
        Error::usage(
            format!("the directive does not parse: {e}"),
            "`git swarm validate` names the problem",
        )
    })?;
    doc.insert("source", toml_edit::value(source));
    Ok(doc.to_string())
}

/// Promotes the project's directive `req.id` into the hive `req.hive`:
/// checks it (see [`candidate`]), fetches the hive, reads its bar and
/// refuses an id the hive's head already has, then pushes a branch whose
/// one commit adds the directive with its provenance. `events` is the
/// project's log (see [`signals`]).
pub fn promote(
    store: &Store,
    review: &Review,
    events: &[Event],
    req: &Request<'_>,
) -> Result<Promotion> {
    let text = candidate(store, review, req.id)?;
    let record = signals(events).get(req.id).copied().unwrap_or_default();
    let branch = match req.branch {
        Some(b) => b.to_owned(),
        None => default_branch(req.project, req.id),
    };
    check_branch_name(&branch)?;
    let hive = HiveWrite::open(store, req.cwd, req.hive)?;
    let bar = hive.bar()?;
    let rel = format!(".swarm/directives/{}.toml", req.id);
    if hive.has_path(&hive.head, &rel)? {
        return Err(Error::usage(
            format!(
                "hive `{}` already has `{}` at its head ({})",
                req.hive.name,
                req.id,
                super::short(&hive.head)
            ),
            "a hive's directive changes through a pull request on the hive; `git swarm hive update` takes its newest",
        ));
    }
    let reasons = shortfalls(&record, &bar);
    if !reasons.is_empty() {
        return Ok(Promotion::Blocked {
            record,
            bar,
            reasons,
        });
    }
    if hive.remote_branch(&branch)?.is_some() {
        return Err(Error::usage(
            format!("hive `{}` already has a branch {branch}", req.hive.name),
            "--branch names another; or see the pull request of that one",
        ));
    }
    let source = provenance(req.project, req.head, &record);
    let promoted = with_source(&text, &source)?;
    // What the hive will check when a project takes it.
    let entry = crate::index::entry_from_bytes(
        promoted.as_bytes(),
        &rel,
        &format!("{}.toml", req.id),
        false,
    );
    let errors: Vec<Problem> = entry
        .problems
        .into_iter()
        .filter(Problem::is_error)
        .collect();
    if !errors.is_empty() {
        return Err(Error::Invalid(errors));
    }
    let lesson = entry.directive.map(|d| d.lesson).unwrap_or_default();
    let message = format!(
        "Promote `{id}` from {project}\n\n{lesson}\n\n\
         Its record in {project}: shown in {shown} delegations, applied in {applied}, \
         violated {violated} times, {prevented} tool calls refused by its guard. \
         The hive asks for at least {min} applied and at most {max} violations.\n\n\
         ({source})\n",
        id = req.id,
        project = req.project,
        shown = record.shown,
        applied = record.applied,
        violated = record.violated,
        prevented = record.prevented,
        min = bar.min_applied,
        max = bar.max_violations,
    );
    let commit = hive.commit(&hive.head, &[(rel, promoted.into_bytes())], &message)?;
    hive.push(&commit, &branch, None)?;
    Ok(Promotion::Pushed(Promoted {
        branch,
        commit,
        base: hive.head.clone(),
        record,
        source,
    }))
}

/// Refuses a branch name git would refuse.
pub fn check_branch_name(branch: &str) -> Result<()> {
    let mut cmd = super::git();
    cmd.args(["check-ref-format", &format!("refs/heads/{branch}")]);
    let ok = cmd.output().is_ok_and(|o| o.status.success());
    if ok && !branch.starts_with('-') {
        Ok(())
    } else {
        Err(Error::usage(
            format!("`{}` is not a branch name git takes", branch.escape_debug()),
            "name the branch with --branch (e.g. promote/my-project/the-id)",
        ))
    }
}

/// A hive being written to: its mirror fetched, its head, where it is
/// pushed to, and whose commits these are.
pub(super) struct HiveWrite<'a> {
    sub: &'a HiveSubscription,
    mirror: PathBuf,
    /// Where the throwaway index goes: beside the mirror.
    scratch: PathBuf,
    /// What git pushes to: the URL, or a local path made absolute.
    target: String,
    /// The hive's default branch's commit, as just fetched.
    pub(super) head: String,
    /// The user's identity, as git would commit in the project.
    author: Ident,
    committer: Ident,
}

/// A git identity: name, email and date (git's internal format).
#[derive(Debug, Clone)]
struct Ident {
    name: String,
    email: String,
    date: String,
}

impl Ident {
    /// `git var GIT_AUTHOR_IDENT` (or committer) as git works it out in
    /// `cwd`: the project's config, the user's, the environment.
    fn of(cwd: &Path, var: &str) -> Result<Ident> {
        let mut cmd = Command::new("git");
        cmd.current_dir(cwd).args(["var", var]).stdin(Stdio::null());
        let line = run_git(cmd, &format!("cannot tell who you are to git ({var})")).map_err(
            |e| match e {
                Error::Git { context, source } => Error::Refused {
                    message: context,
                    hint: Some(
                        "set your name and email: git config --global user.name …; git config --global user.email …"
                            .to_owned(),
                    ),
                    source,
                },
                e => e,
            },
        )?;
        let (Some(lt), Some(gt)) = (line.rfind('<'), line.rfind('>')) else {
            return Err(Error::git(
                format!("git var {var}"),
                format!("`{line}` is not an identity"),
            ));
        };
        Ok(Ident {
            name: line[..lt].trim().to_owned(),
            email: line[lt + 1..gt].to_owned(),
            date: line[gt + 1..].trim().to_owned(),
        })
    }
}

impl<'a> HiveWrite<'a> {
    /// Fetches the hive `sub` and knows the user, before anything is written.
    pub(super) fn open(store: &Store, cwd: &Path, sub: &'a HiveSubscription) -> Result<Self> {
        let author = Ident::of(cwd, "GIT_AUTHOR_IDENT")?;
        let committer = Ident::of(cwd, "GIT_COMMITTER_IDENT")?;
        let head = super::fetch(&store.common_dir, cwd, &sub.name, &sub.url)?;
        let target = if super::is_local(&sub.url) && !sub.url.starts_with("file://") {
            cwd.join(&sub.url).to_string_lossy().into_owned()
        } else {
            sub.url.clone()
        };
        Ok(HiveWrite {
            sub,
            mirror: mirror_dir(&store.common_dir, &sub.name),
            scratch: super::hives_dir(&store.common_dir),
            target,
            head,
            author,
            committer,
        })
    }

    fn git(&self) -> Command {
        let mut cmd = super::git();
        cmd.arg("-C").arg(&self.mirror);
        cmd
    }

    fn what(&self, doing: &str) -> String {
        format!("hive `{}`: {doing}", self.sub.name)
    }

    fn repo(&self) -> Result<gix::Repository> {
        gix::open(&self.mirror).map_err(|e| Error::git(self.what("cannot open its mirror"), e))
    }

    /// The blob at `rel` in `commit`'s tree, if a regular file is there;
    /// one over `limit` bytes (or a link, a folder) is refused.
    pub(super) fn read_file(&self, commit: &str, rel: &str, limit: u64) -> Result<Option<Vec<u8>>> {
        let repo = self.repo()?;
        let git_err = |e: &dyn std::fmt::Display| Error::git(self.what(rel), e.to_string());
        let id = gix::ObjectId::from_hex(commit.as_bytes()).map_err(|e| git_err(&e))?;
        let tree = repo
            .find_commit(id)
            .map_err(|e| git_err(&e))?
            .tree()
            .map_err(|e| git_err(&e))?;
        let Some(entry) = tree.lookup_entry_by_path(rel).map_err(|e| git_err(&e))? else {
            return Ok(None);
        };
        if !entry.mode().is_blob() || entry.mode().is_link() {
            return Err(Error::usage(
                format!(
                    "{rel} of hive `{}` at {} is not a regular file",
                    self.sub.name,
                    super::short(commit)
                ),
                "ask the hive's owners to make it one: a link there is never read",
            ));
        }
        let size = repo
            .find_header(entry.oid())
            .map_err(|e| git_err(&e))?
            .size();
        if size > limit {
            return Err(Error::usage(
                format!("{rel} of hive `{}` is over {limit} bytes", self.sub.name),
                "ask the hive's owners about it: it is not read",
            ));
        }
        let blob = repo.find_object(entry.oid()).map_err(|e| git_err(&e))?;
        Ok(Some(blob.data.clone()))
    }

    /// Whether `commit`'s tree has anything at `rel`.
    fn has_path(&self, commit: &str, rel: &str) -> Result<bool> {
        let repo = self.repo()?;
        let git_err = |e: &dyn std::fmt::Display| Error::git(self.what(rel), e.to_string());
        let id = gix::ObjectId::from_hex(commit.as_bytes()).map_err(|e| git_err(&e))?;
        let tree = repo
            .find_commit(id)
            .map_err(|e| git_err(&e))?
            .tree()
            .map_err(|e| git_err(&e))?;
        Ok(tree
            .lookup_entry_by_path(rel)
            .map_err(|e| git_err(&e))?
            .is_some())
    }

    /// The hive's bar: `[promotion]` of its `.swarm/config.toml` at its
    /// head (the defaults when it has none). A config that does not parse
    /// is refused, naming its problems.
    fn bar(&self) -> Result<PromotionConfig> {
        let rel = ".swarm/config.toml";
        let Some(bytes) = self.read_file(&self.head, rel, crate::store::CONFIG_MAX)? else {
            return Ok(PromotionConfig::default());
        };
        let text = String::from_utf8(bytes).map_err(|_| {
            Error::usage(
                format!("{rel} of hive `{}` is not UTF-8", self.sub.name),
                "ask the hive's owners to fix it",
            )
        })?;
        let (config, problems) =
            crate::config::Config::parse(&text, &format!("hive:{}/{rel}", self.sub.name));
        let errors: Vec<Problem> = problems.into_iter().filter(Problem::is_error).collect();
        if !errors.is_empty() {
            return Err(Error::Invalid(errors));
        }
        Ok(config.promotion)
    }

    /// The commit at `refs/heads/<branch>` of the hive itself, now (not
    /// the mirror's copy, which keeps a branch the hive has deleted).
    pub(super) fn remote_branch(&self, branch: &str) -> Result<Option<String>> {
        let full = format!("refs/heads/{branch}");
        let mut cmd = self.git();
        cmd.args(["ls-remote", "--", &self.target, &full]);
        let out = run_git(cmd, &self.what("cannot list its branches"))?;
        let Some(tip) = out.lines().find_map(|l| {
            let (id, name) = l.split_once('\t')?;
            (name == full).then(|| id.to_owned())
        }) else {
            return Ok(None);
        };
        // Fetched a moment ago, unless it moved since.
        let mut have = self.git();
        have.args(["cat-file", "-e", &format!("{tip}^{{commit}}")]);
        if run_git(have, "").is_err() {
            return Err(Error::usage(
                format!(
                    "the branch {branch} of hive `{}` moved while it was fetched",
                    self.sub.name
                ),
                "run this again",
            ));
        }
        Ok(Some(tip))
    }

    /// A commit in the mirror whose parent is `parent` and whose tree is
    /// the parent's with `files` (path, bytes) written, by the user.
    pub(super) fn commit(
        &self,
        parent: &str,
        files: &[(String, Vec<u8>)],
        message: &str,
    ) -> Result<String> {
        let scratch = tempfile::Builder::new()
            .prefix(".promote-")
            .tempdir_in(&self.scratch)
            .map_err(|e| Error::io(&self.scratch, e))?;
        let index = scratch.path().join("index");
        let with_index = |args: &[&str]| {
            let mut cmd = self.git();
            cmd.env("GIT_INDEX_FILE", &index).args(args);
            cmd
        };
        run_git(
            with_index(&["read-tree", parent]),
            &self.what("cannot read its tree"),
        )?;
        for (rel, bytes) in files {
            let mut hash = self.git();
            hash.args(["hash-object", "-w", "--stdin"]);
            let blob = run_with_input(hash, bytes, &self.what("cannot write a file"))?;
            run_git(
                with_index(&[
                    "update-index",
                    "--add",
                    "--cacheinfo",
                    &format!("100644,{blob},{rel}"),
                ]),
                &self.what("cannot stage a file"),
            )?;
        }
        let tree = run_git(
            with_index(&["write-tree"]),
            &self.what("cannot write a tree"),
        )?;
        let mut commit = self.git();
        commit
            .args(["commit-tree", &tree, "-p", parent, "-F", "-"])
            .env("GIT_AUTHOR_NAME", &self.author.name)
            .env("GIT_AUTHOR_EMAIL", &self.author.email)
            .env("GIT_AUTHOR_DATE", &self.author.date)
            .env("GIT_COMMITTER_NAME", &self.committer.name)
            .env("GIT_COMMITTER_EMAIL", &self.committer.email)
            .env("GIT_COMMITTER_DATE", &self.committer.date);
        run_with_input(
            commit,
            message.as_bytes(),
            &self.what("cannot make the commit"),
        )
    }

    /// Pushes `commit` to the hive's `refs/heads/<branch>`, which must be
    /// at `expect` (`None`: must not exist): a branch someone else moved or
    /// made meanwhile is not overwritten.
    pub(super) fn push(&self, commit: &str, branch: &str, expect: Option<&str>) -> Result<()> {
        let full = format!("refs/heads/{branch}");
        let mut cmd = self.git();
        cmd.args([
            "push",
            "--quiet",
            "--porcelain",
            &format!("--force-with-lease={full}:{}", expect.unwrap_or("")),
            "--",
            &self.target,
            &format!("{commit}:{full}"),
        ]);
        run_git(
            cmd,
            &self.what(&format!("cannot push {branch} to {}", self.sub.url)),
        )
        .map(drop)
    }
}

/// Runs `cmd` with `input` on its standard input; its standard output,
/// trimmed, or an error with what it said.
fn run_with_input(mut cmd: Command, input: &[u8], what: &str) -> Result<String> {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .map_err(|e| Error::git(format!("{what}: cannot run git"), e.to_string()))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(input)
            .map_err(|e| Error::git(what.to_owned(), e.to_string()))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| Error::git(what.to_owned(), e.to_string()))?;
    if !out.status.success() {
        return Err(Error::git(
            what.to_owned(),
            String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_is_named_by_its_folder_in_branch_letters() {
        for (root, name) in [
            ("/work/My Project", "my-project"),
            ("/x/api.server", "api-server"),
            ("/x/--weird--", "weird"),
            ("/x/ünï", "n"),
            ("/x/§§", "project"),
            ("/", "project"),
        ] {
            assert_eq!(project_name(Path::new(root)), name, "{root}");
        }
        assert_eq!(project_name(Path::new(&"a".repeat(60))).len(), 40);
    }

    #[test]
    fn the_bar_names_each_shortfall() {
        let bar = PromotionConfig {
            min_applied: 2,
            max_violations: 0,
        };
        let record = Signals {
            shown: 3,
            applied: 1,
            violated: 1,
            prevented: 0,
        };
        assert_eq!(
            shortfalls(&record, &bar),
            [
                "acknowledged as applied in 1 delegation; the hive asks for at least 2",
                "violated 1 time; the hive allows at most 0"
            ]
        );
        let good = Signals {
            applied: 2,
            violated: 0,
            ..record
        };
        assert!(shortfalls(&good, &bar).is_empty());
    }

    #[test]
    fn the_source_is_set_and_the_rest_kept() {
        let text = "# why\nid = \"ab\"\nlesson = \"x\" # kept\nsource = \"PR 3\"\n";
        assert_eq!(
            with_source(text, "promoted").expect("parses"),
            "# why\nid = \"ab\"\nlesson = \"x\" # kept\nsource = \"promoted\"\n"
        );
        let none = with_source("id = \"ab\"\n", "p").expect("parses");
        assert_eq!(none, "id = \"ab\"\nsource = \"p\"\n");
    }
}
