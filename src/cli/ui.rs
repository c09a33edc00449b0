//! Terminal output: `error:` / `warning:` / `hint:` lines on stderr, results
//! on stdout. Colour only on a terminal and never with `NO_COLOR`
//! (anstream strips the styles otherwise).

use std::io::{self, Write};

use anstyle::{AnsiColor, Style};
use git_swarm::check::Warning;
use git_swarm::problem::{Problem, Problems, Severity};

/// `--format` of reading commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// For people.
    #[default]
    Text,
    /// JSON for scripts (check reports and the `.swarm/` files have schemas in `schema/`).
    Json,
}

pub struct Ui {
    pub out: anstream::AutoStream<io::Stdout>,
    err: anstream::AutoStream<io::Stderr>,
    /// Problems and warnings printed so far: one that a loop meets again
    /// (a broken config for each pushed commit) is printed once.
    reported: std::collections::HashSet<String>,
}

const ERROR: Style = AnsiColor::Red.on_default().bold();
const WARNING: Style = AnsiColor::Yellow.on_default().bold();
const HINT: Style = AnsiColor::Cyan.on_default().bold();
const DIM: Style = Style::new().dimmed();

impl Ui {
    pub fn new() -> Ui {
        Ui {
            out: anstream::AutoStream::auto(io::stdout()),
            err: anstream::AutoStream::auto(io::stderr()),
            reported: std::collections::HashSet::new(),
        }
    }

    /// `error: what` / `  --> where` / `hint: what to do`.
    pub fn error(&mut self, what: &str, location: Option<&str>, hint: Option<&str>) {
        self.report(ERROR, "error", what, location, hint);
    }

    pub fn warning(&mut self, what: &str, hint: Option<&str>) {
        self.report(WARNING, "warning", what, None, hint);
    }

    /// Standard error, for text already laid out (styles are stripped
    /// where colour is off).
    pub fn err(&mut self) -> &mut impl Write {
        &mut self.err
    }

    /// A status sentence on stderr (not a result, not a problem).
    pub fn note(&mut self, what: &str) {
        let _ = writeln!(self.err, "{}", clean(what));
    }

    pub fn hint(&mut self, hint: &str) {
        let _ = writeln!(self.err, "{HINT}hint:{HINT:#} {}", clean(hint));
    }

    fn report(
        &mut self,
        style: Style,
        label: &str,
        what: &str,
        location: Option<&str>,
        hint: Option<&str>,
    ) {
        if label != "error"
            && !self
                .reported
                .insert(format!("{label}\0{what}\0{location:?}\0{hint:?}"))
        {
            return;
        }
        let _ = writeln!(self.err, "{style}{label}:{style:#} {}", clean(what));
        if let Some(loc) = location {
            let _ = writeln!(self.err, "  {DIM}-->{DIM:#} {}", clean(loc));
        }
        if let Some(h) = hint {
            self.hint(h);
        }
    }

    /// Writes `bytes` to stdout at once. Text in which anstream would find
    /// nothing to strip (no escape sequence, no control character but
    /// whitespace: untrusted strings are [`clean`]ed) goes to stdout
    /// directly, as anstream strips byte by byte, which for a long report
    /// costs more than building it; anything else goes through anstream.
    pub fn write_out(&mut self, bytes: &[u8]) -> io::Result<()> {
        if nothing_to_strip(bytes) {
            self.out.as_inner().lock().write_all(bytes)
        } else {
            self.out.write_all(bytes)
        }
    }

    /// A problem in a file, location first: `path:line:col: error: message`.
    pub fn problem(&mut self, p: &Problem) {
        if self.reported.insert(format!("{p:?}")) {
            let _ = write_problem(&mut self.err, p);
        }
    }

    pub fn problems(&mut self, problems: &[Problem]) {
        for p in problems {
            self.problem(p);
        }
    }

    /// Problems a reader kept, then, for each file whose problems went past
    /// the cap, how many more it has.
    pub fn capped(&mut self, problems: &Problems) {
        self.problems(problems.kept());
        for m in problems.more() {
            let _ = writeln!(self.err, "{}", clean(&m.sentence()));
        }
    }

