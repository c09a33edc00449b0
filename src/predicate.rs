//! Machine-checkable predicates (`verify` entries of a directive).
//!
//! The string form is compatible with opencode-swarm's: the kind, a `:`, and
//! the kind's argument.
//!
//! | form | argument |
//! | --- | --- |
//! | `file_modified:<glob>` | a path glob |
//! | `file_not_modified:<glob>` | a path glob |
//! | `grep:<regex>[:<glob>]` | a regex, then an optional glob after the *last* `:` |
//! | `grep_tree:<regex>[:<glob>]` | as `grep` |
//! | `tool:<argv>` | a program and its arguments, split without a shell |
//! | `command:<regex>` | a regex on a tool call's command line, quoted strings left out |
//! | `command_raw:<regex>` | a regex on a tool call's whole command line |
//!
//! For `grep` and `grep_tree` the glob is whatever follows the last `:`; a
//! regex that itself contains `:` must therefore be followed by a glob (or by
//! a trailing `:` for "all files"). `tool` arguments are split like a POSIX
//! shell word list — whitespace separates, single quotes are literal, double
//! quotes allow `\"` and `\\` — but nothing is expanded and no shell runs.
//! Parsing checks only the form; which programs may run is decided by the
//! user's allowlist when a check runs.

// Bytes regexes: file contents and paths need not be UTF-8; the syntax is the same.
use regex::bytes::Regex;

use crate::pathglob::PathGlob;

/// A parsed predicate.
#[derive(Clone, Debug)]
pub enum Predicate {
    FileModified(PathGlob),
    FileNotModified(PathGlob),
    Grep {
        regex: LazyRegex,
        glob: Option<PathGlob>,
    },
    GrepTree {
        regex: LazyRegex,
        glob: Option<PathGlob>,
    },
    Tool {
        argv: Vec<String>,
    },
    /// Holds when an agent's command line does not match: checked before a
    /// tool call (DESIGN §7e), never on a change. `raw`: quoted strings are
    /// searched too.
    Command {
        regex: LazyRegex,
        raw: bool,
    },
}

/// A regex whose syntax was checked when parsed and which is compiled on
/// first use: a check of a thousand directives meets few lines most of them
/// could match, and compiling is the expensive part.
#[derive(Clone, Debug)]
pub struct LazyRegex {
    pattern: String,
    compiled: std::sync::OnceLock<Result<Regex, RegexError>>,
}

/// Why a predicate's regex was refused, or cannot be compiled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegexError {
    /// The syntax, with the byte offset in the regex where it goes wrong.
    #[error("{message}")]
    Syntax { message: String, at: Option<usize> },
    /// Past the engine's size limit.
    #[error("{0}")]
    TooLarge(String),
}

/// The regex engine's limit on a compiled regex: the regex crate's default.
const NFA_SIZE_LIMIT: usize = 10 * (1 << 20);

/// The regex engine's limit on its lazy DFA's cache: the regex crate's default.
const DFA_SIZE_LIMIT: usize = 2 * (1 << 20);

/// The regex as a check compiles it, with the regex crate's own message.
fn build(pattern: &str, size_limit: usize) -> Result<Regex, RegexError> {
    regex::bytes::RegexBuilder::new(pattern)
        .size_limit(size_limit)
        .dfa_size_limit(DFA_SIZE_LIMIT)
        .build()
        .map_err(|e| {
            let message = last_line(&e.to_string());
            match e {
                regex::Error::CompiledTooBig(_) => RegexError::TooLarge(message),
                _ => RegexError::Syntax { message, at: None },
            }
        })
}

/// A regex parsed as a check parses it: as the regex crate parses a bytes
/// regex. Parsed apart from [`build`] for the place of a syntax error,
/// which the regex crate's error does not give.
fn parse_hir(pattern: &str) -> Result<regex_syntax::hir::Hir, RegexError> {
    regex_syntax::ParserBuilder::new()
        .utf8(false)
        .build()
        .parse(pattern)
        .map_err(|e| {
            let at = match &e {
                regex_syntax::Error::Parse(e) => Some(e.span().start.offset),
                regex_syntax::Error::Translate(e) => Some(e.span().start.offset),
                _ => None,
            };
            RegexError::Syntax {
                message: last_line(&e.to_string()),
                at,
            }
        })
}

