//! Starting the program in a process group of its own, reading its output
//! within the cap, and killing the whole group on every way out.
//!
//! The group is killed while its leader (the program) is still unreaped:
//! the leader's pid is the group's id, and a zombie's pid cannot be handed
//! to another process, so the kill can never reach an unrelated group. The
//! [`Group`] guard kills and reaps in `Drop`, which covers early returns and
//! panics; a signal to git-swarm is held off until then (see
//! [`super::interrupt`]).
//!
//! The program gets stdin, stdout and stderr and no other file descriptor:
//! one the caller left open without close-on-exec (`exec 7>file` in a
//! shell) would otherwise be passed on through git-swarm to the program.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use super::interrupt::Watch;
use super::{Limits, ToolOutcome, UserEnv};

/// Set for every program, after the environment is cleared (with `PATH`
/// and `HOME`). The git variables keep git read-only, offline and away
/// from system-wide configuration; the rest make output plain and stable.
const FIXED_ENV: &[(&str, &str)] = &[
    ("LANG", "C"),
    ("LC_ALL", "C"),
    ("TZ", "UTC"),
    ("TERM", "dumb"),
    ("NO_COLOR", "1"),
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_ATTR_NOSYSTEM", "1"),
    ("GIT_OPTIONAL_LOCKS", "0"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_NO_LAZY_FETCH", "1"),
];

/// How long to keep reading after the group was killed: long enough for
/// what is in the pipes, bounded because a process that left the group (a
/// daemon) may hold a pipe open.
const DRAIN: Duration = Duration::from_millis(500);

/// The longest single wait for output, so that the exit of a program whose
/// pipes are held open by a child is still noticed promptly.
const TICK: Duration = Duration::from_millis(20);

/// What a program printed, within the cap.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captured {
    pub stdout: Kept,
    pub stderr: Kept,
}

/// One output stream: its start and its end, and how much of the middle
/// was read and thrown away.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Kept {
    /// The first bytes, up to half the cap.
    pub head: Vec<u8>,
    /// The last bytes, up to half the cap, when there was more than the head.
    pub tail: Vec<u8>,
    /// Bytes between head and tail that were not kept.
    pub omitted: u64,
}

impl Kept {
    /// Every byte the program wrote to this stream.
    pub fn total(&self) -> u64 {
        (self.head.len() + self.tail.len()) as u64 + self.omitted
    }

    /// The kept bytes as text (lossy UTF-8), with a marker where bytes
    /// were left out.
    pub fn text(&self) -> String {
        let mut s = String::from_utf8_lossy(&self.head).into_owned();
        if self.omitted > 0 {
            if !s.ends_with('\n') {
                s.push('\n');
            }
            s.push_str(&format!("[… {} bytes not kept …]\n", self.omitted));
        }
        s.push_str(&String::from_utf8_lossy(&self.tail));
        s
    }
}

impl Captured {
    /// Bytes of output read and not kept.
    pub fn omitted(&self) -> u64 {
        self.stdout.omitted + self.stderr.omitted
    }

    /// The last `lines` lines of stderr (of stdout when stderr is empty),
    /// for a message.
    pub fn excerpt(&self, lines: usize) -> String {
        let stream = if self.stderr.total() > 0 {
            &self.stderr
        } else {
            &self.stdout
        };
        let text = stream.text();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }
}

/// Collects one stream within its cap.
struct Collector {
    half: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    omitted: u64,
}

impl Collector {
    fn new(cap: usize) -> Collector {
        Collector {
            half: cap / 2,
            head: Vec::new(),
            tail: VecDeque::new(),
            omitted: 0,
        }
    }

    fn push(&mut self, mut bytes: &[u8]) {
        let room = self.half - self.head.len();
        if room > 0 {
            let n = room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
        }
        if bytes.len() > self.half {
            let skip = bytes.len() - self.half;
            self.omitted += (self.tail.len() + skip) as u64;
            self.tail.clear();
            bytes = &bytes[skip..];
        }
        self.tail.extend(bytes);
        if self.tail.len() > self.half {
            let excess = self.tail.len() - self.half;
            self.tail.drain(..excess);
            self.omitted += excess as u64;
        }
    }

    fn finish(self) -> Kept {
        Kept {
            head: self.head,
            tail: self.tail.into(),
            omitted: self.omitted,
        }
    }
}

/// The running program's process group; killed and reaped when dropped.
struct Group {
    child: Child,
    pgid: libc::pid_t,
    reaped: bool,
}

impl Group {
    fn kill(&self) {
        // SAFETY: kill(2) with a negative pid signals a process group; it
        // touches no memory. The group id is the unreaped leader's pid.
        unsafe {
            libc::kill(-self.pgid, libc::SIGKILL);
        }
    }

