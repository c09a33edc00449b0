//! What `git-swarm-agent-hook <harness> <event>` decides: the harness's
//! payload read into one shape, the answer written in the harness's own
//! output format, and the per-session state that links a subagent to the
//! delegation it was shown (see [`state`]).
//!
//! Each harness documents its own names and fields; this module is the one
//! place that knows them, so the command line only runs the loop's
//! operations (inject, ack, reflect) and prints what is decided here.
//! Answers carry only fields the harness defines: Codex rejects a whole
//! answer for one unknown key.

pub mod roles;
pub mod state;
pub mod tool_call;

use serde_json::{Value, json};

pub use state::{Agent, Pending, SessionState, Spawn, Take};

/// The harnesses `agents install` registers, by the names on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Harness {
    ClaudeCode,
    Codex,
    Gemini,
    Cursor,
    Opencode,
}

impl Harness {
    pub const ALL: [Harness; 5] = [
        Harness::ClaudeCode,
        Harness::Codex,
        Harness::Gemini,
        Harness::Cursor,
        Harness::Opencode,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Harness::ClaudeCode => "claude-code",
            Harness::Codex => "codex",
            Harness::Gemini => "gemini",
            Harness::Cursor => "cursor",
            Harness::Opencode => "opencode",
        }
    }

    pub fn parse(name: &str) -> Option<Harness> {
        Harness::ALL.into_iter().find(|h| h.as_str() == name)
    }

    /// The payload format `reflect micro` reads this harness's post-tool
    /// payload in (Cursor's is mapped onto the generic one first).
    pub fn reflect_format(self) -> crate::reflect::Format {
        crate::reflect::Format::Only(self.reflect_harness())
    }

    /// The harness as a candidate names it.
    pub fn reflect_harness(self) -> crate::reflect::Harness {
        use crate::reflect::Harness as H;
        match self {
            Harness::ClaudeCode => H::Claude,
            Harness::Codex => H::Codex,
            Harness::Gemini => H::Gemini,
            Harness::Opencode => H::Opencode,
            Harness::Cursor => H::Generic,
        }
    }

    /// The tool that spawns a subagent, by this harness's name for it.
    pub fn spawn_tool(self) -> &'static str {
        match self {
            Harness::ClaudeCode => "Agent",
            Harness::Codex => "spawn_agent",
            Harness::Gemini => "invoke_agent",
            Harness::Opencode => "task",
            Harness::Cursor => "Task",
        }
    }

    /// Whether git-swarm takes the harness's subagent events. Cursor's
    /// subagentStart takes no context, so its subagents get their
    /// directives from the rules files `git swarm export cursor-rules`
    /// writes, and no delegation is recorded to ack. Gemini CLI has no
    /// subagent events: its `invoke_agent` tool's BeforeTool and AfterTool
    /// stand for them (see [`gemini_subagent_answer`]).
    pub fn has_subagents(self) -> bool {
        !matches!(self, Harness::Cursor)
    }

    /// Whether the harness can keep a subagent running from its stop hook
    /// (opencode's plugin sees the task tool's result only after the fact).
    pub fn can_block_stop(self) -> bool {
        matches!(self, Harness::ClaudeCode | Harness::Codex)
    }
}

/// The hook events, by git-swarm's names (the contract with `agents install`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    SessionStart,
    PreToolUse,
    SubagentStart,
    SubagentStop,
    PostToolUse,
}

impl Event {
    pub const ALL: [Event; 5] = [
        Event::SessionStart,
        Event::PreToolUse,
        Event::SubagentStart,
        Event::SubagentStop,
        Event::PostToolUse,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Event::SessionStart => "session-start",
            Event::PreToolUse => "pre-tool-use",
            Event::SubagentStart => "subagent-start",
            Event::SubagentStop => "subagent-stop",
            Event::PostToolUse => "post-tool-use",
        }
    }

    pub fn parse(name: &str) -> Option<Event> {
        Event::ALL.into_iter().find(|e| e.as_str() == name)
    }
}

/// Why a payload could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PayloadError(pub String);

