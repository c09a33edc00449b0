//! The directive loop's reading of the event log: delegations and phases.
//! Counts and escalation state come from the fold (in the index); what
//! needs whole events (one delegation, one phase) reads the log itself,
//! de-duplicated by id and in (ts, id) order like the fold.

use std::collections::{BTreeMap, HashSet};

use serde::Serialize;

use crate::directive::Priority;
use crate::error::Result;
use crate::event::{Event, Kind, ShownEntry, read_event_file};
use crate::fold::Fold;
use crate::index::Index;
use crate::problem::Problems;
use crate::store::Store;

/// The whole log, de-duplicated by id, in (ts, id) order, with the problems
/// of the lines skipped.
pub fn read_log(store: &Store) -> Result<(Vec<Event>, Problems)> {
    let mut events: Vec<(i64, u128, Event)> = Vec::new();
    let mut problems = Problems::new();
    for (path, rel) in store.event_files()? {
        let file = read_event_file(&path, &rel, &store.config.events)?;
        problems.append(file.problems);
        events.extend(file.events.into_iter().filter_map(|l| {
            let key = crate::event::id_key(&l.event.id);
            l.event.ts_millis().map(|t| (t, key, l.event))
        }));
    }
    Ok((in_log_order(events), problems))
}

/// Events keyed by (time, id key) as [`read_log`] gives them.
fn in_log_order(mut events: Vec<(i64, u128, Event)>) -> Vec<Event> {
    // The fold's own de-duplication and order, so that what reads this
    // log (stats, explain, …) counts what the index counts.
    crate::fold::dedup_in_order(&mut events, |(t, key, _)| (*t, *key));
    // Shown in (time, id) order, as documented; it differs from the fold's
    // (time, key) only among ids that are not ULIDs in one millisecond.
    events.sort_by(|a, b| (a.0, &a.2.id).cmp(&(b.0, &b.2.id)));
    events.into_iter().map(|(_, _, e)| e).collect()
}

/// Of [`read_log`], what [`delegation`] and the events naming delegation
/// `id` need: every event a line of which holds `id`, and every copy of
/// those, de-duplicated and ordered as `read_log` does; bad lines skipped.
/// Other lines are not parsed: a subagent's stop reads one delegation out of
/// a log of thousands of events. Nor are the month files before the
/// delegation's own month's previous one (see [`first_month_of`]). A copy
/// whose id is spelt otherwise yet keys the same (a ULID in lower case,
/// written by hand) is not found, and does not take part in the
/// de-duplication as it would in `read_log`.
pub fn read_delegation_log(store: &Store, id: &str) -> Result<Vec<Event>> {
    let cfg = &store.config.events;
    let first = first_month_of(id);
    let mut files = Vec::new();
    for (path, rel) in store.event_files()? {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if first.as_deref().is_some_and(|first| name < first) {
            continue;
        }
        match crate::safe_fs::read(&path, cfg.max_file_bytes) {
            Ok(bytes) => files.push(bytes),
            // Skipped with a problem by `read_log` too.
            Err(e) if crate::event::skipped_problem(&rel, &e).is_some() => {}
            Err(e) => return Err(crate::error::Error::io(&path, e)),
        }
    }
    Ok(delegation_events(&files, id, cfg.max_line_bytes))
}

/// The first month file (`2026-10.jsonl`) that can hold an event about
/// delegation `id`: its events are recorded after it was shown, and a ULID
/// id holds the time it was shown at. A month earlier, for a clone whose
/// clock is behind the one that showed it; `None` (every file) for an id
/// that is no ULID.
fn first_month_of(id: &str) -> Option<String> {
    let ulid = ulid::Ulid::from_string(id)
        .ok()
        .filter(|_| id.len() == 26)?;
    let shown = jiff::Timestamp::from_millisecond(i64::try_from(ulid.timestamp_ms()).ok()?).ok()?;
    let month = shown
        .to_zoned(jiff::tz::TimeZone::UTC)
        .date()
        .first_of_month();
    let before = month.checked_sub(jiff::ToSpan::months(1)).ok()?;
    Some(format!("{:04}-{:02}.jsonl", before.year(), before.month()))
}

