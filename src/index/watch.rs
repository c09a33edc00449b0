//! A watcher that vouches for the directive files, so that commands need
//! not stat them (`git swarm index watch`), as git's file-system monitor
//! does for the worktree. Config and event files are still stat'ed: they
//! change with every appended event, and are cheap.
//!
//! - The watcher keeps a *generation*, raised by every inotify event in
//!   [`FOLDERS`] (and by the folders being created, removed or renamed).
//!   The kernel queues an event before the system call that caused it
//!   returns, and the watcher reads every queued event before it answers:
//!   a change made before the question is in the answer.
//! - A command asks (a Unix socket in the git dir) and, if its last record
//!   (`watch-token`) is this watcher and generation with the stamps its
//!   index was built from, does not stat the folders. Otherwise it stats
//!   them and records what it found with the answer it had before it looked.
//! - A watcher that cannot see every change says so and is not trusted: a
//!   `.toml` entry or a folder that is a symbolic link, a folder or file it
//!   could not watch (the inotify watch limit).
//!
//! What inotify does not report is not seen: writes through a shared memory
//! map (until the file is closed), changes made by another machine on a
//! network file system.

use std::io::Write;
#[cfg(target_os = "linux")]
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::time::Duration;

use crate::store::Store;

/// The folders of `.swarm/` a watcher vouches for (the entries' fingerprint's).
pub const FOLDERS: [&str; 2] = ["directives", "quarantine"];

/// How long a command waits for a watcher's answer (given in well under a
/// millisecond) before it stats the files itself.
#[cfg(target_os = "linux")]
const ANSWER_WAIT: Duration = Duration::from_millis(100);

/// A watcher's answer: which watcher (a number drawn when it started) and
/// how many changes it has seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answer {
    pub instance: u64,
    pub generation: u64,
}

impl Answer {
    /// Reads `<instance in hex> <generation>` from `words`.
    fn parse<'a>(words: &mut impl Iterator<Item = &'a str>) -> Option<Answer> {
        Some(Answer {
            instance: u64::from_str_radix(words.next()?, 16).ok()?,
            generation: words.next()?.parse().ok()?,
        })
    }
}

/// Where the watcher of `store` listens.
pub fn socket_path(store: &Store) -> PathBuf {
    store.git_dir.join("swarm").join("watch.sock")
}

/// What the last full scan found, with the watcher's answer before it.
fn token_path(store: &Store) -> PathBuf {
    store.git_dir.join("swarm").join("watch-token")
}

/// Held by the running watcher.
pub fn lock_path(store: &Store) -> PathBuf {
    store.git_dir.join("swarm").join("watch.lock")
}

/// Where a detached watcher writes what it has to say.
pub fn log_path(store: &Store) -> PathBuf {
    store.git_dir.join("swarm").join("watch.log")
}

/// Sends `line` to the watcher of `store` and returns its one-line answer.
/// The connection is made without blocking: a watcher suspended with a full
/// backlog would hold a blocking connect for good.
#[cfg(target_os = "linux")]
pub fn request(store: &Store, line: &str) -> std::io::Result<String> {
    use rustix::net::{AddressFamily, SocketAddrUnix, SocketFlags, SocketType};
    use std::os::unix::net::UnixStream;
    let fd = rustix::net::socket_with(
        AddressFamily::UNIX,
        SocketType::STREAM,
        SocketFlags::NONBLOCK | SocketFlags::CLOEXEC,
        None,
    )?;
    rustix::net::connect(&fd, &SocketAddrUnix::new(socket_path(store))?)?;
    let mut stream = UnixStream::from(fd);
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(ANSWER_WAIT))?;
    stream.set_write_timeout(Some(ANSWER_WAIT))?;
    stream.write_all(format!("{line}\n").as_bytes())?;
    let mut answer = String::new();
    BufReader::new(stream.take(4096)).read_line(&mut answer)?;
    if !answer.ends_with('\n') {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "the watcher closed the connection without an answer",
        ));
    }
    answer.pop();
    Ok(answer)
}

#[cfg(not(target_os = "linux"))]
pub fn request(_store: &Store, _line: &str) -> std::io::Result<String> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "the watcher runs on Linux only",
    ))
}

