//! A scripted model server on 127.0.0.1 for the real-harness suite: it
//! speaks plain HTTP/1.1, records every request whole, and answers each
//! with what the test's script returns (a JSON body, or an event stream).
//!
//! The script is a function of the request alone, never of arrival order:
//! harnesses send auxiliary requests (titles, summaries, quota probes) and
//! run subagents concurrently, so a script decides from what the request
//! carries (its system prompt, its last message).
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

/// Largest request body kept: a harness's request carries the whole
/// conversation and its tool definitions.
const BODY_MAX: usize = 64 * 1024 * 1024;

/// One request the harness sent.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        (self.headers.iter())
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (`Null` when it is none).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The body as text, for "did the model receive X" assertions.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// What the server answers.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn json(v: &Value) -> Reply {
        Reply {
            status: 200,
            content_type: "application/json",
            body: v.to_string().into_bytes(),
        }
    }

    /// Server-sent events: each `(event name, data)`; a `None` name writes
    /// a data-only event (OpenAI's chat completions, Gemini).
    pub fn sse<'a>(events: impl IntoIterator<Item = (Option<&'a str>, String)>) -> Reply {
        let mut body = String::new();
        for (name, data) in events {
            if let Some(name) = name {
                body.push_str(&format!("event: {name}\n"));
            }
            body.push_str(&format!("data: {data}\n\n"));
        }
        Reply {
            status: 200,
            content_type: "text/event-stream",
            body: body.into_bytes(),
        }
    }

    pub fn status(status: u16, body: &str) -> Reply {
        Reply {
            status,
            content_type: "application/json",
            body: body.as_bytes().to_vec(),
        }
    }
}

type Script = dyn Fn(&Request) -> Reply + Send + Sync;

/// The running server; stopped when dropped.
pub struct ModelServer {
    port: u16,
    requests: Arc<Mutex<Vec<Request>>>,
    stop: Arc<AtomicBool>,
}

impl ModelServer {
    pub fn start(script: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> ModelServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let port = listener.local_addr().expect("local addr").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let script: Arc<Script> = Arc::new(script);
        let (kept, stopping) = (requests.clone(), stop.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stopping.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let (kept, script) = (kept.clone(), script.clone());
                std::thread::spawn(move || serve(conn, &kept, &*script));
            }
        });
        ModelServer {
            port,
            requests,
            stop,
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:PORT`, no trailing slash.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().expect("requests lock").clone()
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so that it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Answers the requests of one connection (kept alive as the client asks).
fn serve(conn: TcpStream, kept: &Mutex<Vec<Request>>, script: &Script) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(120)));
    let Ok(mut writer) = conn.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(conn);
    while let Some(req) = read_request(&mut reader) {
        let close = (req.header("connection")).is_some_and(|c| c.eq_ignore_ascii_case("close"));
        let reply = if req.method == "HEAD" || req.method == "OPTIONS" {
            Reply::status(200, "")
        } else {
            kept.lock().expect("requests lock").push(req.clone());
            script(&req)
        };
        let head = format!(
            "HTTP/1.1 {} {}\r\ncontent-type: {}\r\ncontent-length: {}\r\ncache-control: no-cache\r\n{}\r\n",
            reply.status,
            if reply.status < 400 { "OK" } else { "Error" },
            reply.content_type,
            reply.body.len(),
            if close { "connection: close\r\n" } else { "" },
        );
        if writer.write_all(head.as_bytes()).is_err()
            || writer.write_all(&reply.body).is_err()
            || writer.flush().is_err()
            || close
        {
            return;
        }
    }
}

/// One request off the connection; `None` at its end or on garbage.
fn read_request(r: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut line = String::new();
    if r.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let path = parts.next()?.to_owned();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).ok()? == 0 {
            return None;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':')?;
        headers.push((k.trim().to_owned(), v.trim().to_owned()));
    }
    let get = |name: &str| {
        (headers.iter())
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    let mut body = Vec::new();
    if get("transfer-encoding").is_some_and(|t| t.eq_ignore_ascii_case("chunked")) {
        loop {
            let mut size = String::new();
            r.read_line(&mut size).ok()?;
            let n = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
            if n == 0 {
                // Trailers, up to the blank line.
                loop {
                    let mut t = String::new();
                    if r.read_line(&mut t).ok()? == 0 || t.trim().is_empty() {
                        break;
                    }
                }
                break;
            }
            if body.len() + n > BODY_MAX {
                return None;
            }
            let start = body.len();
            body.resize(start + n, 0);
            r.read_exact(&mut body[start..]).ok()?;
            let mut crlf = [0u8; 2];
            r.read_exact(&mut crlf).ok()?;
        }
    } else if let Some(n) = get("content-length").and_then(|n| n.parse::<usize>().ok()) {
        if n > BODY_MAX {
            return None;
        }
        body.resize(n, 0);
        r.read_exact(&mut body).ok()?;
    }
    Some(Request {
        method,
        path,
        headers,
        body,
    })
}
