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

use crate::directive::{Directive, Enforcement, Priority};
use crate::event::Kind;
use crate::pattern::fold::PatternFold;

mod head;
mod loops;

pub use head::{ESCALATION_WINDOW_MS, EventHead, Signal};
use loops::Loops;
pub use loops::{Episode, LoopState};

/// The folded state of the whole log.
///
/// Stored column-wise (one string of ids, one table of counts) because it is
/// decoded on every command: a handful of allocations instead of one per
/// directive and kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fold {
    /// Distinct events folded.
    pub events: u64,
    /// Lines whose id had been folded already (union merges and cherry-picks make these).
    pub duplicates: u64,
    /// (ts, id key) of the last event applied.
    pub last: Option<(i64, u128)>,
    /// Kind names, in the order first seen; a kind's number is its place here.
    kinds: Vec<String>,
    /// Events per kind, by kind number.
    kind_counts: Vec<u64>,
    /// Directive ids, sorted, concatenated; `id_ends[i]` is where the i-th ends.
    ids: String,
    id_ends: Vec<u32>,
    /// Events per directive and kind: row i holds directive i's counts, `kinds.len()` wide.
    counts: Vec<u64>,
    /// Time of the latest event about each directive, in ms since the epoch.
    last_ts: Vec<i64>,
    /// Sorted keys of the (directive, change) pairs with a recorded `check` failure.
    check_keys: Vec<u64>,
    /// What ranking reads of each directive's loop state, by row: kept
    /// beside `loops` so that `inject` never decodes them.
    standing: Vec<RowLoop>,
    /// Escalation state of the directives that have had a violation, by id.
    loops: Loops,
}

/// A row's loop state in brief.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
struct RowLoop {
    violations: u64,
    remediations: u64,
    escalated: bool,
}

/// What ranking reads of one directive: see [`Fold::standings`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Standing {
    /// `shown` events.
    pub shown: u64,
    pub violations: u64,
    pub remediations: u64,
    /// An escalation episode is open.
    pub escalated: bool,
}

/// What the event log says about one directive.
#[derive(Debug, Clone, Copy)]
pub struct DirectiveFold<'a> {
    fold: &'a Fold,
    row: usize,
}

impl DirectiveFold<'_> {
    /// Events per kind (kinds with none left out).
    pub fn counts(&self) -> BTreeMap<String, u64> {
        self.fold
            .kinds
            .iter()
            .zip(self.kind_counts())
            .filter(|(_, n)| **n > 0)
            .map(|(k, n)| (k.clone(), *n))
            .collect()
    }

    pub fn total(&self) -> u64 {
        self.kind_counts().iter().sum()
    }

    /// Its row of counts, by kind number.
    fn kind_counts(&self) -> &[u64] {
        let width = self.fold.kinds.len();
        &self.fold.counts[self.row * width..(self.row + 1) * width]
    }

    /// Time of the latest event about it, in ms since the epoch.
    pub fn last_ts(&self) -> i64 {
        self.fold.last_ts[self.row]
    }
}

impl Fold {
    /// Applies one event. Callers apply in (ts, id) order, once per id.
    pub fn apply(&mut self, e: &EventHead) {
        // Every new row first: a row inserted moves those after it, so rows
        // looked up before an insert would name another directive's.
        for d in &e.directives {
            if let Err(at) = self.row(d) {
                self.insert_row(at, d);
            }
        }
        let rows: Vec<usize> = e
            .directives
            .iter()
            .map(|d| match self.row(d) {
                Ok(row) => row,
                Err(at) => self.insert_row(at, d),
            })
            .collect();
        self.apply_at(e, &rows);
    }

    /// Applies an event whose directives are at `rows`.
    fn apply_at(&mut self, e: &EventHead, rows: &[usize]) {
        self.events += 1;
        let kind = self.kind_number(&e.kind);
        self.kind_counts[kind] += 1;
        // Only events that play a part in the loop decode the loop states.
        let in_loop = e.signal != Signal::None || e.delegation.is_some();
        for (d, &row) in e.directives.iter().zip(rows) {
            self.last_ts[row] = self.last_ts[row].max(e.ts);
            // A void event is not counted for the directive either.
            if !in_loop || self.apply_loop(d, row, e) {
                self.counts[row * self.kinds.len() + kind] += 1;
            }
        }
        if e.known == Some(Kind::Check)
            && let Some(change) = &e.change
        {
            for d in &e.directives {
                let key = check_key(d, change);
                if let Err(at) = self.check_keys.binary_search(&key) {
                    self.check_keys.insert(at, key);
                }
            }
        }
        self.last = Some(self.last.map_or(e.order(), |l| l.max(e.order())));
    }

