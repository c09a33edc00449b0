//! `git swarm pattern inject`, and the pattern block `git swarm inject` appends.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::Error;
use git_swarm::event::Body;
use git_swarm::pattern::inject as block;

use crate::cli::{Format, Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
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

/// The block `git swarm inject` appends for a role (empty when none), with the fold it came from.
pub fn block_for(
    store: &git_swarm::Store,
    loaded: &git_swarm::index::Patterns,
    role: &str,
    labels: &[String],
    files: &[String],
    budget: usize,
    review: &git_swarm::reviewed::Review,
) -> Result<block::Block, Error> {
    let views = loaded.pattern_views(role)?;
    git_swarm::trace::mark("pattern views read");
    // An empty or space-padded item would match what it should not.
    let labels = &crate::cli::args::clean_list(labels);
    let files = &crate::cli::args::clean_list(files);
    Ok(block::select(
        views,
        &store.config.patterns,
        &block::Query {
            role,
            labels,
            files,
            budget,
            now_ms: super::now_ms(store),
        },
        &|p| review.shown(review.is_pattern_reviewed(p.id, p.text)),
    ))
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    crate::cli::args::check_role(&args.role)?;
    if let Some(r) = &args.run {
        crate::cli::args::check_run(r)?;
    }
    let (store, review) = crate::cli::store_and_review(ui)?;
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
    let loaded = git_swarm::index::load_pattern_views(&store)?;
    let b = block_for(
        &store,
        &loaded,
        &args.role,
        &args.labels,
        &args.files,
        budget,
        &review,
    )?;
    note_withheld(&b, &review, ui);
    // Delivered before recorded: patterns that never reached the agent (a
    // closed pipe, a full disk) must not count as used by the run. And not
    // delivered for a run whose log would refuse the record.
    if args.run.is_some() && !b.lines.is_empty() {
        check_shown(&store)?;
    }
    if args.format == Format::Json {
        ui.json(&b)?;
    } else {
        write!(ui.out, "{}", b.render())?;
    }
    ui.out.flush()?;
    if let Some(run) = &args.run {
        record_shown(&store, &b, &args.role, run, ui)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Says how many patterns were withheld as not reviewed (never their text).
pub fn note_withheld(b: &block::Block, review: &git_swarm::reviewed::Review, ui: &mut Ui) {
    if b.withheld > 0 {
        ui.note(&format!(
            "{} pattern{} await{} review and {} withheld from agents until on {}",
            b.withheld,
            if b.withheld == 1 { "" } else { "s" },
            if b.withheld == 1 { "s" } else { "" },
            if b.withheld == 1 { "is" } else { "are" },
            review.revision_name()
        ));
    }
}

/// Refuses before a block is delivered for a run whose log would refuse
/// its `pattern_shown`.
pub fn check_shown(store: &git_swarm::Store) -> Result<(), Error> {
    store.check_appendable(&store.event(Body::PatternShown {
        patterns: Vec::new(),
        run: String::new(),
    }))
}

/// Records the delivered block's patterns as used by `run` (`pattern_shown`),
/// which `pattern outcome` then grades; nothing for an empty block.
pub fn record_shown(
    store: &git_swarm::Store,
    b: &block::Block,
    role: &str,
    run: &str,
    ui: &mut Ui,
) -> Result<(), Error> {
    if b.lines.is_empty() {
        return Ok(());
    }
    let e = store
        .event(Body::PatternShown {
            patterns: b.lines.iter().map(|l| l.id.clone()).collect(),
            run: run.to_owned(),
        })
        .by_role(Some(role.to_owned()));
    crate::cli::append(store, &[e], ui)
}
