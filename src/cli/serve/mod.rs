//! `git swarm serve`: a read-only web page onto the loop, on loopback.
//!
//! HTTP with `tiny_http`: synchronous, a thread per request, which suits a
//! page one person opens on their own machine (each live stream holds a
//! thread while it is open, and their number is capped). What a request
//! may ask for is decided by [`git_swarm::serve::route`] before anything is
//! read; the data comes from [`git_swarm::serve`], read afresh from the
//! store for each request; the page, its script and its style sheet are
//! embedded in the binary. Nothing here writes to `.swarm/`. See docs/serve.md.

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use git_swarm::event::{Follower, Waiter};
use git_swarm::serve::route::{self, Refusal, Route};
use git_swarm::{Error, Repo, Store};

use super::{Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Listen on this port (0 picks a free one; the URL printed says which).
    #[arg(long, default_value_t = 7777)]
    port: u16,
    /// Listen on this address instead of 127.0.0.1 (warned about unless it is a loopback one).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    bind: IpAddr,
}

const PAGE: &str = include_str!("page.html");
const SCRIPT: &str = include_str!("app.js");
const STYLE: &str = include_str!("app.css");

/// Requests answered at once, live streams included; more get a 503.
const MAX_CLIENTS: usize = 32;
/// A comment line sent this often keeps a stream's connection alive and
/// finds a client that left.
const KEEPALIVE: Duration = Duration::from_secs(15);

/// Sent with every answer: nothing from elsewhere loads in the page, no
/// inline script or style runs, it cannot be framed, and no type is guessed.
const SECURITY_HEADERS: [(&str, &str); 6] = [
    (
        "Content-Security-Policy",
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    ),
    ("X-Content-Type-Options", "nosniff"),
    ("X-Frame-Options", "DENY"),
    ("Referrer-Policy", "no-referrer"),
    ("Cross-Origin-Resource-Policy", "same-origin"),
    ("Cache-Control", "no-store"),
];

/// What every request's thread shares.
struct Shared {
    repo: Repo,
    clock: git_swarm::event::Clock,
    bound: SocketAddr,
    stop: Arc<AtomicBool>,
    clients: AtomicUsize,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    let repo = super::repo()?;
    let clock = super::clock()?;
    // Opened once now so that a repository without `.swarm/` fails at once.
    let store = Store::open(&repo, clock)?;
    ui.problems(&store.config_problems);
    let asked = SocketAddr::new(args.bind, args.port);
    let server = tiny_http::Server::http(asked).map_err(|e| {
        Error::usage(
            format!("cannot listen on {asked}: {e}"),
            "choose another port with --port N, or --port 0 for any free one",
        )
    })?;
    let bound = server.server_addr().to_ip().unwrap_or(asked);
    if !bound.ip().is_loopback() {
        ui.warning(
            &format!("listening on {bound}, not a loopback address: whoever can reach it can read the page"),
            Some("leave out --bind to serve on 127.0.0.1 only"),
        );
    }
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // A second signal ends the process at once, should stopping hang.
        signal_hook::flag::register_conditional_shutdown(signal, 1, Arc::clone(&stop))
            .and_then(|_| signal_hook::flag::register(signal, Arc::clone(&stop)))
            .map_err(|e| Error::io(std::path::Path::new("signal handler"), e))?;
    }
    let shown = match bound.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => SocketAddr::from(([127, 0, 0, 1], bound.port())),
        _ => bound,
    };
    writeln!(
        ui.out,
        "Serving http://{shown}/ (read-only; Ctrl-C to stop)"
    )?;
    ui.out.flush()?;
    let shared = Arc::new(Shared {
        repo,
        clock,
        bound,
        stop: Arc::clone(&stop),
        clients: AtomicUsize::new(0),
    });
    while !stop.load(Ordering::Relaxed) {
        let request = match server.recv_timeout(Duration::from_millis(200)) {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            // Interrupted by the signal that stops the server.
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        if shared.clients.fetch_add(1, Ordering::SeqCst) >= MAX_CLIENTS {
            shared.clients.fetch_sub(1, Ordering::SeqCst);
            let _ = request.respond(text(503, "Too many open requests; try again."));
            continue;
        }
        let shared = Arc::clone(&shared);
        let spawned = std::thread::Builder::new()
            .name("serve".into())
            .spawn(move || {
                answer(&shared, request);
                shared.clients.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            // The request went with the closure: its connection is closed.
            ui.warning("could not start a thread for a request", None);
        }
    }
    ui.note("Stopped.");
    Ok(ExitCode::SUCCESS)
}

type Response = tiny_http::Response<std::io::Cursor<Vec<u8>>>;

fn header(name: &str, value: &str) -> Option<tiny_http::Header> {
    tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()).ok()
}

fn respond_with(status: u16, content_type: &str, body: Vec<u8>) -> Response {
    let mut r = tiny_http::Response::from_data(body).with_status_code(status);
    for (name, value) in SECURITY_HEADERS
        .iter()
        .copied()
        .chain([("Content-Type", content_type)])
    {
        if let Some(h) = header(name, value) {
            r.add_header(h);
        }
    }
    r
}

fn text(status: u16, body: &str) -> Response {
    respond_with(
        status,
        "text/plain; charset=utf-8",
        format!("{body}\n").into_bytes(),
    )
}

fn json(status: u16, body: String) -> Response {
    respond_with(status, "application/json; charset=utf-8", body.into_bytes())
}

fn request_header<'a>(request: &'a tiny_http::Request, name: &'static str) -> Option<&'a str> {
    request
        .headers()
        .iter()
        .find(|h| h.field.equiv(name))
        .map(|h| h.value.as_str())
}

