//! Following the log as events land (`git swarm log --follow`).
//!
//! A [`Follower`] remembers, for each month file, how far it has read (the
//! end of the last complete line) and which file that was (device and
//! inode, and a hash of the first and last bytes consumed, since git
//! replaces a file by deleting and creating it and the new one may get the
//! old inode), and reads only the bytes added since, a chunk at a time, so
//! memory never grows with a file or a line's size. Every event is kept once
//! by id, so lines brought in again by a union merge, a pull or a file
//! replaced by a checkout print nothing twice, while the new lines they
//! bring print. A last line with no newline yet may still be being
//! written: it is read again on the next poll, never reported while it
//! grows, unless it outgrows `events.max_line_bytes`.
//!
//! [`Waiter`] sleeps until something may have changed: inotify on the
//! events folder on Linux (an append wakes it at once), with a short poll
//! as the fallback everywhere, and as a safety net when the folder is
//! replaced under the watch.

use std::collections::{BTreeMap, HashSet};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{Event, event_files, parse_event_line, skipped_problem};
use crate::config::EventsConfig;
use crate::error::Error;
use crate::problem::{Problem, Problems};

/// How long [`Waiter::wait`] sleeps when no inotify watch can wake it.
pub const POLL_INTERVAL: Duration = Duration::from_millis(200);

/// The longest an inotify wait lasts before the files are looked at anyway
/// (a folder replaced under the watch is then seen within this time).
const WATCH_TIMEOUT: Duration = Duration::from_secs(1);

/// How much of a file is read at once: a long file, or one long line, is
/// never held whole.
const CHUNK: u64 = 1 << 20;

/// How many bytes at each end of what was consumed [`fingerprint`] hashes.
const FINGERPRINT_BYTES: u64 = 4096;

/// What one file has given so far.
#[derive(Debug, Clone, Default)]
struct Tail {
    /// Device and inode of the file read: another one under the same name
    /// (a checkout replaced it) is read from the start.
    identity: (u64, u64),
    /// Bytes consumed: up to the end of the last complete line, or past
    /// the start of an over-long line being skipped.
    offset: u64,
    /// Complete lines consumed.
    lines: u32,
    /// Inside a line already reported as over the limit: its rest, up to
    /// its newline, is skipped.
    skipping: bool,
    /// A hash of the bytes consumed nearest the start and nearest the
    /// offset (see [`fingerprint`]): a file rewritten under the same inode
    /// (a line merged in before the offset) no longer matches it.
    fingerprint: u64,
}

/// New events, in (time, id) order, and the problems met reading them.
#[derive(Debug, Default)]
pub struct Batch {
    pub events: Vec<Event>,
    /// Kept up to [`Problems::CAP`], counted past it.
    pub problems: Problems,
}

/// Reads the event files of one folder incrementally; see the module docs.
#[derive(Debug)]
pub struct Follower {
    /// The folders, each as problems name it (`.swarm/events`).
    dirs: Vec<(PathBuf, String)>,
    max_line_bytes: u64,
    max_file_bytes: u64,
    tails: BTreeMap<String, Tail>,
    /// The id key ([`super::id_key`]) of every event given: 16 bytes each,
    /// not the id's text.
    seen: HashSet<u128>,
    /// Set by [`Follower::keeping_latest`]: the first poll gives only its
    /// latest this many events.
    keep: Option<usize>,
    /// Problems reported already, so that each is said once: (file, line, code).
    /// At most [`REMEMBERED`]: past it, problems are only counted (a file
    /// of millions of bad lines must not be millions of entries here).
    reported: HashSet<(String, Option<u32>, String)>,
}

impl Follower {
    /// A follower of the month files in `dirs`, each given with the name
    /// problems call it by (the log's tracked and pending folders).
    pub fn new(dirs: &[(PathBuf, String)], cfg: &EventsConfig) -> Follower {
        Follower {
            dirs: (dirs.iter())
                .map(|(d, rel)| (d.clone(), rel.trim_end_matches('/').to_owned()))
                .collect(),
            max_line_bytes: cfg.max_line_bytes,
            max_file_bytes: cfg.max_file_bytes,
            tails: BTreeMap::new(),
            seen: HashSet::new(),
            keep: None,
            reported: HashSet::new(),
        }
    }

