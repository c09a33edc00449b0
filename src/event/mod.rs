//! The append-only event log: `.swarm/events/<YYYY-MM>.jsonl`.
//!
//! Every learning signal is one JSON line with a unique, sortable id. Counts,
//! scores and states are never stored; they are folds of these lines, so two
//! branches that each add events merge (with `merge=union`) into the sum of
//! both, and a rebase or cherry-pick folds to the same state.
//!
//! Appends are one `write` of whole lines under an exclusive lock on the
//! month's file, retried until a bounded wait runs out — never skipped. A
//! line torn by a crash is set aside first, so no later event is glued to it.

use std::sync::Mutex;
use std::time::SystemTime;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::directive::Priority;

mod append;
pub mod commit;
mod follow;
mod kind;
mod read;

pub use append::{
    LogDirs, append, append_once, append_unrecorded, check_appendable, lock_with_retry,
    open_locked, set_aside_torn_tail,
};
pub use follow::{Batch, Follower, POLL_INTERVAL, Waiter};
pub use kind::{Body, CheckOutcome, KNOWN_KINDS, Kind, Level, PhaseStatus, RunResult, ShownEntry};
pub use read::{
    EventFile, EventLine, NOT_REGULAR, check_envelope, event_files, is_skipped_file,
    not_regular_problem, parse_event_line, read_event_file, skipped_problem, too_large_problem,
};

/// One line of the event log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "git-swarm event")]
pub struct Event {
    /// Sortable unique id: a ULID (48-bit millisecond time, then the writer's clock in nanoseconds and 19 random bits, so that later writes sort later).
    #[schemars(length(min = 1, max = 128))]
    pub id: String,
    /// When it happened: RFC 3339 in UTC with milliseconds.
    #[schemars(extend("format" = "date-time"))]
    pub ts: String,
    /// What happened (`added`, `quarantined`, `shown`, `ack`, …).
    #[schemars(pattern(r"^[a-z][a-z0-9_]{0,63}$"))]
    pub kind: String,
    /// Who caused it.
    #[serde(default, skip_serializing_if = "Actor::is_empty")]
    pub actor: Actor,
    /// The directive the event is about, if one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directive: Option<String>,
    /// The kind's own fields, as a [`Body`] of a known kind made them; unknown
    /// ones (and those of unknown kinds) are kept, so a line read and written
    /// back is the same line.
    #[serde(flatten)]
    pub data: Map<String, Value>,
}

/// Who caused an event.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Actor {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
}

impl Actor {
    pub fn is_empty(&self) -> bool {
        self.role.is_none() && self.agent.is_none() && self.user.is_none()
    }
}

/// Where "now" comes from: the system clock, or a fixed instant (tests,
/// reproducible runs).
#[derive(Debug, Clone, Copy, Default)]
pub struct Clock {
    pub fixed: Option<jiff::Timestamp>,
}

impl Clock {
    pub fn now(&self) -> jiff::Timestamp {
        self.fixed.unwrap_or_else(jiff::Timestamp::now)
    }
}

/// The last id [`new_id`] made, to keep ids of one process increasing.
static LAST_ID: Mutex<Option<ulid::Ulid>> = Mutex::new(None);

impl Event {
    /// A new event at `ts` with a fresh id, of the kind and fields of `body`.
    pub fn new(body: Body, ts: jiff::Timestamp) -> Event {
        let mut data = match serde_json::to_value(&body) {
            Ok(Value::Object(map)) => map,
            // A body is a struct of strings, numbers and lists: always an object.
            _ => Map::new(),
        };
        data.remove("kind");
        Event {
            kind: Kind::from(&body).as_str().to_owned(),
            data,
            ..Event::custom("", ts)
        }
    }

    /// A new event of a kind given by name (one this version may not know),
    /// with no fields of its own yet.
    pub fn custom(kind: &str, ts: jiff::Timestamp) -> Event {
        Event {
            id: new_id(ts),
            ts: format_ts(ts),
            kind: kind.to_owned(),
            actor: Actor::default(),
            directive: None,
            data: Map::new(),
        }
    }

