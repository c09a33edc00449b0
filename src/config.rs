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
                if !(1..=600).contains(&c.runner.timeout_secs) {
                    problems.push(range_problem(
                        text,
                        path,
                        "runner.timeout_secs",
                        "1 and 600",
                    ));
                }
                if problems.is_empty() {
                    (c, problems)
                } else {
                    (Config::default(), problems)
                }
            }
            Err(e) => {
                let offset = e.span().map_or(0, |s| s.start);
                let problem = Problem::error(path, "config", format!("config: {}", readable(e.message().trim())))
                    .at_offset(text, offset)
                    .with_hint("see docs/formats.md for every key and its default; the defaults are used until this is fixed");
                (Config::default(), vec![problem])
            }
        }
    }
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
