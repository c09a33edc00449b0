//! The state `hook agent` keeps between a harness's events: per session,
//! the spawns seen and not yet started (so a subagent's start can find the
//! task its spawn carried), and each subagent's delegation (so its stop can
//! record its acks, and be asked once for a missing one).
//!
//! It lives under the git *common* dir (`<common-dir>/swarm/agents/`), one
//! small JSON file per session: every linked worktree shares it, so a
//! subagent working in another worktree still finds its delegation. It is
//! per clone and disposable, like the index. Each update holds the
//! session's lock (retried, never skipped) and appends the whole new state
//! as one line, in one write; the last line that parses is the state. Once
//! the file holds [`JOURNAL_MAX`] bytes, or four states when a state is
//! longer, the next update replaces it atomically with its one line.
//! Appending, because a rename over a file costs 0.1-0.4 ms on ext4 (it
//! starts writing the new file back at once), on every hook that changes
//! the state (docs/performance.md).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Largest state file read: a session's file holds a few dozen entries.
pub const STATE_MAX: u64 = 1024 * 1024;
/// Largest state file written: the oldest subagents (then spawns) go
/// first, so that a file always stays readable with room to grow.
pub const STATE_WRITE_MAX: usize = (STATE_MAX / 2) as usize;
/// A spawn its subagent has not started within this long is forgotten: a
/// start follows its spawn at once, bar a permission prompt, and a spawn
/// that never starts (the user denied it) must not linger to be taken by,
/// or make ambiguous, the spawns after it.
pub const PENDING_TTL_MS: i64 = 2 * 60 * 1000;
/// A session's files untouched this long are swept away.
pub const SESSION_TTL: Duration = Duration::from_secs(7 * 24 * 60 * 60);
/// A subagent's delegation is kept this long for its stop (and resumes).
pub const AGENT_TTL_MS: i64 = 7 * 24 * 60 * 60 * 1000;
/// A delegation whose stop has not come this long after its start is ended
/// by the next session start: its subagent died, was killed, or the
/// harness lost its stop (opencode runs none for a task that fails).
pub const DELEGATION_TTL_MS: i64 = 4 * 60 * 60 * 1000;
/// A state file this long (or four states long, when that is longer, up
/// to [`STATE_MAX`]) is written anew at its next update, not appended to:
/// a few dozen states of a busy session, read in one go.
pub const JOURNAL_MAX: u64 = 64 * 1024;
/// Most spawns and subagents a session's file keeps (the oldest go first).
const PENDING_MAX: usize = 64;
const AGENTS_MAX: usize = 256;
/// Most characters of a task kept.
pub const TASK_MAX_CHARS: usize = 8 * 1024;

/// A spawn of a subagent: the type it starts under and the task it is given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spawn {
    pub agent_type: String,
    pub task: String,
}

/// A spawn seen at pre-tool-use, waiting for its subagent's start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pending {
    /// The spawning tool call's id (Claude/Codex `tool_use_id`), by which
    /// its own post-tool event drops it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub agent_type: String,
    pub task: String,
    pub at: i64,
}

/// What a starting subagent's spawn is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Take {
    /// Its spawn.
    Task(Pending),
    /// No spawn of its type is waiting.
    NoSpawn,
    /// Several are, and the harness has not said which is its own.
    Ambiguous,
}

/// A subagent that was shown directives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Agent {
    /// The `shown` event's id; `None` when nothing was in scope.
    pub delegation: Option<String>,
    /// The work tree the delegation was recorded from (its store and config).
    pub root: PathBuf,
    /// What the subagent was given, answered again on a repeated start;
    /// emptied by its stop (it has the block in its context by then),
    /// which keeps the ids it showed in `showed`.
    pub block: String,
    /// The directives the block showed, once its stop dropped the block:
    /// its later tool calls are not told them again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub showed: Vec<String>,
    /// Its stop was asked once for missing acks.
    #[serde(default)]
    pub asked: bool,
    pub at: i64,
    /// The block went into the task itself, at the spawn (Claude Code's
    /// PreToolUse): the subagent's start answers nothing more.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub in_task: bool,
    /// Its delegation was ended by [`end_open`] (whether its stop had
    /// recorded it or not: that is in the log, not here).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ended: bool,
}

impl Agent {
    /// Drops the block, keeping the ids of the directives it showed.
    pub fn drop_block(&mut self) {
        if self.block.is_empty() {
            return;
        }
        (self.showed).extend(super::block_ids(&self.block).map(str::to_owned));
        self.block.clear();
    }

