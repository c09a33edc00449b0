//! `git swarm pattern …`: the pattern learning loop (docs/patterns.md).

use std::io::Write;
use std::process::ExitCode;

use git_swarm::Error;
use git_swarm::event::Event;
use git_swarm::pattern::fold::{self, Pattern, PatternFold, State, View};
use git_swarm::pattern::inject as block;
use git_swarm::pattern::text::{self, Level, Match, VerdictKind};

use super::{Format, Outcome, Ui};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    Extract(ExtractArgs),
    List(ListArgs),
    Show(ShowArgs),
    Inject(InjectArgs),
    Feedback(FeedbackArgs),
    Outcome(OutcomeArgs),
    Promote(PromoteArgs),
    Deprecate(DeprecateArgs),
}

/// Store the observations of a deliberation as patterns.
///
/// Reads markdown written by an adversarial role (auditor, judge,
/// sentinel, …) and keeps its bullets and findings, not headings,
/// boilerplate or code. Each is classified `rule` (must, never, always…),
/// `causal` (because, leads to…) or `observation`, and recorded as a
/// `pattern_observed` event. A pattern's id is a hash of its normalised
/// text and the role: the same text from the same role is one more
/// observation of the same pattern, and a near-duplicate (token Jaccard of
/// at least `patterns.near_duplicate`) joins the existing pattern. A
/// pattern is observed at most once per run. A malformed deliberation is
/// reported with its line and nothing is recorded (exit 2).
#[derive(Debug, clap::Args)]
pub struct ExtractArgs {
    /// The role that wrote the deliberation.
    #[arg(long, value_name = "ROLE")]
    role: String,
    /// The pipeline run it belongs to.
    #[arg(long, value_name = "RUN")]
    run: String,
    /// Labels of the work (issue labels, phase…): the pattern's context.
    #[arg(long, value_delimiter = ',', value_name = "LABEL,..")]
    labels: Vec<String>,
    /// Files of the change: the pattern's context.
    #[arg(long, value_delimiter = ',', value_name = "PATH,..")]
    files: Vec<String>,
    /// The deliberation (`-`: standard input).
    #[arg(value_name = "FILE", default_value = "-")]
    file: String,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

/// List patterns with their state, score and record.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Only patterns learned from this role.
    #[arg(long, value_name = "ROLE")]
    role: Option<String>,
    /// Only patterns in this lifecycle state.
    #[arg(long, alias = "status", value_enum, value_name = "STATE")]
    state: Option<State>,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

/// Show a pattern's whole record: every event and each part of its score.
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// The pattern's id (`p` and 16 hex digits, as `pattern list` shows), or an alias of it.
    #[arg(value_name = "ID")]
    id: String,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

/// Print the HISTORICAL PATTERNS block for a role.
///
/// The role's patterns that are not deprecated, and other roles' active
/// (promoted) ones marked `via:<role>`, scoring at least
/// `patterns.min_score`, one line each with its record (`5x validated`,
/// `-2 net, 3x ignored`, or `score:0.42` for a pattern with neither). The
/// budget is `patterns.adversarial_budget` tokens (800) for the roles in
/// `patterns.adversarial_roles` and `patterns.budget` (500) for others;
/// when the lines do not all fit, the highest-scoring ones that fit.
/// Prints nothing when no pattern qualifies.
#[derive(Debug, clap::Args)]
pub struct InjectArgs {
    /// The role whose prompt gets the block: its patterns, and other roles' active ones.
    #[arg(long, value_name = "ROLE")]
    role: String,
    /// Labels of the work: patterns seen with them score higher.
    #[arg(long, value_delimiter = ',', value_name = "LABEL,..")]
    labels: Vec<String>,
    /// Files of the change: patterns seen with them (or their folders) score higher.
    #[arg(long, value_delimiter = ',', value_name = "PATH,..")]
    files: Vec<String>,
    /// Token budget (default: the role's, from config).
    #[arg(long, value_name = "N")]
    budget: Option<usize>,
    /// Tokens left in the prompt: the block takes at most half, and is
    /// skipped when that is less than `patterns.min_budget`.
    #[arg(long, value_name = "N")]
    remaining: Option<usize>,
    /// Record the injection for this run (`pattern_shown`): it counts as
    /// the patterns' use, and `pattern outcome` grades them.
    #[arg(long, value_name = "RUN")]
    run: Option<String>,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

/// Correct patterns from a validator's verdict.
///
/// The verdict carries a `<!-- jkz:verdict-json {…} -->` comment or a
/// ```` ```verdict-json ```` block: `verdict` PASS or FAIL, `issues`,
/// `must_fix`, `false_positives`. Each false positive is found among the
/// deliberation's findings by whole words (the same words, else a run of
/// at least 3 words, 2 of them not stop words, within the finding, else a
/// token overlap of at least `patterns.finding_match`); a shorter text, or
/// one that several findings match alike, is reported and matches nothing.
/// The matched pattern is recorded as ignored,
/// weighted by the adversarial role (`patterns.ignore_weights`); a pattern
/// validated before is flagged a regression. On PASS, or FAIL with an empty
/// `must_fix`, the deliberation's evidence decides: execution output
/// (level 1) or a `path:line` citation of a file of the change (level 2)
/// validates the run's file-relevant and top patterns (at most
/// `patterns.reinforce_top`) and ages the run's others; reasoning alone
/// (level 3) changes nothing. Malformed input is reported with file:line
/// and nothing is recorded (exit 2).
#[derive(Debug, clap::Args)]
pub struct FeedbackArgs {
    /// The role whose deliberation is judged.
    #[arg(long, value_name = "ROLE")]
    adversarial_role: String,
    /// The role that wrote the verdict.
    #[arg(long, value_name = "ROLE")]
    validator_role: String,
    /// The pipeline run the deliberation and the verdict belong to.
    #[arg(long, value_name = "RUN")]
    run: String,
    /// The adversarial role's deliberation, as given to `pattern extract` (`-`: standard input).
    #[arg(long, value_name = "FILE")]
    deliberation: String,
    /// The validator's verdict: markdown with the verdict JSON (`-`: standard input).
    #[arg(long = "verdicts", alias = "verdict", value_name = "FILE")]
    verdict: String,
    /// Files of the change (default: those given to `pattern extract` for the run).
    #[arg(long, value_delimiter = ',', value_name = "PATH,..")]
    files: Vec<String>,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

/// Record how a run's merged work ended, grading the patterns it used.
///
/// The patterns observed in the run or injected for it (`pattern inject
/// --run`) each get `patterns.outcome_weight` (0.5) added to their
/// validations on `--pass`, or to their weighted ignores on `--fail`. A
/// run has one outcome: a second is refused, and so is an outcome for a
/// run no pattern was observed in or injected for (a mistyped run id).
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("result").required(true).args(["pass", "fail"])))]
pub struct OutcomeArgs {
    /// The pipeline run: one that patterns were observed in or injected for.
    #[arg(long, value_name = "RUN")]
    run: String,
    /// The work held up.
    #[arg(long)]
    pass: bool,
    /// The work failed.
    #[arg(long)]
    fail: bool,
}

