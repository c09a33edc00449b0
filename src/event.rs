//! The append-only event log: `.swarm/events/<YYYY-MM>.jsonl`.
//!
//! Every learning signal is one JSON line with a unique, sortable id. Counts,
//! scores and states are never stored; they are folds of these lines, so two
//! branches that each add events merge (with `merge=union`) into the sum of
//! both, and a rebase or cherry-pick folds to the same state.
//!
//! Appends are one `write` of whole lines under an exclusive lock on the
//! month's file, retried until a bounded wait runs out — never skipped. A
//! line torn by a crash is left where it is: the next append starts on a new
//! line, so the torn bytes stay one malformed line (reported by readers,
//! repaired by `doctor --fix`) and no later event is glued to it.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::config::{EventsConfig, FsyncPolicy};
use crate::error::Error;
use crate::problem::{Problem, line_col};

/// Kinds this version knows. Others are kept and folded as "other".
pub const KNOWN_KINDS: &[&str] = &[
    "added",
    "shown",
    "ack",
    "spoofed_ack",
    "unacknowledged",
    "verdict",
    "check",
    "check_passed",
    "escalation",
    "deescalation",
    "override",
    "phase",
    "quarantined",
    "promoted",
    "retired",
    "pattern_observed",
    "pattern_validated",
    "pattern_ignored",
    "pattern_aged",
    "pattern_promoted",
    "pattern_deprecated",
    "pattern_shown",
    "outcome",
    "handoff",
    "handoff_violation",
];

/// One line of the event log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "git-swarm event")]
pub struct Event {
    /// Sortable unique id: a ULID (48-bit millisecond time, then the writer's clock in nanoseconds and 19 random bits, so that later writes sort later).
    #[schemars(length(min = 1, max = 128))]
    pub id: String,
    /// When it happened: RFC 3339 in UTC with milliseconds.
    #[schemars(extend("format" = "date-time"))]
    pub ts: String,
    /// What happened (`added`, `quarantined`, `shown`, `ack`, …).
    #[schemars(pattern(r"^[a-z][a-z0-9_]{0,63}$"))]
    pub kind: String,
    /// Who caused it.
    #[serde(default, skip_serializing_if = "Actor::is_empty")]
    pub actor: Actor,
    /// The directive the event is about, if one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directive: Option<String>,
    /// The kind's own fields; unknown ones are kept.
    #[serde(flatten)]
    pub data: Map<String, Value>,
}

/// Who caused an event.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Actor {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
}

impl Actor {
    pub fn is_empty(&self) -> bool {
        self.role.is_none() && self.agent.is_none() && self.user.is_none()
    }
}

/// Where "now" comes from: the system clock, or a fixed instant (tests,
/// reproducible runs).
#[derive(Debug, Clone, Copy, Default)]
pub struct Clock {
    pub fixed: Option<jiff::Timestamp>,
}

impl Clock {
    pub fn now(&self) -> jiff::Timestamp {
        self.fixed.unwrap_or_else(jiff::Timestamp::now)
    }
}

/// The last id [`new_id`] made, to keep ids of one process increasing.
static LAST_ID: Mutex<Option<ulid::Ulid>> = Mutex::new(None);

impl Event {
    /// A new event of `kind` at `ts`, with a fresh id.
    pub fn new(kind: &str, ts: jiff::Timestamp) -> Event {
        Event {
            id: new_id(ts),
            ts: format_ts(ts),
            kind: kind.to_owned(),
            actor: Actor::default(),
            directive: None,
            data: Map::new(),
        }
    }

    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Event {
        self.data.insert(key.to_owned(), value.into());
        self
    }

    /// Milliseconds since the epoch, if `ts` parses.
    pub fn ts_millis(&self) -> Option<i64> {
        parse_ts_millis(&self.ts)
    }

    /// The month file this event belongs in (`2026-11.jsonl`), by its UTC time.
    pub fn month_file(&self) -> Option<String> {
        let ms = self.ts_millis()?;
        let ts = jiff::Timestamp::from_millisecond(ms).ok()?;
        Some(month_file_name(ts))
    }