    /// This event about `directive`.
    pub fn about(mut self, directive: impl Into<String>) -> Event {
        self.directive = Some(directive.into());
        self
    }

    /// This event caused by an agent in `role`.
    pub fn by_role(mut self, role: Option<String>) -> Event {
        self.actor.role = role;
        self
    }

    /// The kind's field `name` when it is a string. Absent or of another
    /// type than its kind writes (a line of another version or tool), it
    /// reads as `None`, and the event stays.
    pub fn str_field(&self, name: &str) -> Option<&str> {
        self.data.get(name)?.as_str()
    }

    /// The directives a `shown` event lists; `None` when `shown` is not a
    /// list. An entry that is not an object with a string `id` and a known
    /// `priority` is left out.
    pub fn shown_entries(&self) -> Option<Vec<ShownEntry>> {
        let entry = |v: &Value| {
            Some(ShownEntry {
                id: v.get("id")?.as_str()?.to_owned(),
                priority: Priority::deserialize(v.get("priority")?).ok()?,
            })
        };
        let list = self.data.get("shown")?.as_array()?;
        Some(list.iter().filter_map(entry).collect())
    }

    /// What makes two check records the same occasion: the change and the
    /// branch, each absent (`None`), of another type (`Some(None)`) or a string.
    pub fn check_key(&self) -> [Option<Option<&str>>; 2] {
        ["change", "branch"].map(|k| self.data.get(k).map(Value::as_str))
    }

    /// Does the event name pattern `id` in `pattern` or `patterns`, each a
    /// string or a list (of which the strings count)?
    pub fn names_pattern(&self, id: &str) -> bool {
        ["pattern", "patterns"]
            .into_iter()
            .filter_map(|k| self.data.get(k))
            .any(|v| match v {
                Value::String(s) => s == id,
                Value::Array(list) => list.iter().any(|n| n.as_str() == Some(id)),
                _ => false,
            })
    }

    /// The kind, if this version knows it.
    pub fn known_kind(&self) -> Option<Kind> {
        self.kind.parse().ok()
    }

    /// Milliseconds since the epoch, if `ts` parses.
    pub fn ts_millis(&self) -> Option<i64> {
        parse_ts_millis(&self.ts)
    }

    /// The month file this event belongs in (`2026-11.jsonl`), by its UTC time.
    pub fn month_file(&self) -> Option<String> {
        let ts = jiff::Timestamp::from_millisecond(self.ts_millis()?).ok()?;
        let dt = ts.to_zoned(jiff::tz::TimeZone::UTC);
        Some(format!("{:04}-{:02}.jsonl", dt.year(), dt.month()))
    }

    /// The event as one JSON line, newline included.
    pub fn to_line(&self) -> String {
        let mut line = serde_json::to_string(self).unwrap_or_default();
        line.push('\n');
        line
    }
}

/// A new sortable id for an event at `ts`: a ULID of time `ts` whose other
/// 80 bits are the wall clock in nanoseconds, then 19 random bits. Events
/// written later sort later even at the same `ts` (a fixed clock, two
/// processes in one millisecond), so the index folds them onto what it has
/// rather than folding the whole log again. Monotonic within the process.
pub fn new_id(ts: jiff::Timestamp) -> String {
    let millis = u64::try_from(ts.as_millisecond()).unwrap_or(0);
    if let Some(bits) = fixed_bits() {
        return ulid::Ulid::from_parts(millis, bits).to_string();
    }
    let wall_ns = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
        & ((1 << 61) - 1);
    let noise = ulid::Ulid::generate().random() & ((1 << 19) - 1);
    let fresh = ulid::Ulid::from_parts(millis, (wall_ns << 19) | noise);
    let mut last = LAST_ID
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let id = match *last {
        Some(prev) if prev.timestamp_ms() == millis && prev >= fresh => {
            prev.increment().unwrap_or(fresh)
        }
        _ => fresh,
    };
    *last = Some(id);
    id.to_string()
}

