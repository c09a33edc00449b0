//! Micro reflection: what one finished tool call says. The rules are
//! deterministic and read, in order, the harness's refusal, the exit code,
//! and the summary lines of common runners, so that `42 passed, 0 failed`
//! is a success and a word like `failed` or `revert` in passing is nothing.

use std::sync::LazyLock;

use regex::bytes::{Regex as BytesRegex, RegexSet as BytesSet};
use regex::{Regex, RegexSet};
use regex_automata::{meta, util::syntax};

use super::payload::{ToolCall, ToolKind, first_line};

crate::directive::string_enum!(
    /// How a tool call went.
    Class {
        Success => "success",
        /// It ran to the end, but reports problems (failures with exit 0,
        /// warnings) or undid earlier work.
        Partial => "partial",
        Failure => "failure",
        /// The harness, a hook or a permission refused it.
        Blocked => "blocked",
        /// It did not really run: interrupted, or nothing to run.
        Skipped => "skipped",
        /// Nothing of the code changed or was checked: a read, a search, a plan.
        Inapplicable => "inapplicable",
    }
);

crate::directive::string_enum!(
    /// What kind of work the call was, where one applies.
    Sub {
        Test => "test",
        Lint => "lint",
        Typecheck => "typecheck",
        Build => "build",
        Revert => "revert",
        Command => "command",
        Write => "write",
        /// A subagent's task, read from what the subagent reported.
        Delegate => "delegate",
    }
);

/// The reading of one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    pub class: Class,
    pub sub: Option<Sub>,
    /// The line that decided a non-success, as printed (for the candidate's
    /// excerpt and signature).
    pub evidence: Option<String>,
}

/// Classifies one tool call.
pub fn classify(call: &ToolCall) -> Reading {
    let sub = match call.kind {
        ToolKind::Shell => Some(call.command.as_deref().map_or(Sub::Command, sub_of_command)),
        ToolKind::Write => Some(Sub::Write),
        ToolKind::Delegate => Some(Sub::Delegate),
        ToolKind::Read | ToolKind::Other => None,
    };
    let reading = |class, evidence: Option<&str>| Reading {
        class,
        sub,
        evidence: evidence.map(excerpt),
    };
    if let Some(reason) = &call.denied {
        return reading(Class::Blocked, Some(reason));
    }
    // A read that failed (a file that is not there) is a mistake like any
    // other; one that did not changed and checked nothing.
    if call.kind == ToolKind::Read && call.error.is_none() {
        return reading(Class::Inapplicable, None);
    }
    let said = call.error.as_deref().unwrap_or(&call.output);
    // A refusal is what a call that did not succeed says: the output of one
    // that did may quote the words.
    if (call.error.is_some() || call.exit_code != Some(0))
        && let Some(line) = refusal_line(said)
    {
        return reading(Class::Blocked, Some(line));
    }
    if call.interrupted {
        return reading(Class::Skipped, Some("interrupted"));
    }
    if call.kind == ToolKind::Delegate && call.error.is_none() {
        // What a subagent reports of its own task: the one signal of a
        // task it gave up on or undid.
        return match delegate_line(&call.output) {
            Some((class, line)) => reading(class, Some(line)),
            None => reading(Class::Success, None),
        };
    }
    if call.kind != ToolKind::Shell {
        return match &call.error {
            Some(e) => reading(Class::Failure, Some(e)),
            None => reading(Class::Success, None),
        };
    }
    // A shell command.
    if call.exit_code == Some(126) {
        // The shell found the program but may not run it.
        return reading(Class::Blocked, first_line(said));
    }
    let summary = Summary::of(&call.output);
    // pytest exits 5 when it collected nothing; any other failure, or a
    // failing line beside a package without tests, is a failure.
    if summary.ran_nothing
        && matches!(call.exit_code, None | Some(0) | Some(5))
        && failure_line(said).is_none()
    {
        return reading(Class::Skipped, summary.evidence.as_deref());
    }
    match call.exit_code {
        // A run whose summary reports failures failed, whatever its exit
        // code: `cargo test | tail` exits 0, and so does `pytest || true`.
        Some(0) if summary.failed > 0 => reading(
            Class::Failure,
            failing_test(said).or(summary.evidence.as_deref()),
        ),
        Some(0)
            if summary.warnings > 0
                && matches!(sub, Some(Sub::Lint | Sub::Build | Sub::Typecheck)) =>
        {
            reading(Class::Partial, summary.evidence.as_deref())
        }
        Some(0) if sub == Some(Sub::Revert) => reading(Class::Partial, call.command.as_deref()),
        Some(0) => reading(Class::Success, None),
        Some(1) if answers_no(call.command.as_deref()) => reading(Class::Success, None),
        Some(_) => {
            let line = failing_test(said)
                .map(str::to_owned)
                .or(summary.evidence)
                .or_else(|| failure_line(said).map(str::to_owned))
                .or_else(|| first_line(said).map(str::to_owned));
            reading(Class::Failure, line.as_deref())
        }
        // No exit code (Codex, a shell that did not start): the error, the
        // summary, else the output's own words.
        None if call.error.is_some() => reading(Class::Failure, call.error.as_deref()),
        None if summary.failed > 0 => reading(
            Class::Failure,
            failing_test(said).or(summary.evidence.as_deref()),
        ),
        None if summary.passed > 0 => reading(Class::Success, None),
        None => match failure_line(said) {
            Some(line) => reading(Class::Failure, Some(line)),
            None if sub == Some(Sub::Revert) => reading(Class::Partial, call.command.as_deref()),
            None => reading(Class::Success, None),
        },
    }
}