/// Answers one request; never panics on what the client sent.
fn answer(shared: &Shared, request: tiny_http::Request) {
    if !route::host_allowed(request_header(&request, "Host"), shared.bound) {
        let _ = request.respond(text(
            403,
            "This server answers only requests addressed to it by its own address (Host header).",
        ));
        return;
    }
    let method = request.method().as_str().to_owned();
    let response = match route::route(&method, request.url()) {
        Err(Refusal::NotFound) => text(404, "Not found."),
        Err(Refusal::MethodNotAllowed) => {
            let mut r = text(405, "Read-only: only GET and HEAD.");
            if let Some(h) = header("Allow", "GET, HEAD") {
                r.add_header(h);
            }
            r
        }
        Ok(Route::Page) => respond_with(200, "text/html; charset=utf-8", PAGE.into()),
        Ok(Route::Script) => respond_with(200, "text/javascript; charset=utf-8", SCRIPT.into()),
        Ok(Route::Style) => respond_with(200, "text/css; charset=utf-8", STYLE.into()),
        Ok(route @ (Route::Overview | Route::Series)) => match load(shared) {
            Ok(l) if route == Route::Overview => json(
                200,
                git_swarm::serve::to_json(&git_swarm::serve::overview(&l)),
            ),
            Ok(l) => json(
                200,
                git_swarm::serve::to_json(&git_swarm::serve::series(&l)),
            ),
            Err(e) => json(
                500,
                git_swarm::serve::to_json(&serde_json::json!({ "error": e.to_string() })),
            ),
        },
        Ok(Route::Events) if method == "HEAD" => {
            respond_with(200, "text/event-stream; charset=utf-8", Vec::new())
        }
        Ok(Route::Events) => return stream(shared, request),
    };
    let _ = request.respond(response);
}

fn open_store(shared: &Shared) -> Result<Store, Error> {
    Store::open(&shared.repo, shared.clock)
}

fn load(shared: &Shared) -> Result<git_swarm::serve::Loaded, Error> {
    git_swarm::serve::load(&open_store(shared)?)
}

/// `/events`: the latest events (or those after the client's
/// `Last-Event-ID`), then each line appended to the log as it comes, as
/// server-sent events, until the client leaves or the server stops.
fn stream(shared: &Shared, request: tiny_http::Request) {
    let store = match open_store(shared) {
        Ok(s) => s,
        Err(e) => {
            let _ = request.respond(text(500, &e.to_string()));
            return;
        }
    };
    let last_seen = request_header(&request, "Last-Event-ID").map(str::to_owned);
    // The stream reads the log as `log --follow` does: the first poll is the
    // whole log, de-duplicated and in order; each later one what landed
    // since, every event once.
    let mut follower = Follower::new(&store.events_dir(), ".swarm/events", &store.config.events);
    let mut waiter = Waiter::new(&store.events_dir());
    let first = match follower.poll() {
        Ok(batch) => batch,
        Err(e) => {
            let _ = request.respond(text(500, &e.to_string()));
            return;
        }
    };
    let mut out = request.into_writer();
    let mut head = String::from(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nConnection: close\r\n",
    );
    for (name, value) in SECURITY_HEADERS {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\nretry: 2000\n\n");
    let mut sent = out.write_all(head.as_bytes()).is_ok();
    for e in git_swarm::serve::backlog(&first.events, last_seen.as_deref()) {
        sent = sent && send_event(&mut out, e);
    }
    // The whole log is not kept while the stream lasts.
    let problems = first.problems;
    drop(first.events);
    sent = sent && send_problems(&mut out, problems);
    // Marks the end of the backlog: what follows is live.
    sent = sent && out.write_all(b"event: live\ndata: {}\n\n").is_ok() && out.flush().is_ok();
    let mut quiet_since = Instant::now();
    while sent && !shared.stop.load(Ordering::Relaxed) {
        // Wakes on an append (inotify), else within a second: a stopping
        // server ends its streams that soon.
        waiter.wait();
        let batch = match follower.poll() {
            Ok(batch) => batch,
            Err(_) => break,
        };
        let wrote = !batch.events.is_empty() || !batch.problems.is_empty();
        for e in &batch.events {
            sent = sent && send_event(&mut out, e);
        }
        sent = sent && send_problems(&mut out, batch.problems);
        if !wrote && quiet_since.elapsed() >= KEEPALIVE {
            sent = sent && out.write_all(b": keepalive\n\n").is_ok();
            quiet_since = Instant::now();
        }
        if wrote {
            quiet_since = Instant::now();
        }
        sent = sent && out.flush().is_ok();
    }
}

/// Problems met reading the log (each said once by the follower), as
/// `problem` events. False when the client has gone.
fn send_problems(out: &mut impl Write, problems: Vec<git_swarm::problem::Problem>) -> bool {
    problems.into_iter().all(|p| {
        let row = git_swarm::serve::ProblemRow {
            location: p.location(),
            message: p.message,
        };
        let data = git_swarm::serve::to_json(&row);
        write!(out, "event: problem\ndata: {data}\n\n").is_ok()
    })
}

/// One event as a server-sent event: its id (for `Last-Event-ID`) and the
/// event as JSON on one `data:` line. False when the client has gone.
fn send_event(out: &mut impl Write, e: &git_swarm::event::Event) -> bool {
    // An id with a line break would end the field early; event ids have none.
    let id: String = e.id.chars().filter(|c| !c.is_control()).collect();
    let data = git_swarm::serve::to_json(e);
    write!(out, "id: {id}\ndata: {data}\n\n").is_ok()
}
