//! `git swarm index watch`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::Error;
use git_swarm::index::watch;

use crate::cli::{Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Start the watcher in the background, and return once it answers
    /// (what it says goes to watch.log in the git dir's swarm/).
    #[arg(long, conflicts_with = "stop")]
    detach: bool,
    /// Stop the running watcher.
    #[arg(long)]
    stop: bool,
}

/// Runs the watcher here, starts it in the background, or stops it.
pub fn run(Args { detach, stop }: Args, ui: &mut Ui) -> Outcome {
    let store = &crate::cli::store(ui)?;
    let socket = store.rel(&watch::socket_path(store));
    if stop {
        watch::request(store, "stop").map_err(|e| {
            Error::usage(
                format!("no watcher answers at {socket}: {e}"),
                "`git swarm index status` shows whether one runs",
            )
        })?;
        if !watch::wait_stopped(store, std::time::Duration::from_secs(10)) {
            return Err(failed(format!(
                "the watcher at {socket} was asked to stop, but still runs after 10 s"
            )));
        }
        writeln!(ui.out, "Stopped the watcher at {socket}.")?;
        return Ok(ExitCode::SUCCESS);
    }
    if let watch::State::Vouching { pid, .. } | watch::State::NotVouching { pid, .. } =
        watch::state(store)
    {
        return Err(Error::usage(
            format!("a watcher already runs for this repository (pid {pid})"),
            "`git swarm index watch --stop` ends it",
        )
        .into());
    }
    if detach {
        return detach_watcher(store, ui);
    }
    serve(store, ui)
}

/// A watcher that would not start or stop, with no more to say (exit 2).
fn failed(message: String) -> crate::cli::CliError {
    Error::Usage {
        message,
        hint: None,
    }
    .into()
}

#[cfg(target_os = "linux")]
fn serve(store: &git_swarm::Store, ui: &mut Ui) -> Outcome {
    let swarm = store.rel(&store.swarm_dir);
    let stop = watch::serve(store, &mut |pid| {
        eprintln!(
            "Watching {swarm}/ (pid {pid}): commands skip stat'ing the directive files while this runs. \
             Ctrl-C or `git swarm index watch --stop` ends it."
        );
    })?;
    let why = match stop.why {
        watch::Stop::Asked => "asked to stop",
        watch::Stop::SwarmGone => ".swarm/ was removed or renamed",
        watch::Stop::SocketGone => "its socket was removed or replaced",
    };
    writeln!(ui.out, "Watcher stopped: {why}.")?;
    // Said before the lock goes: `--stop` returns once it is free.
    ui.out.flush()?;
    drop(stop);
    Ok(ExitCode::SUCCESS)
}

#[cfg(not(target_os = "linux"))]
fn serve(_store: &git_swarm::Store, _ui: &mut Ui) -> Outcome {
    Err(unsupported().into())
}

#[cfg(not(target_os = "linux"))]
fn unsupported() -> git_swarm::Error {
    Error::usage(
        "the watcher runs on Linux only (it uses inotify)",
        "commands work without it: they stat the directive files",
    )
}

/// Starts `git swarm index watch` in the background (its own process
/// group, so that Ctrl-C in the terminal does not reach it) and waits until
/// it answers.
#[cfg(target_os = "linux")]
fn detach_watcher(store: &git_swarm::Store, ui: &mut Ui) -> Outcome {
    use std::os::unix::process::CommandExt;
    let log_path = watch::log_path(store);
    let log = (|| {
        std::fs::create_dir_all(log_path.parent().unwrap_or(std::path::Path::new(".")))?;
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
    })()
    .map_err(|e| git_swarm::Error::io(&log_path, e))?;
    let exe = std::env::current_exe()
        .map_err(|e| git_swarm::Error::io(std::path::Path::new("git-swarm"), e))?;
    let mut child = std::process::Command::new(&exe)
        .args(["index", "watch"])
        .stdin(std::process::Stdio::null())
        .stdout(
            log.try_clone()
                .map_err(|e| git_swarm::Error::io(&log_path, e))?,
        )
        .stderr(log)
        .process_group(0)
        .spawn()
        .map_err(|e| git_swarm::Error::io(&exe, e))?;
    let log_rel = store.rel(&log_path);
    let started = std::time::Instant::now();
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(failed(format!(
                "the watcher stopped as it started ({status}); it says why in {log_rel}"
            )));
        }
        let state = watch::state(store);
        if let watch::State::Vouching { pid, .. } | watch::State::NotVouching { pid, .. } = state {
            writeln!(
                ui.out,
                "Started the watcher (pid {pid}); it logs to {log_rel}."
            )?;
            if let watch::State::NotVouching { reason, .. } = state {
                ui.warning(
                    &format!("the watcher does not vouch for the directive files: {reason}"),
                    Some("commands stat them until it can"),
                );
            }
            return Ok(ExitCode::SUCCESS);
        }
        if started.elapsed() > std::time::Duration::from_secs(10) {
            let _ = child.kill();
            return Err(failed(format!(
                "the watcher did not answer within 10 s; see {log_rel}"
            )));
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[cfg(not(target_os = "linux"))]
fn detach_watcher(_store: &git_swarm::Store, _ui: &mut Ui) -> Outcome {
    Err(unsupported().into())
}
