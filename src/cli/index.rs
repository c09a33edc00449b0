//! `git swarm index status|rebuild`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::index::{Health, Refresh, index_path};

use super::{Format, Outcome, Ui};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Say whether the index matches .swarm/, and what it holds.
    Status {
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// Bring the index up to date, reading only what changed (hooks run this after merges and checkouts).
    Refresh {
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// Rebuild the index from .swarm/ from scratch.
    Rebuild {
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
}

pub fn run(cmd: Command, ui: &mut Ui) -> Outcome {
    let store = super::store(ui)?;
    let path = store.rel(&index_path(&store));
    match cmd {
        Command::Status { format } => {
            let (index, scan, health) = git_swarm::index::status(&store)?;
            let fingerprint = format!("{:016x}", scan.fingerprint());
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
