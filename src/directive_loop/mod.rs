//! The directive loop: what a delegate is shown, what it acknowledges, what
//! a reviewer verifies, and the gate that closes a phase.
//!
//! - [`inject`]: the directives shown to a delegate, and the block with the
//!   ack contract (`git swarm inject`);
//! - [`marks`]: reading the ack and verdict lines agents and reviewers write;
//! - [`acks`]: a delegate's acks checked against what it was shown (`ack`);
//! - [`review`]: the block of what to verify, and the reviewer's verdicts
//!   weighed against the machine's (`review`);
//! - [`gate`]: whether a phase completes, and its overrides (`phase complete`);
//! - [`checks`]: the events a recorded check appends (`check --record`, the hooks);
//! - [`escalation`]: recording the escalation episodes violations open;
//! - [`records`]: what the event log says of delegations and phases.
//!
//! Every decision here returns the events to append and a report of what
//! was decided, warnings included; the command line appends the events and
//! renders the report.

pub mod acks;
pub mod checks;
pub mod escalation;
pub mod gate;
pub mod inject;
pub mod marks;
pub mod records;
pub mod review;