    /// Has the leader exited? It is left unreaped (see the module docs).
    fn leader_exited(&self) -> io::Result<bool> {
        // SAFETY: siginfo_t is plain data, for which all zeroes is valid;
        // waitid writes into it and nothing else.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                self.pgid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: waitid filled in the siginfo (or left it zeroed: no exit).
        Ok(unsafe { info.si_pid() } != 0)
    }

    /// Kills what is left of the group and reaps the leader.
    fn finish(&mut self) -> io::Result<ExitStatus> {
        self.kill();
        let status = self.child.wait();
        self.reaped = true;
        status
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if !self.reaped {
            self.kill();
            let _ = self.child.wait();
        }
    }
}

/// Starts `program` (a `tool:` predicate's) in the minimal environment and
/// waits for it within `limits`.
pub fn run(
    program: &Path,
    args: &[String],
    root: &Path,
    search: &[PathBuf],
    env: &UserEnv,
    limits: &Limits,
) -> ToolOutcome {
    let mut cmd = Command::new(program);
    cmd.args(args).env_clear();
    if let Ok(path) = std::env::join_paths(search) {
        cmd.env("PATH", path);
    }
    if let Some(home) = &env.home {
        cmd.env("HOME", home);
    }
    // The index git is committing from (`git commit -a`, `git commit PATH`):
    // without it `git diff --cached` would check the real index instead.
    // Only an absolute path: the program runs in the root, not where the
    // value was given.
    if let Some(index) = env.index_file.as_deref().filter(|p| p.is_absolute()) {
        cmd.env("GIT_INDEX_FILE", index);
    }
    cmd.envs(FIXED_ENV.iter().copied());
    supervised(cmd, program, root, None, limits)
}

/// Starts the user's own `program` (configured in their git config, never
/// in the repository) with their environment, writes `input` to its stdin,
/// and waits for it within `limits`, as [`run`] does.
pub fn run_with_input(
    program: &Path,
    args: &[String],
    root: &Path,
    input: &[u8],
    limits: &Limits,
) -> ToolOutcome {
    let mut cmd = Command::new(program);
    cmd.args(args);
    supervised(cmd, program, root, Some(input), limits)
}

/// Runs `cmd` in `root`, in a process group of its own, with `input` (or
/// nothing) on stdin, and waits for it within `limits`.
fn supervised(
    mut cmd: Command,
    program: &Path,
    root: &Path,
    input: Option<&[u8]>,
    limits: &Limits,
) -> ToolOutcome {
    cmd.current_dir(root)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let fd_limit = fd_limit();
    // SAFETY: the hook runs in the child between fork and exec, where only
    // async-signal-safe calls are allowed: it makes system calls on plain
    // integers and allocates nothing.
    unsafe {
        cmd.pre_exec(move || only_standard_fds(fd_limit));
    }
    // Held until the group below is killed and reaped (it is dropped after it).
    let watch = match Watch::start() {
        Ok(watch) => watch,
        Err(e) => {
            return ToolOutcome::error(format!("not running {}: {e}", program.display()));
        }
    };
    if let Some(signal) = watch.pending() {
        return ToolOutcome::error(format!(
            "not running {}: signal {signal} received",
            program.display()
        ));
    }
    let start = Instant::now();
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            return ToolOutcome::error(format!("could not start {}: {e}", program.display()));
        }
    };
    // Written from a thread of its own, so that a program that prints
    // before it has read all of its input cannot block on a full pipe while
    // this one blocks on writing. A program that never reads is killed at
    // its timeout, which closes the pipe and ends the write; the thread is
    // not waited for, in case a process that left the group holds the pipe.
    if let (Some(mut stdin), Some(input)) = (child.stdin.take(), input) {
        let input = input.to_vec();
        std::thread::spawn(move || {
            // A program may exit without reading it all: its business.
            let _ = std::io::Write::write_all(&mut stdin, &input);
        });
    }
    let Ok(pgid) = libc::pid_t::try_from(child.id()) else {
        // Dropping the child leaves it running; kill it directly first.
        let _ = child.kill();
        let _ = child.wait();
        return ToolOutcome::error(format!("process id {} does not fit a pid_t", child.id()));
    };
    let mut group = Group {
        child,
        pgid,
        reaped: false,
    };
    match supervise(&mut group, &watch, start, limits) {
        Ok((status, timed_out, output)) => {
            let elapsed = start.elapsed();
            if timed_out {
                ToolOutcome::TimedOut {
                    after: limits.timeout,
                    output,
                }
            } else if status.success() {
                ToolOutcome::Passed { output, elapsed }
            } else {
                ToolOutcome::Failed {
                    code: status.code(),
                    signal: status.signal(),
                    output,
                    elapsed,
                }
            }
        }
        Err(e) => ToolOutcome::error(format!("while running {}: {e}", program.display())),
    }
}

