//! The real-harness scenarios for Gemini CLI (`@google/gemini-cli`, see
//! `super`): `gemini -p` headless against the scripted model server, which
//! speaks Gemini's `POST /v1beta/models/<model>:streamGenerateContent?alt=sse`
//! (one `data:` line of `GenerateContentResponse` JSON per answer).
//!
//! Set-up a user needs, and each run here does in its fresh HOME:
//! - the folder trusted: `~/.gemini/trustedFolders.json`, a JSON object from
//!   absolute path to `"TRUST_FOLDER"`, `"TRUST_PARENT"` or `"DO_NOT_TRUST"`
//!   (`GEMINI_CLI_TRUST_WORKSPACE=true` does the same for one run).
//!   Untrusted, `gemini -p` exits 55 before any request, and project hooks
//!   are never run;
//! - an API key auth type: `GOOGLE_GEMINI_BASE_URL` alone selects the
//!   "gateway" auth that headless mode refuses ("Invalid auth method
//!   selected.", exit 41), so `~/.gemini/settings.json` names
//!   `security.auth.selectedType = "gemini-api-key"` and `GEMINI_API_KEY`
//!   is a dummy; the base URL still applies;
//! - a model named (`-m`): the default `auto` model first asks a router
//!   model for a complexity score in JSON, which a script would have to fake.
//!
//! Gemini CLI has no subagent events: its subagents (`invoke_agent` with
//! `agent_name` `generalist`, `codebase_investigator` or `cli_help`) show in
//! the hooks only as the parent's BeforeTool/AfterTool of `invoke_agent`
//! and as their own tool calls, under the parent's `session_id` and with no
//! agent name (see `payloads_as_gemini_sends_them`).
//!
//! Gemini reads a hook's exit code as: 0 allow (non-JSON output becomes a
//! `systemMessage` shown to the user), 1 allow with a warning, anything
//! else a deny whose reason is the hook's stdout, or its stderr when stdout
//! is empty. An AfterTool deny replaces the tool's result with that text, so
//! git-swarm's commands end in `|| true`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::server::{ModelServer, Reply, Request};
use super::{Outcome, tail};
use crate::common::{TestEnv, bin, mkfifo};

/// The model every run asks for (`-m`), so that no router request comes first.
const MODEL: &str = "gemini-2.5-flash";

/// Longest a single `gemini -p` run may take before it is killed.
const RUN_LIMIT: Duration = Duration::from_secs(120);

/// What the script answers with, as Gemini `parts`.
fn answer(req: &Request, parts: Value) -> Reply {
    if req.path.contains(":countTokens") {
        return Reply::json(&json!({"totalTokens": 1}));
    }
    let body = json!({
        "candidates": [{
            "content": {"role": "model", "parts": parts},
            "finishReason": "STOP",
            "index": 0
        }],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 2, "totalTokenCount": 12},
        "modelVersion": MODEL
    });
    if req.path.contains("alt=sse") {
        Reply::sse([(None, body.to_string())])
    } else {
        Reply::json(&body)
    }
}

fn say(req: &Request, text: &str) -> Reply {
    answer(req, json!([{"text": text}]))
}

fn call(req: &Request, name: &str, args: Value) -> Reply {
    answer(req, json!([{"functionCall": {"name": name, "args": args}}]))
}

/// The names of the tools a request offers.
fn tools(req: &Request) -> Vec<String> {
    let body = req.json();
    let mut names = Vec::new();
    for t in body["tools"].as_array().into_iter().flatten() {
        for f in t["functionDeclarations"].as_array().into_iter().flatten() {
            if let Some(n) = f["name"].as_str() {
                names.push(n.to_owned());
            }
        }
    }
    names
}

/// A subagent's request: its tools have `complete_task`, the main agent's
/// have `invoke_agent`.
fn is_subagent(req: &Request) -> bool {
    tools(req).iter().any(|t| t == "complete_task")
}

/// The text of the request's first message (a subagent's task).
fn first_text(req: &Request) -> String {
    let body = req.json();
    (body["contents"][0]["parts"]
        .as_array()
        .into_iter()
        .flatten())
    .filter_map(|p| p["text"].as_str())
    .collect::<Vec<_>>()
    .join("\n")
}

/// The function response the request's last message returns, if any:
/// `(name, response)`.
fn returned(req: &Request) -> Option<(String, Value)> {
    let body = req.json();
    let last = body["contents"].as_array()?.last()?.clone();
    let part = (last["parts"].as_array()?.iter()).find(|p| p.get("functionResponse").is_some())?;
    let fr = &part["functionResponse"];
    Some((fr["name"].as_str()?.to_owned(), fr["response"].clone()))
}

/// The main agent's requests that carry the user's prompt `marker`.
fn main_requests<'a>(reqs: &'a [Request], marker: &str) -> Vec<&'a Request> {
    (reqs.iter())
        .filter(|r| {
            r.path.contains(":streamGenerateContent") || r.path.contains(":generateContent")
        })
        .filter(|r| !is_subagent(r) && r.text().contains(marker))
        .collect()
}

/// One `gemini -p` run.
impl Outcome {
    /// The hook runs Gemini logs with `--debug`: `(event, milliseconds)`.
    fn hook_times(&self) -> Vec<(String, u64)> {
        let re = regex::Regex::new(r"Hook execution for (\w+): .*total duration: (\d+)ms")
            .expect("hook time regex");
        (re.captures_iter(&self.stderr))
            .filter_map(|c| Some((c[1].to_owned(), c[2].parse().ok()?)))
            .collect()
    }
}

/// A repository, its HOME and a model server, ready for `gemini -p`.
struct Gemini {
    exe: PathBuf,
    env: TestEnv,
    server: ModelServer,
}