    /// Applies `e` to the loop state of directive `d`, at `row`; false if it
    /// is void for it.
    fn apply_loop(&mut self, d: &str, row: usize, e: &EventHead) -> bool {
        let loops = self.loops.get_mut();
        let state = match loops.get_mut(d) {
            Some(s) => s,
            None => loops.entry(d.to_owned()).or_default(),
        };
        let counted = state.apply(e);
        self.standing[row] = RowLoop {
            violations: state.violations,
            remediations: state.remediations,
            escalated: state.open().is_some(),
        };
        counted
    }

    /// What ranking reads of each of `ids` (in any order): `shown` events,
    /// violations, remediations and whether it is escalated — without
    /// decoding the loop states.
    pub fn standings<'a>(&self, ids: impl Iterator<Item = &'a str>) -> Vec<Standing> {
        let shown = self.kinds.iter().position(|k| k == "shown");
        let width = self.kinds.len();
        // The standing of `id`, the rows before `row` being all smaller:
        // ids in ascending order are merged with the rows in one pass.
        let seek = |row: &mut usize, id: &str| {
            while *row < self.id_ends.len() && self.id(*row) < id {
                *row += 1;
            }
            if *row < self.id_ends.len() && self.id(*row) == id {
                let s = self.standing[*row];
                Standing {
                    shown: shown.map_or(0, |k| self.counts[*row * width + k]),
                    violations: s.violations,
                    remediations: s.remediations,
                    escalated: s.escalated,
                }
            } else {
                Standing::default()
            }
        };
        let mut order: Vec<(&str, usize)> = ids.enumerate().map(|(i, id)| (id, i)).collect();
        // A corpus's ids come sorted already.
        if !order.is_sorted() {
            order.sort_unstable();
        }
        let mut out = vec![Standing::default(); order.len()];
        let mut row = 0;
        for (id, i) in order {
            out[i] = seek(&mut row, id);
        }
        out
    }

    /// Can `e` be applied after what is folded without changing the order,
    /// and without being a copy of a folded event?
    ///
    /// A copy with the same time sorts at its original's place, not after.
    /// One with a later time (an edited line) would: but the time an id
    /// carries (a ULID's first 48 bits, the event's time for every id
    /// git-swarm writes) then lies at or before the last folded event, and
    /// such an event is left to a whole fold, which keeps one copy.
    pub fn accepts_next(&self, e: &EventHead) -> bool {
        self.last.is_none_or(|(ts, key)| {
            let id_time = i64::try_from(e.key >> 80).unwrap_or(i64::MAX);
            e.order() > (ts, key) && (id_time > ts || (id_time == ts && e.ts == ts))
        })
    }

    pub fn directive(&self, id: &str) -> Option<DirectiveFold<'_>> {
        self.row(id)
            .ok()
            .map(|row| DirectiveFold { fold: self, row })
    }

    /// Was a `check` failure of `directive` on the change with this fingerprint recorded already?
    pub fn has_check(&self, directive: &str, change: &str) -> bool {
        self.check_keys
            .binary_search(&check_key(directive, change))
            .is_ok()
    }

    /// The priority and enforcement in force for a directive: what its file
    /// says, raised to critical and enforce while an escalation episode is open.
    pub fn effective(&self, d: &Directive) -> (Priority, Enforcement) {
        self.effective_of(&d.id, d.priority, d.enforcement)
    }

    /// [`Fold::effective`] of the directive `id` declared with `priority` and `enforcement`.
    pub fn effective_of(
        &self,
        id: &str,
        priority: Priority,
        enforcement: Enforcement,
    ) -> (Priority, Enforcement) {
        if self.is_escalated(id) {
            (Priority::Critical, Enforcement::Enforce)
        } else {
            (priority, enforcement)
        }
    }

    /// Whether an escalation episode of `id` is open, from its row: the
    /// loop states of every directive with a history are not decoded (a
    /// cost that grows with the log; 0.4 ms of a refused tool call on the
    /// `tool_call` bench's store).
    pub fn is_escalated(&self, id: &str) -> bool {
        self.row(id).is_ok_and(|row| self.standing[row].escalated)
    }

    /// The open escalation episode of a directive.
    pub fn escalated(&self, id: &str) -> Option<&Episode> {
        self.loops.get().get(id).and_then(LoopState::open)
    }

    /// The directive loop's state of a directive that has had a violation or remediation.
    pub fn loop_state(&self, id: &str) -> Option<&LoopState> {
        self.loops.get().get(id)
    }

    /// Every directive with loop state, by id.
    pub fn loop_states(&self) -> impl Iterator<Item = (&str, &LoopState)> {
        self.loops.get().iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Events per kind, for the whole log.
    pub fn kinds(&self) -> impl Iterator<Item = (&str, u64)> {
        self.kinds
            .iter()
            .map(String::as_str)
            .zip(self.kind_counts.iter().copied())
    }

    /// Where the id of `row` starts in `ids`.
    fn id_start(&self, row: usize) -> usize {
        row.checked_sub(1).map_or(0, |r| self.id_ends[r] as usize)
    }

    fn id(&self, row: usize) -> &str {
        &self.ids[self.id_start(row)..self.id_ends[row] as usize]
    }

    fn row(&self, id: &str) -> Result<usize, usize> {
        let (mut lo, mut hi) = (0, self.id_ends.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.id(mid).cmp(id) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(mid),
            }
        }
        Err(lo)
    }

    fn kind_number(&mut self, kind: &str) -> usize {
        if let Some(i) = self.kinds.iter().position(|k| k == kind) {
            return i;
        }
        // A new kind widens every row by one.
        let width = self.kinds.len();
        let rows = self.id_ends.len();
        let mut counts = Vec::with_capacity(rows * (width + 1));
        for r in 0..rows {
            counts.extend_from_slice(&self.counts[r * width..(r + 1) * width]);
            counts.push(0);
        }
        self.counts = counts;
        self.kinds.push(kind.to_owned());
        self.kind_counts.push(0);
        width
    }

    fn insert_row(&mut self, at: usize, id: &str) -> usize {
        let start = self.id_start(at);
        self.ids.insert_str(start, id);
        let len = u32::try_from(id.len()).unwrap_or(u32::MAX);
        for end in &mut self.id_ends[at..] {
            *end += len;
        }
        self.id_ends
            .insert(at, u32::try_from(start).unwrap_or(u32::MAX) + len);
        let width = self.kinds.len();
        self.counts
            .splice(at * width..at * width, std::iter::repeat_n(0, width));
        self.last_ts.insert(at, 0);
        self.standing.insert(at, RowLoop::default());
        at
    }

    /// An empty fold with rows for `ids` (sorted, distinct) and the given kinds,
    /// so that a bulk fold never inserts a row.
    fn with_rows(ids: &[&str], kinds: Vec<String>) -> Fold {
        let mut fold = Fold {
            kind_counts: vec![0; kinds.len()],
            counts: vec![0; ids.len() * kinds.len()],
            last_ts: vec![0; ids.len()],
            standing: vec![RowLoop::default(); ids.len()],
            kinds,
            ..Fold::default()
        };
        for id in ids {
            fold.ids.push_str(id);
            fold.id_ends
                .push(u32::try_from(fold.ids.len()).unwrap_or(u32::MAX));
        }
        fold
    }
}

