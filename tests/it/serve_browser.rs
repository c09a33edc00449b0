//! `git swarm serve` in a real browser: headless Chromium (the
//! distribution's package) driven over the Chrome DevTools Protocol. The
//! page loads with the directives, a line appended to the log by another
//! process appears in the stream without a reload, the plot is drawn, and a
//! lesson with `<script>` shows as text and never runs.

use crate::common;
use crate::serve_support;

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tungstenite::stream::MaybeTlsStream;

use common::{TestEnv, directive, repo_without_directives};
use serve_support::Served;

const SCRIPT_LESSON: &str =
    "<script>window.pwned=1</script><img src=x onerror=\"window.pwned=2\"> lessons are text";

fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|name| {
            Command::new(name)
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
}

/// Headless Chromium in a process group of its own: dropping it kills the
/// whole group (renderers, the GPU process), on every path out of a test.
struct Browser {
    child: Child,
    _profile: tempfile::TempDir,
    ws: tungstenite::WebSocket<MaybeTlsStream<TcpStream>>,
    next_id: u64,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.ws.close(None);
        // SAFETY: kill(2) on our own child's process group; no memory involved.
        unsafe {
            libc::kill(-(self.child.id() as i32), libc::SIGKILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Browser {
    fn launch(program: &str) -> Browser {
        let profile = tempfile::tempdir().expect("profile dir");
        let mut child = Command::new(program)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--remote-debugging-port=0",
                "--remote-debugging-address=127.0.0.1",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            // Its org.chromium.Chromium.* scratch dirs go with the profile.
            .env("TMPDIR", profile.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("start chromium");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("DevTools listening on ") {
                    let _ = tx.send(url.trim().to_owned());
                }
            }
        });
        let url = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(url) => url,
            Err(_) => {
                unsafe {
                    libc::kill(-(child.id() as i32), libc::SIGKILL);
                }
                let _ = child.wait();
                panic!("chromium did not say where DevTools listen");
            }
        };
        let ws = match tungstenite::connect(url.as_str()) {
            Ok((ws, _)) => ws,
            Err(e) => {
                unsafe {
                    libc::kill(-(child.id() as i32), libc::SIGKILL);
                }
                let _ = child.wait();
                panic!("cannot connect to {url}: {e}");
            }
        };
        if let MaybeTlsStream::Plain(s) = ws.get_ref() {
            s.set_read_timeout(Some(Duration::from_secs(60)))
                .expect("timeout");
        }
        Browser {
            child,
            _profile: profile,
            ws,
            next_id: 0,
        }
    }

    /// Sends one command and returns its result (events in between are skipped).
    fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        self.ws
            .send(tungstenite::Message::text(msg.to_string()))
            .expect("send to chromium");
        loop {
            let reply = self.ws.read().expect("read from chromium");
            let tungstenite::Message::Text(text) = reply else {
                continue;
            };
            let v: Value = serde_json::from_str(text.as_str()).expect("CDP JSON");
            if v["id"] == json!(id) {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v["result"].clone();
            }
        }
    }
}

/// A page of the browser, attached with a flat session.
struct Page<'b> {
    browser: &'b mut Browser,
    session: String,
}

impl Page<'_> {
    fn open<'b>(browser: &'b mut Browser, url: &str) -> Page<'b> {
        let target = browser.call(None, "Target.createTarget", json!({ "url": url }));
        let target = target["targetId"].as_str().expect("targetId").to_owned();
        let attached = browser.call(
            None,
            "Target.attachToTarget",
            json!({ "targetId": target, "flatten": true }),
        );
        let session = attached["sessionId"]
            .as_str()
            .expect("sessionId")
            .to_owned();
        Page { browser, session }
    }

    /// Evaluates `expr` in the page and returns its value.
    fn eval(&mut self, expr: &str) -> Value {
        let r = self.browser.call(
            Some(&self.session),
            "Runtime.evaluate",
            json!({ "expression": expr, "returnByValue": true }),
        );
        assert!(r.get("exceptionDetails").is_none(), "{expr}: {r}");
        r["result"]["value"].clone()
    }

    /// Evaluates `expr` until it is `true`, for at most `limit`.
    fn wait_for(&mut self, expr: &str, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if self.eval(expr) == json!(true) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    }
}

fn store() -> TestEnv {
    let env = repo_without_directives();
    directive(
        &env,
        "no-markup",
        &format!(
            "lesson = '''{SCRIPT_LESSON}'''\npriority = \"low\"\napplies_to_agents = [\"coder\"]\nrequired_actions = [\"escape it\"]"
        ),
    );
    directive(
        &env,
        "quiet-one",
        "lesson = \"A directive nobody has violated yet\"\napplies_to_agents = [\"coder\"]\nrequired_actions = [\"be quiet\"]",
    );
    directive(
        &env,
        "once-only",
        "lesson = \"A directive violated once, on one day\"\napplies_to_agents = [\"coder\"]\nrequired_actions = [\"be careful\"]",
    );
    let lines = [
        r#"{"id":"01KAAAAAAAAAAAAAAAAAAAAAA1","ts":"2026-11-20T09:00:00.000Z","kind":"check","directive":"no-markup","change":"c1"}"#,
        r#"{"id":"01KAAAAAAAAAAAAAAAAAAAAAA2","ts":"2026-11-21T09:00:00.000Z","kind":"check","directive":"no-markup","change":"c2"}"#,
        r#"{"id":"01KAAAAAAAAAAAAAAAAAAAAAA3","ts":"2026-11-21T10:00:00.000Z","kind":"check","directive":"once-only","change":"c3","reason":"<img src=x onerror=\"window.pwned=3\">"}"#,
    ];
    env.write(
        ".swarm/events/2026-11.jsonl",
        format!("{}\n", lines.join("\n")),
    );
    env
}

