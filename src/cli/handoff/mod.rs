//! `git swarm handoff …`: the contracts a coordinator gives its workers.

mod check;
mod create;
mod manage;

use super::{Outcome, Ui};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Write a task's contract and print the brief for the worker's prompt.
    ///
    /// Everything is checked before anything is written: the task id (as a
    /// directive id), every glob, each `--depends` naming an existing
    /// handoff, `--base` naming a commit. An id already taken is exit 2; an
    /// `--owns` glob that could match a path a handoff still holding its
    /// ownership owns (any standing but completed and released) is exit 1,
    /// naming that task, the two globs and a path both match.
    ///
    /// The file `.swarm/handoffs/TASK.toml` is created (never rewritten) and
    /// `handoff_created` recorded. The output is the contract as JSON, at
    /// most 50 lines of context (summary, role, what each dependency
    /// produced and whether it is complete, what comes next, how to
    /// escalate), then with `--role` the block `inject` shows that role,
    /// recorded as a delegation as `inject` records it (its id is printed).
    Create(create::Args),
    /// List handoffs: task, standing, epic, role, owned globs.
    ///
    /// The standing is a fold of the event log: open, in_review, violated,
    /// blocked, completed or released. A handoff file that cannot be read is
    /// reported with its file and line, and the others are listed.
    List(manage::ListArgs),
    /// Show one handoff: its file and its events (checks, violations, reviews).
    Show(manage::ShowArgs),
    /// Give a task up: its owned paths are free for another handoff.
    ///
    /// Records `handoff_released` with the reason (at least 10 characters).
    /// A handoff completed or released already is exit 1.
    Release(manage::ReleaseArgs),
    /// Check the task's change against its contract; exit 1 on a violation.
    ///
    /// The change is the handoff's base to the task's branch when
    /// `worktree create` made one, else to HEAD (or --range, --staged,
    /// --worktree). Every path git says it touched (both sides of a rename,
    /// a deletion too) must be owned (`scope_creep PATH`) and not read-only
    /// (`readonly_touched PATH`); every dependency completed
    /// (`dependency_open TASK`); every machine-checkable criterion met
    /// (`criterion_failed CRITERION: WHY`). `Tests pass: CMD` and `Type
    /// check passes: CMD` run CMD as the predicate `tool:CMD` (allowlist,
    /// trust and time limit as for `check`); a predicate string runs as
    /// `check` runs it; other criteria are listed as not machine-checked.
    ///
    /// Records `handoff_checked`, and each violation once per change as
    /// `handoff_violation`, with a copy for each directive whose `paths`
    /// cover the path: two such violations within 30 days escalate it.
    Check(check::CheckArgs),
    /// Check as `handoff check` does, then complete the task: its paths are free.
    ///
    /// Nothing is completed when the check finds a violation (exit 1), nor
    /// when the handoff is completed or released already (exit 1).
    Complete(check::CheckArgs),
    /// Record a reviewer's verdict: --approve completes (after the check), or --needs-changes NOTE.
    ///
    /// After `[handoffs] max_review_attempts` (default 3) needs-changes
    /// reviews the task is blocked, and the next review is exit 1. The
    /// attempts are events: they survive restarts and add up across merged
    /// branches.
    Review(check::ReviewArgs),
}

pub fn run(command: Command, ui: &mut Ui) -> Outcome {
    match command {
        Command::Create(args) => create::run(args, ui),
        Command::List(args) => manage::list(args, ui),
        Command::Show(args) => manage::show(args, ui),
        Command::Release(args) => manage::release(args, ui),
        Command::Check(args) => check::check(args, ui),
        Command::Complete(args) => check::complete(args, ui),
        Command::Review(args) => check::review(args, ui),
    }
}

/// The brief as text: the contract's JSON on one line, then the context.
pub fn render_brief(brief: &git_swarm::handoff::Brief) -> String {
    let mut out = String::from("CONTRACT ");
    out.push_str(&serde_json::to_string(&brief.contract).unwrap_or_default());
    out.push('\n');
    for line in &brief.context {
        out.push_str(&super::clean(line));
        out.push('\n');
    }
    out
}
