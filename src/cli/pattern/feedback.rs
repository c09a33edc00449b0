//! `git swarm pattern feedback`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::pattern::feedback;
use git_swarm::pattern::text;

use crate::cli::{Format, Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The role whose deliberation is judged.
    #[arg(long, value_name = "ROLE")]
    adversarial_role: String,
    /// The role that wrote the verdict.
    #[arg(long, value_name = "ROLE")]
    validator_role: String,
    /// The pipeline run the deliberation and the verdict belong to.
    #[arg(long, value_name = "RUN")]
    run: String,
    /// The adversarial role's deliberation, as given to `pattern extract` (`-`: standard input).
    #[arg(long, value_name = "FILE")]
    deliberation: String,
    /// The validator's verdict: markdown with the verdict JSON (`-`: standard input).
    #[arg(long = "verdicts", alias = "verdict", value_name = "FILE")]
    verdict: String,
    /// Files of the change (default: those given to `pattern extract` for the run).
    #[arg(long, value_delimiter = ',', value_name = "PATH,..")]
    files: Vec<String>,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(mut args: Args, ui: &mut Ui) -> Outcome {
    crate::cli::args::check_role(&args.adversarial_role)?;
    crate::cli::args::check_role(&args.validator_role)?;
    crate::cli::args::check_run(&args.run)?;
    args.files = crate::cli::args::clean_list(&args.files);
    let deliberation = crate::cli::args::read_input(&args.deliberation, "deliberation")?;
    let verdict_text = crate::cli::args::read_input(&args.verdict, "verdict")?;
    let observations = text::extract(&deliberation)
        .map_err(|e| crate::cli::args::bad_file(&args.deliberation, &e, "deliberation"))?;
    let verdict = text::parse_verdict(&verdict_text)
        .map_err(|e| crate::cli::args::bad_file(&args.verdict, &e, "verdict"))?;
    let store = crate::cli::store(ui)?;
    let role = &args.adversarial_role;
    // One role's patterns, read in place from the index.
    let loaded = git_swarm::index::load_pattern_views(&store)?;
    let known = loaded.role_patterns(role)?;
    let report = feedback::decide(
        &store,
        &known,
        &observations,
        &verdict,
        &feedback::Request {
            role,
            validator_role: &args.validator_role,
            run: &args.run,
            deliberation: &deliberation,
            files: &args.files,
        },
    );
    let events = &report.events;
    if !events.is_empty() {
        crate::cli::append(&store, events, ui)?;
    }
    if args.format == Format::Json {
        return ui.json_result(&serde_json::json!({
            "run": args.run,
            "verdict": verdict.verdict,
            "evidence_level": report.level.map(|l| l as u8),
            "recorded": events.iter().map(|e| serde_json::json!({"kind": e.kind, "pattern": e.str_field("pattern")})).collect::<Vec<_>>(),
            "notes": report.notes,
        }));
    }
    for l in &report.notes {
        writeln!(ui.out, "{}", crate::cli::clean(l))?;
    }
    writeln!(ui.out, "Recorded {} event(s).", events.len())?;
    Ok(ExitCode::SUCCESS)
}
