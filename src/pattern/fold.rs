//! The pattern fold: every pattern's record, computed from the `pattern_*`
//! and `outcome` events alone.
//!
//! Nothing about a pattern is stored as a counter: two branches that each
//! observe, validate or ignore a pattern merge into one record with the sum
//! of both track records, because the fold de-duplicates per (kind, pattern,
//! run) and every count is a count of events. Scores and lifecycle states
//! depend on the time of the query and are computed then ([`score`],
//! [`state`]), from the constants in `[patterns]` of `config.toml`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::text::Category;
use crate::config::PatternsConfig;
use crate::event::Kind;

/// Milliseconds in a day.
pub const DAY_MS: f64 = 86_400_000.0;
/// At most this many labels and files are kept of the contexts a pattern was seen in.
pub const MAX_CONTEXT: usize = 64;

/// The fields of a pattern event the fold reads.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default)]
pub struct PatternEvent {
    /// `pattern`, or the `patterns` of a `pattern_shown` or `outcome` event.
    pub pattern: Option<String>,
    pub patterns: Vec<String>,
    /// For `pattern_observed`: the id of the observation's own text when it
    /// joined a near-duplicate `pattern`.
    pub alias: Option<String>,
    /// The role the pattern was learned from (`pattern_observed`).
    pub role: Option<String>,
    pub text: Option<String>,
    pub category: Option<Category>,
    pub run: Option<String>,
    pub labels: Vec<String>,
    pub files: Vec<String>,
    /// For `pattern_ignored`: the adversarial role's weight.
    pub weight: Option<f64>,
    /// For `pattern_ignored`: the pattern had been validated before.
    pub regression: bool,
    /// For `outcome`: `pass` or `fail`.
    pub result: Option<String>,
}

impl PatternEvent {
    /// The patterns the event is about.
    pub fn ids(&self) -> impl Iterator<Item = &String> {
        self.pattern.iter().chain(&self.patterns)
    }
}

/// One pattern's record.
#[derive(Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Pattern {
    /// The role whose deliberations it was learned from.
    pub role: String,
    /// The text as first observed (empty until an observation is folded).
    pub text: String,
    pub stats: Stats,
    /// Labels and files of the runs it was seen in (at most [`MAX_CONTEXT`] each).
    pub labels: Vec<String>,
    pub files: Vec<String>,
    /// Sorted hashes of (kind, run) already folded: the same signal for the
    /// same run counts once, however often it was recorded or merged.
    keys: Vec<u64>,
}

/// Printed flat, with the fields in the order the fold's snapshot test pins.
impl std::fmt::Debug for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = &self.stats;
        f.debug_struct("Pattern")
            .field("role", &self.role)
            .field("category", &s.category)
            .field("text", &self.text)
            .field("first_seen", &s.first_seen)
            .field("observations", &s.observations)
            .field("distinct_contexts", &s.distinct_contexts)
            .field("first_context", &s.first_context)
            .field("labels", &self.labels)
            .field("files", &self.files)
            .field("validated", &s.validated)
            .field("ignored", &s.ignored)
            .field("ignore_weight", &s.ignore_weight)
            .field("outcome_passes", &s.outcome_passes)
            .field("outcome_fails", &s.outcome_fails)
            .field("regressions", &s.regressions)
            .field("aged", &s.aged)
            .field("last_use", &s.last_use)
            .field("promoted", &s.promoted)
            .field("deprecated", &s.deprecated)
            .field("keys", &self.keys)
            .finish()
    }
}

crate::directive::string_enum!(
    /// Lifecycle states, in order.
    State {
        Observed => "observed",
        Candidate => "candidate",
        Verified => "verified",
        Active => "active",
        Deprecated => "deprecated",
    }
);

/// Every part of a pattern's score.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Score {
    /// `validated / (validated + weighted ignores)`, outcomes included; `new_rate` when both are 0.
    pub success_rate: f64,
    /// Days since the last use, plus `age_step_days` per `pattern_aged` since.
    pub age_days: f64,
    /// `exp(-age_days / decay_days)`, or 1 once validated `immune_after` times.
    pub decay: f64,
    /// `rule_weight`, `causal_weight` or 1.
    pub category: f64,
    /// `1 + context_boost × share of the query's labels and files seen with the pattern`.
    pub context: f64,
    /// The product of the four factors.
    pub total: f64,
}

