//! `.swarm/config.toml`: project settings. Every key has a default, so an
//! empty file (or none) is a valid configuration.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::problem::Problem;

/// Project settings.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
#[schemars(title = "git-swarm config")]
pub struct Config {
    pub events: EventsConfig,
    pub runner: RunnerConfig,
    pub knowledge: KnowledgeConfig,
    pub retrieval: RetrievalConfig,
    pub patterns: PatternsConfig,
    pub handoffs: HandoffsConfig,
    /// The tools each agent role is expected to use: `inject --role R`
    /// without `--tools` shows R the directives scoped to these tools.
    /// A role named here replaces its default; others keep theirs.
    #[schemars(extend("default" = default_role_tools()))]
    pub roles: std::collections::BTreeMap<String, Vec<String>>,
    /// Harness agent types and the role each maps to, e.g.
    /// `"general-purpose" = "coder"`: they extend or override the built-in
    /// table (docs/agents.md), by which a harness's own subagents get the
    /// directives of a git-swarm role.
    pub agent_types: std::collections::BTreeMap<String, String>,
    /// The hives this project subscribes to (`[[hive]]`, docs/hive.md):
    /// each a git repository of directives, read at its pinned revision.
    #[schemars(length(max = 16))]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hive: Vec<HiveSubscription>,
    /// In a hive's own config: what a directive promoted into it must show.
    #[serde(skip_serializing_if = "PromotionConfig::is_default")]
    pub promotion: PromotionConfig,
}

/// A hive this project takes directives from, at one revision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HiveSubscription {
    /// Its name here: `hive:<name>/<id>` names its directives.
    #[schemars(pattern(r"^[a-z0-9][a-z0-9_-]{0,39}$"))]
    pub name: String,
    /// Where it is fetched from: a URL git understands, or a path.
    #[schemars(length(min = 1, max = 1000))]
    pub url: String,
    /// The commit whose directives this project uses (40 hex digits):
    /// moved only by a commit, `git swarm hive update`.
    #[schemars(pattern(r"^[0-9a-f]{40}$"))]
    pub rev: String,
    /// Hive directives this project switched off, each with the reason
    /// (`git swarm hive off`).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub off: std::collections::BTreeMap<String, String>,
}

impl HiveSubscription {
    /// The most hives a project subscribes to.
    pub const MAX: usize = 16;
    /// The most directives a project switches off in one hive.
    pub const OFF_MAX: usize = 1000;
}

/// Whether `name` can name a hive.
pub fn is_valid_hive_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 40
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_' || *c == b'-')
}

/// A hive's quality bar for `git swarm hive promote` (read from the hive's
/// own config.toml).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PromotionConfig {
    /// The least delegations in which a directive was acknowledged as
    /// applied in its project.
    #[schemars(range(min = 0, max = 1000000))]
    pub min_applied: u32,
    /// The most violations recorded against it in its project.
    #[schemars(range(min = 0, max = 1000000))]
    pub max_violations: u32,
}

impl PromotionConfig {
    fn is_default(&self) -> bool {
        *self == PromotionConfig::default()
    }
}

impl Default for PromotionConfig {
    fn default() -> Self {
        PromotionConfig {
            min_applied: 2,
            max_violations: 1000000,
        }
    }
}

/// The expected tools of the roles a delegating agent commonly uses.
pub fn default_role_tools() -> std::collections::BTreeMap<String, Vec<String>> {
    [
        ("coder", &["edit", "write", "bash"][..]),
        ("test_engineer", &["bash", "edit", "write"]),
        ("reviewer", &["read", "grep"]),
        ("critic", &["read", "grep"]),
        ("sme", &["read"]),
        ("docs", &["edit", "write"]),
        ("designer", &["edit", "write"]),
        ("curator", &["read", "write"]),
    ]
    .into_iter()
    .map(|(role, tools)| {
        (
            role.to_owned(),
            tools.iter().map(|t| (*t).to_owned()).collect(),
        )
    })
    .collect()
}