/// Make a pattern active: shared with every role (a human decision, recorded).
#[derive(Debug, clap::Args)]
pub struct PromoteArgs {
    /// The pattern's id (as `pattern list` shows), or an alias of it.
    #[arg(value_name = "ID")]
    id: String,
    /// Why (recorded with the event).
    #[arg(long, value_name = "TEXT")]
    justification: Option<String>,
}

/// Deprecate a pattern: it is no longer injected (until promoted again).
#[derive(Debug, clap::Args)]
pub struct DeprecateArgs {
    /// The pattern's id (as `pattern list` shows), or an alias of it.
    #[arg(value_name = "ID")]
    id: String,
    /// Why (recorded with the event, as its `reason`).
    #[arg(long = "justification", alias = "reason", value_name = "TEXT")]
    reason: Option<String>,
}

pub fn run(command: Command, ui: &mut Ui) -> Outcome {
    match command {
        Command::Extract(a) => extract(a, ui),
        Command::List(a) => list(a, ui),
        Command::Show(a) => show(a, ui),
        Command::Inject(a) => inject(a, ui),
        Command::Feedback(a) => feedback(a, ui),
        Command::Outcome(a) => outcome(a, ui),
        Command::Promote(a) => mark(
            &a.id,
            "pattern_promoted",
            "justification",
            a.justification,
            ui,
        ),
        Command::Deprecate(a) => mark(&a.id, "pattern_deprecated", "reason", a.reason, ui),
    }
}

