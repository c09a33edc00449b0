//! The real-harness suite: git-swarm inside the agent harnesses themselves
//! (installed from npm at the versions `tests/harness/package.json` pins),
//! each driven headless by a scripted model server on 127.0.0.1 that speaks
//! the harness's own API and records every request, so that a test asserts
//! on what the model actually received and on what the log holds.
//!
//! `.ci/run` installs the harnesses into `target/harness/` (`npm ci`). Where
//! they are not installed (npm unreachable), every test here prints
//! `SKIPPED` with the reason and passes: the fast tests in `agents_hook`
//! still run on the payloads captured here (`tests/fixtures/agents/captured/`).
#![allow(dead_code)]

pub mod server;

mod claude_code;
mod codex;
mod gemini;
mod opencode;

use std::path::{Path, PathBuf};

/// Where `.ci/run` installs the harnesses; `GIT_SWARM_HARNESS_DIR` points
/// elsewhere (a folder holding `node_modules/.bin/`).
pub fn install_dir() -> PathBuf {
    match std::env::var_os("GIT_SWARM_HARNESS_DIR") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("target/harness"),
    }
}

/// The harness's executable, or why the test is skipped (printed as
/// `SKIPPED: …`, so a run without the harnesses says so).
pub fn harness_bin(name: &str) -> Option<PathBuf> {
    let bin = install_dir().join("node_modules/.bin").join(name);
    if bin.is_file() {
        return Some(bin);
    }
    println!(
        "SKIPPED: {name} is not installed at {} (`.ci/run` installs the pinned harnesses with npm; npm unreachable?)",
        bin.display()
    );
    None
}

/// The version the suite pins for an npm package, from tests/harness/package.json.
pub fn pinned(package: &str) -> String {
    let text = include_str!("../../harness/package.json");
    let v: serde_json::Value = serde_json::from_str(text).expect("package.json is JSON");
    v["dependencies"][package]
        .as_str()
        .unwrap_or_else(|| panic!("{package} is pinned in tests/harness/package.json"))
        .to_owned()
}
