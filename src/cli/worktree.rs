//! `git swarm worktree create|merge|abort|list|prune`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::worktree::{self, Merged};

use super::{Format, Outcome, Ui, clean};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Create a linked worktree for a task, on a new branch `swarm/TASK`.
    ///
    /// The worktree starts at the task's base: the `[contract] base` of
    /// `.swarm/handoffs/TASK.toml` (a --base must name the same commit), else
    /// --base, else HEAD. It goes outside the
    /// working tree, at `<parent of the main worktree>/<repo>.worktrees/TASK`,
    /// or where `git config swarm.worktreeDir` says (`{repo}` and `{task}`
    /// substituted, relative to the main worktree's parent). An existing branch
    /// or folder is never reused. Prints the worktree's path.
    Create(CreateArgs),
    /// Cherry-pick a task's commits onto the current branch, oldest first.
    ///
    /// Refuses a working tree with uncommitted changes, or untracked files the
    /// picks would overwrite. When a pick stops (a conflict), every pick is
    /// rolled back: the branch, the index and the files are as they were. The
    /// conflicting files are named and the command exits 1.
    Merge(TaskArgs),
    /// Remove a task's worktree and the branch `worktree create` made for it.
    ///
    /// Touches nothing else: another branch, or a branch of that name that
    /// does not descend from the task's base, is kept. A worktree with
    /// uncommitted changes is refused unless --force. Prints the branch's last
    /// commit, so that it can be restored (`git branch swarm/TASK COMMIT`).
    Abort(AbortArgs),
    /// List the task worktrees: path, branch, base, commits ahead, dirty.
    List(ListArgs),
    /// Forget task worktrees whose folder is gone (runs `git worktree prune`).
    ///
    /// Their branches are kept: they may hold the only copy of the work.
    Prune,
}

#[derive(Debug, clap::Args)]
pub struct CreateArgs {
    /// The task id (as in `.swarm/handoffs/TASK.toml`).
    task: String,
    /// The commit to start from [default: the handoff's base, else HEAD].
    #[arg(long, value_name = "REV")]
    base: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct TaskArgs {
    /// The task id.
    task: String,
}

#[derive(Debug, clap::Args)]
pub struct AbortArgs {
    /// The task id.
    task: String,
    /// Remove the worktree even with uncommitted changes (they are lost), and
    /// delete the branch even with commits no other branch has.
    #[arg(long)]
    force: bool,
}

#[derive(Debug, clap::Args)]
pub struct ListArgs {
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(cmd: Command, ui: &mut Ui) -> Outcome {
    let repo = super::repo()?;
    match cmd {
        Command::Create(args) => {
            let created = worktree::create(&repo, &args.task, args.base.as_deref())?;
            ui.warnings(&created.warnings);
            let record = created.record;
            ui.note(&format!(
                "Created {} on the new branch {} at {}.",
                record.path.display(),
                record.branch,
                worktree::short(&record.base)
            ));
            writeln!(ui.out, "{}", record.path.display())?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Merge(args) => merge(&repo, &args.task, ui),
        Command::Abort(args) => {
            let a = worktree::abort(&repo, &args.task, args.force)?;
            if a.removed_worktree {
                writeln!(ui.out, "Removed the worktree {}.", a.record.path.display())?;
            } else {
                writeln!(
                    ui.out,
                    "The worktree {} was already gone.",
                    a.record.path.display()
                )?;
            }
            match (&a.deleted_branch, &a.kept_branch) {
                (Some(tip), _) => writeln!(
                    ui.out,
                    "Deleted the branch {} (was {}; `git branch {} {tip}` restores it).",
                    a.record.branch,
                    worktree::short(tip),
                    a.record.branch
                )?,
                (None, Some(why)) => writeln!(
                    ui.out,
                    "Kept the branch {}: {}.",
                    a.record.branch,
                    clean(why)
                )?,
                (None, None) => {}
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::List(args) => {
            let (rows, problems) = worktree::list(&repo)?;
            ui.problems(&problems);
            if args.format == Format::Json {
                return ui.json_result(&rows);
            }
            if rows.is_empty() {
                writeln!(ui.out, "No task worktrees.")?;
            }
            for r in &rows {
                let ahead = r
                    .ahead
                    .map_or_else(|| "branch gone".to_owned(), |n| format!("{n} ahead"));
                let state = match (r.present, r.dirty) {
                    (false, _) => "gone (`git swarm worktree prune` forgets it)",
                    (true, Some(true)) => "dirty",
                    (true, _) => "clean",
                };
                writeln!(
                    ui.out,
                    "{}  {}  {}  base {}  {ahead}  {state}",
                    r.task,
                    r.path.display(),
                    r.branch,
                    worktree::short(&r.base)
                )?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Prune => {
            let (forgotten, problems) = worktree::prune(&repo)?;
            for p in &problems {
                ui.warning(&format!("removed an unreadable record: {p}"), None);
            }
            if forgotten.is_empty() {
                writeln!(ui.out, "Nothing to prune.")?;
            }
            for r in &forgotten {
                writeln!(
                    ui.out,
                    "Forgot {} ({} is gone; the branch {} is kept).",
                    r.task,
                    r.path.display(),
                    r.branch
                )?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn merge(repo: &git_swarm::Repo, task: &str, ui: &mut Ui) -> Outcome {
    match worktree::merge(repo, task)? {
        Merged::Nothing { branch, already } => {
            if already == 0 {
                writeln!(
                    ui.out,
                    "Nothing to merge: {branch} has no commit since its base."
                )?;
            } else {
                writeln!(
                    ui.out,
                    "Nothing to merge: the {already} commit{} of {branch} since its base {} already on this branch.",
                    plural(already),
                    if already == 1 { "is" } else { "are" }
                )?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Merged::Picked {
            onto,
            picks,
            already,
        } => {
            let n = picks.len();
            writeln!(
                ui.out,
                "Picked {n} commit{} onto {onto}, oldest first:",
                plural(n)
            )?;
            if already > 0 {
                ui.note(&format!(
                    "Left out {already} commit{} whose change {onto} already has.",
                    plural(already)
                ));
            }
            for p in &picks {
                writeln!(
                    ui.out,
                    "  {} -> {}  {}",
                    worktree::short(&p.from),
                    worktree::short(&p.to),
                    clean(&p.subject)
                )?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Merged::Conflict {
            commit,
            subject,
            files,
            git_said,
            rolled_back,
        } => {
            let what = if files.is_empty() {
                format!(
                    "cherry-picking {} ({}) stopped: {}",
                    worktree::short(&commit),
                    clean(&subject),
                    clean(&git_said)
                )
            } else {
                format!(
                    "cherry-picking {} ({}) conflicts in {}",
                    worktree::short(&commit),
                    clean(&subject),
                    files
                        .iter()
                        .map(|f| clean(f))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            ui.error(
                &what,
                None,
                Some(&format!(
                    "nothing was changed ({}): rebase the task branch onto this branch in its worktree, resolve there, then merge again",
                    match rolled_back {
                        0 => "it was the first pick".to_owned(),
                        1 => "the 1 earlier pick was not applied either".to_owned(),
                        n => format!("the {n} earlier picks were not applied either"),
                    }
                )),
            );
            for f in &files {
                writeln!(ui.out, "{}", clean(f))?;
            }
            Ok(ExitCode::from(1))
        }
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