/// [`read_delegation_log`] of the event files' bytes, in the log's order.
///
/// A line that spells an id with escapes may hold it without holding its
/// text. A letter or digit is spelt otherwise only as `\uXXXX`, so a line
/// with `\u` is parsed as well; a line with any backslash only while an id
/// sought holds a character JSON spells with one (`"`, `\`, `/`, a control
/// character): a failure's output or a guard's regex has many.
fn delegation_events(files: &[Vec<u8>], id: &str, max_line_bytes: u64) -> Vec<Event> {
    use memchr::memmem::Finder;
    // The complete lines, in the log's order (a torn last line is not read).
    let lines = || {
        files.iter().flat_map(|bytes| {
            let end = memchr::memrchr(b'\n', bytes).map_or(0, |i| i + 1);
            bytes[..end].split(|&b| b == b'\n')
        })
    };
    let unicode_escape = Finder::new(b"\\u");
    // Whether a line may hold one of `needles`, given whether any of them
    // holds a character a short escape spells.
    let holds = |line: &[u8], needles: &[Finder], short_escapes: bool| {
        let escaped = if short_escapes {
            memchr::memchr(b'\\', line).is_some()
        } else {
            unicode_escape.find(line).is_some()
        };
        escaped || needles.iter().any(|f| f.find(line).is_some())
    };
    let short_escapes = |needles: &[Finder]| {
        (needles.iter().flat_map(|f| f.needle()))
            .any(|&b| matches!(b, b'"' | b'\\' | b'/') || b < 0x20)
    };
    let parse = |line: &[u8]| crate::event::parse_event_line(line, max_line_bytes).ok();
    let mut needles = vec![Finder::new(id.as_bytes())];
    // The ids of the events that hold `id`: their copies decide which copy
    // the de-duplication keeps, whether or not they hold `id`.
    let short = short_escapes(&needles);
    let ids: HashSet<String> = (lines().filter(|l| holds(l, &needles, short)))
        .filter_map(parse)
        .map(|e| e.id)
        .collect();
    needles.extend(ids.iter().map(|i| Finder::new(i.as_bytes()).into_owned()));
    let short = short_escapes(&needles);
    let events = (lines().filter(|l| holds(l, &needles, short)))
        .filter_map(parse)
        .filter_map(|e| {
            let key = crate::event::id_key(&e.id);
            e.ts_millis().map(|t| (t, key, e))
        })
        .collect();
    in_log_order(events)
}

/// A delegation: one `shown` event (its id is the delegation's id).
#[derive(Debug, Clone, Serialize)]
pub struct Delegation {
    pub id: String,
    pub ts: String,
    pub role: Option<String>,
    pub phase: Option<String>,
    pub shown: Vec<ShownEntry>,
}

impl Delegation {
    fn from_event(e: &Event) -> Option<Delegation> {
        if e.known_kind() != Some(Kind::Shown) {
            return None;
        }
        let shown = e.shown_entries()?;
        Some(Delegation {
            id: e.id.clone(),
            ts: e.ts.clone(),
            role: e.actor.role.clone(),
            phase: e.str_field("phase").map(str::to_owned),
            shown,
        })
    }

    pub fn shows(&self, id: &str) -> bool {
        self.shown.iter().any(|s| s.id == id)
    }
}

/// The delegation with this id, if the log has it.
pub fn delegation(events: &[Event], id: &str) -> Option<Delegation> {
    events
        .iter()
        .find(|e| e.id == id)
        .and_then(Delegation::from_event)
}

/// Every delegation of a phase.
pub fn phase_delegations(events: &[Event], phase: &str) -> Vec<Delegation> {
    events
        .iter()
        .filter(|e| e.known_kind() == Some(Kind::Shown) && e.str_field("phase") == Some(phase))
        .filter_map(Delegation::from_event)
        .collect()
}

/// What the log says of one directive in a phase.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PhaseRecord {
    pub id: String,
    /// Critical when shown, or escalated now.
    pub critical: bool,
    /// The latest terminal outcome in the phase: `applied`, `verified`,
    /// `ignored`, `n_a` (the last two only with a reason).
    pub terminal: Option<String>,
    /// Accepted by an `override` in this phase.
    pub overridden: bool,
}

/// Why a critical directive blocks a phase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Blocker {
    pub id: String,
    pub reason: String,
}