impl Gemini {
    /// `None` (SKIPPED printed) when Gemini CLI is not installed.
    fn start(
        env: TestEnv,
        script: impl Fn(&Request) -> Reply + Send + Sync + 'static,
    ) -> Option<Gemini> {
        let exe = super::harness_bin("gemini")?;
        let g = Gemini {
            exe,
            env,
            server: ModelServer::start(script),
        };
        g.user_settings();
        Some(g)
    }

    /// `~/.gemini/settings.json`: API-key auth (the base URL comes from the
    /// environment), no usage statistics, telemetry or update checks.
    fn user_settings(&self) {
        let dir = self.env.home().join(".gemini");
        std::fs::create_dir_all(&dir).expect("~/.gemini");
        let settings = json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": false},
            "telemetry": {"enabled": false},
            "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false}
        });
        std::fs::write(dir.join("settings.json"), settings.to_string()).expect("settings.json");
    }

    /// Trusts the repository the way a user does once, in
    /// `~/.gemini/trustedFolders.json`.
    fn trust(&self) {
        let root = std::fs::canonicalize(&self.env.root).expect("canonical root");
        let folders = json!({ root.to_string_lossy(): "TRUST_FOLDER" });
        std::fs::write(
            self.env.home().join(".gemini/trustedFolders.json"),
            folders.to_string(),
        )
        .expect("trustedFolders.json");
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

    /// Runs `gemini -p PROMPT` with `path` as PATH, killed after [`RUN_LIMIT`].
    fn run(&self, prompt: &str, path: &str) -> Outcome {
        use std::os::unix::process::CommandExt;
        let out_dir = self.env.tmp.path().join("runs");
        std::fs::create_dir_all(&out_dir).expect("runs dir");
        let n = std::fs::read_dir(&out_dir).map(|d| d.count()).unwrap_or(0) / 2;
        let (out_path, err_path) = (
            out_dir.join(format!("{n}.stdout")),
            out_dir.join(format!("{n}.stderr")),
        );
        let mut cmd = self.env.command(&self.exe, &self.env.root);
        cmd.env("PATH", path)
            .env("GEMINI_API_KEY", "dummy-key")
            .env("GOOGLE_GEMINI_BASE_URL", self.server.url())
            // One process, not a relaunched child with more heap.
            .env("GEMINI_CLI_NO_RELAUNCH", "true")
            .args(["-m", MODEL, "--yolo", "--debug", "-p", prompt])
            .stdout(std::fs::File::create(&out_path).expect("stdout file"))
            .stderr(std::fs::File::create(&err_path).expect("stderr file"))
            .stdin(Stdio::null())
            .process_group(0);
        let started = Instant::now();
        let mut child = cmd.spawn().expect("spawn gemini");
        let pgid = child.id();
        let code = loop {
            match child.try_wait().expect("wait gemini") {
                Some(status) => break status.code(),
                None if started.elapsed() > RUN_LIMIT => {
                    kill_group(pgid);
                    let _ = child.wait();
                    let out = Outcome {
                        code: None,
                        stdout: std::fs::read_to_string(&out_path).unwrap_or_default(),
                        stderr: std::fs::read_to_string(&err_path).unwrap_or_default(),
                        elapsed: started.elapsed(),
                    };
                    panic!(
                        "gemini ran past {RUN_LIMIT:?} and was killed:\n{}",
                        out.show()
                    );
                }
                None => std::thread::sleep(Duration::from_millis(50)),
            }
        };
        // Whatever it left behind (an MCP server, a hook) goes with it.
        kill_group(pgid);
        let out = Outcome {
            code,
            stdout: std::fs::read_to_string(&out_path).unwrap_or_default(),
            stderr: std::fs::read_to_string(&err_path).unwrap_or_default(),
            elapsed: started.elapsed(),
        };
        println!(
            "gemini run {n}: exit {:?} in {:.1}s, hook times (ms) as Gemini logs them: {:?}",
            out.code,
            out.elapsed.as_secs_f64(),
            out.hook_times()
        );
        out
    }

    fn install(&self, args: &[&str]) {
        let mut all = vec!["agents", "install", "gemini"];
        all.extend_from_slice(args);
        self.env.swarm(&all).success();
    }
}

/// Kills the process group `pgid` (the run's, which nothing else shares).
fn kill_group(pgid: u32) {
    let _ = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .stderr(Stdio::null())
        .status();
}

/// An initialised repository with one directive for the main session's role
/// (`coordinator`: Gemini's SessionStart names no agent) besides the
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

/// The shell command the scripts run: output on both streams, then exit 3.
const FAILING: &str = "echo gs36-out; echo gs36-err >&2; exit 3";

/// A script: the main agent runs [`FAILING`] in the shell, then finishes.
fn shell_script(req: &Request) -> Reply {
    match returned(req) {
        None => call(req, "run_shell_command", json!({"command": FAILING})),
        Some(_) => say(req, "MAIN DONE"),
    }
}

/// What the model got back for the shell call of [`shell_script`].
fn shell_result(server: &ModelServer, marker: &str) -> Value {
    let reqs = server.requests();
    let back = (main_requests(&reqs, marker).into_iter())
        .filter_map(returned)
        .find(|(name, _)| name == "run_shell_command");
    let Some((_, response)) = back else {
        panic!(
            "no request returned the shell call; requests:\n{:#?}",
            reqs.iter().map(|r| &r.path).collect::<Vec<_>>()
        );
    };
    response
}

