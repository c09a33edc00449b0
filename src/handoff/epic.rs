//! Epics: the handoffs that share an `epic`, in the order their
//! dependencies allow, and which of them can be handed out next.

use std::collections::{BTreeMap, BTreeSet};

use super::{Handoff, Standing, standing};
use crate::event::Event;

/// An epic's tasks in dependency order, with where each stands.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Order {
    /// Each task after the tasks it depends on; ties by task id.
    pub tasks: Vec<(String, Standing)>,
    /// Tasks on a dependency cycle (or waiting on one), never ordered.
    pub cycle: Vec<String>,
    /// Dependencies named that are not handoffs of this epic: `(task, dependency)`.
    pub outside: Vec<(String, String)>,
}

/// The handoffs of `epic`.
pub fn members<'a>(epic: &str, handoffs: &'a [Handoff]) -> Vec<&'a Handoff> {
    handoffs
        .iter()
        .filter(|h| h.epic.as_deref() == Some(epic))
        .collect()
}

/// A topological order of `epic`'s tasks (Kahn's, smallest id first, so
/// the same files give the same order); the tasks left when no task is
/// free are on a cycle, reported rather than walked.
pub fn order(epic: &str, handoffs: &[Handoff], log: &[Event], max_attempts: u32) -> Order {
    let members = members(epic, handoffs);
    let ids: BTreeSet<&str> = members.iter().map(|h| h.task.as_str()).collect();
    let mut waiting: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut outside = Vec::new();
    for h in &members {
        let deps = waiting.entry(h.task.as_str()).or_default();
        for d in &h.contract.depends {
            if ids.contains(d.as_str()) {
                deps.insert(d.as_str());
            } else {
                outside.push((h.task.clone(), d.clone()));
            }
        }
    }
    let mut tasks = Vec::new();
    while let Some(free) = waiting
        .iter()
        .find(|(_, deps)| deps.is_empty())
        .map(|(t, _)| *t)
    {
        waiting.remove(free);
        for deps in waiting.values_mut() {
            deps.remove(free);
        }
        tasks.push((free.to_owned(), standing(free, log, max_attempts)));
    }
    Order {
        tasks,
        cycle: waiting.keys().map(|t| (*t).to_owned()).collect(),
        outside,
    }
}

/// The tasks of `epic` ready to hand out: open, and every dependency
/// completed (one outside the epic too). Nothing completed, in review or
/// released is offered again.
pub fn next<'a>(
    epic: &str,
    handoffs: &'a [Handoff],
    log: &[Event],
    max_attempts: u32,
) -> Vec<&'a Handoff> {
    let order = order(epic, handoffs, log, max_attempts);
    order
        .tasks
        .iter()
        .filter(|(_, s)| *s == Standing::Open)
        .filter_map(|(t, _)| handoffs.iter().find(|h| &h.task == t))
        .filter(|h| {
            h.contract
                .depends
                .iter()
                .all(|d| standing(d, log, max_attempts) == Standing::Completed)
        })
        .collect()
}
