//! `git swarm serve`: a read-only web page onto the loop, on loopback.
//!
//! HTTP over std's sockets ([`http`]): synchronous, a thread per
//! connection, one request per connection, which suits a page one person
//! opens on their own machine. Connections are capped (each open stream
//! holds one), every head has a deadline and every write a timeout, so no
//! client holds a thread for long, or stops the server from stopping. What a
//! request may ask for is decided by [`git_swarm::serve::route`] before
//! anything is read; the data comes from [`git_swarm::serve`], the index
//! refreshed for each request and the log's digest shared until `.swarm/`
//! changes, one request loading at a time; the page, its script and its style sheet
//! are embedded in the binary. Nothing here writes to `.swarm/`. See
//! docs/serve.md.

mod http;

use std::io::Write;
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
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

/// Connections served at once, live streams included; more get a 503.
const MAX_CLIENTS: usize = 32;
/// Refusals (503) being written at once; past that a connection is closed
/// unanswered.
const MAX_REFUSALS: usize = 8;
/// A request head must arrive whole within this.
const HEAD_DEADLINE: Duration = Duration::from_secs(10);
/// A write the client does not take within this ends its connection: a
/// stream to a client that stopped reading ends then.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
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

/// What every connection's thread shares.
struct Shared {
    repo: Repo,
    clock: git_swarm::event::Clock,
    bound: SocketAddr,
    stop: Arc<AtomicBool>,
    clients: AtomicUsize,
    refusals: AtomicUsize,
    /// What the page needs of the log, shared by the requests.
    cache: git_swarm::serve::log::Cache,
}

/// One of a capped number of places, given back when dropped: when the
/// thread holding it ends, panics, or never starts.
struct Slot {
    shared: Arc<Shared>,
    refusal: bool,
}

impl Slot {
    fn take(shared: &Arc<Shared>, refusal: bool) -> Option<Slot> {
        let (count, max) = Slot::counter(shared, refusal);
        count
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < max).then_some(n + 1)
            })
            .ok()?;
        Some(Slot {
            shared: Arc::clone(shared),
            refusal,
        })
    }

    fn counter(shared: &Shared, refusal: bool) -> (&AtomicUsize, usize) {
        if refusal {
            (&shared.refusals, MAX_REFUSALS)
        } else {
            (&shared.clients, MAX_CLIENTS)
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        Slot::counter(&self.shared, self.refusal)
            .0
            .fetch_sub(1, Ordering::SeqCst);
    }
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    let repo = super::repo()?;
    let clock = super::clock()?;
    // Opened once now so that a repository without `.swarm/` fails at once.
    let store = Store::open(&repo, clock)?;
    ui.problems(&store.config_problems);
    let asked = SocketAddr::new(args.bind, args.port);
    let cannot = |e: std::io::Error| {
        Error::usage(
            format!("cannot listen on {asked}: {e}"),
            "choose another port with --port N, or --port 0 for any free one",
        )
    };
    let listener = TcpListener::bind(asked).map_err(cannot)?;
    // Polled, so that a signal stops the server within one poll.
    listener.set_nonblocking(true).map_err(cannot)?;
    let bound = listener.local_addr().unwrap_or(asked);
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
        refusals: AtomicUsize::new(0),
        cache: git_swarm::serve::log::Cache::new(),
    });
    let mut spawn_failed = false;
    while !stop.load(Ordering::Relaxed) {
        let sock = match listener.accept() {
            Ok((sock, _)) => sock,
            // Nothing waiting; also a full file table or a connection reset
            // before it was taken: none of these ends the server.
            Err(_) => {
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
        };
        // The accept loop never writes: a slow client could block it.
        let (slot, refusal) = match Slot::take(&shared, false) {
            Some(slot) => (slot, false),
            None => match Slot::take(&shared, true) {
                Some(slot) => (slot, true),
                // Closed unanswered: even the refusals are full.
                None => continue,
            },
        };
        let spawned = std::thread::Builder::new()
            .name("serve".into())
            .spawn(move || {
                let shared = Arc::clone(&slot.shared);
                connection(&shared, sock, refusal);
                drop(slot);
            });
        // A thread that did not start dropped its closure: the slot is
        // given back and the connection closed.
        if spawned.is_err() && !spawn_failed {
            spawn_failed = true;
            ui.warning(
                "could not start a thread for a connection; it was closed",
                None,
            );
        }
    }
    ui.note("Stopped.");
    Ok(ExitCode::SUCCESS)
}

/// Serves one connection: one request, one answer, then closes it.
fn connection(shared: &Shared, mut sock: TcpStream, refusal: bool) {
    if sock.set_nonblocking(false).is_err() || sock.set_write_timeout(Some(WRITE_TIMEOUT)).is_err()
    {
        return;
    }
    if refusal {
        let _ = send_text(
            &mut sock,
            503,
            "Too many open connections; try again.",
            false,
        );
        http::close(sock);
        return;
    }
    match http::read_request(&mut sock, HEAD_DEADLINE) {
        Ok(request) => answer(shared, &request, &mut sock),
        Err(e) => {
            if let Some((status, text)) = e.answer() {
                let _ = send_text(&mut sock, status, text, false);
            }
        }
    }
    http::close(sock);
}

fn send(
    sock: &mut TcpStream,
    status: u16,
    content_type: &str,
    extra: &[(&str, &str)],
    body: &[u8],
    head_only: bool,
) -> std::io::Result<()> {
    let headers: Vec<(&str, &str)> = SECURITY_HEADERS
        .iter()
        .copied()
        .chain([("Content-Type", content_type)])
        .chain(extra.iter().copied())
        .collect();
    http::respond(sock, status, &headers, body, head_only)
}

