//! The curator: the user's own program, named in their git config, that
//! enriches a quarantined entry. It reads the entry as JSON on stdin and
//! writes the enriched entry as JSON on stdout (docs/harden.md).
//!
//! It runs a program, so it comes from the user's git config (`swarm.curator`,
//! like `swarm.allowTool`), never from a file of the repository; without a
//! shell (the value is split as a shell would, with `shlex`); under the
//! runner's time limit and output cap.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::directive::{Directive, GateFailure, QuarantineReason, Quarantined, check_gate};
use crate::error::{Error, Result};
use crate::runner::{Limits, ToolOutcome, UserEnv};
use crate::store::Repo;

/// The git config key naming the curator command line.
pub const CURATOR_KEY: &str = "swarm.curator";
/// Seconds a curator call may take.
pub const TIMEOUT_KEY: &str = "swarm.curatorTimeout";
/// Curator calls a day.
pub const QUOTA_KEY: &str = "swarm.curatorQuota";

pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
pub const DEFAULT_QUOTA: u32 = 50;

/// Bytes of a reply read: a directive file is at most 64 KiB, and its JSON
/// a little more.
pub const REPLY_MAX: usize = 256 * 1024;

/// The curator as the user configured it.
#[derive(Debug, Clone)]
pub struct Curator {
    pub argv: Vec<String>,
    pub timeout: Duration,
    pub quota: u32,
    pub env: UserEnv,
}

impl Curator {
    /// The curator of the user's git config for `repo`; `None` when
    /// `swarm.curator` is unset or empty (an empty value, as git's empty
    /// `credential.helper`, turns off one set in a wider scope).
    pub fn from_config(repo: &Repo, env: UserEnv) -> Result<Option<Curator>> {
        let last = |key: &str| repo.config_values(key).pop();
        let Some(line) = last(CURATOR_KEY).filter(|l| !l.trim().is_empty()) else {
            return Ok(None);
        };
        let Some(argv) = shlex::split(&line).filter(|a| !a.is_empty()) else {
            return Err(Error::usage(
                format!(
                    "git config {CURATOR_KEY} `{line}` is not a command line (unbalanced quotes?)"
                ),
                format!(
                    "set it with `git config {CURATOR_KEY} 'PROGRAM ARGS…'`; it is split as a shell would, and run without one"
                ),
            ));
        };
        let number = |key: &str, default: u64| -> Result<u64> {
            match last(key) {
                None => Ok(default),
                Some(v) => v.trim().parse::<u64>().map_err(|_| {
                    Error::usage(
                        format!("git config {key} `{v}` is not a whole number"),
                        format!("set it with `git config {key} N`, or unset it for the default ({default})"),
                    )
                }),
            }
        };
        let timeout = number(TIMEOUT_KEY, DEFAULT_TIMEOUT.as_secs())?.max(1);
        let quota = number(QUOTA_KEY, DEFAULT_QUOTA.into())?;
        Ok(Some(Curator {
            argv,
            timeout: Duration::from_secs(timeout),
            quota: u32::try_from(quota).unwrap_or(u32::MAX),
            env,
        }))
    }

    /// The command line, quoted as a shell would need it.
    pub fn display(&self) -> String {
        crate::runner::display_argv(&self.argv)
    }

    /// Why the curator cannot run at all (not found, refused), if so:
    /// asked once, before any call is counted against the quota.
    pub fn unusable(&self, root: &std::path::Path) -> Option<Answer> {
        let outcome = crate::runner::resolve_user_program(&self.argv, root, &self.env).err()?;
        Some(unusable(*outcome))
    }

    /// Sends `request` and waits for the reply within the time limit.
    pub fn call(&self, root: &std::path::Path, request: &Request) -> Answer {
        let input = serde_json::to_vec(request).expect("a request serialises");
        let limits = Limits {
            timeout: self.timeout,
            output_cap: REPLY_MAX * 2,
        };
        match crate::runner::run_user_program(&self.argv, root, &self.env, &input, &limits) {
            ToolOutcome::Passed { output, .. } => {
                if output.stdout.total() > REPLY_MAX as u64 {
                    return Answer::Failed(format!(
                        "the curator's reply is {} bytes, over the {REPLY_MAX}-byte limit",
                        output.stdout.total()
                    ));
                }
                match parse_reply(&output.stdout.head) {
                    Ok(value) => Answer::Reply(value),
                    Err(why) => Answer::Failed(why),
                }
            }
            ToolOutcome::Failed {
                code,
                signal,
                output,
                ..
            } => {
                let how = match (code, signal) {
                    (Some(c), _) => format!("exited with {c}"),
                    (None, Some(s)) => format!("was ended by signal {s}"),
                    (None, None) => "failed".to_owned(),
                };
                let said = output.excerpt(3);
                let said = crate::display::truncate(said.trim(), 300);
                Answer::Failed(if said.is_empty() {
                    format!("the curator {how}")
                } else {
                    format!("the curator {how}: {said}")
                })
            }
            ToolOutcome::TimedOut { after, .. } => Answer::Failed(format!(
                "the curator did not answer within {}s (git config {TIMEOUT_KEY})",
                after.as_secs()
            )),
            outcome @ (ToolOutcome::Refused(_) | ToolOutcome::Error { .. }) => unusable(outcome),
        }
    }
}

