//! `git swarm deescalate`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::Error;
use git_swarm::event::Body;

use super::{Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The escalated directive.
    #[arg(value_name = "ID")]
    id: String,
    /// Why the escalation can end (at least 10 characters).
    #[arg(long, value_name = "TEXT")]
    justification: String,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    let store = super::store(ui)?;
    let justification = args.justification.trim();
    if justification.chars().count() < git_swarm::directive_loop::gate::MIN_JUSTIFICATION {
        return Err(Error::Usage {
            message: format!(
                "the justification is {} character(s); it needs at least {}",
                justification.chars().count(),
                git_swarm::directive_loop::gate::MIN_JUSTIFICATION
            ),
            hint: Some("say why the escalation can end, in a sentence".into()),
        }
        .into());
    }
    let fold = git_swarm::index::load_fold(&store)?.fold;
    let Some(episode) = fold.loop_state(&args.id).and_then(|s| s.open_key(&args.id)) else {
        return Err(Error::Usage {
            message: format!("`{}` is not escalated", args.id),
            hint: Some("`git swarm status` lists the escalated directives".into()),
        }
        .into());
    };
    let e = store
        .event(Body::Deescalation {
            justification: justification.to_owned(),
            episode,
        })
        .about(&args.id);
    super::append(&store, &[e], ui)?;
    writeln!(
        ui.out,
        "deescalated {}: back to the priority and enforcement its file declares",
        args.id
    )?;
    Ok(ExitCode::SUCCESS)
}
