//! `git swarm validate`.

use std::io::Write;
use std::process::ExitCode;

use super::{Format, Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Fail on warnings too.
    #[arg(long)]
    strict: bool,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    let repo = super::repo()?;
    let store = git_swarm::Store::open(&repo, super::clock()?)?;
    let report = git_swarm::validate::validate(&store)?;
    let errors = report.errors();
    let total = usize::try_from(report.problems.total()).unwrap_or(usize::MAX);
    let warnings = total - errors;
    let failed = errors > 0 || (args.strict && warnings > 0);
    if args.format == Format::Json {
        ui.json(&serde_json::json!({
            "ok": !failed,
            "files": report.files,
            "directives": report.directives,
            "quarantined": report.quarantined,
            "events": report.events,
            "errors": errors,
            "warnings": warnings,
            "problems": report.problems.kept(),
            "more_problems": report.problems.more(),
        }))?;
    } else {
        for p in &report.problems {
            ui.problem_out(p)?;
        }
        for m in report.problems.more() {
            writeln!(ui.out, "{}", m.sentence())?;
        }
        let summary = format!(
            "{} file{} checked ({} directive{}, {} quarantined, {} event{})",
            report.files,
            plural(report.files),
            report.directives,
            plural(report.directives),
            report.quarantined,
            report.events,
            plural(report.events)
        );
        if report.problems.is_empty() {
            writeln!(ui.out, "{summary}: no problems.")?;
        } else {
            writeln!(
                ui.out,
                "{summary}: {errors} error{}, {warnings} warning{}.",
                plural(errors),
                plural(warnings)
            )?;
        }
    }
    Ok(ExitCode::from(if failed { 2 } else { 0 }))
}

pub fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