/// A refusal or an error of the runner as a curator that cannot run.
fn unusable(outcome: ToolOutcome) -> Answer {
    match outcome {
        ToolOutcome::Refused(r) => Answer::Unusable {
            message: format!("the curator cannot run: {}", r.message),
            hint: r.hint,
        },
        ToolOutcome::Error { message, hint } => Answer::Unusable {
            message: format!("the curator cannot run: {message}"),
            hint: hint.unwrap_or_else(|| format!("check `git config {CURATOR_KEY}`")),
        },
        _ => Answer::Unusable {
            message: "the curator cannot run".into(),
            hint: format!("check `git config {CURATOR_KEY}`"),
        },
    }
}

/// The JSON a curator printed. Anything else (an error page, a debug
/// print, nothing) says the curator is broken, not that the entry is
/// hopeless.
fn parse_reply(reply: &[u8]) -> std::result::Result<Value, String> {
    let text =
        std::str::from_utf8(reply).map_err(|_| "the curator's reply is not UTF-8".to_owned())?;
    serde_json::from_str(text).map_err(|e| {
        let start = crate::display::truncate(text.trim(), 60);
        format!("the curator's reply is not JSON ({e}): `{start}`")
    })
}

/// How a call went.
#[derive(Debug)]
pub enum Answer {
    /// It exited 0 and printed JSON.
    Reply(Value),
    /// It failed, hung, or printed something that is not JSON (or too
    /// much): the curator's trouble, not the entry's.
    Failed(String),
    /// It could not be started: no entry can be worked in this run.
    Unusable { message: String, hint: String },
}

/// What the curator reads on stdin: the entry's directive fields, why it is
/// quarantined, and on a retry what is still missing.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(title = "git-swarm curator request")]
pub struct Request {
    /// The entry's directive fields, as in `directives/<id>.toml`.
    #[serde(flatten)]
    pub entry: Directive,
    pub quarantine_reason: QuarantineReason,
    pub quarantine_detail: Option<String>,
    /// 1, or 2 on the retry.
    pub attempt: u8,
    /// On the retry: the fields still needed (TOML keys).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    /// On the retry: why the first reply was not taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

impl Request {
    pub fn first(q: &Quarantined) -> Request {
        Request {
            entry: q.directive.clone(),
            quarantine_reason: q.quarantine_reason,
            quarantine_detail: q.quarantine_detail.clone(),
            attempt: 1,
            missing: Vec::new(),
            refused: None,
        }
    }
}

/// Keys of a request that a reply may echo back; they are ignored.
pub const ECHOED: &[&str] = &[
    "quarantine_reason",
    "quarantine_detail",
    "attempt",
    "missing",
    "refused",
    "harden_reason",
    "harden_attempts",
    "retire_candidate",
];

/// Why a reply was not taken, and the fields the retry asks for.
#[derive(Debug, Clone)]
pub struct Refused {
    pub why: String,
    pub missing: Vec<String>,
    /// The reply made an entry, which still fails the gate or `validate`:
    /// only such replies count towards `retire_candidate`. A reply that
    /// is no entry at all (a wrong shape, an unknown key, another id) is
    /// as likely a curator misconfigured as an entry beyond repair.
    pub made_entry: bool,
}

/// The entry a reply makes of `q`: its fields over the entry's (a field the
/// reply leaves out keeps the entry's value), the id unchanged, through
/// the gate.
pub fn read_reply(q: &Quarantined, reply: Value) -> std::result::Result<Directive, Refused> {
    let gate_missing = |d: &Directive| check_gate(d).err().map(|f| fields(&f)).unwrap_or_default();
    let refuse = |why: String| Refused {
        why,
        missing: gate_missing(&q.directive),
        made_entry: false,
    };
    let Value::Object(reply) = reply else {
        return Err(refuse("the curator's reply is not a JSON object".into()));
    };
    let Ok(Value::Object(mut merged)) = serde_json::to_value(&q.directive) else {
        return Err(refuse("the entry cannot be written as JSON".into()));
    };
    for (key, value) in reply {
        if ECHOED.contains(&key.as_str()) {
            continue;
        }
        if key == "id" && value.as_str() != Some(q.directive.id.as_str()) {
            return Err(refuse(format!(
                "the curator's reply changes the id to {value}; an entry keeps its id"
            )));
        }
        merged.insert(key, value);
    }
    let d: Directive = serde_json::from_value(Value::Object(Map::from_iter(merged)))
        .map_err(|e| refuse(format!("the curator's reply is not a directive: {e}")))?;
    match check_gate(&d) {
        Ok(()) => Ok(d),
        Err(failure) => Err(Refused {
            why: format!(
                "the enriched entry still fails the gate: {}",
                failure.detail()
            ),
            missing: fields(&failure),
            made_entry: true,
        }),
    }
}

/// The fields a gate failure names, each once.
pub fn fields(failure: &GateFailure) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for issue in &failure.issues {
        if !out.iter().any(|f| f == issue.field) {
            out.push(issue.field.to_owned());
        }
    }
    out
}
