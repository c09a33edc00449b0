//! `git swarm phase …`: phases of work.

mod complete;
mod start;

use super::{Outcome, Ui};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Start a phase: tool calls are reflected in it from now on.
    ///
    /// Records a `phase_started` event and remembers the phase in
    /// `.swarm/local/phase` (this clone only), where `git swarm reflect micro`
    /// reads it when neither `--phase` nor GIT_SWARM_PHASE names one: a
    /// harness's hook runs a fixed command line and cannot pass it.
    Start(start::Args),
    /// Complete a phase, unless a critical directive of it is unresolved.
    ///
    /// The phase's directives are those shown by `git swarm inject --phase P`.
    /// Each critical one (critical when shown, or escalated since) needs a
    /// terminal outcome in the phase (an `applied` ack or a `verified` verdict,
    /// or an `ignored`/`n_a` one with a reason), and its last violation must be
    /// followed by an applied or verified outcome. Otherwise this prints
    /// `PHASE_COMPLETE_BLOCKED:` and one `- <id>: <reason>` line per directive,
    /// and exits 1. `--accept-violations` overrides named directives, with a
    /// justification of at least 10 characters, recorded as `override` events.
    ///
    /// A phase in which no directive was shown is refused (exit 2) as a likely
    /// typo, naming the phases that exist; `--allow-empty` completes it.
    Complete(complete::Args),
}

pub fn run(command: Command, ui: &mut Ui) -> Outcome {
    match command {
        Command::Start(args) => start::run(args, ui),
        Command::Complete(args) => complete::run(args, ui),
    }
}
