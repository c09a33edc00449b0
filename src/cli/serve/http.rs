//! The little HTTP `serve` speaks, over std's sockets: one request per
//! connection, its head parsed with `httparse`, every answer closing the
//! connection. Keeping the socket in hand is the point: each connection gets
//! a deadline for its head and a timeout on every write, so a client that
//! sends nothing, trickles, pipelines or never reads holds one thread for a
//! bounded time (an HTTP library that owns the sockets could not promise
//! that; see docs/serve.md).

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// The most a request head may take (request line and headers).
pub const MAX_HEAD: usize = 16 * 1024;
/// The most headers a request may carry.
const MAX_HEADERS: usize = 64;

/// A request's head: all `serve` reads of a request (it has no body).
#[derive(Debug)]
pub struct Request {
    pub method: String,
    /// The request target as sent, undecoded.
    pub target: String,
    /// Names as sent; values as text (bytes that are not UTF-8 replaced).
    headers: Vec<(String, String)>,
}

impl Request {
    /// The value of header `name` (any case); `None` when absent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn count(&self, name: &str) -> usize {
        self.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .count()
    }
}

/// Why no request was read.
#[derive(Debug, PartialEq, Eq)]
pub enum ReadError {
    /// The client left, or sent nothing before the deadline: nothing to answer.
    Gone,
    /// 400: not an HTTP/1.x request head.
    Malformed,
    /// 408: the head did not arrive whole before the deadline.
    TooSlow,
    /// 431: the head is larger than [`MAX_HEAD`] or has too many headers.
    TooLarge,
}

impl ReadError {
    /// The status and text to answer with, if any.
    pub fn answer(&self) -> Option<(u16, &'static str)> {
        match self {
            ReadError::Gone => None,
            ReadError::Malformed => Some((400, "Bad request.")),
            ReadError::TooSlow => Some((408, "The request took too long to arrive.")),
            ReadError::TooLarge => Some((431, "The request head is too large.")),
        }
    }
}

/// Reads one request head from `sock`, which must arrive whole within
/// `deadline` of now. Bytes after the head (a body, pipelined requests) are
/// left unread: the connection closes after one answer.
pub fn read_request(sock: &mut TcpStream, deadline: Duration) -> Result<Request, ReadError> {
    let until = Instant::now() + deadline;
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() || sock.set_read_timeout(Some(left)).is_err() {
            return Err(too_slow(&buf));
        }
        match sock.read(&mut chunk) {
            Ok(0) if buf.iter().all(u8::is_ascii_whitespace) => return Err(ReadError::Gone),
            Ok(0) => return Err(ReadError::Malformed),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return Err(too_slow(&buf));
            }
            Err(_) => return Err(ReadError::Gone),
        }
        if let Some(request) = parse(&buf)? {
            return Ok(request);
        }
        if buf.len() > MAX_HEAD {
            return Err(ReadError::TooLarge);
        }
    }
}

fn too_slow(buf: &[u8]) -> ReadError {
    if buf.iter().all(u8::is_ascii_whitespace) {
        ReadError::Gone
    } else {
        ReadError::TooSlow
    }
}

/// The request in `buf` if its head is complete, `None` if more is needed.
fn parse(buf: &[u8]) -> Result<Option<Request>, ReadError> {
    let head = &buf[..buf.len().min(MAX_HEAD)];
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut parsed = httparse::Request::new(&mut headers);
    match parsed.parse(head) {
        Ok(httparse::Status::Partial) => Ok(None),
        Ok(httparse::Status::Complete(_)) => {
            let request = Request {
                method: parsed.method.unwrap_or_default().to_owned(),
                target: parsed.path.unwrap_or_default().to_owned(),
                headers: parsed
                    .headers
                    .iter()
                    .map(|h| {
                        (
                            h.name.to_owned(),
                            String::from_utf8_lossy(h.value).into_owned(),
                        )
                    })
                    .collect(),
            };
            // Two Host headers could name two hosts: which one was checked?
            if request.count("Host") > 1 {
                return Err(ReadError::Malformed);
            }
            Ok(Some(request))
        }
        Err(httparse::Error::TooManyHeaders) => Err(ReadError::TooLarge),
        Err(_) => Err(ReadError::Malformed),
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "",
    }
}

/// A status line and `headers`, then the blank line, for a connection that
/// closes after the answer. `length` is the body's, when it is known.
pub fn head(status: u16, headers: &[(&str, &str)], length: Option<usize>) -> String {
    let mut out = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    if let Some(n) = length {
        out.push_str(&format!("Content-Length: {n}\r\n"));
    }
    out.push_str("Connection: close\r\n\r\n");
    out
}

/// Writes a whole answer; `head_only` for HEAD (the length of the body
/// that a GET would get, no body).
pub fn respond(
    out: &mut impl Write,
    status: u16,
    headers: &[(&str, &str)],
    body: &[u8],
    head_only: bool,
) -> io::Result<()> {
    let mut bytes = head(status, headers, Some(body.len())).into_bytes();
    if !head_only {
        bytes.extend_from_slice(body);
    }
    out.write_all(&bytes)?;
    out.flush()
}

/// Ends a connection after its answer: says no more will be written, then
/// reads (and drops) what the client still sends for a moment, so that
/// closing with unread bytes does not reset the connection before the
/// client has read the answer.
pub fn close(mut sock: TcpStream) {
    let _ = sock.shutdown(std::net::Shutdown::Write);
    let until = Instant::now() + Duration::from_secs(1);
    let mut chunk = [0u8; 4096];
    let mut drained = 0usize;
    while drained < 64 * 1024 {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() || sock.set_read_timeout(Some(left)).is_err() {
            return;
        }
        match sock.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => drained += n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_parse_or_say_why_not() {
        let r = parse(b"GET /x?y HTTP/1.1\r\nHost: a:1\r\nX: \xff\r\n\r\nrest")
            .expect("valid")
            .expect("complete");
        assert_eq!((r.method.as_str(), r.target.as_str()), ("GET", "/x?y"));
        assert_eq!(r.header("host"), Some("a:1"));
        assert_eq!(r.header("x"), Some("\u{fffd}"));
        assert!(
            parse(b"GET / HTTP/1.1\r\nHost: a")
                .expect("partial")
                .is_none()
        );
        for bad in [
            &b"GARBAGE\r\n\r\n"[..],
            b"GET / HTTP/9.9\r\n\r\n",
            b"\x00\xff GET / HTTP/1.1\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: a:1\r\nHost: b:1\r\n\r\n",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        let many: String = (0..100).map(|i| format!("X{i}: v\r\n")).collect();
        assert_eq!(
            parse(format!("GET / HTTP/1.1\r\n{many}\r\n").as_bytes()).err(),
            Some(ReadError::TooLarge)
        );
    }
}