    /// The first poll (the whole log) gives only its latest `n` events;
    /// all are marked seen, and later polls give every event that lands.
    /// A reader that shows the latest few (`serve`'s stream) thus never
    /// holds the whole log parsed: a 100 MB log is some 700,000 events.
    pub fn keeping_latest(mut self, n: usize) -> Follower {
        self.keep = Some(n);
        self
    }

    /// Reads what landed since the last poll (the first poll: everything),
    /// in every month file there is now.
    pub fn poll(&mut self) -> Result<Batch, Error> {
        let mut batch = Batch::default();
        let mut present = HashSet::new();
        for (dir, rel_dir) in self.dirs.clone() {
            for path in event_files(&dir)? {
                let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
                    continue;
                };
                let rel = format!("{rel_dir}/{name}");
                present.insert(rel.clone());
                self.read_file(&path, &rel, &mut batch)?;
            }
        }
        // A file removed (a checkout of an older commit) starts again from
        // nothing if it comes back.
        self.tails.retain(|name, _| present.contains(name));
        trim(&mut batch.events, self.keep.take(), 0);
        Ok(batch)
    }

    /// Reads what landed in `path`, which problems (and the tails) call `rel`.
    fn read_file(&mut self, path: &Path, rel: &str, batch: &mut Batch) -> Result<(), Error> {
        let name = rel;
        let mut file = match crate::safe_fs::open_read(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => {
                return match skipped_problem(rel, &e) {
                    Some(p) => {
                        self.report(p, batch);
                        Ok(())
                    }
                    None => Err(Error::io(path, e)),
                };
            }
        };
        let meta = file.metadata().map_err(|e| Error::io(path, e))?;
        let identity = file_identity(&meta);
        let len = meta.len();
        if len > self.max_file_bytes {
            self.report(super::too_large_problem(rel, self.max_file_bytes), batch);
            return Ok(());
        }
        let mut tail = self.tails.remove(name).unwrap_or_default();
        let same = tail.identity == identity
            && len >= tail.offset
            && fingerprint(&mut file, tail.offset).map_err(|e| Error::io(path, e))?
                == tail.fingerprint;
        if !same {
            // Replaced, truncated, or rewritten in place (git deletes and
            // creates a file, and the file system may give the new one the
            // old inode): read again from the start; the ids seen keep what
            // was printed from printing again.
            tail = Tail {
                identity,
                ..Tail::default()
            };
        }
        if len > tail.offset {
            self.read_from(&mut file, rel, len, &mut tail, batch)
                .map_err(|e| Error::io(path, e))?;
            tail.fingerprint =
                fingerprint(&mut file, tail.offset).map_err(|e| Error::io(path, e))?;
        }
        self.tails.insert(name.to_owned(), tail);
        Ok(())
    }

    /// Reads `file` from `tail.offset` up to `len` in chunks of [`CHUNK`]
    /// bytes, so that memory is bounded by a chunk and the longest line
    /// kept (`events.max_line_bytes`), never by the file's size.
    fn read_from(
        &mut self,
        file: &mut std::fs::File,
        rel: &str,
        len: u64,
        tail: &mut Tail,
        batch: &mut Batch,
    ) -> std::io::Result<()> {
        file.seek(SeekFrom::Start(tail.offset))?;
        let mut pos = tail.offset;
        let mut buf = vec![0u8; CHUNK.min(len - pos) as usize];
        // The line begun in an earlier chunk, up to the limit.
        let mut line: Vec<u8> = Vec::new();
        while pos < len {
            let want = (len - pos).min(buf.len() as u64) as usize;
            let n = file.read(&mut buf[..want])?;
            if n == 0 {
                break;
            }
            let chunk = &buf[..n];
            let mut start = 0usize;
            while let Some(i) = memchr::memchr(b'\n', &chunk[start..]) {
                let piece = &chunk[start..start + i];
                start += i + 1;
                tail.lines = tail.lines.saturating_add(1);
                tail.offset = pos + start as u64;
                if std::mem::take(&mut tail.skipping) {
                    line.clear();
                    continue;
                }
                if line.is_empty() {
                    self.take_line(piece, rel, tail.lines, batch);
                } else {
                    line.extend_from_slice(piece);
                    let whole = std::mem::take(&mut line);
                    self.take_line(&whole, rel, tail.lines, batch);
                }
            }
            pos += n as u64;
            if !tail.skipping {
                line.extend_from_slice(&chunk[start..]);
                if line.len() as u64 > self.max_line_bytes {
                    // No writer of events writes a line this long: it is
                    // not one being written, and is skipped up to its
                    // newline without being kept.
                    let p = Problem::error(
                        rel,
                        "bad_event",
                        format!("line is over the {}-byte limit", self.max_line_bytes),
                    )
                    .at(tail.lines.saturating_add(1), 1)
                    .with_hint("an event line is a few hundred bytes; this one was not written by git-swarm. Remove it");
                    self.report(p, batch);
                    tail.skipping = true;
                    line = Vec::new();
                }
            }
        }
        if tail.skipping {
            tail.offset = pos;
        }
        Ok(())
    }

    /// One complete line (`number`, 1-based), without its newline.
    fn take_line(&mut self, raw: &[u8], rel: &str, number: u32, batch: &mut Batch) {
        if raw.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        match parse_event_line(raw, self.max_line_bytes) {
            Ok(event) => {
                if self.seen.insert(super::id_key(&event.id)) {
                    batch.events.push(event);
                    if let Some(n) = self.keep {
                        trim(&mut batch.events, Some(n), n.max(1024));
                    }
                }
            }
            Err(_) if self.reported.len() >= REMEMBERED => batch.problems.count(rel, true),
            Err((col, message, hint)) => {
                let p = Problem::error(rel, "bad_event", message)
                    .at(number, col)
                    .with_hint(hint);
                self.report(p, batch);
            }
        }
    }

    fn report(&mut self, p: Problem, batch: &mut Batch) {
        let key = (p.path.clone(), p.line, p.code.clone());
        if self.reported.contains(&key) {
            return;
        }
        if self.reported.len() >= REMEMBERED {
            batch.problems.count(&p.path, p.is_error());
            return;
        }
        self.reported.insert(key);
        batch.problems.push(p);
    }
}