impl Config {
    /// A role's expected tools: the config's entry, else the default.
    pub fn role_tools(&self, role: &str) -> Vec<String> {
        self.roles
            .get(role)
            .cloned()
            .or_else(|| default_role_tools().remove(role))
            .unwrap_or_default()
    }
}

/// The pattern learning loop: scores, lifecycle, injection budgets and
/// feedback weights (docs/patterns.md has every formula).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PatternsConfig {
    /// Days for the time decay `exp(-days since last use / decay_days)`.
    #[schemars(range(min = 0.1, max = 3650.0))]
    pub decay_days: f64,
    /// A pattern validated this many times no longer decays.
    #[schemars(range(min = 1, max = 1000))]
    pub immune_after: u32,
    /// Score factor of `rule` patterns (must, never, always…).
    #[schemars(range(min = 0.0, max = 10.0))]
    pub rule_weight: f64,
    /// Score factor of `causal` patterns (because, leads to…).
    #[schemars(range(min = 0.0, max = 10.0))]
    pub causal_weight: f64,
    /// Score factor `1 + context_boost × share of the query's labels and files the pattern was seen with`.
    #[schemars(range(min = 0.0, max = 10.0))]
    pub context_boost: f64,
    /// Success rate of a pattern with no validation and no ignore yet.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub new_rate: f64,
    /// Patterns scoring below this are not injected.
    #[schemars(range(min = 0.0, max = 10.0))]
    pub min_score: f64,
    /// Roles whose deliberations challenge others' work: their block gets `adversarial_budget`.
    pub adversarial_roles: Vec<String>,
    /// Token budget of the patterns block for an adversarial role.
    #[schemars(range(min = 1, max = 100000))]
    pub adversarial_budget: usize,
    /// Token budget of the patterns block for any other role.
    #[schemars(range(min = 1, max = 100000))]
    pub budget: usize,
    /// With `--remaining N`, the block gets at most half of N tokens, and is
    /// skipped when that is fewer than this.
    #[schemars(range(min = 1, max = 100000))]
    pub min_budget: usize,
    /// Weight of an ignore (a validator's false positive), by the adversarial role that raised it.
    pub ignore_weights: std::collections::BTreeMap<String, f64>,
    /// Weight of an ignore for a role not in `ignore_weights`.
    #[schemars(range(min = 0.0, max = 100.0))]
    pub default_ignore_weight: f64,
    /// An observation joins an existing pattern of its role when their token Jaccard index is at least this.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub near_duplicate: f64,
    /// A false positive that is not a substring of a finding matches the finding with the
    /// highest token Jaccard index, if it is at least this.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub finding_match: f64,
    /// On a grounded PASS, at most this many of the run's patterns are validated (file-relevant first).
    #[schemars(range(min = 1, max = 1000))]
    pub reinforce_top: usize,
    /// Each `pattern_aged` adds this many days to a pattern's age.
    #[schemars(range(min = 0.0, max = 3650.0))]
    pub age_step_days: f64,
    /// A pattern unused (and unpromoted) this many days is deprecated.
    #[schemars(range(min = 1.0, max = 36500.0))]
    pub deprecate_after_days: f64,
    /// What `pattern outcome` adds to each graded pattern's validations (pass) or ignores (fail).
    #[schemars(range(min = 0.0, max = 100.0))]
    pub outcome_weight: f64,
}