/// The directives shown in a phase, with their outcomes in it; a directive
/// retired since is left out (it no longer gates a phase or owes a verdict).
pub fn phase_records(events: &[Event], phase: &str, index: &Index) -> Vec<PhaseRecord> {
    let fold = &index.fold;
    let delegations = phase_delegations(events, phase);
    let in_phase: HashSet<&str> = delegations.iter().map(|d| d.id.as_str()).collect();
    let mut records: BTreeMap<&str, PhaseRecord> = BTreeMap::new();
    let shown = delegations.iter().flat_map(|d| &d.shown);
    for s in shown.filter(|s| !index.is_retired(&s.id)) {
        let r = records.entry(&s.id).or_insert_with(|| PhaseRecord {
            id: s.id.clone(),
            critical: fold.escalated(&s.id).is_some(),
            ..PhaseRecord::default()
        });
        r.critical |= s.priority == Priority::Critical;
    }
    for e in events {
        let Some(id) = e.directive.as_deref() else {
            continue;
        };
        let Some(r) = records.get_mut(id) else {
            continue;
        };
        let f = |name| e.str_field(name);
        let reason = f("reason").is_some_and(|r| !r.trim().is_empty());
        match e.known_kind() {
            Some(Kind::Ack) if f("delegation").is_some_and(|d| in_phase.contains(d)) => {
                match f("status") {
                    Some("applied") => r.terminal = Some("applied".into()),
                    Some(s @ ("ignored" | "n_a")) if reason => r.terminal = Some(s.into()),
                    _ => {}
                }
            }
            Some(Kind::Verdict) if f("phase") == Some(phase) => match f("verdict") {
                Some("verified") => r.terminal = Some("verified".into()),
                Some("n_a") if reason => r.terminal = Some("n_a".into()),
                _ => {}
            },
            Some(Kind::Override) if f("phase") == Some(phase) => r.overridden = true,
            _ => {}
        }
    }
    records.into_values().collect()
}

/// The critical directives that block completing a phase.
pub fn phase_blockers(records: &[PhaseRecord], fold: &Fold) -> Vec<Blocker> {
    let mut out = Vec::new();
    for r in records.iter().filter(|r| r.critical && !r.overridden) {
        let unremediated = fold
            .loop_state(&r.id)
            .is_some_and(crate::fold::LoopState::unremediated);
        let reason = match (&r.terminal, unremediated) {
            (_, true) => "violation with no later applied or verified outcome",
            (None, false) => {
                "no terminal outcome (applied, verified, or ignored/n_a with a reason)"
            }
            (Some(_), false) => continue,
        };
        out.push(Blocker {
            id: r.id.clone(),
            reason: reason.into(),
        });
    }
    out
}

/// Has the phase been recorded as complete?
pub fn phase_completed<'a>(events: &'a [Event], phase: &str) -> Option<&'a Event> {
    events
        .iter()
        .rev()
        .find(|e| e.known_kind() == Some(Kind::Phase) && e.str_field("phase") == Some(phase))
}