/// Puts `events` in (time, id) order and, when keeping the latest `keep`,
/// drops all but them. With a `slack`, only once they are more than that
/// over `keep` (while reading, so that sorting is amortised).
fn trim(events: &mut Vec<Event>, keep: Option<usize>, slack: usize) {
    let keep = keep.unwrap_or(usize::MAX);
    if slack > 0 && events.len() <= keep.saturating_add(slack) {
        return;
    }
    events.sort_by_cached_key(|e| (e.ts_millis(), e.id.clone()));
    let drop = events.len().saturating_sub(keep);
    events.drain(..drop);
}

/// How many problems a follower remembers having reported.
const REMEMBERED: usize = 4 * Problems::CAP;

/// A hash of the first and the last (up to) [`FINGERPRINT_BYTES`] of the
/// first `offset` bytes of `file`: two small reads, so that each poll can
/// tell a file whose consumed part changed from one that only grew.
fn fingerprint(file: &mut std::fs::File, offset: u64) -> std::io::Result<u64> {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    offset.hash(&mut hasher);
    let mut buf = Vec::new();
    for start in [0, offset.saturating_sub(FINGERPRINT_BYTES)] {
        let n = (offset - start).min(FINGERPRINT_BYTES);
        file.seek(SeekFrom::Start(start))?;
        buf.clear();
        file.by_ref().take(n).read_to_end(&mut buf)?;
        buf.hash(&mut hasher);
    }
    Ok(hasher.finish())
}