fn check_key(directive: &str, change: &str) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(directive.as_bytes());
    h.update(&[0]);
    h.update(change.as_bytes());
    h.digest()
}

// Here rather than in `pattern::fold`, so that the pattern fold does not
// depend on this module, which depends on it.
impl PatternFold {
    /// Applies an event of the log if it is a pattern event.
    pub fn apply_head(&mut self, h: &EventHead) {
        if let (Some(e), Some(kind)) = (&h.pattern, h.known) {
            self.apply(kind, h.ts, e);
        }
    }
}

/// Keeps one copy of each event and puts them in the order they fold in:
/// the copies of an id are those with the same [`crate::event::id_key`] (a
/// ULID in either case), the earliest (then the first given) wins, and
/// events apply by (ts, key). `order` gives an item's (ts, key). Every
/// reader of the whole log goes through here, so that each counts what the
/// fold counts.
pub fn dedup_in_order<T>(items: &mut Vec<T>, order: impl Fn(&T) -> (i64, u128)) {
    items.sort_by_key(|x| {
        let (ts, key) = order(x);
        (key, ts)
    });
    items.dedup_by_key(|x| order(x).1);
    items.sort_by_key(|x| order(x));
}

/// Folds a batch of heads from scratch, into the directive and the pattern
/// fold: de-duplicates by id (the earliest copy wins), orders by (ts, id),
/// applies.
///
/// Takes heads or references to them: a reader that keeps its heads for
/// something else (`git swarm diff`) folds them without a copy of each.
pub fn fold_both<H: std::borrow::Borrow<EventHead>>(mut heads: Vec<H>) -> (Fold, PatternFold) {
    let total = heads.len() as u64;
    dedup_in_order(&mut heads, |h| h.borrow().order());
    let mut ids: Vec<&str> = heads
        .iter()
        .flat_map(|h| h.borrow().directives.iter().map(String::as_str))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let mut kinds: Vec<String> = Vec::new();
    for h in &heads {
        let h = h.borrow();
        if !kinds.contains(&h.kind) {
            kinds.push(h.kind.clone());
        }
    }
    let mut fold = Fold::with_rows(&ids, kinds);
    // Every row exists already: look rows up by hash rather than by search.
    let row_of: std::collections::HashMap<&str, usize> =
        ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
    let mut rows = Vec::new();
    for h in &heads {
        let h = h.borrow();
        rows.clear();
        rows.extend(
            h.directives
                .iter()
                .filter_map(|d| row_of.get(d.as_str()).copied()),
        );
        fold.apply_at(h, &rows);
    }
    fold.duplicates = total - heads.len() as u64;
    let mut patterns = PatternFold::default();
    for h in &heads {
        patterns.apply_head(h.borrow());
    }
    (fold, patterns)
}