/// Most characters of a reading's evidence.
pub const EVIDENCE_CHARS: usize = 200;

fn excerpt(line: &str) -> String {
    crate::display::truncate(line.trim(), EVIDENCE_CHARS)
}

/// Commands whose exit 1 means "no" rather than "failed": no match, a
/// difference, a false test.
fn answers_no(command: Option<&str>) -> bool {
    let Some(command) = command else { return false };
    let Some(last) = segments(command).last().map(|s| words(s)) else {
        return false;
    };
    matches!(
        last.first().map(String::as_str),
        Some("grep" | "egrep" | "fgrep" | "rg" | "ag" | "diff" | "cmp" | "test" | "[")
    )
}

static REFUSALS: LazyLock<RegexSet> = LazyLock::new(|| {
    RegexSet::new([
        r"(?i)^tool execution blocked(?-u:\b)",
        r"(?i)(?-u:\b)blocked by (?:a |the )?(?:[0-9A-Za-z_]+ )?hook(?-u:\b)",
        r"(?i)^(?:[0-9A-Za-z_]+ )?hook (?:error|blocked)(?-u:\b)",
        r"(?i)(?-u:\b)permission to use \S+ (?:has been|was) denied(?-u:\b)",
        r"(?i)^the user doesn't want to proceed with this tool use(?-u:\b)",
        r"(?i)(?-u:\b)(?:rejected|denied|declined) by (?:the )?(?:user|policy|permission rules?)(?-u:\b)",
        r"(?i)^(?:the )?user (?:rejected|denied|declined)(?-u:\b)",
        r"(?i)(?-u:\b)not allowed by (?:the )?(?:policy|sandbox|permission)",
        r"(?i)(?-u:\b)(?:edit|write|change|patch|call|command|tool call|tool use) (?:was|has been) (?:blocked|denied|refused)(?-u:\b)",
    ])
    .expect("constant patterns compile")
});

/// The first line of `text` in which a harness, a hook or a permission
/// refused the call.
fn refusal_line(text: &str) -> Option<&str> {
    // Most calls were not refused: the patterns are compiled only for text
    // with one of their words.
    const WORDS: [&str; 7] = [
        "block",
        "denied",
        "reject",
        "declin",
        "allowed",
        "refus",
        "doesn't want",
    ];
    text.lines()
        .take(5)
        .map(str::trim)
        .filter(|l| {
            let lower = l.to_ascii_lowercase();
            WORDS.iter().any(|w| lower.contains(w))
        })
        .find(|l| REFUSALS.is_match(l))
}

// FAILURE and FAILING_TEST read a whole output (up to 32 kB) at every
// failed call: as bytes without Unicode classes, as SUMMARY_LINES below,
// they compile in half the time. `\s` is then ASCII white space only (a
// no-break space is not), and `\S` and `.` take any other byte.
static FAILURE: LazyLock<BytesRegex> = LazyLock::new(|| {
    bytes_regex(
        r"(?m)^[ \t]*(?:error(?:\[[0-9A-Za-z_]+\])?:|Error:|FAILED(?-u:\b)|FAIL(?-u:\b)|fatal:|make: \*\*\*|panicked at|thread '.*' panicked|Traceback \(most recent call last\)|npm ERR!|\S+: command not found|.*: No such file or directory$|E\s{3}|ERROR(?-u:\b)|[0-9A-Za-z_]*(?:Error|Exception): )",
    )
});

