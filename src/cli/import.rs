//! `git swarm import`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use git_swarm::import::Outcome as Entry;
use serde::Serialize;

use super::{Format, Outcome, Ui};

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Source {
    /// opencode-swarm's `.swarm/knowledge.jsonl` (schema v2).
    OpencodeSwarm,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The tool the knowledge comes from.
    #[arg(value_enum)]
    source: Source,
    /// Its knowledge file, e.g. `.swarm/knowledge.jsonl`.
    path: PathBuf,
    /// Say what would be imported; write nothing.
    #[arg(long)]
    dry_run: bool,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

#[derive(Serialize)]
struct Report<'a> {
    dry_run: bool,
    added: usize,
    quarantined: usize,
    skipped: usize,
    malformed: u64,
    entries: &'a [Entry],
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    let Source::OpencodeSwarm = args.source;
    let store = super::store(ui)?;
    let rel = args.path.display().to_string();
    let bytes = git_swarm::import::read_file(&args.path, &rel)?;
    if !args.dry_run {
        // A file written whose event the log then refused could never be
        // recorded (its id is taken by then): check the log first, as `add` does.
        store.check_appendable(&store.event(git_swarm::event::Body::Added {
            path: String::new(),
        }))?;
    }
    let mut problems = git_swarm::problem::Problems::new();
    let mut outcomes = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let (mut added, mut quarantined, mut skipped) = (0, 0, 0);
    let json = args.format == Format::Json;
    let mut text_error = None;
    git_swarm::import::for_each_entry(&bytes, &rel, &mut problems, |mut item| {
        git_swarm::import::settle_id(&store, &mut item);
        let preview = git_swarm::import::preview(&store, &item, &seen);
        seen.insert(item.directive.id.clone());
        let outcome = if args.dry_run || preview.status == "skipped" {
            preview
        } else {
            // Each entry's event is appended as soon as its file is written,
            // as `add` does, so a run cut short leaves nothing unrecorded.
            let (outcome, event) = git_swarm::import::mint(&store, item)?;
            super::append(&store, &[event], ui)?;
            outcome
        };
        match outcome.status {
            "added" => added += 1,
            "quarantined" => quarantined += 1,
            _ => skipped += 1,
        }
        if json {
            outcomes.push(outcome);
        } else if text_error.is_none()
            && let Err(e) = write_outcome(&rel, &outcome, ui)
        {
            text_error = Some(e);
        }
        Ok(())
    })?;
    if let Some(e) = text_error {
        return Err(e.into());
    }
    ui.capped(&problems);
    let malformed = problems.total();
    if json {
        ui.json(&Report {
            dry_run: args.dry_run,
            added,
            quarantined,
            skipped,
            malformed,
            entries: &outcomes,
        })?;
    } else {
        let would = if args.dry_run {
            " (dry run: nothing written)"
        } else {
            ""
        };
        writeln!(
            ui.out,
            "{added} added, {quarantined} quarantined, {skipped} skipped, {malformed} malformed line{}{would}.",
            if malformed == 1 { "" } else { "s" }
        )?;
        if quarantined > 0 && !args.dry_run {
            ui.hint("`git swarm list --quarantined` shows the reasons; fix an entry, then `git swarm harden` promotes it");
        }
    }
    // Malformed lines were skipped; say so in the exit status like `validate`.
    Ok(if problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

/// One entry's line of the text report, written as the entry is imported.
fn write_outcome(rel: &str, o: &Entry, ui: &mut Ui) -> std::io::Result<()> {
    let mut line = format!("{}:{}: {} {}", rel, o.line, o.status, super::clean(&o.id));
    if let Some(r) = &o.reason {
        line.push_str(&format!(" ({})", super::clean(r)));
    }
    writeln!(ui.out, "{line}")?;
    for n in &o.notes {
        writeln!(ui.out, "  note: {}", super::clean(n))?;
    }
    Ok(())
}
