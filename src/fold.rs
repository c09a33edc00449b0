//! The fold: every count and state derived from the event log.
//!
//! Events are applied in (ts, id) order after de-duplication by id, so any
//! interleaving of appends, a union merge in either order, a rebase or a
//! cherry-pick gives the same result. The fold is kept in the index and
//! advanced incrementally when new events sort after everything folded so
//! far; an event that sorts earlier (one brought in by a merge) makes the
//! index fold again from the start.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The parts of an event the fold reads, parsed without allocating the rest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventHead {
    /// [`crate::event::id_key`] of the id.
    pub key: u128,
    /// Milliseconds since the epoch.
    pub ts: i64,
    pub kind: String,
    /// The directive(s) the event is about: `directive`, plus `directives` for events about several.
    pub directives: Vec<String>,
}

#[derive(serde::Deserialize)]
struct RawHead<'a> {
    #[serde(borrow)]
    id: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    ts: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    kind: std::borrow::Cow<'a, str>,
    #[serde(default, borrow)]
    directive: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    directives: Option<Directives<'a>>,
    // Checked, not used: the fold must accept exactly the lines the readers accept.
    #[serde(default, borrow)]
    #[allow(dead_code)]
    actor: Option<RawActor<'a>>,
}

#[derive(serde::Deserialize)]
#[allow(dead_code)]
struct RawActor<'a> {
    #[serde(default, borrow)]
    role: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    agent: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    user: Option<std::borrow::Cow<'a, str>>,
}

/// `directives` is a kind's own field: a list of ids where it means
/// something to the fold, anything else is kept and ignored.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum Directives<'a> {
    Ids(#[serde(borrow)] Vec<std::borrow::Cow<'a, str>>),
    Other(serde::de::IgnoredAny),
}

impl EventHead {
    /// Parses one line; `None` if it is not a well-formed event (readers
    /// that report problems use [`crate::event::parse_event_line`]).
    pub fn parse(line: &[u8]) -> Option<EventHead> {
        // serde_json skips the fields it ignores without checking their
        // UTF-8, so a line the readers reject would otherwise be folded.
        let text = std::str::from_utf8(line).ok()?;
        let raw: RawHead<'_> = serde_json::from_str(text).ok()?;
        if raw.id.is_empty() || raw.id.len() > 128 || !crate::event::is_valid_kind(&raw.kind) {
            return None;
        }
        let ts = crate::event::parse_ts_millis(&raw.ts)?;
        let mut directives: Vec<String> =
            raw.directive.into_iter().map(|d| d.into_owned()).collect();
        if let Some(Directives::Ids(ids)) = raw.directives {
            directives.extend(ids.into_iter().map(|d| d.into_owned()));
        }
        Some(EventHead {
            key: crate::event::id_key(&raw.id),
            ts,
            kind: raw.kind.into_owned(),
            directives,
        })
    }

    pub fn order(&self) -> (i64, u128) {
        (self.ts, self.key)
    }
}

/// What the event log says about one directive.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirectiveFold {
    /// Events per kind.
    pub counts: BTreeMap<String, u64>,
    /// Time of the latest event about it, in ms since the epoch.
    pub last_ts: i64,
}

impl DirectiveFold {
    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }
}

/// The folded state of the whole log.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fold {
    /// Distinct events folded.
    pub events: u64,
    /// Lines whose id had been folded already (union merges and cherry-picks make these).
    pub duplicates: u64,
    /// Events per kind.
    pub kinds: BTreeMap<String, u64>,
    pub directives: BTreeMap<String, DirectiveFold>,
    /// (ts, id key) of the last event applied.
    pub last: Option<(i64, u128)>,
}

