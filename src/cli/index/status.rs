//! `git swarm index status`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::index::{Health, watch};

use crate::cli::{Format, Outcome, Ui};

pub fn run(format: Format, ui: &mut Ui) -> Outcome {
    let (store, path) = super::store_and_path(ui)?;
    let (index, scan, health) = git_swarm::index::status(&store)?;
    let fingerprint = format!("{:016x}", scan.fingerprint());
    let watcher = watch::state(&store);
    if health == Health::Folder {
        ui.warning(
            &format!(
                "{path} is a folder, not the index: commands work without an index, more slowly"
            ),
            Some("remove it; the index is derived from .swarm/ and the next command builds it"),
        );
    }
    if format == Format::Json {
        return ui.json_result(&serde_json::json!({
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
            }));
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
    if let Some(i) = &index {
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
    let watcher = match watcher {
        watch::State::None => "none (commands stat the directive files)".to_owned(),
        watch::State::Vouching { pid, generation } => {
            format!("pid {pid}, vouching for the directive files ({generation} change(s) seen)")
        }
        watch::State::NotVouching { pid, reason } => {
            format!("pid {pid}, not vouching: {reason}")
        }
    };
    writeln!(ui.out, "watcher:     {watcher}")?;
    Ok(ExitCode::SUCCESS)
}