/// The seed of fixed event ids (see [`fix_ids`]).
static FIXED_SEED: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
static FIXED_COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// From now on, the 80 bits after an event id's time are no longer the
/// clock's and chance's but `seed`, then a count: a scripted run (`git
/// swarm demo --fixed`, whose front end seeds this from its command line
/// and fixed clock) prints the same ids every time. Two processes with one
/// seed at one fixed time would write the same ids, and one's events be
/// taken for the other's: for scripted runs only, each command at a time
/// of its own.
pub fn fix_ids(seed: u64) {
    let _ = FIXED_SEED.set(seed);
}

fn fixed_bits() -> Option<u128> {
    let seed = *FIXED_SEED.get()?;
    let n = FIXED_COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Some((u128::from(seed >> 8) << 24) | u128::from(n & 0xff_ffff))
}

/// The 128-bit key of an event id: the ULID itself, or a hash of any other id.
pub fn id_key(id: &str) -> u128 {
    match ulid::Ulid::from_string(id) {
        Ok(u) if id.len() == 26 => u.0,
        _ => xxhash_rust::xxh3::xxh3_128(id.as_bytes()),
    }
}

/// The id behind a key made by [`id_key`]: exact for ULID ids (every id
/// git-swarm writes); for another id, the ULID spelling of its hash.
pub fn id_of_key(key: u128) -> String {
    ulid::Ulid(key).to_string()
}

/// `2026-11-22T10:00:00.123Z`.
pub fn format_ts(ts: jiff::Timestamp) -> String {
    jiff::fmt::temporal::DateTimePrinter::new()
        .precision(Some(3))
        .timestamp_to_string(&ts)
}

/// Milliseconds since the epoch of an RFC 3339 time. The canonical form is
/// parsed without allocation; other offsets and precisions go through jiff.
pub fn parse_ts_millis(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() == 24
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'.'
        && b[23] == b'Z'
    {
        let num = |r: std::ops::Range<usize>| -> Option<i64> {
            let mut n = 0i64;
            for &c in &b[r] {
                if !c.is_ascii_digit() {
                    return None;
                }
                n = n * 10 + i64::from(c - b'0');
            }
            Some(n)
        };
        let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
        let (h, mi, sec, ms) = (num(11..13)?, num(14..16)?, num(17..19)?, num(20..23)?);
        if (1..=12).contains(&mo) && (1..=31).contains(&d) && h < 24 && mi < 60 && sec < 61 {
            let millis =
                (days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + sec) * 1000 + ms;
            // The times jiff does not hold (the last hours of 9999) are
            // refused here too, so every reader agrees on which lines are events.
            return (millis <= jiff::Timestamp::MAX.as_millisecond()).then_some(millis);
        }
        return None;
    }
    s.parse::<jiff::Timestamp>()
        .ok()
        .map(|t| t.as_millisecond())
}

