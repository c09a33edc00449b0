//! The tools `git swarm mcp` serves: each tool's arguments (typed, with the
//! JSON schema MCP clients see) and the `git swarm` command line it runs.
//!
//! A tool runs the same command a person would, with `--format json`, so
//! every decision (scope, ranking, gate, trust of `tool:` predicates) stays
//! in one place and an agent sees exactly what the CLI reports. Only
//! `propose_lesson`, which has no command, decides here: it writes an open
//! proposal under `.swarm/proposals/`, never an active directive, so a
//! lesson an agent offers is reviewed (`git swarm proposal accept`) before
//! it binds anyone.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::directive::Category;
use crate::error::{Error, Result};
use crate::event::Event;
use crate::proposal::{self, Proposal, ProposalStatus};
use crate::store::Store;

/// A command line to run (after the program's name) and what its standard
/// input reads.
///
/// It reaches the child as a [`request`](Invocation::request) on the
/// child's standard input (`git-swarm hook mcp-call`), never on its command
/// line: an agent's arguments are unbounded (a query of 1 MB was "Argument
/// list too long"), and each argument arrives exactly as it was given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Invocation {
    pub args: Vec<String>,
    pub stdin: Option<String>,
}

/// The largest request `git-swarm hook mcp-call` reads.
pub const REQUEST_MAX: u64 = 64 * 1024 * 1024;

impl Invocation {
    fn new(command: &str) -> Invocation {
        Invocation {
            args: vec![command.to_owned(), "--format".to_owned(), "json".to_owned()],
            stdin: None,
        }
    }

