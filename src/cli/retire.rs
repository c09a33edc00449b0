//! `git swarm retire`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::Error;

use super::{Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The directive to retire.
    #[arg(value_name = "ID")]
    id: String,
    /// Why it is retired (at least 10 characters).
    #[arg(long = "justification", visible_alias = "reason", value_name = "TEXT")]
    justification: String,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    let reason = git_swarm::directive_loop::gate::justification(
        &args.justification,
        "it",
        "say why the directive is retired, in a sentence",
    )?;
    let chars = reason.chars().count();
    if chars > git_swarm::directive_loop::acks::MAX_REASON_CHARS {
        return Err(Error::usage(
            format!(
                "the justification is {chars} characters; at most {} are recorded",
                git_swarm::directive_loop::acks::MAX_REASON_CHARS
            ),
            "say why in a sentence or two; the details belong in the commit message",
        )
        .into());
    }
    let store = super::store(ui)?;
    super::hive::refuse_if_hive(&store, &args.id, "retire")?;
    let retired = match git_swarm::directive::lifecycle::retire(&store, &args.id, reason) {
        Ok(r) => r,
        Err(Error::Invalid(problems)) => {
            // Written back, the file would be as broken as it is: say how to mend it.
            ui.problems(&problems);
            let message = format!(
                ".swarm/directives/{}.toml has {} problem(s): not retired",
                args.id,
                problems.len()
            );
            let hint = format!(
                "fix them with `git swarm edit {}`; setting `status = \"retired\"` there retires it too",
                args.id
            );
            return Err(Error::usage(message, hint).into());
        }
        Err(e) => return Err(super::show::with_suggestion(&store, e).into()),
    };
    super::append(&store, std::slice::from_ref(&retired.event), ui)?;
    writeln!(
        ui.out,
        "retired {} ({}): commit the change to retire it for everyone",
        args.id,
        store.rel(&retired.path)
    )?;
    Ok(ExitCode::SUCCESS)
}
