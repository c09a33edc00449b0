//! `git swarm handoff check|complete|review`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::change::{Change, Selection};
use git_swarm::check::{NoTools, ToolRunner};
use git_swarm::event::Event;
use git_swarm::handoff::check::{self as hcheck, Checked};
use git_swarm::handoff::review::{self, Reviewed};
use git_swarm::handoff::{self, Handoff, Standing};
use git_swarm::runner::Limits;
use git_swarm::{Error, Repo, Store};

use super::super::{Format, Outcome, Ui, clean};

// Which change a handoff is checked on (a plain comment: a doc comment
// would become the description of each command that flattens it).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ChangeArgs {
    /// A range A..B instead of the handoff's base to the task's branch (or HEAD).
    #[arg(long, group = "change", value_name = "A..B")]
    range: Option<String>,
    /// HEAD against the index.
    #[arg(long, group = "change")]
    staged: bool,
    /// HEAD against the working tree, untracked files included.
    #[arg(long, group = "change")]
    worktree: bool,
}

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The task's id.
    #[arg(value_name = "TASK")]
    task: String,
    #[command(flatten)]
    change: ChangeArgs,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("verdict").required(true).args(["approve", "needs_changes"])))]
pub struct ReviewArgs {
    /// The task's id.
    #[arg(value_name = "TASK")]
    task: String,
    /// The work is done: check it as `complete` does, and complete it.
    #[arg(long)]
    approve: bool,
    /// Send the work back, saying what to change.
    #[arg(long, value_name = "NOTE", conflicts_with = "change")]
    needs_changes: Option<String>,
    #[command(flatten)]
    change: ChangeArgs,
}

/// Everything a handoff command reads before deciding.
struct Ctx {
    repo: Repo,
    store: Store,
    handoff: Handoff,
    /// Every readable handoff: whose tool criteria are trusted is decided on the set.
    all: Vec<Handoff>,
    log: Vec<Event>,
}

fn open(task: &str, ui: &mut Ui) -> Result<Ctx, Error> {
    let repo = super::super::repo()?;
    let store = super::super::store(ui)?;
    // Read once: the set is needed for the trust of its tool criteria.
    let (all, _) = handoff::load_all(&store)?;
    let handoff = match all.iter().find(|h| h.task == task) {
        Some(h) => h.clone(),
        // The error naming the file's problem or the closest task.
        None => handoff::find(&store, task)?,
    };
    git_swarm::trace::mark("handoff read");
    let log = super::super::read_log(&store, ui)?;
    git_swarm::trace::mark("log read");
    Ok(Ctx {
        repo,
        store,
        handoff,
        all,
        log,
    })
}

/// The change to check and the folder its tools run in: what was asked,
/// else the handoff's base to the task's branch when `worktree create`
/// made one (its tools run there), else to HEAD.
fn selection(
    ctx: &Ctx,
    args: &ChangeArgs,
    ui: &mut Ui,
) -> Result<(Selection, std::path::PathBuf), Error> {
    let root = ctx.repo.root.clone();
    if let Some(range) = &args.range {
        return Ok((Selection::range(range)?, root));
    }
    if args.staged {
        return Ok((Selection::Staged, root));
    }
    if args.worktree {
        return Ok((Selection::Worktree, root));
    }
    let base = ctx.handoff.contract.base.clone();
    // Read leniently: a record that cannot be read only loses the default.
    let record = match git_swarm::worktree::load(&ctx.repo, &ctx.handoff.task) {
        Ok(r) => r,
        Err(e) => {
            ui.warning(
                &format!("the task's worktree record was not read ({e}): checking up to HEAD"),
                Some("`git swarm worktree prune` forgets records it cannot read"),
            );
            None
        }
    };
    Ok(match record {
        Some(r) if r.path.is_dir() => (
            Selection::Range {
                from: base,
                to: r.branch,
                symmetric: false,
            },
            r.path,
        ),
        _ => (
            Selection::Range {
                from: base,
                to: "HEAD".into(),
                symmetric: false,
            },
            root,
        ),
    })
}

/// The runner of the handoff's `tool:` criteria: the sandboxed one when
/// the user trusted the handoffs' set of tool criteria, else none.
fn tools(ctx: &Ctx, root: &std::path::Path, ui: &mut Ui) -> Result<Box<dyn ToolRunner>, Error> {
    let set = hcheck::tool_criteria(&ctx.all);
    if !set.iter().any(|t| t.directive == ctx.handoff.task) {
        return Ok(Box::new(NoTools {
            message: "no tool criteria".into(),
            hint: None,
        }));
    }
    let fingerprint = git_swarm::trust::criteria_fingerprint(&set);
    if !git_swarm::trust::is_trusted(&ctx.repo, &fingerprint) {
        return Ok(Box::new(NoTools {
            message: "not run: the handoffs' tool criteria are not trusted (new, or changed since `git swarm trust`)".into(),
            hint: Some("run `git swarm trust` once you have read them (`git swarm trust --show`)".into()),
        }));
    }
    let limits = Limits::from_config(&ctx.store.config.runner);
    Ok(super::super::check::sandboxed(&ctx.repo, root, limits, ui))
}

