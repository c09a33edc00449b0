//! Following the event log as other processes append to it: the lines
//! added to each month file since the last look.
//!
//! A small tail of its own for the page's live stream (`log --follow` has
//! another, written at the same time: the two are meant to become one).
//! It polls: the log is appended under a lock with one write of whole
//! lines, so a poll sees whole lines plus at most a line being written,
//! which waits for the next poll. Files are opened as every reader of
//! `.swarm/` opens them (no link followed, regular files only) and each
//! poll reads a bounded amount. A file that shrank was replaced (a
//! checkout, a reset) and is read again from its start; the caller drops
//! the events it has seen by id.

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;

use crate::config::EventsConfig;
use crate::event::{Event, event_files, parse_event_line};
use crate::problem::Problem;

/// At most this many bytes are read from one file in one poll; the rest
/// comes with the next.
const MAX_READ: u64 = 4 * 1024 * 1024;

/// Where the tail stands in each month file.
#[derive(Debug)]
pub struct Tail {
    dir: PathBuf,
    /// Relative path of the folder, for problems (`.swarm/events`).
    rel: String,
    cfg: EventsConfig,
    /// By file name: the offset read up to and the lines before it.
    at: BTreeMap<String, (u64, u32)>,
}

/// What one poll found.
#[derive(Debug, Default)]
pub struct Polled {
    pub events: Vec<Event>,
    /// Malformed lines (skipped) and files that could not be read.
    pub problems: Vec<Problem>,
}

impl Tail {
    /// A tail that starts at the current end of every month file in `dir`
    /// (`rel` is how problems name it): only lines appended after this are
    /// polled.
    pub fn at_end(dir: PathBuf, rel: &str, cfg: EventsConfig) -> Tail {
        let mut tail = Tail {
            dir,
            rel: rel.to_owned(),
            cfg,
            at: BTreeMap::new(),
        };
        for (name, path) in tail.files() {
            if let Ok(bytes) = crate::safe_fs::read(&path, tail.cfg.max_file_bytes) {
                let lines = memchr::memchr_iter(b'\n', &bytes).count() as u32;
                tail.at.insert(name, (bytes.len() as u64, lines));
            }
        }
        tail
    }

    fn files(&self) -> Vec<(String, PathBuf)> {
        event_files(&self.dir)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|p| Some((p.file_name()?.to_str()?.to_owned(), p)))
            .collect()
    }

    /// The whole lines appended since the last poll, oldest file first.
    pub fn poll(&mut self) -> Polled {
        let mut out = Polled::default();
        for (name, path) in self.files() {
            let rel = format!("{}/{name}", self.rel);
            let (mut offset, mut line) = self.at.get(&name).copied().unwrap_or((0, 0));
            let file = match crate::safe_fs::open_read(&path) {
                Ok(f) => f,
                Err(e) => {
                    if let Some(p) = crate::event::skipped_problem(&rel, &e) {
                        out.problems.push(p);
                    }
                    continue;
                }
            };
            let len = file.metadata().map_or(0, |m| m.len());
            if len < offset {
                (offset, line) = (0, 0);
            }
            if len == offset {
                self.at.insert(name, (offset, line));
                continue;
            }
            let mut buf = Vec::new();
            let read = (&file).seek(SeekFrom::Start(offset)).and_then(|_| {
                (&file)
                    .take(MAX_READ.min(len - offset))
                    .read_to_end(&mut buf)
            });
            if read.is_err() {
                continue;
            }
            let whole = match memchr::memrchr(b'\n', &buf) {
                Some(end) => end + 1,
                // A line longer than any event may be is never waited for.
                None if buf.len() as u64 > self.cfg.max_line_bytes => buf.len(),
                None => 0,
            };
            for raw in buf[..whole].split_inclusive(|b| *b == b'\n') {
                line += 1;
                let raw = raw.strip_suffix(b"\n").unwrap_or(raw);
                if raw.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                match parse_event_line(raw, self.cfg.max_line_bytes) {
                    Ok(e) => out.events.push(e),
                    Err((col, message, hint)) => out.problems.push(
                        Problem::error(&rel, "malformed_event", message)
                            .at(line, col)
                            .with_hint(hint),
                    ),
                }
            }
            self.at.insert(name, (offset + whole as u64, line));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn line(id: &str) -> String {
        format!("{{\"id\":\"{id}\",\"ts\":\"2026-11-22T10:00:00.000Z\",\"kind\":\"note\"}}\n")
    }

    #[test]
    fn polls_whole_appended_lines_and_reports_bad_ones() {
        let dir = tempfile::tempdir().expect("tmp");
        let file = dir.path().join("2026-11.jsonl");
        std::fs::write(&file, line("01A")).expect("write");
        let mut tail = Tail::at_end(
            dir.path().to_owned(),
            ".swarm/events",
            EventsConfig::default(),
        );
        assert!(
            tail.poll().events.is_empty(),
            "what was there is not replayed"
        );

        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .expect("open");
        write!(f, "{}not json\n{{\"id\":\"01C\"", line("01B")).expect("append");
        let polled = tail.poll();
        let ids: Vec<&str> = polled.events.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["01B"]);
        assert_eq!(polled.problems.len(), 1);
        assert_eq!(polled.problems[0].line, Some(3));

        f.write_all(b",\"ts\":\"2026-11-22T10:00:01.000Z\",\"kind\":\"note\"}\n")
            .expect("finish");
        let ids: Vec<String> = tail.poll().events.into_iter().map(|e| e.id).collect();
        assert_eq!(ids, ["01C"], "a half-written line waits for its end");

        std::fs::write(dir.path().join("2026-12.jsonl"), line("01D")).expect("new month");
        let ids: Vec<String> = tail.poll().events.into_iter().map(|e| e.id).collect();
        assert_eq!(ids, ["01D"], "a new month file is read from its start");

        std::fs::write(&file, line("01E")).expect("replace");
        let ids: Vec<String> = tail.poll().events.into_iter().map(|e| e.id).collect();
        assert_eq!(ids, ["01E"], "a file that shrank is read again");
    }

    #[cfg(unix)]
    #[test]
    fn a_link_is_reported_not_followed() {
        let dir = tempfile::tempdir().expect("tmp");
        let outside = dir.path().join("outside");
        std::fs::write(&outside, line("01X")).expect("write");
        let events = dir.path().join("events");
        std::fs::create_dir(&events).expect("mkdir");
        let mut tail = Tail::at_end(events.clone(), ".swarm/events", EventsConfig::default());
        std::os::unix::fs::symlink(&outside, events.join("2026-11.jsonl")).expect("link");
        let polled = tail.poll();
        assert!(polled.events.is_empty());
        assert_eq!(polled.problems.len(), 1);
    }
}