    /// The event as one JSON line, newline included.
    pub fn to_line(&self) -> String {
        let mut line = serde_json::to_string(self).unwrap_or_default();
        line.push('\n');
        line
    }
}

/// A new sortable id for an event at `ts`: a ULID whose time is `ts` and
/// whose 80 other bits start with the wall clock in nanoseconds (then 19
/// random bits). Readers order events by (ts, id), so events written later
/// sort later even at the same `ts` — a clock fixed by `GIT_SWARM_NOW`, or
/// two processes within one millisecond — and the index folds them onto
/// what it has instead of folding the whole log again. Monotonic within
/// the process.
pub fn new_id(ts: jiff::Timestamp) -> String {
    let millis = u64::try_from(ts.as_millisecond()).unwrap_or(0);
    let wall_ns = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
        & ((1 << 61) - 1);
    let noise = ulid::Ulid::generate().random() & ((1 << 19) - 1);
    let fresh = ulid::Ulid::from_parts(millis, (wall_ns << 19) | noise);
    let mut last = LAST_ID
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let id = match *last {
        Some(prev) if prev.timestamp_ms() == millis && prev >= fresh => {
            prev.increment().unwrap_or(fresh)
        }
        _ => fresh,
    };
    *last = Some(id);
    id.to_string()
}

/// The 128-bit key of an event id: the ULID itself, or a hash of any other id.
pub fn id_key(id: &str) -> u128 {
    match ulid::Ulid::from_string(id) {
        Ok(u) if id.len() == 26 => u.0,
        _ => xxhash_rust::xxh3::xxh3_128(id.as_bytes()),
    }
}

/// The id behind a key made by [`id_key`]: exact for ULID ids (every id
/// git-swarm writes); for another id, the ULID spelling of its hash.
pub fn id_of_key(key: u128) -> String {
    ulid::Ulid(key).to_string()
}

/// `2026-11-22T10:00:00.123Z`.
pub fn format_ts(ts: jiff::Timestamp) -> String {
    jiff::fmt::temporal::DateTimePrinter::new()
        .precision(Some(3))
        .timestamp_to_string(&ts)
}

/// Milliseconds since the epoch of an RFC 3339 time. The canonical form is
/// parsed without allocation; other offsets and precisions go through jiff.
pub fn parse_ts_millis(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() == 24
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'.'
        && b[23] == b'Z'
    {
        let num = |r: std::ops::Range<usize>| -> Option<i64> {
            let mut n = 0i64;
            for &c in &b[r] {
                if !c.is_ascii_digit() {
                    return None;
                }
                n = n * 10 + i64::from(c - b'0');
            }
            Some(n)
        };
        let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
        let (h, mi, sec, ms) = (num(11..13)?, num(14..16)?, num(17..19)?, num(20..23)?);
        if (1..=12).contains(&mo) && (1..=31).contains(&d) && h < 24 && mi < 60 && sec < 61 {
            let millis =
                (days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + sec) * 1000 + ms;
            // The times jiff does not hold (the last hours of 9999) are
            // refused here too, so every reader agrees on which lines are events.
            return (millis <= jiff::Timestamp::MAX.as_millisecond()).then_some(millis);
        }
        return None;
    }
    s.parse::<jiff::Timestamp>()
        .ok()
        .map(|t| t.as_millisecond())
}

