//! How well a deliberation grounds what it says.

use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use super::{MAX_EXCERPT_CHARS, front_matter_end, lines, regex};
use crate::markdown::{Fence, is_quote};

/// How well a deliberation grounds what it says; lower is better (`as u8`
/// gives the number events record).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum Level {
    /// Output of a command or a test run.
    Execution = 1,
    /// A `path:line` citation of a changed file.
    Citation = 2,
    /// Nothing but reasoning.
    Reasoning = 3,
}

/// The evidence a deliberation gives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Evidence {
    /// The best level found.
    pub level: Level,
    /// 1-based line that proves `level` (none for [`Level::Reasoning`]).
    pub line: Option<usize>,
    /// That line, trimmed, at most [`MAX_EXCERPT_CHARS`] characters.
    pub excerpt: Option<String>,
    /// Every changed file cited with a line, in order of first citation,
    /// spelled as in `changed`.
    pub cited_files: Vec<String>,
}

/// Command runners whose lines start a command in a code block.
const RUNNERS: [&str; 12] = [
    "cargo", "npm", "npx", "pnpm", "yarn", "pytest", "make", "git", "node", "python", "python3",
    "go test",
];

static TEST_RESULT: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?x)
          (?i:\btest\s+result:\s*(?:ok|failed)\b)
        | (?i:\b[0-9]+\s+(?:passed|failed)\s*[,;]\s*[0-9]+\s+(?:passed|failed|skipped|ignored|errors?)\b)
        | (?i:\b[0-9]+\s+(?:passed|failed)(?:,\s*[0-9]+\s+\w+)*\s+in\s+[0-9]+(?:\.[0-9]+)?\s*s\b)
        | (?i:\btests?:\s+[0-9]+\s+(?:failed|passed|skipped|todo|total)\b)
        | \bFAILED\s+\S+::\S+
        | (?i:\bexit(?:ed)?\s+(?:code|status)\s*[:=]?\s*-?[0-9]+\b)
        | (?i:\bexited\s+with\s+(?:code\s+|status\s+)?-?[0-9]+\b)
        | ^(?:ok|FAIL)\s+\S+\s+[0-9]+(?:\.[0-9]+)?s\b
        | ^\s*---\s+(?:PASS|FAIL):\s+\S",
    )
});

static CITATION: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?:^|[^\w./:@#-])([\w.@+-]+(?:/[\w.@+-]+)*)(?::[0-9]+(?:[-–][0-9]+|:[0-9]+)?|#L[0-9]+(?:-L?[0-9]+)?)",
    )
});

/// Classify a deliberation's evidence.
///
/// - [`Level::Execution`]: a fenced code block with a command line (`$ `
///   or `> ` prompt, or one of `RUNNERS`) followed in the block by at
///   least one output line; or a test result line anywhere (`TEST_RESULT`:
///   `test result: ok. 12 passed`, `exit code 0`, …).
/// - [`Level::Citation`]: `path:line`, `path:line:col`, `path:12-20` or
///   `path#L12` whose path (a leading `./` ignored) is one of `changed`;
///   with no `changed` files, any cited path with an extension.
/// - [`Level::Reasoning`]: anything else.
///
/// Blockquotes outside code blocks (an echoed prompt) and YAML front
/// matter (as [`extract`](fn@super::extract) skips it) are not read. A code fence that never
/// closes runs to the end.
pub fn evidence(deliberation: &str, changed: &[String]) -> Evidence {
    let wanted: Vec<(&str, &String)> = changed
        .iter()
        .map(|c| (c.trim_start_matches("./"), c))
        .collect();
    let mut exec: Option<(usize, &str)> = None;
    let mut cite: Option<(usize, &str)> = None;
    let mut cited_files: Vec<String> = Vec::new();
    let mut fence: Option<Fence> = None;
    // The first command of the open fence still waiting for its output.
    let mut command: Option<(usize, &str)> = None;
    let skip = front_matter_end(deliberation).unwrap_or(0);
    for (n, line) in lines(deliberation).skip(skip) {
        if let Some(f) = fence {
            if f.closes(line) {
                fence = None;
                command = None;
                continue;
            }
            let t = line.trim();
            if is_command(t) {
                command.get_or_insert((n, line));
            } else if !t.is_empty()
                && let Some(cmd) = command
            {
                exec.get_or_insert(cmd);
            }
        } else if let Some((f, _)) = Fence::open(line) {
            fence = Some(f);
            continue;
        } else if is_quote(line) {
            continue;
        }
        if exec.is_none() && TEST_RESULT.is_match(line) {
            exec = Some((n, line));
        }
        for c in CITATION.captures_iter(line) {
            let (Some(all), Some(path)) = (c.get(0), c.get(1)) else {
                continue;
            };
            if line[all.end()..].starts_with(|ch: char| ch.is_alphanumeric() || ch == '_') {
                continue; // `a.rs:12px`, not a line number
            }
            let path = path.as_str().trim_start_matches("./");
            if let Some(&(_, spelled)) = wanted.iter().find(|(w, _)| *w == path) {
                cite.get_or_insert((n, line));
                if !cited_files.contains(spelled) {
                    cited_files.push(spelled.clone());
                }
            } else if wanted.is_empty() && has_extension(path) {
                cite.get_or_insert((n, line));
            }
        }
    }
    let (level, proof) = match (exec, cite) {
        (Some(p), _) => (Level::Execution, Some(p)),
        (None, Some(p)) => (Level::Citation, Some(p)),
        (None, None) => (Level::Reasoning, None),
    };
    Evidence {
        level,
        line: proof.map(|(n, _)| n),
        excerpt: proof.map(|(_, l)| excerpt(l)),
        cited_files,
    }
}

