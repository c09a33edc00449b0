//! Reading the log back: every line checked, problems reported with their
//! place, the good lines kept.

use std::io;
use std::path::{Path, PathBuf};

use super::{
    Event, format_ts, is_month_file, is_time_out_of_range, is_valid_kind, parse_ts_millis,
};
use crate::config::EventsConfig;
use crate::error::Error;
use crate::problem::{Problem, Problems, line_col};

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
    /// Bad lines, kept up to [`Problems::CAP`] and counted past it.
    pub problems: Problems,
}

/// Reads and checks every line of an event file. `rel` is the path shown
/// in problems. A symlink, FIFO or device in its place, or a file over
/// `events.max_file_bytes`, is not read: it is one problem, and no events.
pub fn read_event_file(path: &Path, rel: &str, cfg: &EventsConfig) -> Result<EventFile, Error> {
    match crate::safe_fs::read(path, cfg.max_file_bytes) {
        Ok(bytes) => Ok(parse_event_bytes(&bytes, rel, cfg.max_line_bytes)),
        Err(e) => match skipped_problem(rel, &e) {
            Some(problem) => {
                let mut file = EventFile::default();
                file.problems.push_always(problem);
                Ok(file)
            }
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
const TOO_LARGE: &str = "file_too_large";

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
        let valid = std::str::from_utf8(&raw[..e.valid_up_to()]).unwrap_or_default();
        (
            line_col(valid, valid.len()).1,
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
    check_envelope(&event.id, &event.ts, &event.kind)
        .map_err(|(message, hint)| (1, message, hint))?;
    Ok(event)
}

/// Checks an event's id, time and kind, and returns the time in
/// milliseconds. The fold checks lines with it too, so that it folds
/// exactly the lines the readers accept.
pub fn check_envelope(id: &str, ts: &str, kind: &str) -> Result<i64, (String, &'static str)> {
    if id.is_empty() || id.len() > 128 {
        return Err((
            "event id is empty or longer than 128 bytes".into(),
            "ids are ULIDs written by git-swarm",
        ));
    }
    let Some(millis) = parse_ts_millis(ts) else {
        return Err(if is_time_out_of_range(ts) {
            (
                format!(
                    "event time `{ts}` is later than {}, the last time the event log holds",
                    format_ts(jiff::Timestamp::MAX)
                ),
                "an event records when something happened: write the time it did, like 2026-11-22T10:00:00.000Z",
            )
        } else {
            (
                format!("event time `{ts}` is not an RFC 3339 time"),
                "write times like 2026-11-22T10:00:00.000Z",
            )
        });
    };
    if !is_valid_kind(kind) {
        return Err((
            format!("event kind `{}` is not a valid kind", kind.escape_debug()),
            "kinds are 1–64 lowercase letters, digits and `_`, starting with a letter",
        ));
    }
    Ok(millis)
}

fn parse_event_bytes(bytes: &[u8], rel: &str, max_line_bytes: u64) -> EventFile {
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
            // A torn line, or one still being written.
            out.problems.push_always(
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
                Err((col, message, hint)) => out.problems.push_error_with(rel, || {
                    Problem::error(rel, "bad_event", message)
                        .at(line_no, col)
                        .with_hint(hint)
                }),
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
    use crate::event::Body;

    #[test]
    fn reader_reports_bad_lines_and_keeps_good_ones() {
        let good = Event::new(
            Body::Added {
                path: String::new(),
            },
            "2026-11-22T10:00:00Z".parse().expect("valid test input"),
        )
        .to_line();
        let bytes =
            format!("{good}not json\n{{\"id\":\"x\",\"ts\":\"nope\",\"kind\":\"k\"}}\n{good}");
        let mut bytes = bytes.into_bytes();
        bytes.extend_from_slice(b"{\"id\":");
        let f = parse_event_bytes(&bytes, "e.jsonl", 65536);
        assert_eq!(f.events.len(), 2);
        let lines: Vec<_> = (f.problems.iter())
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
