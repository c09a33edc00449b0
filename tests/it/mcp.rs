//! `git swarm mcp`: the real binary spoken to over its stdin and stdout as
//! an MCP client does (newline-delimited JSON-RPC), in a temp repository.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::{TestEnv, bin, directive, of_kind, repo_without_directives};
use serde_json::{Value, json};

struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    next_id: u64,
}

impl Client {
    /// Starts the server in `env`'s repository and completes the handshake.
    fn start(env: &TestEnv) -> Client {
        let mut client = Client::spawn(env);
        let init = client.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "git-swarm-test", "version": "0"},
            }),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "git-swarm", "{init}");
        assert!(
            init["result"]["capabilities"]["tools"].is_object(),
            "{init}"
        );
        client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        client
    }

    fn spawn(env: &TestEnv) -> Client {
        let mut cmd = env.command(bin(), &env.root);
        // The real clock: events of the server's calls are ordered as made.
        cmd.arg("mcp")
            .env_remove("GIT_SWARM_NOW")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn git-swarm mcp");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Client {
            child,
            stdin,
            lines,
            next_id: 0,
        }
    }

    fn send(&mut self, message: &Value) {
        self.send_raw(&message.to_string());
    }

    fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").expect("write to server");
        stdin.flush().expect("flush");
    }

    /// The next message from the server, failing the test after 60 s.
    fn receive(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(60))
            .expect("a message from the server");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let m = self.receive();
            if m["id"] == id {
                return m;
            }
        }
    }

    /// `tools/call`: the JSON-RPC response.
    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))
    }

    /// A call that must succeed: its structured result.
    #[track_caller]
    fn ok(&mut self, tool: &str, arguments: Value) -> Value {
        let r = self.call(tool, arguments);
        assert_eq!(r["result"]["isError"], false, "{r}");
        r["result"]["structuredContent"].clone()
    }

    /// A call that must fail as a tool result: its text.
    #[track_caller]
    fn tool_error(&mut self, tool: &str, arguments: Value) -> String {
        let r = self.call(tool, arguments);
        assert_eq!(r["result"]["isError"], true, "{r}");
        r["result"]["content"][0]["text"]
            .as_str()
            .expect("text")
            .to_owned()
    }

    /// Closes the server's input and returns its exit code and stderr.
    fn finish(mut self) -> (i32, String) {
        drop(self.stdin.take());
        let out = self.child.wait_with_output().expect("wait");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

fn repo_with_rules() -> TestEnv {
    let env = repo_without_directives();
    directive(
        &env,
        "no-todo",
        "lesson = \"Do not leave TODO markers in source files\"\npriority = \"critical\"\napplies_to_agents = [\"coder\"]\nverify = [\"grep:TODO:src/**\"]\nenforcement = \"enforce\"",
    );
    directive(
        &env,
        "tenant-keys",
        "lesson = \"Prefix every cache key with the tenant id\"\npriority = \"high\"\napplies_to_agents = [\"coder\"]\nrequired_actions = [\"build cache keys with tenant_key()\"]",
    );
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "rules"]);
    env
}

#[test]
fn lists_every_tool_with_an_input_schema() {
    let env = repo_with_rules();
    let mut c = Client::start(&env);
    let r = c.request("tools/list", json!({}));
    let tools = r["result"]["tools"].as_array().expect("tools");
    let mut names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "ack",
            "check",
            "inject",
            "propose_lesson",
            "review_checklist",
            "review_verdicts",
            "search",
            "status"
        ]
    );
    for t in tools {
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
        assert!(!t["description"].as_str().unwrap_or("").is_empty(), "{t}");
    }
    let inject = tools.iter().find(|t| t["name"] == "inject").unwrap();
    assert_eq!(inject["inputSchema"]["required"], json!(["role"]));
    assert_eq!(c.finish().0, 0);
}

