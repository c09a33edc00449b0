//! The curator's daily quota: one line per call in
//! `.git/swarm/local/curator-calls.jsonl`, written before the call, so that a
//! call cut short still counts. A day is a UTC day.
//!
//! The file is this clone's alone (under `local/`, never tracked), read and
//! written while `harden`'s lock is held. A line that cannot be read is
//! reported and counted as a call of today: a damaged ledger must never be
//! a way past the quota.

use std::io::Write;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::problem::Problem;
use crate::store::Store;

pub const LEDGER: &str = "curator-calls.jsonl";

/// Largest ledger read, in bytes: a day of calls is a few KB, and older days
/// are dropped when the file is next written.
const LEDGER_MAX: u64 = 1024 * 1024;

/// One call.
#[derive(Debug, Serialize, Deserialize)]
struct Call {
    /// RFC 3339, UTC.
    ts: String,
    entry: String,
}

/// The calls made today and the room left.
#[derive(Debug)]
pub struct Ledger {
    path: PathBuf,
    pub limit: u32,
    pub used: u32,
}

impl Ledger {
    /// Reads the ledger, dropping the lines of earlier days from the file;
    /// returns it with a problem for each line that could not be read.
    pub fn open(store: &Store, limit: u32) -> Result<(Ledger, Vec<Problem>)> {
        let local = store.local_dir();
        let path = local.join(LEDGER);
        let rel = store.rel(&path);
        let today = day(store.clock.now());
        // A run at the turn of a day counts against the day it started.
        let mut ledger = Ledger {
            path,
            limit,
            used: 0,
        };
        let bytes = match crate::safe_fs::read(&ledger.path, LEDGER_MAX) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((ledger, Vec::new())),
            Err(e) if crate::safe_fs::over_limit(&e).is_some() => {
                // Unreadable as a whole: no call can be shown to be under the quota.
                ledger.used = limit;
                let problem = Problem::error(
                    &rel,
                    "unreadable",
                    format!("{e}: the quota counts as used up"),
                )
                .at(1, 1)
                .with_hint(format!(
                    "the ledger holds a line per curator call; remove {rel} to start counting again"
                ));
                return Ok((ledger, vec![problem]));
            }
            Err(e) => return Err(Error::io(&ledger.path, e)),
        };
        let mut problems = Vec::new();
        let mut kept = Vec::with_capacity(bytes.len());
        let mut dropped = false;
        for (i, line) in bytes.split_inclusive(|&b| b == b'\n').enumerate() {
            if line.trim_ascii().is_empty() {
                dropped = true;
                continue;
            }
            let call = serde_json::from_slice::<Call>(line.trim_ascii())
                .map_err(|e| e.to_string())
                .and_then(|c| c.ts.parse::<jiff::Timestamp>().map_err(|e| e.to_string()));
            match call {
                Ok(ts) if day(ts) != today => dropped = true,
                Ok(_) => {
                    ledger.used += 1;
                    kept.extend_from_slice(line);
                }
                Err(e) => {
                    ledger.used += 1;
                    kept.extend_from_slice(line);
                    problems.push(
                        Problem::error(
                            &rel,
                            "malformed_ledger_line",
                            format!("not a curator call: {e}"),
                        )
                        .at_line(u32::try_from(i + 1).unwrap_or(u32::MAX))
                        .with_hint(
                            "it counts as a call of today; remove the line if it is not one",
                        ),
                    );
                }
            }
        }
        if dropped {
            if !kept.is_empty() && !kept.ends_with(b"\n") {
                kept.push(b'\n');
            }
            crate::safe_fs::replace(&ledger.path, &kept)?;
        }
        Ok((ledger, problems))
    }

    /// Calls left today.
    pub fn remaining(&self) -> u32 {
        self.limit.saturating_sub(self.used)
    }

    /// Counts a call about to be made for `entry`, in one write; `false`
    /// (and nothing written) when today's quota is used up.
    pub fn reserve(&mut self, store: &Store, entry: &str) -> Result<bool> {
        if self.remaining() == 0 {
            return Ok(false);
        }
        let now = store.clock.now();
        let call = Call {
            ts: now.to_string(),
            entry: entry.to_owned(),
        };
        let mut line = serde_json::to_vec(&call).expect("a call serialises");
        line.push(b'\n');
        store.create_local_dir()?;
        let io = |e| Error::io(&self.path, e);
        let mut file = crate::safe_fs::open(
            &self.path,
            std::fs::OpenOptions::new().append(true).create(true),
        )
        .map_err(io)?;
        file.write_all(&line).map_err(io)?;
        self.used += 1;
        Ok(true)
    }
}

fn day(t: jiff::Timestamp) -> jiff::civil::Date {
    t.to_zoned(jiff::tz::TimeZone::UTC).date()
}