    /// Whether the block this subagent was given showed the directive `id`.
    pub fn shows(&self, id: &str) -> bool {
        super::block_shows(&self.block, id) || self.showed.iter().any(|s| s == id)
    }
}

/// The key of the delegation a spawn's task carries, before its subagent
/// has an id of its own.
pub fn spawn_key(tool_use_id: &str) -> String {
    format!("{SPAWN_PREFIX}{tool_use_id}")
}

/// What [`spawn_key`] starts with.
pub const SPAWN_PREFIX: &str = "spawn:";

/// One session's state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionState {
    #[serde(default)]
    pub pending: Vec<Pending>,
    #[serde(default)]
    pub agents: BTreeMap<String, Agent>,
    /// Spawns whose subagent the harness named (by its agent id) before
    /// that subagent started: its start takes exactly this task.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub links: BTreeMap<String, Pending>,
    /// Roles this session was warned have no directive (once a session).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warned: Vec<String>,
    /// The directives each agent was shown before a tool call, by agent
    /// (its id, or `main`): each lesson reaches each agent once.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub seen: BTreeMap<String, Vec<String>>,
}

impl SessionState {
    /// Whether to warn, now, that `role` has no directive: the first time
    /// this session meets it.
    pub fn first_warning(&mut self, role: &str) -> bool {
        if self.warned.iter().any(|r| r == role) || self.warned.len() >= WARNED_MAX {
            return false;
        }
        self.warned.push(role.to_owned());
        true
    }
}

impl SessionState {
    /// Of `ids`, those `agent` has not been shown before a tool call,
    /// now marked shown. Bounded: an agent past [`LESSONS_SEEN_MAX`] lessons
    /// is shown nothing more rather than the same lessons again; past
    /// [`LESSONS_SEEN_AGENTS_MAX`] agents, subagents are forgotten to make room.
    pub fn first_sight(&mut self, agent: &str, ids: &[String]) -> Vec<String> {
        // A long session's earliest agents give way to new ones (ids of
        // agents long stopped, mostly): a new agent is always told.
        while !self.seen.contains_key(agent) && self.seen.len() >= LESSONS_SEEN_AGENTS_MAX {
            let Some(first) = self.seen.keys().find(|k| k.as_str() != "main").cloned() else {
                break;
            };
            self.seen.remove(&first);
        }
        let seen = self.seen.entry(agent.to_owned()).or_default();
        let mut new = Vec::new();
        for id in ids {
            if seen.len() >= LESSONS_SEEN_MAX {
                break;
            }
            if !seen.contains(id) {
                seen.push(id.clone());
                new.push(id.clone());
            }
        }
        new
    }
}

/// Most lessons one agent is remembered to have been shown at tool calls.
const LESSONS_SEEN_MAX: usize = 64;
/// Most agents of one session remembered.
const LESSONS_SEEN_AGENTS_MAX: usize = 64;

/// Most roles a session remembers warning about.
const WARNED_MAX: usize = 64;

/// An agent type a hook met, and the role it mapped to: what `agents
/// status` lists, so that a user sees which of the harness's agents get
/// which lessons.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeenType {
    pub harness: String,
    pub agent_type: String,
    pub role: String,
    /// Whether any directive was in scope for the role when last seen.
    pub directives: bool,
    pub at: i64,
}

/// Most agent types remembered (the least recently seen go first).
pub const SEEN_MAX: usize = 64;
/// A type seen again is written again only after this long (or when its
/// role or directives changed), so that a start does not write every time.
const SEEN_REFRESH_MS: i64 = 24 * 60 * 60 * 1000;

fn seen_path(common_dir: &Path) -> PathBuf {
    dir(common_dir).join("types.json")
}

/// The agent types met so far, most recent first.
pub fn seen_types(common_dir: &Path) -> Vec<SeenType> {
    let mut seen: Vec<SeenType> = crate::safe_fs::read(&seen_path(common_dir), STATE_MAX)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    seen.truncate(SEEN_MAX);
    seen.sort_by_key(|s| std::cmp::Reverse(s.at));
    seen
}

/// Records that `entry`'s type was met; best effort, like the index.
pub fn note_seen(common_dir: &Path, entry: SeenType) -> Result<()> {
    let known = seen_types(common_dir);
    let same = |s: &SeenType| s.harness == entry.harness && s.agent_type == entry.agent_type;
    if known.iter().any(|s| {
        same(s)
            && s.role == entry.role
            && s.directives == entry.directives
            && entry.at - s.at < SEEN_REFRESH_MS
    }) {
        return Ok(());
    }
    let path = seen_path(common_dir);
    let dir = dir(common_dir);
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let _lock = crate::event::open_locked(&path.with_extension("lock"), Duration::from_secs(5))?;
    let mut seen = seen_types(common_dir);
    seen.retain(|s| !same(s));
    seen.insert(0, entry);
    seen.truncate(SEEN_MAX);
    let bytes = serde_json::to_vec(&seen).expect("the agent types serialise");
    crate::safe_fs::replace_unsynced(&path, &bytes)
}

