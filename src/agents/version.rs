//! Which harness versions git-swarm's adapters were run against, and what
//! follows from a harness's version (read by the command line from the
//! harness's own `--version`).

use serde::Serialize;

use super::{Form, Harness};

/// A `major.minor.patch` version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Version(pub u64, pub u64, pub u64);

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

/// The first `N.N.N` in a harness's `--version` output (`2.1.332 (Claude
/// Code)`, `codex-cli 0.171.0`, `0.61.0`).
pub fn parse(output: &str) -> Option<Version> {
    output
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .find_map(|word| {
            let mut parts = word.split('.').map(|p| p.parse::<u64>().ok());
            match (parts.next(), parts.next(), parts.next()) {
                (Some(Some(a)), Some(Some(b)), Some(Some(c))) => Some(Version(a, b, c)),
                _ => None,
            }
        })
}

/// The program a harness is run as, where it has a command line here.
/// Cursor's agent has none in the registries git-swarm's suite installs from.
pub fn program(h: Harness) -> Option<&'static str> {
    match h {
        Harness::ClaudeCode => Some("claude"),
        Harness::Codex => Some("codex"),
        Harness::Gemini => Some("gemini"),
        Harness::Opencode => Some("opencode"),
        Harness::Cursor => None,
    }
}

/// The version the real-harness suite runs (tests/harness/package.json).
pub fn tested(h: Harness) -> Option<Version> {
    match h {
        Harness::ClaudeCode => Some(Version(2, 1, 332)),
        Harness::Codex => Some(Version(0, 171, 0)),
        Harness::Gemini => Some(Version(0, 61, 0)),
        Harness::Opencode => Some(Version(1, 18, 33)),
        Harness::Cursor => None,
    }
}

/// The first Claude Code that runs a command hook's `args` (the exec
/// form). An older one runs a bare `git-swarm`, which prints its usage and
/// exits 2: a blocking error that denies every subagent spawn.
pub const CLAUDE_EXEC_MIN: Version = Version(2, 1, 139);

/// The form install writes Claude Code's hooks in: exec for a Claude Code
/// known to run it, else the shell form every version runs.
pub fn claude_form(found: Option<Version>) -> Form {
    match found {
        Some(v) if v >= CLAUDE_EXEC_MIN => Form::Exec,
        _ => Form::Shell,
    }
}

/// How a harness's version stands against the one the suite runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Support {
    /// The version the suite runs.
    Tested,
    /// Newer: expected to work (the hooks' payloads only gain fields).
    Newer,
    /// Older: its hooks may lack events or fields git-swarm reads.
    Older,
}

pub fn support(h: Harness, v: Version) -> Option<Support> {
    let t = tested(h)?;
    Some(match v.cmp(&t) {
        std::cmp::Ordering::Equal => Support::Tested,
        std::cmp::Ordering::Greater => Support::Newer,
        std::cmp::Ordering::Less => Support::Older,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_from_each_harness_s_output() {
        assert_eq!(parse("2.1.332 (Claude Code)\n"), Some(Version(2, 1, 332)));
        assert_eq!(parse("codex-cli 0.171.0"), Some(Version(0, 171, 0)));
        assert_eq!(parse("0.61.0\n"), Some(Version(0, 61, 0)));
        assert_eq!(parse("v1.18.33"), Some(Version(1, 18, 33)));
        assert_eq!(parse("no version"), None);
    }

    #[test]
    fn an_old_claude_code_gets_the_shell_form() {
        assert_eq!(claude_form(Some(Version(2, 1, 332))), Form::Exec);
        assert_eq!(claude_form(Some(Version(2, 1, 139))), Form::Exec);
        assert_eq!(claude_form(Some(Version(2, 1, 138))), Form::Shell);
        assert_eq!(claude_form(None), Form::Shell);
        assert_eq!(
            support(Harness::Codex, Version(0, 170, 9)),
            Some(Support::Older)
        );
    }
}
