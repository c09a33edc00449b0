//! `git swarm check`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::change::{Change, FileStatus, Selection};
use git_swarm::check::{
    self, Candidate, CheckEntry, NoTools, Outcome as Result_, Report, ToolRunner, ToolVerdict,
    Warning,
};
use git_swarm::event::Kind;
use git_swarm::problem::Problem;
use git_swarm::runner::{Allowlist, Limits, ToolOutcome, display_argv, run_tool};
use git_swarm::trust;
use git_swarm::{Error, Repo, Store};

use super::{Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    change: ChangeArgs,
    /// Check only this directive.
    #[arg(long, value_name = "ID")]
    directive: Option<String>,
    /// Fail on `warn` directives too.
    #[arg(long)]
    strict: bool,
    /// Record a `check` event for each failing directive (once per directive and change).
    #[arg(long)]
    record: bool,
    /// Take the directives from this revision's tree (e.g. the base branch of a pull request).
    #[arg(long, value_name = "REV")]
    knowledge: Option<String>,
    #[arg(long, value_enum, default_value_t)]
    format: CheckFormat,
}

// Which change to look at: shared by `check`, `review` and the `changes`
// plumbing (a plain comment: a doc comment would become the description of
// each). Each command's description says what it does with none given.
#[derive(Debug, clap::Args)]
pub struct ChangeArgs {
    /// HEAD against the index: what a commit would record.
    #[arg(long, group = "change")]
    staged: bool,
    /// HEAD against the working tree, untracked files included.
    #[arg(long, group = "change")]
    worktree: bool,
    /// A range: A..B, or A...B from their merge base (a side left out is HEAD).
    #[arg(long, group = "change", value_name = "A..B")]
    range: Option<String>,
    /// One commit against its first parent.
    #[arg(long, group = "change", value_name = "COMMIT")]
    commit: Option<String>,
}

impl ChangeArgs {
    /// Whether a change was named at all.
    pub fn given(&self) -> bool {
        self.staged || self.worktree || self.range.is_some() || self.commit.is_some()
    }

    pub fn selection(&self) -> Result<Selection, Error> {
        Ok(if self.worktree {
            Selection::Worktree
        } else if let Some(range) = &self.range {
            Selection::range(range)?
        } else if let Some(commit) = &self.commit {
            Selection::Commit(commit.clone())
        } else {
            Selection::Staged
        })
    }
}

/// Output formats of `check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum CheckFormat {
    /// For people: failures grouped by directive, then a summary.
    #[default]
    Text,
    /// The report as JSON (schema/check-report.schema.json).
    Json,
    /// GitHub workflow annotations (::error / ::warning lines).
    Github,
    /// SARIF 2.1.0, for GitHub code scanning.
    Sarif,
    /// GitLab Code Quality report (JSON), for `artifacts:reports:codequality`.
    Codequality,
}

/// Everything `check` needs, whoever calls it (the command or a hook).
pub struct Request {
    pub selection: Selection,
    pub directive: Option<String>,
    pub strict: bool,
    pub record: bool,
    pub format: CheckFormat,
    /// Run by a hook: say nothing when nothing failed, and check the rest
    /// when a directive file does not parse, where the command refuses it
    /// as bad input (exit 2). A broken file the change does not touch must
    /// not block work; one it brings is in [`Verdict::broken_files`].
    pub hook: bool,
    /// The revision whose `.swarm/directives/` are checked, instead of the snapshot's.
    pub knowledge: Option<String>,
}

/// What a check came to: the command's exit code, and for a hook what to
/// say about it (who is to fix what).
#[derive(Debug, Default)]
pub struct Verdict {
    /// How many directives block: `enforce` ones that failed or could not
    /// be evaluated (with `strict`, `warn` ones too).
    pub blocking: usize,
    /// The staged `.swarm/` files that fail `validate`: the change brings
    /// them. (A hook only: the command refuses them as bad input.)
    pub broken_files: Vec<String>,
    /// The blocking directives that could not be evaluated because their
    /// own file is broken (a regex or glob that does not parse), as (id,
    /// file): the directive is to fix, not the change.
    pub broken_directives: Vec<(String, String)>,
}