/// All patterns, by id.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PatternFold {
    #[serde(deserialize_with = "sorted_map")]
    pub patterns: BTreeMap<String, Pattern>,
    /// Observation ids that joined a near-duplicate pattern: alias → pattern.
    pub aliases: BTreeMap<String, String>,
    /// Runs with a recorded outcome: run → (pass, ms).
    pub outcomes: BTreeMap<String, (bool, i64)>,
    /// Pattern events folded.
    pub events: u64,
}

/// Decodes a map written in key order in one bulk build, not one insert
/// per entry (postcard writes a map exactly as a sequence of pairs).
fn sorted_map<'de, D>(d: D) -> Result<BTreeMap<String, Pattern>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let pairs: Vec<(String, Pattern)> = Deserialize::deserialize(d)?;
    Ok(pairs.into_iter().collect())
}

/// The key of signal `kind` for `run`: a hash of the kind's name, as the index holds it.
fn key(kind: Kind, run: &str) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(kind.as_str().as_bytes());
    h.update(&[0]);
    h.update(run.as_bytes());
    h.digest()
}

fn context_hash(labels: &[String], files: &[String]) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    // Each list sorted and deduplicated, its items NUL-terminated; a 1 between the two.
    for (list, end) in [(labels, &[1u8][..]), (files, &[])] {
        let mut items: Vec<&str> = list.iter().map(String::as_str).collect();
        items.sort_unstable();
        items.dedup();
        for x in items {
            h.update(x.as_bytes());
            h.update(&[0]);
        }
        h.update(end);
    }
    h.digest()
}

fn merge_into(into: &mut Vec<String>, more: &[String]) {
    for m in more {
        if into.len() >= MAX_CONTEXT {
            return;
        }
        if let Err(at) = into.binary_search(m) {
            into.insert(at, m.clone());
        }
    }
}

impl Pattern {
    /// Has the signal `kind` been folded for `run`? Marks it if not.
    fn first(&mut self, kind: Kind, run: Option<&str>) -> bool {
        let Some(run) = run else { return true };
        let k = key(kind, run);
        match self.keys.binary_search(&k) {
            Ok(_) => false,
            Err(at) => {
                self.keys.insert(at, k);
                true
            }
        }
    }

    /// Was the pattern observed in, or injected for, `run`?
    pub fn used_in(&self, run: &str) -> bool {
        self.has(Kind::PatternObserved, run) || self.has(Kind::PatternShown, run)
    }

    /// Was signal `kind` already recorded for `run`?
    pub fn has(&self, kind: Kind, run: &str) -> bool {
        self.keys.binary_search(&key(kind, run)).is_ok()
    }

    /// The whole record back from its view: a view holds every field, so
    /// events can be applied to it as to the fold's copy.
    pub fn from_view(v: &View<'_>) -> Pattern {
        Pattern {
            role: v.role.to_owned(),
            text: v.text.to_owned(),
            stats: v.stats,
            labels: v.labels.iter().map(|l| (*l).to_owned()).collect(),
            files: v.files.iter().map(|f| (*f).to_owned()).collect(),
            keys: v
                .keys
                .as_chunks::<8>()
                .0
                .iter()
                .map(|k| u64::from_le_bytes(*k))
                .collect(),
        }
    }

    /// What `pattern inject` reads of it.
    pub fn view<'a>(&'a self, id: &'a str) -> View<'a> {
        View {
            id,
            role: &self.role,
            text: &self.text,
            stats: self.stats,
            labels: self.labels.iter().map(String::as_str).collect(),
            files: self.files.iter().map(String::as_str).collect(),
            keys: self.keys.iter().flat_map(|k| k.to_le_bytes()).collect(),
        }
    }
}

/// The numbers of a pattern's record, which its state and score are computed from.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Stats {
    pub category: Option<Category>,
    /// When it was first observed, in ms since the epoch.
    pub first_seen: i64,
    /// Observations: one per run it was seen in.
    pub observations: u32,
    /// Seen in at least two runs whose contexts (labels and files) differ.
    pub distinct_contexts: bool,
    /// The context hash of the first observation.
    pub first_context: Option<u64>,
    pub validated: u32,
    pub ignored: u32,
    /// Sum of the ignores' weights.
    pub ignore_weight: f64,
    pub outcome_passes: u32,
    pub outcome_fails: u32,
    pub regressions: u32,
    /// `pattern_aged` events since the last use.
    pub aged: u32,
    /// The last observation, validation or injection with a run, in ms.
    pub last_use: i64,
    /// The latest `pattern_promoted` and `pattern_deprecated`, in ms.
    pub promoted: Option<i64>,
    pub deprecated: Option<i64>,
}

