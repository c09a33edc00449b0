//! The real-harness scenarios for gemini (see `super`).