/// A command line in a code block: a prompt or a known runner.
fn is_command(t: &str) -> bool {
    if t.starts_with("$ ") || t.starts_with("> ") {
        return true;
    }
    RUNNERS.iter().any(|r| {
        t.strip_prefix(r)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
    })
}

/// Does the last path segment have an extension with a letter in it
/// (`a.rs`, `x.tsx`; not `v1.2`, not `.env`)?
fn has_extension(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rfind('.') {
        Some(dot) if dot > 0 => {
            let ext = &name[dot + 1..];
            !ext.is_empty() && ext.chars().any(|c| c.is_alphabetic())
        }
        _ => false,
    }
}

fn excerpt(line: &str) -> String {
    crate::display::truncate(line.trim(), MAX_EXCERPT_CHARS)
}

#[cfg(test)]
mod tests {
    use super::super::testing::strings;
    use super::*;

    // --- evidence -----------------------------------------------------------

    fn level(md: &str, changed: &[&str]) -> Level {
        evidence(md, &strings(changed)).level
    }

    #[test]
    fn execution_from_a_command_with_output() {
        for block in [
            "```\n$ cargo test\nrunning 3 tests\n```",
            "```console\n> npm test\n\n  3 passing\n```",
            "```sh\ncargo test --lib\n   Compiling x v0.1.0\n```",
            "```\npytest -q\n...\n```",
            "```\ngo test ./...\nok  example.com/x\n```",
            "```\nmake\nmake: Nothing to be done for 'all'.\n```",
            "```\ngit status\nOn branch main\n```",
            "```\n$ ls\n$ cat a.txt\nhello\n```",
        ] {
            let md = format!("I ran it:\n\n{block}\n");
            let ev = evidence(&md, &[]);
            assert_eq!(ev.level, Level::Execution, "{block:?}");
            assert_eq!(ev.line, Some(4), "{block:?}");
        }
        let ev = evidence("```\n  $ cargo test   \nok\n```", &[]);
        assert_eq!(ev.excerpt.as_deref(), Some("$ cargo test"));
    }

    #[test]
    fn a_code_block_without_a_command_or_output_is_not_execution() {
        for md in [
            "```rust\nfn main() {\n    println!(\"hi\");\n}\n```",
            "```\n$ cargo test\n```",
            "```\n$ cargo test\n\n```\nrunning 3 tests",
            "```\ncargo test\n$ cargo build\n```",
            "```python\nmake_thing()\ngitlab = 1\n```",
            "$ cargo test\nrunning 3 tests",
            "> $ cargo test\n> running 3 tests",
            "I ran the tests and they all passed.",
        ] {
            assert_eq!(level(md, &[]), Level::Reasoning, "{md:?}");
        }
    }

    #[test]
    fn execution_from_test_result_lines() {
        for line in [
            "test result: ok. 12 passed; 0 failed; 0 ignored",
            "test result: FAILED. 1 passed; 2 failed",
            "Summary: 12 passed, 0 failed",
            "=== 3 passed, 1 skipped in 0.52s ===",
            "Tests:       3 passed, 3 total",
            "FAILED tests/test_x.py::test_cache - AssertionError",
            "the command finished with exit code 0",
            "exit status 1",
            "Process exited with 2",
            "the job exited with code 137",
            "ok  \texample.com/pkg\t0.013s",
            "--- FAIL: TestCache (0.00s)",
        ] {
            let ev = evidence(&format!("Ran it.\n{line}\n"), &[]);
            assert_eq!(ev.level, Level::Execution, "{line:?}");
            assert_eq!(ev.line, Some(2), "{line:?}");
            assert_eq!(ev.excerpt.as_deref(), Some(line.trim()), "{line:?}");
        }
    }