fn now_ms(store: &git_swarm::Store) -> i64 {
    store.clock.now().as_millisecond()
}

fn patterns(store: &git_swarm::Store) -> Result<PatternFold, Error> {
    Ok(git_swarm::index::patterns(store)?
        .index
        .patterns
        .unwrap_or_default())
}

fn extract(mut args: ExtractArgs, ui: &mut Ui) -> Outcome {
    super::args::check_role(&args.role)?;
    super::args::check_run(&args.run)?;
    args.labels = super::args::clean_list(&args.labels);
    args.files = super::args::clean_list(&args.files);
    let markdown = super::args::read_input(&args.file, "deliberation")?;
    let observations = text::extract(&markdown)
        .map_err(|e| super::args::bad_file(&args.file, &e, "deliberation"))?;
    let store = super::store(ui)?;
    // The role's patterns, read in place from the index (not dropped: the
    // process ends soon after).
    let loaded = std::mem::ManuallyDrop::new(git_swarm::index::pattern_views(&store)?);
    let stored = loaded.role_patterns(&args.role)?;
    let cfg = &store.config.patterns;
    // Existing patterns of the role, tokenised once, for near-duplicates.
    let mut known: Vec<(String, Vec<String>)> = stored
        .views
        .iter()
        .map(|p| (p.id.to_owned(), text::tokens(&text::normalise(p.text))))
        .collect();
    let mut events = Vec::new();
    let mut report = Vec::new();
    for o in &observations {
        let own = text::pattern_id(&o.normalised, &args.role);
        let toks = text::tokens(&o.normalised);
        let (id, how) = match stored.resolve(&own) {
            Some(p) => (p.id.to_owned(), "again".to_owned()),
            // A record shown or graded by id before it was ever observed.
            None if stored.has_record(&own) => (own.clone(), "again".to_owned()),
            None => {
                let best = known
                    .iter()
                    .filter(|(id, _)| *id != own)
                    .map(|(id, t)| (id, text::jaccard(&toks, t)))
                    .max_by(|a, b| a.1.total_cmp(&b.1).then_with(|| b.0.cmp(a.0)));
                match best {
                    Some((id, j)) if j >= cfg.near_duplicate => {
                        (id.clone(), format!("joined ({j:.2})"))
                    }
                    _ => (own.clone(), "new".to_owned()),
                }
            }
        };
        let seen = stored
            .resolve(&id)
            .is_some_and(|p| p.has("pattern_observed", &args.run))
            || events
                .iter()
                .any(|e: &Event| e.data.get("pattern").and_then(|v| v.as_str()) == Some(&id));
        if seen {
            report.push((id, "already recorded for this run".to_owned(), o));
            continue;
        }
        if how == "new" {
            known.push((id.clone(), toks));
        }
        let mut e = store
            .event("pattern_observed")
            .with("pattern", id.clone())
            .with("role", args.role.clone())
            .with("text", o.text.clone())
            .with("category", o.category.as_str())
            .with("run", args.run.clone())
            .with("labels", args.labels.clone())
            .with("files", args.files.clone());
        if id != own {
            e = e.with("alias", own.clone());
        }
        e.actor.role = Some(args.role.clone());
        events.push(e);
        report.push((id, how, o));
    }
    if !events.is_empty() {
        super::append(&store, &events, ui)?;
    }
    if args.format == Format::Json {
        let rows: Vec<_> = report
            .iter()
            .map(|(id, how, o)| {
                serde_json::json!({"id": id, "stored": how, "category": o.category, "line": o.line, "text": o.text})
            })
            .collect();
        ui.json(&serde_json::json!({"run": args.run, "role": args.role, "recorded": events.len(), "observations": rows}))?;
        return Ok(ExitCode::SUCCESS);
    }
    for (id, how, o) in &report {
        let line = format!("{id}  {:<11} {:<30} {}", o.category.as_str(), how, o.text);
        writeln!(ui.out, "{}", super::clean(&line))?;
    }
    writeln!(
        ui.out,
        "Recorded {} observation(s) of {} found in {}.",
        events.len(),
        observations.len(),
        args.file
    )?;
    Ok(ExitCode::SUCCESS)
}

