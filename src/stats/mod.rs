//! `git swarm stats`: counts and rates over the event log, for people and
//! for dashboards (rendered as OpenMetrics by [`openmetrics`]).
//!
//! Everything is computed from the de-duplicated log in (time, id) order,
//! as every other state is. The directive loop's numbers (violations,
//! remediations, escalation episodes) come from the same [`Fold`] the index
//! keeps, so `stats` counts exactly what escalation counts: for a window
//! (`--since`), the log is folded once, and the fold as it stood before the
//! window's first event is subtracted from the fold at the end. Pattern
//! states are the pattern fold's, now: a state is not a count of a window.
//!
//! Ack compliance is over the directive-shown pairs of the delegations made
//! in the window (a `shown` event is a delegation; each directive it lists
//! is one pair). A pair's outcome is its latest `ack` status (`applied`,
//! `ignored`, `n_a`, `violated`), else `unacknowledged` when the ack step
//! recorded that violation, else `unanswered` (no message acked yet, or a
//! non-critical the delegate said nothing about). The compliance ratio is
//! the answered pairs (any ack status) over the pairs shown; the critical
//! ratio is the same over the pairs shown at critical priority, which the
//! ack contract requires an answer for.

pub mod openmetrics;

use std::collections::{BTreeMap, HashMap};

use schemars::JsonSchema;
use serde::Serialize;

use crate::config::PatternsConfig;
use crate::directive::Priority;
use crate::event::{Event, Kind, format_ts};
use crate::fold::{EventHead, Fold};
use crate::pattern::fold::{PatternFold, State, state};

const DAY_MS: f64 = 86_400_000.0;

/// The role label of a delegation made with no role.
pub const NO_ROLE: &str = "-";

/// Counts and rates over a window of the event log.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(title = "git-swarm stats")]
pub struct Stats {
    /// The start of the window (`--since`), or null for the whole log.
    pub since: Option<String>,
    /// The end of the window: now.
    pub until: String,
    /// The window's length in days: from `since` (else the first event) to now.
    pub window_days: f64,
    /// Distinct events in the window.
    pub events: u64,
    /// Events in the window per kind, unknown kinds included.
    pub by_kind: BTreeMap<String, u64>,
    /// Every directive of the working tree, and any other the window's events name, by id.
    pub directives: Vec<DirectiveStats>,
    /// Ack outcomes per role of the delegations made in the window, by role (`-`: no role).
    pub roles: Vec<RoleStats>,
    /// Observed patterns per lifecycle state, now (every state listed).
    pub patterns: BTreeMap<String, u64>,
    /// Recorded check outcomes in the window.
    pub checks: CheckStats,
    /// `handoff_violation` records in the window per violation (`scope_creep`, …);
    /// the copies made for path-scoped directives count as those directives' violations instead.
    pub handoff_violations: BTreeMap<String, u64>,
    /// Rates over the window.
    pub rates: Rates,
    /// In a hive's log: what the projects reported of its directives
    /// (`git swarm hive report`), by id. Absent when nothing was reported.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reported: Vec<ReportedStats>,
}

/// What projects reported of one directive: each project's latest
/// `hive_report` in the window, summed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct ReportedStats {
    pub id: String,
    /// Projects that reported it.
    pub projects: u64,
    /// Delegations that acknowledged it as applied.
    pub applied: u64,
    /// Violations, as escalation counts them.
    pub violated: u64,
    /// Tool calls its guard refused.
    pub prevented: u64,
    /// Projects that switched it off.
    pub switched_off: u64,
}

/// What the window holds about one directive.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct DirectiveStats {
    pub id: String,
    /// Whether a file in the working tree declares it.
    pub in_tree: bool,
    /// Violations the fold counts (recorded check failures, `violated` acks and
    /// verdicts, unacknowledged criticals, handoff violations of its paths).
    pub violations: u64,
    /// Applied acks and verified verdicts.
    pub remediations: u64,
    /// Escalation episodes that began in the window.
    pub escalations: u64,
    /// Escalation episodes ended (by `deescalate`) in the window.
    pub deescalations: u64,
    /// `override` events: a blocker accepted at a phase gate.
    pub overrides: u64,
    /// Escalated now (critical + enforce until deescalated).
    pub escalated: bool,
    /// Agents' tool calls its guard refused (`prevented` events): mistakes
    /// stopped before they happened. Not violations.
    pub prevented: u64,
    /// Times it was shown to an agent at a tool call.
    pub shown_at_calls: u64,
}

