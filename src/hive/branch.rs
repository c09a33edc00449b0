//! Writing to a hive: one commit on a branch of the hive, pushed to it,
//! for `hive promote` and `hive report`.
//!
//! The commit is made with git's plumbing in the hive's mirror (in the
//! project's git dir) with a throwaway index, so that no work tree is
//! touched, the hive's own checkout included; it is the user's, with the
//! identity git would commit with in the project. The push never
//! overwrites: a branch the hive has is moved only from the tip this
//! command read.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::config::HiveSubscription;
use crate::error::{Error, Result};
use crate::reviewed::Review;
use crate::store::Store;

use super::{mirror_dir, run_git, run_local};

/// Refuses a branch name git would refuse.
pub(crate) fn check_branch_name(branch: &str) -> Result<()> {
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
pub(crate) struct HiveWrite<'a> {
    pub(crate) sub: &'a HiveSubscription,
    mirror: PathBuf,
    /// Where the throwaway index goes: beside the mirror.
    scratch: PathBuf,
    /// The hive's default branch's commit, as just fetched.
    pub(crate) head: String,
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
    /// the work tree `root`: the project's config, the user's, the environment.
    fn of(root: &Path, var: &str) -> Result<Ident> {
        let mut cmd = Command::new("git");
        cmd.current_dir(root)
            .args(["var", var])
            .stdin(Stdio::null());
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
    pub(crate) fn open(store: &Store, review: &Review, sub: &'a HiveSubscription) -> Result<Self> {
        let author = Ident::of(&store.root, "GIT_AUTHOR_IDENT")?;
        let committer = Ident::of(&store.root, "GIT_COMMITTER_IDENT")?;
        trusted_url(review, sub)?;
        let head = super::fetch(&store.common_dir, &store.root, &sub.name, &sub.url)?;
        Ok(HiveWrite {
            sub,
            mirror: mirror_dir(&store.common_dir, &sub.name),
            scratch: super::hives_dir(&store.common_dir),
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

    /// What `commit`'s tree holds at `rel`: its object id and mode.
    fn entry(
        &self,
        repo: &gix::Repository,
        commit: &str,
        rel: &str,
    ) -> Result<Option<(gix::ObjectId, gix::object::tree::EntryMode)>> {
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
            .map(|e| (e.oid().to_owned(), e.mode())))
    }

    /// The blob at `rel` in `commit`'s tree, if a regular file is there;
    /// one over `limit` bytes (or a link, a folder) is refused.
    pub(crate) fn read_file(&self, commit: &str, rel: &str, limit: u64) -> Result<Option<Vec<u8>>> {
        let repo = self.repo()?;
        let Some((oid, mode)) = self.entry(&repo, commit, rel)? else {
            return Ok(None);
        };
        if !mode.is_blob() || mode.is_link() {
            return Err(Error::usage(
                format!(
                    "{rel} of hive `{}` at {} is not a regular file",
                    self.sub.name,
                    super::short(commit)
                ),
                "ask the hive's owners to make it one: a link there is never read",
            ));
        }
        let git_err = |e: &dyn std::fmt::Display| Error::git(self.what(rel), e.to_string());
        let size = repo.find_header(oid).map_err(|e| git_err(&e))?.size();
        if size > limit {
            return Err(Error::usage(
                format!("{rel} of hive `{}` is over {limit} bytes", self.sub.name),
                "ask the hive's owners about it: it is not read",
            ));
        }
        let blob = repo.find_object(oid).map_err(|e| git_err(&e))?;
        Ok(Some(blob.data.clone()))
    }

    /// Whether `commit`'s tree has anything at `rel`.
    pub(crate) fn has_path(&self, commit: &str, rel: &str) -> Result<bool> {
        Ok(self.entry(&self.repo()?, commit, rel)?.is_some())
    }

    /// The commit at `refs/heads/<branch>` of the hive as [`HiveWrite::open`]
    /// fetched it (pruned: a branch the hive deleted is gone). Should it
    /// move after, the push's lease refuses to overwrite it.
    pub(crate) fn remote_branch(&self, branch: &str) -> Result<Option<String>> {
        let repo = self.repo()?;
        let Some(mut r) = repo
            .try_find_reference(format!("refs/heads/{branch}").as_str())
            .map_err(|e| Error::git(self.what("cannot read its branches"), e))?
        else {
            return Ok(None);
        };
        let id = r
            .peel_to_id()
            .map_err(|e| Error::git(self.what(&format!("cannot read its branch {branch}")), e))?;
        Ok(Some(id.to_string()))
    }

    /// A commit in the mirror whose parent is `parent` and whose tree is
    /// the parent's with `files` (path, bytes) written, by the user.
    pub(crate) fn commit(
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
            let blob = run_local(hash, Some(bytes), &self.what("cannot write a file"))?;
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
        run_local(
            commit,
            Some(message.as_bytes()),
            &self.what("cannot make the commit"),
        )
    }

    /// Pushes `commit` to the hive's `refs/heads/<branch>`, which must be
    /// at `expect` (`None`: must not exist): a branch someone else moved or
    /// made meanwhile is not overwritten.
    pub(crate) fn push(&self, commit: &str, branch: &str, expect: Option<&str>) -> Result<()> {
        let full = format!("refs/heads/{branch}");
        let mut cmd = self.git();
        cmd.args([
            "push",
            "--quiet",
            "--porcelain",
            &format!("--force-with-lease={full}:{}", expect.unwrap_or("")),
            "--",
            &self.sub.url,
            &format!("{commit}:{full}"),
        ]);
        run_git(
            cmd,
            &self.what(&format!("cannot push {branch} to {}", self.sub.url)),
        )
        .map(drop)
    }
}

/// Promote and report push to a hive: only to the URL the reviewed config
/// names. A pull request that changes a hive's URL (say, to a repository it
/// adds, whose hooks a push would run) is refused here until it is merged.
fn trusted_url(review: &Review, sub: &HiveSubscription) -> Result<()> {
    let trusted = review.trusted_subscriptions();
    match trusted.iter().find(|t| t.name == sub.name) {
        Some(t) if t.url == sub.url => Ok(()),
        Some(t) => Err(Error::usage(
            format!(
                "hive `{}` is {} here, but {} on the trusted revision: nothing is pushed to a URL not yet reviewed",
                sub.name, sub.url, t.url
            ),
            "merge the change of URL first (or push from the trusted revision's checkout)",
        )),
        None => Err(Error::usage(
            format!(
                "hive `{}` is not subscribed on the trusted revision: nothing is pushed to a hive not yet reviewed",
                sub.name
            ),
            "commit the subscription (`.swarm/config.toml`) on the default branch first",
        )),
    }
}
