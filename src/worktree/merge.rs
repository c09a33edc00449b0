//! `worktree merge`: the task's commits cherry-picked oldest first, off to
//! the side (`git merge-tree` and `git commit-tree`), and only when every
//! pick is made the branch moved and the files updated, at once.

use crate::error::Result;
use crate::store::Repo;

use super::git::{branch_tip, canonical, commit_of, git, git_with, ok, said, z_list};
use super::{Merged, Picked, listing, load, no_record, refuse, short};

/// Paths named on one git command line.
const PATHS_PER_CALL: usize = 1000;

/// Cherry-picks `task`'s commits since its base onto the current branch of
/// `repo`, oldest first; on a conflict nothing is changed.
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
    let version = git(repo, &["version"])?;
    if !new_enough(&String::from_utf8_lossy(&version.stdout)) {
        return Err(refuse(
            format!(
                "{} is too old to merge without touching the working tree",
                String::from_utf8_lossy(&version.stdout).trim()
            ),
            "`git swarm worktree merge` needs git 2.40 or later (`git merge-tree --merge-base`); or cherry-pick the task's commits yourself",
        ));
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
    let dirty = z_list(&ok(
        git(
            repo,
            &["status", "--porcelain=v1", "-z", "--untracked-files=no"],
        )?,
        "reading the status",
    )?);
    let paths = blocking_changes(&dirty, &touched);
    if !paths.is_empty() {
        return Err(refuse(
            format!(
                "the working tree has uncommitted changes: {}",
                listing(&paths)
            ),
            "commit them, or set them aside in a branch, then merge again",
        ));
    }
    let in_the_way = in_the_way(repo, &touched)?;
    if !in_the_way.is_empty() {
        return Err(refuse(
            format!(
                "untracked files would be overwritten by the task's commits: {}",
                listing(&in_the_way)
            ),
            "move them away (or commit them), then merge again",
        ));
    }
    // Every pick is made off to the side (merge-tree and commit-tree): a
    // conflict then leaves the branch, the index and the files untouched.
    let mut picks = Vec::new();
    let mut tip_now = orig.clone();
    for commit in &commits {
        match pick(repo, &tip_now, commit)? {
            Pick::Made(to) => {
                picks.push(Picked {
                    from: commit.clone(),
                    to: to.clone(),
                    subject: subject(repo, commit)?,
                });
                tip_now = to;
            }
            Pick::Conflict { files, git_said } => {
                return Ok(Merged::Conflict {
                    commit: commit.clone(),
                    subject: subject(repo, commit)?,
                    files,
                    git_said,
                    rolled_back: picks.len(),
                });
            }
        }
    }
    apply(repo, &orig, &tip_now)?;
    Ok(Merged::Picked {
        onto,
        picks,
        already,
    })
}

/// The uncommitted changes, from `git status --porcelain=v1 -z` entries,
/// that stop a merge: every one except an event log git-swarm itself keeps
/// appending to (`.swarm/events/*.jsonl`) that no pick touches — a check
/// run before the merge must not make the merge impossible.
fn blocking_changes(entries: &[String], touched: &[String]) -> Vec<String> {
    let mut paths = Vec::new();
    let mut entries = entries.iter();
    while let Some(e) = entries.next() {
        let Some(path) = e.get(3..) else { continue };
        // A rename or copy is followed by its source path, without a status.
        if matches!(e.as_bytes().first(), Some(b'R' | b'C'))
            && let Some(from) = entries.next()
        {
            paths.push(from.clone());
        }
        let own_log = path.starts_with(".swarm/events/") && path.ends_with(".jsonl");
        if !own_log || touched.iter().any(|t| t == path) {
            paths.push(path.to_owned());
        }
    }
    paths
}

