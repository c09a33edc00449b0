//! `git swarm doctor`.

use std::io::Write;
use std::process::ExitCode;

use super::validate::plural;
use super::{Format, Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Repair what can be repaired without losing data.
    #[arg(long)]
    fix: bool,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    let store = super::store(ui)?;
    let report = git_swarm::doctor::doctor(&store, args.fix)?;
    let errors = report
        .findings
        .iter()
        .filter(|f| !f.fixed && f.problem.is_error())
        .count();
    if args.format == Format::Json {
        ui.json(&report)?;
    } else {
        for f in &report.findings {
            if f.fixed {
                writeln!(
                    ui.out,
                    "{}: fixed: {}",
                    super::clean(&f.problem.location()),
                    super::clean(&f.problem.message)
                )?;
            } else {
                ui.problem_out(&f.problem)?;
            }
        }
        let fixed = report.findings.iter().filter(|f| f.fixed).count();
        let open = report.unresolved();
        writeln!(
            ui.out,
            "Checked {} event{} in {} file{}: {} finding{} open, {fixed} fixed.",
            report.events,
            plural(report.events),
            report.event_files,
            plural(report.event_files),
            open,
            plural(open)
        )?;
        if errors > 0 && !args.fix {
            ui.hint("`git swarm doctor --fix` repairs torn lines and the index; conflict markers and malformed lines need a person");
        }
    }
    Ok(ExitCode::from(u8::from(errors > 0)))
}
