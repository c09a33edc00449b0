//! `git swarm pattern …`: the pattern learning loop (docs/patterns.md).

mod extract;
mod feedback;
mod inject;
mod list;
mod show;

use std::io::Write;
use std::process::ExitCode;

use git_swarm::Error;
use git_swarm::event::Body;
use git_swarm::pattern::fold::{self, Pattern, PatternFold};

pub use inject::{block_for, check_shown, note_withheld as note_withheld_patterns, record_shown};

use super::{Outcome, Ui};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
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
    Extract(extract::Args),
    /// List patterns with their state, score and record.
    List(list::Args),
    /// Show a pattern's whole record: every event and each part of its score.
    Show(show::Args),
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
    Inject(inject::Args),
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
    Feedback(feedback::Args),
    /// Record how a run's merged work ended, grading the patterns it used.
    ///
    /// The patterns observed in the run or injected for it (`pattern inject
    /// --run`) each get `patterns.outcome_weight` (0.5) added to their
    /// validations on `--pass`, or to their weighted ignores on `--fail`. A
    /// run has one outcome: a second is refused, and so is an outcome for a
    /// run no pattern was observed in or injected for (a mistyped run id).
    Outcome(OutcomeArgs),
    /// Make a pattern active: shared with every role (a human decision, recorded).
    Promote(PromoteArgs),
    /// Deprecate a pattern: it is no longer injected (until promoted again).
    Deprecate(DeprecateArgs),
}

pub fn run(command: Command, ui: &mut Ui) -> Outcome {
    match command {
        Command::Extract(a) => extract::run(a, ui),
        Command::List(a) => list::run(a, ui),
        Command::Show(a) => show::run(a, ui),
        Command::Inject(a) => inject::run(a, ui),
        Command::Feedback(a) => feedback::run(a, ui),
        Command::Outcome(a) => outcome(a, ui),
        Command::Promote(a) => mark(&a.id, "Promoted", ui, |pattern| Body::PatternPromoted {
            pattern,
            justification: a.justification,
        }),
        Command::Deprecate(a) => mark(&a.id, "Deprecated", ui, |pattern| Body::PatternDeprecated {
            pattern,
            reason: a.reason,
        }),
    }
}

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

/// `git swarm pattern outcome`.
fn outcome(args: OutcomeArgs, ui: &mut Ui) -> Outcome {
    crate::cli::args::check_run(&args.run)?;
    let store = crate::cli::store(ui)?;
    let fold = git_swarm::index::load_patterns(&store)?;
    let report = git_swarm::pattern::outcome::record(&store, &fold, &args.run, args.pass)?;
    crate::cli::append(&store, &[report.event], ui)?;
    writeln!(
        ui.out,
        "Recorded outcome {} of run {}: {} pattern(s) graded.",
        report.result,
        crate::cli::clean(&args.run),
        report.graded
    )?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Debug, clap::Args)]
pub struct PromoteArgs {
    /// The pattern's id (as `pattern list` shows), or an alias of it.
    #[arg(value_name = "ID")]
    id: String,
    /// Why (recorded with the event).
    #[arg(long, value_name = "TEXT")]
    justification: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct DeprecateArgs {
    /// The pattern's id (as `pattern list` shows), or an alias of it.
    #[arg(value_name = "ID")]
    id: String,
    /// Why (recorded with the event, as its `reason`).
    #[arg(long = "justification", alias = "reason", value_name = "TEXT")]
    reason: Option<String>,
}

fn now_ms(store: &git_swarm::Store) -> i64 {
    store.clock.now().as_millisecond()
}

pub(super) fn row(
    id: &str,
    p: &Pattern,
    cfg: &git_swarm::config::PatternsConfig,
    now: i64,
) -> serde_json::Value {
    let s = fold::score(p, cfg, now, &[], &[]);
    serde_json::json!({
        "id": id,
        "role": p.role,
        "category": p.stats.category,
        "state": fold::state(&p.stats, cfg, now),
        "text": p.text,
        "observations": p.stats.observations,
        "validated": p.stats.validated,
        "ignored": p.stats.ignored,
        "ignore_weight": p.stats.ignore_weight,
        "regressions": p.stats.regressions,
        "outcome_passes": p.stats.outcome_passes,
        "outcome_fails": p.stats.outcome_fails,
        "aged": p.stats.aged,
        "labels": p.labels,
        "files": p.files,
        "score": s,
    })
}

/// The pattern an id (or an alias of it) names, or a usage error.
pub(super) fn find<'a>(
    fold: &'a PatternFold,
    id: &'a str,
) -> Result<(&'a str, &'a Pattern), Error> {
    fold.resolve(id)
        .filter(|(_, p)| p.stats.observations > 0)
        .ok_or_else(|| {
            Error::usage(
                format!("no pattern `{id}`"),
                "`git swarm pattern list` shows the patterns and their ids",
            )
        })
}

/// Records a person's decision about a pattern (promote, deprecate).
fn mark(id: &str, what: &str, ui: &mut Ui, body: impl FnOnce(String) -> Body) -> Outcome {
    let store = crate::cli::store(ui)?;
    let fold = git_swarm::index::load_patterns(&store)?;
    let (id, _) = find(&fold, id)?;
    crate::cli::append(&store, &[store.event(body(id.to_owned()))], ui)?;
    writeln!(ui.out, "{what} {id}.")?;
    Ok(ExitCode::SUCCESS)
}