    #[test]
    fn narrative_about_tests_is_not_execution() {
        for md in [
            "All tests passed.",
            "The tests should pass once this is fixed.",
            "12 tests passed according to the author",
            "It failed the test suite",
            "We exit early in the loop",
            "Failed to see how this works",
        ] {
            assert_eq!(level(md, &[]), Level::Reasoning, "{md:?}");
        }
    }

    #[test]
    fn citation_of_a_changed_file() {
        let changed = ["src/cache.rs", "./web/app.tsx"];
        for md in [
            "The key is built at src/cache.rs:42 without the tenant.",
            "See `src/cache.rs:42:7`.",
            "See (./src/cache.rs:42).",
            "Lines src/cache.rs:40-48 are the problem.",
            "[here](src/cache.rs#L42) is the bug",
            "Also web/app.tsx#L3-L9.",
            "**src/cache.rs:42**",
        ] {
            let ev = evidence(md, &strings(&changed));
            assert_eq!(ev.level, Level::Citation, "{md:?}");
            assert_eq!(ev.line, Some(1), "{md:?}");
        }
        let ev = evidence(
            "src/cache.rs:1 and web/app.tsx:2\nsrc/cache.rs:9 and src/other.rs:3",
            &strings(&changed),
        );
        assert_eq!(ev.cited_files, strings(&["src/cache.rs", "./web/app.tsx"]));
        assert_eq!(
            ev.excerpt.as_deref(),
            Some("src/cache.rs:1 and web/app.tsx:2")
        );
    }

    #[test]
    fn citations_that_do_not_count() {
        let changed = ["src/cache.rs"];
        for md in [
            "The bug is in src/other.rs:42.",
            "The bug is in src/cache.rs near the top.",
            "See lib/src/cache.rs:42.",
            "src/cache.rsx:42",
            "src/cache.rs:42px",
            "https://example.com/src/cache.rs:42",
            "> src/cache.rs:42 was in the prompt",
            "at 12:30 the job ran",
        ] {
            let ev = evidence(md, &strings(&changed));
            assert_eq!(ev.level, Level::Reasoning, "{md:?}");
            assert!(ev.cited_files.is_empty(), "{md:?}");
        }
    }

    #[test]
    fn with_no_changed_files_any_path_with_an_extension_counts() {
        assert_eq!(level("see src/anything.py:3", &[]), Level::Citation);
        assert_eq!(level("see Makefile:3", &[]), Level::Reasoning);
        assert_eq!(level("version v1.2:3", &[]), Level::Reasoning);
        assert_eq!(level("at 12:30", &[]), Level::Reasoning);
        assert!(evidence("see src/a.rs:3", &[]).cited_files.is_empty());
        // Without an extension, a changed file still counts.
        assert_eq!(level("see Makefile:3", &["Makefile"]), Level::Citation);
    }

    #[test]
    fn the_best_level_wins_and_cited_files_are_always_filled() {
        let md = "The key at src/cache.rs:42 ignores the tenant.\n\n```\n$ cargo test\ntest result: FAILED. 1 passed; 1 failed\n```";
        let ev = evidence(md, &strings(&["src/cache.rs"]));
        assert_eq!(ev.level, Level::Execution);
        assert_eq!(ev.line, Some(4));
        assert_eq!(ev.cited_files, strings(&["src/cache.rs"]));
    }

    #[test]
    fn pure_reasoning() {
        let ev = evidence("I believe the cache is wrong.", &strings(&["src/a.rs"]));
        assert_eq!(
            ev,
            Evidence {
                level: Level::Reasoning,
                line: None,
                excerpt: None,
                cited_files: vec![],
            }
        );
        assert_eq!(evidence("", &[]).level, Level::Reasoning);
    }

    #[test]
    fn excerpts_are_cut_to_120_characters() {
        let line = format!("src/a.rs:1 {}", "é".repeat(200));
        let ev = evidence(&line, &[]);
        let ex = ev.excerpt.expect("valid test input");
        assert_eq!(ex.chars().count(), MAX_EXCERPT_CHARS);
        assert!(ex.ends_with('…'));
    }

    #[test]
    fn levels_order_and_number() {
        assert!(Level::Execution < Level::Citation && Level::Citation < Level::Reasoning);
        assert_eq!(
            [Level::Execution, Level::Citation, Level::Reasoning].map(|l| l as u8),
            [1, 2, 3]
        );
    }
}