/// Is `s` a date, time and offset as RFC 3339 writes them, whose instant is
/// past the last one the log holds ([`jiff::Timestamp::MAX`],
/// 9999-12-30T22:00:00Z: the last instant whose date is within year 9999 at
/// every offset)? What is wrong with `9999-12-31T23:59:59Z` is its range,
/// not its syntax.
fn is_time_out_of_range(s: &str) -> bool {
    jiff::fmt::temporal::Pieces::parse(s)
        .is_ok_and(|p| p.date().year() == 9999 && p.time().is_some() && p.offset().is_some())
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

pub fn month_file_name(ts: jiff::Timestamp) -> String {
    let dt = ts.to_zoned(jiff::tz::TimeZone::UTC);
    format!("{:04}-{:02}.jsonl", dt.year(), dt.month())
}

/// Is `name` an event file name (`YYYY-MM.jsonl`)?
pub fn is_month_file(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() == 13
        && name.ends_with(".jsonl")
        && b[4] == b'-'
        && b[..4].iter().chain(&b[5..7]).all(u8::is_ascii_digit)
}

/// Appends events to the log in `events_dir`, each to its month's file.
///
/// Per file: take the exclusive lock (retrying until `lock_timeout_ms`); if
/// the file ends in a torn line (a writer died mid-write — no live writer
/// can be, we hold the lock), save those bytes under `local/torn/` and cut
/// them off; write all of this call's lines for that file with one `write`;
/// optionally fsync; release. Returns the torn lines saved aside, for the
/// caller to report.
pub fn append(
    events_dir: &Path,
    events: &[Event],
    cfg: &EventsConfig,
) -> Result<Vec<PathBuf>, Error> {
    let by_file = by_month_file(events, cfg)?;
    let swarm = swarm_of(events_dir);
    crate::safe_fs::create_dir_all(swarm, events_dir)?;
    let now_ms = events.first().and_then(Event::ts_millis).unwrap_or(0);
    let mut saved = Vec::new();
    for (name, lines) in by_file {
        let buf: String = lines.into_iter().map(|(_, line)| line).collect();
        let aside = append_to(
            &events_dir.join(name),
            ToWrite::Lines(buf.as_bytes()),
            cfg,
            swarm,
            now_ms,
        )?;
        saved.extend(aside);
    }
    Ok(saved)
}

/// A month file's name, and the events to append to it with their lines.
type MonthFile<'a> = (String, Vec<(&'a Event, String)>);

/// `events` with their lines, grouped by month file in the order the files
/// first occur; a line over `max_line_bytes` is refused.
fn by_month_file<'a>(events: &'a [Event], cfg: &EventsConfig) -> Result<Vec<MonthFile<'a>>, Error> {
    let mut by_file: Vec<MonthFile<'a>> = Vec::new();
    for event in events {
        let name = event.month_file().ok_or_else(|| Error::InvalidEvent {
            message: format!("event {} has an unparseable time `{}`", event.id, event.ts),
        })?;
        let line = event.to_line();
        if line.len() as u64 > cfg.max_line_bytes {
            return Err(Error::InvalidEvent {
                message: format!(
                    "event {} is {} bytes, over events.max_line_bytes ({})",
                    event.id,
                    line.len(),
                    cfg.max_line_bytes
                ),
            });
        }
        match by_file.iter_mut().find(|(n, _)| *n == name) {
            Some((_, lines)) => lines.push((event, line)),
            None => by_file.push((name, vec![(event, line)])),
        }
    }
    Ok(by_file)
}

/// Can `event` be appended? Its line is within `events.max_line_bytes`, and
/// its month file is a plain file that opens for appending and has room for
/// it under `events.max_file_bytes`, or is missing from a folder that can
/// hold it. For a command that acts and then records (writes a directive
/// file, prints a block): a log that refuses the event is found before the
/// act, not after it.
pub fn check_appendable(events_dir: &Path, event: &Event, cfg: &EventsConfig) -> Result<(), Error> {
    let by_file = by_month_file(std::slice::from_ref(event), cfg)?;
    let Some((name, lines)) = by_file.first() else {
        return Ok(());
    };
    if let Some((path, kind)) = crate::safe_fs::linked_folder(swarm_of(events_dir), events_dir) {
        return Err(Error::LinkedFolder { path, kind });
    }
    let path = events_dir.join(name);
    let file = match crate::safe_fs::open(&path, OpenOptions::new().append(true)) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(&path, e)),
    };
    let len = file.metadata().map_err(|e| Error::io(&path, e))?.len();
    let adding: u64 = lines.iter().map(|(_, line)| line.len() as u64).sum();
    if len.saturating_add(adding + 1) > cfg.max_file_bytes {
        return Err(too_large_to_append(&path, len, cfg.max_file_bytes));
    }
    Ok(())
}