impl SessionState {
    /// Drops what has expired at `now` (milliseconds), and the oldest
    /// entries past the caps.
    pub fn expire(&mut self, now: i64) {
        self.pending.retain(|p| now - p.at <= PENDING_TTL_MS);
        self.links.retain(|_, p| now - p.at <= PENDING_TTL_MS);
        self.agents.retain(|_, a| now - a.at <= AGENT_TTL_MS);
        if self.pending.len() > PENDING_MAX {
            let extra = self.pending.len() - PENDING_MAX;
            self.pending.drain(..extra);
        }
        while self.links.len() > PENDING_MAX {
            let oldest = (self.links.iter())
                .min_by_key(|(_, p)| p.at)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(k) => self.links.remove(&k),
                None => break,
            };
        }
        while self.agents.len() > AGENTS_MAX {
            let oldest = self
                .agents
                .iter()
                .min_by_key(|(_, a)| a.at)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(k) => self.agents.remove(&k),
                None => break,
            };
        }
    }

    /// Remembers a spawn, by the id of its tool call when there is one (a
    /// hook fired twice for one call is one spawn).
    pub fn stash(&mut self, spawn: Spawn, id: Option<String>, now: i64) {
        let task: String = spawn.task.chars().take(TASK_MAX_CHARS).collect();
        if id.is_some() {
            self.pending.retain(|p| p.id != id);
        }
        self.pending.push(Pending {
            id,
            agent_type: spawn.agent_type,
            task,
            at: now,
        });
    }

    /// Drops the spawn of the tool call `id`: its tool returned or failed,
    /// so no start of its own is still to come.
    pub fn forget(&mut self, id: &str) {
        self.pending.retain(|p| p.id.as_deref() != Some(id));
    }

    /// The harness says the spawn of tool call `id` launched the subagent
    /// `child` (Claude Code's `tool_response.agentId`, which its
    /// SubagentStart calls `agent_id`): the spawn is kept for that start
    /// alone. When the start came first (the harness runs the two hooks at
    /// once), the spawn is only dropped. `fallback` is the spawn as the
    /// launch's own payload gives it, for a spawn whose pre-tool event was
    /// not seen.
    pub fn launched(&mut self, id: Option<&str>, child: &str, fallback: Option<Spawn>, now: i64) {
        let mine = id.and_then(|id| {
            let at = self
                .pending
                .iter()
                .position(|p| p.id.as_deref() == Some(id))?;
            Some(self.pending.remove(at))
        });
        // The delegation the spawn's task carries is the subagent's.
        if let Some(a) = id.and_then(|id| self.agents.get(&spawn_key(id))).cloned() {
            self.agents.entry(child.to_owned()).or_insert(a);
            return;
        }
        if self.agents.contains_key(child) {
            return;
        }
        let spawn = mine.or_else(|| {
            fallback.map(|s| Pending {
                id: id.map(str::to_owned),
                agent_type: s.agent_type,
                task: s.task.chars().take(TASK_MAX_CHARS).collect(),
                at: now,
            })
        });
        if let Some(p) = spawn {
            self.links.insert(child.to_owned(), p);
        }
    }

    /// Names `child` the subagent of `spawn`: the delegation its task
    /// carries becomes the subagent's.
    pub fn adopt(&mut self, child: &str, spawn: &Pending) {
        if let Some(a) = (spawn.id.as_deref())
            .and_then(|id| self.agents.get(&spawn_key(id)))
            .cloned()
        {
            self.agents.entry(child.to_owned()).or_insert(a);
        }
    }

    /// Names `child` the subagent shown `delegation` (found in its own
    /// transcript): for a stop whose start could not be paired.
    pub fn adopt_delegation(&mut self, child: &str, delegation: &str) -> bool {
        // Only a spawn's delegation that no subagent holds yet: a child
        // whose transcript carries another's block (a forked context) must
        // not take it.
        let held = |d: &str| {
            (self.agents.iter())
                .any(|(k, a)| !k.starts_with("spawn:") && a.delegation.as_deref() == Some(d))
        };
        if held(delegation) {
            return false;
        }
        let found = (self.agents.iter())
            .find(|(k, a)| k.starts_with("spawn:") && a.delegation.as_deref() == Some(delegation))
            .map(|(_, a)| a.clone());
        match found {
            Some(a) => {
                self.agents.entry(child.to_owned()).or_insert(a);
                true
            }
            None => false,
        }
    }

    /// The task of the subagent `child` of `agent_type` that starts now,
    /// taking its spawn off the lists: the spawn the harness linked to it,
    /// else the only spawn of the type still waiting. With several waiting
    /// and no link, nothing is taken (`Ambiguous`): parallel spawns of one
    /// type cannot be told apart by arrival, and one subagent must never get
    /// another's task; the link may still come.
    pub fn take_task(&mut self, child: &str, agent_type: &str) -> Take {
        if let Some(p) = self.links.remove(child) {
            return Take::Task(p);
        }
        let of_type: Vec<usize> = (self.pending.iter().enumerate())
            .filter(|(_, p)| p.agent_type == agent_type)
            .map(|(i, _)| i)
            .collect();
        match of_type[..] {
            [] => Take::NoSpawn,
            [one] => Take::Task(self.pending.remove(one)),
            _ => Take::Ambiguous,
        }
    }
}

