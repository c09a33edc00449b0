//! `git swarm serve` over HTTP: the real binary, a real repository, plain
//! sockets. Loopback only, its routes only, read-only, Host checked, every
//! string from `.swarm/` escaped, and the live stream.

use crate::common;
use crate::serve_support;

use std::time::Duration;

use common::{TestEnv, directive, repo_without_directives};
use serve_support::Served;

const SCRIPT_LESSON: &str = "<script>window.pwned=1</script> never trust a lesson's markup";

/// Two directives, one with markup in its lesson and violated on two
/// occasions (so escalated), a pattern and an open handoff.
fn store() -> TestEnv {
    let env = repo_without_directives();
    directive(
        &env,
        "no-markup",
        &format!(
            "lesson = \"{SCRIPT_LESSON}\"\npriority = \"low\"\nenforcement = \"warn\"\napplies_to_agents = [\"coder\"]\nrequired_actions = [\"escape it\"]"
        ),
    );
    directive(
        &env,
        "quiet-one",
        "lesson = \"A directive nobody has violated yet\"\napplies_to_agents = [\"coder\"]\nrequired_actions = [\"be quiet\"]",
    );
    let lines = [
        r#"{"id":"01KAAAAAAAAAAAAAAAAAAAAAA1","ts":"2026-11-20T09:00:00.000Z","kind":"check","directive":"no-markup","change":"c1","reason":"<b>bold</b>"}"#,
        r#"{"id":"01KAAAAAAAAAAAAAAAAAAAAAA2","ts":"2026-11-21T09:00:00.000Z","kind":"check","directive":"no-markup","change":"c2"}"#,
    ];
    env.write(
        ".swarm/events/2026-11.jsonl",
        format!("{}\n", lines.join("\n")),
    );
    env
}

/// Every file under `.swarm/` with its bytes, to tell whether serving wrote any.
fn snapshot(env: &TestEnv) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut dirs = vec![env.path(".swarm")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                out.push((
                    p.display().to_string(),
                    std::fs::read(&p).unwrap_or_default(),
                ));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn listens_on_loopback_only_and_says_where() {
    let env = store();
    let served = Served::start(&env, &[]);
    assert!(
        served.url.starts_with("http://127.0.0.1:") && served.url.ends_with('/'),
        "{}",
        served.url
    );
    // The kernel's table of listening TCP sockets: ours is 127.0.0.1 only.
    let table = std::fs::read_to_string("/proc/net/tcp").expect("/proc/net/tcp");
    let port = format!("{:04X}", served.port);
    let ours: Vec<&str> = table
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().nth(1).map(|local| (l, local)))
        .filter(|(l, local)| {
            local.ends_with(&format!(":{port}")) && l.split_whitespace().nth(3) == Some("0A")
        })
        .map(|(_, local)| local)
        .collect();
    assert_eq!(ours, [format!("0100007F:{port}")], "{table}");
    let tcp6 = std::fs::read_to_string("/proc/net/tcp6").unwrap_or_default();
    assert!(
        !tcp6.lines().any(|l| l
            .split_whitespace()
            .nth(1)
            .is_some_and(|local| local.ends_with(&format!(":{port}")))),
        "not on IPv6 either:\n{tcp6}"
    );
    let page = served.get("/");
    assert_eq!(page.status, 200);
    assert!(page.body.contains("<script src=\"/app.js\""));
}