/// The untracked files (ignored ones included) the picks would overwrite:
/// a touched path that exists untracked, or a folder of one that exists as
/// an untracked file or symlink where the task needs a folder.
fn in_the_way(repo: &Repo, touched: &[String]) -> Result<Vec<String>> {
    let mut found = Vec::new();
    // Ignored files count too: a pick would overwrite them without a word.
    // In chunks, so that a task touching many files stays within argv limits.
    for chunk in touched.chunks(PATHS_PER_CALL) {
        let mut args: Vec<&str> = vec!["--literal-pathspecs", "ls-files", "-z", "--others", "--"];
        args.extend(chunk.iter().map(String::as_str));
        found.extend(z_list(&ok(
            git(repo, &args)?,
            "looking for untracked files",
        )?));
    }
    let mut folders: Vec<String> = touched
        .iter()
        .flat_map(|p| {
            p.match_indices('/')
                .map(|(i, _)| p[..i].to_owned())
                .collect::<Vec<_>>()
        })
        .filter(|d| {
            std::fs::symlink_metadata(repo.root.join(d)).is_ok_and(|m| !m.file_type().is_dir())
        })
        .collect();
    folders.sort();
    folders.dedup();
    for chunk in folders.chunks(PATHS_PER_CALL) {
        let mut args: Vec<&str> = vec!["--literal-pathspecs", "ls-files", "-z", "--cached", "--"];
        args.extend(chunk.iter().map(String::as_str));
        let tracked = z_list(&ok(git(repo, &args)?, "looking for tracked files")?);
        found.extend(chunk.iter().filter(|d| !tracked.contains(d)).cloned());
    }
    found.sort();
    found.dedup();
    Ok(found)
}

enum Pick {
    Made(String),
    Conflict {
        files: Vec<String>,
        git_said: String,
    },
}

/// `commit` cherry-picked onto `onto` without touching any work tree: the
/// merge of `onto` and `commit` over `commit`'s parent, committed with
/// `commit`'s author, date and message, as `git cherry-pick` would.
fn pick(repo: &Repo, onto: &str, commit: &str) -> Result<Pick> {
    let parent = format!("--merge-base={commit}^");
    let out = git(
        repo,
        &[
            "merge-tree",
            "--write-tree",
            "-z",
            "--name-only",
            &parent,
            onto,
            commit,
        ],
    )?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    match out.status.code() {
        Some(0) => {}
        Some(1) => return Ok(conflict(&text)),
        _ => {
            return Err(refuse(
                format!(
                    "git could not merge {} onto {}: {}",
                    short(commit),
                    short(onto),
                    said(&out.stderr)
                ),
                "nothing was changed; `git merge-tree` needs git 2.40 or later",
            ));
        }
    }
    let tree = text
        .split('\0')
        .next()
        .unwrap_or_default()
        .trim()
        .to_owned();
    let raw = ok(
        git(repo, &["cat-file", "commit", commit])?,
        "reading a commit",
    )?;
    let (headers, message) = raw.split_once("\n\n").unwrap_or((raw.as_str(), ""));
    let mut vars: Vec<(&str, String)> = Vec::new();
    let mut encoding = None;
    for line in headers.lines() {
        if let Some(author) = line.strip_prefix("author ") {
            // `Name <email> seconds zone`
            if let Some((who, when)) = author.rsplit_once('>') {
                let (name, email) = who.split_once('<').unwrap_or((who, ""));
                vars.push(("GIT_AUTHOR_NAME", name.trim().to_owned()));
                vars.push(("GIT_AUTHOR_EMAIL", email.to_owned()));
                vars.push(("GIT_AUTHOR_DATE", format!("@{}", when.trim())));
            }
        } else if let Some(e) = line.strip_prefix("encoding ") {
            encoding = Some(format!("i18n.commitEncoding={e}"));
        }
    }
    let mut args: Vec<&str> = Vec::new();
    if let Some(e) = &encoding {
        args.extend(["-c", e.as_str()]);
    }
    args.extend(["commit-tree", &tree, "-p", onto]);
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let made = ok(
        git_with(repo, &args, &vars, message.as_bytes())?,
        "committing a pick",
    )?;
    Ok(Pick::Made(made.trim().to_owned()))
}

