//! A running `git swarm serve` for tests, and a small HTTP client over a
//! plain socket (each request its own connection, as a browser's may be).
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::common::{TestEnv, bin};

/// `git swarm serve --port 0` in the test repository; killed when dropped.
pub struct Served {
    pub child: Child,
    pub url: String,
    pub port: u16,
}

impl Served {
    pub fn start(env: &TestEnv, extra: &[&str]) -> Served {
        let mut child = env
            .command(bin(), &env.root)
            .args(["serve", "--port", "0"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn git-swarm serve");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut first = String::new();
            let _ = BufReader::new(stdout).read_line(&mut first);
            let _ = tx.send(first);
        });
        let line = rx.recv_timeout(Duration::from_secs(60)).unwrap_or_default();
        let Some(url) = line
            .trim()
            .strip_prefix("Serving ")
            .and_then(|s| s.split_once(' '))
            .map(|(u, _)| u.to_owned())
        else {
            let _ = child.kill();
            let out = child.wait_with_output().expect("wait");
            panic!(
                "serve printed {line:?}; stderr:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        let port = url
            .trim_end_matches('/')
            .rsplit_once(':')
            .and_then(|(_, p)| p.parse().ok())
            .expect("a port in the URL");
        Served { child, url, port }
    }

    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Sends `raw` bytes as they are and reads the whole reply.
    pub fn raw(&self, raw: &[u8]) -> Reply {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        s.write_all(raw).expect("send");
        let mut bytes = Vec::new();
        let _ = s.read_to_end(&mut bytes);
        Reply::parse(&bytes)
    }

    /// Sends `raw` and says it will send no more: a request cut short ends
    /// there rather than waiting on the server's read timeout.
    pub fn raw_then_close(&self, raw: &[u8]) -> Reply {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        s.write_all(raw).expect("send");
        let _ = s.shutdown(std::net::Shutdown::Write);
        let mut bytes = Vec::new();
        let _ = s.read_to_end(&mut bytes);
        Reply::parse(&bytes)
    }

    /// `METHOD target` with the right Host.
    pub fn request(&self, method: &str, target: &str) -> Reply {
        self.raw(
            format!(
                "{method} {target} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
                self.host()
            )
            .as_bytes(),
        )
    }

    pub fn get(&self, target: &str) -> Reply {
        self.request("GET", target)
    }

    pub fn json(&self, target: &str) -> serde_json::Value {
        let r = self.get(target);
        assert_eq!(r.status, 200, "{target}: {}", r.body);
        serde_json::from_str(&r.body).expect("JSON")
    }

    /// Opens `/events` and returns the stream (its headers included).
    pub fn events(&self) -> EventStream {
        self.events_sending(b"", b"")
    }

    /// Opens `/events` with `headers` (each ending in CRLF) added to its
    /// head and `after` sent after the head, on the same connection.
    pub fn events_sending(&self, headers: &[u8], after: &[u8]) -> EventStream {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).expect("connect");
        s.set_read_timeout(Some(Duration::from_millis(200)))
            .expect("timeout");
        let head = format!(
            "GET /events HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\n",
            self.host()
        );
        s.write_all(&[head.as_bytes(), headers, b"\r\n", after].concat())
            .expect("send");
        EventStream {
            stream: s,
            text: String::new(),
        }
    }

    /// Sends SIGTERM and waits (bounded) for the exit; returns code and stderr.
    pub fn terminate(mut self) -> (Option<i32>, String) {
        let pid = self.child.id().to_string();
        let killed = std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("kill");
        assert!(killed.success());
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(s) = self.child.try_wait().expect("try_wait") {
                break s;
            }
            assert!(Instant::now() < deadline, "serve did not stop on SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        };
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        (status.code(), err)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A reply: status, headers (names lowercased) and body.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
    pub raw: Vec<u8>,
}

impl Reply {
    fn parse(bytes: &[u8]) -> Reply {
        let text = String::from_utf8_lossy(bytes).into_owned();
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let mut lines = head.lines();
        let status = lines
            .next()
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let headers = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        Reply {
            status,
            headers,
            body: body.to_owned(),
            raw: bytes.to_vec(),
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

pub struct EventStream {
    stream: TcpStream,
    /// Everything read so far.
    pub text: String,
}

impl EventStream {
    /// Reads until `needle` has arrived, for at most `limit`.
    pub fn until(&mut self, needle: &str, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        let mut buf = [0u8; 8192];
        while !self.text.contains(needle) {
            if Instant::now() > deadline {
                return false;
            }
            match self.stream.read(&mut buf) {
                Ok(0) => return false,
                Ok(n) => self.text.push_str(&String::from_utf8_lossy(&buf[..n])),
                Err(_) => {}
            }
        }
        true
    }
}
