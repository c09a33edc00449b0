//! Phase timings for people measuring the binary.
//!
//! The front end turns this on (the `git-swarm` binary does when
//! `GIT_SWARM_TRACE_PERF` is set) and prints the marks at exit; the library
//! only records them. Off, a mark costs one relaxed atomic load.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

static ON: AtomicBool = AtomicBool::new(false);
static MARKS: Mutex<Vec<(Instant, &'static str)>> = Mutex::new(Vec::new());

/// Starts recording marks, from now.
pub fn enable() {
    ON.store(true, Ordering::Relaxed);
    mark("start");
}

/// Records that the phase `what` has just ended.
pub fn mark(what: &'static str) {
    if ON.load(Ordering::Relaxed)
        && let Ok(mut marks) = MARKS.lock()
    {
        marks.push((Instant::now(), what));
    }
}

/// The marks so far as lines: milliseconds since the previous mark, since
/// the start, and the phase.
pub fn report() -> Vec<String> {
    let Ok(marks) = MARKS.lock() else {
        return Vec::new();
    };
    let Some(&(start, _)) = marks.first() else {
        return Vec::new();
    };
    let mut prev = start;
    let mut out = Vec::new();
    for &(at, what) in marks.iter().skip(1) {
        out.push(format!(
            "trace: {:>8.3} ms {:>8.3} ms  {what}",
            (at - prev).as_secs_f64() * 1e3,
            (at - start).as_secs_f64() * 1e3
        ));
        prev = at;
    }
    out
}