#[test]
fn inject_ack_review_through_the_server() {
    let env = repo_with_rules();
    let mut c = Client::start(&env);

    let r = c.ok(
        "inject",
        json!({"role": "coder", "task": "add a cache for sessions", "phase": "p1"}),
    );
    assert_eq!(r["exit_code"], 0);
    let report = &r["report"];
    let delegation = report["delegation"]
        .as_str()
        .expect("delegation")
        .to_owned();
    assert!(
        report["block"].as_str().unwrap().contains("- id: no-todo"),
        "{r}"
    );
    assert_eq!(report["recorded"], true);
    let shown = of_kind(&env, "shown");
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0]["id"], delegation.as_str());

    let r = c.ok(
        "ack",
        json!({"delegation": delegation, "message": "Done.\nKNOWLEDGE_APPLIED:no-todo\n"}),
    );
    assert_eq!(r["report"]["delegation"], delegation.as_str());
    let acks = of_kind(&env, "ack");
    assert_eq!(acks.len(), 1, "{:?}", env.event_lines());
    assert_eq!(acks[0]["directive"], "no-todo");

    let r = c.ok("review_checklist", json!({"phase": "p1"}));
    assert!(r["report"].to_string().contains("no-todo"), "{r}");

    env.write("src/lib.rs", "fn f() {} // TODO later\n");
    env.git(&["add", "src/lib.rs"]);
    let r = c.ok(
        "review_verdicts",
        json!({"phase": "p1", "verdicts": "- VERIFIED:no-todo evidence=looked fine\n"}),
    );
    assert_eq!(r["exit_code"], 0, "{r}");
    let v = of_kind(&env, "verdict");
    assert_eq!(v.len(), 1);
    assert_eq!(v[0]["directive"], "no-todo");
    assert_eq!(v[0]["machine"], "fail");
    assert_eq!(v[0]["verdict"], "violated");

    // An ack for a delegation that does not exist is the command's error.
    let text = c.tool_error(
        "ack",
        json!({"delegation": "01JNOSUCHDELEGATION0000000", "message": "KNOWLEDGE_APPLIED:no-todo\n"}),
    );
    assert!(text.contains("error:"), "{text}");
    // And the server still serves.
    c.ok("status", json!({}));
    let (code, stderr) = c.finish();
    assert_eq!(code, 0, "{stderr}");
}