/// The model saw the shell call's own output: Gemini's `output` with the
/// command's stdout, stderr and exit code, no `error`, no hook text.
#[track_caller]
fn assert_untouched(response: &Value, run: &Outcome) {
    let output = response["output"].as_str().unwrap_or_default();
    assert!(
        response.get("error").is_none()
            && output.contains("gs36-out")
            && output.contains("gs36-err")
            && output.contains("Exit Code: 3"),
        "the model did not get the tool's own result: {response:#}\n{}",
        run.show()
    );
    for hook_text in ["git-swarm", "command not found", "blocked", "hook"] {
        assert!(
            !output.contains(hook_text),
            "hook text `{hook_text}` reached the tool result: {output}"
        );
    }
}

// 1. The briefing.
#[test]
fn briefing_reaches_the_main_session_once_the_folder_is_trusted() {
    let env = repo_with_coordinator_directive();
    let Some(g) = Gemini::start(env, |req| say(req, "hello back")) else {
        return;
    };
    g.install(&[]);

    // Untrusted: Gemini stops before asking the model anything.
    let untrusted = g.run("gs36-brief: say hello", &Gemini::path_with_git_swarm());
    assert_eq!(untrusted.code, Some(55), "{}", untrusted.show());
    assert!(untrusted.stderr.contains("trusted"), "{}", untrusted.show());
    assert!(
        g.server.requests().is_empty(),
        "an untrusted run asked the model"
    );

    g.trust();
    let run = g.run("gs36-brief: say hello", &Gemini::path_with_git_swarm());
    assert_eq!(run.code, Some(0), "{}", run.show());
    assert!(run.stdout.contains("hello back"), "{}", run.show());
    let reqs = g.server.requests();
    let main = main_requests(&reqs, "gs36-brief");
    let first = main
        .first()
        .unwrap_or_else(|| panic!("no main request\n{}", run.show()));
    let text = first.text();
    // Gemini puts SessionStart's additionalContext before the prompt in
    // `<hook_context>`, with `<` and `>` escaped.
    assert!(
        text.contains("<hook_context>")
            && text.contains("delegate_knowledge_directives role=\\\"coordinator\\\"")
            && text.contains("Split the work into tasks a coder finishes in one sitting"),
        "the first main request lacks the briefing:\n{}",
        tail(&text, 3000)
    );
    // The template's coder directives are no briefing of the main session.
    assert!(
        !text.contains("id: no-private-keys"),
        "{}",
        tail(&text, 3000)
    );
}

// 9. Fail-open, with the hook commands `agents install` writes.
#[test]
fn a_missing_git_swarm_leaves_the_tool_results_untouched() {
    let Some(g) = Gemini::start(repo_with_coordinator_directive(), shell_script) else {
        return;
    };
    g.install(&[]);
    g.trust();
    let run = g.run("gs36-missing: run it", &Gemini::path_without_git_swarm());
    assert_eq!(run.code, Some(0), "{}", run.show());
    assert_untouched(&shell_result(&g.server, "gs36-missing"), &run);
}

#[test]
fn a_git_swarm_that_exits_3_leaves_the_tool_results_untouched() {
    let Some(g) = Gemini::start(repo_with_coordinator_directive(), shell_script) else {
        return;
    };
    g.install(&[]);
    g.trust();
    let broken = g.env.tmp.path().join("broken-bin");
    std::fs::create_dir_all(&broken).expect("broken-bin");
    write_script(
        &broken.join(super::HOOK),
        "#!/bin/sh\ncat >/dev/null\necho 'git-swarm crashed' >&2\nexit 3\n",
    );
    let path = format!("{}:{}", broken.display(), Gemini::path_without_git_swarm());
    let run = g.run("gs36-exit3: run it", &path);
    assert_eq!(run.code, Some(0), "{}", run.show());
    assert_untouched(&shell_result(&g.server, "gs36-exit3"), &run);
}

#[test]
fn a_fifo_config_leaves_the_tool_results_untouched() {
    let Some(g) = Gemini::start(repo_with_coordinator_directive(), shell_script) else {
        return;
    };
    g.install(&[]);
    g.trust();
    std::fs::remove_file(g.env.path(".swarm/config.toml")).expect("rm config.toml");
    mkfifo(&g.env.path(".swarm/config.toml"));
    let run = g.run("gs36-fifo: run it", &Gemini::path_with_git_swarm());
    assert_eq!(run.code, Some(0), "{}", run.show());
    assert_untouched(&shell_result(&g.server, "gs36-fifo"), &run);
    assert!(
        run.elapsed < Duration::from_secs(10),
        "a hook waited on the FIFO until Gemini's timeout:\n{}",
        run.show()
    );
}

/// Why the commands end in `|| true`: with the bare command (git-swarm's
/// form before), Gemini reads exit 127 or 3 as a deny and the model gets
/// the hook's stderr instead of the tool's result. Since shell calls have a
/// BeforeTool hook too (issue 40's guards), that deny comes before the call:
/// the command is not even run. Hand-edited settings, so that this keeps
/// showing what Gemini does with such a command.
#[test]
fn gemini_denies_a_tool_call_when_a_bare_hook_command_fails() {
    let Some(g) = Gemini::start(repo_with_coordinator_directive(), shell_script) else {
        return;
    };
    g.install(&[]);
    g.trust();
    let settings = g.env.read(".gemini/settings.json");
    assert!(settings.contains(" || true\""), "{settings}");
    g.env.write(
        ".gemini/settings.json",
        settings.replace(" || true\"", "\""),
    );

    // Not on PATH: bash exits 127.
    let run = g.run(
        "gs36-bare-missing: run it",
        &Gemini::path_without_git_swarm(),
    );
    let response = shell_result(&g.server, "gs36-bare-missing");
    assert_eq!(
        response,
        json!({"error": "Tool execution blocked: bash: line 1: git-swarm-agent-hook: command not found"}),
        "{}",
        run.show()
    );
    assert!(
        run.stderr.contains(
            "Tool execution blocked: bash: line 1: git-swarm-agent-hook: command not found"
        ),
        "{}",
        run.show()
    );

    // On PATH, exiting 3 with a message on stderr.
    let broken = g.env.tmp.path().join("broken-bin");
    std::fs::create_dir_all(&broken).expect("broken-bin");
    write_script(
        &broken.join(super::HOOK),
        "#!/bin/sh\ncat >/dev/null\necho 'git-swarm crashed' >&2\nexit 3\n",
    );
    let path = format!("{}:{}", broken.display(), Gemini::path_without_git_swarm());
    let run = g.run("gs36-bare-exit3: run it", &path);
    let response = shell_result(&g.server, "gs36-bare-exit3");
    assert_eq!(
        response,
        json!({"error": "Tool execution blocked: git-swarm crashed"}),
        "{}",
        run.show()
    );
}