/// Appends one event unless a line of its month file holds `marker`
/// (checked under the lock, so of several processes racing to record the
/// same thing exactly one writes it). Returns whether it was written, and
/// the torn lines saved aside as [`append`] does.
pub fn append_once(
    events_dir: &Path,
    event: &Event,
    marker: &str,
    cfg: &EventsConfig,
) -> Result<(bool, Vec<PathBuf>), Error> {
    let (written, saved) = append_unrecorded(
        events_dir,
        std::slice::from_ref(event),
        |_| marker.to_owned(),
        |_, _| true,
        cfg,
    )?;
    Ok((written == 1, saved))
}

/// Appends those of `events` that `recorded` does not find among the
/// lines of their month file, checked under the file's lock: of several
/// processes racing to record the same things, one writes each. Only the
/// lines holding an event's `needle` (a string its record must contain) are
/// parsed and given to `recorded` with the event. Returns how many were
/// written, and the torn lines saved aside as [`append`] does.
pub fn append_unrecorded(
    events_dir: &Path,
    events: &[Event],
    needle: impl Fn(&Event) -> String,
    recorded: impl Fn(&Event, &Event) -> bool,
    cfg: &EventsConfig,
) -> Result<(usize, Vec<PathBuf>), Error> {
    let by_file = by_month_file(events, cfg)?;
    let swarm = swarm_of(events_dir);
    crate::safe_fs::create_dir_all(swarm, events_dir)?;
    let mut written = 0;
    let mut saved = Vec::new();
    for (name, lines) in by_file {
        let now_ms = lines[0].0.ts_millis().unwrap_or(0);
        let mut unrecorded = |text: &[u8]| -> Vec<u8> {
            let mut out = Vec::new();
            for (e, line) in &lines {
                let needle = needle(e);
                let found = memchr::memmem::find_iter(text, needle.as_bytes()).any(|at| {
                    let start = text[..at]
                        .iter()
                        .rposition(|&b| b == b'\n')
                        .map_or(0, |i| i + 1);
                    let end = text[at..]
                        .iter()
                        .position(|&b| b == b'\n')
                        .map_or(text.len(), |i| at + i);
                    parse_event_line(&text[start..end], cfg.max_line_bytes)
                        .is_ok_and(|old| recorded(e, &old))
                });
                if !found {
                    out.extend_from_slice(line.as_bytes());
                    written += 1;
                }
            }
            out
        };
        let aside = append_to(
            &events_dir.join(&name),
            ToWrite::Unrecorded(&mut unrecorded),
            cfg,
            swarm,
            now_ms,
        )?;
        saved.extend(aside);
    }
    Ok((written, saved))
}

/// The `.swarm/` folder holding `events_dir`: where the check for linked
/// folders starts, and where torn lines go (`local/torn/`).
fn swarm_of(events_dir: &Path) -> &Path {
    events_dir.parent().unwrap_or(events_dir)
}

/// Whether the bytes after the last newline of `file` (of length `len`,
/// not ending with one) are a whole event that only lacks its newline:
/// written by hand or by another tool, not torn by a crash.
fn tail_is_event(file: &mut File, len: u64, max_line_bytes: u64) -> io::Result<bool> {
    let n = len.min(max_line_bytes.saturating_add(1));
    let mut tail = vec![0u8; usize::try_from(n).unwrap_or(0)];
    file.seek(SeekFrom::Start(len - n))?;
    file.read_exact(&mut tail)?;
    let line = match tail.iter().rposition(|&b| b == b'\n') {
        Some(i) => &tail[i + 1..],
        None if n == len => &tail[..],
        // Longer than a line may be.
        None => return Ok(false),
    };
    Ok(parse_event_line(line, max_line_bytes).is_ok())
}

/// What [`append_to`] writes.
enum ToWrite<'a, 'f> {
    Lines(&'a [u8]),
    /// Given what the file holds once locked, the bytes to append (none:
    /// nothing is written).
    Unrecorded(&'a mut (dyn FnMut(&[u8]) -> Vec<u8> + 'f)),
}