impl Verdict {
    pub fn exit_code(&self) -> ExitCode {
        ExitCode::from(u8::from(self.blocking > 0 || !self.broken_files.is_empty()))
    }
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    let selection = args.change.selection()?;
    run_request(
        &Request {
            selection,
            directive: args.directive,
            strict: args.strict,
            record: args.record,
            format: args.format,
            hook: false,
            knowledge: args.knowledge,
        },
        ui,
    )
    .map(|v| v.exit_code())
}

pub fn run_request(req: &Request, ui: &mut Ui) -> Result<Verdict, super::CliError> {
    let repo = super::repo()?;
    git_swarm::trace::mark("repo found");
    let store = match Store::open(&repo, super::clock()?) {
        Ok(s) => Some(s),
        // A range or commit carries its own `.swarm/`, and `--knowledge`
        // names one: the working tree need not have one.
        Err(Error::NotInitialised { .. })
            if req.knowledge.is_some()
                || matches!(
                    req.selection,
                    Selection::Range { .. } | Selection::Commit(_)
                ) =>
        {
            None
        }
        Err(e) => return Err(e.into()),
    };
    git_swarm::trace::mark("store opened");
    if let Some(s) = &store {
        ui.problems(&s.config_problems);
    }
    let gix_repo = open_gix(&repo)?;
    git_swarm::trace::mark("gix opened");
    let change = Change::read(&gix_repo, &repo.root, &req.selection)?;
    git_swarm::trace::mark("change read");
    // The `.swarm/` files the commit would bring, held to `validate`'s rules.
    let (staged_errors, staged_warnings): (Vec<Problem>, Vec<Problem>) =
        match staged_swarm_problems(&repo, &gix_repo, &change) {
            Ok(problems) => problems,
            // A hook goes on without them; the directives are still checked.
            Err(e) if req.hook => {
                ui.warning(
                    &format!("the staged files under .swarm/ were not validated: {e}"),
                    Some("`git swarm validate` checks the working tree's .swarm/"),
                );
                Vec::new()
            }
            Err(e) => return Err(e.into()),
        }
        .into_iter()
        .partition(Problem::is_error);
    ui.problems(&staged_warnings);
    let knowledge_tree = req
        .knowledge
        .as_deref()
        .map(|rev| git_swarm::change::tree_of(&gix_repo, rev).map(|(_, tree)| tree))
        .transpose()?;

    // A range, a commit and a staged change bring their own directives: only
    // the fold of the events is needed from the working tree.
    let loaded = match &store {
        Some(s)
            if knowledge_tree.is_some()
                || change.snapshot_tree.is_some()
                || change.selection == Selection::Staged =>
        {
            Some((git_swarm::index::load_fold(s)?, Vec::new()))
        }
        Some(s) => Some(git_swarm::index::load(s)?.index.split_directives()),
        None => None,
    };
    let default_fold = git_swarm::fold::Fold::default();
    let fold = loaded
        .as_ref()
        .map_or(&default_fold, |(summary, _)| &summary.fold);
    git_swarm::trace::mark("fold");
    // The directives of the checked snapshot: B's tree for a range, the
    // index for a staged change (what the commit will carry), the working
    // tree's files for --worktree; or those of `--knowledge REV`.
    let tree_entries = match (
        knowledge_tree.or(change.snapshot_tree),
        change.staged_directive_blobs(),
    ) {
        (Some(tree), _) => Some(git_swarm::index::directives_in_tree(
            &repo.git_dir,
            &gix_repo,
            tree,
        )?),
        (None, Some(blobs)) => Some(git_swarm::index::directives_from_blobs(
            &repo.git_dir,
            &gix_repo,
            &blobs,
        )?),
        (None, None) => None,
    };
    // A snapshot's hives are those its config.toml pins (the working
    // tree's index holds them already): the project's own id wins.
    // A hive whose pin is not fetched here cannot be checked: bad input
    // (CI fails, naming `git swarm hive fetch`), never a silent pass.
    let mut hive_missing: Vec<Problem> = Vec::new();
    let hive_entries = match &tree_entries {
        Some(_) => {
            // A staged change: the config the commit will carry, as
            // staged (a switch-off left unstaged is not the commit's).
            let staged_config = || {
                let config = change.staged_blobs_under(".swarm/config.toml")?;
                let (_, blob, kind) = config
                    .into_iter()
                    .find(|(p, _, _)| p == ".swarm/config.toml")?;
                kind.is_none().then_some(blob)
            };
            let subs = match knowledge_tree.or(change.snapshot_tree) {
                Some(tree) => git_swarm::hive::subscriptions_in_tree(&gix_repo, tree),
                None => staged_config()
                    .map(|blob| git_swarm::pins::subscriptions_in_blob(&gix_repo, blob))
                    .unwrap_or_default(),
            };
            let (found, missing) = git_swarm::hive::entries_of(&repo.common_dir, &subs);
            hive_missing.extend(missing);
            found
        }
        None => {
            hive_missing.extend(store.iter().flat_map(git_swarm::hive::unfetched));
            Vec::new()
        }
    };
    let mut entries = match (&tree_entries, &loaded) {
        (Some(snapshot), _) => snapshot.entries()?,
        (None, Some((_, directives))) => directives.iter().map(CheckEntry::of).collect(),
        (None, None) => Vec::new(),
    };
    if !hive_entries.is_empty() {
        let own: std::collections::HashSet<String> =
            entries.iter().map(|e| e.stem().to_owned()).collect();
        entries.extend(
            hive_entries
                .iter()
                .filter(|e| !own.contains(e.stem()))
                .map(CheckEntry::of),
        );
    }
    git_swarm::trace::mark("snapshot directives");
    // Warnings about the change itself, reported ahead of the evaluation's own.
    // An event file skipped (a link, FIFO or device, or over events.max_file_bytes):
    // the check goes on without its events, and says so.
    let mut notes: Vec<Warning> = loaded
        .iter()
        .flat_map(|(summary, _)| summary.event_files.iter().flat_map(|e| &e.problems))
        .filter(|p| git_swarm::event::is_skipped_file(&p.code))
        .map(|p| Warning::new(p.to_string(), p.hint.as_deref()))
        .chain(rename_limit_warning(&change))
        .collect();
    let nothing_staged = entries.is_empty()
        && knowledge_tree.is_none()
        && change.selection == Selection::Staged
        && store.as_ref().is_some_and(|s| {
            std::fs::read_dir(s.directives_dir()).is_ok_and(|mut d| {
                d.any(|e| e.is_ok_and(|e| e.path().extension().is_some_and(|x| x == "toml")))
            })
        });
    if nothing_staged {
        notes.push(Warning::new(
            "no directive is staged: a staged change is checked against the directives the commit carries, and .swarm/directives/ is not in the index",
            Some("`git add .swarm` (and commit it) to check with the directives in the working tree"),
        ));
    }
    let (candidates, mut problems) = check::candidates(&entries, fold, req.directive.as_deref());
    problems.extend(hive_missing.into_iter().map(|p| {
        let mut e = Problem::error(p.path, "hive", p.message);
        e.hint = p.hint;
        e
    }));
    // Those of a staged file are said with the file's other problems.
    problems.retain(|p| !staged_errors.iter().any(|s| s.path == p.path));
    for path in change.unmerged_directive_files() {
        problems.push(
            Problem::error(
                path,
                "unmerged",
                "the file has an unresolved merge conflict, so the directive the commit will carry is not known",
            )
            .with_hint("resolve the conflict and `git add` the file, then check again"),
        );
    }
    let unmerged = change
        .files
        .iter()
        .filter(|f| f.status == FileStatus::Unmerged)
        .count();
    if unmerged > 0 {
        notes.push(Warning::new(
            format!(
                "{unmerged} path(s) have unresolved merge conflicts: only their names were checked, as they have no staged content"
            ),
            Some("git commits nothing until they are resolved; `git add` each one when it is"),
        ));
    }
    // A check of nothing must not read as a pass (a branch from before the
    // knowledge existed has no `.swarm/`).
    let zero = (candidates.is_empty() && req.directive.is_none() && !nothing_staged).then(|| {
        let whose = match (&req.knowledge, &change.selection) {
            (Some(rev), _) => format!("`{rev}`"),
            (None, Selection::Range { to, .. }) => format!("`{to}`"),
            (None, Selection::Commit(c)) => format!("`{c}`"),
            (None, Selection::Staged) => "the index".into(),
            (None, Selection::Worktree) => "the working tree".into(),
        };
        Warning::new(
            format!(
                "no active directive in {whose}'s .swarm/directives/: the change was checked against none"
            ),
            Some(
                "`--knowledge REV` takes the directives from another revision, e.g. the base branch of a pull request",
            ),
        )
    });
    notes.extend(zero.clone());
    git_swarm::trace::mark("candidates");
    if let Some(id) = &req.directive
        && candidates.is_empty()
        && problems.is_empty()
    {
        return Err(Error::usage(
            format!("no active directive `{id}` in the checked snapshot"),
            "`git swarm list --state active` shows the ids",
        )
        .into());
    }
    let bad_input = !problems.is_empty() || !staged_errors.is_empty();
    if !req.hook && bad_input {
        ui.warnings(&notes);
        problems.extend(staged_errors);
        problems.sort_by(|a, b| (&a.path, a.line, a.column).cmp(&(&b.path, b.line, b.column)));
        return Err(Error::Invalid(problems).into());
    }
    ui.problems(&staged_errors);
    if !problems.is_empty() {
        ui.problems(&problems);
        // A directive read despite its problems is checked all the same.
        let checked = problems
            .iter()
            .filter(|p| candidates.iter().any(|c| c.path == p.path))
            .count();
        if checked < problems.len() {
            ui.warning(
                &format!(
                    "{} directive file problem(s): those directives were not checked",
                    problems.len() - checked
                ),
                Some("fix them (`git swarm validate`); the other directives were checked"),
            );
        }
        if checked > 0 {
            ui.warning(
                &format!(
                    "{checked} directive file problem(s) in directives checked as written: a predicate that cannot be evaluated is an error"
                ),
                Some("fix them (`git swarm validate`)"),
            );
        }
    }

    let limits = store
        .as_ref()
        .map_or_else(Limits::default, |s| Limits::from_config(&s.config.runner));
    let tools = tool_runner(&repo, &entries, &candidates, limits, ui);
    let mut report = check::evaluate(&gix_repo, &change, &candidates, tools.as_ref())?;
    notes.append(&mut report.warnings);
    report.warnings = notes;
    git_swarm::trace::mark("evaluated");

    if req.record
        && let (Some(store), Some((summary, _))) = (&store, &loaded)
    {
        use git_swarm::directive_loop::{checks, escalation};
        let branch = checks::checked_branch(&gix_repo, &req.selection);
        let tip = checks::tip_time(&gix_repo, &req.selection);
        // Recording never decides the check: a log that cannot take the record
        // (a link in its place, a lock held too long, a full disk) is a
        // warning, and the result stands (a hook still blocks on it).
        let recorded = record(store, &summary.fold, &report, branch.as_deref(), tip, ui)
            .unwrap_or_else(|e| not_recorded(&mut report, "the failed checks", &e, false));
        // Nor do escalations: the next command that records appends what is due.
        let escalated = if recorded {
            escalation::due(store, |id| {
                let c = candidates.iter().find(|c| c.directive.id == id)?;
                Some((c.directive.priority, c.directive.enforcement))
            })
            .and_then(|due| super::escalate(store, &due, ui))
            .unwrap_or_else(|e| not_recorded(&mut report, "the escalations due", &e, Vec::new()))
        } else {
            Vec::new()
        };
        // Escalated by the violation just recorded: judged as a check run now
        // would judge them, the change that escalates a `warn` one is blocked.
        for r in report
            .results
            .iter_mut()
            .filter(|r| escalated.iter().any(|e| e == r.id))
        {
            r.priority = git_swarm::directive::Priority::Critical;
            r.enforcement = git_swarm::directive::Enforcement::Enforce;
        }
    }
    let failed = report.counts.fail + report.counts.error > 0 || !report.warnings.is_empty();
    if !req.hook || failed {
        render(&report, req, ui)?;
    }
    // The other formats carry it in their output, which a CI log may not show.
    if let Some(w) = zero
        && req.format != CheckFormat::Text
    {
        ui.warnings(&[w]);
    }
    git_swarm::trace::mark("rendered");
    let blocking = report.blocking(req.strict);
    let mut broken_files: Vec<String> = staged_errors.iter().map(|p| p.path.clone()).collect();
    broken_files.sort_unstable();
    broken_files.dedup();
    // Could not be evaluated, and its file has errors: the directive is broken.
    let broken_directives = blocking
        .iter()
        .filter(|r| r.outcome == Result_::Error)
        .filter(|r| candidates.iter().any(|c| c.path == r.path && !c.gated))
        .map(|r| (r.id.to_owned(), r.path.to_owned()))
        .collect();
    Ok(Verdict {
        blocking: blocking.len(),
        broken_files,
        broken_directives,
    })
}

