//! `git swarm index rebuild`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::index::Refresh;

use crate::cli::{Format, Outcome, Ui};

pub fn run(format: Format, ui: &mut Ui) -> Outcome {
    let (store, path) = super::store_and_path(ui)?;
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
