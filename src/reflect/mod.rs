//! Reflection: the loop finding lessons by itself. `micro` reads one
//! finished tool call and keeps a non-success as an insight candidate in
//! `.git/swarm/local/candidates.jsonl` (per clone, never tracked), for meso
//! reflection to fold at the phase's end.

pub mod classify;
pub mod macro_;
pub mod meso;
pub mod payload;
pub mod transcript;

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use classify::{Class, Reading, Sub, classify};
pub use payload::{Format, Harness, ToolCall};

use crate::display::truncate;
use crate::error::{Error, Result};
use crate::problem::Problem;
use crate::store::Store;

/// The candidates file, under `.git/swarm/local/`.
pub const CANDIDATES: &str = "candidates.jsonl";
/// The phase `phase start` last opened in this clone, under `.git/swarm/local/`.
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
    /// The harness's id of the tool call: one candidate per call, however
    /// many times the harness runs the hook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// The harness's session the call was made in: a call id is unique only
    /// within one (a provider may number its calls afresh each session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
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
/// role to the one the payload's agent type maps to (the built-in table;
/// the caller applies the repository's `[agent_types]`).
pub fn micro(
    payload: &str,
    format: Format,
    context: Context,
    now: jiff::Timestamp,
) -> std::result::Result<Micro, payload::PayloadError> {
    let call = payload::parse(payload, format)?;
    Ok(micro_call(call, context, now))
}

/// [`micro`] of a tool call already read: a subagent's report, say, which
/// the agent hook reads from the subagent's stop.
pub fn micro_call(mut call: ToolCall, context: Context, now: jiff::Timestamp) -> Micro {
    // Codex gives no exit code: a shell call that printed nothing reads as
    // a success unless its transcript says how it ended.
    if call.harness == payload::Harness::Codex
        && call.kind == payload::ToolKind::Shell
        && call.exit_code.is_none()
        && call.error.is_none()
        && call.output.trim().is_empty()
        && let (Some(path), Some(id)) = (&call.transcript, &call.call_id)
    {
        call.exit_code = transcript::codex_exit_code(path, id);
    }
    let reading = classify(&call);
    let keep = !matches!(reading.class, Class::Success | Class::Inapplicable);
    let candidate = keep.then(|| {
        let role = context.role.or_else(|| {
            (call.agent_type.as_deref()).and_then(|t| {
                crate::agent_hook::roles::role_for(&std::collections::BTreeMap::new(), t)
            })
        });
        Candidate {
            id: crate::event::new_id(now),
            ts: crate::event::format_ts(now),
            class: reading.class,
            sub: reading.sub,
            harness: call.harness,
            tool: call.tool.clone(),
            command: call.command.as_deref().map(|c| truncate(c, COMMAND_CHARS)),
            role,
            task: context
                .task
                .or_else(|| call.agent.clone())
                .or_else(|| call.session.clone()),
            phase: context.phase,
            signature: classify::signature(&call, &reading),
            excerpt: reading.evidence.clone(),
            call_id: call.call_id.clone(),
            session: call.session.clone(),
        }
    });
    Micro {
        call,
        reading,
        candidate,
    }
}

/// The lock every writer of the candidates file holds: a file of its own,
/// since `reflect meso` replaces the candidates file whole.
const LOCK: &str = "candidates.lock";

/// Appends `candidate` to the candidates file, in one write under the
/// lock; returns the file's path, or `None` when a candidate of the same
/// tool call (its harness, session and call id) is there already: a harness may run
/// the hook twice for one call (Cursor loading Claude Code's hooks too).
pub fn keep(store: &Store, candidate: &Candidate) -> Result<Option<PathBuf>> {
    let (path, _lock) = lock_candidates(store)?;
    if holds_call(&path, candidate)? {
        return Ok(None);
    }
    let mut line = serde_json::to_vec(candidate).expect("a candidate serialises");
    line.push(b'\n');
    let io = |e| Error::io(&path, e);
    let mut file =
        crate::safe_fs::open(&path, std::fs::OpenOptions::new().append(true).create(true))
            .map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    if len + line.len() as u64 > CANDIDATES_MAX {
        return Err(Error::io(
            &path,
            std::io::Error::other(format!(
                "it holds {len} bytes, the most is {CANDIDATES_MAX}: run `git swarm reflect meso` to fold it"
            )),
        ));
    }
    file.write_all(&line).map_err(io)?;
    Ok(Some(path))
}