fn write_script(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).expect("write script");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

// 6. A failing tool call becomes a candidate with its role.
#[test]
fn a_failing_shell_call_becomes_a_candidate_with_its_role() {
    let Some(g) = Gemini::start(repo_with_coordinator_directive(), shell_script) else {
        return;
    };
    g.install(&[]);
    g.trust();
    let run = g.run("gs36-fail: run it", &Gemini::path_with_git_swarm());
    assert_eq!(run.code, Some(0), "{}", run.show());
    let found = super::candidates(&g.env);
    let failure = (found.iter())
        .find(|c| c["tool"] == "run_shell_command" && c["command"] == FAILING)
        .unwrap_or_else(|| {
            panic!(
                "no candidate for the failing call: {found:#?}\n{}",
                run.show()
            )
        });
    assert_eq!(failure["class"], "failure", "{failure:#}");
    assert_eq!(failure["harness"], "gemini", "{failure:#}");
    let mut wrong = Vec::new();
    // The main session's role, as git-swarm's own session start took it
    // (Gemini names no agent).
    if failure["role"] != "coordinator" {
        wrong.push(format!(
            "role {} (the main session is `coordinator`)",
            failure["role"]
        ));
    }
    // Its evidence is the command's own words, not Gemini's wrapper.
    let excerpt = failure["excerpt"].as_str().unwrap_or_default();
    if !excerpt.contains("gs36") {
        wrong.push(format!(
            "excerpt {excerpt:?} and signature {} are Gemini's <untrusted_context> wrapper, not the command's output",
            failure["signature"]
        ));
    }
    assert!(wrong.is_empty(), "{}\n{failure:#}", wrong.join("\n"));
}

// 7. MCP.
#[test]
fn the_mcp_status_tool_answers_the_model() {
    let Some(g) = Gemini::start(repo_with_coordinator_directive(), |req| {
        match returned(req) {
            None => call(req, "mcp_git-swarm_status", json!({})),
            Some(_) => say(req, "MAIN DONE"),
        }
    }) else {
        return;
    };
    g.install(&["--mcp"]);
    g.trust();
    let run = g.run("gs36-mcp: status please", &Gemini::path_with_git_swarm());
    assert_eq!(run.code, Some(0), "{}", run.show());
    let reqs = g.server.requests();
    let main = main_requests(&reqs, "gs36-mcp");
    let offered = tools(main.first().expect("a main request"));
    assert!(
        offered.iter().any(|t| t == "mcp_git-swarm_status"),
        "git-swarm's MCP tools are not offered: {offered:?}"
    );
    let (name, response) = (main.iter())
        .find_map(|r| returned(r))
        .unwrap_or_else(|| panic!("no request returned the MCP call\n{}", run.show()));
    assert_eq!(name, "mcp_git-swarm_status");
    let text = response.to_string();
    assert!(
        response.get("error").is_none() && text.contains("unacknowledged_criticals"),
        "the status tool's answer did not reach the model: {response:#}"
    );
}

// 8. Uninstall restores the configs byte for byte.
#[test]
fn uninstall_after_a_run_restores_the_settings_to_the_byte() {
    let users = "{\n  // the user's own settings, comments kept\n  \"hooks\": {\n    \"BeforeTool\": [\n      {\"matcher\": \"write_file\", \"hooks\": [{\"type\": \"command\", \"command\": \"true\"}]}\n    ]\n  },\n  \"mcpServers\": {\"docs\": {\"command\": \"true\"}}\n}\n";
    for before in [Some(users), None] {
        let env = repo_with_coordinator_directive();
        if let Some(text) = before {
            env.write(".gemini/settings.json", text);
        }
        let Some(g) = Gemini::start(env, shell_script) else {
            return;
        };
        g.install(&["--mcp"]);
        g.trust();
        let run = g.run("gs36-uninstall: run it", &Gemini::path_with_git_swarm());
        assert_eq!(run.code, Some(0), "{}", run.show());
        g.env
            .swarm(&["agents", "uninstall", "gemini", "--mcp"])
            .success();
        match before {
            Some(text) => assert_eq!(g.env.read(".gemini/settings.json"), text),
            None => assert!(
                !g.env.exists(".gemini"),
                "uninstall left {:?}",
                std::fs::read_dir(g.env.path(".gemini")).map(|d| d.count())
            ),
        }
    }
}

/// The subagent's task, as the main agent hands it to `generalist`.
const SUB_TASK: &str = "gs36-sub-task: run the checks and report";
/// The subagent's failing command.
const SUB_FAILING: &str = "echo gs36-sub; exit 4";