/// A conflicted `merge-tree -z --name-only`: the tree, the conflicted
/// paths, an empty field, then messages (`count`, paths, type, text).
fn conflict(text: &str) -> Pick {
    let mut fields = text.split('\0').skip(1);
    let mut files = Vec::new();
    for f in fields.by_ref() {
        if f.is_empty() {
            break;
        }
        if !files.iter().any(|x| x == f) {
            files.push(f.to_owned());
        }
    }
    let mut messages = Vec::new();
    while let Some(count) = fields.next() {
        let Ok(n) = count.parse::<usize>() else { break };
        for _ in 0..n {
            fields.next();
        }
        let _kind = fields.next();
        if let Some(m) = fields.next() {
            let m = m.trim();
            if m.starts_with("CONFLICT") {
                messages.push(m.to_owned());
            }
        }
    }
    Pick::Conflict {
        files,
        git_said: messages.join("; "),
    }
}

/// Moves the current branch from `orig` to `new` (only if it is still at
/// `orig`), then the index and the files from `orig`'s tree to `new`'s.
/// If git refuses the files, the branch and the index go back to `orig`.
fn apply(repo: &Repo, orig: &str, new: &str) -> Result<()> {
    let index_path = repo.git_dir.join("index");
    let saved_index = std::fs::read(&index_path).ok();
    ok(
        git(
            repo,
            &[
                "update-ref",
                "-m",
                "git swarm worktree merge",
                "HEAD",
                new,
                orig,
            ],
        )?,
        "moving the branch to the picks",
    )?;
    // Stat data only, so that read-tree does not take a touched file for a
    // changed one.
    let _ = git(repo, &["update-index", "-q", "--refresh"])?;
    let out = git(repo, &["read-tree", "-m", "-u", orig, new])?;
    if out.status.success() {
        return Ok(());
    }
    let git_said = said(&out.stderr);
    let moved_back = git(
        repo,
        &[
            "update-ref",
            "-m",
            "git swarm worktree merge: undone",
            "HEAD",
            orig,
            new,
        ],
    )?
    .status
    .success();
    if let Some(bytes) = &saved_index {
        crate::safe_fs::replace(&index_path, bytes)?;
    }
    let not_restored = z_list(&String::from_utf8_lossy(
        &git(repo, &["diff", "--name-only", "-z"])?.stdout,
    ));
    let mut message = format!("git could not update the files: {git_said}");
    let hint = if moved_back && not_restored.is_empty() {
        format!(
            "nothing was changed (the branch is back at {}); fix what git names, then merge again",
            short(orig)
        )
    } else if moved_back {
        message.push_str(&format!(
            "; these files could not be put back: {}",
            listing(&not_restored)
        ));
        format!(
            "the branch and the index are back at {}; fix what git names, then `git checkout -- FILE` restores each file named",
            short(orig)
        )
    } else {
        format!(
            "the branch could not be put back: `git update-ref HEAD {orig}` then `git reset --hard` restores it"
        )
    };
    Err(refuse(message, &hint))
}
fn subject(repo: &Repo, commit: &str) -> Result<String> {
    Ok(ok(
        git(repo, &["log", "-1", "--format=%s", commit])?,
        "reading a commit's subject",
    )?
    .trim()
    .to_owned())
}

/// Whether `git version` names git 2.40 or later.
fn new_enough(version: &str) -> bool {
    let mut parts = version
        .trim()
        .trim_start_matches("git version ")
        .split(|c: char| !c.is_ascii_digit())
        .map(|n| n.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (major, minor) >= (2, 40)
}

#[cfg(test)]
mod tests {
    #[test]
    fn merge_tree_merge_base_needs_git_2_40() {
        assert!(super::new_enough("git version 2.47.3\n"));
        assert!(super::new_enough("git version 2.40.0.windows.1"));
        assert!(!super::new_enough("git version 2.39.2 (Apple Git-143)"));
        assert!(!super::new_enough("nonsense"));
    }
}