fn row(
    id: &str,
    p: &Pattern,
    cfg: &git_swarm::config::PatternsConfig,
    now: i64,
) -> serde_json::Value {
    let s = fold::score(p, cfg, now, &[], &[]);
    serde_json::json!({
        "id": id,
        "role": p.role,
        "category": p.category,
        "state": fold::state(p, cfg, now),
        "text": p.text,
        "observations": p.observations,
        "validated": p.validated,
        "ignored": p.ignored,
        "ignore_weight": p.ignore_weight,
        "regressions": p.regressions,
        "outcome_passes": p.outcome_passes,
        "outcome_fails": p.outcome_fails,
        "aged": p.aged,
        "labels": p.labels,
        "files": p.files,
        "score": s,
    })
}

fn list(args: ListArgs, ui: &mut Ui) -> Outcome {
    if let Some(r) = &args.role {
        super::args::check_role(r)?;
    }
    let store = super::store(ui)?;
    let fold = patterns(&store)?;
    let cfg = &store.config.patterns;
    let now = now_ms(&store);
    let mut rows: Vec<(&String, &Pattern, f64, State)> = fold
        .observed()
        .filter(|(_, p)| args.role.as_ref().is_none_or(|r| &p.role == r))
        .map(|(id, p)| {
            (
                id,
                p,
                fold::score(p, cfg, now, &[], &[]).total,
                fold::state(p, cfg, now),
            )
        })
        .filter(|r| args.state.is_none_or(|s| s == r.3))
        .collect();
    rows.sort_by(|a, b| b.2.total_cmp(&a.2).then_with(|| a.0.cmp(b.0)));
    if args.format == Format::Json {
        let out: Vec<_> = rows
            .iter()
            .map(|(id, p, _, _)| row(id, p, cfg, now))
            .collect();
        ui.json(&out)?;
        return Ok(ExitCode::SUCCESS);
    }
    if rows.is_empty() {
        writeln!(ui.out, "no patterns")?;
        return Ok(ExitCode::SUCCESS);
    }
    for (id, p, score, state) in &rows {
        let record = p
            .record()
            .unwrap_or_else(|| format!("{}x seen", p.observations));
        let line = format!(
            "{id}  {:<10} {score:>5.2}  {:<20} {:<10} {}",
            state.as_str(),
            record,
            p.role,
            truncate(&p.text, 72)
        );
        writeln!(ui.out, "{}", super::clean(&line))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_owned()
    } else {
        format!("{}…", s.chars().take(n - 1).collect::<String>())
    }
}

/// The pattern an id (or an alias of it) names, or a usage error.
fn find<'a>(fold: &'a PatternFold, id: &'a str) -> Result<(&'a str, &'a Pattern), Error> {
    fold.resolve(id)
        .filter(|(_, p)| p.observations > 0)
        .ok_or_else(|| Error::Usage {
            message: format!("no pattern `{id}`"),
            hint: Some("`git swarm pattern list` shows the patterns and their ids".into()),
        })
}