impl Default for PatternsConfig {
    fn default() -> Self {
        PatternsConfig {
            decay_days: 14.0,
            immune_after: 3,
            rule_weight: 1.3,
            causal_weight: 1.1,
            context_boost: 0.2,
            new_rate: 0.5,
            min_score: 0.1,
            adversarial_roles: ["auditor", "judge", "sentinel"].map(String::from).to_vec(),
            adversarial_budget: 800,
            budget: 500,
            min_budget: 100,
            ignore_weights: [("sentinel", 1.5), ("inspector", 1.5)]
                .into_iter()
                .map(|(r, w)| (r.to_owned(), w))
                .collect(),
            default_ignore_weight: 1.0,
            near_duplicate: 0.8,
            finding_match: 0.5,
            reinforce_top: 3,
            age_step_days: 7.0,
            deprecate_after_days: 90.0,
            outcome_weight: 0.5,
        }
    }
}

impl PatternsConfig {
    /// The weight of an ignore of a pattern raised by `role`.
    pub fn ignore_weight(&self, role: &str) -> f64 {
        self.ignore_weights
            .get(role)
            .copied()
            .unwrap_or(self.default_ignore_weight)
    }

    /// The token budget of `role`'s patterns block.
    pub fn budget_for(&self, role: &str) -> usize {
        if self.adversarial_roles.iter().any(|r| r == role) {
            self.adversarial_budget
        } else {
            self.budget
        }
    }
}

/// What `inject` shows a delegate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct KnowledgeConfig {
    /// Most directives in one delegation's block (critical ones count too).
    #[schemars(range(min = 1, max = 100))]
    pub delegate_max_inject_count: usize,
    /// Most characters of directives in one block (the contract not counted).
    #[schemars(range(min = 200, max = 100000))]
    pub inject_char_budget: usize,
    /// Most lessons added at one tool call (guards refuse whatever the count).
    #[schemars(range(min = 1, max = 20))]
    pub tool_call_max_count: usize,
    /// Most bytes of lessons added at one tool call.
    #[schemars(range(min = 256, max = 16384))]
    pub tool_call_byte_budget: usize,
}

impl Default for KnowledgeConfig {
    fn default() -> Self {
        KnowledgeConfig {
            delegate_max_inject_count: 8,
            inject_char_budget: 6000,
            tool_call_max_count: 3,
            tool_call_byte_budget: 4096,
        }
    }
}

/// How directives are ranked for a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RetrievalConfig {
    /// MMR's trade-off: 1 ranks by relevance alone, 0 by diversity alone.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub mmr_lambda: f64,
}

impl Default for RetrievalConfig {
    fn default() -> Self {
        RetrievalConfig { mmr_lambda: 0.5 }
    }
}

/// How handoffs are reviewed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct HandoffsConfig {
    /// `needs_changes` reviews after which a handoff is `blocked` and goes
    /// back to its coordinator rather than round again.
    #[schemars(range(min = 1, max = 100))]
    pub max_review_attempts: u32,
}

impl Default for HandoffsConfig {
    fn default() -> Self {
        HandoffsConfig {
            max_review_attempts: 3,
        }
    }
}

/// How the event log is written and read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct EventsConfig {
    /// `never` (default): leave flushing to the OS, like git's default for
    /// loose objects; `always`: fsync after every appended event.
    pub fsync: FsyncPolicy,
    /// How long an append waits for the log's lock before it fails, in
    /// milliseconds. It retries until then; it never drops the event.
    #[schemars(range(min = 1, max = 600000))]
    pub lock_timeout_ms: u64,
    /// Longest event line accepted, in bytes. Longer lines are skipped and reported.
    #[schemars(range(min = 1024, max = 16777216))]
    pub max_line_bytes: u64,
    /// Largest event file read or appended to, in bytes. A larger file is
    /// skipped and reported, never read; an append to it is refused.
    #[schemars(range(min = 1024, max = 68719476736_u64))]
    pub max_file_bytes: u64,
}

impl Default for EventsConfig {
    fn default() -> Self {
        EventsConfig {
            fsync: FsyncPolicy::Never,
            lock_timeout_ms: 10_000,
            max_line_bytes: 64 * 1024,
            max_file_bytes: 256 * 1024 * 1024,
        }
    }
}

