//! What `git swarm serve`'s page shows, as data: the directives and their
//! effective state, recent escalations and violations, patterns by role,
//! open handoffs, and violations and escalations per day per directive for
//! the plot. No HTTP here: the CLI answers requests with these as JSON.
//!
//! Everything is computed as the commands compute it — effective state and
//! escalation episodes from the fold ([`crate::fold`]), violations from the
//! same reading of an event the fold makes ([`EventHead::parse`]), patterns
//! from the pattern fold, handoffs' standing from [`crate::handoff`]. The
//! index is refreshed for each request, as every command does, so the page
//! never disagrees with `git swarm list` or `status` run at the same
//! moment; what the page needs of the log itself ([`log::Digest`]) is read
//! in one bounded pass and shared by requests until the index's fingerprint
//! of `.swarm/` changes. Nothing here writes.
//!
//! Text from `.swarm/` is kept exactly as it is: it reaches the page as JSON
//! (see [`to_json`], which also escapes `<`, `>` and `&`) and the page puts
//! it in the document as text nodes only.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::directive::{Enforcement, Priority};
use crate::event::Event;
use crate::fold::{EventHead, Signal};
use crate::handoff::{self, Handoff};
use crate::index::Index;
use crate::pattern::fold::{self as pattern_fold, PatternFold};
use crate::problem::Problems;
use crate::{Result, Store};

pub mod log;
pub mod route;

/// Days the plot covers, ending today (UTC).
pub const SERIES_DAYS: usize = 30;
/// At most this many recent escalations and violations are listed.
pub const MAX_RECENT: usize = 50;
/// At most this many patterns are listed per role (the best-scoring).
pub const MAX_PATTERNS_PER_ROLE: usize = 20;
/// The stream starts with this many of the latest events.
pub const BACKLOG: usize = 30;

const DAY_MS: i64 = 86_400_000;

/// Everything a request reads.
pub struct Loaded {
    pub index: Index,
    /// What the page needs of the log (shared by requests: see [`log::Cache`]).
    pub log: std::sync::Arc<log::Digest>,
    pub handoffs: Vec<Handoff>,
    pub patterns: PatternFold,
    pub config: crate::config::Config,
    /// Malformed lines and files that could not be read (the good ones are shown).
    pub problems: Problems,
    /// Now, in ms since the epoch.
    pub now: i64,
}

/// Reads the store: the index (refreshed if stale, as every command does),
/// the handoffs, and the log's digest from `cache` (read again only when
/// the index's fingerprint or the day changed).
pub fn load(store: &Store, cache: &log::Cache) -> Result<Loaded> {
    let mut kept = cache.lock();
    let index = crate::index::load(store)?.index;
    let now = store.clock.now().as_millisecond();
    let known = known_in(&index);
    let log = kept.get(store, index.fingerprint, now.div_euclid(DAY_MS), &known)?;
    drop((known, kept));
    // The index's own record of the event files' problems (kept up to a cap).
    let mut problems = Problems::new();
    for f in &index.event_files {
        problems.append(f.problems.clone());
    }
    let (handoffs, more) = handoff::load_all(store)?;
    problems.extend(more);
    problems.extend(store.config_problems.iter().cloned());
    Ok(Loaded {
        index,
        log,
        handoffs,
        patterns: crate::index::load_patterns(store)?,
        config: store.config.clone(),
        problems,
        now,
    })
}

/// `/api/overview.json`.
#[derive(Debug, Serialize)]
pub struct Overview {
    pub generated_at: String,
    pub directives: Vec<DirectiveRow>,
    /// Escalation episodes, newest first.
    pub escalations: Vec<EscalationRow>,
    /// Violation events, newest first.
    pub violations: Vec<ViolationRow>,
    pub patterns: Vec<RolePatterns>,
    /// Handoffs still holding their paths.
    pub handoffs: Vec<HandoffRow>,
    /// Problems in `.swarm/`: what was left out, and why.
    pub problems: Vec<ProblemRow>,
}

