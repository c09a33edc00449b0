//! `git swarm reflect macro`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::reflect::macro_::{self, Known};

use crate::cli::{Format, Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only evidence at or after this time: an RFC 3339 time, a date (UTC), or an age such as 30d, 12h, 2w [default: all of it].
    #[arg(long, value_name = "WHEN")]
    since: Option<String>,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    let store = crate::cli::store(ui)?;
    let since = args
        .since
        .as_deref()
        .map(|s| crate::cli::log::parse_since(s, store.clock.now()))
        .transpose()?;
    // Held from reading the log to consuming the candidates: a run started
    // meanwhile waits, then finds this one's proposals recorded.
    let lock = macro_::lock(&store)?;
    let log = crate::cli::read_log(&store, ui)?;
    let (_, entries) = crate::cli::load_index(&store, ui)?.index.split_directives();
    let known: Vec<Known<'_>> = entries
        .iter()
        .filter_map(|e| {
            e.directive.as_ref().map(|directive| Known {
                directive,
                quarantined: e.quarantine.is_some(),
            })
        })
        .collect();
    let report = macro_::propose(&store, &log, &known, since)?;
    ui.problems(&report.problems);
    // Proposals are written; their events go before the candidates go, so a
    // run cut short here is finished by the next (the motif's key is known).
    crate::cli::append(&store, &report.events, ui)?;
    if !report.used.is_empty() {
        git_swarm::reflect::rewrite_candidates(&store, |c| !report.used.contains(&c.id))?;
    }
    drop(lock);
    if args.format == Format::Json {
        return ui.json_result(&report);
    }
    let clean = crate::cli::clean;
    if report.proposed.is_empty() && report.already.is_empty() {
        writeln!(ui.out, "no motif recurs across phases")?;
    }
    for w in &report.proposed {
        let predicate = if w.verify.is_empty() {
            "no predicate".to_owned()
        } else {
            w.verify.join(", ")
        };
        writeln!(
            ui.out,
            "proposed {} ({}, {} phases, {}): {}",
            w.slug,
            w.path,
            w.phases.len(),
            clean(&predicate),
            clean(&w.title)
        )?;
    }
    for a in &report.already {
        let status = a.status.map_or("unreadable", |s| s.as_str());
        writeln!(
            ui.out,
            "already proposed as {} ({status}): {}",
            a.slug,
            clean(&a.key)
        )?;
    }
    if report.left > 0 {
        writeln!(
            ui.out,
            "{} more motif{} left for the next run (at most {} proposals a run)",
            report.left,
            if report.left == 1 { "" } else { "s" },
            git_swarm::proposal::MAX_PER_RUN
        )?;
    }
    if !report.proposed.is_empty() {
        ui.hint("`git swarm proposal list` lists them; `git swarm proposal accept SLUG` or `reject SLUG --reason TEXT` decides one");
    }
    Ok(ExitCode::SUCCESS)
}