#[cfg(test)]
mod tests {
    use super::head::branch_key;
    use super::*;

    fn fold_all(heads: Vec<EventHead>) -> Fold {
        fold_both(heads).0
    }

    /// The fold of `heads` reversed, with a second copy of `heads[copy]`
    /// (counted as a duplicate, then the count reset).
    fn reordered(heads: &[EventHead], copy: usize) -> Fold {
        let mut shuffled: Vec<_> = heads.iter().rev().cloned().collect();
        shuffled.push(heads[copy].clone());
        let mut fold = fold_all(shuffled);
        assert_eq!(fold.duplicates, 1);
        fold.duplicates = 0;
        fold
    }

    #[test]
    fn incremental_apply_matches_a_bulk_fold() {
        // A `shown` event names its directives by priority, not sorted:
        // new ones inserted before a row already looked up move it.
        let shown = |key, ts, ids: &[&str]| EventHead {
            directives: ids.iter().map(|d| d.to_string()).collect(),
            ..head(key, ts, "shown", ids[0])
        };
        let heads = vec![
            head(1, 10, "added", "m"),
            head(2, 11, "check", "a"),
            head(3, 12, "shown", "z"),
            head(4, 13, "check", "m"),
            head(5, 14, "ack", "b"),
            shown(6, 15, &["y", "c", "n", "d"]),
            shown(7, 16, &["z", "e", "m"]),
        ];
        let bulk = fold_all(heads.clone());
        let mut one_by_one = Fold::default();
        for h in &heads {
            one_by_one.apply(h);
        }
        for id in ["a", "b", "c", "d", "e", "m", "n", "y", "z"] {
            let (x, y) = (
                bulk.directive(id).expect("folded"),
                one_by_one.directive(id).expect("folded"),
            );
            assert_eq!(x.counts(), y.counts(), "{id}");
            assert_eq!(x.last_ts(), y.last_ts(), "{id}");
        }
        assert_eq!(
            bulk.directive("m")
                .expect("folded")
                .counts()
                .into_iter()
                .collect::<Vec<_>>(),
            [
                ("added".to_owned(), 1),
                ("check".to_owned(), 1),
                ("shown".to_owned(), 1)
            ]
        );
        assert!(bulk.directive("q").is_none());
        let mut kinds: Vec<_> = bulk.kinds().collect();
        kinds.sort();
        assert_eq!(
            kinds,
            [("ack", 1), ("added", 1), ("check", 2), ("shown", 3)]
        );
    }

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