fn append_to(
    path: &Path,
    what: ToWrite<'_, '_>,
    cfg: &EventsConfig,
    swarm: &Path,
    now_ms: i64,
) -> Result<Option<PathBuf>, Error> {
    let mut file = crate::safe_fs::open(
        path,
        OpenOptions::new().read(true).append(true).create(true),
    )
    .map_err(|e| Error::io(path, e))?;
    lock_with_retry(&file, path, Duration::from_millis(cfg.lock_timeout_ms))?;
    let result = (|| -> Result<Option<PathBuf>, Error> {
        let io = |e| Error::io(path, e);
        // Checked before anything is read: the file is never read whole,
        // nor its last line (a torn one could be all of it).
        let len = file.metadata().map_err(io)?.len();
        if len > cfg.max_file_bytes {
            return Err(too_large_to_append(path, len, cfg.max_file_bytes));
        }
        let unrecorded;
        let lines = match what {
            ToWrite::Lines(lines) => lines,
            ToWrite::Unrecorded(filter) => {
                let mut text = Vec::new();
                file.seek(SeekFrom::Start(0)).map_err(io)?;
                (&mut file)
                    .take(cfg.max_file_bytes)
                    .read_to_end(&mut text)
                    .map_err(io)?;
                unrecorded = filter(&text);
                if unrecorded.is_empty() {
                    return Ok(None);
                }
                &unrecorded[..]
            }
        };
        let len = file.metadata().map_err(io)?.len();
        // Appending past the bound would leave a file no reader reads.
        if len.saturating_add(lines.len() as u64 + 1) > cfg.max_file_bytes {
            return Err(too_large_to_append(path, len, cfg.max_file_bytes));
        }
        let mut buf = Vec::with_capacity(lines.len() + 1);
        let mut saved = None;
        if len > 0 {
            let mut last = [0u8; 1];
            file.seek(SeekFrom::Start(len - 1)).map_err(io)?;
            file.read_exact(&mut last).map_err(io)?;
            if last[0] != b'\n' {
                if tail_is_event(&mut file, len, cfg.max_line_bytes).map_err(io)? {
                    // A whole event, newline missing: it stays in the log.
                    buf.push(b'\n');
                } else {
                    // We hold the lock, so no writer is mid-line: these bytes are
                    // what a dead writer left. Keep them aside, and the file whole.
                    match set_aside_torn_tail(&mut file, path, swarm, now_ms) {
                        Ok(aside) => saved = aside,
                        // Could not save them: leave them as one malformed line.
                        Err(_) => buf.push(b'\n'),
                    }
                }
            }
        }
        buf.extend_from_slice(lines);
        file.write_all(&buf).map_err(io)?;
        if cfg.fsync == FsyncPolicy::Always {
            file.sync_data().map_err(io)?;
        }
        Ok(saved)
    })();
    let _ = file.unlock();
    result
}

/// The error for an append to `path` (`len` bytes) that would leave it
/// over `events.max_file_bytes` (`limit`), or finds it over already.
fn too_large_to_append(path: &Path, len: u64, limit: u64) -> Error {
    let message = if len > limit {
        format!(
            "{} is {len} bytes, over events.max_file_bytes ({limit}): no event is appended to it",
            path.display()
        )
    } else {
        format!(
            "{} is {len} bytes: the events would take it over events.max_file_bytes ({limit}), so none is appended",
            path.display()
        )
    };
    Error::Usage {
        message,
        hint: Some("remove the file or move it aside if git-swarm did not write it (`git swarm validate` names it); if it is genuine, raise events.max_file_bytes in .swarm/config.toml".into()),
    }
}