#[test]
fn only_its_routes_and_only_reading() {
    let env = store();
    let served = Served::start(&env, &[]);
    for target in [
        "/",
        "/app.js",
        "/app.css",
        "/api/overview.json",
        "/api/series.json",
    ] {
        let r = served.get(target);
        assert_eq!(r.status, 200, "{target}");
        let csp = r.header("content-security-policy").unwrap_or_default();
        assert!(
            csp.contains("default-src 'none'") && csp.contains("script-src 'self'"),
            "{target}: {csp}"
        );
        assert_eq!(
            r.header("x-content-type-options"),
            Some("nosniff"),
            "{target}"
        );
        assert_eq!(served.request("HEAD", target).status, 200, "HEAD {target}");
    }
    for target in [
        "/../",
        "/../../etc/passwd",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/.swarm/config.toml",
        "/api/overview.json/../../.swarm/config.toml",
        "//etc/passwd",
        "/index.html",
        "/app.js%00",
        "/api/",
    ] {
        let r = served.get(target);
        assert_eq!(r.status, 404, "{target}: {}", r.body);
        assert!(
            !r.body.contains("[core]") && !r.body.contains("root:"),
            "{target}"
        );
    }
    let absolute = served.raw(
        format!(
            "GET http://{0}/.swarm/config.toml HTTP/1.1\r\nHost: {0}\r\nConnection: close\r\n\r\n",
            served.host()
        )
        .as_bytes(),
    );
    assert_eq!(absolute.status, 404, "{absolute:?}");
    for method in ["POST", "PUT", "DELETE", "PATCH"] {
        let r = served.request(method, "/api/overview.json");
        assert_eq!(r.status, 405, "{method}");
        assert_eq!(r.header("allow"), Some("GET, HEAD"));
    }
}