impl Fold {
    /// Applies one event. Callers apply in (ts, id) order, once per id.
    pub fn apply(&mut self, e: &EventHead) {
        self.events += 1;
        *self.kinds.entry(e.kind.clone()).or_default() += 1;
        for d in &e.directives {
            let entry = self.directives.entry(d.clone()).or_default();
            *entry.counts.entry(e.kind.clone()).or_default() += 1;
            entry.last_ts = entry.last_ts.max(e.ts);
        }
        self.last = Some(self.last.map_or(e.order(), |l| l.max(e.order())));
    }

    /// Can `e` be applied after what is folded without changing the order?
    pub fn accepts_next(&self, e: &EventHead) -> bool {
        self.last.is_none_or(|l| e.order() > l)
    }

    pub fn directive(&self, id: &str) -> Option<&DirectiveFold> {
        self.directives.get(id)
    }
}

/// Folds a batch of heads from scratch: de-duplicates by id (the earliest
/// copy wins), orders by (ts, id), applies.
pub fn fold_all(mut heads: Vec<EventHead>) -> Fold {
    let total = heads.len() as u64;
    heads.sort_unstable_by_key(|h| (h.key, h.ts));
    heads.dedup_by_key(|h| h.key);
    heads.sort_unstable_by_key(EventHead::order);
    let mut fold = Fold::default();
    for h in &heads {
        fold.apply(h);
    }
    fold.duplicates = total - heads.len() as u64;
    fold
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_with_invalid_utf8_is_not_folded() {
        let line = b"{\"id\":\"a\",\"ts\":\"2026-11-01T00:00:00.000Z\",\"kind\":\"shown\",\"note\":\"caf\xe9\"}";
        assert!(crate::event::parse_event_line(line, 65536).is_err());
        assert_eq!(EventHead::parse(line), None);
    }

    #[test]
    fn the_fold_accepts_exactly_what_the_reader_accepts() {
        let lines = [
            r#"{"id":"a1","ts":"2026-11-22T10:00:00.000Z","kind":"ack","directive":"x"}"#,
            r#"{"id":"a2","ts":"2026-11-22T10:00:00Z","kind":"shown","directives":["x","y"]}"#,
            r#"{"id":"a3","ts":"2026-11-22T10:00:00Z","kind":"shown","directives":7}"#,
            r#"{"id":"a4","ts":"2026-11-22T10:00:00Z","kind":"ack","actor":{"role":5}}"#,
            r#"{"id":"a5","ts":"2026-11-22T10:00:00Z","kind":"ack","directive":7}"#,
            r#"{"id":"a6","ts":"2026-11-22T10:00:00Z","kind":"Bad"}"#,
            r#"{"id":"","ts":"2026-11-22T10:00:00Z","kind":"ack"}"#,
            r#"{"id":"a8","ts":"soon","kind":"ack"}"#,
            r#"[1,2]"#,
        ];
        for line in lines {
            let reader = crate::event::parse_event_line(line.as_bytes(), 65536).is_ok();
            assert_eq!(
                EventHead::parse(line.as_bytes()).is_some(),
                reader,
                "{line}"
            );
        }
        let head = EventHead::parse(lines[1].as_bytes()).expect("valid test input");
        assert_eq!(head.directives, ["x", "y"]);
    }

    fn head(key: u128, ts: i64, kind: &str, d: &str) -> EventHead {
        EventHead {
            key,
            ts,
            kind: kind.into(),
            directives: vec![d.into()],
        }
    }

    #[test]
    fn order_and_duplicates_do_not_change_the_fold() {
        let a = vec![
            head(1, 10, "added", "x"),
            head(2, 20, "check", "x"),
            head(3, 5, "shown", "y"),
        ];
        let mut b: Vec<_> = a.iter().rev().cloned().collect();
        b.push(a[0].clone());
        let fa = fold_all(a);
        let mut fb = fold_all(b);
        assert_eq!(fb.duplicates, 1);
        fb.duplicates = 0;
        assert_eq!(fa, fb);
        assert_eq!(
            fa.directive("x").expect("valid test input").counts["check"],
            1
        );
        assert_eq!(fa.last, Some((20, 2)));
    }
}