/// Where the state of `session` lives under `common_dir`: a file named by
/// a hash of the session id, so no id can name a path.
pub fn path(common_dir: &Path, session: &str) -> PathBuf {
    let hash = xxhash_rust::xxh3::xxh3_64(session.as_bytes());
    dir(common_dir).join(format!("{hash:016x}.json"))
}

/// The task of the subagent `child` that starts now (see
/// [`SessionState::take_task`]). While it is ambiguous, and for at most
/// `wait`, the state is read again: a harness that runs the spawn's
/// post-tool hook at the same time as the start names the subagent there,
/// a moment later. The lock is not held while waiting.
pub fn take_waiting(
    common_dir: &Path,
    session: &str,
    child: &str,
    agent_type: &str,
    wait: Duration,
    now: i64,
    warnings: &mut Vec<String>,
) -> Result<Option<Pending>> {
    let deadline = std::time::Instant::now() + wait;
    loop {
        match update(common_dir, session, now, warnings, |s| {
            s.take_task(child, agent_type)
        })? {
            Take::Task(spawn) => return Ok(Some(spawn)),
            Take::NoSpawn => return Ok(None),
            Take::Ambiguous if std::time::Instant::now() >= deadline => return Ok(None),
            Take::Ambiguous => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// The state folder.
pub fn dir(common_dir: &Path) -> PathBuf {
    common_dir.join("swarm").join("agents")
}

/// Reads the state of `session`, lets `change` update it under the
/// session's lock, and writes it back when it changed. A file that cannot
/// be read as a session's state (damaged, too large, unreadable) is
/// started over with a warning in `warnings`: it is only a cache of what
/// the harness said, and must never stop the session's later hooks.
pub fn update<T>(
    common_dir: &Path,
    session: &str,
    now: i64,
    warnings: &mut Vec<String>,
    change: impl FnOnce(&mut SessionState) -> T,
) -> Result<T> {
    update_at(
        common_dir,
        &path(common_dir, session),
        now,
        warnings,
        change,
    )
}

/// [`update`] of the state file at `path`.
fn update_at<T>(
    common_dir: &Path,
    path: &Path,
    now: i64,
    warnings: &mut Vec<String>,
    change: impl FnOnce(&mut SessionState) -> T,
) -> Result<T> {
    let dir = dir(common_dir);
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let _lock = crate::event::open_locked(&path.with_extension("lock"), Duration::from_secs(5))?;
    let (before, warning, length) = read_journal(path);
    warnings.extend(warning);
    let mut state = before.clone();
    state.expire(now);
    let out = change(&mut state);
    if state != before {
        let mut line = bounded(&mut state);
        line.push(b'\n');
        let long = line.len() as u64;
        match length {
            Some(n) if n + long <= (4 * long).clamp(JOURNAL_MAX, STATE_MAX) => {
                append(path, &line)?;
            }
            _ => crate::safe_fs::replace_unsynced(path, &line)?,
        }
    }
    Ok(out)
}

/// Appends `line` to the state file at `path` in one write (the caller
/// holds its lock).
fn append(path: &Path, line: &[u8]) -> Result<()> {
    use std::io::Write;
    let mut file =
        crate::safe_fs::open(path, std::fs::OpenOptions::new().append(true).create(true))
            .map_err(|e| Error::io(path, e))?;
    file.write_all(line).map_err(|e| Error::io(path, e))
}

/// A delegation a subagent was shown and no stop ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ending {
    /// The subagent's id.
    pub agent: String,
    pub delegation: String,
    /// The work tree whose log holds the delegation.
    pub root: PathBuf,
}

/// Marks ended, and returns, the delegations no stop has ended: every one
/// of the session `own` (a session resumed by a new process: its earlier
/// subagents are gone), and any of any session started more than
/// [`DELEGATION_TTL_MS`] before `now`. Each is returned once: the caller
/// records its criticals unacknowledged, and a later stop of the same
/// subagent finds them recorded (`ack` looks in the log first).
pub fn end_open(
    common_dir: &Path,
    own: Option<&str>,
    now: i64,
    warnings: &mut Vec<String>,
) -> Result<Vec<Ending>> {
    let dir = dir(common_dir);
    let Ok(Some(listing)) = crate::safe_fs::read_dir(&dir) else {
        return Ok(Vec::new());
    };
    let own_path = own.map(|s| path(common_dir, s));
    let mut out = Vec::new();
    for entry in listing.flatten() {
        let file = entry.path();
        if file.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let all = own_path.as_deref() == Some(file.as_path());
        // Read without the lock first: most sessions have nothing open.
        let (state, _) = read(&file);
        let due = |a: &Agent| {
            a.delegation.is_some() && !a.ended && (all || now - a.at > DELEGATION_TTL_MS)
        };
        if !state.agents.values().any(due) {
            continue;
        }
        let ended = update_at(common_dir, &file, now, warnings, |s| {
            let mut ended = Vec::new();
            for (id, a) in s.agents.iter_mut().filter(|(_, a)| due(a)) {
                a.ended = true;
                if let Some(delegation) = &a.delegation {
                    ended.push(Ending {
                        agent: id.clone(),
                        delegation: delegation.clone(),
                        root: a.root.clone(),
                    });
                }
            }
            ended
        })?;
        out.extend(ended);
    }
    Ok(out)
}

/// The state of `session`, read without the lock (a reader sees the old
/// file or the new one); started over, with a warning, as [`update`] does.
pub fn read_session(common_dir: &Path, session: &str) -> (SessionState, Option<String>) {
    read(&path(common_dir, session))
}

fn read(path: &Path) -> (SessionState, Option<String>) {
    let (state, warning, _) = read_journal(path);
    (state, warning)
}

/// The state in the file at `path`, a warning when it had to be started
/// over, and the file's length when the next update may append to it (it
/// is missing, or ends with a whole line).
///
/// The state is the last line that parses of the last two: a line being
/// appended, or cut short by a crash, is not one yet, and the line before
/// it is the state it replaces. A file written before states were
/// appended holds one state and no newline.
fn read_journal(path: &Path) -> (SessionState, Option<String>, Option<u64>) {
    let warn = |why: String| {
        Some(format!(
            "the agent hook's state {} {why}; it is started over (a subagent started before loses its delegation)",
            path.display()
        ))
    };
    let bytes = match crate::safe_fs::read(path, STATE_MAX) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return (SessionState::default(), None, Some(0));
        }
        Err(e) => {
            return (
                SessionState::default(),
                warn(format!("could not be read ({e})")),
                None,
            );
        }
    };
    if bytes.is_empty() {
        // Created by an append that wrote nothing (a full disk).
        return (SessionState::default(), None, Some(0));
    }
    let appendable = bytes.ends_with(b"\n").then_some(bytes.len() as u64);
    let mut last_error = None;
    for line in (bytes.split(|&b| b == b'\n'))
        .rev()
        .filter(|l| !l.is_empty())
        .take(2)
    {
        match serde_json::from_slice(line) {
            Ok(state) => return (state, None, appendable),
            Err(e) => last_error = last_error.or(Some(e)),
        }
    }
    let why = match last_error {
        Some(e) => format!("is not a session's state ({e})"),
        None => "holds only empty lines".to_owned(),
    };
    (SessionState::default(), warn(why), None)
}