fn show(args: ShowArgs, ui: &mut Ui) -> Outcome {
    let store = super::store(ui)?;
    let fold = patterns(&store)?;
    let (id, p) = find(&fold, &args.id)?;
    let cfg = &store.config.patterns;
    let now = now_ms(&store);
    let (events, problems) = git_swarm::directive_loop::records::read_log(&store)?;
    for pr in &problems {
        ui.problem(pr);
    }
    let mine: Vec<&Event> = events
        .iter()
        .filter(|e| {
            let names = |k: &str| match e.data.get(k) {
                Some(serde_json::Value::String(s)) => s == id,
                Some(serde_json::Value::Array(a)) => a.iter().any(|v| v.as_str() == Some(id)),
                _ => false,
            };
            fold::is_pattern_kind(&e.kind) && (names("pattern") || names("patterns"))
        })
        .collect();
    if args.format == Format::Json {
        let mut r = row(id, p, cfg, now);
        r["events"] = serde_json::to_value(&mine).unwrap_or_default();
        ui.json(&r)?;
        return Ok(ExitCode::SUCCESS);
    }
    let s = fold::score(p, cfg, now, &[], &[]);
    let out = &mut ui.out;
    writeln!(out, "pattern {id}")?;
    writeln!(out, "role:      {}", p.role)?;
    writeln!(out, "category:  {}", p.category.map_or("?", |c| c.as_str()))?;
    writeln!(out, "state:     {}", fold::state(p, cfg, now).as_str())?;
    writeln!(out, "text:      {}", super::clean(&p.text))?;
    writeln!(
        out,
        "record:    {} observed, {} validated, {} ignored (weight {:.2}), {} regression(s), outcomes {} pass / {} fail, aged {}",
        p.observations,
        p.validated,
        p.ignored,
        p.ignore_weight,
        p.regressions,
        p.outcome_passes,
        p.outcome_fails,
        p.aged
    )?;
    writeln!(
        out,
        "score:     {:.3} = success rate {:.3} × decay {:.3} (age {:.1} days) × category {:.2} × context {:.2}",
        s.total, s.success_rate, s.decay, s.age_days, s.category, s.context
    )?;
    if !p.labels.is_empty() || !p.files.is_empty() {
        writeln!(out, "contexts:  labels {:?} files {:?}", p.labels, p.files)?;
    }
    writeln!(out, "events:")?;
    for e in mine {
        let mut detail: Vec<String> = Vec::new();
        for k in [
            "run",
            "weight",
            "regression",
            "level",
            "result",
            "false_positive",
            "reason",
            "justification",
        ] {
            if let Some(v) = e.data.get(k) {
                detail.push(format!(
                    "{k}={}",
                    v.as_str().map_or_else(|| v.to_string(), str::to_owned)
                ));
            }
        }
        let line = format!("  {} {:<18} {}", e.ts, e.kind, detail.join(" "));
        writeln!(out, "{}", super::clean(&line))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The block `git swarm inject` appends for a role (empty when none), with the fold it came from.
pub fn block_for(
    store: &git_swarm::Store,
    loaded: &git_swarm::index::Loaded,
    role: &str,
    labels: &[String],
    files: &[String],
    budget: usize,
) -> Result<block::Block, Error> {
    let views = loaded.pattern_views(role)?;
    git_swarm::trace::mark("pattern views read");
    // An empty or space-padded item would match what it should not.
    let labels = &super::args::clean_list(labels);
    let files = &super::args::clean_list(files);
    Ok(block::select(
        views,
        &store.config.patterns,
        &block::Query {
            role,
            labels,
            files,
            budget,
            now_ms: now_ms(store),
        },
    ))
}

fn inject(args: InjectArgs, ui: &mut Ui) -> Outcome {
    super::args::check_role(&args.role)?;
    if let Some(r) = &args.run {
        super::args::check_run(r)?;
    }
    let store = super::store(ui)?;
    let Some(budget) = block::budget(
        &store.config.patterns,
        &args.role,
        args.budget,
        args.remaining,
    ) else {
        if args.format == Format::Json {
            ui.json(&serde_json::json!({"role": args.role, "skipped": "too little prompt space left", "patterns": []}))?;
        }
        return Ok(ExitCode::SUCCESS);
    };
    // Not dropped: freeing every record just before exiting is wasted time.
    let loaded = std::mem::ManuallyDrop::new(git_swarm::index::pattern_views(&store)?);
    let b = block_for(
        &store,
        &loaded,
        &args.role,
        &args.labels,
        &args.files,
        budget,
    )?;
    // Delivered before recorded: patterns that never reached the agent (a
    // closed pipe, a full disk) must not count as used by the run. And not
    // delivered for a run whose log would refuse the record.
    if args.run.is_some() && !b.lines.is_empty() {
        store.check_appendable(&store.event("pattern_shown"))?;
    }
    if args.format == Format::Json {
        ui.json(&b)?;
    } else {
        write!(ui.out, "{}", b.render())?;
    }
    ui.out.flush()?;
    if let Some(run) = &args.run
        && !b.lines.is_empty()
    {
        let ids: Vec<&str> = b.lines.iter().map(|l| l.id.as_str()).collect();
        let mut e = store
            .event("pattern_shown")
            .with("patterns", ids)
            .with("run", run.clone());
        e.actor.role = Some(args.role.clone());
        super::append(&store, &[e], ui)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn feedback(mut args: FeedbackArgs, ui: &mut Ui) -> Outcome {
    super::args::check_role(&args.adversarial_role)?;
    super::args::check_role(&args.validator_role)?;
    super::args::check_run(&args.run)?;
    args.files = super::args::clean_list(&args.files);
    let deliberation = super::args::read_input(&args.deliberation, "deliberation")?;
    let verdict_text = super::args::read_input(&args.verdict, "verdict")?;
    let observations = text::extract(&deliberation)
        .map_err(|e| super::args::bad_file(&args.deliberation, &e, "deliberation"))?;
    let verdict = text::parse_verdict(&verdict_text)
        .map_err(|e| super::args::bad_file(&args.verdict, &e, "verdict"))?;
    let store = super::store(ui)?;
    let role = &args.adversarial_role;
    // One role's patterns, read in place from the index; not dropped, as
    // in `pattern inject`: the process ends soon after.
    let loaded = std::mem::ManuallyDrop::new(git_swarm::index::pattern_views(&store)?);
    let known = loaded.role_patterns(role)?;
    let cfg = &store.config.patterns;
    let now = now_ms(&store);
    let mut events = Vec::new();
    let mut lines: Vec<String> = Vec::new();
    let mut ignored: Vec<String> = Vec::new();
    // The stored pattern of an observation: its own id, or the pattern it joined.
    let pattern_of = |o: &text::Observation| -> Option<(String, &View)> {
        let own = text::pattern_id(&o.normalised, role);
        known.resolve(&own).map(|p| (p.id.to_owned(), p))
    };
    let new_event = |kind: &str, id: &str| {
        let mut e = store
            .event(kind)
            .with("pattern", id.to_owned())
            .with("run", args.run.clone());
        e.actor.role = Some(args.validator_role.clone());
        e
    };

    let finder = text::Finder::new(&observations);
    for fp in &verdict.false_positives {
        let found = match finder.find(fp, cfg.finding_match) {
            Match::Phrase { index } => Some((index, "phrase".to_owned())),
            Match::Label { index } => Some((index, "label".to_owned())),
            Match::Overlap { index, score } => Some((index, format!("token overlap {score:.2}"))),
            Match::Ambiguous { indices } => {
                let at: Vec<String> = indices
                    .iter()
                    .map(|&i| observations[i].line.to_string())
                    .collect();
                lines.push(format!(
                    "false positive matches {} findings alike (lines {}), nothing recorded; quote more of the finding: {fp}",
                    indices.len(),
                    at.join(", ")
                ));
                None
            }
            Match::TooShort => {
                lines.push(format!(
                    "false positive too short to name a finding (it needs {} words, {} of them not stop words), nothing recorded: {fp}",
                    text::MIN_FALSE_POSITIVE_WORDS,
                    text::MIN_FALSE_POSITIVE_CONTENT_WORDS
                ));
                None
            }
            Match::None { best } => {
                lines.push(format!(
                    "false positive not found in the deliberation (best token overlap {best:.2}), nothing recorded: {fp}"
                ));
                None
            }
        };
        let Some((index, how)) = found else { continue };
        let Some((id, p)) = pattern_of(&observations[index]) else {
            lines.push(format!(
                "false positive matches a finding (line {}) that is not a stored pattern; run `git swarm pattern extract` first: {fp}",
                observations[index].line
            ));
            continue;
        };
        if p.has("pattern_ignored", &args.run) || ignored.contains(&id) {
            lines.push(format!("{id} already ignored for this run"));
            continue;
        }
        let weight = cfg.ignore_weight(role);
        let regression = p.stats.validated > 0;
        events.push(
            new_event("pattern_ignored", &id)
                .with("weight", weight)
                .with("regression", regression)
                .with("false_positive", fp.clone())
                .with("match", how.clone()),
        );
        lines.push(format!(
            "ignored {id} (weight {weight}, matched by {how}){}: {}",
            if regression {
                ", REGRESSION: it had been validated"
            } else {
                ""
            },
            p.text
        ));
        ignored.push(id);
    }

    let passes = verdict.verdict == VerdictKind::Pass || verdict.must_fix.is_empty();
    let mut level = None;
    if passes {
        // The change's files: given, else the run's from `pattern extract`.
        let mut changed = args.files.clone();
        if changed.is_empty() {
            for p in known.views.iter().filter(|p| p.used_in(&args.run)) {
                for f in &p.files {
                    if !changed.iter().any(|c| c == f) {
                        changed.push((*f).to_owned());
                    }
                }
            }
        }
        let ev = text::evidence(&deliberation, &changed);
        level = Some(ev.level);
        if ev.level == Level::Reasoning {
            lines.push("evidence is reasoning only (level 3): no pattern reinforced".into());
        } else {
            lines.push(format!(
                "evidence level {} ({}){}",
                ev.level.as_u8(),
                if ev.level == Level::Execution {
                    "execution output"
                } else {
                    "file:line citation"
                },
                ev.excerpt
                    .as_ref()
                    .map_or(String::new(), |x| format!(": {x}"))
            ));
            // The run's patterns of the role: file-relevant first, then by score.
            let mut run_patterns: Vec<(&str, &View, bool, f64)> = known
                .views
                .iter()
                .filter(|p| p.used_in(&args.run) && !ignored.iter().any(|i| i == p.id))
                .map(|p| {
                    // Seen with a cited file, or naming a file of the change.
                    let relevant = ev.cited_files.iter().any(|f| p.files.contains(&f.as_str()))
                        || changed.iter().any(|f| p.text.contains(f.as_str()));
                    let score = fold::score_of(
                        &p.stats,
                        &p.labels,
                        &p.files,
                        cfg,
                        now,
                        &[],
                        &ev.cited_files,
                    );
                    (p.id, p, relevant, score.total)
                })
                .collect();
            run_patterns.sort_by(|a, b| {
                b.2.cmp(&a.2)
                    .then(b.3.total_cmp(&a.3))
                    .then_with(|| a.0.cmp(b.0))
            });
            for (i, (id, p, relevant, _)) in run_patterns.iter().enumerate() {
                if i < cfg.reinforce_top {
                    if p.has("pattern_validated", &args.run) {
                        lines.push(format!("{id} already validated for this run"));
                        continue;
                    }
                    events.push(new_event("pattern_validated", id).with("level", ev.level.as_u8()));
                    lines.push(format!(
                        "validated {id}{}: {}",
                        if *relevant {
                            " (cites a file of the change)"
                        } else {
                            ""
                        },
                        p.text
                    ));
                } else if !p.has("pattern_aged", &args.run) {
                    events.push(new_event("pattern_aged", id));
                    lines.push(format!("aged {id}: {}", p.text));
                }
            }
        }
    } else {
        lines.push(format!(
            "verdict FAIL with {} must-fix item(s): only false positives are corrected",
            verdict.must_fix.len()
        ));
    }
    if !events.is_empty() {
        super::append(&store, &events, ui)?;
    }
    if args.format == Format::Json {
        ui.json(&serde_json::json!({
            "run": args.run,
            "verdict": verdict.verdict,
            "evidence_level": level.map(|l| l.as_u8()),
            "recorded": events.iter().map(|e| serde_json::json!({"kind": e.kind, "pattern": e.data.get("pattern")})).collect::<Vec<_>>(),
            "notes": lines,
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    for l in &lines {
        writeln!(ui.out, "{}", super::clean(l))?;
    }
    writeln!(ui.out, "Recorded {} event(s).", events.len())?;
    Ok(ExitCode::SUCCESS)
}

fn outcome(args: OutcomeArgs, ui: &mut Ui) -> Outcome {
    super::args::check_run(&args.run)?;
    let store = super::store(ui)?;
    let fold = patterns(&store)?;
    if let Some((pass, _)) = fold.outcomes.get(&args.run) {
        return Err(Error::Usage {
            message: format!(
                "run `{}` already has an outcome ({})",
                args.run,
                if *pass { "pass" } else { "fail" }
            ),
            hint: Some("a run has one outcome".into()),
        }
        .into());
    }
    // Every record, observed here or not: a pattern injected for the run by
    // id is graded too.
    let used: Vec<&String> = fold
        .patterns
        .iter()
        .filter(|(_, p)| p.used_in(&args.run))
        .map(|(id, _)| id)
        .collect();
    if used.is_empty() {
        // An outcome locks the run: one for a mistyped id would lock a run
        // that has not started yet.
        return Err(Error::Usage {
            message: format!(
                "no pattern was observed in or injected for run `{}`: nothing to grade",
                args.run
            ),
            hint: Some(
                "check the run id; patterns join a run with `git swarm pattern extract --run` \
                 or `git swarm pattern inject --run`; nothing was recorded"
                    .into(),
            ),
        }
        .into());
    }
    let result = if args.pass { "pass" } else { "fail" };
    let e = store
        .event("outcome")
        .with("run", args.run.clone())
        .with("result", result)
        .with(
            "patterns",
            used.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        );
    super::append(&store, &[e], ui)?;
    writeln!(
        ui.out,
        "Recorded outcome {result} of run {}: {} pattern(s) graded.",
        super::clean(&args.run),
        used.len()
    )?;
    Ok(ExitCode::SUCCESS)
}

fn mark(id: &str, kind: &str, key: &str, why: Option<String>, ui: &mut Ui) -> Outcome {
    let store = super::store(ui)?;
    let fold = patterns(&store)?;
    let (id, _) = find(&fold, id)?;
    let mut e = store.event(kind).with("pattern", id.to_owned());
    if let Some(w) = why {
        e = e.with(key, w);
    }
    super::append(&store, &[e], ui)?;
    let what = if kind == "pattern_promoted" {
        "Promoted"
    } else {
        "Deprecated"
    };
    writeln!(ui.out, "{what} {id}.")?;
    Ok(ExitCode::SUCCESS)
}