/// Runs the check and records it: one `handoff_checked`, the violations
/// not recorded yet for this change, their copies for path-scoped
/// directives, and the escalations those make due.
fn run_check(ctx: &Ctx, args: &ChangeArgs, ui: &mut Ui) -> Result<(Checked, Selection), Error> {
    let (selection, root) = selection(ctx, args, ui)?;
    let gix = super::super::check::open_gix(&ctx.repo)?;
    let change = Change::read(&gix, &ctx.repo.root, &selection)?;
    git_swarm::trace::mark("change read");
    // Tools judge the commit checked, not whatever the folder holds: a
    // detached checkout of it unless the folder is that commit, clean.
    // The index and working tree are judged where they are.
    let runs_tools = hcheck::tool_criteria(std::slice::from_ref(&ctx.handoff))
        .iter()
        .any(|t| t.directive == ctx.handoff.task);
    let checkout = match &selection {
        Selection::Range { to, .. } if runs_tools => match commit_id(&gix, to) {
            Some(commit) => Some(git_swarm::worktree::checkout::at_commit(
                &ctx.repo, &root, &commit,
            )?),
            None => None,
        },
        _ => None,
    };
    let root = checkout.as_ref().map_or(root, |c| c.path().to_path_buf());
    let tools = tools(ctx, &root, ui)?;
    let max = ctx.store.config.handoffs.max_review_attempts;
    let edited = handoff::edited(&ctx.store, &ctx.handoff.task, &ctx.log);
    let checked = hcheck::check(
        &gix,
        &change,
        &ctx.handoff,
        edited,
        &ctx.log,
        max,
        tools.as_ref(),
    )?;
    git_swarm::trace::mark("checked");
    // The directives are read only for a path to hold them against.
    let loaded = checked
        .violations
        .iter()
        .any(|v| v.path.is_some())
        .then(|| git_swarm::index::load(&ctx.store))
        .transpose()?;
    let directives: Vec<&git_swarm::directive::Directive> = loaded
        .iter()
        .flat_map(|l| &l.index.directives)
        .filter_map(|e| e.directive.as_ref())
        .collect();
    let mut events = hcheck::events(&ctx.store, &checked, &directives);
    let ran = events.remove(0);
    super::super::append(&ctx.store, std::slice::from_ref(&ran), ui)?;
    git_swarm::trace::mark("recorded");
    if !events.is_empty() {
        let (_, saved) = git_swarm::event::append_unrecorded(
            &ctx.store.log(),
            &events,
            // The offence as the log's JSON spells it: a line holding it
            // is parsed and compared.
            |e| {
                let change = e.str_field("change").unwrap_or_default();
                let quoted = serde_json::to_string(change).unwrap_or_default();
                quoted.trim_matches('"').to_owned()
            },
            hcheck::same_violation,
            &ctx.store.config.events,
        )?;
        super::super::report_torn(&ctx.store, &saved, ui);
        if events.iter().any(|e| e.directive.is_some()) {
            let due = git_swarm::directive_loop::escalation::due_from_index(&ctx.store)?;
            super::super::escalate(&ctx.store, &due, ui)?;
        }
    }
    Ok((checked, selection))
}

/// `complete` and `approve` judge the whole task: the change from the
/// handoff's base to a commit. A range starting elsewhere could leave out
/// a commit outside `owns`; the index and working tree are not the work.
fn whole_task(ctx: &Ctx, args: &ChangeArgs, verb: &str) -> Result<(), Error> {
    let base = &ctx.handoff.contract.base;
    if args.staged || args.worktree {
        return Err(Error::usage(
            format!(
                "{verb} judges committed work: --staged and --worktree are for `handoff check`"
            ),
            "commit the work, then run it on the task's branch (the default) or with `--range BASE..BRANCH`",
        ));
    }
    let Some(range) = &args.range else {
        return Ok(());
    };
    let starts_at_base = match Selection::range(range)? {
        Selection::Range {
            from,
            symmetric: false,
            ..
        } => {
            let gix = super::super::check::open_gix(&ctx.repo)?;
            commit_id(&gix, &from).as_deref() == Some(base.as_str())
        }
        _ => false,
    };
    if starts_at_base {
        return Ok(());
    }
    Err(Error::usage(
        format!(
            "`{range}` does not start at the handoff's base {base}: {verb} judges the whole task's change"
        ),
        format!(
            "leave out --range (the base to the task's branch), or write `--range {base}..BRANCH`"
        ),
    ))
}