    #[test]
    fn loop_states_stay_encoded_until_read_and_damage_is_caught() {
        let heads = vec![
            violation(1, 1, "a", 1),
            violation(2, 2, "a", 2),
            head(3, 3 * 86_400_000, "shown", "a"),
            violation(4, 3, "b", 1),
            signal(5, 4, "ack", "b", Signal::Remediation),
        ];
        let fold = fold_all(heads.clone());
        let bytes = postcard::to_stdvec(&fold).expect("encode");
        let decoded: Fold = postcard::from_bytes(&bytes).expect("decode");
        assert!(!decoded.loops.is_decoded(), "decoded eagerly");
        // The standings come from the rows, without decoding the loop states.
        let st = decoded.standings(["b", "a", "z"].into_iter());
        assert!(!decoded.loops.is_decoded(), "standings decoded them");
        let effective = decoded.effective_of("a", Priority::Low, Enforcement::Warn);
        assert_eq!(effective, (Priority::Critical, Enforcement::Enforce));
        assert!(!decoded.is_escalated("b") && !decoded.is_escalated("z"));
        assert!(
            !decoded.loops.is_decoded(),
            "the effective standing decoded them"
        );
        assert_eq!(
            st,
            [
                Standing {
                    shown: 0,
                    violations: 1,
                    remediations: 1,
                    escalated: false
                },
                Standing {
                    shown: 1,
                    violations: 2,
                    remediations: 0,
                    escalated: true
                },
                Standing::default(),
            ]
        );
        // Sorted ids give the same answers.
        let sorted = decoded.standings(["a", "b", "c", "z"].into_iter());
        assert_eq!(sorted, [st[1], st[0], Standing::default(), st[2]]);
        assert_eq!(decoded, fold);
        assert!(decoded.escalated("a").is_some());
        // Re-encoded untouched, the bytes are copied as they were.
        assert_eq!(postcard::to_stdvec(&decoded).expect("encode"), bytes);
        // Applying more events works on the decoded states.
        let mut more = decoded.clone();
        more.apply(&deescalation(6, 5, "a", None));
        assert!(more.escalated("a").is_none());
        assert!(!more.standings(["a"].into_iter())[0].escalated);
        assert!(!more.is_escalated("a"));
        // A flipped byte in the encoded states fails the checksum.
        let raw = postcard::to_stdvec(&fold.loops).expect("encode");
        let at = bytes
            .windows(raw.len())
            .position(|w| w == raw.as_slice())
            .expect("states in the fold's bytes");
        let mut damaged = bytes.clone();
        damaged[at + raw.len() - 1] ^= 0x55;
        assert!(postcard::from_bytes::<Fold>(&damaged).is_err());
    }

    fn head(key: u128, ts: i64, kind: &str, d: &str) -> EventHead {
        EventHead {
            key,
            ts,
            kind: kind.into(),
            known: kind.parse().ok(),
            directives: vec![d.into()],
            ..EventHead::default()
        }
    }

    fn violation(key: u128, day: i64, d: &str, occasion: u64) -> EventHead {
        EventHead {
            signal: Signal::Violation { occasion },
            ..head(key, day * 86_400_000, "check", d)
        }
    }

    fn signal(key: u128, day: i64, kind: &str, d: &str, signal: Signal) -> EventHead {
        EventHead {
            signal,
            ..head(key, day * 86_400_000, kind, d)
        }
    }

    fn deescalation(key: u128, day: i64, d: &str, episode: Option<u32>) -> EventHead {
        let end = Signal::Deescalation { episode };
        signal(key, day, "deescalation", d, end)
    }

