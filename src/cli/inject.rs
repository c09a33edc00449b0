//! `git swarm inject`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::Error;
use git_swarm::directive::Directive;
use git_swarm::directive_loop::inject::{self, Request};

use super::{Format, Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The delegate's role (coder, reviewer, test_engineer, …).
    #[arg(long, value_name = "ROLE")]
    role: String,
    /// The tools the delegate will use (default: the role's, from config).
    #[arg(long, value_delimiter = ',', value_name = "TOOL,..")]
    tools: Vec<String>,
    /// The task, in words: what the directives are ranked against.
    #[arg(long, value_name = "TEXT", conflicts_with = "task_file")]
    task: Option<String>,
    /// Read the task from a file (`-`: standard input).
    #[arg(long, value_name = "FILE")]
    task_file: Option<String>,
    /// The phase the delegation belongs to (for `review` and `phase complete`).
    #[arg(long, value_name = "PHASE")]
    phase: Option<String>,
    /// Files the task touches (their words count toward ranking).
    #[arg(long, value_delimiter = ',', value_name = "PATH,..")]
    files: Vec<String>,
    /// One file the task touches, exactly as given (a comma is part of the
    /// name); repeat it for more.
    #[arg(long, value_name = "PATH")]
    file: Vec<String>,
    /// Most directives to show, 1 to 100 (default: knowledge.delegate_max_inject_count).
    #[arg(short = 'n', long, alias = "max", value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=100))]
    max_count: Option<usize>,
    /// Print the block without recording the delegation (it cannot be acked).
    #[arg(long)]
    dry_run: bool,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    super::args::check_role(&args.role)?;
    if let Some(p) = &args.phase {
        super::args::check_phase_name(p)?;
    }
    let task = match (&args.task, &args.task_file) {
        (Some(t), _) => t.clone(),
        (None, Some(f)) => super::args::read_input(f, "task")?,
        (None, None) => String::new(),
    };
    let (store, review) = super::store_and_review(ui)?;
    let req = Request::new(
        &store.config,
        &args.role,
        args.tools.clone(),
        task,
        args.phase.clone(),
        args.files.iter().chain(&args.file).cloned().collect(),
        args.max_count,
    );
    let Prepared {
        req,
        sel,
        patterns,
        event,
    } = prepare(&store, req, true, &review, ui)?;
    note_withheld(&sel, &review, ui);
    super::pattern::note_withheld_patterns(&patterns, &review, ui);
    let Some(e) = event else {
        if args.format == Format::Json {
            ui.json(&serde_json::json!({"delegation": null, "role": args.role, "directives": [], "withheld": sel.withheld, "patterns": patterns}))?;
        } else {
            write!(ui.out, "{}", patterns.render())?;
        }
        return Ok(ExitCode::SUCCESS);
    };
    // Nor is a block printed whose delegation the log would then refuse.
    if !args.dry_run {
        store.check_appendable(&e)?;
    }
    let delegation = e.id.clone();
    let block = inject::render(&sel, &args.role, &delegation);
    // The block is delivered before the delegation is recorded: a block
    // that never reached the delegate (a closed pipe, a full disk) must not
    // leave a delegation whose criticals the phase gate then waits for.
    if args.format == Format::Json {
        ui.json(&serde_json::json!({
            "delegation": delegation,
            "role": args.role,
            "tools": req.tools,
            "files": req.files,
            "phase": args.phase,
            "directives": sel.shown,
            "left_out": sel.left_out,
            "withheld": sel.withheld,
            "block": block,
            "patterns": patterns,
            "recorded": !args.dry_run,
        }))?;
    } else {
        write!(ui.out, "{block}{}", patterns.render())?;
    }
    ui.out.flush()?;
    if args.dry_run {
        ui.note(&format!(
            "dry run: delegation {delegation} was not recorded (no `shown` event), so it cannot be acknowledged"
        ));
        return Ok(ExitCode::SUCCESS);
    }
    super::append(&store, &[e], ui)?;
    git_swarm::trace::mark("appended");
    Ok(ExitCode::SUCCESS)
}

/// What `inject` decided for one request: the directives selected, the
/// role's pattern block, and the `shown` event that records the delegation
/// (none when no directive is in scope: nothing is recorded then).
pub struct Prepared {
    pub req: Request,
    pub sel: inject::Selection,
    pub patterns: git_swarm::pattern::inject::Block,
    pub event: Option<git_swarm::event::Event>,
}

/// Selects the directives and patterns for `req`, as `git swarm inject`
/// shows them (an unknown role is warned about with `warn_role`), without
/// recording anything: the caller renders, then appends the event.
pub fn prepare(
    store: &git_swarm::Store,
    req: Request,
    warn_role: bool,
    review: &git_swarm::reviewed::Review,
    ui: &mut Ui,
) -> Result<Prepared, Error> {
    let load = git_swarm::index::load_delegation;
    prepare_from(store, req, warn_role, review, ui, load).map(|(p, _)| p)
}

