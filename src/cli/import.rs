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
    malformed: usize,
    entries: &'a [Entry],
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    let Source::OpencodeSwarm = args.source;
    let store = super::store(ui)?;
    let rel = args.path.display().to_string();
    let (items, problems) = git_swarm::import::read(&args.path, &rel)?;
    ui.problems(&problems);
    if !args.dry_run {
        // A file written whose event the log then refused could never be
        // recorded (its id is taken by then): check the log first, as `add` does.
        store.check_appendable(&store.event(git_swarm::event::Body::Added {
            path: String::new(),
        }))?;
    }
    let mut outcomes = Vec::new();
    let mut seen = Vec::new();
    for mut item in items {
        git_swarm::import::settle_id(&store, &mut item);
        let preview = git_swarm::import::preview(&store, &item, &seen);
        seen.push(item.directive.id.clone());
        if args.dry_run || preview.status == "skipped" {
            outcomes.push(preview);
            continue;
        }
        // Each entry's event is appended as soon as its file is written,
        // as `add` does, so a run cut short leaves nothing unrecorded.
        let (outcome, event) = git_swarm::import::mint(&store, item)?;
        super::append(&store, &[event], ui)?;
        outcomes.push(outcome);
    }
    let count = |s: &str| outcomes.iter().filter(|o| o.status == s).count();
    let (added, quarantined, skipped) = (count("added"), count("quarantined"), count("skipped"));
    if args.format == Format::Json {
        ui.json(&Report {
            dry_run: args.dry_run,
            added,
            quarantined,
            skipped,
            malformed: problems.len(),
            entries: &outcomes,
        })?;
    } else {
        for o in &outcomes {
            let mut line = format!("{}:{}: {} {}", rel, o.line, o.status, super::clean(&o.id));
            if let Some(r) = &o.reason {
                line.push_str(&format!(" ({})", super::clean(r)));
            }
            writeln!(ui.out, "{line}")?;
            for n in &o.notes {
                writeln!(ui.out, "  note: {}", super::clean(n))?;
            }
        }
        let would = if args.dry_run {
            " (dry run: nothing written)"
        } else {
            ""
        };
        writeln!(
            ui.out,
            "{added} added, {quarantined} quarantined, {skipped} skipped, {} malformed line{}{would}.",
            problems.len(),
            if problems.len() == 1 { "" } else { "s" }
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