/// How `tool:` predicates run. Which programs may run is not set here: it
/// is the user's git config `swarm.allowTool`, never the repository's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RunnerConfig {
    /// Seconds a tool may run before its whole process group is killed
    /// (the predicate then fails as an error).
    #[schemars(range(min = 1, max = 600))]
    pub timeout_secs: u64,
}

impl Default for RunnerConfig {
    fn default() -> Self {
        RunnerConfig { timeout_secs: 15 }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FsyncPolicy {
    Never,
    Always,
}

impl Config {
    /// Parses `config.toml`. On error the default configuration comes back
    /// with the problem, so a broken config never stops a hook.
    pub fn parse(text: &str, path: &str) -> (Config, Vec<Problem>) {
        let root = match DeTable::parse(text) {
            Ok(root) => root,
            Err(e) => {
                let offset = e.span().map_or(0, |s| s.start);
                let problem = Problem::error(
                    path,
                    "config",
                    format!("config: {}", readable(e.message().trim())),
                )
                .at_offset(text, offset)
                .with_hint(CONFIG_HINT);
                return (Config::default(), vec![problem]);
            }
        };
        let span = root.span();
        let mut table = root.into_inner();
        let mut problems = shape_problems(&mut table, text, path);
        match deserialize(span, table) {
            Ok(c) => {
                let found = range_problems(&c, text, path);
                if problems.is_empty() && found.is_empty() {
                    return (c, found);
                }
                problems.extend(found);
            }
            Err(_) => {
                // Every bad key, not only the first serde meets: parsed
                // again, only when something is wrong.
                if let Ok(root) = DeTable::parse(text) {
                    let mut table = root.into_inner();
                    shape_problems(&mut table, text, path);
                    problems.extend(key_problems(table, text, path));
                }
            }
        }
        problems.sort_by_key(|p| (p.line, p.column));
        if problems.len() > MAX_PROBLEMS {
            problems.truncate(MAX_PROBLEMS);
            let mut more = Problem::error(
                path,
                "config",
                format!("config: more problems after this one are not listed (the first {MAX_PROBLEMS} are)"),
            )
            .with_hint("fix the ones above first");
            more.line = problems.last().and_then(|p| p.line);
            more.column = problems.last().and_then(|p| p.column);
            problems.push(more);
        }
        (Config::default(), problems)
    }
}

use toml::de::{DeTable, DeValue};

/// Most problems of config.toml reported at once.
const MAX_PROBLEMS: usize = 50;

const CONFIG_HINT: &str =
    "see docs/formats.md for every key and its default; the defaults are used until this is fixed";

/// The sections that are tables of settings.
const SECTIONS: [&str; 7] = [
    "events",
    "runner",
    "knowledge",
    "retrieval",
    "patterns",
    "handoffs",
    "promotion",
];

fn deserialize(
    span: std::ops::Range<usize>,
    table: DeTable<'_>,
) -> Result<Config, toml::de::Error> {
    use serde::Deserialize;
    Config::deserialize(toml::de::Deserializer::from(toml::Spanned::new(
        span, table,
    )))
}

/// A section given as something else than a table: serde would read an
/// array as the section's fields in order (`events = []` was accepted).
/// Reported, and taken out of `table`.
fn shape_problems(table: &mut DeTable<'_>, text: &str, path: &str) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut bad = std::collections::HashSet::new();
    for (key, value) in table.iter() {
        let name: &str = key.get_ref();
        if !SECTIONS.contains(&name) || matches!(value.get_ref(), DeValue::Table(_)) {
            continue;
        }
        problems.push(
            Problem::error(
                path,
                "config",
                format!("config: `{name}`: expected a table of settings (`[{name}]`)"),
            )
            .at_offset(text, value.span().start)
            .with_hint(CONFIG_HINT),
        );
        bad.insert(name.to_owned());
    }
    if !bad.is_empty() {
        *table = without(table, &bad);
    }
    problems
}

/// `table` without the keys in `drop`.
fn without<'i>(table: &DeTable<'i>, drop: &std::collections::HashSet<String>) -> DeTable<'i> {
    let mut out = DeTable::new();
    for (k, v) in table.iter() {
        let name: &str = k.get_ref();
        if !drop.contains(name) {
            out.insert(k.clone(), v.clone());
        }
    }
    out
}