#[test]
fn a_request_for_another_host_is_refused() {
    let env = store();
    let served = Served::start(&env, &[]);
    let port = served.port;
    for host in [
        format!("evil.example:{port}"),
        format!("127.0.0.1.nip.io:{port}"),
        "127.0.0.1:1".to_owned(),
    ] {
        let r = served.raw(
            format!("GET /api/overview.json HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        );
        assert_eq!(r.status, 403, "{host}");
        assert!(!r.body.contains("no-markup"), "{host}: {}", r.body);
    }
    let no_host = served.raw(b"GET /api/overview.json HTTP/1.0\r\n\r\n");
    assert_eq!(no_host.status, 403, "{no_host:?}");
    let localhost = served.raw(
        format!(
            "GET /api/overview.json HTTP/1.1\r\nHost: localhost:{port}\r\nConnection: close\r\n\r\n"
        )
        .as_bytes(),
    );
    assert_eq!(localhost.status, 200);
}

#[test]
fn the_api_says_what_the_store_holds() {
    let env = store();
    let listed: serde_json::Value =
        serde_json::from_str(&env.swarm(&["list", "--format", "json"]).success().stdout)
            .expect("list JSON");
    let served = Served::start(&env, &[]);
    let o = served.json("/api/overview.json");
    let rows = o["directives"].as_array().expect("directives");
    assert_eq!(rows.len(), listed.as_array().expect("list").len());
    for row in listed.as_array().expect("list") {
        let id = row["id"].as_str().expect("id");
        let ours = rows.iter().find(|r| r["id"] == id).expect("same ids");
        assert_eq!(ours["effective"], row["effective"], "{id}");
        assert_eq!(ours["lesson"], row["directive"]["lesson"], "{id}");
    }
    let markup = rows.iter().find(|r| r["id"] == "no-markup").expect("row");
    assert_eq!(markup["escalated"], true);
    assert_eq!(markup["declared"]["priority"], "low");
    assert_eq!(markup["effective"]["priority"], "critical");
    assert_eq!(markup["effective"]["enforcement"], "enforce");
    assert_eq!(markup["violations"], 2);
    assert_eq!(o["escalations"][0]["directive"], "no-markup");
    assert_eq!(o["escalations"][0]["since"], "2026-11-21T09:00:00.000Z");
    assert_eq!(o["escalations"][0]["open"], true);
    let violations: Vec<&str> = o["violations"]
        .as_array()
        .expect("violations")
        .iter()
        .map(|v| v["ts"].as_str().expect("ts"))
        .collect();
    assert_eq!(
        violations,
        ["2026-11-21T09:00:00.000Z", "2026-11-20T09:00:00.000Z"]
    );

    let s = served.json("/api/series.json");
    let days = s["days"].as_array().expect("days");
    assert_eq!(days.len(), 30);
    assert_eq!(days.last().expect("today"), "2026-11-22");
    let series = s["series"].as_array().expect("series");
    assert_eq!(series.len(), 1, "only directives with something to plot");
    assert_eq!(series[0]["directive"], "no-markup");
    let per_day = |name: &str| -> Vec<u64> {
        series[0][name]
            .as_array()
            .expect(name)
            .iter()
            .map(|n| n.as_u64().expect("count"))
            .collect()
    };
    let (v, e) = (per_day("violations"), per_day("escalations"));
    assert_eq!((v[27], v[28], v[29], v.iter().sum::<u64>()), (1, 1, 0, 2));
    assert_eq!((e[28], e.iter().sum::<u64>()), (1, 1));
}

#[test]
fn markup_from_the_store_is_escaped_in_every_response() {
    let env = store();
    let served = Served::start(&env, &[]);
    let mut bodies = Vec::new();
    for target in ["/", "/app.js", "/api/overview.json", "/api/series.json"] {
        bodies.push((target, served.get(target).raw));
    }
    let mut events = served.events();
    assert!(
        events.until("event: live", Duration::from_secs(30)),
        "{}",
        events.text
    );
    bodies.push(("/events", events.text.clone().into_bytes()));
    for (target, raw) in &bodies {
        let text = String::from_utf8_lossy(raw);
        assert!(
            !text.contains("<script>window.pwned"),
            "{target} carries the lesson's markup raw"
        );
        assert!(
            !text.contains("<b>bold</b>"),
            "{target} carries an event's markup raw"
        );
    }
    let overview = String::from_utf8_lossy(&bodies[2].1).into_owned();
    assert!(
        overview.contains(r"\u003cscript\u003ewindow.pwned=1\u003c/script\u003e"),
        "{overview}"
    );
    assert!(
        events.text.contains(r"\u003cb\u003ebold\u003c/b\u003e"),
        "{}",
        events.text
    );
    let js = String::from_utf8_lossy(&bodies[1].1).into_owned();
    assert!(
        !js.contains("innerHTML")
            && !js.contains("insertAdjacentHTML")
            && !js.contains("document.write")
    );
}

#[test]
fn a_line_appended_by_another_process_is_streamed_and_nothing_is_written() {
    let env = store();
    let before = snapshot(&env);
    let served = Served::start(&env, &[]);
    let mut events = served.events();
    assert!(
        events.until("event: live", Duration::from_secs(30)),
        "{}",
        events.text
    );
    assert!(events.text.starts_with("HTTP/1.1 200"), "{}", events.text);
    assert!(events.text.contains("text/event-stream"));
    assert!(
        events
            .text
            .contains(r#"data: {"id":"01KAAAAAAAAAAAAAAAAAAAAAA2""#),
        "the backlog: {}",
        events.text
    );
    env.swarm(&[
        "record",
        "note",
        "--custom",
        "--directive",
        "quiet-one",
        "--print-ids",
    ])
    .success();
    let id = env
        .event_lines()
        .last()
        .and_then(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .and_then(|e| e["id"].as_str().map(str::to_owned))
        .expect("the recorded id");
    assert!(
        events.until(&format!(r#""id":"{id}""#), Duration::from_secs(30)),
        "{}",
        events.text
    );
    // A malformed line is skipped and said.
    let mut log = std::fs::OpenOptions::new()
        .append(true)
        .open(env.path(common::PENDING_NOV))
        .expect("open log");
    std::io::Write::write_all(&mut log, b"not an event\n").expect("append");
    assert!(
        events.until("event: problem", Duration::from_secs(30)),
        "{}",
        events.text
    );
    assert!(
        events.text.contains("pending/2026-11.jsonl:2"),
        "{}",
        events.text
    );
    drop(events);
    for target in ["/", "/api/overview.json", "/api/series.json"] {
        served.get(target);
    }
    // The two lines this test appended, in the pending log, are the only change.
    assert_eq!(before, snapshot(&env), "serving wrote under .swarm/");
    assert_eq!(
        std::fs::read_to_string(env.path(common::PENDING_NOV))
            .expect("the pending log")
            .lines()
            .count(),
        2
    );
}

#[test]
fn bad_requests_get_an_answer_and_the_server_keeps_serving() {
    let env = store();
    let served = Served::start(&env, &[]);
    let mut answers = Vec::new();
    let long = format!(
        "GET /{} HTTP/1.1\r\nHost: {}\r\n\r\n",
        "a".repeat(100_000),
        served.host()
    );
    for raw in [
        b"\r\n\r\n".to_vec(),
        b"GARBAGE\r\n\r\n".to_vec(),
        b"GET\r\n\r\n".to_vec(),
        b"GET / HTTP/9.9\r\n\r\n".to_vec(),
        b"\x00\xff\xfe GET / HTTP/1.1\r\n\r\n".to_vec(),
        [
            format!("GET / HTTP/1.1\r\nHost: {}\r\nX: ", served.host()).as_bytes(),
            b"\xff\r\n\r\n",
        ]
        .concat(),
        long.into_bytes(),
        format!(
            "GET /events HTTP/1.1\r\nHost: {}\r\nLast-Event-ID: \r\n\r\n",
            served.host()
        )
        .into_bytes()[..40]
            .to_vec(),
        format!(
            "GET / HTTP/1.1\r\nHost: {0}\r\nHost: evil.example:{1}\r\n\r\n",
            served.host(),
            served.port
        )
        .into_bytes(),
    ] {
        let reply = served.raw_then_close(&raw);
        answers.push((reply.status, reply.body));
    }
    let said = |status: u16, body: &str| (status, format!("{body}\n"));
    assert_eq!(
        answers,
        [
            // Blank lines only: nothing was asked, nothing is answered.
            (0, String::new()),
            said(400, "Bad request."),
            said(400, "Bad request."),
            said(400, "Bad request."),
            said(400, "Bad request."),
            // A header value that is not ASCII is taken as it is.
            (
                200,
                include_str!("../../src/cli/serve/page.html").to_owned()
            ),
            said(431, "The request head is too large."),
            // Cut short: the head never ended.
            said(400, "Bad request."),
            said(400, "Bad request."),
        ]
    );
    assert_eq!(served.get("/api/overview.json").status, 200);
    let (code, stderr) = served.terminate();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains("Stopped."), "{stderr}");
}

#[test]
fn another_address_only_when_asked_and_a_taken_port_is_said() {
    let env = store();
    let first = Served::start(&env, &[]);
    let port = first.port.to_string();
    let taken = env.swarm_with(&["serve", "--port", &port], &[], None);
    assert_eq!(taken.code, 2, "{}", taken.snapshot());
    assert!(
        taken.stderr.contains("cannot listen on 127.0.0.1:"),
        "{}",
        taken.snapshot()
    );
    assert!(taken.stderr.contains("--port 0"), "{}", taken.snapshot());
    drop(first);

    let has_v6_loopback = std::fs::read_to_string("/proc/net/if_inet6").is_ok_and(|t| {
        t.lines()
            .any(|l| l.starts_with("00000000000000000000000000000001"))
    });
    if !has_v6_loopback {
        common::skipped(
            "ipv6",
            "no IPv6 loopback on this machine; --bind ::1 not tried",
        );
        return;
    }
    let served = Served::start(&env, &["--bind", "::1"]);
    assert!(served.url.starts_with("http://[::1]:"), "{}", served.url);
    let (code, stderr) = served.terminate();
    assert_eq!(code, Some(0));
    assert!(
        !stderr.contains("warning"),
        "loopback is not warned about: {stderr}"
    );
}

#[test]
fn requests_pipelined_after_the_stream_are_not_answered_and_hold_nothing() {
    let env = store();
    let served = Served::start(&env, &[]);
    let one = format!("GET / HTTP/1.1\r\nHost: {}\r\n\r\n", served.host());
    let mut events = served.events_sending(b"", one.repeat(40).as_bytes());
    assert!(
        events.until("event: live", Duration::from_secs(30)),
        "{}",
        events.text
    );
    // More than the 32 connections the server serves at once, each its own.
    for _ in 0..40 {
        assert_eq!(served.get("/app.css").status, 200);
    }
    // One request per connection: the stream's connection answers nothing else.
    assert!(!events.until("never sent", Duration::from_millis(500)));
    assert_eq!(
        events.text.matches("HTTP/1.1").count(),
        1,
        "{}",
        events.text
    );
    // A stream to a client that never reads does not keep the server alive.
    let _unread = served.events();
    let (code, stderr) = served.terminate();
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn connections_past_the_cap_get_a_503_and_closing_frees_them() {
    let env = store();
    let served = Served::start(&env, &[]);
    // Idle connections, each holding a place until it sends a head or leaves.
    let idle: Vec<std::net::TcpStream> = (0..32)
        .map(|_| std::net::TcpStream::connect(("127.0.0.1", served.port)).expect("connect"))
        .collect();
    // The server takes them in turn: wait until all 32 hold their place.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let refused = loop {
        let r = served.get("/app.css");
        if r.status == 503 || std::time::Instant::now() > deadline {
            break r;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(refused.status, 503, "{refused:?}");
    assert!(refused.body.contains("Too many open connections"));
    drop(idle);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let answered = loop {
        let r = served.get("/app.css");
        if r.status == 200 || std::time::Instant::now() > deadline {
            break r;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(answered.status, 200, "{answered:?}");
}

#[test]
fn an_event_id_that_is_not_ascii_survives_a_reconnect() {
    let env = store();
    let id = "é-ü\u{2028}id with spaces";
    let mut log = std::fs::OpenOptions::new()
        .append(true)
        .open(env.path(".swarm/events/2026-11.jsonl"))
        .expect("open log");
    std::io::Write::write_all(
        &mut log,
        format!(
            "{}\n",
            serde_json::json!({"id": id, "ts": "2026-11-22T08:00:00.000Z", "kind": "note"})
        )
        .as_bytes(),
    )
    .expect("append");
    let served = Served::start(&env, &[]);
    let mut first = served.events();
    assert!(
        first.until("event: live", Duration::from_secs(30)),
        "{}",
        first.text
    );
    // The id travels in the event's JSON only, never as an SSE `id:` field.
    assert!(
        first.text.contains(r#""id":"é-ü\u2028id with spaces""#),
        "{}",
        first.text
    );
    assert!(!first.text.contains("\nid:"), "{}", first.text);
    drop(first);
    // A browser that saw an id resends it raw in Last-Event-ID.
    let mut again = served.events_sending(format!("Last-Event-ID: {id}\r\n").as_bytes(), b"");
    assert!(
        again.until("event: live", Duration::from_secs(30)),
        "{}",
        again.text
    );
    assert!(again.text.starts_with("HTTP/1.1 200"), "{}", again.text);
    // The latest events again, the page skipping those it has.
    assert!(
        again.text.contains(r#""id":"é-ü\u2028id with spaces""#),
        "{}",
        again.text
    );
    assert!(
        again.text.contains("01KAAAAAAAAAAAAAAAAAAAAAA2"),
        "{}",
        again.text
    );
}

#[test]
fn the_plot_counts_each_directive_once_per_event_and_only_real_ones() {
    let env = store();
    let mut log = std::fs::OpenOptions::new()
        .append(true)
        .open(env.path(".swarm/events/2026-11.jsonl"))
        .expect("open log");
    std::io::Write::write_all(
        &mut log,
        br#"{"id":"01KAAAAAAAAAAAAAAAAAAAAAB1","ts":"2026-11-22T08:00:00.000Z","kind":"check","directive":"quiet-one","directives":["quiet-one","quiet-one","ghost"]}
"#,
    )
    .expect("append");
    let served = Served::start(&env, &[]);
    let s = served.json("/api/series.json");
    let series = s["series"].as_array().expect("series");
    let names: Vec<&str> = series
        .iter()
        .map(|d| d["directive"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["no-markup", "quiet-one"], "no series for `ghost`");
    let quiet = &series[1]["violations"];
    assert_eq!(quiet[29], 1, "{quiet}");
    let o = served.json("/api/overview.json");
    assert_eq!(
        o["violations"][0]["directives"],
        serde_json::json!(["quiet-one"])
    );
}
