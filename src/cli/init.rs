//! `git swarm init`.

use std::io::Write;
use std::process::ExitCode;

use super::{Outcome, Ui};

pub fn run(ui: &mut Ui) -> Outcome {
    let repo = super::repo()?;
    let report = git_swarm::init::init(&repo)?;
    if report.created.is_empty() {
        writeln!(
            ui.out,
            "Already initialised: {} has every template file; nothing changed.",
            report.swarm_dir.display()
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(ui.out, "Initialised {}", report.swarm_dir.display())?;
    for path in &report.created {
        writeln!(ui.out, "  created {path}")?;
    }
    for path in &report.kept {
        writeln!(ui.out, "  kept    {path}")?;
    }
    writeln!(
        ui.out,
        "Next: review the example directives, then `git add .swarm && git commit`."
    )?;
    Ok(ExitCode::SUCCESS)
}
