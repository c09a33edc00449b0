//! A handoff's patterns graded by how the task ended: the patterns
//! `handoff create` showed its worker are used by the run [`run_id`], and
//! its completion (pass) or blocking (fail) is that run's outcome.

use crate::error::Result;
use crate::event::Event;
use crate::pattern::outcome;
use crate::store::Store;

/// The run of `task`'s worker: what `pattern_shown` and `outcome` name.
pub fn run_id(task: &str) -> String {
    format!("handoff-{task}")
}

/// The `outcome` event grading the patterns shown for `task`, or `None` when
/// there is nothing to grade: no pattern was shown (no `--role`, or none
/// for it), or the run has its one outcome already.
pub fn outcome_of(store: &Store, task: &str, pass: bool) -> Result<Option<Event>> {
    let fold = crate::index::load_patterns(store)?;
    let run = run_id(task);
    // Decided here rather than from `record`'s refusal, which is an error
    // a user must see when they type the run themselves.
    if fold.outcomes.contains_key(&run) || !fold.patterns.values().any(|p| p.used_in(&run)) {
        return Ok(None);
    }
    Ok(Some(outcome::record(store, &fold, &run, pass)?.event))
}