#[derive(Debug, Serialize)]
pub struct DirectiveRow {
    pub id: String,
    pub lesson: String,
    /// `active` or `retired`.
    pub state: &'static str,
    pub declared: Level,
    pub effective: Level,
    /// An escalation episode is open: the effective level is critical/enforce.
    pub escalated: bool,
    pub violations: u64,
    pub remediations: u64,
    /// Agents' tool calls its guard refused (`prevented` events).
    pub prevented: u64,
    pub events: u64,
}

#[derive(Debug, Serialize)]
pub struct Level {
    pub priority: Priority,
    pub enforcement: Enforcement,
}

#[derive(Debug, Serialize)]
pub struct EscalationRow {
    pub directive: String,
    pub since: String,
    pub ended: Option<String>,
    pub open: bool,
}

#[derive(Debug, Serialize)]
pub struct ViolationRow {
    pub id: String,
    pub ts: String,
    pub kind: String,
    pub directives: Vec<String>,
    pub role: Option<String>,
    /// The event's reason, evidence, change, phase or delegation: whichever it has first.
    pub detail: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct RolePatterns {
    pub role: String,
    pub patterns: Vec<PatternRow>,
}

#[derive(Debug, Serialize)]
pub struct PatternRow {
    pub id: String,
    pub text: String,
    pub state: pattern_fold::State,
    pub score: f64,
    /// `5x validated`, `-2 net, 3x ignored`, or `Nx seen`.
    pub record: String,
}

#[derive(Debug, Serialize)]
pub struct HandoffRow {
    pub task: String,
    pub standing: handoff::Standing,
    pub role: Option<String>,
    pub epic: Option<String>,
    pub owns: Vec<String>,
    pub summary: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct ProblemRow {
    pub location: String,
    pub message: String,
}

/// The directive-loop part an event plays, read as the fold reads it.
fn signal(e: &Event) -> Option<(Signal, Vec<String>)> {
    EventHead::parse(e.to_line().trim_end().as_bytes()).map(|h| (h.signal, h.directives))
}

fn ts(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .map(crate::event::format_ts)
        .unwrap_or_else(|_| ms.to_string())
}

/// Builds `/api/overview.json` from what [`load`] read.
pub fn overview(l: &Loaded) -> Overview {
    let fold = &l.index.fold;
    let cfg = &l.config;
    let directives = l
        .index
        .directives
        .iter()
        .filter_map(|e| e.directive.as_ref().map(|d| (e.stem(), d)))
        .map(|(id, d)| {
            let (priority, enforcement) = fold.effective(d);
            let state = fold.loop_state(id);
            DirectiveRow {
                id: id.to_owned(),
                lesson: d.lesson.clone(),
                state: d.status.as_str(),
                declared: Level {
                    priority: d.priority,
                    enforcement: d.enforcement,
                },
                effective: Level {
                    priority,
                    enforcement,
                },
                escalated: fold.escalated(id).is_some(),
                violations: state.map_or(0, |s| s.violations),
                remediations: state.map_or(0, |s| s.remediations),
                prevented: (fold.directive(id))
                    .and_then(|f| f.counts().get("prevented").copied())
                    .unwrap_or(0),
                events: fold.directive(id).map_or(0, |f| f.total()),
            }
        })
        .collect();

    let mut escalations: Vec<EscalationRow> = fold
        .loop_states()
        .flat_map(|(id, s)| {
            s.episodes.iter().map(move |ep| EscalationRow {
                directive: id.to_owned(),
                since: ts(ep.start),
                ended: ep.ended.map(ts),
                open: ep.ended.is_none(),
            })
        })
        .collect();
    escalations.sort_by(|a, b| {
        b.since
            .cmp(&a.since)
            .then_with(|| a.directive.cmp(&b.directive))
    });
    escalations.truncate(MAX_RECENT);

    let known = known_directives(l);
    let violations = l
        .log
        .recent
        .values()
        .rev()
        .filter_map(|e| match signal(e) {
            Some((Signal::Violation { .. }, directives)) => Some((e, violated(directives, &known))),
            _ => None,
        })
        .filter_map(|(e, directives)| {
            (!directives.is_empty()).then(|| ViolationRow {
                id: e.id.clone(),
                ts: e.ts.clone(),
                kind: e.kind.clone(),
                directives,
                role: e.actor.role.clone(),
                detail: ["reason", "evidence", "change", "phase", "delegation"]
                    .iter()
                    .find_map(|f| e.str_field(f))
                    .map(str::to_owned),
            })
        })
        .take(MAX_RECENT)
        .collect();

    Overview {
        generated_at: ts(l.now),
        directives,
        escalations,
        violations,
        patterns: by_role(&l.patterns, &cfg.patterns, l.now),
        handoffs: open_handoffs(l, cfg.handoffs.max_review_attempts),
        problems: problem_rows(&l.problems),
    }
}

/// The problems kept, then a row for each file's problems past the cap.
pub fn problem_rows(problems: &Problems) -> Vec<ProblemRow> {
    let kept = problems.iter().map(|p| ProblemRow {
        location: p.location(),
        message: p.message.clone(),
    });
    let more = problems.more().iter().map(|m| ProblemRow {
        location: m.path.clone(),
        message: m.sentence(),
    });
    kept.chain(more).collect()
}

/// The observed patterns grouped by the role they were learned from, each
/// role's best-scoring first, as `pattern list` scores them.
fn by_role(fold: &PatternFold, cfg: &crate::config::PatternsConfig, now: i64) -> Vec<RolePatterns> {
    let mut roles: BTreeMap<&str, Vec<PatternRow>> = BTreeMap::new();
    for (id, p) in fold.observed() {
        roles.entry(&p.role).or_default().push(PatternRow {
            id: id.clone(),
            text: p.text.clone(),
            state: pattern_fold::state(&p.stats, cfg, now),
            score: pattern_fold::score(p, cfg, now, &[], &[]).total,
            record: p
                .stats
                .record()
                .unwrap_or_else(|| format!("{}x seen", p.stats.observations)),
        });
    }
    roles
        .into_iter()
        .map(|(role, mut patterns)| {
            patterns.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
            patterns.truncate(MAX_PATTERNS_PER_ROLE);
            RolePatterns {
                role: role.to_owned(),
                patterns,
            }
        })
        .collect()
}

fn open_handoffs(l: &Loaded, max_attempts: u32) -> Vec<HandoffRow> {
    l.handoffs
        .iter()
        .map(|h| {
            (
                h,
                handoff::standing(&h.task, &l.log.handoff_events, max_attempts),
            )
        })
        .filter(|(_, s)| s.holds_ownership())
        .map(|(h, standing)| HandoffRow {
            task: h.task.clone(),
            standing,
            role: h.role.clone(),
            epic: h.epic.clone(),
            owns: h.contract.owns.clone(),
            summary: h.context.summary.clone(),
        })
        .collect()
}

/// `/api/series.json`: per directive, violations and escalations on each
/// of the last [`SERIES_DAYS`] days (UTC), oldest first.
#[derive(Debug, Serialize, PartialEq)]
pub struct Series {
    /// `YYYY-MM-DD`, one per day.
    pub days: Vec<String>,
    /// Directives with at least one violation or escalation in the window, by id.
    pub series: Vec<DirectiveSeries>,
}

#[derive(Debug, Serialize, PartialEq)]
pub struct DirectiveSeries {
    pub directive: String,
    /// Violation events per day (each event once, whatever its occasion).
    pub violations: Vec<u32>,
    /// Escalation episodes started per day.
    pub escalations: Vec<u32>,
}

/// The ids of the directives the store has.
fn known_directives(l: &Loaded) -> BTreeSet<&str> {
    known_in(&l.index)
}

fn known_in(index: &Index) -> BTreeSet<&str> {
    index
        .directives
        .iter()
        .filter(|e| e.directive.is_some())
        .map(|e| e.stem())
        .collect()
}

/// The directives an event violates, each once, in the order it names
/// them, and only those that exist: `directives: ["x", "x", "ghost"]` is
/// one violation of `x`.
fn violated(named: Vec<String>, known: &BTreeSet<&str>) -> Vec<String> {
    let mut seen = BTreeSet::new();
    named
        .into_iter()
        .filter(|d| known.contains(d.as_str()) && seen.insert(d.clone()))
        .collect()
}

/// Builds the plot's series from the log and the fold's episodes: each
/// violation event counts once for each directive it names that exists.
pub fn series(l: &Loaded) -> Series {
    let today = l.now.div_euclid(DAY_MS);
    let first = today - (SERIES_DAYS as i64 - 1);
    let slot = |ms: i64| {
        let day = ms.div_euclid(DAY_MS);
        (first..=today)
            .contains(&day)
            .then(|| (day - first) as usize)
    };
    let mut by_id: BTreeMap<String, DirectiveSeries> = BTreeMap::new();
    fn row<'a>(
        by_id: &'a mut BTreeMap<String, DirectiveSeries>,
        id: &str,
    ) -> &'a mut DirectiveSeries {
        by_id
            .entry(id.to_owned())
            .or_insert_with(|| DirectiveSeries {
                directive: id.to_owned(),
                violations: vec![0; SERIES_DAYS],
                escalations: vec![0; SERIES_DAYS],
            })
    }
    let known = known_directives(l);
    // Counted when the log was read, for the window of its day; the same
    // window unless the day turned since (then the cache reads it again).
    let shift = first - l.log.first_day;
    for (id, days) in &l.log.per_day {
        let counts = &mut row(&mut by_id, id).violations;
        for (i, n) in days.iter().enumerate() {
            if let Some(at) = usize::try_from(i as i64 - shift)
                .ok()
                .filter(|&at| at < SERIES_DAYS)
            {
                counts[at] += n;
            }
        }
    }
    for (id, state) in l.index.fold.loop_states() {
        if !known.contains(id) {
            continue;
        }
        for ep in &state.episodes {
            if let Some(at) = slot(ep.start) {
                row(&mut by_id, id).escalations[at] += 1;
            }
        }
    }
    Series {
        days: (first..=today)
            .map(|d| {
                jiff::Timestamp::from_millisecond(d * DAY_MS)
                    .map(|t| t.strftime("%Y-%m-%d").to_string())
                    .unwrap_or_default()
            })
            .collect(),
        series: by_id.into_values().collect(),
    }
}