/// Is `s`, which did not parse, an RFC 3339 time of year 9999 past the last
/// instant the log holds ([`jiff::Timestamp::MAX`], within year 9999 at
/// every offset)? What is wrong with it is then its range, not its syntax.
fn is_time_out_of_range(s: &str) -> bool {
    jiff::fmt::temporal::Pieces::parse(s)
        .is_ok_and(|p| p.date().year() == 9999 && p.time().is_some() && p.offset().is_some())
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Is `name` an event file name (`YYYY-MM.jsonl`)?
pub fn is_month_file(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() == 13
        && name.ends_with(".jsonl")
        && b[4] == b'-'
        && b[..4].iter().chain(&b[5..7]).all(u8::is_ascii_digit)
}

/// Is `kind` a valid event kind (`^[a-z][a-z0-9_]{0,63}$`)?
pub fn is_valid_kind(kind: &str) -> bool {
    let b = kind.as_bytes();
    (1..=64).contains(&b.len())
        && b[0].is_ascii_lowercase()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_ts_parse_agrees_with_jiff() {
        for s in [
            "2026-11-22T10:00:00.123Z",
            "1999-12-31T23:59:59.999Z",
            "2024-02-29T00:00:00.000Z",
            "1970-01-01T00:00:00.000Z",
        ] {
            let jiff_ms = s
                .parse::<jiff::Timestamp>()
                .expect("valid test input")
                .as_millisecond();
            assert_eq!(parse_ts_millis(s), Some(jiff_ms), "{s}");
        }
        assert_eq!(
            parse_ts_millis("2026-11-22T11:00:00+01:00"),
            parse_ts_millis("2026-11-22T10:00:00.000Z")
        );
        assert_eq!(parse_ts_millis("yesterday"), None);
    }

    #[test]
    fn ids_sort_by_time() {
        let t1 = "2026-01-01T00:00:00Z".parse().expect("valid test input");
        let t2 = "2026-01-01T00:00:01Z".parse().expect("valid test input");
        let (a, b, c) = (new_id(t1), new_id(t1), new_id(t2));
        assert!(a < b && b < c, "{a} {b} {c}");
        assert_eq!(
            id_key(&a),
            ulid::Ulid::from_string(&a).expect("valid test input").0
        );
        assert_ne!(id_key("custom-1"), id_key("custom-2"));
    }

    fn event(line: &str) -> Event {
        serde_json::from_str(line).expect("valid test input")
    }

    #[test]
    fn a_field_of_another_type_reads_as_absent() {
        let e = event(
            r#"{"id":"x","ts":"t","kind":"ack","delegation":42,"status":"applied","reason":null,"phase":["p1"]}"#,
        );
        let f = |name| e.str_field(name);
        assert_eq!(
            (f("delegation"), f("status"), f("reason"), f("phase")),
            (None, Some("applied"), None, None)
        );
    }

    #[test]
    fn shown_entries_are_read_one_by_one() {
        let e = event(
            r#"{"id":"x","ts":"t","kind":"shown","phase":3,"shown":[{"id":"ab","priority":"high","extra":1},["cd","critical"],{"id":"cd","priority":9},{"id":5,"priority":"low"},{"id":"ef","priority":"low"}]}"#,
        );
        assert_eq!(e.str_field("phase"), None);
        let ids: Vec<(String, Priority)> = e
            .shown_entries()
            .expect("a list")
            .into_iter()
            .map(|s| (s.id, s.priority))
            .collect();
        assert_eq!(
            ids,
            [("ab".into(), Priority::High), ("ef".into(), Priority::Low)]
        );
        let not_a_list = event(r#"{"id":"x","ts":"t","kind":"shown","shown":"ab"}"#);
        assert!(not_a_list.shown_entries().is_none());
    }

    #[test]
    fn check_keys_tell_absent_from_another_type() {
        let key = |line: &str| {
            event(line)
                .check_key()
                .map(|k| k.map(|k| k.map(str::to_owned)))
        };
        assert_eq!(
            key(r#"{"id":"x","ts":"t","kind":"check","change":"c","branch":17}"#),
            [Some(Some("c".to_owned())), Some(None)]
        );
        assert_eq!(
            key(r#"{"id":"x","ts":"t","kind":"check","change":"c"}"#),
            [Some(Some("c".to_owned())), None]
        );
    }

    #[test]
    fn pattern_refs_name_a_pattern_in_a_string_or_a_list() {
        for (line, named) in [
            (r#"{"id":"x","ts":"t","kind":"k","pattern":"p1"}"#, true),
            (r#"{"id":"x","ts":"t","kind":"k","pattern":[1,"p1"]}"#, true),
            (r#"{"id":"x","ts":"t","kind":"k","patterns":"p1"}"#, true),
            (
                r#"{"id":"x","ts":"t","kind":"k","patterns":{"p1":1}}"#,
                false,
            ),
            (r#"{"id":"x","ts":"t","kind":"k","pattern":"p2"}"#, false),
        ] {
            assert_eq!(event(line).names_pattern("p1"), named, "{line}");
        }
    }
}