/// Saves the bytes after the last newline of `file` (a torn line) to a new
/// file in `local/torn/` of `swarm` (the `.swarm/` folder) and truncates `file` to its last complete line. The
/// caller holds the lock. `None` when the file ends with a newline.
pub fn set_aside_torn_tail(
    file: &mut File,
    path: &Path,
    swarm: &Path,
    now_ms: i64,
) -> Result<Option<PathBuf>, Error> {
    let io = |e| Error::io(path, e);
    let len = file.metadata().map_err(io)?.len();
    // Find the last newline, reading backwards a block at a time.
    let mut block = vec![0u8; 64 * 1024];
    let mut end = len;
    let keep = loop {
        let start = end.saturating_sub(block.len() as u64);
        let n = usize::try_from(end - start).unwrap_or(0);
        file.seek(SeekFrom::Start(start)).map_err(io)?;
        file.read_exact(&mut block[..n]).map_err(io)?;
        if let Some(i) = block[..n].iter().rposition(|&b| b == b'\n') {
            break start + i as u64 + 1;
        }
        if start == 0 {
            break 0;
        }
        end = start;
    };
    if keep == len {
        return Ok(None);
    }
    let mut tail = vec![0u8; usize::try_from(len - keep).unwrap_or(0)];
    file.seek(SeekFrom::Start(keep)).map_err(io)?;
    file.read_exact(&mut tail).map_err(io)?;
    let torn_dir = swarm.join("local").join("torn");
    crate::safe_fs::create_dir_all(swarm, &torn_dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Named by the time; a second one within the same millisecond (or under a
    // fixed clock) gets a counter, never replaces one.
    let mut attempt = 0u32;
    let aside = loop {
        let aside = match attempt {
            0 => torn_dir.join(format!("{name}.{now_ms}")),
            n => torn_dir.join(format!("{name}.{now_ms}.{n}")),
        };
        let shown = aside.display().to_string();
        match crate::store::create_new(swarm, &aside, &tail, &shown, &name) {
            Err(Error::AlreadyExists { .. }) if attempt < 1000 => attempt += 1,
            saved => break saved.map(|()| aside)?,
        }
    };
    file.set_len(keep).map_err(io)?;
    file.sync_all().map_err(io)?;
    Ok(Some(aside))
}

/// Takes an exclusive lock on `file`, retrying with a growing pause until `wait` runs out.
pub fn lock_with_retry(file: &File, path: &Path, wait: Duration) -> Result<(), Error> {
    let start = Instant::now();
    let mut pause = Duration::from_micros(200);
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) => {
                if start.elapsed() >= wait {
                    return Err(Error::LockTimeout {
                        path: path.to_path_buf(),
                        waited: start.elapsed(),
                    });
                }
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(20));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(path, e)),
        }
    }
}

/// Is `kind` a valid event kind (`^[a-z][a-z0-9_]{0,63}$`)?
pub fn is_valid_kind(kind: &str) -> bool {
    let b = kind.as_bytes();
    (1..=64).contains(&b.len())
        && b[0].is_ascii_lowercase()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_')
}

/// An event read back from a file, with where it was.
#[derive(Debug, Clone)]
pub struct EventLine {
    pub line: u32,
    pub event: Event,
}

/// What a reader found in one event file.
#[derive(Debug, Default)]
pub struct EventFile {
    pub events: Vec<EventLine>,
    pub problems: Vec<Problem>,
    /// Bytes at the end after the last newline: a torn (or still being written) line.
    pub torn_tail: Option<TornTail>,
}

#[derive(Debug, Clone)]
pub struct TornTail {
    pub line: u32,
    pub offset: u64,
    pub len: u64,
}

/// Reads and checks every line of an event file. `rel` is the path shown
/// in problems. A symlink, FIFO or device in its place, or a file over
/// `events.max_file_bytes`, is not read: it is one problem, and no events.
pub fn read_event_file(path: &Path, rel: &str, cfg: &EventsConfig) -> Result<EventFile, Error> {
    match crate::safe_fs::read(path, cfg.max_file_bytes) {
        Ok(bytes) => Ok(parse_event_bytes(&bytes, rel, cfg.max_line_bytes)),
        Err(e) => match skipped_problem(rel, &e) {
            Some(problem) => Ok(EventFile {
                problems: vec![problem],
                ..EventFile::default()
            }),
            None => Err(Error::io(path, e)),
        },
    }
}

/// The problem reported for an event file [`crate::safe_fs`] refused to
/// read (not a regular file, or over `events.max_file_bytes`); `None` for
/// any other error.
pub fn skipped_problem(rel: &str, e: &io::Error) -> Option<Problem> {
    if let Some(kind) = crate::safe_fs::not_regular(e) {
        return Some(not_regular_problem(rel, kind));
    }
    crate::safe_fs::over_limit(e).map(|limit| too_large_problem(rel, limit))
}