/// The main agent runs [`FAILING`], then hands [`SUB_TASK`] to Gemini's
/// general-purpose subagent, which runs [`SUB_FAILING`] and finishes with
/// `complete_task`, acknowledging the template's critical directive.
fn subagent_script(req: &Request) -> Reply {
    let back = returned(req).map(|(name, _)| name);
    if is_subagent(req) {
        return match back.as_deref() {
            None => call(req, "run_shell_command", json!({"command": SUB_FAILING})),
            Some("run_shell_command") => call(
                req,
                "complete_task",
                json!({"result": {"response": "SUB DONE\nKNOWLEDGE_APPLIED:no-private-keys"}}),
            ),
            Some(_) => say(req, "SUB DONE"),
        };
    }
    match back.as_deref() {
        None => call(req, "run_shell_command", json!({"command": FAILING})),
        Some("run_shell_command") => call(
            req,
            "invoke_agent",
            json!({"agent_name": "generalist", "prompt": SUB_TASK}),
        ),
        Some(_) => say(req, "MAIN DONE"),
    }
}

/// The subagent's first request to the model.
fn subagent_first_request(server: &ModelServer, run: &Outcome) -> Request {
    let reqs = server.requests();
    (reqs.into_iter())
        .find(|r| is_subagent(r) && first_text(r).contains(SUB_TASK))
        .unwrap_or_else(|| panic!("the subagent asked the model nothing\n{}", run.show()))
}

/// Gemini's subagents in the hooks, recorded through a `git-swarm-agent-hook` on PATH
/// that keeps what it reads before handing it on (BeforeTool added by hand:
/// git-swarm installs none). With `GIT_SWARM_CAPTURE_FIXTURES=1` the
/// payloads are written to `tests/fixtures/agents/captured/gemini-<version>/`.
#[test]
fn payloads_as_gemini_sends_them() {
    let Some(g) = Gemini::start(TestEnv::initialised(), subagent_script) else {
        return;
    };
    g.install(&[]);
    g.trust();
    let mut settings: Value =
        serde_json::from_str(&g.env.read(".gemini/settings.json")).expect("settings JSON");
    settings["hooks"]["BeforeTool"] = json!([{"hooks": [{
        "type": "command",
        "name": "capture pre-tool-use",
        "command": "git-swarm-agent-hook gemini pre-tool-use || true"
    }]}]);
    g.env.write(".gemini/settings.json", settings.to_string());
    let captured = g.env.tmp.path().join("captured");
    let wrapper = g.env.tmp.path().join("capture-bin");
    std::fs::create_dir_all(&captured).expect("captured dir");
    std::fs::create_dir_all(&wrapper).expect("capture-bin");
    write_script(
        &wrapper.join(super::HOOK),
        &format!(
            "#!/bin/sh\nf={dir}/$(date +%s%N)-$2.json\ncat > \"$f\"\n[ \"$2\" = pre-tool-use ] && exit 0\nexec {real} \"$@\" < \"$f\"\n",
            dir = captured.display(),
            real = super::hook_bin().display()
        ),
    );
    write_script(
        &wrapper.join("git-swarm"),
        &format!("#!/bin/sh\nexec {} \"$@\"\n", bin().display()),
    );
    let path = format!("{}:{}", wrapper.display(), Gemini::path_without_git_swarm());
    let run = g.run("gs36-capture: fix it", &path);
    assert_eq!(run.code, Some(0), "{}", run.show());

    let mut files: Vec<PathBuf> = (std::fs::read_dir(&captured).expect("captured"))
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    let mut named: Vec<(String, String)> = Vec::new();
    for f in &files {
        let raw = std::fs::read_to_string(f).expect("payload");
        let v: Value = serde_json::from_str(&raw).expect("payload JSON");
        let event = v["hook_event_name"].as_str().unwrap_or("?");
        let tool = v["tool_name"].as_str().unwrap_or("");
        let command = v["tool_input"]["command"].as_str().unwrap_or("");
        let name = match (event, tool) {
            ("SessionStart", _) => "session-start",
            ("BeforeTool", "invoke_agent") => "pre-tool-use-invoke-agent",
            ("AfterTool", "invoke_agent") => "post-tool-use-invoke-agent",
            ("BeforeTool", _) if command == SUB_FAILING => "subagent-pre-tool-use",
            ("AfterTool", _) if command == SUB_FAILING => "subagent-post-tool-use-failing",
            ("BeforeTool", _) if command == FAILING => "pre-tool-use",
            ("AfterTool", _) if command == FAILING => "post-tool-use-failing",
            ("BeforeTool", "complete_task") => "subagent-pre-tool-use-complete-task",
            ("AfterTool", "complete_task") => "subagent-post-tool-use-complete-task",
            _ => &format!("{event}-{tool}"),
        };
        assert!(
            named.iter().all(|(n, _)| n != name),
            "a second {name} payload: {raw}"
        );
        named.push((name.to_owned(), raw));
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

    // One session id for the main agent and its subagent, and no field
    // that names an agent.
    let session = get("session-start")["session_id"].clone();
    for (name, raw) in &named {
        let v: Value = serde_json::from_str(raw).expect("payload JSON");
        assert_eq!(v["session_id"], session, "{name}: {raw}");
        for key in ["agent_id", "agent_name", "agent_type", "subagent_type"] {
            assert!(v.get(key).is_none(), "{name} has `{key}`: {raw}");
        }
    }
    let spawn = get("pre-tool-use-invoke-agent");
    assert_eq!(
        spawn["tool_input"],
        json!({"agent_name": "generalist", "prompt": SUB_TASK})
    );
    let spawned = get("post-tool-use-invoke-agent");
    assert_eq!(
        spawned["tool_response"]["returnDisplay"]["agentName"],
        "generalist"
    );
    assert!(
        spawned["tool_response"]["llmContent"]
            .to_string()
            .contains("KNOWLEDGE_APPLIED:no-private-keys"),
        "the subagent's final answer is not in the parent's AfterTool: {spawned:#}"
    );
    let (main_call, sub_call) = (
        get("post-tool-use-failing"),
        get("subagent-post-tool-use-failing"),
    );
    let keys = |v: &Value| v.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>());
    assert_eq!(
        keys(&main_call),
        keys(&sub_call),
        "a subagent's call differs in shape"
    );

    super::capture_fixtures("gemini", "@google/gemini-cli", &named);
}