/// A pattern as `pattern inject` reads it: borrowed, so that the index's
/// copy decodes without allocating its strings (see [`crate::index::PatternViews`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct View<'a> {
    pub id: &'a str,
    pub role: &'a str,
    pub text: &'a str,
    pub stats: Stats,
    /// Sorted, as in [`Pattern`].
    #[serde(borrow)]
    pub labels: Vec<&'a str>,
    #[serde(borrow)]
    pub files: Vec<&'a str>,
    /// The pattern's (kind, run) keys, sorted, as little-endian `u64`s.
    #[serde(borrow, with = "serde_bytes")]
    pub keys: std::borrow::Cow<'a, [u8]>,
}

impl View<'_> {
    /// See [`Pattern::has`].
    pub fn has(&self, kind: Kind, run: &str) -> bool {
        let want = key(kind, run);
        let keys = self.keys.as_chunks::<8>().0;
        keys.binary_search_by(|k| u64::from_le_bytes(*k).cmp(&want))
            .is_ok()
    }

    /// See [`Pattern::used_in`].
    pub fn used_in(&self, run: &str) -> bool {
        self.has(Kind::PatternObserved, run) || self.has(Kind::PatternShown, run)
    }
}

impl Stats {
    fn used(&mut self, ts: i64) {
        if ts >= self.last_use {
            self.last_use = ts;
            self.aged = 0;
        }
    }

    /// Not deprecated by hand since the last promotion.
    fn promoted_now(&self) -> bool {
        self.promoted
            .is_some_and(|p| self.deprecated.is_none_or(|d| d < p))
    }

    /// The track record shown in an injected line: `5x validated`,
    /// `-2 net, 3x ignored`, or `None` for a pattern with neither (shown by score).
    pub fn record(&self) -> Option<String> {
        if self.ignored > 0 {
            let net = i64::from(self.validated) - i64::from(self.ignored);
            Some(format!("{net} net, {}x ignored", self.ignored))
        } else if self.validated > 0 {
            Some(format!("{}x validated", self.validated))
        } else {
            None
        }
    }
}

impl PatternFold {
    /// The ids of patterns with a record but no observation (shown or graded
    /// by id only), in id order.
    pub fn unobserved(&self) -> impl Iterator<Item = &str> {
        self.patterns
            .iter()
            .filter(|(_, p)| p.stats.observations == 0)
            .map(|(id, _)| id.as_str())
    }