/// The problems `validate` finds in the `.swarm/` files a staged change
/// adds, modifies or renames (see [`git_swarm::validate::staged`]); none
/// for another change, or a staged one that leaves `.swarm/` alone.
fn staged_swarm_problems(
    repo: &Repo,
    gix_repo: &gix::Repository,
    change: &Change,
) -> Result<Vec<Problem>, Error> {
    if change.selection != Selection::Staged {
        return Ok(Vec::new());
    }
    let changed: Vec<String> = change
        .files
        .iter()
        .filter(|f| !matches!(f.status, FileStatus::Deleted | FileStatus::Unmerged))
        .map(|f| f.path.to_string())
        .filter(|p| p == ".swarm" || p.starts_with(".swarm/"))
        .collect();
    if changed.is_empty() {
        return Ok(Vec::new());
    }
    let Some(files) = change.staged_blobs_under(".swarm") else {
        return Ok(Vec::new());
    };
    let changed: Vec<&str> = changed.iter().map(String::as_str).collect();
    let report =
        git_swarm::validate::staged::validate_index(repo, gix_repo, &files, super::clock()?)?;
    Ok(report.map_or_else(Vec::new, |r| {
        git_swarm::validate::staged::changed_problems(r, &changed)
    }))
}

/// git's warning when `diff.renameLimit` made rename detection skip its
/// similarity pass: renamed files that were edited show as a deletion and
/// an addition, whose lines all count as added.
pub fn rename_limit_warning(change: &Change) -> Option<Warning> {
    let needed = change.rename_limit_needed?;
    let hint =
        format!("`git config diff.renameLimit {needed}` (or more) pairs them, as git suggests");
    Some(Warning::new(
        "rename detection skipped edited files, as there were too many (diff.renameLimit): an edited file that moved counts as deleted and added, every line of it added",
        Some(&hint),
    ))
}