// 2. The default subagent type. Gemini's `invoke_agent` needs an
// `agent_name`; its general-purpose subagent is `generalist` (→ `coder`).
// git-swarm installs no hook that reaches a Gemini subagent; a BeforeTool
// hook on `invoke_agent` answering `hookSpecificOutput.tool_input` (the
// whole input: `agent_name` too) can put the block in its first message.
#[test]
fn the_generalist_subagent_gets_the_coder_directives() {
    let Some(g) = Gemini::start(TestEnv::initialised(), subagent_script) else {
        return;
    };
    g.install(&[]);
    g.trust();
    let run = g.run("gs36-default: fix it", &Gemini::path_with_git_swarm());
    assert_eq!(run.code, Some(0), "{}", run.show());
    let first = subagent_first_request(&g.server, &run);
    let text = first_text(&first);
    assert!(
        text.contains("<delegate_knowledge_directives") && text.contains("no-private-keys"),
        "the generalist's first message lacks the coder directives:\n{text}"
    );
    // The delegation shown, and the subagent's ack (read from invoke_agent's
    // AfterTool), are in the log, paired.
    let lines = g.env.event_lines().join("\n");
    let events: Vec<Value> = (lines.lines())
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let shown = (events.iter())
        .find(|e| e["kind"] == "shown" && e["actor"]["role"] == "coder")
        .unwrap_or_else(|| panic!("no shown event for the coder:\n{lines}"));
    let ack = (events.iter())
        .find(|e| e["kind"] == "ack")
        .unwrap_or_else(|| panic!("no ack recorded:\n{lines}"));
    assert_eq!(ack["delegation"], shown["id"], "{ack}");
    assert_eq!(ack["directive"], "no-private-keys", "{ack}");
    assert_eq!(ack["status"], "applied", "{ack}");
}

/// A hive's lesson (issue 42) reaches Gemini CLI's generalist subagent,
/// named by its origin, once the subscription is on main.
#[test]
fn a_hive_lesson_reaches_the_generalist_with_its_origin() {
    let env = TestEnv::initialised();
    super::subscribe_to_a_hive(&env);
    let Some(g) = Gemini::start(env, subagent_script) else {
        return;
    };
    g.install(&[]);
    g.trust();
    let run = g.run("gs36-default: fix it", &Gemini::path_with_git_swarm());
    assert_eq!(run.code, Some(0), "{}", run.show());
    let first = subagent_first_request(&g.server, &run);
    let text = first_text(&first);
    assert!(
        super::has_hive_lesson(&text),
        "the generalist's first message lacks the hive's lesson:\n{text}"
    );
}

/// A directive a branch brings, not yet on `main` (the trusted revision of
/// a repository without a remote), is not in Gemini CLI's briefing, which
/// names it by id as awaiting review (issue 37).
#[test]
fn an_unreviewed_directive_is_not_briefed() {
    let env = repo_with_coordinator_directive();
    super::hostile_branch(&env);
    let Some(g) = Gemini::start(env, |req| say(req, "hello back")) else {
        return;
    };
    g.install(&[]);
    g.trust();
    let run = g.run("gs37-review: say hello", &Gemini::path_with_git_swarm());
    assert_eq!(run.code, Some(0), "{}", run.show());
    let reqs = g.server.requests();
    let main = main_requests(&reqs, "gs37-review");
    let text = main
        .first()
        .unwrap_or_else(|| panic!("no main request\n{}", run.show()))
        .text();
    assert!(
        text.contains("Split the work into tasks a coder finishes in one sitting"),
        "the reviewed directive is briefed:\n{}",
        tail(&text, 3000)
    );
    assert!(
        !text.contains("IMPORTANT SYSTEM NOTICE"),
        "unreviewed text reached the model:\n{}",
        tail(&text, 3000)
    );
    assert!(
        text.contains(
            "1 lesson awaits review and is withheld from agents until on main: hostile-notice."
        ),
        "the briefing names it by id:\n{}",
        tail(&text, 3000)
    );
}

/// The function responses the request's contents hold (the main agent's
/// steps done).
fn steps_done(req: &Request) -> usize {
    function_responses(req).len()
}

/// Issue 38's session of 20 calls, 8 failing.
#[test]
fn a_session_of_twenty_calls_sees_its_eight_failures() {
    use super::{TWENTY, TWENTY_REPORT, TWENTY_TASK};
    let env = TestEnv::initialised();
    let missing = env.root.join("gs38-missing").join("notes.md");
    let script = move |req: &Request| {
        if is_subagent(req) {
            return call(
                req,
                "complete_task",
                json!({"result": {"response": TWENTY_REPORT}}),
            );
        }
        match TWENTY.get(steps_done(req)) {
            Some((_, Some(cmd))) => call(req, "run_shell_command", json!({"command": cmd})),
            Some(("read-missing", None)) => call(
                req,
                "read_file",
                json!({"file_path": missing.to_string_lossy()}),
            ),
            Some(_) => call(
                req,
                "invoke_agent",
                json!({"agent_name": "generalist", "prompt": TWENTY_TASK}),
            ),
            None => say(req, "MAIN DONE"),
        }
    };
    let Some(g) = Gemini::start(env, script) else {
        return;
    };
    g.install(&[]);
    g.trust();
    let started = Instant::now();
    let run = g.run("MAIN-TWENTY run the steps", &Gemini::path_with_git_swarm());
    assert_eq!(run.code, Some(0), "{}", run.show());
    let found = super::candidates(&g.env);
    let briefed = (g.server.requests().iter())
        .find(|r| is_subagent(r) && first_text(r).contains("SUBTASK-TWENTY"))
        .is_some_and(|r| first_text(r).contains("no-private-keys"));
    super::judge_twenty(
        &format!("gemini {}", super::pinned("@google/gemini-cli")),
        &g.env,
        &found,
        ("read_file", "invoke_agent"),
        briefed,
        started,
    );
}

