//! The real-harness scenarios for Codex CLI (`@openai/codex`, see `super`):
//! `codex exec` headless against the scripted model server, which speaks
//! OpenAI Responses (`POST /v1/responses`, answered as server-sent events:
//! `response.created`, `response.output_item.added` and `.done` per item,
//! `response.completed` with the response's id).
//!
//! Set-up a user needs, and each run here does in its fresh `CODEX_HOME`
//! (`$HOME/.codex`):
//! - a model provider: `model_provider = "scripted"` and
//!   `[model_providers.scripted]` with `base_url = "http://127.0.0.1:PORT/v1"`,
//!   `wire_api = "responses"` and `env_key` naming a variable that holds a
//!   dummy key;
//! - project trust: `[projects."<work tree>"] trust_level = "trusted"`
//!   (what `codex exec --trust` writes). Untrusted, the project's `.codex/`
//!   layer is not loaded: no hook, no MCP server;
//! - hook trust, per hook: `[hooks.state."<abs path of .codex/hooks.json>:<event>:<group>:<handler>"]`
//!   with `trusted_hash = "sha256:…"` (`<event>` in snake case, `<group>`
//!   the matcher group's index in that event's list, `<handler>` the hook's
//!   index in the group). The hash is Codex's own (its app server's
//!   `hooks/list` lists each hook's `key` and `currentHash`, which is what
//!   `/hooks` in the TUI writes); `hook_trust_is_the_hash_of_the_hook_as_codex_normalises_it`
//!   pins how it is computed. Only the user layer (`$CODEX_HOME/config.toml`)
//!   may hold it. Untrusted hooks are skipped without a word, headless or not.
//!
//! Codex runs a hook as `/bin/bash -c '<command>'` (whatever `$SHELL` is);
//! a command that exits with anything but 0 or 2 is reported (`hook:
//! PostToolUse Failed` on stderr) and otherwise ignored, exit 2 on
//! PreToolUse blocks the tool with stderr as the reason. git-swarm's
//! commands end in `|| true`.
//!
//! What else a script must know: a shell call's PostToolUse has no exit
//! code (`tool_response` is the output alone); the subagent tools sit in the
//! namespace `multi_agent_v1` and an MCP server's in `mcp__<server>`, both
//! deferred behind `tool_search` for catalog models (a direct call runs all
//! the same); an MCP tool without `readOnlyHint` needs an approval that
//! `codex exec` (approval `never`) refuses.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::server::{ModelServer, Reply, Request};
use super::{Outcome, tail};
use crate::common::{TestEnv, bin, mkfifo};

/// The model every run asks for: one of Codex's own catalog, so that no
/// fallback metadata is used.
const MODEL: &str = "gpt-5.5";

/// Longest a single `codex exec` run may take before it is killed.
const RUN_LIMIT: Duration = Duration::from_secs(120);

/// The namespace Codex 0.171 puts its subagent tools in (`spawn_agent`,
/// `wait_agent`, …); a call names it beside the tool's name.
const AGENTS: &str = "multi_agent_v1";

// ---------------------------------------------------------------------------
// What the model is asked, and what it answers.

/// One Responses request, as the script reads it.
struct Turn {
    body: Value,
}

impl Turn {
    /// The request if it is a Responses call.
    fn of(req: &Request) -> Option<Turn> {
        if req.method != "POST" || !req.path.ends_with("/responses") {
            return None;
        }
        assert!(
            req.header("content-encoding").is_none(),
            "Codex compressed its request ({:?}): the script reads JSON",
            req.header("content-encoding")
        );
        Some(Turn { body: req.json() })
    }

    fn input(&self) -> &[Value] {
        self.body["input"].as_array().map_or(&[], Vec::as_slice)
    }

    /// The first user message that is not Codex's `<environment_context>`:
    /// the user's prompt for the main agent, the task for a subagent.
    fn first(&self) -> String {
        (self.input().iter())
            .filter(|i| i["type"] == "message" && i["role"] == "user")
            .map(text_of)
            .find(|t| !t.starts_with("<environment_context>"))
            .unwrap_or_default()
    }

    /// What the tool call `call_id` (a function's, or a custom tool's such
    /// as `apply_patch`) returned, as text, if it has returned.
    fn result(&self, call_id: &str) -> Option<String> {
        (self.input().iter())
            .find(|i| {
                (i["type"] == "function_call_output" || i["type"] == "custom_tool_call_output")
                    && i["call_id"] == call_id
            })
            .map(|i| match &i["output"] {
                Value::String(s) => s.clone(),
                other => text_of(&json!({ "content": other })),
            })
    }