static FAILING_TEST: LazyLock<BytesRegex> = LazyLock::new(|| {
    bytes_regex(
        r"(?m)^(?:test \S+ \.\.\. FAILED$|\s*FAIL \[\s*[0-9.]+s\] .+$|FAILED \S+|--- FAIL: \S+|\s*● .+›.+$|\s*(?:×|✗|FAIL) \S+.*>.+$)",
    )
});

/// The first line naming a test that failed (cargo test and nextest,
/// pytest, go test, jest, vitest): two runs that fail the same test fail
/// the same way, whatever their counts.
fn failing_test(text: &str) -> Option<&str> {
    let m = FAILING_TEST.find(text.as_bytes())?;
    // A match starts at a line's start and ends at its end or at ASCII
    // white space: always between two characters.
    text.get(m.range()).map(str::trim)
}

static DELEGATE_FAILED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?-u:\b)(?:ran out of (?:context|time|tokens|turns|budget)|(?:could not|couldn't|was unable to|unable to|failed to|did not|didn't) (?:finish|complete|fix|make .{1,40} pass|get .{1,40} to (?:work|pass))|gave up(?-u:\b)|(?:tests?|build|checks?) (?:are |is )?still (?:fails?|failing|failed|broken)(?-u:\b))",
    )
    .expect("a constant pattern compiles")
});

static DELEGATE_REVERTED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?-u:\b)(?:reverted|rolled back|undid|backed out)(?-u:\b)")
        .expect("a constant pattern compiles")
});

/// What a subagent's final report says of its task, and the line that
/// says it: a task it did not finish is a failure, work it undid a partial
/// (`revert`). Read only in its first lines, where a report says how it went.
/// "Tests failed before the fix" is history, not the outcome: only tests
/// *still* failing count.
fn delegate_line(text: &str) -> Option<(Class, &str)> {
    // Most reports say nothing of the kind: the patterns (some 2 ms to
    // compile, at every subagent's stop) are compiled only for a report
    // with one of the words they need.
    const WORDS: [&str; 13] = [
        "ran out of",
        "could not",
        "couldn't",
        "unable to",
        "failed to",
        "did not",
        "didn't",
        "gave up",
        "still",
        "revert",
        "rolled back",
        "undid",
        "backed out",
    ];
    let head: String = text.lines().take(20).collect::<Vec<_>>().join("\n");
    let lower = head.to_lowercase();
    if !WORDS.iter().any(|w| lower.contains(w)) {
        return None;
    }
    let lines = || text.lines().take(20).map(str::trim);
    lines()
        .find(|l| DELEGATE_FAILED.is_match(l))
        .map(|l| (Class::Failure, l))
        .or_else(|| {
            lines()
                .find(|l| DELEGATE_REVERTED.is_match(l))
                .map(|l| (Class::Partial, l))
        })
}

/// The first line that reads as a failure, where no exit code says.
fn failure_line(text: &str) -> Option<&str> {
    let at = FAILURE.find(text.as_bytes())?.start();
    let bytes = text.as_bytes();
    let start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |i| i + 1);
    let end = memchr::memchr(b'\n', &bytes[at..]).map_or(text.len(), |i| at + i);
    // Both are at a line's ends.
    text.get(start..end).map(str::trim)
}

/// What the summary lines of the runners in an output add up to.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Summary {
    pub passed: u64,
    /// Failed tests, errors.
    pub failed: u64,
    pub warnings: u64,
    /// Tests skipped (or ignored).
    pub skipped: u64,
    /// A runner said it ran nothing, or that it skipped everything.
    pub ran_nothing: bool,
    /// The summary line that shows the worst of it.
    pub evidence: Option<String>,
}

