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