    /// The developer messages (Codex's instructions, and hook context).
    fn developer(&self) -> String {
        (self.input().iter())
            .filter(|i| i["type"] == "message" && i["role"] == "developer")
            .map(text_of)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The user messages after the first: continuations, notifications.
    fn later_user_messages(&self) -> Vec<String> {
        let first = self.first();
        (self.input().iter())
            .filter(|i| i["type"] == "message" && i["role"] == "user")
            .map(text_of)
            .filter(|t| !t.starts_with("<environment_context>") && *t != first)
            .collect()
    }

    /// How many answers of the model the request carries.
    fn answers(&self) -> usize {
        (self.input().iter())
            .filter(|i| i["type"] == "message" && i["role"] == "assistant")
            .count()
    }

    /// The names of the tools offered, namespaces as `ns/name`, a tool
    /// without a name (`tool_search`, `web_search`) by its type.
    fn tools(&self) -> Vec<String> {
        let mut names = Vec::new();
        for t in self.body["tools"].as_array().into_iter().flatten() {
            let name = (t["name"].as_str())
                .or_else(|| t["type"].as_str())
                .unwrap_or_default();
            match t["tools"].as_array() {
                Some(inner) => names.extend(
                    inner
                        .iter()
                        .filter_map(|f| f["name"].as_str())
                        .map(|f| format!("{name}/{f}")),
                ),
                None => names.push(name.to_owned()),
            }
        }
        names
    }

    /// Is the tool `ns/name` offered, inline or behind `tool_search`? For
    /// the models of its catalog (`gpt-5.5` here) Codex 0.171 defers its
    /// subagent and MCP tools to a `tool_search` the model calls first; a
    /// call to a deferred tool runs all the same.
    fn offers(&self, tool: &str) -> bool {
        let tools = self.tools();
        tools.iter().any(|t| t == tool || t == "tool_search")
    }
}

/// The text of a message item's `content`.
fn text_of(item: &Value) -> String {
    (item["content"].as_array().into_iter().flatten())
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The requests whose first user message contains `marker`.
fn turns(reqs: &[Request], marker: &str) -> Vec<Turn> {
    (reqs.iter())
        .filter_map(Turn::of)
        .filter(|t| t.first().contains(marker))
        .collect()
}

static RESPONSE: AtomicU64 = AtomicU64::new(1);

/// A streamed answer made of `items` (messages, function calls).
fn respond(items: Vec<Value>) -> Reply {
    let id = format!("resp_{}", RESPONSE.fetch_add(1, Ordering::Relaxed));
    let mut events = vec![json!({"type": "response.created", "response": {"id": id}})];
    for item in items {
        events.push(json!({"type": "response.output_item.added", "item": item}));
        events.push(json!({"type": "response.output_item.done", "item": item}));
    }
    events.push(json!({
        "type": "response.completed",
        "response": {"id": id, "usage": {"input_tokens": 10, "output_tokens": 2, "total_tokens": 12}}
    }));
    let events: Vec<(String, String)> = (events.iter())
        .map(|e| (e["type"].as_str().unwrap_or("?").to_owned(), e.to_string()))
        .collect();
    Reply::sse(
        events
            .iter()
            .map(|(name, data)| (Some(name.as_str()), data.clone())),
    )
}

fn say(text: &str) -> Reply {
    respond(vec![message(text)])
}

fn message(text: &str) -> Value {
    json!({
        "type": "message", "role": "assistant",
        "id": format!("msg_{}", RESPONSE.fetch_add(1, Ordering::Relaxed)),
        "content": [{"type": "output_text", "text": text}]
    })
}

/// A function call item; `namespace` for tools Codex groups (subagents, MCP).
fn call(call_id: &str, namespace: Option<&str>, name: &str, args: Value) -> Value {
    let mut item = json!({
        "type": "function_call", "id": format!("fc_{call_id}"), "call_id": call_id,
        "name": name, "arguments": args.to_string()
    });
    if let Some(ns) = namespace {
        item["namespace"] = json!(ns);
    }
    item
}

/// A call of `apply_patch`, Codex's freeform tool: its input is the patch.
fn patch(call_id: &str, text: String) -> Value {
    json!({
        "type": "custom_tool_call", "id": format!("ctc_{call_id}"), "call_id": call_id,
        "name": "apply_patch", "input": text
    })
}

/// `spawn_agent` with no `agent_type` (Codex offers none unless the user
/// defines roles): the default subagent.
fn spawn(call_id: &str, task: &str) -> Value {
    call(
        call_id,
        Some(AGENTS),
        "spawn_agent",
        json!({"message": task}),
    )
}

/// The subagent ids the spawn calls `call_ids` returned (`{"agent_id",
/// "nickname"}` as a JSON string).
fn spawned(t: &Turn, call_ids: &[&str]) -> Vec<String> {
    (call_ids.iter())
        .filter_map(|id| t.result(id))
        .filter_map(|out| serde_json::from_str::<Value>(&out).ok())
        .filter_map(|v| v["agent_id"].as_str().map(str::to_owned))
        .collect()
}

/// The main agent's part in a delegation: spawn one subagent per task in
/// one answer, wait for all of them, then finish.
fn delegate(t: &Turn, tasks: &[(&str, &str)]) -> Reply {
    let ids: Vec<&str> = tasks.iter().map(|(id, _)| *id).collect();
    if t.result(ids[0]).is_none() {
        return respond(tasks.iter().map(|(id, task)| spawn(id, task)).collect());
    }
    if t.result("call_wait").is_none() {
        let agents = spawned(t, &ids);
        return respond(vec![call(
            "call_wait",
            Some(AGENTS),
            "wait_agent",
            json!({"targets": agents, "timeout_ms": 60000}),
        )]);
    }
    let waited = t.result("call_wait").unwrap_or_default();
    let done =
        (spawned(t, &ids).iter()).all(|a| waited.contains(a) && waited.contains("completed"));
    if !done && t.result("call_wait_2").is_none() {
        // `wait_agent` returns when the first of its targets finishes.
        return respond(vec![call(
            "call_wait_2",
            Some(AGENTS),
            "wait_agent",
            json!({"targets": spawned(t, &ids), "timeout_ms": 60000}),
        )]);
    }
    say("MAIN DONE")
}

// ---------------------------------------------------------------------------
// Running Codex.

/// One `codex exec` run.
impl Outcome {
    /// The hook runs `codex exec` reports on stderr: `(event, status)`, as
    /// `hook: PostToolUse Completed` (or `Failed`, `Blocked`). Codex logs
    /// no durations there.
    fn hooks(&self) -> Vec<(String, String)> {
        (self.stderr.lines())
            .filter_map(|l| l.strip_prefix("hook: "))
            .filter_map(|l| l.split_once(' '))
            .map(|(e, s)| (e.to_owned(), s.to_owned()))
            .collect()
    }

    #[track_caller]
    fn finished(&self) -> &Outcome {
        assert_eq!(self.code, Some(0), "{}", self.show());
        assert!(self.stdout.contains("MAIN DONE"), "{}", self.show());
        self
    }
}

/// A repository, its HOME and a model server, ready for `codex exec`.
struct Codex {
    exe: PathBuf,
    env: TestEnv,
    server: ModelServer,
}

impl Codex {
    /// `None` (SKIPPED printed) when Codex is not installed.
    fn start(
        env: TestEnv,
        script: impl Fn(&Turn) -> Reply + Send + Sync + 'static,
    ) -> Option<Codex> {
        let exe = super::harness_bin("codex")?;
        let server = ModelServer::start(move |req| match Turn::of(req) {
            Some(t) => script(&t),
            None => Reply::status(404, "{}"),
        });
        let c = Codex { exe, env, server };
        c.user_config();
        Some(c)
    }

    fn codex_home(&self) -> PathBuf {
        self.env.home().join(".codex")
    }

    /// The work tree as Codex names it (absolute, symlinks resolved).
    fn root(&self) -> PathBuf {
        std::fs::canonicalize(&self.env.root).expect("canonical root")
    }

    /// `$CODEX_HOME/config.toml`: the scripted provider, no retries, no
    /// update check, no analytics.
    fn user_config(&self) {
        std::fs::create_dir_all(self.codex_home()).expect("CODEX_HOME");
        let config = format!(
            "model = \"{MODEL}\"\nmodel_provider = \"scripted\"\ncheck_for_update_on_startup = false\n\n\
             [model_providers.scripted]\nname = \"scripted\"\nbase_url = \"{}/v1\"\nwire_api = \"responses\"\n\
             env_key = \"SCRIPTED_API_KEY\"\nrequest_max_retries = 0\nstream_max_retries = 0\n\n\
             [analytics]\nenabled = false\n",
            self.server.url()
        );
        std::fs::write(self.codex_home().join("config.toml"), config).expect("config.toml");
    }

    /// Edits `$CODEX_HOME/config.toml`.
    fn edit_user_config(&self, edit: impl FnOnce(&mut toml_edit::DocumentMut)) {
        let path = self.codex_home().join("config.toml");
        let text = std::fs::read_to_string(&path).expect("config.toml");
        let mut doc: toml_edit::DocumentMut = text.parse().expect("config.toml is TOML");
        edit(&mut doc);
        std::fs::write(&path, doc.to_string()).expect("write config.toml");
    }

    /// Trusts the project as `codex exec --trust` does.
    fn trust_project(&self) {
        let root = self.root().to_string_lossy().into_owned();
        self.edit_user_config(|doc| {
            doc["projects"][root.as_str()]["trust_level"] = toml_edit::value("trusted");
        });
    }

    /// The hooks Codex finds for the work tree, from its app server's
    /// `hooks/list` (JSON-RPC over stdio): `key`, `currentHash`,
    /// `trustStatus`, `command`, … per hook.
    fn hooks_list(&self) -> Vec<Value> {
        use std::os::unix::process::CommandExt;
        let mut cmd = self.command(&Self::path_with_git_swarm());
        cmd.arg("app-server")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0);
        let mut child = cmd.spawn().expect("spawn codex app-server");
        let pgid = child.id();
        let mut stdin = child.stdin.take().expect("app-server stdin");
        let root = self.root();
        for msg in [
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"clientInfo": {"name": "git-swarm-tests", "version": "1"}}}),
            json!({"jsonrpc": "2.0", "method": "initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "hooks/list",
                   "params": {"cwds": [root]}}),
        ] {
            writeln!(stdin, "{msg}").expect("write to app-server");
        }
        let stdout = child.stdout.take().expect("app-server stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        let answer = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) => {
                    let v: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
                    if v["id"] == 2 {
                        break v;
                    }
                }
                Err(_) => {
                    kill_group(pgid);
                    panic!("codex app-server gave no hooks/list answer in 30 s");
                }
            }
        };
        drop(stdin);
        kill_group(pgid);
        let _ = child.wait();
        let data = &answer["result"]["data"][0];
        assert!(
            data["errors"].as_array().is_none_or(Vec::is_empty),
            "hooks/list: {answer:#}"
        );
        data["hooks"].as_array().cloned().unwrap_or_default()
    }

    /// Trusts every hook of git-swarm's as `/hooks` does: its `key` and
    /// `currentHash` under `[hooks.state]` in the user's config.
    fn trust_hooks(&self) {
        let hooks = self.hooks_list();
        assert!(
            hooks.iter().any(is_ours),
            "Codex lists none of git-swarm's hooks: {hooks:#?}"
        );
        self.edit_user_config(|doc| {
            for h in hooks.iter().filter(|h| is_ours(h)) {
                let key = h["key"].as_str().expect("hook key");
                let hash = h["currentHash"].as_str().expect("hook hash");
                doc["hooks"]["state"][key]["trusted_hash"] = toml_edit::value(hash);
            }
        });
    }

    /// Project and hooks trusted.
    fn trust(&self) {
        self.trust_project();
        self.trust_hooks();
    }

    fn install(&self, args: &[&str]) {
        let mut all = vec!["agents", "install", "codex"];
        all.extend_from_slice(args);
        self.env.swarm(&all).success();
    }

    /// The PATH of a run: git-swarm's folder first (the controlled env's).
    fn path_with_git_swarm() -> String {
        format!(
            "{}:{}",
            bin().parent().expect("bin dir").display(),
            std::env::var("PATH").unwrap_or_default()
        )
    }

    /// The host's PATH without any folder holding a `git-swarm`.
    fn path_without_git_swarm() -> String {
        let host = std::env::var("PATH").unwrap_or_default();
        let kept: Vec<&str> = (host.split(':'))
            .filter(|d| !d.is_empty() && !super::holds_git_swarm(Path::new(d)))
            .collect();
        kept.join(":")
    }

    /// `codex` with the controlled env, in the work tree.
    fn command(&self, path: &str) -> std::process::Command {
        let mut cmd = self.env.command(&self.exe, &self.env.root);
        cmd.env("PATH", path)
            .env("CODEX_HOME", self.codex_home())
            .env("SCRIPTED_API_KEY", "dummy-key");
        cmd
    }

    /// Runs `codex exec [EXTRA] PROMPT` with `path` as PATH, killed after
    /// [`RUN_LIMIT`].
    fn run(&self, prompt: &str, path: &str, extra: &[&str]) -> Outcome {
        use std::os::unix::process::CommandExt;
        let out_dir = self.env.tmp.path().join("runs");
        std::fs::create_dir_all(&out_dir).expect("runs dir");
        let n = std::fs::read_dir(&out_dir).map(|d| d.count()).unwrap_or(0) / 2;
        let (out_path, err_path) = (
            out_dir.join(format!("{n}.stdout")),
            out_dir.join(format!("{n}.stderr")),
        );
        let mut cmd = self.command(path);
        cmd.arg("exec")
            .args(extra)
            .arg("-C")
            .arg(&self.env.root)
            .arg(prompt)
            .stdout(std::fs::File::create(&out_path).expect("stdout file"))
            .stderr(std::fs::File::create(&err_path).expect("stderr file"))
            .stdin(Stdio::null())
            .process_group(0);
        let started = Instant::now();
        let mut child = cmd.spawn().expect("spawn codex");
        let pgid = child.id();
        let read = |code| Outcome {
            code,
            stdout: std::fs::read_to_string(&out_path).unwrap_or_default(),
            stderr: std::fs::read_to_string(&err_path).unwrap_or_default(),
            elapsed: started.elapsed(),
        };
        let code = loop {
            match child.try_wait().expect("wait codex") {
                Some(status) => break status.code(),
                None if started.elapsed() > RUN_LIMIT => {
                    kill_group(pgid);
                    let _ = child.wait();
                    panic!(
                        "codex ran past {RUN_LIMIT:?} and was killed:\n{}",
                        read(None).show()
                    );
                }
                None => std::thread::sleep(Duration::from_millis(20)),
            }
        };
        // Whatever it left behind (an MCP server, a hook) goes with it.
        kill_group(pgid);
        let out = read(code);
        println!(
            "codex run {n}: exit {:?} in {:.1}s, hooks: {:?}",
            out.code,
            out.elapsed.as_secs_f64(),
            out.hooks()
        );
        out
    }

    /// `git swarm log --format json`, the events of `kind`.
    fn events(&self, kind: &str) -> Vec<Value> {
        let out = self.env.swarm(&["log", "--format", "json"]);
        out.success();
        let all: Vec<Value> = serde_json::from_str(&out.stdout).expect("log is JSON");
        all.into_iter().filter(|e| e["kind"] == kind).collect()
    }
}