/// Summary lines of cargo test/nextest/clippy, pytest, jest/vitest, go
/// test, tsc, eslint, ruff and mypy, each with whether the line alone says
/// something failed. Counts are read only on these lines, so a log line
/// that says `3 failed connections` counts nothing.
const SUMMARY: &[(&str, bool)] = &[
    (
        r"^test result: (?:ok|FAILED)\. [0-9]+ passed; [0-9]+ failed",
        false,
    ),
    (r"^\s*Summary \[.*\] [0-9]+ tests? run: ", false),
    (
        r"^=+ .*(?-u:\b)(?:passed|failed|errors?|skipped|xfailed|deselected)(?-u:\b).*=+$",
        false,
    ),
    (r"^[0-9]+ (?:passed|failed)(?-u:\b).* in [0-9.]+s", false),
    (r"^Tests:\s+[0-9]+ ", false),
    (r"^\s*Tests\s+[0-9]+ (?:passed|failed|skipped)", false),
    (r"^Found [0-9]+ errors?(?-u:\b)", false),
    (r"^✖ [0-9]+ problems? \(", false),
    (r"^warning: .* generated [0-9]+ warnings?", false),
    (r"^error: could not compile(?-u:\b)", true),
    (r"^ok\s+\S+\s+(?:[0-9.]+s|\(cached\))", false),
    (r"^FAIL\s+\S+\s+[0-9.]+s", true),
    (r"^--- FAIL: ", true),
    (r"^Success: no issues found", false),
    (r"^All checks passed!", false),
];

// Summary lines are ASCII but for a marker or two: read as bytes without
// Unicode classes, these compile several times faster, and reflect micro
// compiles them on every tool call.
static SUMMARY_LINES: LazyLock<BytesSet> = LazyLock::new(|| {
    regex::bytes::RegexSetBuilder::new(SUMMARY.iter().map(|(re, _)| re))
        .unicode(false)
        .build()
        .expect("constant patterns compile")
});

static COUNT: LazyLock<BytesRegex> = LazyLock::new(|| {
    bytes_regex(
        r"([0-9]+) (passed|failed|errors?|warnings?|problems?|tests? run|skipped|ignored|xfailed|xpassed)(?-u:\b)",
    )
});

static NOTHING_RAN: LazyLock<BytesRegex> = LazyLock::new(|| {
    bytes_regex(
        r"(?m)^(?:running 0 tests$|=+ no tests ran(?-u:\b)|collected 0 items(?-u:\b)|No tests found(?-u:\b)|no test files$|\?\s+\S+\s+\[no test files\]$|Starting 0 tests(?-u:\b))",
    )
});

/// A word every line [`SUMMARY`] matches holds one of (in its case): an
/// output with none has no summary line, and the patterns (a third of a
/// millisecond to compile, at every tool call) are not compiled for it.
const SUMMARY_WORDS: [&str; 13] = [
    "test result: ",
    "Summary [",
    "passed",
    "failed",
    "error",
    "skipped",
    "deselected",
    "Tests",
    "✖ ",
    "warning: ",
    "ok",
    "FAIL",
    "Success: ",
];

/// The same for [`NOTHING_RAN`].
const NOTHING_RAN_WORDS: [&str; 5] = [
    "0 tests",
    "no tests ran",
    "0 items",
    "No tests found",
    "no test files",
];

fn holds_any(text: &str, words: &[&str]) -> bool {
    words
        .iter()
        .any(|w| memchr::memmem::find(text.as_bytes(), w.as_bytes()).is_some())
}