/// Every key with a `range` in the schema, and each ignore weight (0 to
/// 100). Counts are compared as f64: exact at these sizes, and `1000.0`
/// displays as `1000`; a NaN or infinite value (null in JSON) is out of range.
fn range_problems(c: &Config, text: &str, path: &str) -> Vec<Problem> {
    let schema = schemars::schema_for!(Config).to_value();
    let values = serde_json::to_value(c).unwrap_or_default();
    let number = |v: &serde_json::Value| v.as_f64().unwrap_or(f64::NAN);
    let mut ranges = Vec::new();
    for section in SECTIONS {
        let def = schema["properties"][section]["$ref"]
            .as_str()
            .unwrap_or_default();
        let def = &schema["$defs"][def.rsplit('/').next().unwrap_or_default()];
        // A section left out when at its defaults (`promotion`).
        if values[section].is_null() {
            continue;
        }
        for (name, field) in def["properties"].as_object().into_iter().flatten() {
            if let (Some(lo), Some(hi)) = (field["minimum"].as_f64(), field["maximum"].as_f64()) {
                let key = format!("{section}.{name}");
                ranges.push((key, number(&values[section][name]), lo, hi));
            }
        }
    }
    for w in c.patterns.ignore_weights.values() {
        ranges.push(("patterns.ignore_weights".into(), *w, 0.0, 100.0));
    }
    let mut problems: Vec<Problem> = ranges
        .into_iter()
        .filter(|&(_, v, lo, hi)| !(lo..=hi).contains(&v))
        .map(|(key, _, lo, hi)| range_problem(text, path, &key, &format!("{lo} and {hi}")))
        .collect();
    // An agent type mapped to something no directive could be scoped to.
    for (agent_type, role) in &c.agent_types {
        if !crate::directive::is_valid_scope_name(role) {
            let offset = DeTable::parse(text)
                .ok()
                .and_then(|root| match root.get_ref().get("agent_types")?.get_ref() {
                    DeValue::Table(inner) => inner.get(agent_type.as_str()).map(|v| v.span().start),
                    _ => None,
                })
                .unwrap_or(0);
            problems.push(
                Problem::error(
                    path,
                    "config",
                    format!("`agent_types.{agent_type}`: `{role}` is not a role name"),
                )
                .at_offset(text, offset)
                .with_hint("a role is lowercase letters, digits and `_`, starting with a letter (as in applies_to_agents), e.g. `coder`"),
            );
        }
    }
    problems.extend(hive_problems(c, text, path));
    problems
}