/// Is this `hooks/list` entry one that `agents install codex` wrote?
fn is_ours(hook: &Value) -> bool {
    (hook["command"].as_str()).is_some_and(|c| c.contains("git-swarm-agent-hook codex"))
}

/// Kills the process group `pgid` (the run's, which nothing else shares).
fn kill_group(pgid: u32) {
    let _ = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .stderr(Stdio::null())
        .status();
}

/// A folder that keeps each hook's payload as Codex sent it (`<ns>-<pid>-<event>.json`,
/// beside the shell that ran it, `.shell`, and its exit code and time, `.rc`), and
/// the PATH whose `git-swarm-agent-hook` keeps them before it runs the real one.
fn capturing(c: &Codex) -> (PathBuf, String) {
    let captured = c.env.tmp.path().join("captured");
    let wrapper = c.env.tmp.path().join("capture-bin");
    std::fs::create_dir_all(&captured).expect("captured dir");
    write_script(
        &wrapper.join(super::HOOK),
        &format!(
            "#!/bin/sh\nf={dir}/$(date +%s%N)-$$-$2.json\ncat > \"$f\"\ntr '\\0' ' ' < /proc/$PPID/cmdline > \"$f.shell\"\nstart=$(date +%s%N)\n{real} \"$@\" < \"$f\"\nrc=$?\necho \"$rc $(( ($(date +%s%N) - start) / 1000000 ))\" > \"$f.rc\"\nexit $rc\n",
            dir = captured.display(),
            real = super::hook_bin().display()
        ),
    );
    write_script(
        &wrapper.join("git-swarm"),
        &format!("#!/bin/sh\nexec {} \"$@\"\n", bin().display()),
    );
    let path = format!("{}:{}", wrapper.display(), Codex::path_without_git_swarm());
    (captured, path)
}

fn write_script(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(path.parent().expect("script dir")).expect("script dir");
    std::fs::write(path, text).expect("write script");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

fn repeat() -> usize {
    std::env::var("GIT_SWARM_HARNESS_REPEAT")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(20)
}

/// An initialised repository with one directive for the main session's
/// role (`coordinator`: Codex's SessionStart names no agent) besides the
/// template's `coder` ones.
fn repo_with_coordinator_directive() -> TestEnv {
    let env = TestEnv::initialised();
    env.write(
        ".swarm/directives/split-the-work.toml",
        "id = \"split-the-work\"\nlesson = \"Split the work into tasks a coder finishes in one sitting\"\npriority = \"high\"\napplies_to_agents = [\"coordinator\"]\nverify = [\"file_modified:src/**\"]\n",
    );
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "a coordinator directive"]);
    env
}

/// Installed and trusted, ready to run.
fn ready(env: TestEnv, script: impl Fn(&Turn) -> Reply + Send + Sync + 'static) -> Option<Codex> {
    let c = Codex::start(env, script)?;
    c.install(&[]);
    c.trust();
    Some(c)
}

// ---------------------------------------------------------------------------
// 1. The briefing, and the trust it takes.

#[test]
fn briefing_reaches_the_main_session_once_project_and_hooks_are_trusted() {
    let Some(c) = Codex::start(repo_with_coordinator_directive(), |_| say("MAIN DONE")) else {
        return;
    };
    c.install(&[]);
    let path = Codex::path_with_git_swarm();
    let briefed = |c: &Codex, marker: &str| -> bool {
        let reqs = c.server.requests();
        let first = turns(&reqs, marker).into_iter().next();
        let first = first.unwrap_or_else(|| panic!("no main request for {marker}"));
        first
            .developer()
            .contains("<delegate_knowledge_directives role=\"coordinator\">")
    };

    // Untrusted project: its `.codex/` is not read, no hook runs.
    let run = c.run("gs36-brief-1: say hello", &path, &[]);
    run.finished();
    assert!(run.hooks().is_empty(), "{}", run.show());
    assert!(!briefed(&c, "gs36-brief-1"));

    // Trusted project, untrusted hooks: skipped without a word.
    c.trust_project();
    let hooks = c.hooks_list();
    let ours: Vec<&Value> = hooks.iter().filter(|h| is_ours(h)).collect();
    assert_eq!(ours.len(), 5, "{hooks:#?}");
    assert!(
        ours.iter().all(|h| h["trustStatus"] == "untrusted"),
        "{ours:#?}"
    );
    let run = c.run("gs36-brief-2: say hello", &path, &[]);
    run.finished();
    assert!(run.hooks().is_empty(), "{}", run.show());
    assert!(!run.stderr.contains("hook agent"), "{}", run.show());
    assert!(!briefed(&c, "gs36-brief-2"));

    // Both trusted: the briefing is a developer message of the first request.
    c.trust_hooks();
    let hooks = c.hooks_list();
    assert!(
        (hooks.iter().filter(|h| is_ours(h))).all(|h| h["trustStatus"] == "trusted"),
        "{hooks:#?}"
    );
    let run = c.run("gs36-brief-3: say hello", &path, &[]);
    run.finished();
    assert_eq!(
        run.hooks(),
        [("SessionStart".to_owned(), "Completed".to_owned())],
        "{}",
        run.show()
    );
    let reqs = c.server.requests();
    let first = turns(&reqs, "gs36-brief-3")
        .into_iter()
        .next()
        .expect("main request");
    let dev = first.developer();
    assert!(
        dev.contains("<delegate_knowledge_directives role=\"coordinator\">")
            && dev.contains("Split the work into tasks a coder finishes in one sitting"),
        "the first main request lacks the briefing:\n{}",
        tail(&dev, 3000)
    );
    assert!(!dev.contains("id: no-private-keys"), "{}", tail(&dev, 3000));
}

/// The trusted hash is `sha256:` and the hex SHA-256 of the hook's
/// normalised identity as compact JSON with sorted keys:
/// `{"event_name":"<snake_case>","hooks":[{"async":false,"command":"…","timeout":<s>,"type":"command"}],"matcher":"…"}`
/// (`matcher` left out when the group has none; `timeout` defaults to 600).
/// `agents status` can check `hooks.state` without running Codex.
#[test]
fn hook_trust_is_the_hash_of_the_hook_as_codex_normalises_it() {
    let Some(c) = Codex::start(TestEnv::initialised(), |_| say("MAIN DONE")) else {
        return;
    };
    c.install(&[]);
    c.trust_project();
    let hooks_json = c.root().join(".codex/hooks.json");
    let hooks = c.hooks_list();
    let ours: Vec<&Value> = hooks.iter().filter(|h| is_ours(h)).collect();
    assert_eq!(ours.len(), 5, "{hooks:#?}");
    for h in ours {
        let event = h["key"].as_str().expect("key");
        let rest = event
            .strip_prefix(&format!("{}:", hooks_json.display()))
            .unwrap_or_else(|| panic!("key {event} is not <hooks.json path>:…"));
        let (event, position) = rest.split_once(':').expect("event:group:handler");
        assert_eq!(position, "0:0", "{h:#}");
        let mut identity = json!({
            "event_name": event,
            "hooks": [{"async": false, "command": h["command"], "timeout": h["timeoutSec"], "type": "command"}],
        });
        if let Some(m) = h["matcher"].as_str() {
            identity["matcher"] = json!(m);
        }
        // serde_json's maps are sorted by key, and `to_string` is compact.
        let hash = sha256_hex(identity.to_string().as_bytes());
        assert_eq!(h["currentHash"], format!("sha256:{hash}"), "{identity}");
    }
    // `agents status` computes the same keys and hashes, and reads the
    // trust Codex keeps: untrusted hooks first, then trusted.
    let codex_trust = |c: &Codex| -> Value {
        let run = c.env.swarm(&["agents", "status", "--format", "json"]);
        let v: Value = serde_json::from_str(&run.stdout).expect("status JSON");
        v["harnesses"][1]["trust"].clone()
    };
    let before = codex_trust(&c);
    assert_eq!(before["state"], "not_trusted", "{before}");
    assert!(
        before["todo"]
            .as_str()
            .is_some_and(|t| t.contains("5 of git-swarm's 5 hooks")),
        "{before}"
    );
    c.trust_hooks();
    let after = codex_trust(&c);
    assert_eq!(after["state"], "trusted", "{after}");
}

/// SHA-256 with coreutils' `sha256sum` (the crate has no hash of its own).
fn sha256_hex(bytes: &[u8]) -> String {
    let mut child = std::process::Command::new("sha256sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("sha256sum");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(bytes)
        .expect("write sha256sum");
    let out = child.wait_with_output().expect("sha256sum output");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_owned()
}

// ---------------------------------------------------------------------------
// 2. The default subagent gets the template's coder directives.

const TASK_DEFAULT: &str = "SUBTASK-DEFAULT: add a config loader in src/config.rs";

/// A main agent that spawns one default subagent with `task`; the subagent
/// answers `final_message` (and, asked again, `after_asked`).
fn one_subagent(
    task: &'static str,
    final_message: &'static str,
    after_asked: &'static str,
) -> impl Fn(&Turn) -> Reply + Send + Sync + 'static {
    move |t: &Turn| {
        if t.first().contains("SUBTASK-") {
            return if t
                .later_user_messages()
                .iter()
                .any(|m| m.contains("<hook_prompt"))
            {
                say(after_asked)
            } else {
                say(final_message)
            };
        }
        delegate(t, &[("call_spawn", task)])
    }
}