#[test]
fn the_page_loads_follows_the_log_and_plots_in_chromium() {
    let Some(program) = chromium() else {
        common::skipped("chromium", "not installed (apt-get install chromium)");
        return;
    };
    let env = store();
    let served = Served::start(&env, &[]);
    let mut browser = Browser::launch(program);
    let mut page = Page::open(&mut browser, &served.url);
    assert!(
        page.wait_for(
            "document.body && document.body.dataset.loaded === 'true'",
            Duration::from_secs(60)
        ),
        "the page never loaded: {}",
        page.eval("document.documentElement.outerHTML")
    );

    // The directives, with the escalated one marked.
    let ids = page.eval("JSON.stringify([...document.querySelectorAll('#directives tbody tr')].map(tr => tr.dataset.id))");
    assert_eq!(ids, json!(r#"["no-markup","once-only","quiet-one"]"#));
    let escalated = page.eval(
        "document.querySelector('#directives tr[data-id=\"no-markup\"]').classList.contains('escalated')",
    );
    assert_eq!(escalated, json!(true));
    let level = page.eval(
        "document.querySelector('#directives tr[data-id=\"no-markup\"] td.level').textContent",
    );
    assert_eq!(level, json!("critical"));

    // The lesson is text: shown as written, no element made of it, nothing ran.
    let lesson = page.eval(
        "document.querySelector('#directives tr[data-id=\"no-markup\"] td.lesson').textContent",
    );
    assert_eq!(lesson, json!(SCRIPT_LESSON));
    assert_eq!(
        page.eval("document.querySelectorAll('main script, main img').length"),
        json!(0)
    );
    assert_eq!(page.eval("typeof window.pwned"), json!("undefined"));
    let violation = page.eval("document.getElementById('violations').textContent");
    assert!(
        violation
            .as_str()
            .is_some_and(|t| t.contains("<img src=x onerror")),
        "{violation}"
    );

    // The plot: one stacked series per directive with violations, a bar
    // per day with some, a triangle for the escalation, a legend, dated axis.
    let plot = page.eval(
        "JSON.stringify({ series: [...document.querySelectorAll('#plot-svg g.series')].map(g => g.dataset.directive), \
           bars: document.querySelectorAll('#plot-svg g.series[data-directive=\"no-markup\"] rect.bar').length, \
           other: document.querySelectorAll('#plot-svg g.series[data-directive=\"once-only\"] rect.bar').length, \
           escalations: document.querySelectorAll('#plot-svg polygon.escalation').length, \
           legend: [...document.querySelectorAll('#legend li')].map(li => li.dataset.directive), \
           ticks: [...document.querySelectorAll('#plot-svg .axis text')].map(t => t.textContent), \
           drawn: [...document.querySelectorAll('#plot-svg rect.bar')].every(r => r.getBBox().height > 0) })",
    );
    let plot: Value = serde_json::from_str(plot.as_str().expect("string")).expect("plot JSON");
    assert_eq!(plot["series"], json!(["no-markup", "once-only"]), "{plot}");
    assert_eq!(plot["bars"], json!(2), "{plot}");
    assert_eq!(plot["other"], json!(1), "{plot}");
    assert_eq!(plot["escalations"], json!(1), "{plot}");
    assert_eq!(plot["legend"], json!(["no-markup", "once-only"]), "{plot}");
    assert_eq!(plot["drawn"], json!(true), "{plot}");
    let ticks = plot["ticks"].to_string();
    assert!(
        ticks.contains("11-22") && ticks.contains("2026-10-24 to 2026-11-22"),
        "{ticks}"
    );

    // The stream: the backlog, then a line another process appends, with no reload.
    assert!(page.wait_for(
        "[...document.querySelectorAll('#stream li')].some(li => li.dataset.id === '01KAAAAAAAAAAAAAAAAAAAAAA3')",
        Duration::from_secs(30)
    ));
    page.eval("window.notReloaded = 42");
    let recorded = env
        .swarm(&[
            "record",
            "check",
            "--directive",
            "quiet-one",
            "--field",
            "change=\"c9\"",
            "--print-ids",
        ])
        .success()
        .stdout
        .clone();
    let id = env
        .event_lines()
        .last()
        .and_then(|l| serde_json::from_str::<Value>(l).ok())
        .and_then(|e| e["id"].as_str().map(str::to_owned))
        .unwrap_or_else(|| panic!("no id recorded: {recorded}"));
    let arrived = format!(
        "[...document.querySelectorAll('#stream li')].some(li => li.dataset.id === '{id}')"
    );
    assert!(
        page.wait_for(&arrived, Duration::from_secs(30)),
        "the new event never appeared: {}",
        page.eval("document.getElementById('stream').textContent")
    );
    assert_eq!(
        page.eval("window.notReloaded"),
        json!(42),
        "the page was reloaded"
    );
    // The new violation reaches the table and the plot too.
    assert!(page.wait_for(
        "document.querySelectorAll('#plot-svg g.series[data-directive=\"quiet-one\"] rect.bar').length === 1",
        Duration::from_secs(30)
    ));
    assert_eq!(page.eval("typeof window.pwned"), json!("undefined"));
}
