//! `git swarm handoff create`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::directive_loop::inject::{self, Request};
use git_swarm::handoff::{self, CreateRequest, Created};

use super::super::{Format, Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The task's id: lowercase letters, digits, `-`, `_`, `.` (the file stem).
    #[arg(value_name = "TASK")]
    task: String,
    /// Globs of the paths this task alone may change (at least one).
    #[arg(long, required = true, num_args = 1.., value_name = "GLOB")]
    owns: Vec<String>,
    /// Globs of the paths it may read but must not change.
    #[arg(long, num_args = 1.., value_name = "GLOB")]
    readonly: Vec<String>,
    /// Tasks (existing handoffs) to be completed before this one.
    #[arg(long, num_args = 1.., value_name = "TASK")]
    depends: Vec<String>,
    /// What done means: `grep:…`-style predicates, `Tests pass: CMD`, or prose for a reviewer.
    #[arg(long, num_args = 1.., value_name = "TEXT")]
    criteria: Vec<String>,
    /// The epic the task belongs to.
    #[arg(long, value_name = "ID")]
    epic: Option<String>,
    /// The worker's role: its `inject` block follows the brief.
    #[arg(long, value_name = "ROLE")]
    role: Option<String>,
    /// The epic's summary, for the worker.
    #[arg(long, value_name = "TEXT")]
    summary: Option<String>,
    /// What comes after this task.
    #[arg(long, value_name = "TEXT")]
    next: Option<String>,
    /// The commit the work starts from.
    #[arg(long, value_name = "REV", default_value = "HEAD")]
    base: String,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    if let Some(role) = &args.role {
        super::super::args::check_role(role)?;
    }
    let repo = super::super::repo()?;
    let store = super::super::store(ui)?;
    let gix = repo.gix();
    let base = handoff::resolve_base(&gix, &args.base)?;
    // Held until the handoff is written and its event appended: a create
    // running meanwhile reads this one, and so cannot take the same paths.
    let _lock = handoff::lock(&store)?;
    let (handoffs, problems) = handoff::load_all(&store)?;
    ui.problems(&problems);
    let log = super::super::read_log(&store, ui)?;
    let tracked = handoff::tracked_files(&gix);
    let req = CreateRequest {
        task: args.task.clone(),
        epic: args.epic.clone(),
        role: args.role.clone(),
        owns: args.owns.clone(),
        readonly: args.readonly.clone(),
        depends: args.depends.clone(),
        criteria: args.criteria.clone(),
        summary: args.summary.clone(),
        next: args.next.clone(),
        base,
    };
    let h = match handoff::create(&store, req, &handoffs, &log, &tracked)? {
        Created::Ready(h) => h,
        Created::Overlaps { task, overlap } if !overlap.decided => {
            ui.error(
                &format!(
                    "could not decide whether `{}` and handoff `{task}`'s `{}` share a path within the search's bounds ({} pairs of states, {} bytes per automaton): refused as overlapping",
                    overlap.mine,
                    overlap.theirs,
                    handoff::ownership::MAX_STATES,
                    handoff::ownership::DFA_LIMIT
                ),
                None,
                Some(&format!(
                    "write plainer globs (a folder such as `src/auth/**`, or `src/auth/*.rs`) so that ownership can be decided, or `git swarm handoff release {task} --reason TEXT` if that task is given up"
                )),
            );
            return Ok(ExitCode::from(1));
        }
        Created::Overlaps { task, overlap } => {
            ui.error(
                &format!(
                    "`{}` overlaps handoff `{task}`'s `{}`: both own {}",
                    overlap.mine, overlap.theirs, overlap.witness
                ),
                None,
                Some(&format!(
                    "a path is owned by one open handoff at a time: narrow --owns, or `git swarm handoff release {task} --reason TEXT` if that task is given up"
                )),
            );
            return Ok(ExitCode::from(1));
        }
    };
    let path = handoff::write_new(&store, &h)?;
    let created = handoff::created_event(&store, &h);
    super::super::append(&store, std::slice::from_ref(&created), ui)?;
    let brief = handoff::brief(
        &h,
        &handoffs,
        &log,
        store.config.handoffs.max_review_attempts,
    );
    // The worker's block, as `inject` would show its role, ranked on the task's words and paths.
    let prepared = match &h.role {
        Some(role) => {
            let words = [
                Some(h.task.as_str()),
                h.context.summary.as_deref(),
                h.context.next.as_deref(),
            ]
            .into_iter()
            .flatten()
            .chain(h.contract.criteria.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join("\n");
            let files = h
                .contract
                .owns
                .iter()
                .map(|g| {
                    git_swarm::pathglob::literal_prefix_of(g)
                        .trim_end_matches('/')
                        .to_owned()
                })
                .filter(|p| !p.is_empty())
                .collect();
            let req = Request::new(&store.config, role, Vec::new(), words, None, files, None);
            let review = super::super::review(&repo, ui);
            let prepared = super::super::inject::prepare(&store, req, true, &review, ui)?;
            super::super::inject::note_withheld(&prepared.sel, &review, ui);
            Some(prepared)
        }
        None => None,
    };
    let event = prepared.as_ref().and_then(|p| p.event.clone());
    if let Some(e) = &event {
        store.check_appendable(e)?;
    }
    // The patterns shown are used by the task's run, as `pattern inject
    // --run` records them: its completion or blocking grades them.
    let run = handoff::grade::run_id(&h.task);
    let shown = prepared.as_ref().filter(|p| !p.patterns.lines.is_empty());
    if shown.is_some() {
        super::super::args::check_run(&run)?;
        super::super::pattern::check_shown(&store)?;
    }
    let delegation = event.as_ref().map(|e| e.id.clone());
    let block = match (&prepared, &h.role, &delegation) {
        (Some(p), Some(role), Some(d)) => Some(format!(
            "{}{}",
            inject::render(&p.sel, role, d),
            p.patterns.render()
        )),
        (Some(p), _, None) => Some(p.patterns.render()),
        _ => None,
    };
    let rel = store.rel(&path);
    if args.format == Format::Json {
        ui.json(&serde_json::json!({
            "task": h.task,
            "path": rel,
            "contract": brief.contract,
            "context": brief.context,
            "delegation": delegation,
            "block": block,
        }))?;
    } else {
        let mut out = super::render_brief(&brief);
        if let Some(block) = &block {
            out.push('\n');
            out.push_str(block);
        }
        ui.write_out(out.as_bytes())?;
    }
    ui.out.flush()?;
    ui.note(&format!("created {rel}"));
    if let (Some(p), Some(role)) = (shown, &h.role) {
        super::super::pattern::record_shown(&store, &p.patterns, role, &run, ui)?;
    }
    match (&event, &h.role) {
        (Some(e), _) => {
            super::super::append(&store, std::slice::from_ref(e), ui)?;
            ui.note(&format!(
                "delegation {} recorded: the worker's final message goes to `git swarm ack --delegation {}`",
                e.id, e.id
            ));
        }
        (None, Some(role)) => ui.note(&format!(
            "no directive is in scope for role `{role}`: no delegation recorded"
        )),
        (None, None) => ui.note("no --role: no inject block, no delegation recorded"),
    }
    Ok(ExitCode::SUCCESS)
}
