//! Appending to the log: one write of whole lines per month file, under
//! its lock, setting a torn tail aside first.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::{Event, parse_event_line};
use crate::config::{EventsConfig, FsyncPolicy};
use crate::error::Error;

/// Appends events to the log in `events_dir`, each to its month's file, as
/// [`append_to`] does. Returns the torn lines saved aside, for the caller to
/// report.
pub fn append(
    events_dir: &Path,
    events: &[Event],
    cfg: &EventsConfig,
) -> Result<Vec<PathBuf>, Error> {
    let now_ms = events.first().and_then(Event::ts_millis).unwrap_or(0);
    each_month_file(events_dir, events, cfg, |path, lines| {
        let buf: String = lines.iter().map(|(_, line)| line.as_str()).collect();
        append_to(path, ToWrite::Lines(buf.as_bytes()), cfg, now_ms)
    })
}

/// Groups `events` by month file (see [`by_month_file`]) and gives each
/// file's path and events to `append`; returns the torn lines it saved aside.
fn each_month_file<'a>(
    events_dir: &Path,
    events: &'a [Event],
    cfg: &EventsConfig,
    mut append: impl FnMut(&Path, &[(&'a Event, String)]) -> Result<Option<PathBuf>, Error>,
) -> Result<Vec<PathBuf>, Error> {
    let by_file = by_month_file(events, cfg)?;
    crate::safe_fs::create_dir_all(swarm_of(events_dir), events_dir)?;
    let mut saved = Vec::new();
    for (name, lines) in by_file {
        saved.extend(append(&events_dir.join(name), &lines)?);
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
    dirs: &LogDirs,
    event: &Event,
    marker: &str,
    cfg: &EventsConfig,
) -> Result<(bool, Vec<PathBuf>), Error> {
    let (written, saved) = append_unrecorded(
        dirs,
        std::slice::from_ref(event),
        |_| marker.to_owned(),
        |_, _| true,
        cfg,
    )?;
    Ok((written == 1, saved))
}

/// The two folders of the log: where events are appended (the pending
/// one, in the git dir) and the tracked one, which only commits change
/// (`None` when the appending is into the tracked one: `git swarm commit`).
#[derive(Debug, Clone)]
pub struct LogDirs {
    pub pending: PathBuf,
    pub tracked: Option<PathBuf>,
}

/// Appends those of `events` that `recorded` does not find among the
/// lines of their month file, tracked or pending; the pending file is
/// checked under its lock: of several processes racing to record the same
/// things, one writes each. Only the lines holding an event's `needle` (a
/// string its record must contain) are parsed and given to `recorded` with
/// the event. Returns how many were written, and the torn lines saved
/// aside as [`append`] does.
pub fn append_unrecorded(
    dirs: &LogDirs,
    events: &[Event],
    needle: impl Fn(&Event) -> String,
    recorded: impl Fn(&Event, &Event) -> bool,
    cfg: &EventsConfig,
) -> Result<(usize, Vec<PathBuf>), Error> {
    let is_in = |text: &[u8], e: &Event| {
        let needle = needle(e);
        memchr::memmem::find_iter(text, needle.as_bytes()).any(|at| {
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
        })
    };
    // The tracked file changes only by a commit: read without a lock. One
    // that cannot be read (a link, over the bound) holds nothing here; the
    // index reports it.
    let mut tracked: std::collections::HashMap<String, Vec<u8>> = Default::default();
    let mut fresh = Vec::new();
    for e in events {
        let Some(name) = e.month_file() else {
            fresh.push(e.clone());
            continue;
        };
        let text = tracked.entry(name).or_insert_with_key(|name| {
            (dirs.tracked.as_ref())
                .and_then(|dir| crate::safe_fs::read(&dir.join(name), cfg.max_file_bytes).ok())
                .unwrap_or_default()
        });
        if !is_in(text, e) {
            fresh.push(e.clone());
        }
    }
    drop(tracked);
    let mut written = 0;
    let saved = each_month_file(&dirs.pending, &fresh, cfg, |path, lines| {
        let now_ms = lines[0].0.ts_millis().unwrap_or(0);
        let mut unrecorded = |text: &[u8]| -> Vec<u8> {
            let mut out = Vec::new();
            for (e, line) in lines {
                if !is_in(text, e) {
                    out.extend_from_slice(line.as_bytes());
                    written += 1;
                }
            }
            out
        };
        append_to(path, ToWrite::Unrecorded(&mut unrecorded), cfg, now_ms)
    })?;
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

/// Appends `what` to the event file `path` with one `write`, under its
/// exclusive lock (retried until `lock_timeout_ms`). A torn last line (a
/// dead writer's: no live one can be writing, we hold the lock) is first
/// saved under `local/torn/`, named by `now_ms`, and cut off.
fn append_to(
    path: &Path,
    what: ToWrite<'_, '_>,
    cfg: &EventsConfig,
    now_ms: i64,
) -> Result<Option<PathBuf>, Error> {
    let swarm = swarm_of(path.parent().unwrap_or(path));
    let mut file = open_current_locked(path, Duration::from_millis(cfg.lock_timeout_ms))?;
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

/// Opens (creating it) and locks the file now at `path`. `git swarm commit`
/// replaces a pending file under its lock, so a writer that waited on the
/// old one opens the new one and waits again: no line goes to a file that
/// is gone.
pub fn open_current_locked(path: &Path, wait: Duration) -> Result<File, Error> {
    use std::os::unix::fs::MetadataExt;
    let start = Instant::now();
    loop {
        let file = crate::safe_fs::open(
            path,
            OpenOptions::new().read(true).append(true).create(true),
        )
        .map_err(|e| Error::io(path, e))?;
        lock_with_retry(&file, path, wait.saturating_sub(start.elapsed()))?;
        let held = file.metadata().map_err(|e| Error::io(path, e))?;
        match std::fs::symlink_metadata(path) {
            Ok(now) if now.ino() == held.ino() && now.dev() == held.dev() => return Ok(file),
            _ if start.elapsed() >= wait => {
                return Err(Error::LockTimeout {
                    path: path.to_path_buf(),
                    waited: start.elapsed(),
                });
            }
            _ => {}
        }
    }
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
        match crate::safe_fs::create_new(swarm, &aside, &tail, &shown, &name) {
            Err(Error::AlreadyExists { .. }) if attempt < 1000 => attempt += 1,
            saved => break saved.map(|()| aside)?,
        }
    };
    file.set_len(keep).map_err(io)?;
    file.sync_all().map_err(io)?;
    Ok(Some(aside))
}

/// Opens the lock file at `path` (created if need be; a regular file only)
/// and takes its exclusive lock with [`lock_with_retry`]: held until the
/// returned file is dropped.
pub fn open_locked(path: &Path, wait: Duration) -> Result<File, Error> {
    let file = crate::safe_fs::open(
        path,
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false),
    )
    .map_err(|e| Error::io(path, e))?;
    lock_with_retry(&file, path, wait)?;
    Ok(file)
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