/// Issue 37: an agent's arguments reach the command whole and exact, never
/// through a command line: a query of 1 MB is searched (it was "Argument
/// list too long"), a task of 1 MB is ranked, and a file named `a,b` is one
/// file, not two.
#[test]
fn arguments_reach_the_command_whole_and_exact() {
    let env = repo_with_rules();
    let mut c = Client::start(&env);
    let words = "tenant cache keys ".repeat(60_000);
    assert!(words.len() > 1024 * 1024);

    let r = c.ok("search", json!({"query": words}));
    assert_eq!(r["exit_code"], 0, "{r}");
    assert!(r["report"].to_string().contains("tenant-keys"), "{r}");

    let r = c.ok(
        "inject",
        json!({"role": "coder", "task": words, "files": ["src/a,b.rs", "-x.rs"]}),
    );
    assert_eq!(r["exit_code"], 0, "{r}");
    assert_eq!(r["report"]["files"], json!(["src/a,b.rs", "-x.rs"]), "{r}");

    // The message of an ack still reads as standard input.
    let delegation = r["report"]["delegation"].as_str().expect("delegation");
    let r = c.ok(
        "ack",
        json!({"delegation": delegation, "message": "KNOWLEDGE_APPLIED:tenant-keys\n"}),
    );
    assert_eq!(r["exit_code"], 0, "{r}");
    assert_eq!(of_kind(&env, "ack").len(), 1, "{:?}", env.event_lines());
    let (code, stderr) = c.finish();
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn check_search_and_status_report_as_the_cli_does() {
    let env = repo_with_rules();
    let mut c = Client::start(&env);

    let r = c.ok("check", json!({}));
    assert_eq!(r["exit_code"], 0, "{r}");

    env.write("src/lib.rs", "fn f() {} // TODO later\n");
    env.git(&["add", "src/lib.rs"]);
    let r = c.ok("check", json!({"selection": "staged"}));
    // A failing check is a report (exit 1), not a failed call.
    assert_eq!(r["exit_code"], 1, "{r}");
    assert!(r["report"].to_string().contains("no-todo"), "{r}");
    env.git(&["reset", "-q"]);
    let r = c.ok("check", json!({"selection": "worktree"}));
    assert_eq!(r["exit_code"], 1, "{r}");

    let r = c.ok("search", json!({"query": "tenant cache key", "limit": 1}));
    let text = r["report"].to_string();
    assert!(text.contains("tenant-keys"), "{r}");
    assert!(!text.contains("no-todo"), "{r}");
    // A query that starts with a dash is still a query.
    c.ok("search", json!({"query": "--tenant"}));

    let r = c.ok("status", json!({}));
    assert!(r["report"].is_object(), "{r}");
    assert_eq!(c.finish().0, 0);
}

#[test]
fn propose_lesson_writes_an_open_proposal_not_a_directive() {
    let env = repo_with_rules();
    let mut c = Client::start(&env);
    let r = c.ok(
        "propose_lesson",
        json!({
            "title": "Run the migrations before the integration tests",
            "category": "testing",
            "applies_to_agents": ["coder"],
            "evidence": "The integration tests failed twice on a stale schema.",
        }),
    );
    let slug = r["slug"].as_str().expect("slug").to_owned();
    assert!(slug.starts_with("mcp-"), "{slug}");
    assert_eq!(r["status"], "open");
    let path = r["path"].as_str().unwrap();
    assert_eq!(path, format!(".swarm/proposals/{slug}.md"));
    let text = env.read(path);
    assert!(text.contains("source: mcp"), "{text}");
    assert!(text.contains("category: testing"), "{text}");
    assert!(text.contains("stale schema"), "{text}");
    assert!(!env.exists(&format!(".swarm/directives/{slug}.toml")));
    let proposed = of_kind(&env, "proposed");
    assert_eq!(proposed.len(), 1);
    assert_eq!(proposed[0]["directive"], slug.as_str());

    // The same lesson again is refused, not filed twice.
    let text = c.tool_error(
        "propose_lesson",
        json!({"title": "Run the migrations before the integration tests"}),
    );
    assert!(text.contains("already exists"), "{text}");
    let text = c.tool_error("propose_lesson", json!({"title": "too short"}));
    assert!(text.contains("15 to 280"), "{text}");
    let text = c.tool_error(
        "propose_lesson",
        json!({"title": "Run the linter before every single commit", "category": "vibes"}),
    );
    assert!(text.contains("hint:"), "{text}");
    assert_eq!(of_kind(&env, "proposed").len(), 1);

    // A person accepts it, through the gate.
    let run = env.swarm(&["proposal", "accept", &slug]);
    common::assert_no_panic(&run);
    assert!(
        env.exists(&format!(".swarm/directives/{slug}.toml"))
            || env.exists(&format!(".swarm/quarantine/{slug}.toml")),
        "{}",
        run.snapshot()
    );
    assert_eq!(c.finish().0, 0);
}

/// `propose_lesson` takes a title and list items of one line of visible
/// text: a control character, a line or paragraph separator or a
/// bidirectional control is a tool error naming the field, and nothing is
/// written.
#[test]
fn propose_lesson_refuses_control_separator_and_bidi_characters() {
    let env = repo_with_rules();
    let mut c = Client::start(&env);
    for c_ in [
        '\r', '\u{2028}', '\u{2029}', '\0', '\u{1b}', '\u{7}', '\u{202a}', '\u{202b}', '\u{202c}',
        '\u{202d}', '\u{202e}', '\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}',
    ] {
        let title = format!("Run the migrations{c_}before the integration tests");
        let text = c.tool_error("propose_lesson", json!({ "title": title }));
        assert!(
            text.contains("title contains")
                && text.contains(&format!("(U+{:04X}) at character 19", c_ as u32)),
            "U+{:04X}: {text}",
            c_ as u32
        );
        assert!(text.contains("hint:"), "{text}");
    }
    let text = c.tool_error(
        "propose_lesson",
        json!({
            "title": "Run the migrations before the integration tests",
            "applies_to_agents": ["coder"],
            "forbidden_actions": ["ring the \u{7} bell"],
        }),
    );
    assert!(
        text.contains("forbidden_actions[0] contains a bell (U+0007) at character 10"),
        "{text}"
    );
    assert!(of_kind(&env, "proposed").is_empty());
    let proposals = std::fs::read_dir(env.path(".swarm/proposals")).map_or(0, |d| d.count());
    assert_eq!(proposals, 0, "nothing written");
    assert_eq!(c.finish().0, 0);
}

#[test]
fn bad_input_is_an_error_and_the_server_survives() {
    let env = repo_with_rules();
    let mut c = Client::start(&env);

    // A bad argument value: the command's usage error, as a tool result.
    let text = c.tool_error("inject", json!({"role": "no such role!"}));
    assert!(text.contains("error:"), "{text}");
    assert!(of_kind(&env, "shown").is_empty());
    let text = c.tool_error("review_checklist", json!({"phase": "../x"}));
    assert!(text.contains("error:"), "{text}");

    // A missing argument: rmcp's error result, naming the field.
    let text = c.tool_error("inject", json!({}));
    assert!(text.contains("missing field `role`"), "{text}");
    // An unknown tool: a JSON-RPC error.
    let r = c.call("no_such_tool", json!({}));
    assert!(r["error"]["code"].is_i64(), "{r}");
    assert!(r.get("result").is_none(), "{r}");

    // A line that is not JSON does not stop the server.
    c.send_raw("{this is not json");
    let r = c.request("tools/list", json!({}));
    assert!(r["result"]["tools"].is_array(), "{r}");
    c.ok("status", json!({}));

    let (code, stderr) = c.finish();
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn outside_a_swarm_repository_it_refuses_to_start() {
    let env = TestEnv::new();
    let out = env
        .command(bin(), &env.root)
        .arg("mcp")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("error:") && stderr.contains("hint:"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}
