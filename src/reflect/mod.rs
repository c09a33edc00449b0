//! Reflection: the loop finding lessons by itself. `micro` reads one
//! finished tool call and keeps a non-success as an insight candidate in
//! `.swarm/local/candidates.jsonl` (per clone, never tracked), for meso
//! reflection to fold at the phase's end.

pub mod classify;
pub mod payload;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use classify::{Class, Reading, Sub, classify};
pub use payload::{Format, Harness, ToolCall};

use crate::error::{Error, Result};
use crate::store::Store;

/// The candidates file, under `.swarm/local/`.
pub const CANDIDATES: &str = "candidates.jsonl";
/// The phase `phase start` last opened in this clone, under `.swarm/local/`.
pub const PHASE_FILE: &str = "phase";
/// Largest candidates file appended to: meso reflection consumes it, and a
/// file this large means it has not run for a long while.
pub const CANDIDATES_MAX: u64 = 16 * 1024 * 1024;
/// Most characters of a candidate's command.
pub const COMMAND_CHARS: usize = 500;

/// An insight candidate: one tool call that did not succeed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Candidate {
    pub id: String,
    pub ts: String,
    pub class: Class,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub: Option<Sub>,
    pub harness: Harness,
    pub tool: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// The task (the harness's session or agent) it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// What makes two failures the same ([`classify::signature`]).
    pub signature: String,
    /// The line that decided it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excerpt: Option<String>,
}

/// What `reflect micro` is told besides the payload.
#[derive(Debug, Clone, Default)]
pub struct Context {
    pub task: Option<String>,
    pub phase: Option<String>,
    pub role: Option<String>,
}

/// What micro reflection decided: the reading, and the candidate to keep
/// for anything but a success or an inapplicable call.
#[derive(Debug, Clone)]
pub struct Micro {
    pub call: ToolCall,
    pub reading: Reading,
    pub candidate: Option<Candidate>,
}

/// Reads and classifies one tool call. `context` comes from the command
/// line; the task falls back to the payload's agent, then its session, the
/// role to the payload's agent type where that is a role name.
pub fn micro(
    payload: &str,
    format: Format,
    context: Context,
    now: jiff::Timestamp,
) -> std::result::Result<Micro, payload::PayloadError> {
    let call = payload::parse(payload, format)?;
    let reading = classify(&call);
    let keep = !matches!(reading.class, Class::Success | Class::Inapplicable);
    let candidate = keep.then(|| {
        let role = context.role.or_else(|| {
            call.agent_type
                .as_deref()
                .map(str::to_ascii_lowercase)
                .filter(|r| crate::directive::is_valid_scope_name(r))
        });
        Candidate {
            id: crate::event::new_id(now),
            ts: crate::event::format_ts(now),
            class: reading.class,
            sub: reading.sub,
            harness: call.harness,
            tool: call.tool.clone(),
            command: call.command.as_deref().map(|c| cap(c, COMMAND_CHARS)),
            role,
            task: context
                .task
                .or_else(|| call.agent.clone())
                .or_else(|| call.session.clone()),
            phase: context.phase,
            signature: classify::signature(&call, &reading),
            excerpt: reading.evidence.clone(),
        }
    });
    Ok(Micro {
        call,
        reading,
        candidate,
    })
}

fn cap(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// Appends `candidate` to the candidates file, one write under the file's
/// lock.
pub fn keep(store: &Store, candidate: &Candidate) -> Result<PathBuf> {
    let local = store.local_dir();
    crate::safe_fs::create_dir_all(&store.swarm_dir, &local)?;
    let path = local.join(CANDIDATES);
    let mut line = serde_json::to_vec(candidate).expect("a candidate serialises");
    line.push(b'\n');
    append_line(&path, &line, CANDIDATES_MAX)?;
    Ok(path)
}

fn append_line(path: &Path, line: &[u8], max: u64) -> Result<()> {
    let io = |e| Error::io(path, e);
    let mut file =
        crate::safe_fs::open(path, std::fs::OpenOptions::new().append(true).create(true))
            .map_err(io)?;
    crate::event::lock_with_retry(&file, path, Duration::from_secs(5))?;
    let len = file.metadata().map_err(io)?.len();
    if len + line.len() as u64 > max {
        return Err(Error::io(
            path,
            std::io::Error::other(format!(
                "it holds {len} bytes, the most is {max}: run `git swarm reflect meso` to fold it"
            )),
        ));
    }
    file.write_all(line).map_err(io)
}

/// The phase last opened with `phase start` in this clone, if any.
pub fn current_phase(store: &Store) -> Option<String> {
    let bytes = crate::safe_fs::read(&store.local_dir().join(PHASE_FILE), 256).ok()?;
    let phase = String::from_utf8(bytes).ok()?.trim().to_owned();
    is_phase_name(&phase).then_some(phase)
}

/// Remembers `phase` as the one open in this clone.
pub fn open_phase(store: &Store, phase: &str) -> Result<PathBuf> {
    let local = store.local_dir();
    crate::safe_fs::create_dir_all(&store.swarm_dir, &local)?;
    let path = local.join(PHASE_FILE);
    crate::safe_fs::replace(&path, format!("{phase}\n").as_bytes())?;
    Ok(path)
}

/// A phase name: a letter or digit, then letters, digits, `.`, `_`, `-`
/// (at most 64).
pub fn is_phase_name(phase: &str) -> bool {
    phase.len() <= 64
        && phase
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        && phase
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}