#[test]
fn the_default_subagent_gets_the_coder_directives() {
    let Some(c) = ready(
        TestEnv::initialised(),
        one_subagent(TASK_DEFAULT, "Done.", "Done."),
    ) else {
        return;
    };
    c.run("MAIN-DEFAULT spawn one", &Codex::path_with_git_swarm(), &[])
        .finished();
    let reqs = c.server.requests();
    let main = turns(&reqs, "MAIN-DEFAULT");
    let first = main.first().expect("main request");
    assert!(
        first.offers(&format!("{AGENTS}/spawn_agent")),
        "{:?}",
        first.tools()
    );
    let sub = turns(&reqs, "SUBTASK-DEFAULT");
    let first = sub.first().expect("the subagent asked the model");
    let dev = first.developer();
    assert!(
        dev.contains("<delegate_knowledge_directives delegation=")
            && dev.contains("for the coder role")
            && dev.contains("id: no-private-keys"),
        "the default subagent's first request lacks the coder block:\n{}",
        tail(&dev, 3000)
    );
    let shown = c.events("shown");
    assert_eq!(shown.len(), 1, "{shown:#?}");
}

/// A hive's lesson (issue 42) reaches a real Codex subagent, named by its
/// origin, once the project's subscription is committed on main.
#[test]
fn a_hive_lesson_reaches_the_default_subagent_with_its_origin() {
    let env = TestEnv::initialised();
    super::subscribe_to_a_hive(&env);
    let Some(c) = ready(env, one_subagent(TASK_DEFAULT, "Done.", "Done.")) else {
        return;
    };
    c.run("MAIN-DEFAULT spawn one", &Codex::path_with_git_swarm(), &[])
        .finished();
    let reqs = c.server.requests();
    let sub = turns(&reqs, "SUBTASK-DEFAULT");
    let dev = sub
        .first()
        .expect("the subagent asked the model")
        .developer();
    assert!(
        super::has_hive_lesson(&dev),
        "the subagent lacks the hive's lesson:\n{}",
        tail(&dev, 3000)
    );
    let shown = c.events("shown");
    assert!(
        shown.iter().any(|e| e["directives"]
            .as_array()
            .is_some_and(|d| d.iter().any(|i| i == "flaky-tests-are-bugs"))),
        "{shown:#?}"
    );
}

// ---------------------------------------------------------------------------
// 3. Two subagents spawned in one turn each get their own task's directive.

const TASK_A: &str = "SUBTASK-A: fix the flaky parser tokenizer in src/parse.rs";
const TASK_B: &str = "SUBTASK-B: write the database migration for the users schema";

/// What one subagent was shown, as its first request has it.
#[derive(Debug, PartialEq)]
enum Shown {
    Own,
    /// The decoy, which wins when no task is known: the task was lost.
    Lost,
    /// The other task's directive.
    Crossed,
    /// No block at all.
    Nothing,
    /// The subagent never asked the model.
    Missing,
}

fn judge(reqs: &[Request], marker: &str, own: &str, other: &str) -> Shown {
    let Some(first) = turns(reqs, marker).into_iter().next() else {
        return Shown::Missing;
    };
    let dev = first.developer();
    if dev.contains(&format!("id: {other}")) {
        Shown::Crossed
    } else if dev.contains(&format!("id: {own}")) {
        Shown::Own
    } else if dev.contains("id: gamma-decoy") {
        Shown::Lost
    } else {
        Shown::Nothing
    }
}

/// One directive per task and a decoy that wins when no task is known, one
/// directive a delegation: a lost task shows the decoy, a swapped one the
/// other task's directive.
fn one_directive_per_task(env: &TestEnv) {
    for f in [
        "no-private-keys",
        "run-tests-before-handoff",
        "lockfile-with-manifest",
    ] {
        std::fs::remove_file(env.path(&format!(".swarm/directives/{f}.toml")))
            .expect("remove template directive");
    }
    let add = |id: &str, lesson: &str, priority: &str, trigger: Option<&str>| {
        let mut args = vec![
            "add",
            "--id",
            id,
            "--lesson",
            lesson,
            "--agents",
            "coder",
            "--require",
            "say how it was checked",
            "--priority",
            priority,
            "--confidence",
            "0.9",
        ];
        if let Some(t) = trigger {
            args.extend(["--trigger", t]);
        }
        env.swarm(&args).success();
    };
    add(
        "alpha-parser",
        "Keep the parser's tokenizer free of allocation in its inner loop",
        "medium",
        Some("flaky parser tokenizer"),
    );
    add(
        "beta-migration",
        "Make every database migration reversible",
        "medium",
        Some("database migration schema"),
    );
    add(
        "gamma-decoy",
        "Keep commits small, each one building and passing the tests",
        "high",
        None,
    );
    let config = env.read(".swarm/config.toml");
    assert!(config.contains("delegate_max_inject_count = 8"), "{config}");
    env.write(
        ".swarm/config.toml",
        config.replace(
            "delegate_max_inject_count = 8",
            "delegate_max_inject_count = 1",
        ),
    );
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "one directive per task, and a decoy"]);
    for (task, want) in [
        (TASK_A, "alpha-parser"),
        (TASK_B, "beta-migration"),
        ("", "gamma-decoy"),
    ] {
        let mut args = vec!["inject", "--role", "coder", "--dry-run"];
        if !task.is_empty() {
            args.extend(["--task", task]);
        }
        let out = env.swarm(&args);
        out.success();
        let ids: Vec<&str> = (out.stdout.lines())
            .filter_map(|l| l.strip_prefix("- id: "))
            .collect();
        assert_eq!(ids, [want], "inject for {task:?}:\n{}", out.stdout);
    }
}

#[test]
fn two_subagents_in_one_turn_each_get_their_own_task() {
    let env = TestEnv::initialised();
    one_directive_per_task(&env);
    let Some(c) = ready(env, |t| {
        if t.first().contains("SUBTASK-") {
            return say("Done.");
        }
        delegate(t, &[("call_spawn_a", TASK_A), ("call_spawn_b", TASK_B)])
    }) else {
        return;
    };
    let path = Codex::path_with_git_swarm();
    let mut wrong = Vec::new();
    let n = repeat();
    for i in 0..n {
        let before = c.server.requests().len();
        c.run(&format!("MAIN-TWO-{i} spawn two"), &path, &[])
            .finished();
        let reqs = c.server.requests().split_off(before);
        let a = judge(&reqs, "SUBTASK-A", "alpha-parser", "beta-migration");
        let b = judge(&reqs, "SUBTASK-B", "beta-migration", "alpha-parser");
        if a != Shown::Own || b != Shown::Own {
            wrong.push((i, a, b));
        }
        // Each run from the same history: with no task, the ranking of
        // the next run would follow what this one showed, and a lost task
        // could pass for a crossed one.
        c.env.git(&["clean", "-fdq", ".swarm"]);
        c.env.git(&["checkout", "-q", "--", ".swarm"]);
    }
    let lost = (wrong.iter())
        .filter(|(_, a, b)| *a == Shown::Lost || *b == Shown::Lost)
        .count();
    let crossed = (wrong.iter())
        .filter(|(_, a, b)| *a == Shown::Crossed || *b == Shown::Crossed)
        .count();
    println!(
        "two subagents in one turn, {n} runs: {lost} lost a task, {crossed} crossed tasks, {} wrong in all",
        wrong.len()
    );
    assert!(
        wrong.is_empty(),
        "{} of {n} runs showed a subagent the wrong directives (run, A, B): {wrong:?}",
        wrong.len()
    );
}

// ---------------------------------------------------------------------------
// 4. Acks recorded, 5. asked for once.