/// Would a check compile `pattern` (parsed as `hir`) within the engine's
/// size limit? One too large by far is refused from its [`weight`], without
/// the cost of compiling it up to the limit; one that surely fits is not
/// compiled; the rest are compiled to know, which is exact where a guess
/// from the regex's shape is not (a class of Unicode compiles to many more
/// states than it has ranges).
fn fits(pattern: &str, hir: &regex_syntax::hir::Hir) -> Result<(), RegexError> {
    let weight = weight(hir);
    if weight > MAX_WEIGHT {
        return Err(RegexError::TooLarge(format!(
            "its repetitions expand it to about {weight} states (at most {MAX_WEIGHT})"
        )));
    }
    if weight <= SURELY_FITS {
        return Ok(());
    }
    match build(pattern, NFA_SIZE_LIMIT) {
        Err(RegexError::TooLarge(_)) => Err(RegexError::TooLarge(format!(
            "compiled, it would exceed the regex engine's limit of {NFA_SIZE_LIMIT} bytes"
        ))),
        built => built.map(drop),
    }
}

impl LazyRegex {
    /// With `check`, the regex is parsed and its size decided as a check
    /// would compile it, so that one which parses here always compiles there.
    fn parse(pattern: &str, check: bool) -> Result<LazyRegex, RegexError> {
        if check {
            fits(pattern, &parse_hir(pattern)?)?;
        }
        Ok(LazyRegex {
            pattern: pattern.to_owned(),
            compiled: std::sync::OnceLock::new(),
        })
    }

    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// The compiled regex (an error only past the regex crate's size limits,
    /// or for a regex parsed without checking it), with the regex crate's
    /// own message.
    pub fn get(&self) -> Result<&Regex, &RegexError> {
        self.compiled
            .get_or_init(|| build(&self.pattern, NFA_SIZE_LIMIT))
            .as_ref()
    }
}

/// The most states [`weight`] allows a regex: far beyond any regex written
/// by hand, and below what makes the regex crate refuse to compile one
/// (`a{99999999}` parses, then fails only when a check first uses it).
const MAX_WEIGHT: u64 = 1_000_000;

/// A regex of at most this [`weight`] fits the engine's limit without
/// compiling it to know: a unit of weight compiles to at most about 1.3 KB
/// of NFA, forward or reverse (`(?s:.)`, every character in UTF-8, is the
/// largest; a Unicode class is about 50 bytes a range), so this is under
/// half of [`NFA_SIZE_LIMIT`]. The regexes written by hand are far below
/// it, and parsing them builds nothing.
const SURELY_FITS: u64 = 4096;

/// About how many states `hir` compiles to: literals count their bytes,
/// classes their ranges, and a repetition multiplies what it repeats by its
/// largest count.
fn weight(hir: &regex_syntax::hir::Hir) -> u64 {
    use regex_syntax::hir::{Class, HirKind};
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => 1,
        HirKind::Literal(lit) => lit.0.len() as u64,
        HirKind::Class(Class::Unicode(c)) => c.ranges().len().max(1) as u64,
        HirKind::Class(Class::Bytes(c)) => c.ranges().len().max(1) as u64,
        HirKind::Repetition(r) => {
            let times = r.max.unwrap_or(r.min).max(r.min).max(1);
            weight(&r.sub).saturating_mul(u64::from(times))
        }
        HirKind::Capture(c) => weight(&c.sub),
        HirKind::Concat(all) | HirKind::Alternation(all) => {
            all.iter().map(weight).fold(0, u64::saturating_add)
        }
    }
}

