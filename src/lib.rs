//! git-swarm keeps what a team of coding agents learns as versioned files in
//! a git repository, under `.swarm/`:
//!
//! - [`directive`]: one reviewed lesson per TOML file, with the
//!   actionability gate every new entry passes;
//! - [`event`]: the append-only log of learning signals;
//! - [`fold`] and [`index`]: every count and state derived from the log,
//!   cached in the git dir and refreshed when `.swarm/` changes;
//! - [`validate`] and [`doctor`]: linting and repairing the store.
//!
//! The library never prints and never reads the environment on its own;
//! the `git-swarm` binary (in `src/cli/`) is the only front end.

pub mod change;
pub mod check;
pub mod config;
pub mod directive;
pub mod display;
pub mod doctor;
pub mod error;
pub mod event;
pub mod explain;
pub mod fold;
pub mod hooks;
pub mod index;
pub mod init;
pub mod inject;
pub mod learning;
pub mod lifecycle;
pub mod markdown;
pub mod marks;
pub mod pathglob;
pub mod pattern;
pub mod predicate;
pub mod problem;
pub mod retrieve;
pub mod runner;
pub mod safe_fs;
pub mod schema;
pub mod store;
pub mod suggest;
pub mod trace;
pub mod trust;
pub mod validate;

pub use error::{Error, Result};
pub use store::{Repo, Store};
