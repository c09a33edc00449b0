//! The pattern learning loop (DESIGN §6): deliberations of adversarial
//! roles become patterns, validators' verdicts correct them, and the best
//! are injected into the next prompts. Every signal is an event; every
//! count, score and state is the fold's ([`fold`]).
//!
//! - [`text`]: reading deliberations and verdicts (no I/O);
//! - [`fold`]: the record of every pattern, scores and lifecycle;
//! - [`inject`]: the token-budgeted block of the best patterns for a role;
//! - [`observe`]: a deliberation's observations recorded as patterns
//!   (`pattern extract`);
//! - [`feedback`]: a validator's verdict correcting them (`pattern feedback`);
//! - [`outcome`]: a run's result grading the patterns it used (`pattern outcome`).

pub mod feedback;
pub mod fold;
pub mod inject;
pub mod observe;
pub mod outcome;
pub mod text;
