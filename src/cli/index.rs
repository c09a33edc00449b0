//! `git swarm index status|refresh|rebuild|watch`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::index::{Health, Refresh, index_path, watch};

use super::{Format, Outcome, Ui};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Say whether the index matches .swarm/, and what it holds.
    Status {
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// Bring the index up to date, reading only what changed.
    ///
    /// The hooks run this after merges and checkouts.
    Refresh {
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// Rebuild the index from .swarm/ from scratch.
    Rebuild {
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// Watch .swarm/ so that commands need not stat every directive file (Linux).
    ///
    /// To know that the index is up to date, a command stats every file in
    /// .swarm/directives/ and .swarm/quarantine/: with thousands of
    /// directives, most of what `inject` does. While a watcher runs (it holds
    /// inotify watches on those folders and answers on a socket in the git
    /// dir), a command asks it whether anything there changed since its last
    /// look and, if nothing did, skips the stat. Without a watcher, or when it
    /// does not answer, commands stat the files as before: the watcher only
    /// saves time.
    ///
    /// It runs in the foreground until stopped (Ctrl-C, or --stop from
    /// elsewhere), or until .swarm/ is removed. It does not vouch while one
    /// of those folders, or an entry in them, is a symbolic link (what it
    /// points to can be replaced where no watch sees it). It does not see
    /// writes made through a memory map before the file is closed, or made
    /// by another machine on a network file system: do not run it there.
    /// Each directive file takes an inotify watch
    /// (/proc/sys/fs/inotify/max_user_watches).
    Watch {
        /// Start the watcher in the background, and return once it answers
        /// (what it says goes to watch.log in the git dir's swarm/).
        #[arg(long, conflicts_with = "stop")]
        detach: bool,
        /// Stop the running watcher.
        #[arg(long)]
        stop: bool,
    },
}

pub fn run(cmd: Command, ui: &mut Ui) -> Outcome {
    let store = super::store(ui)?;
    let path = store.rel(&index_path(&store));
    match cmd {
        Command::Watch { detach, stop } => watch(&store, detach, stop, ui),
        Command::Status { format } => {
            let (index, scan, health) = git_swarm::index::status(&store)?;
            let fingerprint = format!("{:016x}", scan.fingerprint());
            let watcher = watch::state(&store);
            if health == Health::Folder {
                ui.warning(
                    &format!("{path} is a folder, not the index: commands work without an index, more slowly"),
                    Some("remove it; the index is derived from .swarm/ and the next command builds it"),
                );
            }
            if format == Format::Json {
                ui.json(&serde_json::json!({
                    "path": path,
                    "exists": index.is_some(),
                    "state": health.as_str(),
                    "fresh": health == Health::Fresh,
                    "fingerprint": fingerprint,
                    "directives": index.as_ref().map(|i| i.directive_count()),
                    "quarantined": index.as_ref().map(|i| i.quarantine_count()),
                    "event_files": index.as_ref().map(|i| i.event_files.len()),
                    "events": index.as_ref().map(|i| i.fold.events),
                    "duplicates": index.as_ref().map(|i| i.fold.duplicates),
                    "watcher": match &watcher {
                        watch::State::None => serde_json::json!(null),
                        watch::State::Vouching { pid, generation } => serde_json::json!({"pid": pid, "vouching": true, "generation": generation}),
                        watch::State::NotVouching { pid, reason } => serde_json::json!({"pid": pid, "vouching": false, "reason": reason}),
                    },
                }))?;
                return Ok(ExitCode::SUCCESS);
            }
            writeln!(ui.out, "index:       {path}")?;
            writeln!(ui.out, "fingerprint: {fingerprint} (of .swarm/ now)")?;
            let state = match health {
                Health::Fresh => "fresh",
                Health::Stale => "stale (the next command refreshes it)",
                Health::Missing => "missing (the next command builds it)",
                Health::Folder => "a folder is in its place, so no command can write the index",
                Health::Unreadable => {
                    "unreadable: damaged, not a regular file, or of another version (the next command replaces it)"
                }
            };
            writeln!(ui.out, "state:       {state}")?;
            match &index {
                None => {}
                Some(i) => {
                    writeln!(
                        ui.out,
                        "directives:  {} ({} quarantined)",
                        i.directive_count(),
                        i.quarantine_count()
                    )?;
                    writeln!(
                        ui.out,
                        "events:      {} distinct in {} file(s), {} duplicate line(s)",
                        i.fold.events,
                        i.event_files.len(),
                        i.fold.duplicates
                    )?;
                }
            }
            let watcher = match watcher {
                watch::State::None => "none (commands stat the directive files)".to_owned(),
                watch::State::Vouching { pid, generation } => format!(
                    "pid {pid}, vouching for the directive files ({generation} change(s) seen)"
                ),
                watch::State::NotVouching { pid, reason } => {
                    format!("pid {pid}, not vouching: {reason}")
                }
            };
            writeln!(ui.out, "watcher:     {watcher}")?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Refresh { format } => {
            let mut loaded = git_swarm::index::refresh(&store)?;
            // Other commands go on without the cache; asked to refresh it, say it failed.
            if let Some(e) = loaded.write_error.take() {
                return Err(e.into());
            }
            let ms = loaded.elapsed.as_secs_f64() * 1000.0;
            let (what, detail) = match &loaded.refresh {
                Refresh::Fresh => ("fresh", "already up to date".to_owned()),
                Refresh::Updated { directives, events } => (
                    "updated",
                    format!("re-read {directives} directive file(s) and {events} event file(s)"),
                ),
                Refresh::Rebuilt { reason } => ("rebuilt", format!("rebuilt: {reason}")),
            };
            if format == Format::Json {
                ui.json(&serde_json::json!({ "path": path, "refresh": what, "detail": detail, "millis": ms, "events": loaded.index.fold.events }))?;
            } else {
                writeln!(ui.out, "Index {path}: {detail} in {ms:.1} ms.")?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Rebuild { format } => {
            let loaded = git_swarm::index::rebuild(&store)?;
            let i = &loaded.index;
            let ms = loaded.elapsed.as_secs_f64() * 1000.0;
            if format == Format::Json {
                ui.json(&serde_json::json!({
                    "path": path,
                    "directives": i.directive_count(),
                    "quarantined": i.quarantine_count(),
                    "event_files": i.event_files.len(),
                    "events": i.fold.events,
                    "duplicates": i.fold.duplicates,
                    "millis": ms,
                }))?;
            } else {
                debug_assert!(matches!(loaded.refresh, Refresh::Rebuilt { .. }));
                writeln!(
                    ui.out,
                    "Rebuilt {path}: {} directives, {} quarantined, {} events from {} file(s) in {ms:.0} ms.",
                    i.directive_count(),
                    i.quarantine_count(),
                    i.fold.events,
                    i.event_files.len()
                )?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `index watch`: runs the watcher here, starts it in the background, or stops it.
fn watch(store: &git_swarm::Store, detach: bool, stop: bool, ui: &mut Ui) -> Outcome {
    let socket = store.rel(&watch::socket_path(store));
    if stop {
        return match watch::request(store, "stop") {
            Ok(_) => {
                if !watch::wait_stopped(store, std::time::Duration::from_secs(10)) {
                    return Err(git_swarm::Error::Usage {
                        message: format!(
                            "the watcher at {socket} was asked to stop, but still runs after 10 s"
                        ),
                        hint: None,
                    }
                    .into());
                }
                writeln!(ui.out, "Stopped the watcher at {socket}.")?;
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => Err(git_swarm::Error::Usage {
                message: format!("no watcher answers at {socket}: {e}"),
                hint: Some("`git swarm index status` shows whether one runs".into()),
            }
            .into()),
        };
    }
    if let watch::State::Vouching { pid, .. } | watch::State::NotVouching { pid, .. } =
        watch::state(store)
    {
        return Err(git_swarm::Error::Usage {
            message: format!("a watcher already runs for this repository (pid {pid})"),
            hint: Some("`git swarm index watch --stop` ends it".into()),
        }
        .into());
    }
    if detach {
        return detach_watcher(store, ui);
    }
    serve(store, ui)
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
    git_swarm::Error::Usage {
        message: "the watcher runs on Linux only (it uses inotify)".into(),
        hint: Some("commands work without it: they stat the directive files".into()),
    }
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
            return Err(git_swarm::Error::Usage {
                message: format!(
                    "the watcher stopped as it started ({status}); it says why in {log_rel}"
                ),
                hint: None,
            }
            .into());
        }
        match watch::state(store) {
            watch::State::None => {}
            watch::State::Vouching { pid, .. } => {
                writeln!(
                    ui.out,
                    "Started the watcher (pid {pid}); it logs to {log_rel}."
                )?;
                return Ok(ExitCode::SUCCESS);
            }
            watch::State::NotVouching { pid, reason } => {
                writeln!(
                    ui.out,
                    "Started the watcher (pid {pid}); it logs to {log_rel}."
                )?;
                ui.warning(
                    &format!("the watcher does not vouch for the directive files: {reason}"),
                    Some("commands stat them until it can"),
                );
                return Ok(ExitCode::SUCCESS);
            }
        }
        if started.elapsed() > std::time::Duration::from_secs(10) {
            let _ = child.kill();
            return Err(git_swarm::Error::Usage {
                message: format!("the watcher did not answer within 10 s; see {log_rel}"),
                hint: None,
            }
            .into());
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[cfg(not(target_os = "linux"))]
fn detach_watcher(_store: &git_swarm::Store, _ui: &mut Ui) -> Outcome {
    Err(unsupported().into())
}