/// `state` as the bytes to write, within [`STATE_WRITE_MAX`]: the oldest
/// subagents are dropped first, then the oldest spawns.
fn bounded(state: &mut SessionState) -> Vec<u8> {
    let bytes = serde_json::to_vec(&*state).expect("the state serialises");
    let Some(mut excess) = bytes.len().checked_sub(STATE_WRITE_MAX) else {
        return bytes;
    };
    // Each entry's share of the file, measured once: `"key":{…},`.
    let mut by_age: Vec<(i64, String, usize)> = (state.agents.iter())
        .map(|(k, a)| (a.at, k.clone(), size(a) + k.len() + 4))
        .collect();
    by_age.sort();
    for (_, key, n) in by_age {
        if excess == 0 {
            break;
        }
        state.agents.remove(&key);
        excess = excess.saturating_sub(n);
    }
    while excess > 0 && !state.pending.is_empty() {
        let p = state.pending.remove(0);
        excess = excess.saturating_sub(size(&p) + 1);
    }
    while excess > 0 {
        let Some(oldest) = (state.links.iter())
            .min_by_key(|(_, p)| p.at)
            .map(|(k, _)| k.clone())
        else {
            break;
        };
        if let Some(p) = state.links.remove(&oldest) {
            excess = excess.saturating_sub(size(&p) + oldest.len() + 4);
        }
    }
    serde_json::to_vec(&*state).expect("the state serialises")
}

