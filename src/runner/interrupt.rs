//! Signals that would end git-swarm while a tool runs.
//!
//! The tool runs in a process group of its own (so that the whole group can
//! be killed), which also means that a terminal's Ctrl-C reaches git-swarm
//! and not the tool; and a SIGINT, SIGTERM, SIGHUP or SIGQUIT that ended
//! git-swarm by its default action would leave the group running, orphaned
//! and without a timeout. So while a tool runs, these signals are only
//! recorded — signal-hook's handlers store into an atomic, which is
//! async-signal-safe — and the runner, which looks every tick, kills and
//! reaps the group; when the last running tool is gone, git-swarm ends by
//! the same signal's default action, as it would have without the runner.
//!
//! The handlers stay installed once the first tool has run (signal-hook
//! cannot give the previous disposition back), and while no tool runs
//! they do what the default action does, at once. A signal that was ignored
//! when they would have been installed (`nohup` ignores SIGHUP) is left
//! ignored.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
use signal_hook::{flag, low_level};

const SIGNALS: [libc::c_int; 4] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT];

struct Handlers {
    /// The last signal received while a tool ran; 0 for none.
    pending: Arc<AtomicUsize>,
    /// No tool runs: a signal takes its default action at once.
    idle: Arc<AtomicBool>,
    /// How many tools run now.
    running: Mutex<usize>,
}

/// A signal whose handler could not be installed: no tool runs without it.
#[derive(Debug, Clone, thiserror::Error)]
#[error("cannot handle signal {signal}: {source}")]
struct CannotHandle {
    signal: &'static str,
    #[source]
    source: Arc<io::Error>,
}

static HANDLERS: OnceLock<Result<Handlers, CannotHandle>> = OnceLock::new();

fn install() -> Result<Handlers, CannotHandle> {
    let handlers = Handlers {
        pending: Arc::new(AtomicUsize::new(0)),
        idle: Arc::new(AtomicBool::new(true)),
        running: Mutex::new(0),
    };
    for signal in SIGNALS {
        if ignored(signal) {
            continue;
        }
        // The default action first: should the second registration fail, the
        // signal still ends git-swarm rather than being swallowed.
        let registered = flag::register_conditional_default(signal, Arc::clone(&handlers.idle))
            .and_then(|_| {
                flag::register_usize(signal, Arc::clone(&handlers.pending), signal as usize)
            });
        if let Err(e) = registered {
            return Err(CannotHandle {
                signal: low_level::signal_name(signal).unwrap_or("?"),
                source: Arc::new(e),
            });
        }
    }
    Ok(handlers)
}

/// Is `signal` ignored (`SIG_IGN`) in this process?
fn ignored(signal: libc::c_int) -> bool {
    // SAFETY: sigaction with a null new action only reads the current one
    // into `old`, plain data for which all zeroes is a valid value.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::sigaction(signal, std::ptr::null(), &mut old) };
    r == 0 && old.sa_sigaction == libc::SIG_IGN
}

/// A tool is running: the signals are recorded rather than acted on until
/// this is dropped. Drop it after the tool's group was killed and reaped.
pub struct Watch {
    handlers: &'static Handlers,
}

impl Watch {
    pub fn start() -> io::Result<Watch> {
        let handlers = HANDLERS
            .get_or_init(install)
            .as_ref()
            .map_err(|e| io::Error::other(e.clone()))?;
        let mut running = handlers
            .running
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if *running == 0 {
            handlers.idle.store(false, Ordering::SeqCst);
        }
        *running += 1;
        Ok(Watch { handlers })
    }

    /// The signal received since a tool started, if any.
    pub fn pending(&self) -> Option<libc::c_int> {
        match self.handlers.pending.load(Ordering::SeqCst) {
            0 => None,
            signal => libc::c_int::try_from(signal).ok(),
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let mut running = self
            .handlers
            .running
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        *running -= 1;
        if *running > 0 {
            return;
        }
        // From here a signal takes its default action at once; one that
        // came while the tool ran takes it now.
        self.handlers.idle.store(true, Ordering::SeqCst);
        if let Some(signal) = self.pending() {
            drop(running);
            let _ = low_level::emulate_default_handler(signal);
        }
    }
}
