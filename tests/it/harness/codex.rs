//! The real-harness scenarios for codex (see `super`).