/// Opens the repository with gix, honouring GIT_DIR, GIT_WORK_TREE and
/// GIT_INDEX_FILE (hooks of `git commit -a` run with a temporary index).
pub fn open_gix(repo: &Repo) -> Result<gix::Repository, Error> {
    let mut r = repo.gix();
    // Trees are looked up again for every folder a glob names: keep a few MB of them.
    r.object_cache_size(4 * 1024 * 1024);
    // The index is read, never written: checking its trailing hash (a SHA-1
    // of the whole file) would only cost time, as git's index.skipHash knows.
    let _ = r
        .config_snapshot_mut()
        .set_value(&gix::config::tree::Index::SKIP_HASH, "true");
    Ok(r)
}

/// The runner for `tool:` predicates: the sandboxed runner with the user's
/// allowlist, when the user trusted this set of tool predicates; otherwise
/// every tool predicate is skipped with a warning naming `git swarm trust`.
pub fn tool_runner(
    repo: &Repo,
    entries: &[CheckEntry],
    candidates: &[Candidate],
    limits: Limits,
    ui: &mut Ui,
) -> Box<dyn ToolRunner> {
    let has_tools = candidates
        .iter()
        .any(|c| c.directive.verify.iter().any(|v| v.starts_with("tool:")));
    if !has_tools {
        return Box::new(NoTools {
            message: "no tool predicates".into(),
            hint: None,
        });
    }
    let fingerprint = trust::tool_predicates_fingerprint(
        entries
            .iter()
            .filter_map(|e| e.directive.as_ref())
            .flat_map(|d| d.verify.iter().map(|&v| (d.id, v))),
    );
    if !trust::is_trusted(repo, &fingerprint) {
        return Box::new(NoTools {
            message: "tool predicates were skipped: this repository's set of tool predicates is not trusted (new, or changed since `git swarm trust`)".into(),
            hint: Some("run `git swarm trust` once you have read the tool predicates".into()),
        });
    }
    sandboxed(repo, &repo.root, limits, ui)
}