/// Each subscription names a hive once, by a valid name, at a pinned
/// commit: an unpinned hive would let whatever its remote holds today
/// reach the agents.
fn hive_problems(c: &Config, text: &str, path: &str) -> Vec<Problem> {
    let mut problems = Vec::new();
    if c.hive.is_empty() {
        return problems;
    }
    // Parsed for the places only once a problem needs one, and then once:
    // every hook reads this file, and a file of many bad entries must not
    // cost a parse each.
    let root = std::cell::OnceCell::new();
    let at = |i: usize, key: &str| -> usize {
        root.get_or_init(|| DeTable::parse(text).ok())
            .as_ref()
            .and_then(|root| match root.get_ref().get("hive")?.get_ref() {
                DeValue::Array(items) => match items.get(i)?.get_ref() {
                    DeValue::Table(t) => Some(
                        t.get(key)
                            .map_or(items.get(i)?.span().start, |v| v.span().start),
                    ),
                    _ => None,
                },
                _ => None,
            })
            .unwrap_or(0)
    };
    if c.hive.len() > HiveSubscription::MAX {
        problems.push(
            Problem::error(
                path,
                "config",
                format!("`hive`: more than {} hives", HiveSubscription::MAX),
            )
            .at_offset(text, at(HiveSubscription::MAX, "name"))
            .with_hint("a project takes at most 16 hives: merge hives, or unsubscribe (`git swarm hive remove`)"),
        );
    }
    let mut seen = std::collections::HashSet::new();
    for (i, h) in c.hive.iter().enumerate().take(HiveSubscription::MAX + 1) {
        let mut bad = |key: &str, what: String, hint: &str| {
            problems.push(
                Problem::error(path, "config", format!("`hive[{i}].{key}`: {what}"))
                    .at_offset(text, at(i, key))
                    .with_hint(hint),
            );
        };
        if !is_valid_hive_name(&h.name) {
            bad(
                "name",
                format!("`{}` is not a hive name", h.name.escape_debug()),
                "a hive's name is lowercase letters, digits, `-` and `_`, at most 40, e.g. `team`",
            );
        } else if !seen.insert(h.name.as_str()) {
            bad(
                "name",
                format!("a second hive named `{}`", h.name),
                "name each hive once (`git swarm hive list`)",
            );
        }
        if h.rev.len() != 40
            || !h
                .rev
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            bad(
                "rev",
                format!(
                    "`{}` is not a pinned commit (40 lowercase hex digits)",
                    h.rev.escape_debug()
                ),
                "an unpinned hive is refused: `git swarm hive update` pins it to a commit",
            );
        }
        if let Some(why) = url_problem(&h.url) {
            bad(
                "url",
                why,
                "`git swarm hive add URL` writes it: a URL git fetches over file, git, http(s) or ssh, or an absolute path",
            );
        }
        if h.off.len() > HiveSubscription::OFF_MAX {
            bad(
                "off",
                format!(
                    "more than {} directives switched off",
                    HiveSubscription::OFF_MAX
                ),
                "unsubscribe (`git swarm hive remove`) rather than switch most of a hive off",
            );
            continue;
        }
        if let Some(id) = h.off.keys().find(|id| !crate::directive::is_valid_id(id)) {
            bad(
                "off",
                format!("`{}` is not a directive id", id.escape_debug()),
                "`git swarm hive off NAME/ID --reason ...` writes it",
            );
        }
    }
    problems
}

/// What is wrong with a hive's `url`, if anything. A pull request writes
/// it: no control character, no remote helper (`ext::` runs a command),
/// and a local hive is named by its absolute path, never one relative to
/// the work tree a pull request fills.
pub fn url_problem(url: &str) -> Option<String> {
    if url.is_empty() || url.len() > 1000 {
        return Some("empty, or longer than 1,000 bytes".into());
    }
    if url.chars().any(char::is_control) {
        return Some("holds a control character".into());
    }
    if url.starts_with('-') {
        return Some(format!("`{}` starts with `-`", url.escape_debug()));
    }
    if url.contains("::") {
        return Some(format!(
            "`{}` names a git remote helper (`::`), which can run any command",
            url.escape_debug()
        ));
    }
    let scheme = url.split_once("://").map(|(s, _)| s);
    let scp = scheme.is_none() && url.find(':').is_some_and(|c| !url[..c].contains('/'));
    match scheme {
        Some("file" | "git" | "http" | "https" | "ssh") => None,
        Some(other) => Some(format!(
            "`{}`: git-swarm fetches hives over file, git, http(s) or ssh, not `{other}`",
            url.escape_debug()
        )),
        None if scp => None,
        None if url.starts_with('/') => None,
        None => Some(format!(
            "`{}` is a relative path: a local hive is named by its absolute path",
            url.escape_debug()
        )),
    }
}

