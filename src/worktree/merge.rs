//! `worktree merge`: the task's commits cherry-picked oldest first, and
//! on a stop every pick rolled back, the index file's bytes included.

use std::path::Path;

use crate::error::Result;
use crate::store::Repo;

use super::git::{branch_tip, canonical, commit_of, git, ok, z_list};
use super::{Merged, Picked, listing, load, no_record, refuse};

/// Paths named on one git command line.
const PATHS_PER_CALL: usize = 1000;

/// Cherry-picks `task`'s commits since its base onto the current branch of
/// `repo`, oldest first; on a stop, rolls back every pick and the index.
pub fn merge(repo: &Repo, task: &str) -> Result<Merged> {
    let record = load(repo, task)?.ok_or_else(|| no_record(task))?;
    if canonical(&record.path) == repo.root {
        return Err(refuse(
            format!("this is the task's own worktree ({})", repo.root.display()),
            "run `git swarm worktree merge` from the worktree whose branch should receive the commits",
        ));
    }
    for state in [
        "CHERRY_PICK_HEAD",
        "MERGE_HEAD",
        "REVERT_HEAD",
        "rebase-merge",
        "rebase-apply",
        "sequencer",
    ] {
        if repo.git_dir.join(state).exists() {
            return Err(refuse(
                format!("a git operation is in progress here ({state} exists)"),
                "finish it or abort it (`git cherry-pick --abort`, `git merge --abort`, `git rebase --abort`) first",
            ));
        }
    }
    let Some(orig) = commit_of(repo, "HEAD")? else {
        return Err(refuse(
            "the current branch has no commit yet".into(),
            "commit something first: the picks go on top of HEAD",
        ));
    };
    let onto = git(repo, &["symbolic-ref", "--quiet", "--short", "HEAD"])?;
    let onto = if onto.status.success() {
        String::from_utf8_lossy(&onto.stdout).trim().to_owned()
    } else {
        "HEAD".to_owned()
    };
    let Some(tip) = branch_tip(repo, &record.branch)? else {
        return Err(refuse(
            format!("the branch `{}` no longer exists", record.branch),
            &format!(
                "there is nothing to merge; `git swarm worktree abort {task}` removes what is left"
            ),
        ));
    };
    let range = format!("{}..{tip}", record.base);
    let merges = ok(
        git(repo, &["rev-list", "--merges", &range])?,
        "listing the task's commits",
    )?;
    if !merges.trim().is_empty() {
        return Err(refuse(
            format!("`{}` has merge commits since its base", record.branch),
            "cherry-picks take single-parent commits: rebase the task branch onto its base without merges first",
        ));
    }
    let all = ok(
        git(repo, &["rev-list", "--count", &range])?,
        "counting the task's commits",
    )?
    .trim()
    .parse::<usize>()
    .unwrap_or(0);
    // A commit whose change the current branch already has (an earlier
    // merge, say) is left out, so that merging twice adds nothing.
    let symmetric = format!("HEAD...{tip}");
    let not_base = format!("^{}", record.base);
    let commits: Vec<String> = ok(
        git(
            repo,
            &[
                "rev-list",
                "--reverse",
                "--topo-order",
                "--cherry-pick",
                "--right-only",
                &symmetric,
                &not_base,
            ],
        )?,
        "listing the task's commits",
    )?
    .lines()
    .map(str::to_owned)
    .collect();
    let already = all.saturating_sub(commits.len());
    if commits.is_empty() {
        return Ok(Merged::Nothing {
            branch: record.branch,
            already,
        });
    }
    let dirty = z_list(&ok(
        git(
            repo,
            &["status", "--porcelain=v1", "-z", "--untracked-files=no"],
        )?,
        "reading the status",
    )?);
    if !dirty.is_empty() {
        let paths: Vec<String> = dirty
            .iter()
            .filter(|e| e.len() > 3)
            .map(|e| e[3..].to_owned())
            .collect();
        return Err(refuse(
            format!(
                "the working tree has uncommitted changes: {}",
                listing(&paths)
            ),
            "commit them, or set them aside in a branch, then merge again",
        ));
    }
    let touched = z_list(&ok(
        git(
            repo,
            &[
                "log",
                "--format=",
                "--name-only",
                "-z",
                "--no-renames",
                &range,
            ],
        )?,
        "listing the files the task changed",
    )?);
    // Ignored files count too: a pick would overwrite them without a word.
    // In chunks, so that a task touching many files stays within argv limits.
    let mut in_the_way = Vec::new();
    for chunk in touched.chunks(PATHS_PER_CALL) {
        let mut args: Vec<&str> = vec!["--literal-pathspecs", "ls-files", "-z", "--others", "--"];
        args.extend(chunk.iter().map(String::as_str));
        in_the_way.extend(z_list(&ok(
            git(repo, &args)?,
            "looking for untracked files",
        )?));
    }
    if !in_the_way.is_empty() {
        return Err(refuse(
            format!(
                "untracked files would be overwritten by the task's commits: {}",
                listing(&in_the_way)
            ),
            "move them away (or commit them), then merge again",
        ));
    }
    let index_path = repo.git_dir.join("index");
    let saved_index = std::fs::read(&index_path).ok();
    let mut picks = Vec::new();
    for commit in &commits {
        let out = git(
            repo,
            &[
                "cherry-pick",
                "--allow-empty",
                "--keep-redundant-commits",
                commit,
            ],
        )?;
        if out.status.success() {
            let to = commit_of(repo, "HEAD")?.unwrap_or_default();
            picks.push(Picked {
                from: commit.clone(),
                to,
                subject: subject(repo, commit)?,
            });
            continue;
        }
        let files = z_list(&ok(
            git(repo, &["diff", "--name-only", "-z", "--diff-filter=U"])?,
            "listing the conflicting files",
        )?);
        let git_said = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        roll_back(repo, &orig, saved_index.as_deref(), &index_path)?;
        return Ok(Merged::Conflict {
            commit: commit.clone(),
            subject: subject(repo, commit)?,
            files,
            git_said,
            rolled_back: picks.len(),
        });
    }
    Ok(Merged::Picked {
        onto,
        picks,
        already,
    })
}

fn subject(repo: &Repo, commit: &str) -> Result<String> {
    Ok(ok(
        git(repo, &["log", "-1", "--format=%s", commit])?,
        "reading a commit's subject",
    )?
    .trim()
    .to_owned())
}

/// Puts the branch, the work tree and the index back as they were before
/// the picks: the picks abandoned, the branch reset to `orig` (the work
/// tree was clean, so a hard reset restores every tracked file), then the
/// index file's own bytes put back.
fn roll_back(repo: &Repo, orig: &str, index: Option<&[u8]>, index_path: &Path) -> Result<()> {
    if repo.git_dir.join("CHERRY_PICK_HEAD").exists() || repo.git_dir.join("sequencer").exists() {
        let _ = git(repo, &["cherry-pick", "--quit"])?;
    }
    ok(
        git(repo, &["reset", "--hard", "--quiet", orig])?,
        "rolling back the picks",
    )?;
    if let Some(bytes) = index {
        crate::safe_fs::replace(index_path, bytes)?;
    }
    Ok(())
}