/// The sandboxed runner, the user's allowlist and `limits` applied, running
/// in `root`: for tool predicates the caller has found trusted.
pub fn sandboxed(
    repo: &Repo,
    root: &std::path::Path,
    limits: Limits,
    ui: &mut Ui,
) -> Box<dyn ToolRunner> {
    Box::new(Sandboxed {
        allow: super::run_tool::allowlist(repo, ui),
        limits,
        root: root.to_path_buf(),
    })
}

struct Sandboxed {
    allow: Allowlist,
    limits: Limits,
    root: std::path::PathBuf,
}

impl ToolRunner for Sandboxed {
    fn run(&self, argv: &[String]) -> ToolVerdict {
        let shown = display_argv(argv);
        match run_tool(argv, &self.root, &self.allow, &self.limits) {
            ToolOutcome::Passed { .. } => ToolVerdict::Holds,
            ToolOutcome::Failed {
                code,
                signal,
                output,
                ..
            } => {
                let how = match (code, signal) {
                    (Some(c), _) => format!("exited with {c}"),
                    (None, Some(s)) => format!("was killed by signal {s}"),
                    (None, None) => "failed".to_owned(),
                };
                let excerpt = output.excerpt(5);
                let excerpt = if excerpt.trim().is_empty() {
                    String::new()
                } else {
                    format!(": {}", excerpt.trim())
                };
                ToolVerdict::Fails(format!("`{shown}` {how}{excerpt}"))
            }
            ToolOutcome::Refused(r) => {
                ToolVerdict::Error(format!("`{shown}` refused: {} ({})", r.message, r.hint))
            }
            ToolOutcome::TimedOut { after, .. } => ToolVerdict::Error(format!(
                "`{shown}` ran past {:.0} s and was killed (runner.timeout_secs)",
                after.as_secs_f64()
            )),
            ToolOutcome::Error { message, hint } => ToolVerdict::Error(match hint {
                Some(h) => format!("`{shown}`: {message} ({h})"),
                None => format!("`{shown}`: {message}"),
            }),
        }
    }
}