/// What git-swarm needs of a payload, whatever harness sent it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Payload {
    /// The session (Claude/Codex/Gemini `session_id`, Cursor
    /// `conversation_id`, opencode `sessionID`).
    pub session: Option<String>,
    /// The directory the harness runs in, where it says.
    pub cwd: Option<String>,
    /// The subagent (Claude/Codex `agent_id`, opencode's task `callID`).
    pub agent_id: Option<String>,
    /// The agent's type, which git-swarm reads as its role.
    pub agent_type: Option<String>,
    /// A spawn seen before the subagent starts (pre-tool-use), or the task
    /// opencode hands its subagent (subagent-start).
    pub spawn: Option<Spawn>,
    /// The subagent's final message (subagent-stop).
    pub message: Option<String>,
    /// The harness's error for a subagent that ended without a final
    /// message (opencode's task tool threw): its delegation ends with
    /// nothing acknowledged.
    pub failure: Option<String>,
    /// The harness is already continuing the agent because a stop hook
    /// blocked it once (Claude Code and Codex; Cursor has no such field).
    pub stop_hook_active: bool,
    /// The tool a pre- or post-tool payload is about.
    pub tool: Option<String>,
    /// That tool call's id (Claude/Codex `tool_use_id`), which pairs a
    /// spawn's pre-tool event with its post-tool one.
    pub tool_use_id: Option<String>,
    /// The spawning call's whole input (Gemini CLI's `invoke_agent`, whose
    /// BeforeTool answer must give all of it back).
    pub tool_input: Option<Value>,
    /// The subagent's own transcript (Claude Code's SubagentStop
    /// `agent_transcript_path`), where its task, block included, is written.
    pub transcript: Option<String>,
    /// Why a session starts (Claude Code, Codex and Gemini's SessionStart
    /// `source`: `startup`, `resume`, `clear`, `compact`).
    pub source: Option<String>,
}

/// Reads `json`, the payload `harness` sent for `event`. Fields are read
/// leniently (a harness adds fields between versions); a payload that is
/// not a JSON object is refused.
pub fn parse(harness: Harness, event: Event, json: &str) -> Result<Payload, PayloadError> {
    parse_value(harness, event, &read_json(json)?)
}

/// The payload `json` as JSON, for a caller that reads more of it than
/// [`parse_value`] keeps (a tool call's input).
pub fn read_json(json: &str) -> Result<Value, PayloadError> {
    if json.trim().is_empty() {
        return Err(PayloadError("the payload is empty".into()));
    }
    serde_json::from_str(json).map_err(|e| PayloadError(format!("the payload is not JSON: {e}")))
}