/// A shell call Gemini CLI cancels at its own time limit (`tools.shell.
/// inactivityTimeout`, here 1 s) says so in place of its output, with no
/// exit code: `skipped`, as docs/reflect.md says (issue 38).
#[test]
fn a_command_gemini_cancels_at_its_time_limit_is_skipped() {
    const SLOW: &str = "sleep 8";
    let Some(g) = Gemini::start(TestEnv::initialised(), |req: &Request| {
        match returned(req).map(|(name, _)| name).as_deref() {
            None => call(req, "run_shell_command", json!({"command": SLOW})),
            Some(_) => say(req, "MAIN DONE"),
        }
    }) else {
        return;
    };
    g.install(&[]);
    g.trust();
    let path = g.env.path(".gemini/settings.json");
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("settings")).expect("json");
    settings["tools"] = json!({"shell": {"inactivityTimeout": 1}});
    std::fs::write(&path, settings.to_string()).expect("write settings");
    let run = g.run("gs38-cancel: run it", &Gemini::path_with_git_swarm());
    assert_eq!(run.code, Some(0), "{}", run.show());
    let found = super::candidates(&g.env);
    let slow = (found.iter())
        .find(|c| c["command"] == SLOW)
        .unwrap_or_else(|| {
            panic!(
                "no candidate for the cancelled call: {found:#?}\n{}",
                run.show()
            )
        });
    assert_eq!(
        (&slow["class"], &slow["excerpt"]),
        (&json!("skipped"), &json!("interrupted")),
        "{slow:#}"
    );
}

/// Every function response the request's contents hold, in order:
/// `(name, response)`.
fn function_responses(req: &Request) -> Vec<(String, Value)> {
    let body = req.json();
    (body["contents"].as_array().into_iter().flatten())
        .flat_map(|c| c["parts"].as_array().into_iter().flatten())
        .filter_map(|p| {
            let fr = p.get("functionResponse")?;
            Some((fr["name"].as_str()?.to_owned(), fr["response"].clone()))
        })
        .collect()
}

/// The request of the longest history among `reqs` (the agent's last).
fn last_of<'a>(reqs: impl IntoIterator<Item = &'a Request>) -> Option<&'a Request> {
    reqs.into_iter().max_by_key(|r| function_responses(r).len())
}

/// How many of the request's function responses carry the path lesson.
fn path_lessons(req: &Request) -> usize {
    let responses: Vec<String> = (function_responses(req).iter())
        .map(|(_, r)| r.to_string())
        .collect();
    super::path_lessons_in(responses.iter().map(String::as_str))
}

/// The tasks of the two subagents the path scenario runs side by side.
const PATH_SUBS: [(&str, &str); 2] = [
    (
        "gs40-sub-a: extend the alpha schema",
        "crates/alpha/schema.sql",
    ),
    (
        "gs40-sub-b: extend the beta schema",
        "crates/beta/schema.sql",
    ),
];

/// Issue 40, lessons at an edit: the main agent writes `schema.sql`, then
/// edits it, then hands two subagents in one turn a `schema.sql` each to
/// write. The lesson comes with the write's result (AfterTool: Gemini's
/// BeforeTool takes no context), and not with the edit's. Gemini's payloads
/// name no agent and share the parent's session, so git-swarm takes the
/// subagents' calls for the main agent's, which has seen the lesson: they
/// are not told at their calls (siblings cannot be told apart), only in
/// their task's block, the lesson being a `coder`'s too.
#[test]
fn a_path_lesson_comes_once_with_the_first_edit() {
    let script = |req: &Request| {
        if is_subagent(req) {
            let task = first_text(req);
            let Some((_, file)) = PATH_SUBS.iter().find(|(t, _)| task.contains(t)) else {
                return say(req, "SUB DONE");
            };
            return match returned(req).map(|(name, _)| name).as_deref() {
                None => call(
                    req,
                    "write_file",
                    json!({"file_path": file, "content": "-- sub schema v1\n"}),
                ),
                Some("write_file") => call(
                    req,
                    "complete_task",
                    json!({"result": {"response": "SUB DONE\nKNOWLEDGE_APPLIED:no-private-keys"}}),
                ),
                Some(_) => say(req, "SUB DONE"),
            };
        }
        match steps_done(req) {
            0 => call(
                req,
                "write_file",
                json!({"file_path": "schema.sql", "content": "-- schema v1\n"}),
            ),
            1 => call(
                req,
                "replace",
                json!({"file_path": "schema.sql", "instruction": "bump the schema",
                       "old_string": "-- schema v1", "new_string": "-- schema v2"}),
            ),
            2 => answer(
                req,
                Value::Array(
                    (PATH_SUBS.iter())
                        .map(|(task, _)| {
                            json!({"functionCall": {"name": "invoke_agent",
                                   "args": {"agent_name": "generalist", "prompt": task}}})
                        })
                        .collect(),
                ),
            ),
            _ => say(req, "MAIN DONE"),
        }
    };
    let env = TestEnv::initialised();
    super::commit_path_lesson(&env);
    let Some(g) = Gemini::start(env, script) else {
        return;
    };
    g.install(&[]);
    g.trust();
    let started = Instant::now();
    let run = g.run(
        "gs40-schema: change the schema",
        &Gemini::path_with_git_swarm(),
    );
    assert_eq!(run.code, Some(0), "{}", run.show());
    let reqs = g.server.requests();
    let main = last_of(main_requests(&reqs, "gs40-schema"))
        .unwrap_or_else(|| panic!("no main request\n{}", run.show()));
    let responses = function_responses(main);
    assert_eq!(
        std::fs::read_to_string(g.env.path("schema.sql"))
            .ok()
            .as_deref(),
        Some("-- schema v2\n"),
        "the write and the edit: {responses:#?}\n{}",
        run.show()
    );
    let with_lesson: Vec<&str> = (responses.iter())
        .filter(|(_, r)| r.to_string().contains(super::PATH_LESSON))
        .map(|(name, _)| name.as_str())
        .collect();
    let subs: Vec<&Request> = (PATH_SUBS.iter())
        .map(|(task, _)| {
            let own = reqs
                .iter()
                .filter(|r| is_subagent(r) && first_text(r).contains(task));
            last_of(own)
                .unwrap_or_else(|| panic!("the subagent {task:?} asked nothing\n{}", run.show()))
        })
        .collect();
    // The subagents are `coder`s: their task's block has the lesson too.
    let in_block: Vec<bool> = (subs.iter())
        .map(|r| first_text(r).contains(super::PATH_LESSON))
        .collect();
    let subs: Vec<usize> = subs.into_iter().map(path_lessons).collect();
    let shown = super::path_lessons_shown(&g.env);
    println!(
        "FIGURE gemini {} lessons at an edit: main agent told {}x over a write and an edit {with_lesson:?}; sibling subagents told at their write {subs:?} (their calls are the main agent's to git-swarm), in their task's block {in_block:?}; shown-at-a-call events {shown:?}; {:.1} s",
        super::pinned("@google/gemini-cli"),
        with_lesson.len(),
        started.elapsed().as_secs_f64()
    );
    assert_eq!(
        with_lesson,
        ["write_file"],
        "the lesson came not once, with the write: {responses:#?}"
    );
    assert!(
        responses.iter().any(|(name, _)| name == "replace"),
        "the edit's result is not in the history: {responses:#?}"
    );
    for (_, file) in PATH_SUBS {
        assert!(g.env.exists(file), "a subagent did not write {file}");
    }
    assert_eq!(subs, [0, 0], "a subagent was told again");
    assert_eq!(
        shown,
        [("write_file".to_owned(), "coordinator".to_owned())],
        "{:#?}",
        g.env.event_lines()
    );
}