/// For a config.toml that is valid TOML but not a valid configuration: one
/// problem per bad key, found by trying each key alone (serde points at its
/// value), then the range checks of what is left once they are taken out.
fn key_problems(mut table: DeTable<'_>, text: &str, path: &str) -> Vec<Problem> {
    let mut problems = Vec::new();
    let problem = |name: &str, e: &toml::de::Error, fallback: usize| {
        let offset = e.span().map_or(fallback, |s| s.start);
        Problem::error(
            path,
            "config",
            format!("config: `{name}`: {}", readable(e.message().trim())),
        )
        .at_offset(text, offset)
        .with_hint(CONFIG_HINT)
    };
    let mut bad_sections = std::collections::HashSet::new();
    for (section, value) in table.iter_mut() {
        if problems.len() > MAX_PROBLEMS {
            break;
        }
        let Err(whole_err) = fits(text, one(section, value)) else {
            continue;
        };
        let name: &str = section.get_ref();
        let empty = toml::Spanned::new(value.span(), DeValue::Table(DeTable::new()));
        let known = fits(text, one(section, &empty)).is_ok();
        let inner = match value.get_mut() {
            DeValue::Table(inner) if known => inner,
            _ => {
                problems.push(problem(name, &whole_err, section.span().start));
                bad_sections.insert(name.to_owned());
                continue;
            }
        };
        let mut bad = std::collections::HashSet::new();
        for (key, v) in inner.iter() {
            if problems.len() > MAX_PROBLEMS {
                break;
            }
            let wrapped = toml::Spanned::new(v.span(), DeValue::Table(one(key, v)));
            if let Err(e) = fits(text, one(section, &wrapped)) {
                let key: &str = key.get_ref();
                problems.push(problem(&format!("{name}.{key}"), &e, 0));
                bad.insert(key.to_owned());
            }
        }
        if bad.is_empty() {
            problems.push(problem(name, &whole_err, section.span().start));
            bad_sections.insert(name.to_owned());
        } else {
            *inner = without(inner, &bad);
        }
    }
    let table = without(&table, &bad_sections);
    if let Ok(rest) = fits(text, table) {
        problems.extend(range_problems(&rest, text, path));
    }
    problems
}

fn fits(text: &str, table: DeTable<'_>) -> Result<Config, toml::de::Error> {
    deserialize(0..text.len(), table)
}

/// A table of one entry.
fn one<'i>(
    key: &toml::Spanned<toml::de::DeString<'i>>,
    value: &toml::Spanned<DeValue<'i>>,
) -> DeTable<'i> {
    let mut t = DeTable::new();
    t.insert(key.clone(), value.clone());
    t
}

/// `key` is the dotted name (`events.lock_timeout_ms`); the problem points
/// at the key's last part in the text.
fn range_problem(text: &str, path: &str, key: &str, range: &str) -> Problem {
    // At its value, as serde points at a value of the wrong type.
    let (section, name) = key.split_once('.').unwrap_or(("", key));
    let offset = DeTable::parse(text)
        .ok()
        .and_then(|root| match root.get_ref().get(section)?.get_ref() {
            DeValue::Table(inner) => inner.get(name).map(|v| v.span().start),
            _ => None,
        })
        .unwrap_or(0);
    Problem::error(path, "config", format!("`{key}` is out of range"))
        .at_offset(text, offset)
        .with_hint(format!("use a value between {range}"))
}

/// serde names Rust types in its messages ("expected struct EventsConfig");
/// a user wrote TOML, so say "a table".
fn readable(message: &str) -> String {
    let re = regex::Regex::new(r"(struct|enum) [A-Z][A-Za-z]*").expect("a valid regex literal");
    re.replace_all(message, |c: &regex::Captures<'_>| {
        if &c[1] == "struct" {
            "a table"
        } else {
            "one of the listed values"
        }
        .to_owned()
    })
    .into_owned()
}