/// The problem reported for an event file over `events.max_file_bytes`.
pub fn too_large_problem(rel: &str, limit: u64) -> Problem {
    Problem::error(
        rel,
        TOO_LARGE,
        format!("file is over events.max_file_bytes ({limit} bytes): skipped, its events are not read"),
    )
    .with_hint("a month of events is a few MB: remove this file or cut it down; if it is genuine, raise events.max_file_bytes in .swarm/config.toml")
}

/// The code of a problem about an event file over `events.max_file_bytes`, skipped.
pub const TOO_LARGE: &str = "file_too_large";

/// Whether a problem with `code` says a whole event file was skipped.
pub fn is_skipped_file(code: &str) -> bool {
    code == NOT_REGULAR || code == TOO_LARGE
}

/// The problem reported for an event file that is not a regular file.
pub fn not_regular_problem(rel: &str, kind: crate::safe_fs::FileKind) -> Problem {
    Problem::error(
        rel,
        NOT_REGULAR,
        format!("{kind}, not a regular file: skipped, its events are not read"),
    )
    .with_hint("replace it with a regular event file, or remove it: a link committed under .swarm/ could point anywhere")
}

/// The code of a problem about a path under `.swarm/` that is not a
/// regular file (or a folder that is a link), skipped.
pub const NOT_REGULAR: &str = "not_regular_file";

/// Checks one event line. `Err` carries a problem without a path or line.
pub fn parse_event_line(
    raw: &[u8],
    max_line_bytes: u64,
) -> Result<Event, (u32, String, &'static str)> {
    if raw.len() as u64 > max_line_bytes {
        return Err((
            1,
            format!(
                "line is {} bytes, over the {max_line_bytes}-byte limit",
                raw.len()
            ),
            "an event line is a few hundred bytes; this one was not written by git-swarm. Remove it",
        ));
    }
    let text = std::str::from_utf8(raw).map_err(|e| {
        let col = String::from_utf8_lossy(&raw[..e.valid_up_to()])
            .chars()
            .count()
            + 1;
        (
            u32::try_from(col).unwrap_or(u32::MAX),
            "line is not valid UTF-8".to_owned(),
            "event lines are UTF-8 JSON; remove or re-encode the line",
        )
    })?;
    let event: Event = serde_json::from_str(text).map_err(|e| {
        // serde_json counts columns in bytes and appends "at line 1 column N"
        // (the line within this one line); the problem's own location says
        // where, in characters and with the file's line number.
        let col = line_col(text, e.column().saturating_sub(1)).1;
        let message = e.to_string();
        let message = match message.rsplit_once(" at line ") {
            Some((m, _)) if e.line() > 0 => m.to_owned(),
            _ => message,
        };
        (
            col,
            format!("malformed event: {message}"),
            "each line must be one JSON object with `id`, `ts` and `kind`",
        )
    })?;
    if event.id.is_empty() || event.id.len() > 128 {
        return Err((
            1,
            "event id is empty or longer than 128 bytes".into(),
            "ids are ULIDs written by git-swarm",
        ));
    }
    if event.ts_millis().is_none() {
        return Err(if is_time_out_of_range(&event.ts) {
            (
                1,
                format!(
                    "event time `{}` is later than {}, the last time the event log holds",
                    event.ts,
                    format_ts(jiff::Timestamp::MAX)
                ),
                "an event records when something happened: write the time it did, like 2026-11-22T10:00:00.000Z",
            )
        } else {
            (
                1,
                format!("event time `{}` is not an RFC 3339 time", event.ts),
                "write times like 2026-11-22T10:00:00.000Z",
            )
        });
    }
    if !is_valid_kind(&event.kind) {
        return Err((
            1,
            format!(
                "event kind `{}` is not a valid kind",
                event.kind.escape_debug()
            ),
            "kinds are 1–64 lowercase letters, digits and `_`, starting with a letter",
        ));
    }
    Ok(event)
}