/// Does an unquoted word of `line` start with `#` (where a shell word list,
/// and `shlex`, would begin a comment)?
fn starts_a_comment(line: &str) -> bool {
    let (mut single, mut double, mut escaped, mut at_start) = (false, false, false, true);
    for c in line.chars() {
        if escaped {
            escaped = false;
            at_start = false;
            continue;
        }
        match c {
            '\\' if !single => escaped = true,
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if at_start && !single && !double => return true,
            _ => {}
        }
        at_start = !single && !double && c.is_whitespace();
    }
    false
}

/// The kinds, in the order the docs list them.
pub const KINDS: [&str; 7] = [
    "file_modified",
    "file_not_modified",
    "grep",
    "grep_tree",
    "tool",
    "command",
    "command_raw",
];

/// What a match of `pattern` must contain, as written into the index for
/// a tool-call predicate: its prefix literals (every match starts with one
/// of them) and its suffix literals (every match ends with one), each set
/// joined by `\0`, the two by `\x01`. A set is empty when nothing can be
/// said of it (infinitely many, an empty literal, not UTF-8), and `\0`
/// alone when the regex matches nothing. A hook then compiles only the
/// regexes a command could match.
pub fn required_literals(pattern: &str) -> String {
    use regex_syntax::hir::literal::{ExtractKind, Extractor};
    let Ok(hir) = parse_hir(pattern) else {
        return String::new();
    };
    let set = |kind: ExtractKind| -> String {
        // Few and short: a crafted regex must not fill the index (or a
        // hook's time) with thousands of long literals.
        let seq = Extractor::new()
            .kind(kind)
            .limit_total(32)
            .limit_literal_len(32)
            .extract(&hir);
        let Some(lits) = seq.literals() else {
            return String::new();
        };
        if lits.is_empty() {
            return "\0".to_owned();
        }
        let texts: Option<Vec<&str>> = (lits.iter())
            .map(|l| {
                let text = std::str::from_utf8(l.as_bytes()).ok()?;
                (!text.is_empty() && !text.contains(['\0', '\x01'])).then_some(text)
            })
            .collect();
        texts
            .map(|t| t.join("\0"))
            .filter(|joined| joined.len() <= LITERALS_MAX)
            .unwrap_or_default()
    };
    format!(
        "{}\x01{}",
        set(ExtractKind::Prefix),
        set(ExtractKind::Suffix)
    )
}

/// The most bytes of one set of [`required_literals`]: a larger one is
/// stored as no constraint.
const LITERALS_MAX: usize = 512;

/// Whether `text` can match a regex whose [`required_literals`] are
/// `literals`: it holds one of its prefix literals and one of its suffix
/// literals.
pub fn literals_allow(literals: &str, text: &[u8]) -> bool {
    let holds_one = |set: &str| {
        set.is_empty()
            || (set.split('\0'))
                .filter(|l| !l.is_empty())
                .any(|l| memchr::memmem::find(text, l.as_bytes()).is_some())
    };
    literals.split('\x01').all(holds_one)
}

/// The kinds checked before an agent's tool call rather than on a change.
pub const TOOL_CALL_KINDS: [&str; 2] = ["command", "command_raw"];

/// Why a predicate string does not parse; `at` is an offset in the predicate.
pub type PredicateError = crate::pathglob::GlobError;

/// The longest predicate string accepted.
pub const MAX_LEN: usize = 1024;

/// A predicate's kind (trimmed) and argument: `grep:TODO:src/**` is
/// `grep` and `TODO:src/**`. How [`Predicate::parse`] reads it, for a caller
/// that looks at a predicate without parsing it.
pub fn split_kind(source: &str) -> Option<(&str, &str)> {
    source.split_once(':').map(|(kind, arg)| (kind.trim(), arg))
}

/// A `grep` or `grep_tree` argument's regex and glob, split at the last
/// `:` (a regex may hold colons, a glob may not); no glob without one.
pub fn split_grep(arg: &str) -> (&str, Option<&str>) {
    match arg.rsplit_once(':') {
        Some((pattern, glob)) => (pattern, Some(glob)),
        None => (arg, None),
    }
}

impl Predicate {
    pub fn parse(source: &str) -> Result<Predicate, PredicateError> {
        Predicate::parse_with(source, true)
    }