#[cfg(unix)]
fn file_identity(meta: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn file_identity(_meta: &std::fs::Metadata) -> (u64, u64) {
    (0, 0)
}

/// Sleeps until the events folder may have changed.
pub struct Waiter {
    #[cfg(target_os = "linux")]
    watch: linux::Watch,
}

impl Waiter {
    /// A waiter for the folders `dirs` (which need not exist yet).
    pub fn new(dirs: &[PathBuf]) -> Waiter {
        #[cfg(not(target_os = "linux"))]
        let _ = dirs;
        Waiter {
            #[cfg(target_os = "linux")]
            watch: linux::Watch::new(dirs),
        }
    }

    /// Returns when something in the folder changed, or after a while
    /// ([`POLL_INTERVAL`] without a watch, a second with one).
    pub fn wait(&mut self) {
        #[cfg(target_os = "linux")]
        if self.watch.wait() {
            return;
        }
        std::thread::sleep(POLL_INTERVAL);
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::os::fd::OwnedFd;
    use std::path::{Path, PathBuf};

    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    use rustix::fs::inotify::{self, CreateFlags, WatchFlags};
    use rustix::io::Errno;

    use super::WATCH_TIMEOUT;

    /// The device and inode of `dir` when it is a folder of its own (not a link).
    fn folder_id(dir: &Path) -> Option<(u64, u64)> {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::symlink_metadata(dir).ok()?;
        meta.is_dir().then(|| (meta.dev(), meta.ino()))
    }

    /// A folder's watch and the folder (device, inode) it watches.
    type Watched = Option<(i32, (u64, u64))>;

    /// One inotify instance watching the log's folders, each watch made
    /// again when its folder is replaced (or first appears).
    pub(super) struct Watch {
        fd: Option<OwnedFd>,
        /// Each folder, with its watch.
        dirs: Vec<(PathBuf, Watched)>,
    }

    impl Watch {
        pub(super) fn new(dirs: &[PathBuf]) -> Watch {
            let fd = inotify::init(CreateFlags::NONBLOCK | CreateFlags::CLOEXEC).ok();
            Watch {
                fd,
                dirs: dirs.iter().map(|d| (d.clone(), None)).collect(),
            }
        }

        /// Waits on the watches; false if there is none to wait on (no
        /// folder exists yet: the caller polls).
        pub(super) fn wait(&mut self) -> bool {
            self.rewatch();
            let Some(fd) = &self.fd else {
                return false;
            };
            if self.dirs.iter().all(|(_, wd)| wd.is_none()) {
                return false;
            }
            let timeout = Timespec {
                tv_sec: WATCH_TIMEOUT.as_secs() as i64,
                tv_nsec: 0,
            };
            let mut fds = [PollFd::new(fd, PollFlags::IN)];
            match poll(&mut fds, Some(&timeout)) {
                Ok(_) | Err(Errno::INTR) => {}
                Err(_) => return false,
            }
            // What woke it is not read: the follower looks at every file.
            let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); 4096];
            let mut reader = inotify::Reader::new(fd, &mut buf);
            while reader.next().is_ok() {}
            true
        }

        /// Watches each folder now at its path, if it is a folder of its own.
        fn rewatch(&mut self) {
            let Some(fd) = &self.fd else { return };
            for (dir, watched) in &mut self.dirs {
                let now = folder_id(dir);
                if now.is_some() && watched.map(|(_, id)| id) == now {
                    continue;
                }
                if let Some((wd, _)) = watched.take() {
                    let _ = inotify::remove_watch(fd, wd);
                }
                let Some(id) = now else { continue };
                let flags = WatchFlags::MODIFY
                    | WatchFlags::CLOSE_WRITE
                    | WatchFlags::CREATE
                    | WatchFlags::MOVED_TO
                    | WatchFlags::DELETE
                    | WatchFlags::ATTRIB
                    | WatchFlags::ONLYDIR
                    | WatchFlags::DONT_FOLLOW;
                if let Ok(wd) = inotify::add_watch(fd, dir.as_path(), flags) {
                    *watched = Some((wd, id));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(id: &str, ts: &str) -> String {
        format!("{{\"id\":\"{id}\",\"ts\":\"{ts}\",\"kind\":\"added\"}}\n")
    }

    fn ids(batch: &Batch) -> Vec<&str> {
        batch.events.iter().map(|e| e.id.as_str()).collect()
    }

    #[test]
    fn keeping_the_latest_holds_few_of_the_first_poll_and_all_of_the_next() {
        let dir = tempfile::tempdir().expect("temp dir");
        let ts = |n: usize| {
            format!(
                "2026-11-01T{:02}:{:02}:{:02}.000Z",
                n / 3600,
                n / 60 % 60,
                n % 60
            )
        };
        // Written newest first, across two files: the latest are found by time, not place.
        let (mut nov, mut dec) = (String::new(), String::new());
        for n in (0..5000).rev() {
            let to = if n % 2 == 0 { &mut nov } else { &mut dec };
            to.push_str(&line(&format!("e{n:05}"), &ts(n)));
        }
        std::fs::write(dir.path().join("2026-11.jsonl"), nov).expect("write");
        std::fs::write(dir.path().join("2026-12.jsonl"), dec).expect("write");
        let mut f = Follower::new(
            &[(dir.path().to_path_buf(), ".swarm/events".into())],
            &EventsConfig::default(),
        )
        .keeping_latest(3);
        assert_eq!(
            ids(&f.poll().expect("poll")),
            ["e04997", "e04998", "e04999"]
        );
        // Later polls give every new event, however many, and no old one again.
        let mut more = String::new();
        for n in 0..5000 {
            more.push_str(&line(&format!("e{n:05}"), &ts(n)));
        }
        for n in 5000..5010 {
            more.push_str(&line(&format!("e{n:05}"), &ts(n)));
        }
        let path = dir.path().join("2026-11.jsonl");
        let mut old = std::fs::read_to_string(&path).expect("read");
        old.push_str(&more);
        std::fs::write(&path, old).expect("write");
        let next = f.poll().expect("poll");
        assert_eq!(next.events.len(), 10, "{:?}", ids(&next));
        assert_eq!(ids(&next)[0], "e05000");
    }

    #[test]
    fn new_lines_torn_lines_copies_and_replaced_files() {
        let dir = tempfile::tempdir().expect("temp dir");
        let nov = dir.path().join("2026-11.jsonl");
        let cfg = EventsConfig::default();
        let mut f = Follower::new(&[(dir.path().to_path_buf(), ".swarm/events".into())], &cfg);
        std::fs::write(&nov, line("a", "2026-11-01T00:00:00.000Z")).expect("write");
        assert_eq!(ids(&f.poll().expect("poll")), ["a"]);
        assert!(f.poll().expect("poll").events.is_empty());

        // A torn line: nothing, and no problem, until its newline lands.
        let b = line("b", "2026-11-02T00:00:00.000Z");
        let (b1, b2) = b.split_at(10);
        let append = |s: &str| {
            use std::io::Write;
            let mut file = std::fs::OpenOptions::new()
                .append(true)
                .open(&nov)
                .expect("open");
            file.write_all(s.as_bytes()).expect("append");
        };
        append(b1);
        let torn = f.poll().expect("poll");
        assert!(torn.events.is_empty() && torn.problems.is_empty());
        append(b2);
        assert_eq!(ids(&f.poll().expect("poll")), ["b"]);

        // A copy of a line seen, a malformed line (reported once), a new month.
        append(&line("a", "2026-11-01T00:00:00.000Z"));
        append("not json\n");
        let dec = dir.path().join("2026-12.jsonl");
        std::fs::write(&dec, line("c", "2026-12-01T00:00:00.000Z")).expect("write");
        let batch = f.poll().expect("poll");
        assert_eq!(ids(&batch), ["c"]);
        let lines: Vec<_> = batch.problems.iter().map(|p| p.location()).collect();
        assert_eq!(lines, [".swarm/events/2026-11.jsonl:4:2"]);

        // Replaced by a shorter file holding one old and one new event.
        let replaced =
            line("b", "2026-11-02T00:00:00.000Z") + &line("d", "2026-11-03T00:00:00.000Z");
        std::fs::write(dir.path().join("tmp"), replaced).expect("write");
        std::fs::rename(dir.path().join("tmp"), &nov).expect("rename");
        let batch = f.poll().expect("poll");
        assert_eq!(ids(&batch), ["d"]);
        assert!(batch.problems.is_empty());
    }

    #[test]
    fn a_file_rewritten_under_the_same_inode_with_a_line_before_the_offset() {
        // A union merge put C before B; the pull rewrote the file in place
        // (the same inode, as ext4 gives a file deleted and created again).
        let dir = tempfile::tempdir().expect("temp dir");
        let nov = dir.path().join("2026-11.jsonl");
        let (a, b, c) = (
            line("a", "2026-11-01T00:00:00.000Z"),
            line("b", "2026-11-02T00:00:00.000Z"),
            line("c", "2026-11-03T00:00:00.000Z"),
        );
        let mut f = Follower::new(
            &[(dir.path().to_path_buf(), ".swarm/events".into())],
            &EventsConfig::default(),
        );
        std::fs::write(&nov, a.clone() + &b).expect("write");
        assert_eq!(ids(&f.poll().expect("poll")), ["a", "b"]);
        std::fs::write(&nov, a.clone() + &c + &b).expect("rewrite in place");
        let batch = f.poll().expect("poll");
        assert_eq!(ids(&batch), ["c"]);
        assert!(batch.problems.is_empty(), "{:?}", batch.problems);

        // The same size, a line changed before the offset: no torn line read.
        let d = line("d", "2026-11-04T00:00:00.000Z");
        std::fs::write(&nov, a.clone() + &d + &b).expect("rewrite in place");
        let batch = f.poll().expect("poll");
        assert_eq!(ids(&batch), ["d"]);
        assert!(batch.problems.is_empty(), "{:?}", batch.problems);
    }

    #[test]
    fn a_huge_line_is_skipped_in_chunks_and_reported_once() {
        let dir = tempfile::tempdir().expect("temp dir");
        let nov = dir.path().join("2026-11.jsonl");
        let cfg = EventsConfig::default();
        let mut f = Follower::new(&[(dir.path().to_path_buf(), ".swarm/events".into())], &cfg);
        // Several chunks long, its newline far past the limit.
        let huge = vec![b'x'; (CHUNK * 3 + 17) as usize];
        std::fs::write(&nov, &huge).expect("write");
        let first = f.poll().expect("poll");
        assert!(first.events.is_empty());
        let lines: Vec<_> = first.problems.iter().map(|p| p.location()).collect();
        assert_eq!(lines, [".swarm/events/2026-11.jsonl:1:1"]);
        {
            use std::io::Write;
            let mut file = std::fs::OpenOptions::new()
                .append(true)
                .open(&nov)
                .expect("open");
            file.write_all(b"yyy\n").expect("append");
            file.write_all(line("g", "2026-11-05T00:00:00.000Z").as_bytes())
                .expect("append");
        }
        let batch = f.poll().expect("poll");
        assert_eq!(ids(&batch), ["g"]);
        assert!(batch.problems.is_empty(), "{:?}", batch.problems);

        // Read in one go by a new follower: the same.
        let mut fresh = Follower::new(&[(dir.path().to_path_buf(), ".swarm/events".into())], &cfg);
        let batch = fresh.poll().expect("poll");
        assert_eq!(ids(&batch), ["g"]);
        assert_eq!(batch.problems.total(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn a_link_is_reported_once_and_not_read() {
        let dir = tempfile::tempdir().expect("temp dir");
        let outside = dir.path().join("outside");
        std::fs::write(&outside, line("x", "2026-11-01T00:00:00.000Z")).expect("write");
        let events = dir.path().join("events");
        std::fs::create_dir(&events).expect("mkdir");
        std::os::unix::fs::symlink(&outside, events.join("2026-11.jsonl")).expect("link");
        let mut f = Follower::new(
            &[(events.clone(), ".swarm/events".into())],
            &EventsConfig::default(),
        );
        let first = f.poll().expect("poll");
        assert!(first.events.is_empty());
        assert_eq!(first.problems.total(), 1);
        assert!(f.poll().expect("poll").problems.is_empty());
    }
}
