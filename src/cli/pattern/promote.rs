//! `git swarm pattern promote`.

use crate::cli::{Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The pattern's id (as `pattern list` shows), or an alias of it.
    #[arg(value_name = "ID")]
    id: String,
    /// Why (recorded with the event).
    #[arg(long, value_name = "TEXT")]
    justification: Option<String>,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    super::mark(&args.id, super::Mark::Promote(args.justification), ui)
}