    /// As [`Predicate::parse`], without checking a regex's syntax: for a
    /// predicate of a directive that already passed the actionability gate,
    /// where a regex is compiled only if a path meets it (a bad one then
    /// makes the predicate's outcome an error).
    pub fn parse_gated(source: &str) -> Result<Predicate, PredicateError> {
        Predicate::parse_with(source, false)
    }

    fn parse_with(source: &str, check_regex: bool) -> Result<Predicate, PredicateError> {
        let err = |message: String, hint: &str| PredicateError {
            message,
            hint: hint.to_owned(),
            at: None,
        };
        if source.len() > MAX_LEN {
            return Err(err(
                format!(
                    "predicate is {} bytes long, over the {MAX_LEN}-byte limit",
                    source.len()
                ),
                "shorten it; long checks belong in a script run by a `tool:` predicate",
            ));
        }
        let Some((kind, arg)) = split_kind(source) else {
            return Err(err(
                format!("predicate `{source}` has no kind"),
                "write `<kind>:<argument>`, where kind is one of file_modified, file_not_modified, grep, grep_tree, tool, command, command_raw",
            ));
        };
        // Offsets in the predicate of the parts of `arg`, a slice of it.
        let offset = |part: &str| part.as_ptr() as usize - source.as_ptr() as usize;
        let glob = |s: &str| {
            PathGlob::parse(s).map_err(|e| PredicateError {
                at: e.at.map(|at| offset(s) + at),
                ..e
            })
        };
        match kind {
            "file_modified" => Ok(Predicate::FileModified(glob(arg)?)),
            "file_not_modified" => Ok(Predicate::FileNotModified(glob(arg)?)),
            k @ ("grep" | "grep_tree") => {
                let (pattern, glob_src) = split_grep(arg);
                if pattern.is_empty() {
                    return Err(err(
                        format!("`{k}` predicate has an empty regex"),
                        "write `grep:<regex>:<glob>`, for example `grep:\\.unwrap\\(\\):src/**/*.rs`",
                    ));
                }
                let regex = LazyRegex::parse(pattern, check_regex).map_err(|e| match e {
                    RegexError::Syntax { message, at } => PredicateError {
                        at: at.map(|at| offset(pattern) + at),
                        ..err(
                            format!("`{k}` regex `{pattern}` does not parse: {message}"),
                            "the regex syntax is Rust's `regex` crate (no look-around or back-references)",
                        )
                    },
                    RegexError::TooLarge(why) => err(
                        format!("`{k}` regex `{pattern}` is too large to compile: {why}"),
                        "a counted repetition is that many copies of what it repeats, and `\\w` or `\\pL` stand for hundreds of Unicode ranges: repeat less, or use an ASCII class such as `[A-Za-z0-9_]`",
                    ),
                })?;
                let glob = match glob_src {
                    Some(g) if !g.is_empty() => Some(glob(g)?),
                    _ => None,
                };
                Ok(if k == "grep" {
                    Predicate::Grep { regex, glob }
                } else {
                    Predicate::GrepTree { regex, glob }
                })
            }
            k @ ("command" | "command_raw") => {
                if arg.trim().is_empty() {
                    return Err(err(
                        format!("`{k}` predicate has an empty regex"),
                        "write `command:<regex>`, for example `command:git\\s+push\\b.*--force`",
                    ));
                }
                let regex = LazyRegex::parse(arg, check_regex).map_err(|e| match e {
                    RegexError::Syntax { message, at } => PredicateError {
                        at: at.map(|at| offset(arg) + at),
                        ..err(
                            format!("`{k}` regex `{arg}` does not parse: {message}"),
                            "the regex syntax is Rust's `regex` crate (no look-around or back-references)",
                        )
                    },
                    RegexError::TooLarge(why) => err(
                        format!("`{k}` regex `{arg}` is too large to compile: {why}"),
                        "repeat less, or use an ASCII class such as `[A-Za-z0-9_]`",
                    ),
                })?;
                Ok(Predicate::Command {
                    regex,
                    raw: k == "command_raw",
                })
            }
            "tool" => {
                // shlex drops a word starting with `#` and the rest of the
                // line, as a shell would: refuse it rather than run less
                // than what the directive (and `git swarm trust`) shows.
                if starts_a_comment(arg) {
                    return Err(err(
                        format!(
                            "`tool` command `{arg}` has a word starting with `#`, which would end it"
                        ),
                        "quote the word (`'#include'`) to pass it as an argument; no shell runs, so a comment means nothing here",
                    ));
                }
                let argv = shlex::split(arg).ok_or_else(|| {
                    err(
                        format!(
                            "`tool` command `{arg}` has an unclosed quote or a trailing backslash"
                        ),
                        "quote like a shell word list: 'single' or \"double\" quotes, no expansion",
                    )
                })?;
                let Some(program) = argv.first() else {
                    return Err(err(
                        "`tool` predicate names no program".into(),
                        "write `tool:<program> <args>`, for example `tool:cargo test --quiet`",
                    ));
                };
                if program.contains('/') || program.contains('\\') {
                    return Err(err(
                        format!("`tool` program `{program}` is a path"),
                        "name a program on PATH by its bare name; which programs may run is set by `git config swarm.allowTool`",
                    ));
                }
                if argv.iter().any(|a| a.contains('\0')) {
                    return Err(err(
                        "`tool` argument contains a NUL byte".into(),
                        "remove the NUL byte",
                    ));
                }
                Ok(Predicate::Tool { argv })
            }
            other => Err(err(
                format!("unknown predicate kind `{other}`"),
                "the kinds are file_modified, file_not_modified, grep, grep_tree, tool, command and command_raw",
            )),
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Predicate::FileModified(_) => "file_modified",
            Predicate::FileNotModified(_) => "file_not_modified",
            Predicate::Grep { .. } => "grep",
            Predicate::GrepTree { .. } => "grep_tree",
            Predicate::Tool { .. } => "tool",
            Predicate::Command { raw: false, .. } => "command",
            Predicate::Command { raw: true, .. } => "command_raw",
        }
    }