    /// The near-duplicate aliases, alias → pattern, in alias order.
    pub fn alias_pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.aliases.iter().map(|(a, p)| (a.as_str(), p.as_str()))
    }

    /// The pattern an id names, through an alias if it joined another.
    pub fn resolve<'a>(&'a self, id: &str) -> Option<(&'a str, &'a Pattern)> {
        let id = self.aliases.get(id).map_or(id, String::as_str);
        self.patterns
            .get_key_value(id)
            .map(|(k, v)| (k.as_str(), v))
    }

    /// Applies one pattern event of kind `kind` at `ts` (events come in (ts, id) order).
    // Each arm marks its (kind, run) key first: a guard would hide that side effect.
    #[allow(clippy::collapsible_match)]
    pub fn apply(&mut self, kind: Kind, ts: i64, e: &PatternEvent) {
        self.events += 1;
        let run = e.run.as_deref();
        if kind == Kind::Outcome {
            let (Some(run), Some(result)) = (run, e.result.as_deref()) else {
                return;
            };
            if self.outcomes.contains_key(run) {
                return;
            }
            let pass = result == "pass";
            self.outcomes.insert(run.to_owned(), (pass, ts));
            for id in &e.patterns {
                let p = self.patterns.entry(id.clone()).or_default();
                if p.first(kind, Some(run)) {
                    if pass {
                        p.stats.outcome_passes += 1;
                    } else {
                        p.stats.outcome_fails += 1;
                    }
                }
            }
            return;
        }
        if kind == Kind::PatternObserved
            && let (Some(alias), Some(id)) = (&e.alias, &e.pattern)
            && alias != id
        {
            self.aliases
                .entry(alias.clone())
                .or_insert_with(|| id.clone());
        }
        for id in e.ids() {
            let p = self.patterns.entry(id.clone()).or_default();
            match kind {
                Kind::PatternObserved => {
                    if !p.first(kind, run) {
                        continue;
                    }
                    if p.text.is_empty() {
                        p.text = e.text.clone().unwrap_or_default();
                        p.role = e.role.clone().unwrap_or_default();
                        p.stats.category = e.category;
                        p.stats.first_seen = ts;
                    }
                    p.stats.observations += 1;
                    let ctx = context_hash(&e.labels, &e.files);
                    match p.stats.first_context {
                        None => p.stats.first_context = Some(ctx),
                        Some(first) if first != ctx => p.stats.distinct_contexts = true,
                        Some(_) => {}
                    }
                    merge_into(&mut p.labels, &e.labels);
                    merge_into(&mut p.files, &e.files);
                    p.stats.used(ts);
                }
                Kind::PatternValidated => {
                    if p.first(kind, run) {
                        p.stats.validated += 1;
                        p.stats.used(ts);
                    }
                }
                Kind::PatternIgnored => {
                    if p.first(kind, run) {
                        p.stats.ignored += 1;
                        p.stats.ignore_weight += e.weight.unwrap_or(1.0).clamp(0.0, 100.0);
                        if e.regression {
                            p.stats.regressions += 1;
                        }
                    }
                }
                Kind::PatternAged => {
                    if p.first(kind, run) && ts >= p.stats.last_use {
                        p.stats.aged += 1;
                    }
                }
                Kind::PatternShown => {
                    if run.is_some() && p.first(kind, run) {
                        p.stats.used(ts);
                    }
                }
                Kind::PatternPromoted => p.stats.promoted = Some(ts),
                Kind::PatternDeprecated => p.stats.deprecated = Some(ts),
                _ => {}
            }
        }
    }

    /// Patterns that have been observed (a pattern only validated or
    /// ignored on one branch has no text until its observation merges).
    pub fn observed(&self) -> impl Iterator<Item = (&String, &Pattern)> {
        self.patterns
            .iter()
            .filter(|(_, p)| p.stats.observations > 0)
    }
}

/// A pattern's lifecycle state at `now_ms`.
pub fn state(p: &Stats, cfg: &PatternsConfig, now_ms: i64) -> State {
    if p.deprecated
        .is_some_and(|d| p.promoted.is_none_or(|pr| pr < d))
    {
        return State::Deprecated;
    }
    if p.promoted_now() {
        return State::Active;
    }
    if age_days(p, cfg, now_ms) > cfg.deprecate_after_days {
        return State::Deprecated;
    }
    if p.observations >= 2 && p.distinct_contexts {
        State::Verified
    } else if p.observations >= 2 {
        State::Candidate
    } else {
        State::Observed
    }
}

fn age_days(p: &Stats, cfg: &PatternsConfig, now_ms: i64) -> f64 {
    let since = (now_ms - p.last_use).max(0) as f64 / DAY_MS;
    since + f64::from(p.aged) * cfg.age_step_days
}

/// Does `file` match one the pattern was seen with: the same path, or a file in the same folder?
fn file_overlaps<S: AsRef<str>>(seen: &[S], file: &str) -> bool {
    fn dir(f: &str) -> &str {
        f.rsplit_once('/').map_or("", |(d, _)| d)
    }
    let folder = dir(file);
    // An empty path (recorded before lists were cleaned) is no file at all.
    seen.iter()
        .filter(|s| !s.as_ref().is_empty())
        .any(|s| s.as_ref() == file || dir(s.as_ref()) == folder)
}

/// A pattern's score at `now_ms` for a query with these labels and files.
pub fn score(
    p: &Pattern,
    cfg: &PatternsConfig,
    now_ms: i64,
    labels: &[String],
    files: &[String],
) -> Score {
    score_of(&p.stats, &p.labels, &p.files, cfg, now_ms, labels, files)
}