/// The events the stream starts with, and starts with again after a
/// reconnect: the latest [`BACKLOG`] (the page skips those it already has).
pub fn backlog(log: &[Event]) -> &[Event] {
    &log[log.len().saturating_sub(BACKLOG)..]
}

/// `value` as JSON that is safe anywhere in an HTML document too: `<`, `>`
/// and `&` (which JSON only has inside strings) and the two line
/// separators JavaScript once read as newlines are written as `\u` escapes.
/// A lesson `<script>…` thus never appears as markup in any response.
pub fn to_json<T: Serialize + ?Sized>(value: &T) -> String {
    let text = serde_json::to_string(value).unwrap_or_else(|_| "null".to_owned());
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_has_no_markup_and_reads_back_the_same() {
        let lesson = "<script>alert(1)</script> & \u{2028} \"quoted\"";
        let json = to_json(&serde_json::json!({ "lesson": lesson }));
        assert!(!json.contains('<') && !json.contains('>') && !json.contains('&'));
        let back: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
        assert_eq!(back["lesson"], lesson);
    }

    fn event(id: &str) -> Event {
        Event {
            id: id.to_owned(),
            ts: "2026-11-22T10:00:00.000Z".to_owned(),
            kind: "added".to_owned(),
            actor: crate::event::Actor::default(),
            directive: None,
            data: serde_json::Map::new(),
        }
    }

    #[test]
    fn backlog_is_the_latest() {
        let log: Vec<Event> = (0..40).map(|i| event(&format!("E{i:02}"))).collect();
        assert_eq!(backlog(&log).len(), BACKLOG);
        assert_eq!(backlog(&log)[0].id, "E10");
        assert_eq!(backlog(&log[..3]).len(), 3);
    }
}