impl Summary {
    pub fn of(output: &str) -> Summary {
        let mut s = Summary::default();
        let mut worst: Option<(u64, &str)> = None;
        let mut skipped_line = None;
        let lines = holds_any(output, &SUMMARY_WORDS).then(|| output.lines());
        for line in lines.into_iter().flatten() {
            let line = line.trim_end();
            let matched = SUMMARY_LINES.matches(line.as_bytes());
            if !matched.matched_any() {
                continue;
            }
            let (mut passed, mut failed, mut warnings, mut skipped) = (0, 0, 0, 0);
            for c in COUNT.captures_iter(line.as_bytes()) {
                let n: u64 = std::str::from_utf8(&c[1]).map_or(0, |d| d.parse().unwrap_or(0));
                match &c[2] {
                    b"passed" => passed += n,
                    b"failed" | b"error" | b"errors" => failed += n,
                    b"warning" | b"warnings" => warnings += n,
                    b"skipped" => skipped += n,
                    // eslint's `✖ 5 problems (3 errors, 2 warnings)` counts
                    // the errors and warnings again.
                    _ => {}
                }
            }
            if matched.iter().any(|i| SUMMARY[i].1) {
                failed = failed.max(1);
            }
            // go test's `ok  pkg  0.01s` is a package that passed.
            if line.starts_with("ok") && passed == 0 {
                passed = 1;
            }
            s.passed += passed;
            s.failed += failed;
            s.warnings += warnings;
            s.skipped += skipped;
            if skipped > 0 && passed == 0 && failed == 0 && skipped_line.is_none() {
                skipped_line = Some(line);
            }
            let weight = failed * 2 + warnings.min(1);
            if weight > 0 && worst.is_none_or(|(w, _)| weight > w) {
                worst = Some((weight, line));
            }
        }
        s.evidence = worst.map(|(_, l)| excerpt(l));
        if s.passed == 0
            && s.failed == 0
            && holds_any(output, &NOTHING_RAN_WORDS)
            && let Some(m) = NOTHING_RAN.find(output.as_bytes())
        {
            s.ran_nothing = true;
            s.evidence = Some(excerpt(&String::from_utf8_lossy(m.as_bytes())));
        } else if s.passed == 0
            && s.failed == 0
            && let Some(line) = skipped_line
        {
            // `===== 5 skipped in 0.01s =====`: every test skipped, nothing ran.
            s.ran_nothing = true;
            s.evidence = Some(excerpt(line));
        }
        s
    }
}

/// The sub-kind of a command line: the strongest of its parts (`cargo
/// build && cargo test` is a test run). Only the command decides a revert,
/// never what it printed.
pub fn sub_of_command(command: &str) -> Sub {
    segments(command)
        .iter()
        .map(|seg| sub_of_words(&words(seg)))
        .min_by_key(|s| match s {
            Sub::Revert => 0,
            Sub::Test => 1,
            Sub::Typecheck => 2,
            Sub::Lint => 3,
            Sub::Build => 4,
            _ => 5,
        })
        .unwrap_or(Sub::Command)
}