/// Says in the report that `what` were not recorded, and gives `none`.
fn not_recorded<T>(report: &mut Report, what: &str, e: &Error, none: T) -> T {
    report.warnings.push(Warning::new(
        format!("{what} were not recorded: {e}"),
        e.hint().as_deref(),
    ));
    none
}

fn record(
    store: &Store,
    fold: &git_swarm::fold::Fold,
    report: &Report,
    branch: Option<&str>,
    tip: Option<i64>,
    ui: &mut Ui,
) -> Result<bool, Error> {
    let (passes, failures): (Vec<_>, Vec<_>) =
        git_swarm::directive_loop::checks::check_events(store, fold, report, branch, tip)
            .into_iter()
            .partition(|r| r.event.known_kind() == Some(Kind::CheckPassed));
    let violations = append_checks(store, &failures, ui)?;
    if violations > 0 {
        ui.note(&format!(
            "recorded {violations} violation(s) (`git swarm commit` shares them)"
        ));
    }
    let remediated = append_checks(store, &passes, ui)?;
    if remediated > 0 {
        ui.note(&format!(
            "recorded {remediated} directive(s) passing on {}: their violations there are remediated",
            branch.unwrap_or_default()
        ));
    }
    Ok(violations > 0)
}

/// Appends the check outcomes not recorded yet for their directive and change.
fn append_checks(
    store: &Store,
    records: &[git_swarm::directive_loop::checks::CheckRecord],
    ui: &mut Ui,
) -> Result<usize, Error> {
    if records.is_empty() {
        return Ok(0);
    }
    let events: Vec<git_swarm::event::Event> = records.iter().map(|r| r.event.clone()).collect();
    // The fold is what the log held when this check began; another check
    // of the same change may have recorded since. Asked again under the
    // log's lock, of several racing checks one records each outcome.
    let (written, saved) = git_swarm::event::append_unrecorded(
        &store.log(),
        &events,
        |e| {
            e.data
                .get("change")
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_owned()
        },
        |e, line| {
            records
                .iter()
                .find(|r| r.event.id == e.id)
                .is_some_and(|r| r.recorded_by(line))
        },
        &store.config.events,
    )?;
    super::report_torn(store, &saved, ui);
    Ok(written)
}