    /// The request the child reads on its standard input.
    pub fn request(&self) -> Vec<u8> {
        // A struct of strings always serialises.
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// The invocation a [`request`](Invocation::request) holds.
    pub fn from_request(bytes: &[u8]) -> Result<Invocation> {
        let hint = "`git-swarm hook mcp-call` is run by `git swarm mcp`, with its request on standard input";
        if bytes.len() as u64 > REQUEST_MAX {
            return Err(Error::usage(
                format!("the request is over {REQUEST_MAX} bytes"),
                hint,
            ));
        }
        let inv: Invocation = serde_json::from_slice(bytes)
            .map_err(|e| Error::usage(format!("the request does not parse: {e}"), hint))?;
        if inv.args.is_empty() {
            return Err(Error::usage("the request names no command", hint));
        }
        Ok(inv)
    }

    /// `--flag=value`: a value starting with `-` stays a value.
    fn opt(mut self, flag: &str, value: Option<&str>) -> Invocation {
        if let Some(v) = value {
            self.args.push(format!("--{flag}={v}"));
        }
        self
    }

    /// `--flag=value` for each value: one argument each, so that a value
    /// holding a comma stays one value.
    fn each(mut self, flag: &str, values: &[String]) -> Invocation {
        for v in values {
            self = self.opt(flag, Some(v));
        }
        self
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InjectArgs {
    /// The delegate's role (coder, reviewer, test_engineer, ...).
    pub role: String,
    /// The task, in words: what the directives are ranked against.
    #[serde(default)]
    pub task: Option<String>,
    /// The phase the delegation belongs to (for review and the phase gate).
    #[serde(default)]
    pub phase: Option<String>,
    /// Files the task touches.
    #[serde(default)]
    pub files: Vec<String>,
    /// Most directives to show, 1 to 100.
    #[serde(default)]
    pub max_count: Option<u32>,
}

impl InjectArgs {
    pub fn invocation(&self) -> Invocation {
        let n = self.max_count.map(|n| n.to_string());
        Invocation::new("inject")
            .opt("role", Some(&self.role))
            .opt("task", self.task.as_deref())
            .opt("phase", self.phase.as_deref())
            .each("file", &self.files)
            .opt("max-count", n.as_deref())
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AckArgs {
    /// The delegation id `inject` returned.
    pub delegation: String,
    /// The delegate's final message, with its KNOWLEDGE_APPLIED / KNOWLEDGE_VIOLATED lines.
    pub message: String,
}

impl AckArgs {
    pub fn invocation(&self) -> Invocation {
        let mut i = Invocation::new("ack").opt("delegation", Some(&self.delegation));
        i.args.push("-".to_owned());
        i.stdin = Some(self.message.clone());
        i
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewChecklistArgs {
    /// The phase whose delegations are reviewed.
    pub phase: String,
}

impl ReviewChecklistArgs {
    pub fn invocation(&self) -> Invocation {
        Invocation::new("review").opt("phase", Some(&self.phase))
    }
}

/// Which change a check looks at.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Selection {
    /// The index against HEAD (what the next commit holds).
    #[default]
    Staged,
    /// HEAD against the working tree, untracked files included.
    Worktree,
}

impl Selection {
    fn flag(self) -> &'static str {
        match self {
            Selection::Staged => "--staged",
            Selection::Worktree => "--worktree",
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewVerdictsArgs {
    /// The phase reviewed.
    pub phase: String,
    /// The reviewer's message with its verdict lines.
    pub verdicts: String,
    /// The change the verdicts' predicates run against (default: staged).
    #[serde(default)]
    pub selection: Option<Selection>,
}

impl ReviewVerdictsArgs {
    pub fn invocation(&self) -> Invocation {
        let mut i = Invocation::new("review").opt("phase", Some(&self.phase));
        i.args.push("--verdicts=-".to_owned());
        // Staged by default, as for `check`: the machine's answer is what
        // makes a verdict worth more than the reviewer's word.
        i.args
            .push(self.selection.unwrap_or_default().flag().to_owned());
        i.stdin = Some(self.verdicts.clone());
        i
    }
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckArgs {
    /// The change to check (default: staged).
    #[serde(default)]
    pub selection: Selection,
}

impl CheckArgs {
    pub fn invocation(&self) -> Invocation {
        let mut i = Invocation::new("check");
        i.args.push(self.selection.flag().to_owned());
        i
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Words to search the directives for.
    pub query: String,
    /// Score as for this role.
    #[serde(default)]
    pub role: Option<String>,
    /// Show at most this many (default 20).
    #[serde(default)]
    pub limit: Option<u32>,
}

impl SearchArgs {
    pub fn invocation(&self) -> Invocation {
        let n = self.limit.map(|n| n.to_string());
        let mut i = Invocation::new("search")
            .opt("role", self.role.as_deref())
            .opt("max-count", n.as_deref());
        // After `--`, a query starting with `-` is still the query.
        i.args.push("--".to_owned());
        i.args.push(self.query.clone());
        i
    }
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusArgs {}

impl StatusArgs {
    pub fn invocation(&self) -> Invocation {
        Invocation::new("status")
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProposeLessonArgs {
    /// The lesson: one line, 15 to 280 characters, actionable.
    pub title: String,
    /// process, architecture, tooling, security, testing, debugging, performance, integration or other.
    #[serde(default)]
    pub category: Option<String>,
    /// Roles it applies to.
    #[serde(default)]
    pub applies_to_agents: Vec<String>,
    /// Tools it applies to.
    #[serde(default)]
    pub applies_to_tools: Vec<String>,
    /// Path globs it applies to.
    #[serde(default)]
    pub paths: Vec<String>,
    /// Suggested predicates (`kind:argument`).
    #[serde(default)]
    pub verify: Vec<String>,
    #[serde(default)]
    pub required_actions: Vec<String>,
    #[serde(default)]
    pub forbidden_actions: Vec<String>,
    /// Why: the evidence in prose (Markdown).
    #[serde(default)]
    pub evidence: String,
}

/// The source recorded on a proposal an agent made through the server.
pub const SOURCE: &str = "mcp";

/// What `propose_lesson` wrote and the `proposed` event to append.
#[derive(Debug)]
pub struct Proposed {
    pub proposal: Proposal,
    pub path: String,
    pub event: Event,
}

/// Writes `args` as an open proposal (`.swarm/proposals/mcp-<words>-<hash>.md`).
/// The same title always makes the same slug, so a lesson offered twice
/// is refused the second time rather than filed twice.
pub fn propose_lesson(store: &Store, args: &ProposeLessonArgs) -> Result<Proposed> {
    let title = args.title.trim();
    // The title becomes a lesson, the items a directive's: the gate's rule
    // for one-line fields, refused here before anything is written.
    crate::directive::check_one_line("title", title)?;
    for (field, items) in [
        ("applies_to_agents", &args.applies_to_agents),
        ("applies_to_tools", &args.applies_to_tools),
        ("paths", &args.paths),
        ("verify", &args.verify),
        ("required_actions", &args.required_actions),
        ("forbidden_actions", &args.forbidden_actions),
    ] {
        for (i, item) in items.iter().enumerate() {
            crate::directive::check_one_line(&format!("{field}[{i}]"), item)?;
        }
    }
    let chars = title.chars().count();
    if !(15..=280).contains(&chars) {
        return Err(Error::usage(
            format!("a lesson's title is one line of 15 to 280 characters, not {chars}"),
            "state the lesson as one actionable sentence",
        ));
    }
    let category = match &args.category {
        None => Category::default(),
        Some(c) => c.parse::<Category>().map_err(|e| {
            Error::usage(
                format!("category: {e}"),
                "leave it out for `other`, or name one of the categories",
            )
        })?,
    };
    for v in &args.verify {
        if let Err(e) = crate::predicate::Predicate::parse(v) {
            return Err(Error::usage(
                format!("verify `{v}`: {e}"),
                "a predicate is `kind:argument`, as in a directive's `verify` (docs/formats.md)",
            ));
        }
    }
    let now = crate::event::format_ts(store.clock.now());
    let p = Proposal {
        slug: proposal::slug(SOURCE, title, title),
        title: title.to_owned(),
        status: ProposalStatus::Open,
        source: SOURCE.to_owned(),
        category,
        applies_to_agents: args.applies_to_agents.clone(),
        applies_to_tools: args.applies_to_tools.clone(),
        paths: args.paths.clone(),
        verify: args.verify.clone(),
        required_actions: args.required_actions.clone(),
        forbidden_actions: args.forbidden_actions.clone(),
        evidence: Vec::new(),
        key: format!("{SOURCE}:{title}"),
        created_at: now,
        decided_at: None,
        reason: None,
        directive: None,
        body: args.evidence.clone(),
    };
    let path = proposal::write_new(store, &p)?;
    let event = proposal::proposed_event(store, &p);
    Ok(Proposed {
        path: store.rel(&path),
        proposal: p,
        event,
    })
}