#[test]
fn the_subagents_acks_are_recorded() {
    let Some(c) = ready(
        TestEnv::initialised(),
        one_subagent(
            TASK_DEFAULT,
            "Fixed.\nKNOWLEDGE_APPLIED:no-private-keys\nKNOWLEDGE_N_A:lockfile-with-manifest reason=no lockfile touched",
            "asked again",
        ),
    ) else {
        return;
    };
    c.run("MAIN-ACKS spawn one", &Codex::path_with_git_swarm(), &[])
        .finished();
    let shown = c.events("shown");
    assert_eq!(shown.len(), 1, "{shown:#?}");
    let mut got: Vec<(String, String)> = (c.events("ack").iter())
        .map(|a| {
            assert_eq!(a["delegation"], shown[0]["id"], "{a}");
            (
                a["directive"].as_str().unwrap_or_default().to_owned(),
                a["status"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            ("lockfile-with-manifest".to_owned(), "n_a".to_owned()),
            ("no-private-keys".to_owned(), "applied".to_owned()),
        ]
    );
    let reqs = c.server.requests();
    let asked = (turns(&reqs, "SUBTASK-DEFAULT").iter()).any(|t| {
        t.later_user_messages()
            .iter()
            .any(|m| m.contains("<hook_prompt"))
    });
    assert!(!asked, "a subagent that acknowledged was asked again");
}

/// The continuations (`<hook_prompt …>`) a subagent's requests carry, and
/// the most answers any of its requests holds.
fn continuations(reqs: &[Request], marker: &str) -> (Vec<String>, usize) {
    let sub = turns(reqs, marker);
    let last = sub.iter().max_by_key(|t| t.answers());
    let asked = last.map_or_else(Vec::new, |t| {
        (t.later_user_messages().into_iter())
            .filter(|m| m.contains("<hook_prompt"))
            .collect()
    });
    (asked, last.map_or(0, Turn::answers))
}

#[test]
fn a_missing_ack_is_asked_for_once_with_the_exact_lines() {
    // Acknowledges once asked.
    let Some(c) = ready(
        TestEnv::initialised(),
        one_subagent(
            TASK_DEFAULT,
            "Done, no acks.",
            "Done.\nKNOWLEDGE_APPLIED:no-private-keys",
        ),
    ) else {
        return;
    };
    c.run("MAIN-ASK spawn one", &Codex::path_with_git_swarm(), &[])
        .finished();
    let reqs = c.server.requests();
    let (asked, answers) = continuations(&reqs, "SUBTASK-DEFAULT");
    assert_eq!(asked.len(), 1, "{asked:#?}");
    assert!(
        asked[0].contains("\nKNOWLEDGE_APPLIED:no-private-keys"),
        "the continuation lacks the exact line: {}",
        asked[0]
    );
    assert_eq!(answers, 1, "{asked:#?}");
    let acks = c.events("ack");
    assert!(
        acks.iter()
            .any(|a| a["directive"] == "no-private-keys" && a["status"] == "applied"),
        "{acks:#?}"
    );

    // Never acknowledges: asked once, then let go.
    let Some(c) = ready(
        TestEnv::initialised(),
        one_subagent(TASK_DEFAULT, "Done, no acks.", "Still no acks."),
    ) else {
        return;
    };
    c.run(
        "MAIN-STUBBORN spawn one",
        &Codex::path_with_git_swarm(),
        &[],
    )
    .finished();
    let reqs = c.server.requests();
    let (asked, answers) = continuations(&reqs, "SUBTASK-DEFAULT");
    assert_eq!(asked.len(), 1, "asked {} times: {asked:#?}", asked.len());
    assert_eq!(answers, 1, "the subagent was not let go after one ask");
    let sub_requests = turns(&reqs, "SUBTASK-DEFAULT").len();
    assert_eq!(
        sub_requests, 2,
        "the subagent asked the model {sub_requests} times"
    );
}

// ---------------------------------------------------------------------------
// 6. A failing tool call becomes a candidate with its role.

/// What the failing shell call prints. Codex's PostToolUse carries no exit
/// code (`tool_response` is the output alone), so git-swarm reads the
/// output: a compiler-style `error:` line.
const FAILING: &str = "echo gs36-out; echo 'error: gs36 build failed' >&2; exit 3";
const SUB_FAILING: &str = "echo gs36-sub-out; echo 'error: gs36 sub build failed' >&2; exit 3";

/// The main agent runs [`FAILING`] (and with `TASK_SHELL` a subagent runs
/// [`SUB_FAILING`]), then finishes.
fn shell_script(t: &Turn) -> Reply {
    let first = t.first();
    if first.contains("SUBTASK-SHELL") {
        return match t.result("call_sub_shell") {
            None => respond(vec![call(
                "call_sub_shell",
                None,
                "exec_command",
                json!({"cmd": SUB_FAILING}),
            )]),
            Some(_) => say("Done.\nKNOWLEDGE_APPLIED:no-private-keys"),
        };
    }
    match t.result("call_shell") {
        None => respond(vec![call(
            "call_shell",
            None,
            "exec_command",
            json!({"cmd": FAILING}),
        )]),
        Some(_) if first.contains("MAIN-SUB") => delegate(t, &[("call_spawn", TASK_SHELL)]),
        Some(_) => say("MAIN DONE"),
    }
}

const TASK_SHELL: &str = "SUBTASK-SHELL: build the parser and report";

/// What the model got back for the main agent's shell call.
fn shell_result(server: &ModelServer, marker: &str) -> String {
    let reqs = server.requests();
    (turns(&reqs, marker).iter())
        .find_map(|t| t.result("call_shell"))
        .unwrap_or_else(|| panic!("no request returned the shell call"))
}

/// The model saw the shell call's own result: Codex's wrapper with the exit
/// code and both streams, no hook text.
#[track_caller]
fn assert_untouched(result: &str, run: &Outcome) {
    assert!(
        result.contains("Process exited with code 3")
            && result.contains("gs36-out")
            && result.contains("error: gs36 build failed"),
        "the model did not get the tool's own result: {result}\n{}",
        run.show()
    );
    for hook_text in ["git-swarm", "command not found", "blocked", "hook"] {
        assert!(
            !result.contains(hook_text),
            "hook text `{hook_text}` reached the tool result: {result}"
        );
    }
}

#[test]
fn a_failing_shell_call_becomes_a_candidate_with_its_role() {
    let Some(c) = ready(repo_with_coordinator_directive(), shell_script) else {
        return;
    };
    let run = c.run("MAIN-SUB run it", &Codex::path_with_git_swarm(), &[]);
    run.finished();
    assert_untouched(&shell_result(&c.server, "MAIN-SUB"), &run);
    let found = super::candidates(&c.env);
    let of = |command: &str| {
        (found.iter())
            .find(|v| v["command"] == command)
            .unwrap_or_else(|| panic!("no candidate for {command}: {found:#?}"))
    };
    let main = of(FAILING);
    assert_eq!(
        (&main["class"], &main["harness"], &main["role"]),
        (&json!("failure"), &json!("codex"), &json!("coordinator")),
        "{main:#}"
    );
    assert_eq!(main["excerpt"], "error: gs36 build failed", "{main:#}");
    let sub = of(SUB_FAILING);
    assert_eq!(
        (&sub["class"], &sub["role"]),
        (&json!("failure"), &json!("coder")),
        "the subagent's failing call: {sub:#}"
    );
}

// ---------------------------------------------------------------------------
// 7. MCP.

/// The main agent calls git-swarm's `status` over MCP (Codex offers an MCP
/// server's tools in the namespace `mcp__<server, - as _>`), then finishes.
fn mcp_script(t: &Turn) -> Reply {
    match t.result("call_mcp") {
        None => respond(vec![call(
            "call_mcp",
            Some("mcp__git_swarm"),
            "status",
            json!({}),
        )]),
        Some(_) => say("MAIN DONE"),
    }
}

/// What the model got back from `status`, after checking it was offered.
fn mcp_result(c: &Codex, marker: &str) -> String {
    let reqs = c.server.requests();
    let main = turns(&reqs, marker);
    let first = main.first().expect("main request");
    assert!(
        first.offers("mcp__git_swarm/status"),
        "git-swarm's MCP tools are not offered: {:?}",
        first.tools()
    );
    (main.iter())
        .find_map(|t| t.result("call_mcp"))
        .expect("the MCP call returned")
}

#[test]
fn the_mcp_status_tool_answers_the_model_once_approved() {
    let Some(c) = Codex::start(TestEnv::initialised(), mcp_script) else {
        return;
    };
    c.install(&["--mcp"]);
    c.trust();
    // Approval of git-swarm's tools for this run, as a user may set it in
    // their own config; `codex exec` never asks.
    let run = c.run(
        "MAIN-MCP-APPROVED status",
        &Codex::path_with_git_swarm(),
        &[
            "-c",
            "mcp_servers.git-swarm.default_tools_approval_mode=\"approve\"",
        ],
    );
    run.finished();
    let result = mcp_result(&c, "MAIN-MCP-APPROVED");
    assert!(
        result.contains("\"unacknowledged_criticals\"") && result.contains("\"index\""),
        "the status report did not reach the model: {result}"
    );
}

/// What a user gets from `agents install codex --mcp` alone. Codex 0.171
/// asks approval for every MCP tool without a `readOnlyHint` annotation, and
/// `codex exec` (approval `never`) refuses the call: "MCP tool call requires
/// approval, but approval policy is never".
#[test]
fn the_mcp_status_tool_answers_the_model_with_the_install_defaults() {
    let Some(c) = Codex::start(TestEnv::initialised(), mcp_script) else {
        return;
    };
    c.install(&["--mcp"]);
    c.trust();
    let run = c.run("MAIN-MCP status", &Codex::path_with_git_swarm(), &[]);
    run.finished();
    let result = mcp_result(&c, "MAIN-MCP");
    assert!(
        result.contains("\"unacknowledged_criticals\""),
        "the status report did not reach the model: {result}"
    );
}

// ---------------------------------------------------------------------------
// 8. Uninstall, to the byte.

#[test]
fn uninstall_after_a_run_restores_the_configs_to_the_byte() {
    let Some(c) = Codex::start(TestEnv::initialised(), shell_script) else {
        return;
    };
    let config = "# my Codex settings\nmodel_reasoning_effort = \"high\"\n\n[mcp_servers.db]   # the team's\ncommand = \"db-mcp\"\nargs = [\"--ro\"]\nenabled = false\n";
    let hooks = "{\n  \"hooks\": {\n    \"Stop\": [ { \"hooks\": [ { \"type\": \"command\", \"command\": \"true\" } ] } ]\n  }\n}\n";
    c.env.write(".codex/config.toml", config);
    c.env.write(".codex/hooks.json", hooks);
    c.install(&["--mcp"]);
    assert_ne!(c.env.read(".codex/hooks.json"), hooks);
    assert_ne!(c.env.read(".codex/config.toml"), config);
    c.trust();
    let run = c.run("MAIN-UNINSTALL run it", &Codex::path_with_git_swarm(), &[]);
    run.finished();
    assert!(
        run.hooks()
            .contains(&("PostToolUse".to_owned(), "Completed".to_owned())),
        "{}",
        run.show()
    );
    c.env
        .swarm(&["agents", "uninstall", "codex", "--mcp"])
        .success();
    assert_eq!(c.env.read(".codex/hooks.json"), hooks);
    assert_eq!(c.env.read(".codex/config.toml"), config);

    // Without files of the user's, uninstall leaves none behind.
    let fresh = TestEnv::initialised();
    fresh
        .swarm(&["agents", "install", "codex", "--mcp"])
        .success();
    fresh
        .swarm(&["agents", "uninstall", "codex", "--mcp"])
        .success();
    assert!(
        !fresh.exists(".codex/hooks.json") && !fresh.exists(".codex/config.toml"),
        "uninstall left files behind"
    );
}

// ---------------------------------------------------------------------------
// 9. Fail-open.

#[test]
fn a_missing_git_swarm_leaves_the_tool_results_untouched() {
    let Some(c) = ready(TestEnv::initialised(), shell_script) else {
        return;
    };
    let run = c.run("MAIN-MISSING run it", &Codex::path_without_git_swarm(), &[]);
    run.finished();
    assert_untouched(&shell_result(&c.server, "MAIN-MISSING"), &run);
    // `|| true`: exit 127 never shows as a failed hook.
    assert!(
        run.hooks().iter().all(|(_, s)| s == "Completed") && !run.hooks().is_empty(),
        "{}",
        run.show()
    );
}

#[test]
fn a_git_swarm_that_exits_3_leaves_the_tool_results_untouched() {
    let Some(c) = ready(TestEnv::initialised(), shell_script) else {
        return;
    };
    let fake = c.env.tmp.path().join("fake-bin");
    write_script(
        &fake.join(super::HOOK),
        "#!/bin/sh\necho 'gs36 fake git-swarm'\necho 'gs36 fake git-swarm on stderr' >&2\nexit 3\n",
    );
    let path = format!("{}:{}", fake.display(), Codex::path_without_git_swarm());
    let run = c.run("MAIN-EXIT3 run it", &path, &[]);
    run.finished();
    let result = shell_result(&c.server, "MAIN-EXIT3");
    assert_untouched(&result, &run);
    assert!(!result.contains("gs36 fake"), "{result}");
}

#[test]
fn a_fifo_config_leaves_the_tool_results_untouched() {
    let Some(c) = ready(TestEnv::initialised(), shell_script) else {
        return;
    };
    let config = c.env.path(".swarm/config.toml");
    std::fs::remove_file(&config).expect("remove config");
    mkfifo(&config);
    let run = c.run("MAIN-FIFO run it", &Codex::path_with_git_swarm(), &[]);
    run.finished();
    assert_untouched(&shell_result(&c.server, "MAIN-FIFO"), &run);
    assert!(
        run.elapsed < Duration::from_secs(30),
        "a hook waited on the FIFO: {}",
        run.show()
    );
}

/// Without git-swarm's `|| true`: Codex reports a hook that exits 127 or 3
/// as failed and goes on (the model's results untouched); exit 2 on
/// PreToolUse blocks the spawn with stderr as the reason.
#[test]
fn bare_hook_commands_codex_reports_failed_and_exit_2_blocks() {
    let script = |t: &Turn| {
        let first = t.first();
        if first.contains("SUBTASK-") {
            return say("Done.");
        }
        if first.contains("MAIN-BARE-SPAWN") {
            return match t.result("call_spawn") {
                None => respond(vec![spawn("call_spawn", TASK_DEFAULT)]),
                Some(_) => say("MAIN DONE"),
            };
        }
        shell_script(t)
    };
    let Some(c) = Codex::start(TestEnv::initialised(), script) else {
        return;
    };
    c.install(&[]);
    let bare = c.env.read(".codex/hooks.json").replace(" || true", "");
    c.env.write(".codex/hooks.json", bare);
    c.trust();

    let run = c.run("MAIN-BARE run it", &Codex::path_without_git_swarm(), &[]);
    run.finished();
    assert_untouched(&shell_result(&c.server, "MAIN-BARE"), &run);
    assert!(
        run.hooks()
            .contains(&("PostToolUse".to_owned(), "Failed".to_owned())),
        "{}",
        run.show()
    );

    let fake = c.env.tmp.path().join("fake-bin");
    write_script(
        &fake.join(super::HOOK),
        "#!/bin/sh\necho 'gs36 fake git-swarm' >&2\nexit 2\n",
    );
    let path = format!("{}:{}", fake.display(), Codex::path_without_git_swarm());
    let run = c.run("MAIN-BARE-SPAWN spawn one", &path, &[]);
    run.finished();
    assert!(
        run.hooks()
            .contains(&("PreToolUse".to_owned(), "Blocked".to_owned())),
        "{}",
        run.show()
    );
    let reqs = c.server.requests();
    let back = (turns(&reqs, "MAIN-BARE-SPAWN").iter())
        .find_map(|t| t.result("call_spawn"))
        .expect("the spawn returned");
    assert!(
        back.contains("blocked by PreToolUse hook: gs36 fake git-swarm"),
        "{back}"
    );
    assert!(
        turns(&reqs, "SUBTASK-").is_empty(),
        "a blocked spawn started"
    );
}

// ---------------------------------------------------------------------------
// The payloads, as Codex sends them.

#[test]
fn payloads_as_codex_sends_them() {
    let script = |t: &Turn| {
        let first = t.first();
        if first.contains("SUBTASK-SHELL") {
            return match t.result("call_sub_shell") {
                None => respond(vec![call(
                    "call_sub_shell",
                    None,
                    "exec_command",
                    json!({"cmd": SUB_FAILING}),
                )]),
                // No ack first: asked once, then it acknowledges.
                Some(_)
                    if t.later_user_messages()
                        .iter()
                        .any(|m| m.contains("<hook_prompt")) =>
                {
                    say("Done.\nKNOWLEDGE_APPLIED:no-private-keys")
                }
                Some(_) => say("Done."),
            };
        }
        if t.result("call_shell").is_none() {
            return respond(vec![call(
                "call_shell",
                None,
                "exec_command",
                json!({"cmd": FAILING}),
            )]);
        }
        if t.result("call_mcp").is_none() {
            return respond(vec![call(
                "call_mcp",
                Some("mcp__git_swarm"),
                "status",
                json!({}),
            )]);
        }
        delegate(t, &[("call_spawn", TASK_SHELL)])
    };
    let Some(c) = Codex::start(repo_with_coordinator_directive(), script) else {
        return;
    };
    c.install(&["--mcp"]);
    c.trust();
    let (captured, path) = capturing(&c);
    let run = c.run(
        "MAIN-CAPTURE do it",
        &path,
        &[
            "-c",
            "mcp_servers.git-swarm.default_tools_approval_mode=\"approve\"",
        ],
    );
    run.finished();

    let mut files: Vec<PathBuf> = (std::fs::read_dir(&captured).expect("captured"))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut named: Vec<(String, String)> = Vec::new();
    let mut times: Vec<(String, String)> = Vec::new();
    for f in &files {
        let raw = std::fs::read_to_string(f).expect("payload");
        let v: Value = serde_json::from_str(&raw).expect("payload JSON");
        let event = v["hook_event_name"].as_str().unwrap_or("?");
        let tool = v["tool_name"].as_str().unwrap_or("");
        let command = v["tool_input"]["command"].as_str().unwrap_or("");
        let name = match (event, tool) {
            ("SessionStart", _) => "session-start".to_owned(),
            ("PreToolUse", "spawn_agent") => "pre-tool-use-spawn-agent".to_owned(),
            ("PostToolUse", "spawn_agent") => "post-tool-use-spawn-agent".to_owned(),
            ("PostToolUse", _) if command == FAILING => "post-tool-use-failing".to_owned(),
            ("PostToolUse", _) if command == SUB_FAILING => {
                "subagent-post-tool-use-failing".to_owned()
            }
            ("PostToolUse", t) if t.contains("wait_agent") => "post-tool-use-wait-agent".to_owned(),
            ("PostToolUse", t) if t.contains("status") => "post-tool-use-mcp".to_owned(),
            ("SubagentStart", _) => "subagent-start".to_owned(),
            ("SubagentStop", _) if v["stop_hook_active"] == true => {
                "subagent-stop-active".to_owned()
            }
            ("SubagentStop", _) => "subagent-stop".to_owned(),
            _ => format!("{event}-{tool}"),
        };
        if named.iter().any(|(n, _)| *n == name) {
            // A second wait, say: kept apart.
            named.push((format!("{name}-{}", named.len()), raw));
        } else {
            named.push((name.clone(), raw));
        }
        let rc = std::fs::read_to_string(f.with_extension("json.rc")).unwrap_or_default();
        // The file's name starts with the time the hook started, in ns.
        let started: u128 = (f.file_name().and_then(|n| n.to_str()))
            .and_then(|n| n.split('-').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_default();
        times.push((name, format!("{} at {started}", rc.trim())));
    }
    let first = (times.iter())
        .filter_map(|(_, t)| t.rsplit(' ').next()?.parse::<u128>().ok())
        .min()
        .unwrap_or_default();
    for (name, t) in &times {
        let (rc_ms, at) = t.rsplit_once(" at ").unwrap_or((t, "0"));
        let at: u128 = at.parse().unwrap_or_default();
        println!(
            "hook {name}: started at +{} ms, exit and wall ms of git-swarm: {rc_ms}",
            at.saturating_sub(first) / 1_000_000
        );
    }
    let get = |name: &str| -> Value {
        let (_, raw) = (named.iter()).find(|(n, _)| n == name).unwrap_or_else(|| {
            panic!(
                "no {name} payload among {:?}",
                named.iter().map(|(n, _)| n).collect::<Vec<_>>()
            )
        });
        serde_json::from_str(raw).expect("payload JSON")
    };

    // Codex 0.171 runs a hook as `/bin/bash -c COMMAND` (not `$SHELL`,
    // not a login shell), whatever SHELL says.
    let session_file = (files.iter())
        .find(|f| f.to_string_lossy().ends_with("-session-start.json"))
        .expect("a session-start payload");
    let shell = std::fs::read_to_string(session_file.with_extension("json.shell"))
        .expect("the hook's parent command line");
    assert_eq!(
        shell.trim_end(),
        "/bin/bash -c git-swarm-agent-hook codex session-start || true"
    );

    // One session id for the main agent and its subagent.
    let session = get("session-start")["session_id"].clone();
    for (name, raw) in &named {
        let v: Value = serde_json::from_str(raw).expect("payload JSON");
        assert_eq!(v["session_id"], session, "{name}: {raw}");
    }
    // The spawn: `tool_input.message`, no `agent_type`; its PostToolUse
    // answers the child's id as a JSON document in a string, the id that
    // SubagentStart calls `agent_id`.
    let pre = get("pre-tool-use-spawn-agent");
    assert_eq!(pre["tool_input"], json!({"message": TASK_SHELL}), "{pre:#}");
    assert_eq!(pre["tool_use_id"], "call_spawn");
    let post = get("post-tool-use-spawn-agent");
    assert_eq!(post["tool_use_id"], "call_spawn");
    let response: Value = serde_json::from_str(post["tool_response"].as_str().unwrap_or_default())
        .unwrap_or_else(|e| {
            panic!("spawn_agent's tool_response is no JSON string ({e}): {post:#}")
        });
    let start = get("subagent-start");
    assert_eq!(
        response["agent_id"], start["agent_id"],
        "{response:#} / {start:#}"
    );
    assert_eq!(start["agent_type"], "default", "{start:#}");
    let stop = get("subagent-stop");
    assert_eq!(stop["agent_id"], start["agent_id"]);
    assert_eq!(stop["stop_hook_active"], false);
    assert_eq!(get("subagent-stop-active")["stop_hook_active"], true);
    // A shell call's PostToolUse: `Bash`, the command, the output alone
    // (no exit code); the main agent's names no agent, a subagent's its
    // `agent_id` and `agent_type`.
    let failing = get("post-tool-use-failing");
    assert_eq!(failing["tool_name"], "Bash", "{failing:#}");
    assert_eq!(failing["tool_input"], json!({"command": FAILING}));
    assert!(failing["tool_response"].is_string(), "{failing:#}");
    for key in ["exit_code", "agent_id", "agent_type"] {
        assert!(failing.get(key).is_none(), "{key}: {failing:#}");
    }
    let sub = get("subagent-post-tool-use-failing");
    assert_eq!(sub["agent_id"], start["agent_id"], "{sub:#}");
    assert_eq!(sub["agent_type"], "default", "{sub:#}");
    // Other namespaced tools are named `<namespace><name>` (no separator)
    // or, for MCP, `mcp__<server>__<tool>`.
    assert_eq!(
        get("post-tool-use-wait-agent")["tool_name"],
        "multi_agent_v1wait_agent"
    );
    assert_eq!(
        get("post-tool-use-mcp")["tool_name"],
        "mcp__git_swarm__status"
    );

    super::capture_fixtures("codex", "@openai/codex", &named);
}

/// A directive a branch brings, not yet on `main` (the trusted revision of
/// a repository without a remote), is not in Codex's briefing, which names
/// it by id as awaiting review (issue 37).
/// The subagent a spawn starts gets the reviewed coder directives and not
/// the branch's new one, scoped to the coder too (issue 37).
#[test]
fn an_unreviewed_directive_reaches_no_subagent() {
    let env = TestEnv::initialised();
    super::hostile_branch(&env);
    let Some(c) = ready(env, one_subagent(TASK_REVIEW, "Done.", "Done.")) else {
        return;
    };
    c.run("MAIN-REVIEW spawn one", &Codex::path_with_git_swarm(), &[])
        .finished();
    let reqs = c.server.requests();
    let sub = turns(&reqs, "SUBTASK-REVIEW");
    let dev = sub
        .first()
        .expect("the subagent asked the model")
        .developer();
    assert!(
        dev.contains("<delegate_knowledge_directives delegation=")
            && dev.contains("id: no-private-keys"),
        "the subagent lacks the reviewed coder block:\n{}",
        tail(&dev, 3000)
    );
    for t in turns(&reqs, "") {
        let dev = t.developer();
        assert!(
            !dev.contains("IMPORTANT SYSTEM NOTICE"),
            "unreviewed text reached the model:\n{}",
            tail(&dev, 3000)
        );
    }
}

const TASK_REVIEW: &str = "SUBTASK-REVIEW: add a config loader in src/config.rs";

#[test]
fn an_unreviewed_directive_is_not_briefed() {
    let env = repo_with_coordinator_directive();
    super::hostile_branch(&env);
    let Some(c) = ready(env, |_| say("MAIN DONE")) else {
        return;
    };
    let run = c.run("gs37-review: say hello", &Codex::path_with_git_swarm(), &[]);
    run.finished();
    let reqs = c.server.requests();
    let first = turns(&reqs, "gs37-review")
        .into_iter()
        .next()
        .expect("main request");
    let dev = first.developer();
    assert!(
        dev.contains("Split the work into tasks a coder finishes in one sitting"),
        "the reviewed directive is briefed:\n{dev}"
    );
    assert!(
        !dev.contains("IMPORTANT SYSTEM NOTICE"),
        "unreviewed text reached the model:\n{dev}"
    );
    assert!(
        dev.contains(
            "1 lesson awaits review and is withheld from agents until on main: hostile-notice."
        ),
        "the briefing names it by id:\n{dev}"
    );
}

// ---------------------------------------------------------------------------
// Issue 38: a command that fails without a word.

/// Exits 1 and prints nothing: Codex's PostToolUse then carries
/// `tool_response: ""` and no exit code. (Not `test -d`, whose exit 1 is
/// an answer, "no", and reads as a success.)
const SILENT: &str = "cat /gs38-missing-file 2>/dev/null";

fn silent_script(t: &Turn) -> Reply {
    match t.result("call_silent") {
        None => respond(vec![call(
            "call_silent",
            None,
            "exec_command",
            json!({"cmd": SILENT}),
        )]),
        Some(_) => say("MAIN DONE"),
    }
}

#[test]
fn a_command_that_fails_silently_becomes_a_candidate() {
    let Some(c) = ready(repo_with_coordinator_directive(), silent_script) else {
        return;
    };
    c.run("MAIN-SILENT run it", &Codex::path_with_git_swarm(), &[])
        .finished();
    let found = super::candidates(&c.env);
    let silent = (found.iter())
        .find(|v| v["command"] == SILENT)
        .unwrap_or_else(|| panic!("no candidate for the silent failure: {found:#?}"));
    assert_eq!(silent["class"], "failure", "{silent:#}");
    assert_eq!(silent["role"], "coordinator", "{silent:#}");
}

/// With Codex's multi-agent v2 feature the spawning tool is `spawn_agent`
/// in the `collaboration` namespace, which hooks see as
/// `collaborationspawn_agent`, with `{task_name, message}`; its response
/// names no agent id (`{"task_name": "/root/<name>"}`), and the child's
/// history is the parent's (`fork_turns` defaults to `all`). The spawn is
/// still paired with its start, and the child gets the block with its task
/// (issue 38).
#[test]
fn a_multi_agent_v2_spawn_gets_its_block() {
    const TASK_V2: &str = "SUBTASK-V2: fix the flaky parser tokenizer in src/parse.rs";
    let script = |t: &Turn| {
        // The child's history is the parent's, then its task.
        if (t.later_user_messages().iter()).any(|m| m.contains("SUBTASK-V2")) {
            return say("Done.\nKNOWLEDGE_APPLIED:alpha-parser");
        }
        if t.result("call_v2").is_none() {
            return respond(vec![call(
                "call_v2",
                Some("collaboration"),
                "spawn_agent",
                json!({"task_name": "loader", "message": TASK_V2}),
            )]);
        }
        if t.result("call_wait").is_none() {
            return respond(vec![call(
                "call_wait",
                Some("collaboration"),
                "wait_agent",
                json!({"timeout_ms": 30000}),
            )]);
        }
        say("MAIN DONE")
    };
    let env = TestEnv::initialised();
    one_directive_per_task(&env);
    let Some(c) = Codex::start(env, script) else {
        return;
    };
    c.install(&[]);
    c.trust();
    c.edit_user_config(|doc| {
        doc["features"]["multi_agent_v2"] = toml_edit::value(true);
    });
    let (captured, path) = capturing(&c);
    c.run("MAIN-V2 delegate it", &path, &[]).finished();
    let shown = c.events("shown");
    assert_eq!(shown.len(), 1, "{shown:#?}");
    assert_eq!(shown[0]["actor"]["role"], "coder", "{shown:#?}");
    // The task's own directive, not the decoy a lost task gets.
    assert_eq!(
        shown[0]["directives"],
        json!(["alpha-parser"]),
        "{shown:#?}"
    );
    let reqs = c.server.requests();
    let child = (turns(&reqs, "MAIN-V2").into_iter())
        .find(|t| t.developer().contains("<delegate_knowledge_directives"))
        .expect("a request of the subagent with its block");
    assert!(child.developer().contains("id: alpha-parser"));
    let mut named = Vec::new();
    for f in std::fs::read_dir(&captured).expect("captured").flatten() {
        if f.path().extension().is_none_or(|x| x != "json") {
            continue;
        }
        let raw = std::fs::read_to_string(f.path()).expect("payload");
        let v: Value = serde_json::from_str(&raw).expect("payload JSON");
        if v["tool_name"] == "collaborationspawn_agent" {
            let event = v["hook_event_name"].as_str().unwrap_or_default();
            let name = match event {
                "PreToolUse" => "pre-tool-use-collaboration-spawn-agent",
                _ => "post-tool-use-collaboration-spawn-agent",
            };
            named.push((name.to_owned(), raw));
        }
    }
    assert_eq!(named.len(), 2, "the spawn's pre and post payloads");
    super::capture_fixtures("codex", "@openai/codex", &named);
}

/// Issue 38's session of 20 calls, 8 failing (Codex reads files through
/// its shell: the read of a missing file is a `sed` here).
#[test]
fn a_session_of_twenty_calls_sees_its_eight_failures() {
    use super::{TWENTY, TWENTY_REPORT, TWENTY_TASK};
    const READ: &str = "sed -n 1p /tmp/gs38-no-such-dir/notes.md";
    let script = |t: &Turn| {
        if t.first().contains("SUBTASK-TWENTY") {
            return say(TWENTY_REPORT);
        }
        for (name, command) in TWENTY {
            let id = format!("call_{}", name.replace('-', "_"));
            if t.result(&id).is_some() {
                if name == "subagent-gave-up" && t.result("call_wait").is_none() {
                    let agents = spawned(t, &[id.as_str()]);
                    return respond(vec![call(
                        "call_wait",
                        Some(AGENTS),
                        "wait_agent",
                        json!({"targets": agents, "timeout_ms": 30000}),
                    )]);
                }
                continue;
            }
            return respond(vec![match (name, command) {
                (_, Some(cmd)) => call(&id, None, "exec_command", json!({"cmd": cmd})),
                ("read-missing", None) => call(&id, None, "exec_command", json!({"cmd": READ})),
                _ => spawn(&id, TWENTY_TASK),
            }]);
        }
        say("MAIN DONE")
    };
    let Some(c) = ready(TestEnv::initialised(), script) else {
        return;
    };
    let started = Instant::now();
    c.run(
        "MAIN-TWENTY run the steps",
        &Codex::path_with_git_swarm(),
        &[],
    )
    .finished();
    let mut found = super::candidates(&c.env);
    // The read is a shell call here: named as the shared list names it.
    for cand in &mut found {
        if cand["command"] == READ {
            cand["tool"] = json!("read");
        }
    }
    let sub = turns(&c.server.requests(), "SUBTASK-TWENTY");
    let briefed = (sub.first()).is_some_and(|t| t.developer().contains("id: no-private-keys"));
    super::judge_twenty(
        &format!("codex {}", super::pinned("@openai/codex")),
        &c.env,
        &found,
        ("read", "spawn_agent"),
        briefed,
        started,
    );
}

// ---------------------------------------------------------------------------
// Lessons at the moment of a tool call (issue 40).

/// One agent's two edits of `file` with `apply_patch`, its call ids
/// `call_<prefix>_edit_<n>`; `None` once both returned.
fn edit_twice(t: &Turn, prefix: &str, file: &str) -> Option<Reply> {
    (1..=2).find_map(|n| {
        let id = format!("call_{prefix}_edit_{n}");
        t.result(&id).is_none().then(|| {
            respond(vec![patch(
                &id,
                format!(
                    "*** Begin Patch\n*** Update File: {file}\n@@\n # gs40\n-version = {}\n+version = {}\n*** End Patch\n",
                    n + 2,
                    n + 3
                ),
            )])
        })
    })
}

/// The text of every message of a request (the hook's context is a
/// developer message of its own).
fn messages_text(t: &Turn) -> String {
    (t.input().iter())
        .filter(|i| i["type"] == "message")
        .map(text_of)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The payloads the [`capturing`] wrapper kept for `event` (git-swarm's
/// name) with `keep`, each with git-swarm's wall time in ms.
fn captured_calls(
    captured: &Path,
    event: &str,
    keep: impl Fn(&Value) -> bool,
) -> Vec<(Value, String, u64)> {
    let mut files: Vec<PathBuf> = (std::fs::read_dir(captured).expect("captured"))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.to_string_lossy().ends_with(&format!("-{event}.json")))
        .collect();
    files.sort();
    (files.iter())
        .filter_map(|f| {
            let raw = std::fs::read_to_string(f).expect("payload");
            let v: Value = serde_json::from_str(&raw).expect("payload JSON");
            let rc = std::fs::read_to_string(f.with_extension("json.rc")).unwrap_or_default();
            let ms = rc.split_whitespace().nth(1)?.parse().ok()?;
            keep(&v).then_some((v, raw, ms))
        })
        .collect()
}

/// An `apply_patch` of a file a reviewed directive covers brings its
/// lesson into the agent's next request, once per agent: the main agent's
/// second edit does not bring it again, and two sibling subagents spawned
/// in one turn each get it once, with their own first edit.
#[test]
fn an_edit_brings_the_files_lesson_once_per_agent() {
    use super::{LOCK_FILES, LOCK_TASKS, Sightings};
    let script = |t: &Turn| {
        let first = t.first();
        for (prefix, task, file) in [
            ("a", LOCK_TASKS[0], LOCK_FILES[1]),
            ("b", LOCK_TASKS[1], LOCK_FILES[2]),
        ] {
            if first.contains(task) {
                return edit_twice(t, prefix, file)
                    .unwrap_or_else(|| say("Bumped.\nKNOWLEDGE_APPLIED:no-private-keys"));
            }
        }
        edit_twice(t, "main", LOCK_FILES[0]).unwrap_or_else(|| {
            delegate(
                t,
                &[
                    ("call_spawn_a", LOCK_TASKS[0]),
                    ("call_spawn_b", LOCK_TASKS[1]),
                ],
            )
        })
    };
    let env = TestEnv::initialised();
    super::lockfile_lesson(&env);
    let Some(c) = ready(env, script) else {
        return;
    };
    let (captured, path) = capturing(&c);
    let started = Instant::now();
    c.run("MAIN-GS40-EDIT bump the lockfiles", &path, &[])
        .finished();
    let reqs = c.server.requests();
    let sightings = |marker: &str, prefix: &str| {
        let texts: Vec<(String, bool)> = (turns(&reqs, marker).iter())
            .map(|t| {
                let edited = t.result(&format!("call_{prefix}_edit_1")).is_some();
                (messages_text(t), edited)
            })
            .collect();
        Sightings::of(&texts)
    };
    let agents = [
        ("main", sightings("MAIN-GS40-EDIT", "main")),
        ("subagent A", sightings("SUBTASK-GS40-A", "a")),
        ("subagent B", sightings("SUBTASK-GS40-B", "b")),
    ];
    let edits = captured_calls(&captured, "pre-tool-use", |v| {
        v["tool_name"] == "apply_patch"
    });
    let sub_edit = (edits.iter())
        .find(|(v, _, _)| v["agent_id"].is_string())
        .expect("a subagent's apply_patch payload");
    super::capture_fixtures(
        "codex",
        "@openai/codex",
        &[("subagent-pre-tool-use-edit".to_owned(), sub_edit.1.clone())],
    );
    let ms: Vec<u64> = edits.iter().map(|(_, _, ms)| *ms).collect();
    super::judge_lesson_at_edit(
        &format!("codex {}", super::pinned("@openai/codex")),
        &c.env,
        &agents,
        "apply_patch",
        &ms,
        started,
    );
}

/// A command a reviewed guard forbids is refused before it runs, the
/// guard's lesson the reason the model reads; a guard's words inside
/// quotes refuse nothing.
#[test]
fn a_guarded_command_is_refused_and_quoted_text_is_not() {
    use super::{GUARDED, QUOTED};
    let steps: Vec<(String, &str)> = std::iter::once(("call_guarded".to_owned(), GUARDED))
        .chain((QUOTED.iter().enumerate()).map(|(i, (_, cmd))| (format!("call_quoted_{i}"), *cmd)))
        .collect();
    let script_steps = steps.clone();
    let script = move |t: &Turn| {
        (script_steps.iter())
            .find(|(id, _)| t.result(id).is_none())
            .map_or_else(
                || say("MAIN DONE"),
                |(id, cmd)| respond(vec![call(id, None, "exec_command", json!({"cmd": cmd}))]),
            )
    };
    let Some(c) = ready(TestEnv::initialised(), script) else {
        return;
    };
    let (captured, path) = capturing(&c);
    let started = Instant::now();
    let run = c.run("MAIN-GS40-GUARD run the commands", &path, &[]);
    run.finished();
    assert!(
        run.hooks()
            .contains(&("PreToolUse".to_owned(), "Blocked".to_owned())),
        "{}",
        run.show()
    );
    let reqs = c.server.requests();
    let mains = turns(&reqs, "MAIN-GS40-GUARD");
    let result = |id: &str| {
        (mains.iter().find_map(|t| t.result(id)))
            .unwrap_or_else(|| panic!("the result of {id} reached the model"))
    };
    let refused = result(&steps[0].0);
    assert!(
        refused.starts_with("Command blocked by PreToolUse hook: "),
        "Codex relays a refusal as the call's output: {refused}"
    );
    let quoted: Vec<String> = steps[1..].iter().map(|(id, _)| result(id)).collect();
    let shells: Vec<u64> = captured_calls(&captured, "pre-tool-use", |v| v["tool_name"] == "Bash")
        .into_iter()
        .map(|(_, _, ms)| ms)
        .collect();
    super::judge_guard(
        &format!("codex {}", super::pinned("@openai/codex")),
        &c.env,
        &refused,
        &quoted,
        ("codex", "Bash"),
        &shells,
        started,
    );
}

// ---------------------------------------------------------------------------
// The loop closed (issue 41): a mistake the hooks recorded becomes a
// lesson, and the sessions after it no longer make it.

/// Sessions 1a and 1b run the failing lint (no lesson yet); `reflect meso`
/// mints the lesson from their candidates and it is committed on `main`;
/// sessions 2 to 10 get it in their briefing, and the model, scripted to
/// repeat the mistake unless the lesson is in its request, does not.
#[test]
fn the_loop_closes_a_recorded_mistake_is_not_repeated() {
    let learned = super::Learned::default();
    let knows = learned.clone();
    let Some(c) = ready(TestEnv::initialised(), move |t| {
        if !t.first().contains("GS41-SESSION-") {
            return say("ok");
        }
        if t.result("call_lint").is_some() {
            return say("MAIN DONE");
        }
        let command = super::loop_command(&knows, &t.body.to_string());
        respond(vec![call(
            "call_lint",
            None,
            "exec_command",
            json!({"cmd": command}),
        )])
    }) else {
        return;
    };
    let started = Instant::now();
    super::loop_repo(&c.env);
    let session = |name: &str, lesson: Option<&str>| {
        let runs = super::lint_runs(&c.env);
        let prompt = super::loop_prompt(name);
        c.run(&prompt, &Codex::path_with_git_swarm(), &[])
            .finished();
        let texts: Vec<String> = (turns(&c.server.requests(), &prompt).iter())
            .map(|t| t.body.to_string())
            .collect();
        super::LoopSession::of(name, &texts, lesson, (runs, super::lint_runs(&c.env)))
    };
    let before: Vec<_> = (super::LOOP_BEFORE.iter())
        .map(|n| session(n, None))
        .collect();
    let minted = super::mint_loop_lesson(&c.env);
    *learned.lock().expect("lesson lock") = Some(minted.lesson.clone());
    let after: Vec<_> = (super::LOOP_AFTER)
        .map(|n| session(&n.to_string(), Some(&minted.lesson)))
        .collect();
    super::judge_closed_loop(
        &format!("codex {}", super::pinned("@openai/codex")),
        &c.env,
        &minted,
        &before,
        &after,
        started,
    );
}