/// [`score`] from a pattern's [`Stats`] and the labels and files it was seen with (sorted).
pub fn score_of<S: AsRef<str>>(
    p: &Stats,
    seen_labels: &[S],
    seen_files: &[S],
    cfg: &PatternsConfig,
    now_ms: i64,
    labels: &[String],
    files: &[String],
) -> Score {
    let success = f64::from(p.validated) + cfg.outcome_weight * f64::from(p.outcome_passes);
    let ignores = p.ignore_weight + cfg.outcome_weight * f64::from(p.outcome_fails);
    let success_rate = if success + ignores > 0.0 {
        success / (success + ignores)
    } else {
        cfg.new_rate
    };
    let age_days = age_days(p, cfg, now_ms);
    let decay = if p.validated >= cfg.immune_after {
        1.0
    } else {
        libm::exp(-age_days / cfg.decay_days)
    };
    let category = match p.category {
        Some(Category::Rule) => cfg.rule_weight,
        Some(Category::Causal) => cfg.causal_weight,
        _ => 1.0,
    };
    let asked = labels.len() + files.len();
    let context = if asked == 0 {
        1.0
    } else {
        let hits = labels
            .iter()
            .filter(|l| {
                seen_labels
                    .binary_search_by(|s| s.as_ref().cmp(l.as_str()))
                    .is_ok()
            })
            .count()
            + files
                .iter()
                .filter(|f| file_overlaps(seen_files, f))
                .count();
        1.0 + cfg.context_boost * hits as f64 / asked as f64
    };
    Score {
        success_rate,
        age_days,
        decay,
        category,
        context,
        total: success_rate * decay * category * context,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_800_000_000_000;

    fn observed(text: &str, run: &str, labels: &[&str], files: &[&str]) -> PatternEvent {
        PatternEvent {
            pattern: Some("p1".into()),
            role: Some("auditor".into()),
            text: Some(text.into()),
            category: Some(Category::Rule),
            run: Some(run.into()),
            labels: labels.iter().map(|s| s.to_string()).collect(),
            files: files.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    fn observe(
        f: &mut PatternFold,
        ts: i64,
        text: &str,
        run: &str,
        labels: &[&str],
        files: &[&str],
    ) {
        f.apply(
            Kind::PatternObserved,
            ts,
            &observed(text, run, labels, files),
        );
    }

    /// The index patches views with new events by rebuilding each record
    /// from its view: every field must survive the trip.
    #[test]
    fn a_view_holds_the_whole_record() {
        let mut f = PatternFold::default();
        observe(&mut f, T0, "t", "r1", &["a"], &["x.rs"]);
        observe(&mut f, T0 + 1, "t", "r2", &["b"], &[]);
        f.apply(Kind::PatternValidated, T0 + 2, &on("r2"));
        let regression = PatternEvent {
            regression: true,
            ..on("r3")
        };
        f.apply(Kind::PatternIgnored, T0 + 3, &regression);
        f.apply(Kind::PatternAged, T0 + 4, &on("r4"));
        f.apply(Kind::PatternPromoted, T0 + 5, &on("r5"));
        f.apply(Kind::PatternDeprecated, T0 + 6, &on("r6"));
        let outcome = PatternEvent {
            patterns: vec!["p1".into()],
            run: Some("r2".into()),
            result: Some("pass".into()),
            ..Default::default()
        };
        f.apply(Kind::Outcome, T0 + 7, &outcome);
        let p = &f.patterns["p1"];
        assert!(
            p.stats.regressions == 1 && p.stats.distinct_contexts && p.stats.outcome_passes == 1
        );
        assert_eq!(&Pattern::from_view(&p.view("p1")), p);
    }

    /// A signal about p1 in `run` (an ignore weighs 1.5).
    fn on(run: &str) -> PatternEvent {
        PatternEvent {
            pattern: Some("p1".into()),
            run: Some(run.into()),
            weight: Some(1.5),
            ..Default::default()
        }
    }

    fn cfg() -> PatternsConfig {
        PatternsConfig::default()
    }

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-9, "{a} != {b}");
    }

    #[test]
    fn decay_is_exp_of_days_over_fourteen_until_three_validations() {
        let mut f = PatternFold::default();
        observe(&mut f, T0, "always check x", "r1", &[], &[]);
        let p = &f.patterns["p1"];
        let c = cfg();
        // The score `days` days after T0.
        let at = |p: &Pattern, days: i64| score(p, &c, T0 + days * 86_400_000, &[], &[]);
        // New: rate 0.5, rule 1.3.
        close(at(p, 0).total, 0.5 * 1.3);
        close(at(p, 14).decay, (-1f64).exp());
        close(at(p, 28).decay, (-2f64).exp());
        for run in ["r1", "r2"] {
            f.apply(Kind::PatternValidated, T0, &on(run));
        }
        close(at(&f.patterns["p1"], 28).decay, (-2f64).exp());
        f.apply(Kind::PatternValidated, T0, &on("r3"));
        let p = &f.patterns["p1"];
        assert_eq!(p.stats.validated, 3);
        close(at(p, 28).decay, 1.0);
        close(at(p, 28).total, 1.0 * 1.3);
    }

    #[test]
    fn ignores_are_weighted_and_deduplicated_per_run() {
        let mut f = PatternFold::default();
        observe(&mut f, T0, "x causes y here", "r1", &[], &[]);
        f.apply(Kind::PatternValidated, T0, &on("r1"));
        f.apply(Kind::PatternIgnored, T0, &on("r2"));
        f.apply(Kind::PatternIgnored, T0, &on("r2"));
        let p = &f.patterns["p1"];
        assert_eq!((p.stats.validated, p.stats.ignored), (1, 1));
        close(score(p, &cfg(), T0, &[], &[]).success_rate, 1.0 / 2.5);
        assert_eq!(p.stats.record().as_deref(), Some("0 net, 1x ignored"));
    }

    #[test]
    fn context_boost_is_the_share_of_the_query_seen() {
        let mut f = PatternFold::default();
        observe(
            &mut f,
            T0,
            "never do x in y",
            "r1",
            &["security"],
            &["src/a.rs"],
        );
        let p = &f.patterns["p1"];
        let s = score(
            p,
            &cfg(),
            T0,
            &["security".into(), "perf".into()],
            &["src/b.rs".into(), "docs/x.md".into()],
        );
        // security and src/ (same folder) of four.
        close(s.context, 1.0 + 0.2 * 2.0 / 4.0);
    }

    #[test]
    fn lifecycle_moves_from_observed_to_verified_and_needs_a_human_to_activate() {
        let c = cfg();
        let mut f = PatternFold::default();
        observe(&mut f, T0, "must do x", "r1", &["a"], &[]);
        assert_eq!(state(&f.patterns["p1"].stats, &c, T0), State::Observed);
        // The same run again is not a second sighting.
        observe(&mut f, T0 + 1, "must do x", "r1", &["a"], &[]);
        assert_eq!(state(&f.patterns["p1"].stats, &c, T0), State::Observed);
        observe(&mut f, T0 + 2, "must do x", "r2", &["a"], &[]);
        assert_eq!(state(&f.patterns["p1"].stats, &c, T0), State::Candidate);
        observe(&mut f, T0 + 3, "must do x", "r3", &["b"], &[]);
        assert_eq!(state(&f.patterns["p1"].stats, &c, T0), State::Verified);
        f.apply(Kind::PatternPromoted, T0 + 4, &on("-"));
        assert_eq!(
            state(&f.patterns["p1"].stats, &c, T0 + 400 * 86_400_000),
            State::Active
        );
        f.apply(Kind::PatternDeprecated, T0 + 5, &on("-"));
        assert_eq!(state(&f.patterns["p1"].stats, &c, T0), State::Deprecated);
    }

    #[test]
    fn unused_patterns_age_out() {
        let c = cfg();
        let mut f = PatternFold::default();
        observe(&mut f, T0, "must do x", "r1", &[], &[]);
        let p = &f.patterns["p1"];
        assert_eq!(state(&p.stats, &c, T0 + 90 * 86_400_000), State::Observed);
        assert_eq!(state(&p.stats, &c, T0 + 91 * 86_400_000), State::Deprecated);
        // Each aged step adds seven days.
        f.apply(Kind::PatternAged, T0 + 1, &on("r9"));
        let p = &f.patterns["p1"];
        close(score(p, &c, T0, &[], &[]).age_days, 7.0);
    }

    #[test]
    fn two_branches_merge_to_the_sum_of_their_records() {
        let a = [
            (
                Kind::PatternObserved,
                T0,
                observed("must do x", "ra", &["a"], &[]),
            ),
            (Kind::PatternValidated, T0 + 1, on("ra")),
        ];
        let b = [
            (
                Kind::PatternObserved,
                T0 + 2,
                observed("must do x", "rb", &["b"], &[]),
            ),
            (Kind::PatternValidated, T0 + 3, on("rb")),
        ];
        let mut f = PatternFold::default();
        for (k, ts, e) in a.iter().chain(&b) {
            f.apply(*k, *ts, e);
        }
        let p = &f.patterns["p1"];
        assert_eq!((p.stats.observations, p.stats.validated), (2, 2));
        assert_eq!(state(&p.stats, &cfg(), T0), State::Verified);
    }
}