/// [`parse`], of a payload already read as JSON.
pub fn parse_value(harness: Harness, event: Event, v: &Value) -> Result<Payload, PayloadError> {
    if !v.is_object() {
        return Err(PayloadError("the payload is not a JSON object".into()));
    }
    let s = |v: &Value, k: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let mut p = Payload {
        stop_hook_active: v.get("stop_hook_active").and_then(Value::as_bool) == Some(true),
        ..Payload::default()
    };
    match harness {
        // Gemini CLI's subagents are the `invoke_agent` tool: its BeforeTool
        // is the subagent's start, its AfterTool the stop. No payload has a
        // call id, so the subagent is named by its session, agent and task.
        Harness::Gemini if matches!(event, Event::SubagentStart | Event::SubagentStop) => {
            p.session = s(v, "session_id");
            p.cwd = s(v, "cwd");
            p.tool = s(v, "tool_name");
            let input = v.get("tool_input").unwrap_or(&Value::Null);
            p.agent_type = s(input, "agent_name");
            let prompt = s(input, "prompt").unwrap_or_default();
            if let (Some(session), Some(agent)) = (&p.session, &p.agent_type) {
                p.agent_id = Some(gemini_agent_id(session, agent, &prompt));
            }
            if event == Event::SubagentStart {
                p.spawn = Some(Spawn {
                    agent_type: p.agent_type.clone().unwrap_or_default(),
                    task: prompt,
                });
                p.tool_input = input.is_object().then(|| input.clone());
            } else {
                p.message = gemini_subagent_result(v.get("tool_response").unwrap_or(&Value::Null));
            }
        }
        Harness::Opencode => {
            p.session = s(v, "sessionID");
            p.agent_id = s(v, "callID");
            p.tool = s(v, "tool");
            // The session's agent (`build`, or a subagent's `general`…),
            // which the plugin learns from opencode's events.
            p.agent_type = s(v, "agent");
            let args = v.get("args").unwrap_or(&Value::Null);
            if p.tool.as_deref() == Some("task") {
                p.agent_type = s(args, "subagent_type");
                if event == Event::SubagentStart {
                    p.spawn = Some(Spawn {
                        agent_type: spawn_type(harness, p.agent_type.as_deref()),
                        task: s(args, "prompt").unwrap_or_default(),
                    });
                }
            }
            p.message = v.get("output").and_then(|o| s(o, "output"));
            // The plugin's report of a task whose tool part ended in `error`
            // (opencode skips `tool.execute.after` for a call that throws).
            p.failure = s(v, "error");
        }
        _ => {
            p.session = s(v, "session_id").or_else(|| s(v, "conversation_id"));
            p.cwd = s(v, "cwd").or_else(|| {
                v.get("workspace_roots")
                    .and_then(Value::as_array)
                    .and_then(|r| r.first())
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            });
            p.agent_id = s(v, "agent_id").or_else(|| s(v, "subagent_id"));
            p.agent_type = s(v, "agent_type").or_else(|| s(v, "subagent_type"));
            p.tool = s(v, "tool_name");
            p.tool_use_id = s(v, "tool_use_id");
            p.message = s(v, "last_assistant_message").or_else(|| s(v, "result"));
            p.transcript = s(v, "agent_transcript_path");
            p.source = s(v, "source");
            if event == Event::PreToolUse
                && let Some(tool) = p.tool.as_deref()
                && is_spawn_tool(harness, tool)
            {
                let input = v.get("tool_input").unwrap_or(&Value::Null);
                p.tool_input = input.is_object().then(|| input.clone());
                let (task, kind) = match harness {
                    // Codex's `spawn_agent` takes `{message, agent_type}`.
                    Harness::Codex => (codex_task(input), s(input, "agent_type")),
                    _ => (s(input, "prompt"), s(input, "subagent_type")),
                };
                p.spawn = Some(Spawn {
                    agent_type: spawn_type(harness, kind.as_deref()),
                    task: task.unwrap_or_default(),
                });
            }
        }
    }
    if p.session.is_none() {
        return Err(PayloadError(format!(
            "the payload has no session id (`{}`)",
            match harness {
                Harness::Opencode => "sessionID",
                Harness::Cursor => "conversation_id",
                _ => "session_id",
            }
        )));
    }
    Ok(p)
}

/// Whether a subagent's `block` (as `inject` renders it) shows the
/// directive `id`: its entry's first line is `- id: <id>` (lesson text is
/// one line, so no lesson can forge one).
pub fn block_shows(block: &str, id: &str) -> bool {
    block_ids(block).any(|shown| shown == id)
}

/// The ids of the directives `block` shows (see [`block_shows`]).
pub fn block_ids(block: &str) -> impl Iterator<Item = &str> {
    block
        .lines()
        .filter_map(|l| l.strip_prefix("- id: ").map(str::trim_end))
}

/// Whether the block `agent` (a subagent's id) was given showed the
/// directive `id`. A subagent whose start was not paired with its spawn
/// (Claude Code's foreground spawns, whose blocks went into their tasks)
/// has no block of its own here: when every block still waiting in a
/// spawned task shows the directive, its block did too.
pub fn block_showed(state: &SessionState, agent: &str, id: &str) -> bool {
    if let Some(a) = state.agents.get(agent) {
        return a.shows(id);
    }
    if agent == "main" {
        return false;
    }
    let mut spawned = (state.agents.iter())
        .filter(|(k, a)| k.starts_with(state::SPAWN_PREFIX) && !a.ended)
        .peekable();
    spawned.peek().is_some() && spawned.all(|(_, a)| block_shows(&a.block, id))
}

