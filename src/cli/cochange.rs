//! `git swarm cochange`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::Error;
use git_swarm::cochange::{self, Options, propose};

use crate::cli::{Format, Outcome, Ui, clean};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Read at most N non-merge commits, newest first from HEAD.
    #[arg(long, value_name = "N", default_value_t = Options::default().max_commits)]
    max_commits: usize,
    /// Read only commits made at or after this time: an RFC 3339 time, a date (UTC), or an age such as 90d, 12w.
    #[arg(long, value_name = "WHEN")]
    since: Option<String>,
    /// Keep a pair only if the two files changed together in at least N commits.
    #[arg(long, value_name = "N", default_value_t = Options::default().min_support)]
    min_support: u32,
    /// Keep a pair only if its normalised pointwise mutual information is at least X (-1..1).
    #[arg(long, value_name = "X", allow_negative_numbers = true, default_value_t = Options::default().min_npmi)]
    min_npmi: f64,
    /// Keep "when X changes, Y changes too" only if Y changed in at least this share of X's commits (0..1).
    #[arg(long, value_name = "P", default_value_t = Options::default().min_confidence)]
    min_confidence: f64,
    /// A commit that changes more files than N (2 to 1000) is bulk: its renames are followed, nothing else counts.
    #[arg(long, value_name = "N", default_value_t = Options::default().max_files,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(2..=1000))]
    max_files: usize,
    /// A commit weighs half as much every DAYS before the newest commit read (1 to 1000000); 0 weighs all the same.
    #[arg(long, value_name = "DAYS", default_value_t = Options::default().half_life_days)]
    half_life: f64,
    /// Print what would be proposed; write no proposal and record nothing.
    #[arg(long)]
    dry_run: bool,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

/// The JSON answer: what was read, the rules found, what was proposed.
#[derive(serde::Serialize)]
struct Answer<'a> {
    #[serde(flatten)]
    mined: &'a cochange::Mined,
    dry_run: bool,
    proposals: &'a propose::Proposed,
}

fn check_range(name: &str, value: f64, low: f64, high: f64) -> Result<(), Error> {
    if value.is_finite() && (low..=high).contains(&value) {
        return Ok(());
    }
    Err(Error::usage(
        format!("--{name} {value} is out of range"),
        format!("give a number from {low} to {high}"),
    ))
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    check_range("min-npmi", args.min_npmi, -1.0, 1.0)?;
    check_range("min-confidence", args.min_confidence, 0.0, 1.0)?;
    // Below a day, all but the newest commits would weigh next to nothing.
    if args.half_life != 0.0 {
        check_range("half-life", args.half_life, 1.0, 1e6).map_err(|_| {
            Error::usage(
                format!("--half-life {} is out of range", args.half_life),
                "give 0 (every commit weighs the same) or a number of days from 1 to 1000000",
            )
        })?;
    }
    if args.min_support == 0 {
        return Err(Error::usage(
            "--min-support 0 would keep pairs that never changed together",
            "give 1 or more (3 by default)",
        )
        .into());
    }
    let store = crate::cli::store(ui)?;
    let since = args
        .since
        .as_deref()
        .map(|s| super::log::parse_since(s, store.clock.now()))
        .transpose()?
        .map(|ms| ms.div_euclid(1000));
    let options = Options {
        max_commits: args.max_commits,
        since,
        min_support: args.min_support,
        min_npmi: args.min_npmi,
        min_confidence: args.min_confidence,
        max_files: args.max_files,
        half_life_days: args.half_life,
    };
    let repo = crate::cli::repo()?;
    // Commits are diffed on every core: each diff is independent of the others.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
    let mined = cochange::mine(&repo.gix(), &options, threads)?;
    git_swarm::trace::mark("history mined");
    if let Some(needed) = mined.rename_limit_needed {
        ui.warning(
            &format!(
                "some renames were not followed: rename detection needed diff.renameLimit {needed}"
            ),
            Some(&format!(
                "raise it with `git config diff.renameLimit {needed}`"
            )),
        );
    }
    let log = crate::cli::read_log(&store, ui)?;
    let mut proposed = propose::propose(&store, &mined, &options, &log, args.dry_run)?;
    ui.problems(&proposed.problems);
    // What was written is recorded even when a later write failed.
    crate::cli::append(&store, &proposed.events, ui)?;
    if let Some(e) = proposed.error.take() {
        return Err(e.into());
    }
    if args.format == Format::Json {
        return ui.json_result(&Answer {
            mined: &mined,
            dry_run: args.dry_run,
            proposals: &proposed,
        });
    }
    writeln!(
        ui.out,
        "read {} commit{} from HEAD ({}; {} merge{} and {} bulk commit{} of over {} files left out, {} rename{} followed)",
        mined.commits,
        plural(mined.commits),
        match mined.stopped_at {
            "max_commits" => "stopped at --max-commits",
            "since" => "stopped at --since",
            _ => "the whole history",
        },
        mined.merges_skipped,
        plural(mined.merges_skipped),
        mined.bulk_skipped,
        plural(mined.bulk_skipped),
        options.max_files,
        mined.renames,
        plural(mined.renames),
    )?;
    if mined.non_utf8_paths > 0 {
        writeln!(
            ui.out,
            "{} file{} left out: {} not UTF-8, which a directive's path cannot name",
            mined.non_utf8_paths,
            plural(mined.non_utf8_paths),
            if mined.non_utf8_paths == 1 {
                "its path is"
            } else {
                "their paths are"
            },
        )?;
    }
    if mined.rules.is_empty() {
        writeln!(
            ui.out,
            "no files change together in {} or more commits with NPMI ≥ {} and confidence ≥ {}",
            options.min_support, options.min_npmi, options.min_confidence
        )?;
    }
    for r in &mined.rules {
        writeln!(
            ui.out,
            "when {} changes, {} changes too: {} commits together (of {}), npmi {:.2}, confidence {:.2}",
            clean(&r.when),
            clean(&r.then),
            r.support,
            r.when_commits,
            r.npmi,
            r.confidence
        )?;
    }
    let verb = if args.dry_run {
        "would propose"
    } else {
        "proposed"
    };
    for w in &proposed.written {
        writeln!(ui.out, "{verb} {} ({})", w.slug, w.path)?;
    }
    let mut notes = Vec::new();
    if proposed.already_proposed > 0 {
        notes.push(format!("{} proposed before", proposed.already_proposed));
    }
    if proposed.left_for_later > 0 {
        notes.push(format!(
            "{} left for a later run (at most {} a run)",
            proposed.left_for_later,
            git_swarm::proposal::MAX_PER_RUN
        ));
    }
    if proposed.not_expressible > 0 {
        notes.push(format!(
            "{} whose paths hold glob or control characters",
            proposed.not_expressible
        ));
    }
    if !notes.is_empty() {
        writeln!(ui.out, "not proposed: {}", notes.join(", "))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