/// The answer of a watcher that vouches for the folders of this `.swarm/`;
/// `None` when none runs, it does not answer in time, or it cannot vouch.
pub fn ask(store: &Store) -> Option<Answer> {
    let reply = request(store, "vouch").ok()?;
    let mut words = reply.strip_prefix("vouch ")?.split(' ');
    let answer = Answer::parse(&mut words)?;
    let folder = (words.next()?.parse().ok()?, words.next()?.parse().ok()?);
    // It must watch this `.swarm/` (two worktrees may share a git dir).
    (folder_id(&store.swarm_dir) == Some(folder)).then_some(answer)
}

/// Device and inode of a folder.
#[cfg(unix)]
pub(crate) fn folder_id(path: &std::path::Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some((m.dev(), m.ino()))
}

#[cfg(not(unix))]
pub(crate) fn folder_id(_path: &std::path::Path) -> Option<(u64, u64)> {
    None
}

const TOKEN_MAGIC: &str = "git-swarm watch token 1";

/// Whether the last record says that at `answer` the folders' stamps had the fingerprint `entries`.
pub fn vouches(store: &Store, answer: Answer, entries: u64) -> bool {
    recorded(store) == Some((answer, entries))
}

fn recorded(store: &Store) -> Option<(Answer, u64)> {
    let text = std::fs::read_to_string(token_path(store)).ok()?;
    let mut lines = text.lines();
    if lines.next()? != TOKEN_MAGIC {
        return None;
    }
    let mut words = lines.next()?.split(' ');
    let answer = Answer::parse(&mut words)?;
    let entries = u64::from_str_radix(words.next()?, 16).ok()?;
    if words.next().is_some() || lines.next().is_some() {
        return None;
    }
    Some((answer, entries))
}

/// Records that at `answer` the folders' stamps had the fingerprint
/// `entries`. Only a cache: a failure to write it costs the next command a scan.
pub fn record(store: &Store, answer: Answer, entries: u64) {
    if vouches(store, answer, entries) {
        return;
    }
    let path = token_path(store);
    let text = format!(
        "{TOKEN_MAGIC}\n{:016x} {} {entries:016x}\n",
        answer.instance, answer.generation
    );
    let dir = path.parent().unwrap_or(std::path::Path::new("."));
    if let Ok(mut tmp) = tempfile::NamedTempFile::new_in(dir)
        && tmp.write_all(text.as_bytes()).is_ok()
    {
        let _ = tmp.persist(&path);
    }
}

