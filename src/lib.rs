//! git-swarm keeps what a team of coding agents learns as versioned files in
//! a git repository, under `.swarm/`:
//!
//! - [`directive`]: one reviewed lesson per TOML file, with the
//!   actionability gate every new entry passes;
//! - [`event`]: the append-only log of learning signals;
//! - [`fold`] and [`index`]: every count and state derived from the log,
//!   cached in the git dir and refreshed when `.swarm/` changes;
//! - [`directive_loop`]: the directive loop's decisions — what `inject`
//!   shows ([`directive_loop::inject`]), what `ack` records
//!   ([`directive_loop::acks`]), `review`'s verdicts
//!   ([`directive_loop::review`]), the gate of `phase complete`
//!   ([`directive_loop::gate`]), escalation
//!   ([`directive_loop::escalation`]) and what `check --record` appends
//!   ([`directive_loop::checks`]);
//! - [`pattern`]: the pattern loop — `pattern extract`
//!   ([`pattern::observe`]), `pattern feedback` ([`pattern::feedback`]),
//!   `pattern outcome` ([`pattern::outcome`]) and the block
//!   ([`pattern::inject`]);
//! - [`check`]: a change against the directives' predicates (`check`, the
//!   hooks); [`directive::lifecycle`]: `retire` and `edit`;
//! - [`reflect`]: the loop finding lessons by itself — `reflect micro`
//!   reads each tool call and keeps what did not succeed;
//! - [`agent_hook`]: the agent harnesses' hooks read and answered in their
//!   own formats, and the state linking a subagent to its delegation;
//!   [`agents`]: `agents install`, which registers those hooks in each
//!   harness's project config and takes them out again exactly;
//! - [`harden`]: the quarantine worked — hand-fixed entries promoted,
//!   the others sent to the user's curator program;
//! - [`diff`]: the semantic change of `.swarm/` between two revisions;
//! - [`validate`] and [`doctor`]: linting and repairing the store.
//!
//! A decision is a function that takes plain inputs and returns the events
//! to append with a report of what it decided. The library never prints
//! and never reads the environment on its own; the front end (`src/cli/`,
//! one file per command) parses the arguments, calls it, appends and
//! renders. It is compiled into this crate, private, so that the two
//! binaries share it: `git-swarm` ([`cli_main`]) and `git-swarm-agent-hook`
//! ([`agent_hook_main`]), the agent harnesses' hook, which links only what a
//! hook runs and so starts sooner (docs/performance.md).

// The front end names the library as the binaries do.
extern crate self as git_swarm;

mod cli;

pub mod agent_hook;
pub mod agents;
pub mod change;
pub mod check;
pub mod cochange;
pub mod config;
pub mod diff;
pub mod directive;
pub mod directive_loop;
pub mod display;
pub mod doctor;
pub mod error;
pub mod event;
pub mod explain;
pub mod export;
pub mod file_kind;
pub mod fold;
pub mod handoff;
pub mod harden;
pub mod hive;
pub mod hooks;
pub mod import;
pub mod index;
pub mod init;
pub mod markdown;
pub mod mcp;
pub mod pathglob;
pub mod pattern;
pub mod pins;
pub mod predicate;
pub mod problem;
pub mod proposal;
pub mod reflect;
pub mod retrieve;
pub mod reviewed;
pub mod runner;
pub mod safe_fs;
pub mod schema;
pub mod serve;
pub mod stats;
pub mod store;
pub mod suggest;
pub mod trace;
pub mod trust;
pub mod validate;
pub mod worktree;

pub use error::{Error, Result};

/// `git-swarm`'s `main`: parses the arguments and runs the command.
#[doc(hidden)]
pub fn cli_main() -> std::process::ExitCode {
    cli::main()
}

/// `git-swarm-agent-hook HARNESS EVENT`'s `main`: an agent harness's hook,
/// the payload on standard input (see `git-swarm hook agent`, the same).
#[doc(hidden)]
pub fn agent_hook_main() -> std::process::ExitCode {
    cli::agent_hook_main()
}
pub use store::{Repo, Store};