/// The simple commands of a command line, split on `&&`, `||`, `;`, `|`
/// and newlines (outside quotes).
fn segments(command: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut quote, mut start) = (None, 0);
    let bytes = command.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match (quote, b) {
            (Some(q), _) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'\'' | b'"') => quote = Some(b),
            (None, b'&' | b'|' | b';' | b'\n') => {
                out.push(&command[start..i]);
                if matches!(bytes.get(i + 1), Some(b'&' | b'|')) {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    out.push(&command[start..]);
    out.into_iter()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

/// The words of a simple command, without the environment assignments and
/// wrappers (`sudo`, `env`, `time`, `timeout 60`, `npx`, `uv run`, …) in
/// front of the program, the program by its file name.
fn words(segment: &str) -> Vec<String> {
    let mut w: Vec<String> = shlex::split(segment)
        .unwrap_or_else(|| segment.split_whitespace().map(str::to_owned).collect());
    while let Some(first) = w.first() {
        let skip = if first.contains('=') && !first.starts_with('-') {
            1
        } else {
            match first.as_str() {
                "sudo" | "env" | "time" | "nice" | "nohup" | "exec" | "command" | "npx"
                | "bunx" | "pnpx" | "stdbuf" => 1,
                "timeout" => 2,
                "uv" | "poetry" | "pipenv" | "pdm" | "hatch" | "rye"
                    if w.get(1).is_some_and(|a| a == "run") =>
                {
                    2
                }
                "bundle" if w.get(1).is_some_and(|a| a == "exec") => 2,
                "pnpm" | "yarn" if w.get(1).is_some_and(|a| a == "exec" || a == "dlx") => 2,
                "python" | "python3" | "py" if w.get(1).is_some_and(|a| a == "-m") => 2,
                _ => 0,
            }
        };
        if skip == 0 {
            break;
        }
        w.drain(..skip.min(w.len()));
    }
    if let Some(first) = w.first_mut()
        && let Some(name) = first.rsplit('/').next()
    {
        *first = name.to_owned();
    }
    w
}

fn sub_of_words(w: &[String]) -> Sub {
    let arg = |i: usize| w.get(i).map(String::as_str).unwrap_or("");
    let has = |flag: &str| w.iter().any(|a| a == flag);
    match arg(0) {
        "git" => match arg(1) {
            "revert" | "restore" => Sub::Revert,
            "reset" if has("--hard") => Sub::Revert,
            "checkout" if has("--") || has(".") => Sub::Revert,
            _ => Sub::Command,
        },
        "jj" if matches!(arg(1), "undo" | "restore" | "abandon") => Sub::Revert,
        "cargo" => match arg(1) {
            "test" | "nextest" | "t" => Sub::Test,
            "clippy" => Sub::Lint,
            "fmt" if has("--check") => Sub::Lint,
            "check" | "c" => Sub::Typecheck,
            "build" | "b" | "install" => Sub::Build,
            _ => Sub::Command,
        },
        "pytest" | "py.test" | "tox" | "nox" | "jest" | "vitest" | "mocha" | "ava" | "rspec"
        | "phpunit" | "ctest" | "nextest" => Sub::Test,
        "go" => match arg(1) {
            "test" => Sub::Test,
            "vet" => Sub::Typecheck,
            "build" | "install" => Sub::Build,
            _ => Sub::Command,
        },
        "tsc" | "vue-tsc" | "mypy" | "pyright" | "pyre" => Sub::Typecheck,
        "eslint" | "ruff" | "flake8" | "pylint" | "golangci-lint" | "rubocop" | "shellcheck"
        | "stylelint" | "biome" => Sub::Lint,
        "prettier" | "black" if has("--check") => Sub::Lint,
        "npm" | "pnpm" | "yarn" | "bun" | "deno" => {
            let name = match arg(1) {
                "run" | "run-script" => arg(2),
                other => other,
            };
            // `test:unit`, `lint:fix`: the script's family is its first part.
            match name.split(':').next().unwrap_or(name) {
                "test" | "tests" => Sub::Test,
                "lint" => Sub::Lint,
                "typecheck" | "type-check" | "check" => Sub::Typecheck,
                "build" => Sub::Build,
                _ => Sub::Command,
            }
        }
        "make" | "just" => match arg(1) {
            "test" | "tests" | "check" => Sub::Test,
            "lint" => Sub::Lint,
            "" | "all" | "build" => Sub::Build,
            _ => Sub::Command,
        },
        "mvn" | "gradle" | "./gradlew" | "gradlew" | "dotnet" => match arg(1) {
            "test" | "verify" => Sub::Test,
            "build" | "compile" | "package" | "assemble" => Sub::Build,
            _ => Sub::Command,
        },
        "gcc" | "g++" | "clang" | "clang++" | "rustc" | "javac" | "cmake" | "ninja" => Sub::Build,
        "docker" | "podman" if arg(1) == "build" => Sub::Build,
        _ => Sub::Command,
    }
}

fn bytes_regex(pattern: &str) -> BytesRegex {
    regex::bytes::RegexBuilder::new(pattern)
        .unicode(false)
        .build()
        .expect("a constant pattern compiles")
}

/// Most characters of a signature.
pub const SIGNATURE_CHARS: usize = 160;

// VOLATILE and PATHS read only a signature's line (EVIDENCE_CHARS at most),
// where a regex without the lazy and the one-pass DFAs searches as fast,
// and compiles in a quarter of the time: reflect micro compiles them at
// every failed call. Their classes are ASCII.
static VOLATILE: LazyLock<meta::Regex> =
    LazyLock::new(|| line_regex(r"0x[0-9a-f]+|\b[0-9a-f]{7,}\b|[0-9]+(?:\.[0-9]+)*"));

static PATHS: LazyLock<meta::Regex> =
    LazyLock::new(|| line_regex(r"(?:[[0-9A-Za-z_].~-]*/)+([[0-9A-Za-z_].-]+)"));

/// A regex for a line of a few hundred bytes at most, ASCII classes only:
/// the PikeVM and the backtracker alone.
fn line_regex(pattern: &str) -> meta::Regex {
    meta::Regex::builder()
        .syntax(syntax::Config::new().unicode(false))
        .configure(meta::Config::new().hybrid(false).onepass(false).dfa(false))
        .build(pattern)
        .expect("a constant pattern compiles")
}

/// `text` with each match of `re` replaced by `with`, or by what its first
/// group matched where `with` is `None`.
fn replace_all(re: &meta::Regex, text: &str, with: Option<&str>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for caps in re.captures_iter(text) {
        let Some(m) = caps.get_match() else { continue };
        out.push_str(&text[last..m.start()]);
        match with {
            Some(with) => out.push_str(with),
            None => out.push_str(caps.get_group(1).map_or("", |g| &text[g.range()])),
        }
        last = m.end();
    }
    out.push_str(&text[last..]);
    out
}

/// What makes two failures "the same way": the sub-kind, the program and
/// its first word, and the deciding line with numbers, hashes and folders
/// taken out (`src/a.rs:12:5` and `lib/a.rs:40:1` read the same).
pub fn signature(call: &ToolCall, reading: &Reading) -> String {
    let program = call
        .command
        .as_deref()
        .and_then(|c| segments(c).last().map(|s| words(s)))
        .map(|w| {
            // `npm run lint`: the script is what runs.
            let n = if w.get(1).is_some_and(|a| a == "run") {
                3
            } else {
                2
            };
            let w: Vec<&str> = w
                .iter()
                .map(String::as_str)
                .filter(|a| !a.starts_with('-'))
                .take(n)
                .collect();
            w.join(" ")
        })
        .unwrap_or_else(|| call.tool.to_lowercase());
    let line = reading.evidence.as_deref().unwrap_or("").to_lowercase();
    let line = replace_all(&PATHS, &line, None);
    let line = replace_all(&VOLATILE, &line, Some("#"));
    let line: String = line.split_whitespace().collect::<Vec<_>>().join(" ");
    let sub = reading.sub.map_or("-", Sub::as_str);
    let mut sig = format!("{}:{sub}:{program}:{line}", reading.class.as_str());
    if let Some((at, _)) = sig.char_indices().nth(SIGNATURE_CHARS) {
        sig.truncate(at);
    }
    sig
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subagents_report_is_read_for_its_outcome_not_its_history() {
        let class = |t: &str| delegate_line(t).map(|(c, _)| c);
        for done in [
            "Fixed the tokenizer. Tests failed before the fix; all 40 pass now.",
            "Done: the loader is in src/config.rs and its tests pass.",
        ] {
            assert_eq!(class(done), None, "{done}");
        }
        for failed in [
            "Ran out of context before finishing.",
            "I could not finish the migration: the schema is half done.",
            "The build is still broken after my change.",
            "I gave up after three attempts.",
        ] {
            assert_eq!(class(failed), Some(Class::Failure), "{failed}");
        }
        assert_eq!(
            class("I reverted the change after it broke the build."),
            Some(Class::Partial)
        );
    }

    #[test]
    fn sub_kinds_come_from_the_command_line() {
        for (command, sub) in [
            ("cargo test -p core", Sub::Test),
            ("cd app && npm test", Sub::Test),
            ("RUST_LOG=debug timeout 60 cargo nextest run", Sub::Test),
            ("uv run pytest -x tests/", Sub::Test),
            ("python3 -m pytest", Sub::Test),
            ("npm run test:unit", Sub::Test),
            ("cargo build && cargo test", Sub::Test),
            ("cargo clippy --all-targets -- -D warnings", Sub::Lint),
            ("npx eslint 'src/**/*.ts'", Sub::Lint),
            ("ruff check .", Sub::Lint),
            ("npx tsc --noEmit", Sub::Typecheck),
            ("mypy src", Sub::Typecheck),
            ("cargo build --release", Sub::Build),
            ("make", Sub::Build),
            ("git revert --no-edit HEAD", Sub::Revert),
            ("git checkout -- src/a.rs", Sub::Revert),
            ("git reset --hard HEAD~1", Sub::Revert),
            ("git checkout main", Sub::Command),
            ("echo 'cargo test && git revert' > notes.txt", Sub::Command),
            ("ls -la", Sub::Command),
            ("", Sub::Command),
        ] {
            assert_eq!(sub_of_command(command), sub, "{command:?}");
        }
    }

    #[test]
    fn counts_are_read_on_summary_lines_only() {
        let s = Summary::of(
            "3 failed connections were retried\ntest result: ok. 42 passed; 0 failed; 0 ignored",
        );
        assert_eq!((s.passed, s.failed, s.warnings), (42, 0, 0));
        let s = Summary::of("✖ 5 problems (3 errors, 2 warnings)");
        assert_eq!((s.failed, s.warnings), (3, 2));
        let s = Summary::of(
            "ok  \texample.com/a\t0.01s\n--- FAIL: TestB (0.00s)\nFAIL\texample.com/b\t0.02s",
        );
        assert!(s.passed >= 1 && s.failed >= 1, "{s:?}");
        assert_eq!(s.evidence.as_deref(), Some("--- FAIL: TestB (0.00s)"));
        assert!(Summary::of("running 0 tests\n\ntest result: ok. 0 passed; 0 failed").ran_nothing);
        assert!(!Summary::of("running 3 tests\ntest result: ok. 3 passed; 0 failed").ran_nothing);
    }

    #[test]
    fn failing_lines_are_whole_lines_around_other_scripts() {
        let out = "Kompilierung läuft…\n  ● Parser › reads “quotes”\nerror: kaputt ü\n";
        assert_eq!(failing_test(out), Some("● Parser › reads “quotes”"));
        // Its leading white space may span a blank line: trimmed, the line.
        assert_eq!(
            failing_test("ok\n\n  FAIL [ 0.1s] a::b\n"),
            Some("FAIL [ 0.1s] a::b")
        );
        assert_eq!(failure_line(out), Some("error: kaputt ü"));
        assert_eq!(failure_line("alles gut ✓"), None);
        // The line itself, not the blank line before it (`\s` would span it).
        assert_eq!(failure_line("foo\n\nerror: x"), Some("error: x"));
        assert_eq!(
            failure_line("build\n   \nE   assert 1 == 2"),
            Some("E   assert 1 == 2")
        );
    }

    #[test]
    fn a_signature_line_loses_folders_numbers_and_hashes() {
        let line = "error at /home/u/src/x.rs:12:5 in 0xdeadbeef, commit abc1234ef (ü)";
        let line = replace_all(&PATHS, line, None);
        assert_eq!(
            line,
            "error at x.rs:12:5 in 0xdeadbeef, commit abc1234ef (ü)"
        );
        let line = replace_all(&VOLATILE, &line, Some("#"));
        assert_eq!(line, "error at x.rs:#:# in #, commit # (ü)");
    }

    #[test]
    fn every_summary_line_holds_a_word_the_output_is_first_searched_for() {
        let lines = [
            "test result: FAILED. 41 passed; 1 failed; 0 ignored",
            "     Summary [   0.214s] 12 tests run: 12 passed, 0 skipped",
            "===== 3 passed, 1 deselected in 0.12s =====",
            "===== 2 xfailed in 0.02s =====",
            "5 passed in 0.31s",
            "Tests:       1 failed, 4 passed, 5 total",
            "      Tests  4 passed (4)",
            "Found 3 errors in 2 files (checked 8 source files)",
            "✖ 5 problems (3 errors, 2 warnings)",
            "warning: `app` (lib) generated 2 warnings",
            "error: could not compile `app` (lib) due to 1 previous error",
            "ok  \texample.com/a\t0.01s",
            "FAIL\texample.com/b\t0.02s",
            "--- FAIL: TestB (0.00s)",
            "Success: no issues found in 4 source files",
            "All checks passed!",
        ];
        let mut matched = vec![false; SUMMARY.len()];
        for line in lines {
            assert!(holds_any(line, &SUMMARY_WORDS), "{line}");
            for i in SUMMARY_LINES.matches(line.as_bytes()).iter() {
                matched[i] = true;
            }
        }
        assert!(
            matched.iter().all(|m| *m),
            "a summary pattern without an example: {matched:?}"
        );
        for nothing in [
            "running 0 tests",
            "===== no tests ran in 0.01s =====",
            "collected 0 items",
            "No tests found, exiting with code 1",
            "no test files",
            "?   \texample.com/c\t[no test files]",
            "Starting 0 tests across 0 binaries",
        ] {
            assert!(NOTHING_RAN.is_match(nothing.as_bytes()), "{nothing}");
            assert!(holds_any(nothing, &NOTHING_RAN_WORDS), "{nothing}");
        }
        assert_eq!(Summary::of("hello\nworld"), Summary::default());
    }

    #[test]
    fn segments_split_outside_quotes() {
        assert_eq!(
            segments("a && b || c; d | e\nf"),
            ["a", "b", "c", "d", "e", "f"]
        );
        assert_eq!(segments("echo 'x && y' && z"), ["echo 'x && y'", "z"]);
        assert_eq!(segments("  "), Vec::<&str>::new());
    }
}
