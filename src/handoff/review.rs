//! `handoff review`: a reviewer's verdict, and the attempts it allows. The
//! attempts are `needs_changes` events, counted by id: two branches each
//! sending the work back are two attempts once merged.

use std::collections::HashSet;

use crate::event::{Body, Event, Kind};
use crate::store::Store;

use super::{Handoff, Standing, events_of, standing};

/// The distinct `needs_changes` reviews of `task`.
pub fn attempts(task: &str, log: &[Event]) -> usize {
    events_of(task, log)
        .filter(|e| {
            e.known_kind() == Some(Kind::HandoffReview)
                && e.str_field("verdict") == Some("needs_changes")
        })
        .map(|e| e.id.as_str())
        .collect::<HashSet<_>>()
        .len()
}

/// What `handoff review` decided.
#[derive(Debug, Clone)]
pub enum Reviewed {
    /// The `handoff_review` event to append (for `--approve`, after the
    /// check `complete` runs has passed).
    Record(Event),
    /// Sent back `attempts` times already, as many as the config allows.
    Blocked { attempts: usize, max: u32 },
    /// Completed or released: there is nothing to review.
    Closed(Standing),
}

/// A verdict on `h`: `note` is `Some` for `needs_changes`, `None` to approve.
pub fn review(store: &Store, h: &Handoff, note: Option<&str>, log: &[Event]) -> Reviewed {
    let max = store.config.handoffs.max_review_attempts;
    match standing(&h.task, log, max) {
        s @ (Standing::Completed | Standing::Released) => return Reviewed::Closed(s),
        Standing::Blocked => {
            return Reviewed::Blocked {
                attempts: attempts(&h.task, log),
                max,
            };
        }
        _ => {}
    }
    let (verdict, note) = match note {
        Some(n) => ("needs_changes", Some(n.trim().to_owned())),
        None => ("approve", None),
    };
    Reviewed::Record(store.event(Body::HandoffReview {
        task: h.task.clone(),
        verdict: verdict.to_owned(),
        note,
    }))
}

/// What `status` shows of the handoffs.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Attention {
    /// The tasks still holding their paths, blocked ones included.
    pub open: Vec<String>,
    /// Blocked tasks and their needs-changes reviews.
    pub blocked: Vec<(String, usize)>,
    /// Violations recorded since `since_ms`: one per violation, not its
    /// copies for directives.
    pub recent_violations: Vec<RecentViolation>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct RecentViolation {
    pub task: String,
    pub violation: String,
    /// The path, criterion or dependency.
    pub what: String,
    pub ts: String,
}

/// The open and blocked handoffs, and the violations since `since_ms`.
pub fn attention(handoffs: &[Handoff], log: &[Event], max: u32, since_ms: i64) -> Attention {
    let mut a = Attention::default();
    for h in handoffs {
        let s = standing(&h.task, log, max);
        if s.holds_ownership() {
            a.open.push(h.task.clone());
        }
        if s == Standing::Blocked {
            a.blocked.push((h.task.clone(), attempts(&h.task, log)));
        }
    }
    a.recent_violations = log
        .iter()
        .filter(|e| e.known_kind() == Some(Kind::HandoffViolation) && e.directive.is_none())
        .filter(|e| e.ts_millis().is_some_and(|ms| ms >= since_ms))
        .map(|e| RecentViolation {
            task: e.str_field("task").unwrap_or("?").to_owned(),
            violation: e.str_field("violation").unwrap_or("?").to_owned(),
            what: ["path", "criterion", "detail"]
                .iter()
                .find_map(|f| e.str_field(f))
                .unwrap_or_default()
                .to_owned(),
            ts: e.ts.clone(),
        })
        .collect();
    a
}