/// The answer to Claude Code's PreToolUse of its `Agent` tool that puts the
/// subagent's block into its task (`updatedInput`: the whole input, the
/// block before the prompt). No permission decision is made: Claude Code
/// asks, or not, as it would have.
pub fn claude_spawn_answer(tool_input: &Value, block: &str) -> Value {
    json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "updatedInput": with_block(tool_input, block),
        }
    })
}

/// A spawning call's input with `block` before its `prompt`. The input is
/// an object: [`parse`] keeps no other as a spawn's.
fn with_block(tool_input: &Value, block: &str) -> Value {
    let mut input = tool_input.clone();
    if let Some(o) = input.as_object_mut() {
        let prompt = o.get("prompt").and_then(Value::as_str).unwrap_or_default();
        let prompt = prompt_with_block(block, prompt);
        o.insert("prompt".into(), Value::String(prompt));
    }
    input
}

/// Most bytes of a subagent's transcript read for its delegation: its task
/// is its first message.
const TRANSCRIPT_HEAD: u64 = 256 * 1024;

/// The delegation whose block a subagent's transcript carries (its first
/// message is its task, block included): how a stop whose start could not
/// be paired with its spawn finds what it was shown. Reads at most the
/// first 256 KiB of a regular file.
pub fn delegation_in_transcript(path: &std::path::Path) -> Option<String> {
    use std::io::Read;
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let mut head = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(TRANSCRIPT_HEAD)
        .read_to_end(&mut head)
        .ok()?;
    let text = String::from_utf8_lossy(&head);
    let at = text.find("<delegate_knowledge_directives delegation=")?;
    let rest = &text[at + "<delegate_knowledge_directives delegation=".len()..];
    // The quote, JSON-escaped in the transcript's line (`\"`).
    let rest = rest.trim_start_matches(['\\', '"']);
    let id: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    (id.len() == 26).then_some(id)
}

/// Gemini CLI's subagent, named by what its `invoke_agent` call gives:
/// the session, the agent and the task.
pub fn gemini_agent_id(session: &str, agent: &str, prompt: &str) -> String {
    let key = format!("{session}\0{agent}\0{prompt}");
    format!("gemini-{:016x}", xxhash_rust::xxh3::xxh3_64(key.as_bytes()))
}

/// The task a subagent is given where the block goes into the task itself
/// (Claude Code's spawn, Gemini CLI's `invoke_agent`): the block, a blank
/// line, the task.
pub fn prompt_with_block(block: &str, prompt: &str) -> String {
    format!("{}\n\n{prompt}", block.trim_end())
}

/// The BeforeTool answer that gives Gemini CLI's subagent its block: the
/// call's whole input (Gemini validates it again: `agent_name` must stay)
/// with the block before the task.
pub fn gemini_subagent_answer(tool_input: &Value, block: &str) -> Value {
    json!({
        "hookSpecificOutput": {
            "hookEventName": "BeforeTool",
            "tool_input": with_block(tool_input, block),
        }
    })
}

/// The subagent's final answer in an `invoke_agent` call's response:
/// `returnDisplay.result`, the JSON its `complete_task` was given, whose
/// `response` is the text (0.61.0); else the text the model is shown.
fn gemini_subagent_result(response: &Value) -> Option<String> {
    let display = response.get("returnDisplay").unwrap_or(&Value::Null);
    if let Some(result) = display.get("result").and_then(Value::as_str) {
        return Some(match serde_json::from_str::<Value>(result) {
            Ok(v) => v
                .get("response")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .unwrap_or_else(|| result.to_owned()),
            Err(_) => result.to_owned(),
        });
    }
    let content = response.get("llmContent")?;
    let text = match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => return None,
    };
    Some(text)
}