/// The commit `rev` names, if it names one.
fn commit_id(gix: &gix::Repository, rev: &str) -> Option<String> {
    gix.rev_parse_single(format!("{rev}^{{commit}}").as_str())
        .ok()
        .map(|id| id.detach().to_string())
}

/// The `handoff_completed` of a checked change: `BASE..COMMIT`.
fn completed(ctx: &Ctx, selection: &Selection) -> Result<git_swarm::event::Event, Error> {
    let to = match selection {
        Selection::Range { to, .. } => {
            let gix = super::super::check::open_gix(&ctx.repo)?;
            commit_id(&gix, to)
        }
        _ => None,
    };
    Ok(ctx.store.event(git_swarm::event::Body::HandoffCompleted {
        task: ctx.handoff.task.clone(),
        range: to.map(|to| format!("{}..{to}", ctx.handoff.contract.base)),
    }))
}

fn render(checked: &Checked, format: Format, ui: &mut Ui) -> std::io::Result<()> {
    if format == Format::Json {
        return ui.json(checked);
    }
    ui.warnings(&checked.warnings);
    let mut out = String::new();
    for v in &checked.violations {
        out.push_str(&clean(&v.line()));
        out.push('\n');
    }
    for c in &checked.met {
        out.push_str(&format!("met: {}\n", clean(c)));
    }
    for c in &checked.not_machine_checked {
        out.push_str(&format!("not machine-checked: {}\n", clean(c)));
    }
    let n = checked.violations.len();
    out.push_str(&format!(
        "checked {} on {} ({} path{}): {}\n",
        checked.task,
        clean(&checked.change),
        checked.touched,
        if checked.touched == 1 { "" } else { "s" },
        if n == 0 {
            "no violation".to_owned()
        } else {
            format!("{n} violation{}", if n == 1 { "" } else { "s" })
        }
    ));
    ui.write_out(out.as_bytes())
}

pub fn check(args: CheckArgs, ui: &mut Ui) -> Outcome {
    let ctx = open(&args.task, ui)?;
    // A closed handoff owns nothing any more: a check would only add
    // violations no one acts on.
    if let Some(code) = refuse_closed(&ctx, false, ui) {
        return Ok(code);
    }
    let (checked, _) = run_check(&ctx, &args.change, ui)?;
    render(&checked, args.format, ui)?;
    let scope = checked
        .violations
        .iter()
        .any(|v| matches!(v.violation, "scope_creep" | "readonly_touched"));
    if scope && args.format == Format::Text {
        ui.hint(&format!(
            "a path outside `owns` needs a scope change: {}",
            ctx.handoff.escalation.scope_change
        ));
    }
    if args.format == Format::Text
        && checked
            .violations
            .iter()
            .any(|v| v.violation == "contract_edited")
    {
        ui.hint("a handoff is never rewritten: restore it from the base (`git checkout BASE -- FILE`); a new contract needs a new handoff from the coordinator");
    }
    Ok(ExitCode::from(u8::from(!checked.ok)))
}

/// The refusal of a blocked handoff: no more reviews, and no completion
/// around them.
fn blocked(ctx: &Ctx, attempts: usize, max: u32, ui: &mut Ui) -> ExitCode {
    ui.error(
        &format!(
            "handoff `{}` is blocked: sent back for changes {attempts} times, as many as handoffs.max_review_attempts ({max}) allows",
            ctx.handoff.task
        ),
        None,
        Some(&format!(
            "give it up with `git swarm handoff release {} --reason TEXT`, or raise `max_review_attempts` under [handoffs] in .swarm/config.toml",
            ctx.handoff.task
        )),
    );
    ExitCode::from(1)
}

/// Refuses a handoff that is closed already (and, for `complete`, one
/// that is blocked); `None` when it may go on.
fn refuse_closed(ctx: &Ctx, blocked_too: bool, ui: &mut Ui) -> Option<ExitCode> {
    let max = ctx.store.config.handoffs.max_review_attempts;
    let s = handoff::standing(&ctx.handoff.task, &ctx.log, max);
    if blocked_too && s == Standing::Blocked {
        let attempts = review::attempts(&ctx.handoff.task, &ctx.log);
        return Some(blocked(ctx, attempts, max, ui));
    }
    if s.holds_ownership() {
        return None;
    }
    ui.error(
        &format!("handoff `{}` is {} already", ctx.handoff.task, s.as_str()),
        None,
        Some("`git swarm handoff show TASK` shows its events; new work needs a new handoff"),
    );
    Some(ExitCode::from(1))
}