/// Waits until no watcher holds the lock (at most `wait`); whether none does.
pub fn wait_stopped(store: &Store, wait: Duration) -> bool {
    let Ok(file) = std::fs::File::open(lock_path(store)) else {
        return true;
    };
    let start = std::time::Instant::now();
    loop {
        if file.try_lock_shared().is_ok() {
            return true;
        }
        if start.elapsed() > wait {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// What a running watcher says of itself (`index status`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// No watcher answers.
    None,
    /// A watcher answers and vouches for the folders.
    Vouching { pid: u32, generation: u64 },
    /// A watcher answers but cannot vouch, for the reason given.
    NotVouching { pid: u32, reason: String },
}

/// Asks the watcher of `store` how it stands.
pub fn state(store: &Store) -> State {
    let Ok(answer) = request(store, "status") else {
        return State::None;
    };
    // `status <pid> <generation> yes` or `status <pid> <generation> no <reason>`.
    let parsed = (|| {
        let mut words = answer.strip_prefix("status ")?.splitn(4, ' ');
        let pid = words.next()?.parse().ok()?;
        let generation = words.next()?.parse().ok()?;
        match words.next()? {
            "yes" => Some(State::Vouching { pid, generation }),
            _ => Some(State::NotVouching {
                pid,
                reason: words.next().unwrap_or("").to_owned(),
            }),
        }
    })();
    parsed.unwrap_or(State::NotVouching {
        pid: 0,
        reason: format!("an answer this version does not understand: {answer:?}"),
    })
}

#[cfg(target_os = "linux")]
pub use daemon::{Stop, Stopped, serve};

#[cfg(target_os = "linux")]
mod daemon {
    use std::collections::BTreeSet;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::os::fd::OwnedFd;
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::net::{UnixListener, UnixStream};
    use std::path::{Path, PathBuf};
    use std::time::Duration;

    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
    use rustix::io::Errno;

    use super::FOLDERS;
    use crate::error::{Error, Result};
    use crate::store::Store;

    /// Why a watcher stopped.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum Stop {
        /// `git swarm index watch --stop`.
        Asked,
        /// `.swarm/` was removed or renamed: there is nothing left to watch.
        SwarmGone,
        /// Its socket was removed or replaced: no command can reach it.
        SocketGone,
    }

    /// Events of `.swarm/` itself: a folder created, removed or renamed.
    fn swarm_events() -> WatchFlags {
        WatchFlags::CREATE
            | WatchFlags::DELETE
            | WatchFlags::MOVED_FROM
            | WatchFlags::MOVED_TO
            | WatchFlags::ATTRIB
            | WatchFlags::DELETE_SELF
            | WatchFlags::MOVE_SELF
            | WatchFlags::ONLYDIR
    }

    /// Events that change a folder's entries or a file's stamp or content.
    fn folder_events() -> WatchFlags {
        swarm_events() | WatchFlags::MODIFY | WatchFlags::CLOSE_WRITE
    }

    /// Events of a directive file, whichever of its names it is changed
    /// through (a hard link made elsewhere, say).
    fn file_events() -> WatchFlags {
        WatchFlags::MODIFY | WatchFlags::ATTRIB | WatchFlags::CLOSE_WRITE | WatchFlags::DONT_FOLLOW
    }

    /// One of [`FOLDERS`] as watched.
    #[derive(Default)]
    struct Folder {
        /// Its watch, if it exists, and the device and inode it watches.
        wd: Option<i32>,
        id: Option<(u64, u64)>,
        /// Why it, or a file in it, could not be watched.
        broken: Option<String>,
    }

    struct Watcher {
        inotify: OwnedFd,
        swarm: PathBuf,
        swarm_id: (u64, u64),
        swarm_wd: i32,
        folders: [Folder; 2],
        instance: u64,
        generation: u64,
        /// `.toml` entries that are symbolic links: (folder, name).
        links: BTreeSet<(usize, String)>,
    }

    impl Watcher {
        fn new(store: &Store) -> Result<Watcher> {
            let swarm = store.swarm_dir.clone();
            let io = |e: Errno| Error::io(&swarm, e.into());
            let inotify =
                inotify::init(CreateFlags::NONBLOCK | CreateFlags::CLOEXEC).map_err(io)?;
            let swarm_wd = inotify::add_watch(&inotify, &swarm, swarm_events()).map_err(io)?;
            // Taken after the watch: the command compares it.
            let swarm_id = super::folder_id(&swarm).ok_or_else(|| {
                Error::io(&swarm, std::io::Error::other("cannot stat the folder"))
            })?;
            let instance = xxhash_rust::xxh3::xxh3_64(
                format!(
                    "{:?} {} {}",
                    std::time::SystemTime::now(),
                    std::process::id(),
                    swarm.display()
                )
                .as_bytes(),
            );
            let mut w = Watcher {
                inotify,
                swarm,
                swarm_id,
                swarm_wd,
                folders: Default::default(),
                instance,
                generation: 0,
                links: BTreeSet::new(),
            };
            for i in 0..FOLDERS.len() {
                w.rewatch(i);
            }
            Ok(w)
        }

        /// (Re)adds the watch of folder `i` and of its files.
        fn rewatch(&mut self, i: usize) {
            let path = self.swarm.join(FOLDERS[i]);
            self.links.retain(|(f, _)| *f != i);
            let mut broken = None;
            // A folder that is a link may be swapped, or a path it goes
            // through, with no event here.
            if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
                broken = Some(format!(".swarm/{} is a symbolic link", FOLDERS[i]));
            }
            let wd = match inotify::add_watch(&self.inotify, &path, folder_events()) {
                Ok(wd) => Some(wd),
                Err(Errno::NOENT | Errno::NOTDIR) => None,
                Err(e) => {
                    broken = Some(cannot_watch(&path, e));
                    None
                }
            };
            if let Some(old) = self.folders[i].wd
                && Some(old) != wd
            {
                let _ = inotify::remove_watch(&self.inotify, old);
            }
            let id = wd.and_then(|_| super::folder_id(&path));
            self.folders[i] = Folder { wd, id, broken };
            if wd.is_some()
                && let Ok(entries) = std::fs::read_dir(&path)
            {
                for e in entries.flatten() {
                    if let Some(name) = e.file_name().to_str() {
                        self.look_at(i, name);
                    }
                }
            }
        }

        /// Watches entry `name` of folder `i` (a write through a hard link
        /// elsewhere reaches only a watch of the file itself) and notes
        /// whether it is a symbolic link, whose target may change unseen.
        fn look_at(&mut self, i: usize, name: &str) {
            if !name.ends_with(".toml") {
                return;
            }
            let path = self.swarm.join(FOLDERS[i]).join(name);
            let linked = match std::fs::symlink_metadata(&path) {
                Ok(m) => {
                    match inotify::add_watch(&self.inotify, &path, file_events()) {
                        Ok(_) | Err(Errno::NOENT) => {}
                        Err(e) => self.folders[i].broken = Some(cannot_watch(&path, e)),
                    }
                    m.file_type().is_symlink()
                }
                Err(_) => false,
            };
            let key = (i, name.to_owned());
            if linked {
                self.links.insert(key);
            } else {
                self.links.remove(&key);
            }
        }

        /// Why it cannot vouch, if it cannot.
        fn unable(&self) -> Option<String> {
            if let Some(b) = self.folders.iter().find_map(|f| f.broken.as_ref()) {
                return Some(b.clone());
            }
            self.links.first().map(|(i, name)| {
                format!(
                    "{} entr{} of .swarm/ {} a symbolic link (e.g. .swarm/{}/{name}), whose target may change unseen",
                    self.links.len(),
                    if self.links.len() == 1 { "y" } else { "ies" },
                    if self.links.len() == 1 { "is" } else { "are" },
                    FOLDERS[*i]
                )
            })
        }

        /// Reads every event queued so far; `Err(Stop)` when `.swarm/` went.
        fn drain(&mut self) -> std::result::Result<(), Stop> {
            let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); 16 * 1024];
            let mut rewatch = [false; 2];
            let mut look = Vec::new();
            let mut overflow = false;
            {
                let mut reader = inotify::Reader::new(&self.inotify, &mut buf);
                loop {
                    let event = match reader.next() {
                        Ok(e) => e,
                        Err(Errno::WOULDBLOCK) => break,
                        Err(Errno::INTR) => continue,
                        // Nothing more can be read: take everything as changed.
                        Err(_) => {
                            overflow = true;
                            break;
                        }
                    };
                    let flags = event.events();
                    if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
                        overflow = true;
                        continue;
                    }
                    let name = event
                        .file_name()
                        .and_then(|n| n.to_str().ok())
                        .map(str::to_owned);
                    if event.wd() == self.swarm_wd {
                        if flags.intersects(
                            ReadFlags::IGNORED
                                | ReadFlags::DELETE_SELF
                                | ReadFlags::MOVE_SELF
                                | ReadFlags::UNMOUNT,
                        ) {
                            return Err(Stop::SwarmGone);
                        }
                        if let Some(i) = name
                            .as_deref()
                            .and_then(|n| FOLDERS.iter().position(|f| *f == n))
                        {
                            self.generation += 1;
                            rewatch[i] = true;
                        }
                        continue;
                    }
                    // Any other event is a change (even from a watch given up since).
                    self.generation += 1;
                    if let Some(i) = self.folders.iter().position(|f| f.wd == Some(event.wd())) {
                        if flags.intersects(
                            ReadFlags::IGNORED | ReadFlags::DELETE_SELF | ReadFlags::MOVE_SELF,
                        ) {
                            rewatch[i] = true;
                        } else if let Some(n) = name {
                            look.push((i, n));
                        }
                    }
                }
            }
            if overflow {
                // Events were lost, folders created among them maybe.
                self.generation += 1;
                rewatch = [true; 2];
            }
            for (i, again) in rewatch.iter().enumerate() {
                if *again {
                    self.rewatch(i);
                }
            }
            for (i, name) in look {
                if !rewatch[i] {
                    self.look_at(i, &name);
                }
            }
            if super::folder_id(&self.swarm) != Some(self.swarm_id) {
                return Err(Stop::SwarmGone);
            }
            // A folder that is not the one watched (something mounted on it) sent no event.
            for (i, folder) in FOLDERS.iter().enumerate() {
                let now = super::folder_id(&self.swarm.join(folder));
                if now != self.folders[i].id {
                    self.generation += 1;
                    self.rewatch(i);
                }
            }
            Ok(())
        }

        /// Answers one request; `Err(Stop::Asked)` for `stop`.
        fn answer(&mut self, stream: UnixStream) -> std::result::Result<(), Stop> {
            let _ = stream.set_nonblocking(false);
            // A client that connects and says nothing holds up the others.
            let _ = stream.set_read_timeout(Some(Duration::from_millis(100)));
            let _ = stream.set_write_timeout(Some(Duration::from_millis(100)));
            let mut line = String::new();
            if BufReader::new((&stream).take(256))
                .read_line(&mut line)
                .is_err()
            {
                return Ok(());
            }
            // Every change made before the question is in the answer.
            self.drain()?;
            let reply = match line.trim_end() {
                "vouch" => match self.unable() {
                    None => format!(
                        "vouch {:016x} {} {} {}",
                        self.instance, self.generation, self.swarm_id.0, self.swarm_id.1
                    ),
                    Some(reason) => format!("no {reason}"),
                },
                "status" => {
                    let vouching = self.unable().map_or("yes".into(), |r| format!("no {r}"));
                    format!(
                        "status {} {} {vouching}",
                        std::process::id(),
                        self.generation
                    )
                }
                "stop" => {
                    let _ = (&stream).write_all(b"stopping\n");
                    return Err(Stop::Asked);
                }
                other => format!("error unknown request {other:?}"),
            };
            let _ = (&stream).write_all(format!("{reply}\n").as_bytes());
            Ok(())
        }
    }

    /// A watcher that has stopped, still holding the lock that tells it runs:
    /// [`super::wait_stopped`] returns once this is dropped.
    pub struct Stopped {
        pub why: Stop,
        _lock: std::fs::File,
    }

    /// Watches `.swarm/` of `store` and answers commands until it must stop;
    /// `ready` is called once the socket listens.
    pub fn serve(store: &Store, ready: &mut dyn FnMut(u32)) -> Result<Stopped> {
        let dir = store.git_dir.join("swarm");
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        let lock_path = super::lock_path(store);
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| Error::io(&lock_path, e))?;
        if lock.try_lock().is_err() {
            return Err(Error::usage(
                "a watcher already runs for this repository",
                "`git swarm index status` shows it; `git swarm index watch --stop` ends it",
            ));
        }
        // Watch first: a change from here on is counted.
        let mut watcher = Watcher::new(store)?;
        let socket = super::socket_path(store);
        // No watcher holds the lock, so a socket left there is stale.
        if let Err(e) = std::fs::remove_file(&socket)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            return Err(Error::io(&socket, e));
        }
        let listener = UnixListener::bind(&socket).map_err(|e| {
            Error::usage(
                format!("cannot listen at {}: {e}", socket.display()),
                "a socket's path is limited to 107 bytes: a repository at a shorter path can be watched",
            )
        })?;
        let socket_ino = std::fs::symlink_metadata(&socket)
            .map_err(|e| Error::io(&socket, e))?
            .ino();
        listener
            .set_nonblocking(true)
            .map_err(|e| Error::io(&socket, e))?;
        ready(std::process::id());
        let why = run(&mut watcher, &listener, &socket, socket_ino);
        // Only its own socket: another may have been bound there since.
        if std::fs::symlink_metadata(&socket).is_ok_and(|m| m.ino() == socket_ino) {
            let _ = std::fs::remove_file(&socket);
        }
        Ok(Stopped { why, _lock: lock })
    }

    fn cannot_watch(path: &Path, e: Errno) -> String {
        format!(
            "cannot watch {}: {} (see /proc/sys/fs/inotify/max_user_watches)",
            path.display(),
            std::io::Error::from(e)
        )
    }

    fn run(watcher: &mut Watcher, listener: &UnixListener, socket: &Path, socket_ino: u64) -> Stop {
        let tick = Timespec {
            tv_sec: 30,
            tv_nsec: 0,
        };
        loop {
            let mut fds = [
                PollFd::new(&watcher.inotify, PollFlags::IN),
                PollFd::new(listener, PollFlags::IN),
            ];
            match poll(&mut fds, Some(&tick)) {
                Ok(_) | Err(Errno::INTR) => {}
                Err(_) => std::thread::sleep(Duration::from_millis(100)),
            }
            let changes = !fds[0].revents().is_empty();
            let asked = !fds[1].revents().is_empty();
            if changes && let Err(stop) = watcher.drain() {
                return stop;
            }
            if asked {
                loop {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            if let Err(stop) = watcher.answer(stream) {
                                return stop;
                            }
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                        // Out of descriptors, say: wait rather than spin.
                        Err(_) => {
                            std::thread::sleep(Duration::from_millis(50));
                            break;
                        }
                    }
                }
            }
            if !std::fs::symlink_metadata(socket).is_ok_and(|m| m.ino() == socket_ino) {
                return Stop::SocketGone;
            }
        }
    }
}