/// What to say of `phase`, in which no directive was shown: the closest
/// phase that had some, or the phases that did, or where names come from.
pub fn unknown_phase_hint(events: &[Event], phase: &str) -> String {
    let mut phases: Vec<&str> = events
        .iter()
        .filter(|e| e.known_kind() == Some(Kind::Shown))
        .filter_map(|e| e.str_field("phase"))
        .collect();
    phases.sort_unstable();
    phases.dedup();
    let names = || crate::suggest::name_list(phases.iter().copied(), 12);
    match crate::suggest::closest(phase, phases.iter().copied()) {
        Some(m) => format!(
            "did you mean `{m}`? (phases with directives shown: {})",
            names()
        ),
        None if !phases.is_empty() => format!("phases with directives shown: {}", names()),
        None => "the name is the one given to `git swarm inject --phase`".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delegation_is_looked_for_from_the_month_before_its_own() {
        let id = |ts: &str| crate::event::new_id(ts.parse().expect("time"));
        assert_eq!(
            first_month_of(&id("2026-11-22T10:00:00Z")).as_deref(),
            Some("2026-10.jsonl")
        );
        assert_eq!(
            first_month_of(&id("2026-01-01T00:00:00Z")).as_deref(),
            Some("2025-12.jsonl")
        );
        // Not a ULID (another tool's id): every file is read.
        assert_eq!(first_month_of("delegation-7"), None);
    }

    /// Of a log with copies (one with an earlier time), escapes, a bad
    /// line and a torn tail, the delegation's events are those of the whole
    /// log read and de-duplicated.
    #[test]
    fn a_delegations_events_are_those_of_the_whole_log() {
        let d = "01JD0000000000000000000001";
        let line = |id: &str, ts: &str, kind: &str, extra: &str| {
            format!(r#"{{"id":"{id}","ts":"{ts}","kind":"{kind}","actor":{{}}{extra}}}"#)
        };
        let shown = r#","shown":[{"id":"d-1","priority":"critical"}],"role":"coder""#;
        let of = |d: &str| format!(r#","delegation":"{d}","directive":"d-1","status":"applied""#);
        let a = "01JD0000000000000000000002";
        let b = "01JD0000000000000000000003";
        let c = "01JD0000000000000000000004";
        let files = [
            [
                line(d, "2026-11-01T00:00:00.000Z", "shown", shown),
                line(
                    "01JD0000000000000000000009",
                    "2026-11-01T00:00:00.500Z",
                    "shown",
                    shown,
                ),
                // A copy of `a`, earlier and naming another delegation: it wins.
                line(
                    a,
                    "2026-11-01T00:00:00.900Z",
                    "ack",
                    &of("01JD0000000000000000000008"),
                ),
                line(b, "2026-11-01T00:00:02.000Z", "ack", &of(d)),
                "{not json".to_owned(),
            ]
            .join("\n")
                + "\n",
            [
                line(a, "2026-11-01T00:00:01.000Z", "ack", &of(d)),
                // The delegation spelt with an escape.
                line(
                    c,
                    "2026-11-01T00:00:03.000Z",
                    "ack",
                    &of(&d.replacen('0', "\\u0030", 1)),
                ),
                line(b, "2026-11-01T00:00:02.000Z", "ack", &of(d)),
            ]
            .join("\n")
                + "\n"
                + &line(
                    "01JD0000000000000000000005",
                    "2026-11-01T00:00:04.000Z",
                    "ack",
                    &of(d),
                ),
        ]
        .map(String::into_bytes);
        let relevant = |events: Vec<Event>| -> Vec<Event> {
            (events.into_iter())
                .filter(|e| e.id == d || e.str_field("delegation") == Some(d))
                .collect()
        };
        let whole: Vec<(i64, u128, Event)> = (files.iter())
            .flat_map(|f| {
                // What follows the last newline is a torn line.
                let mut lines: Vec<&[u8]> = f.split(|&b| b == b'\n').collect();
                lines.pop();
                lines
            })
            .filter_map(|l| crate::event::parse_event_line(l, 100_000).ok())
            .map(|e| (e.ts_millis().expect("ts"), crate::event::id_key(&e.id), e))
            .collect();
        let expected = relevant(in_log_order(whole));
        let ids: Vec<&str> = expected.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(
            ids,
            [d, b, c],
            "the torn line and the losing copy of `a` are not read"
        );
        assert_eq!(relevant(delegation_events(&files, d, 100_000)), expected);
    }

    /// A line whose backslashes can spell no id sought (a guard's regex, a
    /// failure's output) is not parsed.
    #[test]
    fn backslashes_that_spell_no_id_are_not_parsed() {
        let d = "01JD0000000000000000000001";
        let files = [format!(
            "{}\n{}\n",
            format_args!(r#"{{"id":"{d}","ts":"2026-11-01T00:00:00.000Z","kind":"shown","actor":{{}},"shown":[]}}"#),
            r#"{"id":"01JD0000000000000000000002","ts":"2026-11-01T00:00:01.000Z","kind":"prevented","actor":{},"predicates":["command:\\bgit\\s+push"]}"#,
        )
        .into_bytes()];
        let ids: Vec<String> = (delegation_events(&files, d, 100_000).into_iter())
            .map(|e| e.id)
            .collect();
        assert_eq!(ids, [d]);
    }

    /// A copy of a related event whose id holds a `/`, spelt `\/`, counts:
    /// the earlier copy wins the de-duplication, as `read_log` decides.
    #[test]
    fn a_copy_spelt_with_a_short_escape_counts() {
        let d = "01JD0000000000000000000001";
        let files = [format!(
            "{}\n{}\n",
            format_args!(r#"{{"id":"x/1","ts":"2026-11-01T00:00:03.000Z","kind":"ack","actor":{{}},"delegation":"{d}"}}"#),
            r#"{"id":"x\/1","ts":"2026-11-01T00:00:02.000Z","kind":"ack","actor":{},"delegation":"another"}"#,
        )
        .into_bytes()];
        let seen: Vec<(String, Option<String>)> = (delegation_events(&files, d, 100_000)
            .into_iter())
        .map(|e| (e.id.clone(), e.str_field("delegation").map(str::to_owned)))
        .collect();
        assert_eq!(seen, [("x/1".to_owned(), Some("another".to_owned()))]);
    }

    /// A delegation id (another tool's) that holds a `/`, spelt `\/` in a
    /// line, is found there, beside the regex lines then parsed too.
    #[test]
    fn an_id_spelt_with_a_short_escape_is_found() {
        let d = "run/7";
        let files = [format!(
            "{}\n{}\n",
            r#"{"id":"01JD0000000000000000000001","ts":"2026-11-01T00:00:00.000Z","kind":"ack","actor":{},"delegation":"run\/7"}"#,
            r#"{"id":"01JD0000000000000000000002","ts":"2026-11-01T00:00:01.000Z","kind":"prevented","actor":{},"predicates":["command:\\bgit"]}"#,
        )
        .into_bytes()];
        let acks: Vec<String> = (delegation_events(&files, d, 100_000).into_iter())
            .filter(|e| e.str_field("delegation") == Some(d))
            .map(|e| e.id)
            .collect();
        assert_eq!(acks, ["01JD0000000000000000000001"]);
    }
}