    /// The warnings of a library report, each with its hint.
    pub fn warnings(&mut self, warnings: &[Warning]) {
        for w in warnings {
            self.warning(&w.message, w.hint.as_deref());
        }
    }

    /// Writes a problem to stdout (for commands whose result is a list of problems).
    pub fn problem_out(&mut self, p: &Problem) -> io::Result<()> {
        write_problem(&mut self.out, p)
    }

    /// `value` as pretty JSON and a newline, in one write: serialised
    /// straight to stdout, which is line-buffered, a check report of 1,000
    /// directives took 18,000 writes.
    pub fn json<T: serde::Serialize>(&mut self, value: &T) -> io::Result<()> {
        let mut buf = serde_json::to_vec_pretty(value).map_err(io::Error::from)?;
        buf.push(b'\n');
        self.write_out(&buf)
    }

    /// [`Ui::json`] as a command's last word.
    pub fn json_result<T: serde::Serialize>(&mut self, value: &T) -> super::Outcome {
        self.json(value)?;
        Ok(std::process::ExitCode::SUCCESS)
    }
}

/// Is `bytes` UTF-8 text that anstream's stripping would leave as it is:
/// no C0 control but whitespace, no DEL, no C1 control (U+0080–U+009F, which
/// includes the 8-bit CSI)?
fn nothing_to_strip(bytes: &[u8]) -> bool {
    std::str::from_utf8(bytes).is_ok()
        && !bytes.iter().enumerate().any(|(i, &b)| {
            (b < 0x20 && !b.is_ascii_whitespace())
                || b == 0x7f
                || (b == 0xc2 && bytes.get(i + 1).is_some_and(|n| (0x80..=0x9f).contains(n)))
        })
}

/// Text from `.swarm/` as it may be shown on a terminal: control
/// characters (escape sequences from a pulled branch, say), bidirectional
/// controls and invisible characters are shown escaped, never sent (see
/// [`git_swarm::display`]).
pub fn clean(s: &str) -> std::borrow::Cow<'_, str> {
    git_swarm::display::escape(s)
}

pub use git_swarm::display::truncate;

fn write_problem(w: &mut impl Write, p: &Problem) -> io::Result<()> {
    let (style, label) = match p.severity {
        Severity::Error => (ERROR, "error"),
        Severity::Warning => (WARNING, "warning"),
    };
    writeln!(
        w,
        "{}: {style}{label}:{style:#} {}",
        clean(&p.location()),
        clean(&p.message)
    )?;
    if let Some(h) = &p.hint {
        writeln!(w, "  {HINT}hint:{HINT:#} {}", clean(h))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::nothing_to_strip;

    /// Where the fast path of `write_out` is taken, anstream's stripping is
    /// the identity; where it would change the text, the fast path is not
    /// taken. Every byte value, alone and after a letter, every C1 control
    /// as UTF-8, and escape sequences.
    #[test]
    fn text_with_nothing_to_strip_is_what_anstream_leaves() {
        let mut inputs: Vec<Vec<u8>> = Vec::new();
        for b in 0..=255u8 {
            inputs.push(vec![b]);
            inputs.push(vec![b'a', b, b'b', b'\n']);
        }
        for c in [
            '\u{80}', '\u{9b}', '\u{9d}', '\u{9f}', '\u{a0}', 'é', '…', '\t', '\r',
        ] {
            inputs.push(format!("x{c}y\n").into_bytes());
        }
        for s in [
            "FAIL  id\n      lesson\n",
            "\x1b[31mred\x1b[0m",
            "a\x1b]0;t\x07b",
            "\u{7f}",
        ] {
            inputs.push(s.as_bytes().to_vec());
        }
        for input in inputs {
            let stripped = anstream::adapter::strip_bytes(&input).into_vec();
            if nothing_to_strip(&input) {
                assert_eq!(stripped, input, "{input:?}");
            }
            if stripped != input {
                assert!(!nothing_to_strip(&input), "{input:?}");
            }
        }
        assert!(nothing_to_strip(
            "FAIL  id [warn, medium]\n      a lesson…\n".as_bytes()
        ));
    }
}
