//! `git swarm index refresh`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::index::Refresh;

use crate::cli::{Format, Outcome, Ui};

pub fn run(format: Format, ui: &mut Ui) -> Outcome {
    let (store, path) = super::store_and_path(ui)?;
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