    /// Is this a predicate on a tool call (checked before the call, and
    /// never on a change)?
    pub fn is_tool_call(&self) -> bool {
        matches!(self, Predicate::Command { .. })
    }

    /// Whether the tool call's `command` line keeps the predicate: `None`
    /// for a predicate that is not about a command. An unusable regex keeps
    /// it (a hook lets a call through rather than refuse on an error).
    pub fn holds_for_command(&self, command: &str) -> Option<bool> {
        self.holds_for(&CommandLine::new(command))
    }

    /// [`Predicate::holds_for_command`], on a command line read once for
    /// all the predicates of a call.
    pub fn holds_for(&self, line: &CommandLine<'_>) -> Option<bool> {
        let Predicate::Command { regex, raw } = self else {
            return None;
        };
        let text = if *raw { line.raw } else { &line.unquoted };
        let Ok(re) = regex.get() else {
            return Some(true);
        };
        Some(!re.is_match(text.as_bytes()))
    }
}

/// A tool call's command line, as `command` predicates read it: whole
/// (`command_raw`), and with what its quotes hold left out (`command`).
pub struct CommandLine<'a> {
    pub raw: &'a str,
    pub unquoted: String,
}

impl<'a> CommandLine<'a> {
    pub fn new(raw: &'a str) -> CommandLine<'a> {
        CommandLine {
            raw,
            unquoted: without_quoted(raw),
        }
    }

    /// The text the predicate `source` (`command:`… as written) reads.
    pub fn text_for(&self, source: &str) -> &str {
        match split_kind(source) {
            Some(("command_raw", _)) => self.raw,
            _ => &self.unquoted,
        }
    }
}

/// `command` with what its quotes hold left out (the quotes stay, empty):
/// `echo "git push --force"` is `echo ""`, so a predicate on what is run
/// does not match what is only said. Single quotes hold everything up to
/// the next one; double quotes and `$'…'` honour a backslash; a backslash
/// outside quotes keeps the character it escapes. A comment (`#` where a
/// word starts) and a here-document's body are left out too; a quote that
/// is never closed is read as a letter. Shell syntax beyond that (`$(…)`,
/// `bash -c "…"`) is not read: a guard catches a mistake, not an agent
/// bent on getting round it.
pub fn without_quoted(command: &str) -> String {
    let chars: Vec<char> = command.chars().collect();
    let mut out = String::with_capacity(command.len());
    // Here-documents whose bodies start at the next line: their delimiters.
    let mut heredocs: Vec<String> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' => {
                out.push(c);
                if let Some(&next) = chars.get(i + 1) {
                    out.push(next);
                }
                i += 2;
            }
            '\'' | '"' => {
                // `$'…'` honours backslashes as a double-quoted string does.
                let escapes = c == '"' || out.ends_with('$');
                let mut j = i + 1;
                let mut closed = None;
                while j < chars.len() {
                    if chars[j] == '\\' && escapes {
                        j += 2;
                    } else if chars[j] == c {
                        closed = Some(j);
                        break;
                    } else {
                        j += 1;
                    }
                }
                match closed {
                    Some(end) => {
                        out.push(c);
                        out.push(c);
                        i = end + 1;
                    }
                    // An unclosed quote (an apostrophe in a comment or a
                    // here-document): read on as if it were a letter rather
                    // than hide the rest of the line from a guard.
                    None => {
                        out.push(c);
                        i += 1;
                    }
                }
            }
            // A comment, where a word starts: to the end of the line.
            '#' if i == 0 || chars[i - 1].is_whitespace() || ";&|(".contains(chars[i - 1]) => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '<' if chars.get(i + 1) == Some(&'<') && chars.get(i + 2) != Some(&'<') => {
                // `<<EOF`, `<<-EOF`, `<<'EOF'`, `<<"EOF"`: the delimiter.
                let mut j = i + 2;
                if chars.get(j) == Some(&'-') {
                    j += 1;
                }
                while chars.get(j).is_some_and(|c| *c == ' ' || *c == '\t') {
                    j += 1;
                }
                let mut word = String::new();
                while let Some(&w) = chars.get(j) {
                    if w.is_whitespace() || ";&|<>()".contains(w) {
                        break;
                    }
                    if w != '\'' && w != '"' && w != '\\' {
                        word.push(w);
                    }
                    j += 1;
                }
                out.extend(&chars[i..j]);
                if !word.is_empty() {
                    heredocs.push(word);
                }
                i = j;
            }
            '\n' if !heredocs.is_empty() => {
                // The bodies are data, not commands: skipped to their
                // delimiters' lines.
                out.push('\n');
                i += 1;
                for delimiter in std::mem::take(&mut heredocs) {
                    while i < chars.len() {
                        let end = (i..chars.len())
                            .find(|&k| chars[k] == '\n')
                            .unwrap_or(chars.len());
                        let line: String = chars[i..end].iter().collect();
                        i = (end + 1).min(chars.len());
                        if line.trim_start_matches('\t') == delimiter {
                            break;
                        }
                    }
                }
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// The last non-blank line of a regex error: the regex crate's message
/// under the regex it quotes and the caret that points into it.
fn last_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or(s)
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The literals written into the index never rule out a command the
    /// regex matches.
    #[test]
    fn required_literals_never_rule_out_a_match() {
        let patterns = [
            r"\bgit\s+push\b.*--force\b.*\bmain\b",
            r"(?i)GIT\s+PUSH",
            r"rm\s+-rf\s+/",
            r"^make$",
            r"a|b",
            r"[a-z]+",
            r"--no-verify\b",
            r"x{0,3}y",
            r"",
            r"[a&&b]",
        ];
        let hays = [
            "git push --force origin main",
            "Git Push origin",
            "rm -rf /tmp/x",
            "make",
            "cargo test",
            "echo hi",
            "git commit --no-verify",
            "y",
            "",
        ];
        for p in patterns {
            let lits = required_literals(p);
            let re = LazyRegex::parse(p, true).expect(p).get().expect(p).clone();
            for h in hays {
                if re.is_match(h.as_bytes()) {
                    assert!(
                        literals_allow(&lits, h.as_bytes()),
                        "{p} ({lits:?}) on {h:?}"
                    );
                }
            }
        }
        let guard = required_literals(r"\bgit\s+push\b.*--force\b.*\bb50\b");
        assert!(!literals_allow(&guard, b"git status"), "{guard:?}");
        assert!(literals_allow(&guard, b"git push --force origin b50"));
    }

    #[test]
    fn a_tool_word_starting_with_a_hash_is_refused_not_dropped() {
        for bad in ["tool:grep -c # x", "tool:#x", "tool:grep\t#x y"] {
            let e = Predicate::parse(bad).expect_err(bad);
            assert!(e.message.contains("starting with `#`"), "{bad}: {e}");
        }
        for ok in [
            "tool:grep -e '#include' src/a.c",
            "tool:grep -e \"#x\" f",
            "tool:grep -e \\#x f",
            "tool:grep -e a#b f",
        ] {
            let p = Predicate::parse(ok).expect(ok);
            let Predicate::Tool { argv } = p else {
                panic!("{ok}")
            };
            assert_eq!(argv.len(), 4, "{ok}: {argv:?}");
        }
    }

    /// The compiled predicate regex matches as `regex::bytes::Regex` does,
    /// and fails with its messages, past the size limit too.
    #[test]
    fn predicate_regexes_match_as_the_regex_crate_does() {
        let haystacks: [&[u8]; 8] = [
            b"let x = y.unwrap();",
            b"// TODO: later",
            b"caf\xc3\xa9 \xff\xfe not utf-8",
            b"",
            b"\xce\xb1\xce\xb2\xce\xb3 word_1",
            b"line one\nline two",
            b"UNWRAP()",
            b"a\r",
        ];
        for pattern in [
            r"unwrap\(\)|TODO",
            r"\.unwrap\(\)",
            r"(TODO|FIXME)",
            r"word|",
            r"",
            r"caf\u{e9}|\x{3b1}",
            r"(?m)TODO",
            r"(?i)unwrap",
            r"^\w+$",
            r"\w+_\d",
            r"caf\xe9",
            r"(?-u:\xff)",
            r"^$",
            r"(?m)^line two$",
            r"\r$",
            r"\bword\b",
            r"[[:alpha:]]{3}",
        ] {
            let ours = LazyRegex::parse(pattern, false).expect(pattern);
            let theirs = regex::bytes::Regex::new(pattern).expect(pattern);
            for h in haystacks {
                assert_eq!(
                    ours.get().expect(pattern).is_match(h),
                    theirs.is_match(h),
                    "{pattern} on {h:?}"
                );
            }
        }
        for bad in [r"(unclosed", r"a{2,1}", r"\p{NoSuchClass}"] {
            let ours = LazyRegex::parse(bad, false).expect("not checked");
            let theirs = regex::bytes::Regex::new(bad).expect_err(bad);
            assert_eq!(
                ours.get().expect_err(bad).to_string(),
                last_line(&theirs.to_string()),
                "{bad}"
            );
        }
        let big = LazyRegex::parse(r"\w{50}{50}", false).expect("parses");
        let theirs = regex::bytes::Regex::new(r"\w{50}{50}").expect_err("too big");
        assert_eq!(
            big.get().expect_err("too big").to_string(),
            last_line(&theirs.to_string())
        );
    }

    #[test]
    fn a_regex_too_large_to_compile_is_refused_when_parsed() {
        for ok in ["[0-9a-f]{40}", "\\w{100}", ".{1000}", "(ab|cd){1,500}"] {
            let lazy = LazyRegex::parse(ok, true).expect(ok);
            assert!(lazy.get().is_ok(), "{ok}");
        }
        for huge in [
            "a{99999999}",
            "(\\w{1000}){1000}",
            "[a-z]{2000000}",
            "\\pL{900}",
            "\\w{500}\\w{500}",
        ] {
            let e = Predicate::parse(&format!("grep:{huge}:src/**")).expect_err(huge);
            assert!(e.message.contains("is too large to compile"), "{huge}: {e}");
            // What the regex crate says of it: it would not compile either.
            assert!(regex::Regex::new(huge).is_err(), "{huge}");
        }
    }

    /// The size is decided when parsed as a check decides it when it
    /// compiles the regex, on either side of the limit.
    #[test]
    fn parsing_and_compiling_agree_on_the_size_limit() {
        for class in ["\\pL", "\\w", "[a-z]", "\\d", "(?i)k"] {
            for n in [200, 600, 1200] {
                let pattern = format!("{class}{{{n}}}");
                let parsed = LazyRegex::parse(&pattern, true);
                let compiled = LazyRegex::parse(&pattern, false).expect("unchecked");
                assert_eq!(
                    parsed.is_ok(),
                    compiled.get().is_ok(),
                    "{pattern}: {:?}",
                    parsed.err()
                );
            }
        }
    }

    /// What [`SURELY_FITS`] assumes: a regex of that weight, made of any
    /// one construct repeated, compiles within half the limit.
    #[test]
    fn regexes_assumed_to_fit_do() {
        for unit in [
            "(?s:.)",
            ".",
            "[^a]",
            "\\w",
            "\\W",
            "\\pL",
            "\\PL",
            "\\D",
            "\\S",
            "(?i)k",
            "a",
            "\\bx",
            "[\\x{80}-\\x{10FFFF}]",
            "(a|bc)*",
            "(?i)\\w",
        ] {
            let one = weight(&parse_hir(unit).expect(unit));
            let pattern = format!("(?:{unit}){{{}}}", SURELY_FITS / one);
            let hir = parse_hir(&pattern).expect(unit);
            assert!(weight(&hir) <= SURELY_FITS, "{pattern}");
            // The limit holds for each of the forward and the reverse NFA.
            let built = build(&pattern, NFA_SIZE_LIMIT / 2);
            assert!(built.is_ok(), "{pattern}: {:?}", built.err());
        }
    }

    #[test]
    fn a_bad_part_is_placed_in_the_predicate() {
        let at = |p: &str| Predicate::parse(p).expect_err(p).at;
        assert_eq!(at("grep:ab(cd:src/**"), Some(7));
        assert_eq!(at("grep:x:{a,{b,{c,{d,{e,{f,{g,{h,{i,j}}}}}}}}}"), Some(31));
        assert_eq!(
            at("file_modified:{a,{b,{c,{d,{e,{f,{g,{h,{i,j}}}}}}}}}"),
            Some(38)
        );
        assert_eq!(at("tool:'x"), None);
    }

    #[test]
    fn all_five_kinds_parse() {
        for (source, kind) in [
            ("file_modified:src/**", "file_modified"),
            ("file_not_modified:Cargo.lock", "file_not_modified"),
        ] {
            assert_eq!(Predicate::parse(source).expect(source).kind(), kind);
        }
        match Predicate::parse("grep:a:b:*.rs").expect("valid test input") {
            Predicate::Grep { regex, glob } => {
                assert_eq!(regex.as_str(), "a:b");
                assert_eq!(glob.expect("valid test input").as_str(), "*.rs");
            }
            other => panic!("{other:?}"),
        }
        match Predicate::parse("grep_tree:TODO").expect("valid test input") {
            Predicate::GrepTree { glob, .. } => assert!(glob.is_none()),
            other => panic!("{other:?}"),
        }
        match Predicate::parse("tool:cargo test -- 'a b'").expect("valid test input") {
            Predicate::Tool { argv } => assert_eq!(argv, ["cargo", "test", "--", "a b"]),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bad_predicates_are_refused() {
        for bad in [
            "nokind",
            "shell:rm -rf /",
            "grep:(:x",
            "grep::*.rs",
            "tool:",
            "tool:/bin/sh -c x",
            "tool:'unclosed",
            "file_modified:../x",
            "file_modified:/etc",
        ] {
            assert!(Predicate::parse(bad).is_err(), "{bad:?} should not parse");
        }
    }
}