/// Reads output until the leader exits or the time is up, kills the group,
/// drains the pipes, and reaps the leader.
fn supervise(
    group: &mut Group,
    watch: &Watch,
    start: Instant,
    limits: &Limits,
) -> io::Result<(ExitStatus, bool, Captured)> {
    let mut pipes = Pipes {
        streams: [
            group
                .child
                .stdout
                .take()
                .map(|o| File::from(OwnedFd::from(o))),
            group
                .child
                .stderr
                .take()
                .map(|e| File::from(OwnedFd::from(e))),
        ],
        collect: [
            Collector::new(limits.output_cap),
            Collector::new(limits.output_cap),
        ],
        buf: vec![0; 64 * 1024],
    };
    let deadline = start + limits.timeout;
    let timed_out = loop {
        if group.leader_exited()? || watch.pending().is_some() {
            break false;
        }
        let now = Instant::now();
        if now >= deadline {
            break true;
        }
        pipes.pump((deadline - now).min(TICK))?;
    };
    group.kill();
    let drain_until = Instant::now() + DRAIN;
    while pipes.open() && watch.pending().is_none() {
        let now = Instant::now();
        if now >= drain_until {
            break;
        }
        pipes.pump(drain_until - now)?;
    }
    let [out, err] = pipes.collect;
    let output = Captured {
        stdout: out.finish(),
        stderr: err.finish(),
    };
    let status = group.finish()?;
    Ok((status, timed_out, output))
}

struct Pipes {
    /// stdout and stderr, each until it is closed.
    streams: [Option<File>; 2],
    collect: [Collector; 2],
    buf: Vec<u8>,
}

impl Pipes {
    fn open(&self) -> bool {
        self.streams.iter().any(Option::is_some)
    }

    /// Waits up to `wait` for output and reads what is there (once per stream).
    fn pump(&mut self, wait: Duration) -> io::Result<()> {
        let (which, mut fds): (Vec<usize>, Vec<libc::pollfd>) = (0..2)
            .filter_map(|i| Some((i, pollfd(self.streams[i].as_ref()?.as_raw_fd()))))
            .unzip();
        if fds.is_empty() {
            std::thread::sleep(wait);
            return Ok(());
        }
        let ms = wait.as_millis().clamp(1, i32::MAX as u128) as libc::c_int;
        // SAFETY: fds is a live, correctly sized array of pollfd.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted {
                Ok(())
            } else {
                Err(e)
            };
        }
        for (i, fd) in which.into_iter().zip(fds) {
            let Some(stream) = self.streams[i].as_mut().filter(|_| fd.revents != 0) else {
                continue;
            };
            match stream.read(&mut self.buf) {
                Ok(0) => self.streams[i] = None,
                Ok(n) => self.collect[i].push(&self.buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// The soft limit on open file descriptors: no descriptor above it can
/// have been opened since it was set.
fn fd_limit() -> libc::c_int {
    // SAFETY: getrlimit fills in the plain-data struct it is given.
    let mut limit: libc::rlimit = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
    if r != 0 {
        return 1 << 20;
    }
    // Capped for the loop below (only for kernels without close_range).
    libc::c_int::try_from(limit.rlim_cur).map_or(1 << 20, |n| n.min(1 << 20))
}

/// In the child: marks every descriptor above stderr close-on-exec, so that
/// the program gets only 0, 1 and 2. They are marked rather than closed:
/// std reports a failed exec through a descriptor of its own.
fn only_standard_fds(fd_limit: libc::c_int) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: close_range(2) with CLOSE_RANGE_CLOEXEC only sets flags on
        // descriptors; it touches no memory.
        let r = unsafe {
            libc::syscall(
                libc::SYS_close_range,
                3 as libc::c_uint,
                libc::c_uint::MAX,
                libc::CLOSE_RANGE_CLOEXEC,
            )
        };
        if r == 0 {
            return Ok(());
        }
        // Older than Linux 5.11: one descriptor at a time, below.
    }
    for fd in 3..fd_limit {
        // SAFETY: fcntl(2) F_SETFD sets a descriptor's flags (FD_CLOEXEC is
        // the only one); on a descriptor that is not open it fails with EBADF.
        unsafe {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
    Ok(())
}

fn pollfd(fd: libc::c_int) -> libc::pollfd {
    libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_collector_keeps_the_start_and_the_end() {
        let mut c = Collector::new(8);
        for chunk in [&b"abc"[..], b"defghij", b"klmnopqrstuvwxyz", b"0", b"12"] {
            c.push(chunk);
        }
        let kept = c.finish();
        assert_eq!(kept.head, b"abcd");
        assert_eq!(kept.tail, b"z012");
        assert_eq!(kept.total(), 29);
        assert_eq!(kept.omitted, 21);
    }

    #[test]
    fn short_output_is_kept_whole() {
        let mut c = Collector::new(1024);
        c.push(b"hello\n");
        c.push(b"world\n");
        let kept = c.finish();
        assert_eq!(kept.text(), "hello\nworld\n");
        assert_eq!(kept.omitted, 0);
    }
}