    #[test]
    fn two_occasions_within_thirty_days_escalate_once_per_episode() {
        // One occasion twice: not escalated.
        let f = fold_all(vec![violation(1, 0, "x", 7), violation(2, 1, "x", 7)]);
        assert!(f.escalated("x").is_none());
        // Two occasions 31 days apart: not escalated.
        let f = fold_all(vec![violation(1, 0, "x", 7), violation(2, 31, "x", 8)]);
        assert!(f.escalated("x").is_none());
        // Two occasions within 30 days: one episode, whatever follows.
        let heads = vec![
            violation(1, 0, "x", 7),
            violation(2, 30, "x", 8),
            violation(3, 31, "x", 9),
            violation(4, 32, "x", 10),
        ];
        let f = fold_all(heads.clone());
        let ep = f.escalated("x").expect("escalated");
        assert_eq!(ep.violations, [1, 2]);
        assert_eq!(f.loop_state("x").expect("state").episodes.len(), 1);
        let d: crate::directive::Directive = toml::from_str(
            "id = \"x\"\nlesson = \"A lesson long enough to pass\"\npriority = \"low\"\nenforcement = \"advisory\"",
        )
        .expect("valid test input");
        assert_eq!(f.effective(&d), (Priority::Critical, Enforcement::Enforce));
        // Any order, duplicates included, folds the same.
        assert_eq!(f, reordered(&heads, 1));

        // An escalation event records the episode; a deescalation ends it,
        // and the violations before it never count again.
        let mut with_end = heads.clone();
        with_end.push(signal(5, 33, "escalation", "x", Signal::Escalation));
        with_end.push(deescalation(6, 34, "x", Some(1)));
        with_end.push(violation(7, 35, "x", 11));
        let f = fold_all(with_end.clone());
        let state = f.loop_state("x").expect("state");
        assert!(state.episodes[0].recorded);
        assert_eq!(state.episodes[0].ended, Some(34 * 86_400_000));
        assert!(
            f.escalated("x").is_none(),
            "one violation since: no new episode"
        );
        assert_eq!(f.effective(&d), (Priority::Low, Enforcement::Advisory));
        with_end.push(violation(8, 36, "x", 12));
        let f = fold_all(with_end);
        assert_eq!(f.loop_state("x").expect("state").episodes.len(), 2);
        assert_eq!(f.escalated("x").expect("escalated").violations, [7, 8]);
    }

    #[test]
    fn remediation_after_the_last_violation() {
        let f = fold_all(vec![
            violation(1, 0, "x", 7),
            signal(2, 1, "ack", "x", Signal::Remediation),
        ]);
        assert!(!f.loop_state("x").expect("state").unremediated());
        let f = fold_all(vec![
            signal(1, 0, "ack", "x", Signal::Remediation),
            violation(2, 1, "x", 7),
        ]);
        assert!(f.loop_state("x").expect("state").unremediated());
    }

    fn on_branch(mut h: EventHead, branch: &str) -> EventHead {
        h.branch = Some(branch_key(branch));
        h
    }

    #[test]
    fn a_pass_on_the_branch_remediates_its_check_violations_only() {
        let main = "refs/heads/main";
        let pass = |key, day, branch| {
            on_branch(signal(key, day, "check_passed", "x", Signal::Pass), branch)
        };
        // Fixed on main: remediated, and out of the escalation window.
        let heads = vec![
            on_branch(violation(1, 0, "x", 7), main),
            pass(2, 0, main),
            on_branch(violation(3, 2, "x", 8), main),
        ];
        let f = fold_all(heads.clone());
        let state = f.loop_state("x").expect("state");
        assert!(state.unremediated());
        assert!(state.open_on_branch(main));
        assert!(f.escalated("x").is_none());
        // In any order, duplicates included.
        assert_eq!(f, reordered(&heads, 1));
        // A pass on another branch, or before the violation, clears nothing.
        let f = fold_all(vec![
            pass(1, 0, main),
            on_branch(violation(2, 1, "x", 7), main),
            pass(3, 1, "refs/heads/topic"),
            on_branch(violation(4, 2, "x", 8), "refs/heads/topic"),
        ]);
        assert!(f.loop_state("x").expect("state").unremediated());
        assert!(f.escalated("x").is_some());
        // A violation on no branch is left to acks and verdicts.
        let f = fold_all(vec![violation(1, 0, "x", 7), pass(2, 1, main)]);
        assert!(f.loop_state("x").expect("state").unremediated());
        let f = fold_all(vec![
            violation(1, 0, "x", 7),
            on_branch(violation(2, 0, "x", 8), main),
            signal(3, 1, "ack", "x", Signal::Remediation),
        ]);
        assert!(!f.loop_state("x").expect("state").unremediated());
    }

    #[test]
    fn order_and_duplicates_do_not_change_the_fold() {
        let a = vec![
            head(1, 10, "added", "x"),
            head(2, 20, "check", "x"),
            head(3, 5, "shown", "y"),
        ];
        let fa = fold_all(a.clone());
        assert_eq!(fa, reordered(&a, 0));
        assert_eq!(
            fa.directive("x").expect("valid test input").counts()["check"],
            1
        );
        assert_eq!(fa.last, Some((20, 2)));
    }
}
