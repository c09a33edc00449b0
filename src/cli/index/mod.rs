//! `git swarm index status|refresh|rebuild|watch`.

mod status;
mod watch;

use std::io::Write;
use std::process::ExitCode;

use git_swarm::index::Refresh;
use git_swarm::{Error, Store};

use super::{Format, Outcome, Ui};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Say whether the index matches .swarm/, and what it holds.
    Status(Formatted),
    /// Bring the index up to date, reading only what changed.
    ///
    /// The hooks run this after merges and checkouts.
    Refresh(Formatted),
    /// Rebuild the index from .swarm/ from scratch.
    Rebuild(Formatted),
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
    Watch(watch::Args),
}

// The one option of `status`, `refresh` and `rebuild` (no doc comment: the
// variants give each its description).
#[derive(Debug, clap::Args)]
pub struct Formatted {
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(command: Command, ui: &mut Ui) -> Outcome {
    match command {
        Command::Status(a) => status::run(a.format, ui),
        Command::Refresh(a) => refresh(a.format, ui),
        Command::Rebuild(a) => rebuild(a.format, ui),
        Command::Watch(a) => watch::run(a, ui),
    }
}

/// The store, and the index's path as messages name it.
fn store_and_path(ui: &mut Ui) -> Result<(Store, String), Error> {
    let store = super::store(ui)?;
    let path = store.rel(&git_swarm::index::index_path(&store));
    Ok((store, path))
}

/// `git swarm index refresh`.
fn refresh(format: Format, ui: &mut Ui) -> Outcome {
    let (store, path) = store_and_path(ui)?;
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

/// `git swarm index rebuild`.
fn rebuild(format: Format, ui: &mut Ui) -> Outcome {
    let (store, path) = store_and_path(ui)?;
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
