//! `git swarm pattern …`: the pattern learning loop (docs/patterns.md).

mod deprecate;
mod extract;
mod feedback;
mod inject;
mod list;
mod outcome;
mod promote;
mod show;

use std::io::Write;
use std::process::ExitCode;

use git_swarm::Error;
use git_swarm::event::Body;
use git_swarm::pattern::fold::{self, Pattern, PatternFold};

pub use inject::block_for;

use super::{Outcome, Ui};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    Extract(extract::Args),
    List(list::Args),
    Show(show::Args),
    Inject(inject::Args),
    Feedback(feedback::Args),
    Outcome(outcome::Args),
    Promote(promote::Args),
    Deprecate(deprecate::Args),
}

pub fn run(command: Command, ui: &mut Ui) -> Outcome {
    match command {
        Command::Extract(a) => extract::run(a, ui),
        Command::List(a) => list::run(a, ui),
        Command::Show(a) => show::run(a, ui),
        Command::Inject(a) => inject::run(a, ui),
        Command::Feedback(a) => feedback::run(a, ui),
        Command::Outcome(a) => outcome::run(a, ui),
        Command::Promote(a) => promote::run(a, ui),
        Command::Deprecate(a) => deprecate::run(a, ui),
    }
}

fn now_ms(store: &git_swarm::Store) -> i64 {
    store.clock.now().as_millisecond()
}

fn patterns(store: &git_swarm::Store) -> Result<PatternFold, Error> {
    git_swarm::index::load_patterns(store)
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

/// The pattern an id (or an alias of it) names, or a usage error.
pub(super) fn find<'a>(
    fold: &'a PatternFold,
    id: &'a str,
) -> Result<(&'a str, &'a Pattern), Error> {
    fold.resolve(id)
        .filter(|(_, p)| p.observations > 0)
        .ok_or_else(|| Error::Usage {
            message: format!("no pattern `{id}`"),
            hint: Some("`git swarm pattern list` shows the patterns and their ids".into()),
        })
}

/// A person's decision about a pattern, with why.
pub(super) enum Mark {
    Promote(Option<String>),
    Deprecate(Option<String>),
}

pub(super) fn mark(id: &str, how: Mark, ui: &mut Ui) -> Outcome {
    let store = crate::cli::store(ui)?;
    let fold = patterns(&store)?;
    let (id, _) = find(&fold, id)?;
    let pattern = id.to_owned();
    let (body, what) = match how {
        Mark::Promote(justification) => (
            Body::PatternPromoted {
                pattern,
                justification,
            },
            "Promoted",
        ),
        Mark::Deprecate(reason) => (Body::PatternDeprecated { pattern, reason }, "Deprecated"),
    };
    crate::cli::append(&store, &[store.event(body)], ui)?;
    writeln!(ui.out, "{what} {id}.")?;
    Ok(ExitCode::SUCCESS)
}
