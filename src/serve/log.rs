//! What the page needs from the event log, read in one pass that never
//! holds the log: the latest violations, violations per day of the plot's
//! window, and the events of the open handoffs.
//!
//! The first version read the whole log into memory for every request
//! (12 requests at once on a 117 MB log: 7.8 GB). Here each file is read a
//! line at a time (a line bounded by `events.max_line_bytes`), every line
//! is read as the fold reads it ([`EventHead::parse`]), and only the lines
//! kept are parsed whole. What is kept is bounded by [`super::MAX_RECENT`]
//! and by what the page shows (the window's violations are counted, their
//! ids kept to count each once). [`Cache`] keeps one digest for as long as
//! the index's fingerprint of `.swarm/` and the day stay the same, so
//! requests share it and one request at a time reads the log.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::io::{BufRead, BufReader, Read};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::event::Event;
use crate::fold::{EventHead, Signal};
use crate::{Error, Result, Store};

/// The log as the page reads it.
#[derive(Debug, Default)]
pub struct Digest {
    /// The latest violation events, at most [`super::MAX_RECENT`], keyed by
    /// (time, id key): the last is the newest.
    pub(super) recent: BTreeMap<(i64, u128), Event>,
    /// Per directive the page knows, violation events per day of the
    /// window (index 0: the first day), each event once.
    pub(super) per_day: BTreeMap<String, Vec<u32>>,
    /// The events of the handoffs (their kinds), de-duplicated, in (time, id) order.
    pub(super) handoff_events: Vec<Event>,
    /// The first day of the window, in days since the epoch.
    pub(super) first_day: i64,
}

/// Reads the digest of `store`'s log for the window of
/// [`super::SERIES_DAYS`] days ending on `today` (days since the epoch),
/// counting only violations of `known` directives.
pub fn digest(store: &Store, today: i64, known: &BTreeSet<&str>) -> Result<Digest> {
    let first_day = today - (super::SERIES_DAYS as i64 - 1);
    let mut d = Digest {
        first_day,
        ..Digest::default()
    };
    let mut counted: HashSet<u128> = HashSet::new();
    let mut handoff: BTreeMap<(i64, u128), Event> = BTreeMap::new();
    let max_line = store.config.events.max_line_bytes;
    let max_file = store.config.events.max_file_bytes;
    for (path, _) in store.event_files()? {
        // A link, FIFO or device, or a file over the bound, is skipped: the
        // index reports it (its problems are the page's).
        let Ok(file) = crate::safe_fs::open_read(&path) else {
            continue;
        };
        if file.metadata().map_err(|e| Error::io(&path, e))?.len() > max_file {
            continue;
        }
        let mut reader = BufReader::new(file.take(max_file));
        let mut line = Vec::new();
        loop {
            line.clear();
            let n = (&mut reader)
                .take(max_line.saturating_add(1))
                .read_until(b'\n', &mut line)
                .map_err(|e| Error::io(&path, e))?;
            if n == 0 {
                break;
            }
            if line.last() != Some(&b'\n') {
                // Over the line limit (skipped to its newline), or torn.
                skip_line(&mut reader).map_err(|e| Error::io(&path, e))?;
                continue;
            }
            line.pop();
            let Some(head) = EventHead::parse(&line) else {
                continue;
            };
            d.take(&head, &line, known, &mut counted, &mut handoff);
        }
    }
    d.handoff_events = handoff.into_values().collect();
    Ok(d)
}

/// Reads up to the end of the current line, keeping nothing.
fn skip_line(reader: &mut impl BufRead) -> std::io::Result<()> {
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(());
        }
        match memchr::memchr(b'\n', buf) {
            Some(i) => {
                reader.consume(i + 1);
                return Ok(());
            }
            None => {
                let n = buf.len();
                reader.consume(n);
            }
        }
    }
}

impl Digest {
    fn take(
        &mut self,
        head: &EventHead,
        line: &[u8],
        known: &BTreeSet<&str>,
        counted: &mut HashSet<u128>,
        handoff: &mut BTreeMap<(i64, u128), Event>,
    ) {
        let at = (head.ts, head.key);
        if head.known.is_some_and(crate::handoff::is_handoff_kind) {
            if let Some(e) = whole(line) {
                handoff.entry(at).or_insert(e);
            }
            return;
        }
        if !matches!(head.signal, Signal::Violation { .. }) {
            return;
        }
        let day = head.ts.div_euclid(super::DAY_MS);
        let slot = day - self.first_day;
        if (0..super::SERIES_DAYS as i64).contains(&slot) && counted.insert(head.key) {
            for id in super::violated(head.directives.clone(), known) {
                let row = (self.per_day)
                    .entry(id)
                    .or_insert_with(|| vec![0; super::SERIES_DAYS]);
                row[slot as usize] += 1;
            }
        }
        let full = self.recent.len() >= super::MAX_RECENT;
        if full && self.recent.first_key_value().is_some_and(|(k, _)| at <= *k) {
            return;
        }
        if self.recent.contains_key(&at) {
            return;
        }
        if let Some(e) = whole(line) {
            self.recent.insert(at, e);
            if self.recent.len() > super::MAX_RECENT {
                self.recent.pop_first();
            }
        }
    }
}

/// The event a line holds, parsed whole.
fn whole(line: &[u8]) -> Option<Event> {
    crate::event::parse_event_line(line, u64::MAX).ok()
}

/// One [`Digest`] shared by the requests of a server, read again when the
/// index's fingerprint of `.swarm/` or the day changes. Requests load one
/// at a time ([`Cache::lock`]): the index refreshed once, the log read once,
/// whatever the number of requests waiting.
#[derive(Debug, Default)]
pub struct Cache {
    kept: Mutex<Kept>,
}

/// The digest kept, with the fingerprint and day it was read for.
#[derive(Debug, Default)]
pub struct Kept(Option<(u64, i64, Arc<Digest>)>);

impl Cache {
    pub fn new() -> Cache {
        Cache::default()
    }

    /// Waits for the requests loading before this one.
    pub fn lock(&self) -> MutexGuard<'_, Kept> {
        // A request that panicked while holding the lock left nothing half
        // made: the value is replaced whole or not at all.
        self.kept.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Kept {
    /// The digest for `fingerprint` (the index's, just refreshed) and
    /// `today`, read again if the one kept is for another.
    pub fn get(
        &mut self,
        store: &Store,
        fingerprint: u64,
        today: i64,
        known: &BTreeSet<&str>,
    ) -> Result<Arc<Digest>> {
        if let Some((f, day, d)) = self.0.as_ref()
            && *f == fingerprint
            && *day == today
        {
            return Ok(Arc::clone(d));
        }
        // The old digest goes before the new one is read.
        self.0 = None;
        let d = Arc::new(digest(store, today, known)?);
        self.0 = Some((fingerprint, today, Arc::clone(&d)));
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_line_is_skipped_to_its_newline() {
        let text = format!("{}\nnext\n", "x".repeat(100_000));
        let mut r = BufReader::with_capacity(16, text.as_bytes());
        let mut line = Vec::new();
        let n = (&mut r)
            .take(10)
            .read_until(b'\n', &mut line)
            .expect("read");
        assert_eq!(n, 10);
        skip_line(&mut r).expect("skip");
        line.clear();
        r.read_until(b'\n', &mut line).expect("read");
        assert_eq!(line, b"next\n");
    }
}