/// Issue 40, guards: the template's guard refuses a force-push of `main`
/// from BeforeTool (the model reads the lesson as the call's error), and
/// lets the same words through quoted.
#[test]
fn a_guard_refuses_a_force_push_but_not_the_words_quoted() {
    let script = |req: &Request| match steps_done(req) {
        0 => call(req, "run_shell_command", json!({"command": super::GUARDED})),
        1 => call(
            req,
            "run_shell_command",
            json!({"command": super::QUOTED_ECHO}),
        ),
        _ => say(req, "MAIN DONE"),
    };
    let Some(g) = Gemini::start(TestEnv::initialised(), script) else {
        return;
    };
    g.install(&[]);
    g.trust();
    let started = Instant::now();
    let run = g.run("gs40-guard: push it", &Gemini::path_with_git_swarm());
    assert_eq!(run.code, Some(0), "{}", run.show());
    let reqs = g.server.requests();
    let main = last_of(main_requests(&reqs, "gs40-guard"))
        .unwrap_or_else(|| panic!("no main request\n{}", run.show()));
    let responses = function_responses(main);
    let [(_, refused), (_, quoted)] = responses.as_slice() else {
        panic!("not two shell results: {responses:#?}\n{}", run.show());
    };
    let refused = refused["error"].as_str().unwrap_or_default();
    assert!(
        refused.starts_with("Tool execution blocked: git-swarm refused this tool call"),
        "{refused}"
    );
    assert!(quoted.get("error").is_none(), "{quoted:#}");
    super::judge_refusal(
        &format!("gemini {}", super::pinned("@google/gemini-cli")),
        &g.env,
        refused,
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
    let Some(g) = Gemini::start(TestEnv::initialised(), move |req| {
        if !req.text().contains("GS41-SESSION-") {
            return say(req, "ok");
        }
        match returned(req) {
            Some(_) => say(req, "MAIN DONE"),
            None => {
                let command = super::loop_command(&knows, &req.text());
                call(req, "run_shell_command", json!({"command": command}))
            }
        }
    }) else {
        return;
    };
    g.install(&[]);
    g.trust();
    let started = Instant::now();
    super::loop_repo(&g.env);
    let session = |name: &str, lesson: Option<&str>| {
        let runs = super::lint_runs(&g.env);
        let prompt = super::loop_prompt(name);
        let run = g.run(&prompt, &Gemini::path_with_git_swarm());
        assert_eq!(run.code, Some(0), "{}", run.show());
        let reqs = g.server.requests();
        let texts: Vec<String> = (main_requests(&reqs, &prompt).into_iter())
            .map(Request::text)
            .collect();
        super::LoopSession::of(name, &texts, lesson, (runs, super::lint_runs(&g.env)))
    };
    let before: Vec<_> = (super::LOOP_BEFORE.iter())
        .map(|n| session(n, None))
        .collect();
    let minted = super::mint_loop_lesson(&g.env);
    *learned.lock().expect("lesson lock") = Some(minted.lesson.clone());
    let after: Vec<_> = (super::LOOP_AFTER)
        .map(|n| session(&n.to_string(), Some(&minted.lesson)))
        .collect();
    super::judge_closed_loop(
        &format!("gemini {}", super::pinned("@google/gemini-cli")),
        &g.env,
        &minted,
        &before,
        &after,
        started,
    );
}