/// Checks, and completes when the check passes.
fn complete_checked(ctx: &Ctx, change: &ChangeArgs, format: Format, ui: &mut Ui) -> Outcome {
    whole_task(ctx, change, "complete")?;
    let (checked, selection) = run_check(ctx, change, ui)?;
    if !checked.ok {
        render(&checked, format, ui)?;
        ui.error(
            &format!(
                "handoff `{}` was not completed: its check found violations",
                ctx.handoff.task
            ),
            None,
            Some("fix them and run it again, or ask for a scope change"),
        );
        return Ok(ExitCode::from(1));
    }
    let done = completed(ctx, &selection)?;
    let mut events = vec![done];
    events.extend(handoff::grade::outcome_of(
        &ctx.store,
        &ctx.handoff.task,
        true,
    )?);
    super::super::append(&ctx.store, &events, ui)?;
    render(&checked, format, ui)?;
    if format == Format::Text {
        writeln!(
            ui.out,
            "completed {}: its owned paths are free ({})",
            ctx.handoff.task,
            clean(&ctx.handoff.contract.owns.join(", "))
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

pub fn complete(args: CheckArgs, ui: &mut Ui) -> Outcome {
    let ctx = open(&args.task, ui)?;
    if let Some(code) = refuse_closed(&ctx, true, ui) {
        return Ok(code);
    }
    complete_checked(&ctx, &args.change, args.format, ui)
}

pub fn review(args: ReviewArgs, ui: &mut Ui) -> Outcome {
    let ctx = open(&args.task, ui)?;
    if let Some(note) = &args.needs_changes
        && note.trim().is_empty()
    {
        return Err(Error::usage(
            "--needs-changes needs a note",
            "say what to change: `--needs-changes \"the error message is not shown\"`",
        )
        .into());
    }
    let event = match review::review(
        &ctx.store,
        &ctx.handoff,
        args.needs_changes.as_deref(),
        &ctx.log,
    ) {
        Reviewed::Record(e) => e,
        Reviewed::Closed(s) => {
            ui.error(
                &format!(
                    "handoff `{}` is {} already: there is nothing to review",
                    ctx.handoff.task,
                    s.as_str()
                ),
                None,
                Some("`git swarm handoff show TASK` shows its events"),
            );
            return Ok(ExitCode::from(1));
        }
        Reviewed::Blocked { attempts, max } => return Ok(blocked(&ctx, attempts, max, ui)),
    };
    if args.approve {
        // Approving completes: the check must pass first, and the verdict is
        // recorded only with the completion.
        whole_task(&ctx, &args.change, "approve")?;
        let (checked, selection) = run_check(&ctx, &args.change, ui)?;
        if !checked.ok {
            render(&checked, Format::Text, ui)?;
            ui.error(
                &format!(
                    "handoff `{}` was not approved: its check found violations",
                    ctx.handoff.task
                ),
                None,
                Some("send it back with `--needs-changes NOTE`, or fix them first"),
            );
            return Ok(ExitCode::from(1));
        }
        let done = completed(&ctx, &selection)?;
        let mut events = vec![event, done];
        events.extend(handoff::grade::outcome_of(
            &ctx.store,
            &ctx.handoff.task,
            true,
        )?);
        super::super::append(&ctx.store, &events, ui)?;
        render(&checked, Format::Text, ui)?;
        writeln!(
            ui.out,
            "approved and completed {}: its owned paths are free",
            ctx.handoff.task
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut log = ctx.log;
    log.push(event.clone());
    let max = ctx.store.config.handoffs.max_review_attempts;
    let blocked = handoff::standing(&ctx.handoff.task, &log, max) == Standing::Blocked;
    // The review that blocks the task ends its run: a failure for the
    // patterns its worker was shown.
    let mut events = vec![event];
    if blocked {
        events.extend(handoff::grade::outcome_of(
            &ctx.store,
            &ctx.handoff.task,
            false,
        )?);
    }
    super::super::append(&ctx.store, &events, ui)?;
    let attempts = review::attempts(&ctx.handoff.task, &log);
    writeln!(
        ui.out,
        "sent {} back for changes (attempt {attempts} of {max})",
        ctx.handoff.task
    )?;
    if blocked {
        ui.warning(
            &format!("handoff `{}` is now blocked: no review attempt is left", ctx.handoff.task),
            Some("`git swarm handoff release TASK --reason TEXT` gives it up, or raise [handoffs] max_review_attempts"),
        );
    }
    Ok(ExitCode::SUCCESS)
}