/// The tool that spawns a subagent, by the harness's name for it: Claude
/// Code's `Agent` (called `Task` before v2.1.63), Codex's `spawn_agent`,
/// opencode's `task`. None for a harness whose subagent events git-swarm
/// does not take.
pub fn is_spawn_tool(harness: Harness, tool: &str) -> bool {
    match harness {
        Harness::ClaudeCode => matches!(tool, "Agent" | "Task"),
        // `collaborationspawn_agent`: with the multi-agent v2 feature, the
        // tool in the `collaboration` namespace, named as hooks see it.
        Harness::Codex => matches!(tool, "spawn_agent" | "collaborationspawn_agent" | "Agent"),
        Harness::Opencode => tool == "task",
        Harness::Gemini => tool == "invoke_agent",
        Harness::Cursor => false,
    }
}

/// What the spawning tool's post-tool payload says of the subagent it
/// started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// The spawning tool call's id.
    pub tool_use_id: Option<String>,
    /// The subagent's id, as its SubagentStart will give it.
    pub child: Option<String>,
    /// The response says a subagent was started, named or not: its spawn
    /// must wait for that start rather than be forgotten.
    pub started: bool,
    /// The spawn, from the call's input.
    pub spawn: Spawn,
}

/// Reads the post-tool payload of a spawning tool call: Claude Code's
/// `Agent` answers `tool_response.agentId` (with `status:
/// "async_launched"` for a subagent it runs in the background, whose start
/// comes at the same time as this event, not before it), and Codex's
/// `spawn_agent` names the new agent in its output. `None` for any other
/// tool, or a payload that is no JSON object.
pub fn launch(harness: Harness, json: &str) -> Option<Launch> {
    let v: Value = serde_json::from_str(json).ok()?;
    let tool = v.get("tool_name").and_then(Value::as_str)?;
    if !is_spawn_tool(harness, tool) {
        return None;
    }
    let text = |v: &Value, k: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let input = v.get("tool_input").unwrap_or(&Value::Null);
    let (task, kind) = match harness {
        Harness::Codex => (codex_task(input), text(input, "agent_type")),
        _ => (text(input, "prompt"), text(input, "subagent_type")),
    };
    // The response is an object, or (Codex) a JSON document in a string.
    let response = match v.get("tool_response") {
        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::Null),
        Some(r) => r.clone(),
        None => Value::Null,
    };
    let child = CHILD_ID_KEYS.iter().find_map(|k| text(&response, k));
    Some(Launch {
        tool_use_id: text(&v, "tool_use_id"),
        // Codex's multi-agent v2 answers `{"task_name": "/root/<name>"}`,
        // not the child's id: a child is starting, unnamed.
        started: child.is_some() || text(&response, "task_name").is_some(),
        child,
        spawn: Spawn {
            agent_type: spawn_type(harness, kind.as_deref()),
            task: task.unwrap_or_default(),
        },
    })
}

/// The task of a Codex spawn: its `message`, else the text of its `items`
/// (the input items `spawn_agent` also takes, `[{"type": "text", "text"}]`).
fn codex_task(input: &Value) -> Option<String> {
    if let Some(m) = input
        .get("message")
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty())
    {
        return Some(m.to_owned());
    }
    let texts: Vec<&str> = (input
        .get("items")
        .and_then(Value::as_array)
        .into_iter()
        .flatten())
    .filter_map(|i| i.get("text").and_then(Value::as_str))
    .filter(|t| !t.is_empty())
    .collect();
    (!texts.is_empty()).then(|| texts.join("\n\n"))
}

/// Where a spawning tool's response names the subagent it started.
const CHILD_ID_KEYS: [&str; 2] = ["agentId", "agent_id"];

impl Harness {
    /// Whether the harness names, in the spawning tool's post-tool
    /// payload, the subagent it started, possibly while that subagent's
    /// start hook runs: then a start with several spawns of its type
    /// waiting waits a moment for that name rather than guess.
    pub fn links_spawns(self) -> bool {
        matches!(self, Harness::ClaudeCode | Harness::Codex)
    }
}