/// Ack outcomes of one role's delegations.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct RoleStats {
    pub role: String,
    /// Delegations (`shown` events) made in the window.
    pub delegations: u64,
    /// Directive-shown pairs of those delegations.
    pub shown: u64,
    /// Pairs shown at critical priority.
    pub critical_shown: u64,
    pub applied: u64,
    pub ignored: u64,
    pub n_a: u64,
    pub violated: u64,
    /// Critical pairs with no ack, recorded as a violation.
    pub unacknowledged: u64,
    /// Pairs with neither an ack nor an `unacknowledged` record.
    pub unanswered: u64,
    /// Critical pairs with an ack of any status.
    pub critical_answered: u64,
    /// Acks for directives the delegation was not shown (not credited), in the window.
    pub spoofed_acks: u64,
    /// Answered pairs over pairs shown; null when none was shown.
    pub ack_compliance: Option<f64>,
    /// Answered critical pairs over critical pairs shown; null when none was shown.
    pub critical_ack_compliance: Option<f64>,
}

/// Recorded check outcomes: a check records failures, and a pass only on a
/// branch where a failure stood.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct CheckStats {
    /// `check` events: a directive's predicates failed on a change.
    pub failed: u64,
    /// `check_passed` events: a failure on a branch remediated by a passing check.
    pub passed: u64,
}

/// Rates over the window; null when the window has no length.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct Rates {
    /// Violations of all directives per day.
    pub violations_per_day: Option<f64>,
    /// Events per day.
    pub events_per_day: Option<f64>,
    /// Answered pairs over pairs shown, over every role.
    pub ack_compliance: Option<f64>,
    /// Answered critical pairs over critical pairs shown, over every role.
    pub critical_ack_compliance: Option<f64>,
}

/// What [`compute`] reads.
pub struct Input<'a> {
    /// The de-duplicated log in (time, id) order, as
    /// [`crate::directive_loop::records::read_log`] reads it.
    pub events: &'a [Event],
    /// The ids of the directives of the working tree.
    pub directives: &'a [String],
    pub patterns: &'a PatternFold,
    pub patterns_config: &'a PatternsConfig,
    /// The start of the window in ms, if any.
    pub since: Option<i64>,
    pub now: jiff::Timestamp,
}

/// The stats of the window `since..now`.
pub fn compute(input: &Input<'_>) -> Stats {
    let since = input.since;
    let in_window = |e: &Event| e.ts_millis().is_some_and(|t| since.is_none_or(|s| t >= s));
    // The fold at the window's start and at the end.
    let mut fold = Fold::default();
    let mut before: Option<Fold> = since.is_none().then(Fold::default);
    for e in input.events {
        let Some(head) = serde_json::to_vec(e)
            .ok()
            .and_then(|b| EventHead::parse(&b))
        else {
            continue;
        };
        if before.is_none() && since.is_some_and(|s| head.ts >= s) {
            before = Some(fold.clone());
        }
        fold.apply(&head);
    }
    let before = before.unwrap_or_else(|| fold.clone());

    let window: Vec<&Event> = input.events.iter().filter(|e| in_window(e)).collect();
    let mut by_kind: BTreeMap<String, u64> = BTreeMap::new();
    let mut checks = CheckStats::default();
    let mut handoff_violations: BTreeMap<String, u64> = BTreeMap::new();
    for e in &window {
        *by_kind.entry(e.kind.clone()).or_default() += 1;
        match e.known_kind() {
            Some(Kind::Check) => checks.failed += 1,
            Some(Kind::CheckPassed) => checks.passed += 1,
            Some(Kind::HandoffViolation) if e.directive.is_none() => {
                let v = e.str_field("violation").unwrap_or(NO_ROLE);
                *handoff_violations.entry(v.to_owned()).or_default() += 1;
            }
            _ => {}
        }
    }

    let directives = directive_stats(input, &window, &fold, &before);
    let roles = role_stats(input.events, &window);
    let now_ms = input.now.as_millisecond();
    let mut patterns: BTreeMap<String, u64> = [
        State::Observed,
        State::Candidate,
        State::Verified,
        State::Active,
        State::Deprecated,
    ]
    .iter()
    .map(|s| (s.as_str().to_owned(), 0))
    .collect();
    for (_, p) in input.patterns.observed() {
        let s = state(&p.stats, input.patterns_config, now_ms);
        *patterns.entry(s.as_str().to_owned()).or_default() += 1;
    }

    let start = since.or_else(|| window.first().and_then(|e| e.ts_millis()));
    let window_days = start.map_or(0.0, |s| (now_ms - s) as f64 / DAY_MS).max(0.0);
    // A rate over less than a day says more about the window than the log.
    let per_day = |n: u64| (window_days >= 1.0).then(|| n as f64 / window_days);
    let violations: u64 = directives.iter().map(|d| d.violations).sum();
    let sum = |f: fn(&RoleStats) -> u64| roles.iter().map(f).sum::<u64>();
    let answered = sum(|r| r.applied + r.ignored + r.n_a + r.violated);
    let rates = Rates {
        violations_per_day: per_day(violations),
        events_per_day: per_day(window.len() as u64),
        ack_compliance: ratio(answered, sum(|r| r.shown)),
        critical_ack_compliance: ratio(sum(|r| r.critical_answered), sum(|r| r.critical_shown)),
    };
    Stats {
        since: since
            .and_then(|s| jiff::Timestamp::from_millisecond(s).ok())
            .map(format_ts),
        until: format_ts(input.now),
        window_days,
        events: window.len() as u64,
        by_kind,
        directives,
        roles,
        patterns,
        checks,
        handoff_violations,
        rates,
        reported: reported(&window),
    }
}