fn send_text(
    sock: &mut TcpStream,
    status: u16,
    body: &str,
    head_only: bool,
) -> std::io::Result<()> {
    send(
        sock,
        status,
        "text/plain; charset=utf-8",
        &[],
        format!("{body}\n").as_bytes(),
        head_only,
    )
}

/// Answers one request; never panics on what the client sent.
fn answer(shared: &Shared, request: &http::Request, sock: &mut TcpStream) {
    let head_only = request.method == "HEAD";
    if !route::host_allowed(request.header("Host"), shared.bound) {
        let _ = send_text(
            sock,
            403,
            "This server answers only requests addressed to it by its own address (Host header).",
            head_only,
        );
        return;
    }
    let json = |sock: &mut TcpStream, status: u16, body: String| {
        send(
            sock,
            status,
            "application/json; charset=utf-8",
            &[],
            body.as_bytes(),
            head_only,
        )
    };
    let _ = match route::route(&request.method, &request.target) {
        Err(Refusal::NotFound) => send_text(sock, 404, "Not found.", head_only),
        Err(Refusal::MethodNotAllowed) => send(
            sock,
            405,
            "text/plain; charset=utf-8",
            &[("Allow", "GET, HEAD")],
            b"Read-only: only GET and HEAD.\n",
            false,
        ),
        Ok(Route::Page) => send(
            sock,
            200,
            "text/html; charset=utf-8",
            &[],
            PAGE.as_bytes(),
            head_only,
        ),
        Ok(Route::Script) => send(
            sock,
            200,
            "text/javascript; charset=utf-8",
            &[],
            SCRIPT.as_bytes(),
            head_only,
        ),
        Ok(Route::Style) => send(
            sock,
            200,
            "text/css; charset=utf-8",
            &[],
            STYLE.as_bytes(),
            head_only,
        ),
        Ok(route @ (Route::Overview | Route::Series)) => match load(shared) {
            Ok(l) if route == Route::Overview => json(
                sock,
                200,
                git_swarm::serve::to_json(&git_swarm::serve::overview(&l)),
            ),
            Ok(l) => json(
                sock,
                200,
                git_swarm::serve::to_json(&git_swarm::serve::series(&l)),
            ),
            Err(e) => json(
                sock,
                500,
                git_swarm::serve::to_json(&serde_json::json!({ "error": e.to_string() })),
            ),
        },
        Ok(Route::Events) if head_only => {
            let head = http::head(200, &stream_headers(), None);
            sock.write_all(head.as_bytes())
        }
        Ok(Route::Events) => {
            stream(shared, sock);
            Ok(())
        }
    };
}

fn stream_headers() -> Vec<(&'static str, &'static str)> {
    SECURITY_HEADERS
        .iter()
        .copied()
        .chain([("Content-Type", "text/event-stream; charset=utf-8")])
        .collect()
}

fn open_store(shared: &Shared) -> Result<Store, Error> {
    Store::open(&shared.repo, shared.clock)
}

fn load(shared: &Shared) -> Result<git_swarm::serve::Loaded, Error> {
    git_swarm::serve::load(&open_store(shared)?, &shared.cache)
}

/// `/events`: the latest events, then each line appended to the log as it
/// comes, as server-sent events, until the client leaves (or stops
/// reading) or the server stops. A client that reconnects gets the latest
/// events again and skips those it has (by the id in each event's JSON):
/// the log's order by time is not the order lines arrive in, so "what
/// followed the last one seen" has no answer.
fn stream(shared: &Shared, sock: &mut TcpStream) {
    let store = match open_store(shared) {
        Ok(s) => s,
        Err(e) => {
            let _ = send_text(sock, 500, &e.to_string(), false);
            return;
        }
    };
    // The stream reads the log as `log --follow` does: the first poll is the
    // whole log, de-duplicated and in order, of which only the latest few
    // are kept; each later one what landed since, every event once.
    let dirs = store.log_dirs();
    let mut follower =
        Follower::new(&dirs, &store.config.events).keeping_latest(git_swarm::serve::BACKLOG);
    let mut waiter = Waiter::new(&dirs.map(|(d, _)| d));
    let first = match follower.poll() {
        Ok(batch) => batch,
        Err(e) => {
            let _ = send_text(sock, 500, &e.to_string(), false);
            return;
        }
    };
    // Written a batch at a time; each write is bounded by the socket's
    // write timeout.
    let mut out = std::io::BufWriter::new(sock);
    let head = http::head(200, &stream_headers(), None);
    let mut sent =
        out.write_all(head.as_bytes()).is_ok() && out.write_all(b"retry: 2000\n\n").is_ok();
    for e in git_swarm::serve::backlog(&first.events) {
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
fn send_problems(out: &mut impl Write, problems: git_swarm::problem::Problems) -> bool {
    git_swarm::serve::problem_rows(&problems)
        .into_iter()
        .all(|row| {
            let data = git_swarm::serve::to_json(&row);
            write!(out, "event: problem\ndata: {data}\n\n").is_ok()
        })
}

/// One event as a server-sent event: the event as JSON on one `data:`
/// line. No `id:` field: an event id is any text (a line break, bytes a
/// browser would send back raw in `Last-Event-ID`), and the page skips
/// repeats by the id inside the JSON. False when the client has gone.
fn send_event(out: &mut impl Write, e: &git_swarm::event::Event) -> bool {
    let data = git_swarm::serve::to_json(e);
    write!(out, "data: {data}\n\n").is_ok()
}
