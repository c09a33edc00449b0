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
    /// The tools each agent role is expected to use: `inject --role R`
    /// without `--tools` shows R the directives scoped to these tools.
    /// A role named here replaces its default; others keep theirs.
    #[schemars(extend("default" = default_role_tools()))]
    pub roles: std::collections::BTreeMap<String, Vec<String>>,
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
}

impl Default for KnowledgeConfig {
    fn default() -> Self {
        KnowledgeConfig {
            delegate_max_inject_count: 8,
            inject_char_budget: 6000,
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
}

impl Default for EventsConfig {
    fn default() -> Self {
        EventsConfig {
            fsync: FsyncPolicy::Never,
            lock_timeout_ms: 10_000,
            max_line_bytes: 64 * 1024,
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
        match toml::from_str::<Config>(text) {
            Ok(c) => {
                let problems = range_problems(&c, text, path);
                if problems.is_empty() {
                    (c, problems)
                } else {
                    (Config::default(), problems)
                }
            }
            Err(e) => {
                // Every bad key, not only the first serde meets.
                let mut problems = key_problems(text, path);
                if problems.is_empty() {
                    let offset = e.span().map_or(0, |s| s.start);
                    problems.push(
                        Problem::error(
                            path,
                            "config",
                            format!("config: {}", readable(e.message().trim())),
                        )
                        .at_offset(text, offset)
                        .with_hint(CONFIG_HINT),
                    );
                }
                (Config::default(), problems)
            }
        }
    }
}

const CONFIG_HINT: &str =
    "see docs/formats.md for every key and its default; the defaults are used until this is fixed";

fn range_problems(c: &Config, text: &str, path: &str) -> Vec<Problem> {
    let mut problems = Vec::new();
    let e = &c.events;
    if !(1..=600_000).contains(&e.lock_timeout_ms) {
        problems.push(range_problem(
            text,
            path,
            "events.lock_timeout_ms",
            "1 and 600000",
        ));
    }
    if !(1024..=16 * 1024 * 1024).contains(&e.max_line_bytes) {
        problems.push(range_problem(
            text,
            path,
            "events.max_line_bytes",
            "1024 and 16777216",
        ));
    }
    if !(1..=100).contains(&c.knowledge.delegate_max_inject_count) {
        problems.push(range_problem(
            text,
            path,
            "knowledge.delegate_max_inject_count",
            "1 and 100",
        ));
    }
    if !(200..=100_000).contains(&c.knowledge.inject_char_budget) {
        problems.push(range_problem(
            text,
            path,
            "knowledge.inject_char_budget",
            "200 and 100000",
        ));
    }
    if !(0.0..=1.0).contains(&c.retrieval.mmr_lambda) {
        problems.push(range_problem(text, path, "retrieval.mmr_lambda", "0 and 1"));
    }
    problems.extend(patterns_problems(&c.patterns, text, path));
    if !(1..=600).contains(&c.runner.timeout_secs) {
        problems.push(range_problem(
            text,
            path,
            "runner.timeout_secs",
            "1 and 600",
        ));
    }
    problems
}

/// For a config.toml that is valid TOML but not a valid configuration: one
/// problem per bad key, found by trying each key alone, then the range
/// checks of what is left once they are taken out. Empty when the TOML
/// itself does not parse (that error is the only one known).
fn key_problems(text: &str, path: &str) -> Vec<Problem> {
    let Ok(mut table) = text.parse::<toml::Table>() else {
        return Vec::new();
    };
    let fits = |doc: toml::Table| toml::Value::Table(doc).try_into::<Config>();
    let mut problems = Vec::new();
    let mut problem = |key: &str, e: toml::de::Error, offset: usize| {
        problems.push(
            Problem::error(
                path,
                "config",
                format!("config: `{key}`: {}", readable(e.message().trim())),
            )
            .at_offset(text, offset)
            .with_hint(CONFIG_HINT),
        );
    };
    let keys: Vec<String> = table.keys().cloned().collect();
    for section in keys {
        let value = table[&section].clone();
        let Err(whole) = fits(toml::Table::from_iter([(section.clone(), value.clone())])) else {
            continue;
        };
        let mut bad = Vec::new();
        let known = fits(toml::Table::from_iter([(
            section.clone(),
            toml::Value::Table(toml::Table::new()),
        )]))
        .is_ok();
        if let toml::Value::Table(inner) = &value
            && known
        {
            for (key, v) in inner {
                let one = toml::Table::from_iter([(key.clone(), v.clone())]);
                if let Err(e) = fits(toml::Table::from_iter([(
                    section.clone(),
                    toml::Value::Table(one),
                )])) {
                    problem(
                        &format!("{section}.{key}"),
                        e,
                        key_offset(text, Some(&section), key),
                    );
                    bad.push(key.clone());
                }
            }
        }
        match table.get_mut(&section) {
            Some(toml::Value::Table(inner)) if !bad.is_empty() => {
                for key in &bad {
                    inner.remove(key);
                }
            }
            _ => {
                problem(&section, whole, key_offset(text, None, &section));
                table.remove(&section);
            }
        }
    }
    if let Ok(rest) = fits(table) {
        problems.extend(range_problems(&rest, text, path));
    }
    problems.sort_by_key(|p| (p.line, p.column));
    problems
}

/// Where `key` is set: at the start of its line, in `[section]` when given
/// (0 when it cannot be found, e.g. in an inline table).
fn key_offset(text: &str, section: Option<&str>, key: &str) -> usize {
    let header = |name: &str| {
        let re = format!(r"(?m)^[ \t]*\[[ \t]*{}[ \t]*\]", regex::escape(name));
        regex::Regex::new(&re).ok().and_then(|re| re.find(text))
    };
    let from = match section {
        Some(section) => match header(section) {
            Some(m) => m.end(),
            None => return 0,
        },
        None => match header(key) {
            Some(m) => return m.start() + m.as_str().len() - m.as_str().trim_start().len(),
            None => 0,
        },
    };
    let line = format!(
        r#"(?m)^[ \t]*(?:{}|"{}")[ \t]*[=.\[]"#,
        regex::escape(key),
        regex::escape(key)
    );
    let at_key = |re: regex::Regex| re.find(&text[from..]).map(|m| from + m.start());
    let Some(at) = regex::Regex::new(&line).ok().and_then(at_key) else {
        return from;
    };
    // The value, as serde points at it: past `=` and the spaces after it.
    let line = text[at..].lines().next().unwrap_or_default();
    match line.find('=') {
        Some(eq) => {
            let value = &line[eq + 1..];
            at + eq + 1 + value.len() - value.trim_start().len()
        }
        None => at + line.len() - line.trim_start().len(),
    }
}

fn patterns_problems(p: &PatternsConfig, text: &str, path: &str) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut float = |key: &str, v: f64, lo: f64, hi: f64| {
        if !(lo..=hi).contains(&v) {
            problems.push(range_problem(
                text,
                path,
                &format!("patterns.{key}"),
                &format!("{lo} and {hi}"),
            ));
        }
    };
    float("decay_days", p.decay_days, 0.1, 3650.0);
    float("rule_weight", p.rule_weight, 0.0, 10.0);
    float("causal_weight", p.causal_weight, 0.0, 10.0);
    float("context_boost", p.context_boost, 0.0, 10.0);
    float("new_rate", p.new_rate, 0.0, 1.0);
    float("min_score", p.min_score, 0.0, 10.0);
    float("default_ignore_weight", p.default_ignore_weight, 0.0, 100.0);
    float("near_duplicate", p.near_duplicate, 0.0, 1.0);
    float("finding_match", p.finding_match, 0.0, 1.0);
    float("age_step_days", p.age_step_days, 0.0, 3650.0);
    float("deprecate_after_days", p.deprecate_after_days, 1.0, 36500.0);
    float("outcome_weight", p.outcome_weight, 0.0, 100.0);
    for w in p.ignore_weights.values() {
        float("ignore_weights", *w, 0.0, 100.0);
    }
    let mut int = |key: &str, v: usize, lo: usize, hi: usize| {
        if !(lo..=hi).contains(&v) {
            problems.push(range_problem(
                text,
                path,
                &format!("patterns.{key}"),
                &format!("{lo} and {hi}"),
            ));
        }
    };
    int("immune_after", p.immune_after as usize, 1, 1000);
    int("adversarial_budget", p.adversarial_budget, 1, 100_000);
    int("budget", p.budget, 1, 100_000);
    int("min_budget", p.min_budget, 1, 100_000);
    int("reinforce_top", p.reinforce_top, 1, 1000);
    problems
}

/// `key` is the dotted name (`events.lock_timeout_ms`); the problem points
/// at the key's last part in the text.
fn range_problem(text: &str, path: &str, key: &str, range: &str) -> Problem {
    let name = key.rsplit('.').next().unwrap_or(key);
    let offset = text.find(name).unwrap_or(0);
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