/// Each project's latest report of each directive in `window` (in log
/// order, so a later one replaces an earlier), summed per directive.
fn reported(window: &[&Event]) -> Vec<ReportedStats> {
    let mut latest: BTreeMap<(&str, &str), &Event> = BTreeMap::new();
    for e in window {
        if e.known_kind() != Some(Kind::HiveReport) {
            continue;
        }
        if let (Some(id), Some(project)) = (e.directive.as_deref(), e.str_field("project")) {
            latest.insert((id, project), e);
        }
    }
    let mut out: BTreeMap<&str, ReportedStats> = BTreeMap::new();
    for ((id, _), e) in latest {
        let n = |k: &str| {
            e.data
                .get(k)
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(0)
        };
        let r = out.entry(id).or_default();
        r.projects += 1;
        r.applied += n("applied");
        r.violated += n("violated");
        r.prevented += n("prevented");
        r.switched_off +=
            u64::from(e.data.get("switched_off") == Some(&serde_json::Value::Bool(true)));
    }
    out.into_iter()
        .map(|(id, r)| ReportedStats {
            id: id.to_owned(),
            ..r
        })
        .collect()
}

fn ratio(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

fn directive_stats(
    input: &Input<'_>,
    window: &[&Event],
    fold: &Fold,
    before: &Fold,
) -> Vec<DirectiveStats> {
    let mut out: BTreeMap<String, DirectiveStats> = BTreeMap::new();
    for id in input.directives {
        out.entry(id.clone()).or_default().in_tree = true;
    }
    // The directives the fold credits an event to: `directive`, and the
    // `directives` of an event about several.
    for e in window {
        let listed = e.data.get("directives").and_then(|v| v.as_array());
        let named = listed.into_iter().flatten().filter_map(|v| v.as_str());
        for id in e.directive.as_deref().into_iter().chain(named) {
            out.entry(id.to_owned()).or_default();
        }
    }
    for e in window {
        match e.known_kind() {
            Some(Kind::Prevented) => {
                if let Some(d) = e.directive.as_deref().and_then(|id| out.get_mut(id)) {
                    d.prevented += 1;
                }
            }
            Some(Kind::Shown) if e.data.contains_key("call") => {
                for s in e.shown_entries().unwrap_or_default() {
                    if let Some(d) = out.get_mut(&s.id) {
                        d.shown_at_calls += 1;
                    }
                }
            }
            _ => {}
        }
    }
    let since = input.since.unwrap_or(i64::MIN);
    for (id, d) in &mut out {
        d.id = id.clone();
        let count = |f: &Fold, kind: &str| {
            f.directive(id)
                .and_then(|x| x.counts().get(kind).copied())
                .unwrap_or(0)
        };
        d.overrides = count(fold, "override").saturating_sub(count(before, "override"));
        if let Some(state) = fold.loop_state(id) {
            let (v, r) = before
                .loop_state(id)
                .map_or((0, 0), |b| (b.violations, b.remediations));
            d.violations = state.violations.saturating_sub(v);
            d.remediations = state.remediations.saturating_sub(r);
            d.escalations = state.episodes.iter().filter(|e| e.start >= since).count() as u64;
            d.deescalations = state
                .episodes
                .iter()
                .filter(|e| e.ended.is_some_and(|t| t >= since))
                .count() as u64;
            d.escalated = state.open().is_some();
        }
    }
    out.into_values().collect()
}

/// What a delegation's directive came to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Answer {
    Ack(AckStatus),
    Unacknowledged,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum AckStatus {
    Applied,
    Ignored,
    NotApplicable,
    Violated,
}

fn role_stats(all: &[Event], window: &[&Event]) -> Vec<RoleStats> {
    // Answers by (delegation, directive), the latest standing; over the
    // whole log, since a delegation of the window may be acked after it.
    let mut answers: HashMap<(&str, &str), Answer> = HashMap::new();
    let mut roles_of: HashMap<&str, &str> = HashMap::new();
    // A tool call's lessons are no delegation: no ack answers them.
    let delegation =
        |e: &Event| e.known_kind() == Some(Kind::Shown) && !e.data.contains_key("call");
    for e in all {
        match e.known_kind() {
            Some(Kind::Shown) if delegation(e) => {
                roles_of.insert(&e.id, e.actor.role.as_deref().unwrap_or(NO_ROLE));
            }
            Some(Kind::Ack) => {
                let (Some(d), Some(id)) = (e.str_field("delegation"), e.directive.as_deref())
                else {
                    continue;
                };
                let status = match e.str_field("status") {
                    Some("applied") => AckStatus::Applied,
                    Some("ignored") => AckStatus::Ignored,
                    Some("n_a") => AckStatus::NotApplicable,
                    Some("violated") => AckStatus::Violated,
                    _ => continue,
                };
                answers.insert((d, id), Answer::Ack(status));
            }
            Some(Kind::Unacknowledged) => {
                if let (Some(d), Some(id)) = (e.str_field("delegation"), e.directive.as_deref()) {
                    // An ack (an earlier message, or one merged from
                    // another branch) answers the directive all the same.
                    answers.entry((d, id)).or_insert(Answer::Unacknowledged);
                }
            }
            _ => {}
        }
    }
    let mut out: BTreeMap<String, RoleStats> = BTreeMap::new();
    for e in window {
        match e.known_kind() {
            Some(Kind::Shown) if delegation(e) => {
                let role = e.actor.role.as_deref().unwrap_or(NO_ROLE);
                let r = out.entry(role.to_owned()).or_default();
                r.delegations += 1;
                for s in e.shown_entries().unwrap_or_default() {
                    let critical = s.priority == Priority::Critical;
                    r.shown += 1;
                    r.critical_shown += u64::from(critical);
                    match answers.get(&(e.id.as_str(), s.id.as_str())) {
                        Some(Answer::Ack(a)) => {
                            r.critical_answered += u64::from(critical);
                            match a {
                                AckStatus::Applied => r.applied += 1,
                                AckStatus::Ignored => r.ignored += 1,
                                AckStatus::NotApplicable => r.n_a += 1,
                                AckStatus::Violated => r.violated += 1,
                            }
                        }
                        Some(Answer::Unacknowledged) => r.unacknowledged += 1,
                        None => r.unanswered += 1,
                    }
                }
            }
            Some(Kind::SpoofedAck) => {
                let role = e
                    .str_field("delegation")
                    .and_then(|d| roles_of.get(d).copied())
                    .unwrap_or(NO_ROLE);
                out.entry(role.to_owned()).or_default().spoofed_acks += 1;
            }
            _ => {}
        }
    }
    for (role, r) in &mut out {
        r.role = role.clone();
        r.ack_compliance = ratio(r.applied + r.ignored + r.n_a + r.violated, r.shown);
        r.critical_ack_compliance = ratio(r.critical_answered, r.critical_shown);
    }
    out.into_values().collect()
}