/// How long a subagent's start waits for the harness to name its spawn.
pub const LINK_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// The agent type a spawn will start under: the type named, else the
/// harness's default (Claude Code's `general-purpose`; Codex's `default`),
/// so that the spawn and the start it causes pair up.
pub fn spawn_type(harness: Harness, named: Option<&str>) -> String {
    match named {
        Some(t) => t.to_owned(),
        None => match harness {
            Harness::ClaudeCode => "general-purpose".into(),
            Harness::Opencode => "general".into(),
            _ => "default".into(),
        },
    }
}

/// Most bytes of the session-start briefing.
pub const BRIEFING_MAX: usize = 4 * 1024;

/// A session's briefing, in the parts a cut must respect.
#[derive(Debug, Clone, Default)]
pub struct Briefing {
    /// The directive block's opening, one string per entry, and its
    /// closing tag (see `inject::briefing_parts`); all empty when no
    /// directive is in scope.
    pub head: String,
    pub entries: Vec<String>,
    pub tail: String,
    /// The role's patterns, rendered.
    pub patterns: String,
    /// What needs attention, one line each.
    pub highlights: Vec<String>,
}

const HIGHLIGHTS_HEADING: &str =
    "Needs attention in this repository's directive loop (`git swarm status` has the details):\n";
const CUT_POINTER: &str =
    "… (cut to 4 KB: `git swarm status` and `git swarm list` show the rest)\n";

/// The briefing as text, within [`BRIEFING_MAX`] bytes. What needs
/// attention is kept first (up to half the room), the directive block is
/// cut between entries and keeps its closing tag, the patterns get what is
/// left, and a pointer says where the rest is.
pub fn bound_briefing(b: &Briefing) -> String {
    let mut highlights = String::new();
    if !b.highlights.is_empty() {
        highlights.push_str(HIGHLIGHTS_HEADING);
        for l in &b.highlights {
            highlights.push_str(l);
            highlights.push('\n');
        }
    }
    let whole = format!(
        "{}{}{}{}{highlights}",
        b.head,
        b.entries.concat(),
        b.tail,
        b.patterns
    );
    if whole.len() <= BRIEFING_MAX {
        return whole;
    }
    let highlights = lines_within(&highlights, BRIEFING_MAX / 2);
    let mut room = BRIEFING_MAX
        .saturating_sub(CUT_POINTER.len() + highlights.len() + b.head.len() + b.tail.len());
    let mut out = b.head.clone();
    for e in &b.entries {
        if e.len() > room {
            break;
        }
        out.push_str(e);
        room -= e.len();
    }
    out.push_str(&b.tail);
    out.push_str(&lines_within(&b.patterns, room));
    out.push_str(&highlights);
    out.push_str(CUT_POINTER);
    out
}

/// The whole lines of `text` that fit `max` bytes.
fn lines_within(text: &str, max: usize) -> String {
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        if out.len() + line.len() > max {
            break;
        }
        out.push_str(line);
    }
    out
}

/// The answer that hands `text` to the agent as context: at session start
/// (the briefing) or at a subagent's start (its directives). `None` where
/// the harness has no way to take it.
pub fn context_answer(harness: Harness, event: Event, text: &str) -> Option<Value> {
    let hook_event = match event {
        Event::SessionStart => "SessionStart",
        Event::SubagentStart => "SubagentStart",
        _ => return None,
    };
    match (harness, event) {
        (Harness::Opencode, Event::SessionStart) => Some(json!({ "context": text })),
        (Harness::Opencode, _) => Some(json!({ "prepend": text })),
        // Cursor's sessionStart takes `additional_context`.
        (Harness::Cursor, Event::SessionStart) => Some(json!({ "additional_context": text })),
        (Harness::Cursor | Harness::Gemini, Event::SubagentStart) => None,
        _ => Some(json!({
            "hookSpecificOutput": {
                "hookEventName": hook_event,
                "additionalContext": text,
            }
        })),
    }
}

/// The answer that keeps a subagent running with `reason` as its next
/// instruction. Codex accepts only `decision` and `reason` on SubagentStop.
pub fn block_answer(harness: Harness, reason: &str) -> Option<Value> {
    harness
        .can_block_stop()
        .then(|| json!({ "decision": "block", "reason": reason }))
}

