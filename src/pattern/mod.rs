//! The pattern learning loop (DESIGN §6): deliberations of adversarial
//! roles become patterns, validators' verdicts correct them, and the best
//! are injected into the next prompts. Every signal is an event; every
//! count, score and state is the fold's ([`fold`]).
//!
//! - [`text`]: reading deliberations and verdicts (no I/O);
//! - [`fold`]: the record of every pattern, scores and lifecycle;
//! - [`inject`]: the token-budgeted block of the best patterns for a role.

pub mod fold;
pub mod inject;
pub mod text;