/// Does the candidates file at `path` (read under the lock) hold a
/// candidate of `candidate`'s tool call? Without a call id (Gemini CLI
/// gives none), a candidate of the same task and signature stands for it:
/// a call repeated in one task, failing the same way each time, teaches
/// nothing a second time (`reflect meso` counts tasks, not calls), and
/// must not fill the file.
fn holds_call(path: &std::path::Path, candidate: &Candidate) -> Result<bool> {
    let bytes = match crate::safe_fs::read(path, CANDIDATES_MAX) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(Error::io(path, e)),
    };
    let same = |c: &Candidate| match &candidate.call_id {
        Some(_) => {
            c.call_id == candidate.call_id
                && c.harness == candidate.harness
                && c.session == candidate.session
        }
        None => {
            c.call_id.is_none()
                && candidate.task.is_some()
                && c.harness == candidate.harness
                && c.task == candidate.task
                && c.signature == candidate.signature
        }
    };
    // Most lines are of other calls: parsed only when the key is in them.
    let key = match &candidate.call_id {
        Some(_) => serde_json::to_string(&candidate.call_id),
        None => serde_json::to_string(&candidate.signature),
    }
    .expect("a string serialises");
    Ok(bytes
        .split(|&b| b == b'\n')
        .filter(|line| line.windows(key.len()).any(|w| w == key.as_bytes()))
        .filter_map(|line| serde_json::from_slice::<Candidate>(line).ok())
        .any(|c| same(&c)))
}

/// Takes the candidates' lock; returns the candidates file's path and the
/// locked file, which holds the lock until dropped.
fn lock_candidates(store: &Store) -> Result<(PathBuf, std::fs::File)> {
    let local = store.create_local_dir()?;
    let lock = crate::event::open_locked(&local.join(LOCK), Duration::from_secs(5))?;
    Ok((local.join(CANDIDATES), lock))
}

/// Every candidate of the file, and a problem for each line that is not
/// one (such a line is kept in the file).
pub fn read_candidates(store: &Store) -> Result<(Vec<Candidate>, Vec<Problem>)> {
    let path = store.local_dir().join(CANDIDATES);
    let bytes = match crate::safe_fs::read(&path, CANDIDATES_MAX) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), Vec::new())),
        Err(e) => return Err(Error::io(&path, e)),
    };
    let rel = store.rel(&path);
    let mut candidates = Vec::new();
    let mut problems = Vec::new();
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Candidate>(line) {
            Ok(c) => candidates.push(c),
            Err(e) => problems.push(
                Problem::error(
                    rel.clone(),
                    "malformed_candidate",
                    format!("not a candidate: {e}"),
                )
                .at_line(u32::try_from(i + 1).unwrap_or(u32::MAX))
                .with_hint("the line is kept and skipped; remove it if it is not wanted"),
            ),
        }
    }
    Ok((candidates, problems))
}

/// Rewrites the candidates file under the lock, keeping the candidates
/// `keep` says and every line that is not a candidate. Returns the path, or
/// `None` when there is no file.
pub fn rewrite_candidates(
    store: &Store,
    keep: impl Fn(&Candidate) -> bool,
) -> Result<Option<PathBuf>> {
    let (path, _lock) = lock_candidates(store)?;
    let bytes = match crate::safe_fs::read(&path, CANDIDATES_MAX) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(&path, e)),
    };
    let mut out = Vec::with_capacity(bytes.len());
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        let kept =
            serde_json::from_slice::<Candidate>(line.trim_ascii()).map_or(true, |c| keep(&c));
        if kept && !line.trim_ascii().is_empty() {
            out.extend_from_slice(line);
        }
    }
    crate::safe_fs::replace(&path, &out)?;
    Ok(Some(path))
}

/// The phase last opened with `phase start` in this clone, if any.
pub fn current_phase(store: &Store) -> Option<String> {
    let bytes = crate::safe_fs::read(&store.local_dir().join(PHASE_FILE), 256).ok()?;
    let phase = String::from_utf8(bytes).ok()?.trim().to_owned();
    is_phase_name(&phase).then_some(phase)
}

/// Remembers `phase` as the one open in this clone.
pub fn open_phase(store: &Store, phase: &str) -> Result<PathBuf> {
    let local = store.create_local_dir()?;
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
