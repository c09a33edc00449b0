//! Checks and readers of command-line arguments that several commands share.

use std::io::{IsTerminal, Read};

use git_swarm::Error;

/// A phase name: a letter or digit, then letters, digits, `.`, `_`, `-` (at most 64).
pub fn check_phase_name(phase: &str) -> Result<(), Error> {
    let ok = git_swarm::reflect::is_phase_name(phase);
    if ok {
        Ok(())
    } else {
        Err(Error::usage(
            format!("`{phase}` is not a phase name"),
            "a phase is a letter or digit, then letters, digits, `.`, `_` or `-` (at most 64), e.g. `2` or `design`",
        ))
    }
}

/// A role name: `^[a-z][a-z0-9_]{0,63}$`, as in `applies_to_agents`.
pub fn check_role(role: &str) -> Result<(), Error> {
    if git_swarm::directive::is_valid_scope_name(role) {
        Ok(())
    } else {
        Err(Error::usage(
            format!("`{role}` is not a role name"),
            "a role is lowercase letters, digits and `_`, starting with a letter (as in applies_to_agents)",
        ))
    }
}

/// A run id: 1 to 128 printable characters.
pub fn check_run(run: &str) -> Result<(), Error> {
    if run.trim().is_empty() || run.chars().count() > 128 || run.chars().any(char::is_control) {
        return Err(Error::usage(
            format!("`{run}` is not a run id"),
            "a run id is 1 to 128 printable characters",
        ));
    }
    Ok(())
}

/// A comma-list option's items, trimmed, without empty ones and repeats.
pub fn clean_list(items: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(items.len());
    for item in items {
        let item = item.trim();
        if !item.is_empty() && !out.iter().any(|o| o == item) {
            out.push(item.to_owned());
        }
    }
    out
}

/// Bad input in a file the user named: `FILE:LINE: message`, exit 2.
pub fn bad_file(file: &str, e: &git_swarm::pattern::text::TextError, what: &str) -> Error {
    Error::usage(
        format!("{file}:{}: {}", e.line, e.message),
        format!("fix the {what}; nothing was recorded"),
    )
}

/// How a file argument is named in messages: `-` is standard input.
pub fn shown_file(file: &str) -> &str {
    if file == "-" { "standard input" } else { file }
}

/// What `-` reads when the command's standard input came in its request
/// (`git-swarm hook mcp-call`, see [`git_swarm::mcp::Invocation`]).
static GIVEN_STDIN: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Makes `text` what `-` reads, instead of standard input.
pub fn give_stdin(text: String) {
    let _ = GIVEN_STDIN.set(text);
}

/// The text of a file the user named (`-`: standard input); bytes that are
/// not UTF-8 are reported as `FILE:LINE:COL` (the column in characters).
pub fn read_input(file: &str, what: &str) -> Result<String, Error> {
    let mut bytes = Vec::new();
    if file == "-"
        && let Some(text) = GIVEN_STDIN.get()
    {
        return Ok(text.clone());
    }
    if file == "-" {
        if std::io::stdin().is_terminal() {
            // Else a command waiting for its input looks hung.
            eprintln!("reading from standard input (end with Ctrl-D)…");
        }
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| Error::io(std::path::Path::new("<stdin>"), e))?;
    } else {
        bytes = std::fs::read(file).map_err(|e| match e.kind() {
            // A path the user typed: bad input, not a broken environment.
            std::io::ErrorKind::NotFound | std::io::ErrorKind::IsADirectory => Error::usage(
                format!("cannot read {file}: {e}"),
                "name a text file, or `-` for standard input",
            ),
            _ => Error::io(std::path::Path::new(file), e),
        })?;
    }
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        let valid = &bytes[..at];
        let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        // Characters before the bad byte on its line: bytes that start one.
        let col = valid[line_start..]
            .iter()
            .filter(|&&b| b & 0xC0 != 0x80)
            .count()
            + 1;
        Error::usage(
            format!(
                "{file}:{line}:{col}: not UTF-8 text (byte 0x{:02x})",
                bytes.get(at).copied().unwrap_or(0)
            ),
            format!("save the {what} as UTF-8; nothing was recorded"),
        )
    })
}