pub fn parse_event_bytes(bytes: &[u8], rel: &str, max_line_bytes: u64) -> EventFile {
    let mut out = EventFile::default();
    let mut start = 0usize;
    let mut line_no = 0u32;
    while start < bytes.len() {
        line_no += 1;
        let (end, complete) = match memchr::memchr(b'\n', &bytes[start..]) {
            Some(i) => (start + i, true),
            None => (bytes.len(), false),
        };
        let raw = &bytes[start..end];
        if !complete {
            out.torn_tail = Some(TornTail {
                line: line_no,
                offset: start as u64,
                len: raw.len() as u64,
            });
            out.problems.push(
                Problem::error(rel, "torn_line", format!("last line is incomplete ({} bytes with no newline)", raw.len()))
                    .at(line_no, 1)
                    .with_hint("a write was cut short (crash or full disk); `git swarm doctor --fix` saves it aside and truncates it"),
            );
            break;
        }
        if !raw.iter().all(u8::is_ascii_whitespace) {
            match parse_event_line(raw, max_line_bytes) {
                Ok(event) => out.events.push(EventLine {
                    line: line_no,
                    event,
                }),
                Err((col, message, hint)) => out.problems.push(
                    Problem::error(rel, "bad_event", message)
                        .at(line_no, col)
                        .with_hint(hint),
                ),
            }
        }
        start = end + 1;
    }
    out
}

/// Lists the event files of `events_dir`, sorted by name. A folder named
/// like one is left out (`validate` warns about it); a symlink, FIFO or
/// device is listed, to be reported and skipped when it is read. A linked
/// `events_dir` holds none (the store reports it).
pub fn event_files(events_dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut files = Vec::new();
    let entries = crate::safe_fs::read_dir(events_dir).map_err(|e| Error::io(events_dir, e))?;
    for entry in entries.into_iter().flatten() {
        let entry = entry.map_err(|e| Error::io(events_dir, e))?;
        let name = entry.file_name();
        if name.to_str().is_some_and(is_month_file) && !entry.file_type().is_ok_and(|t| t.is_dir())
        {
            files.push(entry.path());
        }
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_ts_parse_agrees_with_jiff() {
        for s in [
            "2026-11-22T10:00:00.123Z",
            "1999-12-31T23:59:59.999Z",
            "2024-02-29T00:00:00.000Z",
            "1970-01-01T00:00:00.000Z",
        ] {
            let jiff_ms = s
                .parse::<jiff::Timestamp>()
                .expect("valid test input")
                .as_millisecond();
            assert_eq!(parse_ts_millis(s), Some(jiff_ms), "{s}");
        }
        assert_eq!(
            parse_ts_millis("2026-11-22T11:00:00+01:00"),
            parse_ts_millis("2026-11-22T10:00:00.000Z")
        );
        assert_eq!(parse_ts_millis("yesterday"), None);
    }

    #[test]
    fn ids_sort_by_time() {
        let t1 = "2026-01-01T00:00:00Z".parse().expect("valid test input");
        let t2 = "2026-01-01T00:00:01Z".parse().expect("valid test input");
        let (a, b, c) = (new_id(t1), new_id(t1), new_id(t2));
        assert!(a < b && b < c, "{a} {b} {c}");
        assert_eq!(
            id_key(&a),
            ulid::Ulid::from_string(&a).expect("valid test input").0
        );
        assert_ne!(id_key("custom-1"), id_key("custom-2"));
    }

    #[test]
    fn reader_reports_bad_lines_and_keeps_good_ones() {
        let good = Event::new(
            "added",
            "2026-11-22T10:00:00Z".parse().expect("valid test input"),
        )
        .to_line();
        let bytes =
            format!("{good}not json\n{{\"id\":\"x\",\"ts\":\"nope\",\"kind\":\"k\"}}\n{good}");
        let mut bytes = bytes.into_bytes();
        bytes.extend_from_slice(b"{\"id\":");
        let f = parse_event_bytes(&bytes, "e.jsonl", 65536);
        assert_eq!(f.events.len(), 2);
        let lines: Vec<_> = f
            .problems
            .iter()
            .map(|p| (p.line, p.code.as_str()))
            .collect();
        assert_eq!(
            lines,
            [
                (Some(2), "bad_event"),
                (Some(3), "bad_event"),
                (Some(5), "torn_line")
            ]
        );
    }
}