/// What a subagent is asked when its final message lacks the acks of
/// critical directives it was shown: the exact lines to add.
pub fn ask_reason(delegation: &str, missing: &[String]) -> String {
    let mut out = format!(
        "Before you finish: your final message must acknowledge each critical directive of delegation {delegation} you were shown. End it with these lines (use KNOWLEDGE_IGNORED:<id> reason=<why>, KNOWLEDGE_N_A:<id> reason=<why> or KNOWLEDGE_VIOLATED:<id> reason=<what> instead where that is the truth):"
    );
    for id in missing {
        out.push_str(&format!("\nKNOWLEDGE_APPLIED:{id}"));
    }
    out
}

/// Cursor's postToolUse or postToolUseFailure payload as the generic one
/// `reflect micro` reads (`{tool, input, output, error, exit_code}`). A
/// failure carries no `tool_output`, only `error_message` (and, by third
/// parties' account, a `failure_type`): either is the call's error.
pub fn cursor_tool_call(json: &str) -> Result<String, PayloadError> {
    let v: Value = serde_json::from_str(json)
        .map_err(|e| PayloadError(format!("the payload is not JSON: {e}")))?;
    let tool = v
        .get("tool_name")
        .and_then(Value::as_str)
        .ok_or_else(|| PayloadError("the payload has no `tool_name`".into()))?;
    // `tool_output` is documented as a JSON string: read it as JSON when it is.
    let output = match v.get("tool_output") {
        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::String(s.clone())),
        Some(o) => o.clone(),
        None => Value::Null,
    };
    let mut call = json!({
        "tool": tool,
        "input": v.get("tool_input").cloned().unwrap_or(Value::Null),
        "output": output,
        "session": v.get("conversation_id").cloned().unwrap_or(Value::Null),
    });
    let text = |k: &str| v.get(k).and_then(Value::as_str).filter(|t| !t.is_empty());
    let failed = v.get("hook_event_name").and_then(Value::as_str) == Some("postToolUseFailure");
    if let Some(e) = text("error_message")
        .or_else(|| text("failure_type"))
        .or(failed.then_some("the tool call failed"))
    {
        call["error"] = Value::String(e.to_owned());
    }
    if let Some(code) = v
        .get("tool_output")
        .and_then(|o| match o {
            Value::String(s) => serde_json::from_str::<Value>(s).ok(),
            o => Some(o.clone()),
        })
        .and_then(|o| o.get("exitCode").or_else(|| o.get("exit_code")).cloned())
        .and_then(|c| c.as_i64())
    {
        call["exit_code"] = Value::from(code);
    }
    Ok(call.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_briefing_keeps_its_highlights_and_closing_tag() {
        let b = Briefing {
            head: "<tag>\n".into(),
            entries: (0..200)
                .map(|i| format!("- id: rule-{i}\n  lesson: x\n"))
                .collect(),
            tail: "</tag>\n".into(),
            patterns: "patterns\n".into(),
            highlights: vec!["- critical left unacknowledged: a (1 time(s))".into()],
        };
        let cut = bound_briefing(&b);
        assert!(cut.len() <= BRIEFING_MAX);
        assert!(cut.starts_with("<tag>\n- id: rule-0\n"));
        assert!(cut.contains("  lesson: x\n</tag>\npatterns\n"));
        assert!(cut.contains("critical left unacknowledged: a"));
        assert!(cut.ends_with("show the rest)\n"));
        let short = Briefing {
            patterns: "short\n".into(),
            ..Briefing::default()
        };
        assert_eq!(bound_briefing(&short), "short\n");
    }

    #[test]
    fn codex_stop_answers_carry_only_decision_and_reason() {
        let a = block_answer(Harness::Codex, "why").expect("codex blocks");
        let keys: Vec<&String> = a.as_object().expect("object").keys().collect();
        assert_eq!(keys, ["decision", "reason"]);
    }
}
