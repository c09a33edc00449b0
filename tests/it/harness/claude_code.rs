//! The real-harness scenarios for claude_code (see `super`).
