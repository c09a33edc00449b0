//! Codex's transcript, read for what its hook payload leaves out: a shell
//! call's exit code. Codex 0.171's `PostToolUse` gives a command's output
//! and no exit code, so a command that fails without a word (`test -d
//! /missing`: exit 1, no output) reads as a success. The rollout file the
//! payload names (`transcript_path`) has, by the time the hook runs, the
//! call's `item_completed` event (`CommandExecution`, with `exit_code`) and
//! its output ("Process exited with code N").

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::Value;

/// How much of the transcript's end is read: a call's lines are the last
/// few written when its hook runs; a session's file can be large.
const TAIL_BYTES: u64 = 4 * 1024 * 1024;

/// The exit code Codex recorded for `call_id` in the rollout file at
/// `path`, if it is a regular `rollout-*.jsonl` file that has it.
pub fn codex_exit_code(path: &Path, call_id: &str) -> Option<i64> {
    let name = path.file_name()?.to_str()?;
    if !(name.starts_with("rollout-") && name.ends_with(".jsonl")) {
        return None;
    }
    let mut file = crate::safe_fs::open_read(path).ok()?;
    let len = file.metadata().ok()?.len();
    let start = len.saturating_sub(TAIL_BYTES);
    file.seek(SeekFrom::Start(start)).ok()?;
    let mut tail = Vec::new();
    file.take(TAIL_BYTES).read_to_end(&mut tail).ok()?;
    let quoted = serde_json::to_string(call_id).ok()?;
    let finder = memchr::memmem::Finder::new(quoted.as_bytes());
    // The newest lines first: the call just finished.
    tail.split(|&b| b == b'\n')
        .rev()
        .filter(|line| finder.find(line).is_some())
        .filter_map(|line| serde_json::from_slice::<Value>(line).ok())
        .find_map(|v| exit_code_of(&v["payload"], call_id))
}

fn exit_code_of(payload: &Value, call_id: &str) -> Option<i64> {
    let item = &payload["item"];
    if payload["type"] == "item_completed" && item["id"] == call_id {
        return item["exit_code"].as_i64();
    }
    if payload["type"] == "function_call_output" && payload["call_id"] == call_id {
        let output = payload["output"].as_str()?;
        return output.lines().find_map(|l| {
            l.strip_prefix("Process exited with code ")?
                .trim()
                .parse()
                .ok()
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines as Codex 0.171.0 wrote them for `test -d /gs38-missing-dir`
    /// (the real-harness suite's `a_command_that_fails_silently_becomes_a_candidate`).
    const ROLLOUT: &str = r#"{"timestamp":"2026-11-29T09:39:39.869Z","ordinal":10,"type":"response_item","payload":{"type":"function_call","id":"fc_call_silent","name":"exec_command","arguments":"{\"cmd\":\"test -d /gs38-missing-dir\"}","call_id":"call_silent"}}
{"timestamp":"2026-11-29T09:39:40.035Z","ordinal":12,"type":"event_msg","payload":{"type":"item_completed","item":{"type":"CommandExecution","id":"call_silent","status":"failed","aggregated_output":"","exit_code":1}}}
{"timestamp":"2026-11-29T09:39:40.060Z","ordinal":13,"type":"response_item","payload":{"type":"function_call_output","call_id":"call_silent","output":"Chunk ID: 22f228\nWall time: 0.0000 seconds\nProcess exited with code 1\nOriginal token count: 0\nOutput:\n"}}
"#;

    #[test]
    fn the_exit_code_of_a_call_is_found_by_its_id() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("rollout-2026-11-29T09-39-39-x.jsonl");
        std::fs::write(&path, ROLLOUT).expect("write");
        assert_eq!(codex_exit_code(&path, "call_silent"), Some(1));
        assert_eq!(codex_exit_code(&path, "call_other"), None);
        // Only the output line: read from it.
        let only_output: String = ROLLOUT.lines().skip(2).collect();
        std::fs::write(&path, only_output).expect("write");
        assert_eq!(codex_exit_code(&path, "call_silent"), Some(1));
        // Another file name is not Codex's transcript: not read.
        let other = dir.path().join("notes.jsonl");
        std::fs::write(&other, ROLLOUT).expect("write");
        assert_eq!(codex_exit_code(&other, "call_silent"), None);
    }
}