fn render(report: &Report, req: &Request, ui: &mut Ui) -> std::io::Result<()> {
    match req.format {
        CheckFormat::Json => ui.json(report),
        CheckFormat::Github => ui.write_out(check::github_annotations(report).as_bytes()),
        CheckFormat::Sarif => ui.json(&check::sarif(report, env!("CARGO_PKG_VERSION"))),
        CheckFormat::Codequality => {
            // The report has no place for them; a CI log shows stderr.
            ui.warnings(&report.warnings);
            ui.json(&check::code_quality(report))
        }
        CheckFormat::Text => text(report, req.strict, ui),
    }
}

/// A result's directive as people read it: `hive:NAME/ID` for a hive's.
fn shown_id(r: &git_swarm::check::DirectiveResult<'_>) -> String {
    match r.path.strip_prefix("hive:") {
        Some(rest) => format!("hive:{}", rest.strip_suffix(".toml").unwrap_or(rest)),
        None => r.id.to_owned(),
    }
}

fn text(report: &Report, strict: bool, ui: &mut Ui) -> std::io::Result<()> {
    let clean = super::clean;
    ui.warnings(&report.warnings);
    // One write: stdout is line-buffered, and a report can run to thousands of lines.
    // Room for a few lines a failure up front, rather than copying as it grows.
    let mut buf = Vec::with_capacity(256 * (1 + report.counts.fail + report.counts.error));
    let out = &mut buf;
    for r in report
        .results
        .iter()
        .filter(|r| matches!(r.outcome, Result_::Fail | Result_::Error))
    {
        let label = if r.outcome == Result_::Fail {
            "FAIL "
        } else {
            "ERROR"
        };
        writeln!(
            out,
            "{label} {} [{}, {}]",
            clean(&shown_id(r)),
            r.enforcement,
            r.priority
        )?;
        writeln!(out, "      {}", clean(r.lesson))?;
        for p in r
            .predicates
            .iter()
            .filter(|p| matches!(p.outcome, Result_::Fail | Result_::Error))
        {
            let why = p
                .message
                .as_deref()
                .map(|m| format!(": {m}"))
                .unwrap_or_default();
            writeln!(out, "      {}{}", clean(p.predicate), clean(&why))?;
            for f in p.findings.iter().take(20) {
                let at = f.line.map(|l| format!(":{l}")).unwrap_or_default();
                let text = f
                    .text
                    .as_deref()
                    .map(|t| format!(": {}", git_swarm::display::escape_line(t)))
                    .unwrap_or_default();
                writeln!(out, "        {}{at}{}", clean(&f.path), clean(&text))?;
            }
            let listed = p.findings.len().min(20);
            let more = p.findings.len() + p.omitted - listed;
            if more > 0 {
                writeln!(out, "        … and {more} more")?;
            }
        }
    }
    let c = &report.counts;
    let total = report.results.len();
    writeln!(
        out,
        "checked {} ({} file{}) against {total} directive{}: {} failed, {} error{}, {} passed, {} n/a",
        report.change,
        report.files,
        if report.files == 1 { "" } else { "s" },
        if total == 1 { "" } else { "s" },
        c.fail,
        c.error,
        if c.error == 1 { "" } else { "s" },
        c.pass,
        c.not_applicable
    )?;
    let blocking = report.blocking(strict);
    if !blocking.is_empty() {
        let ids: Vec<String> = (blocking.iter())
            .map(|r| clean(&shown_id(r)).into_owned())
            .collect();
        writeln!(
            out,
            "blocked by {} directive{}: {}",
            ids.len(),
            if ids.len() == 1 { "" } else { "s" },
            ids.join(", ")
        )?;
    }
    ui.write_out(&buf)
}
