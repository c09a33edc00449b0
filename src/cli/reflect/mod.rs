//! `git swarm reflect …`: the loop finding lessons in what the agents did.

mod macro_;
mod meso;
pub mod micro;

use super::{Outcome, Ui};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Classify one finished tool call (JSON on stdin); keep a non-success.
    ///
    /// Reads the post-tool hook payload of Claude Code (`PostToolUse`,
    /// `PostToolUseFailure`, `PermissionDenied`) or Codex (`PostToolUse`),
    /// Gemini CLI's `AfterTool`, what an opencode plugin's
    /// `tool.execute.after` sees (`{tool, sessionID, args, output}`), or a
    /// plain `{tool, input, output, exit_code}`, and prints its class
    /// (success, partial, failure, blocked, skipped, inapplicable) and
    /// sub-kind (test, lint, typecheck, build, revert, command, write).
    /// Anything but a success or an inapplicable call is kept as an insight
    /// candidate in `.git/swarm/local/candidates.jsonl` (never tracked), with the
    /// tool, command, role, task, phase and a signature, for `reflect meso`.
    ///
    /// It runs after every tool call, so it never gets in the agent's way:
    /// bad or unknown input prints one warning and exits 0, recording nothing.
    Micro(micro::Args),
    /// Fold a phase's insight candidates into lessons.
    ///
    /// Groups the candidates of the phase by signature. A group seen in at
    /// least two tasks becomes a directive (`reflect-<sub>-<hash>`) scoped to
    /// the roles and tools seen, with a `tool:` check when the failing command
    /// is one program, through the actionability gate: it is added, or
    /// quarantined with its reason. A group an active directive covers already
    /// (the same `tool:` command, or most of the same words) makes none. The
    /// candidates used are consumed and `reflected` events recorded; those of
    /// a single task wait for a second.
    Meso(meso::Args),
    /// Propose the motifs that recur across phases.
    ///
    /// A motif is the same failure (one signature) seen in at least two
    /// phases — in the `reflected` events of `reflect meso` and in the insight
    /// candidates still waiting — or a directive violated in at least two
    /// phases (`violated` verdicts and acks, a critical one left
    /// unacknowledged). Each new one is written to
    /// `.swarm/proposals/<slug>.md` (YAML front matter: the draft directive
    /// with a suggested predicate derived as meso derives one, its evidence
    /// ids and the motif's key; then the evidence in prose), at most 10 a run,
    /// the strongest first (most phases, then most recent), with a `proposed`
    /// event. A motif a proposal already has, whatever its status, is not
    /// proposed again. The waiting candidates a proposal used are consumed.
    /// `git swarm proposal` decides on them.
    #[command(name = "macro")]
    Macro(macro_::Args),
}

pub fn run(command: Command, ui: &mut Ui) -> Outcome {
    match command {
        Command::Micro(args) => micro::run(args, ui),
        Command::Meso(args) => meso::run(args, ui),
        Command::Macro(args) => macro_::run(args, ui),
    }
}
