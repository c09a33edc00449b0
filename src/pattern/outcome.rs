//! How a run's merged work ended (`git swarm pattern outcome`): every
//! pattern the run used is graded by it.

use crate::error::{Error, Result};
use crate::event::{Body, Event, RunResult};
use crate::pattern::fold::PatternFold;
use crate::store::Store;

/// What [`record`] decided.
#[derive(Debug)]
pub struct Report {
    /// The `outcome` event to append.
    pub event: Event,
    /// `pass` or `fail`.
    pub result: &'static str,
    /// How many patterns it grades.
    pub graded: usize,
}

/// The outcome of `run` (`pass`: the work held up). A run has one outcome,
/// and one that no pattern was observed in or injected for is refused.
pub fn record(store: &Store, fold: &PatternFold, run: &str, pass: bool) -> Result<Report> {
    if let Some((pass, _)) = fold.outcomes.get(run) {
        return Err(Error::Usage {
            message: format!(
                "run `{run}` already has an outcome ({})",
                if *pass { "pass" } else { "fail" }
            ),
            hint: Some("a run has one outcome".into()),
        });
    }
    // Every record, observed here or not: a pattern injected for the run by
    // id is graded too.
    let used: Vec<&String> = fold
        .patterns
        .iter()
        .filter(|(_, p)| p.used_in(run))
        .map(|(id, _)| id)
        .collect();
    if used.is_empty() {
        // An outcome locks the run: one for a mistyped id would lock a run
        // that has not started yet.
        return Err(Error::Usage {
            message: format!(
                "no pattern was observed in or injected for run `{run}`: nothing to grade"
            ),
            hint: Some(
                "check the run id; patterns join a run with `git swarm pattern extract --run` \
                 or `git swarm pattern inject --run`; nothing was recorded"
                    .into(),
            ),
        });
    }
    let result = if pass {
        RunResult::Pass
    } else {
        RunResult::Fail
    };
    let event = store.event(Body::Outcome {
        run: run.to_owned(),
        result,
        patterns: used.iter().map(|s| s.to_string()).collect(),
    });
    Ok(Report {
        event,
        result: result.as_str(),
        graded: used.len(),
    })
}
