//! The real-harness scenarios for opencode (see `super`).