/// [`prepare`], and the index with its parsed directive files, taken from
/// the same look at `.swarm/`: for a caller that reads both.
pub fn prepare_with_index(
    store: &git_swarm::Store,
    req: Request,
    review: &git_swarm::reviewed::Review,
    ui: &mut Ui,
) -> Result<(Prepared, git_swarm::index::Index), Error> {
    let load = git_swarm::index::load_delegation_with_entries;
    prepare_from(store, req, false, review, ui, load)
}

fn prepare_from(
    store: &git_swarm::Store,
    req: Request,
    warn_role: bool,
    review: &git_swarm::reviewed::Review,
    ui: &mut Ui,
    load_delegation: fn(
        &git_swarm::Store,
        &git_swarm::retrieve::Query,
    ) -> Result<git_swarm::index::Delegation, Error>,
) -> Result<(Prepared, git_swarm::index::Index), Error> {
    // The task is matched against the corpus while the index is checked.
    let query = inject::query(&req);
    let git_swarm::index::Delegation {
        corpus,
        matches,
        patterns,
        index,
    } = load_delegation(store, &query)?;
    let summary = &index.summary;
    super::warn_problems(summary.error_count(), ui);
    for p in git_swarm::hive::unfetched(store) {
        ui.warning(&p.message, p.hint.as_deref());
    }
    if warn_role {
        warn_unknown_role(&req.role, store, &corpus, ui);
    }
    let mut entries = None;
    let sel = inject::select(
        &corpus,
        &summary.fold,
        &req,
        Some(matches),
        review,
        &mut |doc, id| load(store, &mut entries, doc, id),
    )?;
    git_swarm::trace::mark("directives ranked");
    // The role's historical patterns follow the directives (docs/patterns.md).
    let patterns = super::pattern::block_for(
        store,
        &patterns,
        &req.role,
        &[],
        &req.files,
        store.config.patterns.budget_for(&req.role),
        review,
    )?;
    git_swarm::trace::mark("selected");
    let event = (!sel.shown.is_empty()).then(|| {
        let pattern_ids: Vec<&str> = patterns.lines.iter().map(|l| l.id.as_str()).collect();
        inject::shown_event(store, &req, &sel, &pattern_ids)
    });
    Ok((
        Prepared {
            req,
            sel,
            patterns,
            event,
        },
        index,
    ))
}

/// Says which directives in scope were withheld as not reviewed (ids only:
/// their text is what must not reach anyone unreviewed).
pub fn note_withheld(sel: &inject::Selection, review: &git_swarm::reviewed::Review, ui: &mut Ui) {
    if let Some(line) = git_swarm::directive_loop::inject::withheld_line(&sel.withheld, review) {
        ui.note(&line);
    }
}

/// Warns of a role that nothing names (see [`inject::role_is_known`]).
fn warn_unknown_role(
    role: &str,
    store: &git_swarm::Store,
    corpus: &git_swarm::retrieve::Corpus,
    ui: &mut Ui,
) {
    if inject::role_is_known(role, &store.config, corpus) {
        return;
    }
    // Only for an unknown role: every directive's roles, for the hint.
    let directives: Vec<Directive> = git_swarm::index::load(store)
        .map(|l| l.index.directives)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|e| e.directive)
        .collect();
    let w = inject::unknown_role(role, &store.config, &directives);
    ui.warning(&w.message, w.hint.as_deref());
}

/// Reads a directive `inject` shows: from its file, which the fresh index
/// says is `<id>.toml`; should the file say otherwise (changed since, or an
/// id that is not its file name), from the index's parsed entries, loaded
/// into `entries` the first time.
fn load(
    store: &git_swarm::Store,
    entries: &mut Option<Vec<git_swarm::index::DirectiveEntry>>,
    doc: usize,
    id: &str,
) -> Result<(Directive, Option<String>), Error> {
    let name = format!("{id}.toml");
    let dir = store.swarm_dir.join("directives");
    let rel = format!(".swarm/directives/{name}");
    if git_swarm::directive::is_valid_id(id) {
        let path = dir.join(&name);
        // The project's own file wins; else a hive's (docs/hive.md).
        let (path, rel, hive) = match git_swarm::hive::directive_file(store, id) {
            Some((hive_path, sub)) if !path.exists() => (
                hive_path,
                format!("hive:{}/{name}", sub.name),
                Some(sub.name.clone()),
            ),
            _ => (path, rel, None),
        };
        let entry = git_swarm::index::read_entry(&path, &rel, &name, false);
        if let Some(d) = entry.directive
            && d.id == id
        {
            return Ok((d, hive));
        }
    }
    if entries.is_none() {
        *entries = Some(git_swarm::index::load(store)?.index.directives);
    }
    let found = entries
        .as_deref()
        .unwrap_or_default()
        .iter()
        .filter(|e| {
            e.directive
                .as_ref()
                .is_some_and(|d| d.status == git_swarm::directive::Status::Active)
        })
        .nth(doc)
        .filter(|e| e.directive.as_ref().is_some_and(|d| d.id == id));
    found
        .and_then(|e| Some((e.directive.clone()?, e.origin.clone())))
        .ok_or_else(|| git_swarm::index::Error::DirectiveChanged { id: id.to_owned() }.into())
}