/// An entry's serialised length.
fn size<T: Serialize>(v: &T) -> usize {
    serde_json::to_vec(v).map_or(0, |b| b.len())
}

/// Removes the files of sessions untouched for [`SESSION_TTL`] at `now`
/// (a session's state and its lock), skipping any whose lock is held.
/// Best effort: what cannot be removed now is tried again next time.
pub fn sweep(common_dir: &Path, now: SystemTime) {
    let dir = dir(common_dir);
    let Ok(Some(listing)) = crate::safe_fs::read_dir(&dir) else {
        return;
    };
    let stale = |p: &Path| {
        std::fs::symlink_metadata(p)
            .and_then(|m| m.modified())
            .map_or(true, |t| {
                now.duration_since(t).is_ok_and(|age| age > SESSION_TTL)
            })
    };
    for entry in listing.flatten() {
        let lock_path = entry.path();
        if lock_path.extension().and_then(|e| e.to_str()) != Some("lock") {
            // A state file without its lock: older than any lock-holding
            // version, or left by a sweep cut short.
            if lock_path.extension().and_then(|e| e.to_str()) == Some("json")
                && !lock_path.with_extension("lock").exists()
                && stale(&lock_path)
            {
                let _ = std::fs::remove_file(&lock_path);
            }
            continue;
        }
        let state_path = lock_path.with_extension("json");
        if !stale(&lock_path) || (state_path.exists() && !stale(&state_path)) {
            continue;
        }
        let Ok(lock) = crate::safe_fs::open(&lock_path, std::fs::OpenOptions::new().write(true))
        else {
            continue;
        };
        if lock.try_lock().is_err() {
            continue;
        }
        let _ = std::fs::remove_file(&state_path);
        let _ = std::fs::remove_file(&lock_path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spawn(t: &str, task: &str) -> Spawn {
        Spawn {
            agent_type: t.into(),
            task: task.into(),
        }
    }

    fn task(t: &str) -> String {
        t.into()
    }

    /// The task `take_task` gave, or what it said instead.
    fn took(t: Take) -> Result<String, Take> {
        match t {
            Take::Task(p) => Ok(p.task),
            other => Err(other),
        }
    }

    #[test]
    fn one_spawn_then_its_start_pairs_up() {
        let mut s = SessionState::default();
        s.stash(spawn("coder", "fix the parser"), None, 0);
        assert_eq!(took(s.take_task("a1", "coder")), Ok(task("fix the parser")));
        assert!(s.pending.is_empty());
        assert_eq!(took(s.take_task("a2", "coder")), Err(Take::NoSpawn));
    }

    #[test]
    fn parallel_spawns_of_a_type_get_no_task_not_each_others() {
        let mut s = SessionState::default();
        s.stash(spawn("coder", "task A"), Some("t1".into()), 0);
        s.stash(spawn("coder", "task B"), Some("t2".into()), 1);
        s.stash(spawn("reviewer", "review"), None, 2);
        assert_eq!(took(s.take_task("a1", "coder")), Err(Take::Ambiguous));
        assert_eq!(took(s.take_task("a2", "coder")), Err(Take::Ambiguous));
        assert_eq!(took(s.take_task("r1", "reviewer")), Ok(task("review")));
        // Foreground spawns end (their post-tool events) and clear the way.
        s.forget("t1");
        s.forget("t2");
        s.stash(spawn("coder", "task C"), None, 3);
        assert_eq!(took(s.take_task("a3", "coder")), Ok(task("task C")));
    }

    #[test]
    fn a_launch_links_the_spawn_to_its_subagent_in_either_order() {
        // Link first, then the starts, in the other order.
        let mut s = SessionState::default();
        s.stash(spawn("coder", "task A"), Some("t1".into()), 0);
        s.stash(spawn("coder", "task B"), Some("t2".into()), 1);
        s.launched(Some("t2"), "b", None, 2);
        s.launched(Some("t1"), "a", None, 2);
        assert_eq!(took(s.take_task("b", "coder")), Ok(task("task B")));
        assert_eq!(took(s.take_task("a", "coder")), Ok(task("task A")));
        assert!(s.pending.is_empty() && s.links.is_empty());

        // A start before any link waits; once B's link takes B off the
        // waiting list, the other start is A's alone.
        let mut s = SessionState::default();
        s.stash(spawn("coder", "task A"), Some("t1".into()), 0);
        s.stash(spawn("coder", "task B"), Some("t2".into()), 1);
        assert_eq!(took(s.take_task("a", "coder")), Err(Take::Ambiguous));
        s.launched(Some("t2"), "b", None, 2);
        assert_eq!(took(s.take_task("a", "coder")), Ok(task("task A")));
        assert_eq!(took(s.take_task("b", "coder")), Ok(task("task B")));

        // The start took its task already: the launch only drops the spawn.
        let mut s = SessionState::default();
        s.stash(spawn("coder", "task A"), Some("t1".into()), 0);
        assert_eq!(took(s.take_task("a", "coder")), Ok(task("task A")));
        s.agents.insert("a".into(), agent(0));
        s.launched(Some("t1"), "a", None, 1);
        assert!(s.pending.is_empty() && s.links.is_empty());

        // No pre-tool event seen: the launch's own spawn is linked.
        let mut s = SessionState::default();
        s.launched(Some("t9"), "z", Some(spawn("coder", "task Z")), 0);
        assert_eq!(took(s.take_task("z", "coder")), Ok(task("task Z")));
    }

    #[test]
    fn a_spawn_its_own_tool_call_ended_is_forgotten() {
        let mut s = SessionState::default();
        s.stash(spawn("coder", "denied"), Some("t1".into()), 0);
        s.stash(spawn("coder", "denied"), Some("t1".into()), 0);
        assert_eq!(s.pending.len(), 1, "one call, one spawn");
        s.stash(spawn("coder", "task B"), Some("t2".into()), 1);
        s.forget("t1");
        assert_eq!(took(s.take_task("b", "coder")), Ok(task("task B")));
    }

    #[test]
    fn the_written_state_is_bounded_oldest_first() {
        let mut s = SessionState::default();
        for i in 0..200 {
            s.agents.insert(
                format!("a{i:03}"),
                Agent {
                    delegation: None,
                    root: PathBuf::from("/r"),
                    block: "x".repeat(4096),
                    showed: Vec::new(),
                    asked: false,
                    at: i,
                    in_task: false,
                    ended: false,
                },
            );
        }
        let bytes = bounded(&mut s);
        assert!(bytes.len() <= STATE_WRITE_MAX);
        assert!(s.agents.contains_key("a199") && !s.agents.contains_key("a000"));
        let back: SessionState = serde_json::from_slice(&bytes).expect("json");
        assert_eq!(back, s);
    }

    fn agent(at: i64) -> Agent {
        Agent {
            delegation: None,
            root: PathBuf::from("/r"),
            block: String::new(),
            showed: Vec::new(),
            asked: false,
            at,
            in_task: false,
            ended: false,
        }
    }

    /// A session's file in a new temp dir, with the state `update` wrote
    /// after spawns `a`, `b`….
    fn journal(spawns: &[&str]) -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().expect("tempdir");
        for (i, t) in spawns.iter().enumerate() {
            update(tmp.path(), "s", i as i64, &mut Vec::new(), |s| {
                s.stash(spawn(t, "task"), None, i as i64)
            })
            .expect("update");
        }
        let file = path(tmp.path(), "s");
        (tmp, file)
    }

    fn types(s: &SessionState) -> Vec<&str> {
        s.pending.iter().map(|p| p.agent_type.as_str()).collect()
    }

    #[test]
    fn each_update_appends_the_state_as_one_line() {
        let (_tmp, file) = journal(&["a", "b", "c"]);
        let text = std::fs::read_to_string(&file).expect("state");
        assert_eq!(text.lines().count(), 3, "{text}");
        assert!(text.ends_with('\n'));
        let (state, warning) = read(&file);
        assert_eq!(warning, None);
        assert_eq!(types(&state), ["a", "b", "c"]);
    }

    #[test]
    fn a_line_cut_short_leaves_the_state_before_it_and_the_file_is_written_anew() {
        let (tmp, file) = journal(&["a", "b"]);
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .expect("open");
        std::io::Write::write_all(&mut f, b"{\"pending\":[{\"agent_t").expect("write");
        let (state, warning) = read(&file);
        assert_eq!(warning, None);
        assert_eq!(types(&state), ["a", "b"]);
        // Appending after the cut line would glue the two: written anew.
        update(tmp.path(), "s", 3, &mut Vec::new(), |s| {
            s.stash(spawn("c", "task"), None, 3)
        })
        .expect("update");
        let text = std::fs::read_to_string(&file).expect("state");
        assert_eq!(text.lines().count(), 1, "{text}");
        assert_eq!(types(&read(&file).0), ["a", "b", "c"]);
    }

    #[test]
    fn a_file_of_one_state_without_a_newline_is_read_and_written_anew() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let file = path(tmp.path(), "s");
        std::fs::create_dir_all(dir(tmp.path())).expect("dir");
        let mut old = SessionState::default();
        old.stash(spawn("a", "task"), None, 0);
        std::fs::write(&file, serde_json::to_vec(&old).expect("json")).expect("write");
        assert_eq!(read(&file), (old, None));
        update(tmp.path(), "s", 1, &mut Vec::new(), |s| {
            s.stash(spawn("b", "task"), None, 1)
        })
        .expect("update");
        let text = std::fs::read_to_string(&file).expect("state");
        assert_eq!(text.lines().count(), 1, "{text}");
        assert_eq!(types(&read(&file).0), ["a", "b"]);
    }

    #[test]
    fn a_long_journal_is_written_anew_with_its_last_state() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (mut lines, mut most_lines, mut anew, mut max) = (0, 0, 0, 0);
        for i in 0..200 {
            update(tmp.path(), "s", i, &mut Vec::new(), |s| {
                s.stash(spawn(&format!("t{}", i % 8), &"x".repeat(200)), None, i)
            })
            .expect("update");
            let text = std::fs::read_to_string(path(tmp.path(), "s")).expect("state");
            max = max.max(text.len());
            let now = text.lines().count();
            if now < lines {
                // Written anew: one line, the last state.
                assert_eq!(now, 1);
                anew += 1;
            }
            lines = now;
            most_lines = most_lines.max(now);
        }
        assert!(max as u64 <= JOURNAL_MAX, "{max}");
        assert!(anew > 0 && most_lines > 2, "{anew} {most_lines}");
        // The last state: the cap on spawns applies at each update's start.
        let last = read(&path(tmp.path(), "s")).0;
        assert_eq!(last.pending.len(), PENDING_MAX + 1);
        assert_eq!(last.pending.last().map(|p| p.at), Some(199));
    }

    #[test]
    fn long_states_are_appended_four_to_a_file() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let file = path(tmp.path(), "s");
        let mut counts = Vec::new();
        for i in 0..10 {
            update(tmp.path(), "s", i, &mut Vec::new(), |s| {
                let mut a = agent(i);
                a.block = char::from(b'a' + i as u8).to_string().repeat(20_000);
                s.agents.insert("a".into(), a);
            })
            .expect("update");
            let text = std::fs::read_to_string(&file).expect("state");
            assert!(text.len() as u64 <= STATE_MAX);
            counts.push(text.lines().count());
        }
        // Each state is longer than a quarter of JOURNAL_MAX: four to a file.
        assert_eq!(counts, [1, 2, 3, 4, 1, 2, 3, 4, 1, 2]);
        assert!(read(&file).0.agents["a"].block.starts_with('j'));
    }

    #[test]
    fn a_dropped_block_keeps_the_ids_it_showed() {
        let mut a = agent(0);
        a.block = "<delegate_knowledge_directives>\n- id: run-tests-first\n  priority: critical\n- id: small-commits\n".into();
        assert!(a.shows("run-tests-first") && !a.shows("other"));
        a.drop_block();
        assert_eq!(a.block, "");
        assert_eq!(a.showed, ["run-tests-first", "small-commits"]);
        assert!(a.shows("small-commits") && !a.shows("other"));
        // Dropped again (a second stop): nothing changes.
        a.drop_block();
        assert_eq!(a.showed.len(), 2);
    }

    #[test]
    fn a_damaged_last_line_and_the_one_before_is_started_over_with_a_warning() {
        let (_tmp, file) = journal(&["a"]);
        std::fs::write(&file, b"not json\nnot json either\n").expect("write");
        let (state, warning) = read(&file);
        assert_eq!(state, SessionState::default());
        assert!(warning.is_some_and(|w| w.contains("is not a session's state")),);
    }

    #[test]
    fn stale_spawns_and_links_expire() {
        let mut s = SessionState::default();
        s.stash(spawn("coder", "old"), None, 0);
        s.launched(None, "x", Some(spawn("coder", "old link")), 0);
        s.expire(PENDING_TTL_MS + 1);
        assert_eq!(took(s.take_task("x", "coder")), Err(Take::NoSpawn));
    }
}
