//! clap's usage errors, ending with a way on that works. clap closes each
//! with "For more information, try '--help'", but git turns `git swarm
//! --help` into `man git-swarm`, which finds nothing until `git swarm
//! generate man` has installed the pages ("No manual entry", exit 16). The
//! hint names `git swarm help [COMMAND…]` instead, which clap answers itself.

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use clap::CommandFactory;

use super::{Cli, Ui};

/// Prints what clap refused (or the help or version it was asked for) and
/// says what to exit with.
pub fn report(e: &clap::Error, argv: &[OsString], ui: &mut Ui) -> ExitCode {
    if !e.use_stderr() {
        // `-h`, `help`, `--version`: clap's to print, on stdout.
        let _ = e.print();
        return ExitCode::SUCCESS;
    }
    let help = help_command(argv);
    let text = e.render().ansi().to_string();
    let _ = ui.err().write_all(with_hint(&text, &help).as_bytes());
    ExitCode::from(2)
}

/// `git swarm help` and the subcommands named on the command line before
/// anything else (`git swarm hooks instal` gives `git swarm help hooks`).
fn help_command(argv: &[OsString]) -> String {
    let mut help = String::from("git swarm help");
    let mut cmd = Cli::command();
    for word in argv.iter().skip(1) {
        let Some(sub) = word.to_str().and_then(|w| cmd.find_subcommand(w)) else {
            break;
        };
        let sub = sub.clone();
        help.push(' ');
        help.push_str(sub.get_name());
        cmd = sub;
    }
    help
}

/// `text` with clap's "For more information, try '--help'." line saying
/// `help` instead.
fn with_hint(text: &str, help: &str) -> String {
    let bold = anstyle::Style::new().bold();
    let line = format!("For more information, try '{bold}{help}{bold:#}'.");
    let mut out = String::with_capacity(text.len() + line.len());
    for l in text.lines() {
        if l.starts_with("For more information, try '") {
            out.push_str(&line);
        } else {
            out.push_str(l);
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::with_hint;

    #[test]
    fn the_hint_replaces_clap_s_own() {
        let clap = "error: unrecognized subcommand 'bogus'\n\nUsage: git swarm <COMMAND>\n\nFor more information, try '\u{1b}[1m--help\u{1b}[0m'.\n";
        let plain = anstream::adapter::strip_str(&with_hint(clap, "git swarm help")).to_string();
        assert_eq!(
            plain,
            "error: unrecognized subcommand 'bogus'\n\nUsage: git swarm <COMMAND>\n\nFor more information, try 'git swarm help'.\n"
        );
    }
}
