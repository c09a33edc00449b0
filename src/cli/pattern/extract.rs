//! `git swarm pattern extract`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::pattern::observe;
use git_swarm::pattern::text;

use crate::cli::{Format, Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The role that wrote the deliberation.
    #[arg(long, value_name = "ROLE")]
    role: String,
    /// The pipeline run it belongs to.
    #[arg(long, value_name = "RUN")]
    run: String,
    /// Labels of the work (issue labels, phase…): the pattern's context.
    #[arg(long, value_delimiter = ',', value_name = "LABEL,..")]
    labels: Vec<String>,
    /// Files of the change: the pattern's context.
    #[arg(long, value_delimiter = ',', value_name = "PATH,..")]
    files: Vec<String>,
    /// The deliberation (`-`: standard input).
    #[arg(value_name = "FILE", default_value = "-")]
    file: String,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(mut args: Args, ui: &mut Ui) -> Outcome {
    crate::cli::args::check_role(&args.role)?;
    crate::cli::args::check_run(&args.run)?;
    args.labels = crate::cli::args::clean_list(&args.labels);
    args.files = crate::cli::args::clean_list(&args.files);
    let markdown = crate::cli::args::read_input(&args.file, "deliberation")?;
    let observations = text::extract(&markdown)
        .map_err(|e| crate::cli::args::bad_file(&args.file, &e, "deliberation"))?;
    let store = crate::cli::store(ui)?;
    // The role's patterns, read in place from the index.
    let loaded = git_swarm::index::load_pattern_views(&store)?;
    let stored = loaded.role_patterns(&args.role)?;
    let report = observe::observe(
        &store,
        &stored,
        &observations,
        &observe::Request {
            role: &args.role,
            run: &args.run,
            labels: &args.labels,
            files: &args.files,
        },
    );
    let events = &report.events;
    if !events.is_empty() {
        crate::cli::append(&store, events, ui)?;
    }
    if args.format == Format::Json {
        let rows: Vec<_> = report
            .rows
            .iter()
            .map(|r| {
                let o = &observations[r.observation];
                serde_json::json!({"id": r.id, "stored": r.how, "category": o.category, "line": o.line, "text": o.text})
            })
            .collect();
        return ui.json_result(&serde_json::json!({"run": args.run, "role": args.role, "recorded": events.len(), "observations": rows}));
    }
    for r in &report.rows {
        let o = &observations[r.observation];
        let line = format!(
            "{}  {:<11} {:<30} {}",
            r.id,
            o.category.as_str(),
            r.how,
            o.text
        );
        writeln!(ui.out, "{}", crate::cli::clean(&line))?;
    }
    writeln!(
        ui.out,
        "Recorded {} observation(s) of {} found in {}.",
        events.len(),
        observations.len(),
        args.file
    )?;
    Ok(ExitCode::SUCCESS)
}
