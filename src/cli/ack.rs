//! `git swarm ack`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::directive_loop::{acks, escalation};

use super::{Format, Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The delegation id printed by `git swarm inject`.
    #[arg(long, value_name = "ID")]
    delegation: String,
    /// The delegate's final message (`-`: standard input).
    #[arg(value_name = "FILE", default_value = "-")]
    file: String,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    let text = super::args::read_input(&args.file, "message")?;
    let source = super::args::shown_file(&args.file);
    let store = super::store(ui)?;
    let events = super::read_log(&store, ui)?;
    let report = acks::record(
        &store,
        &events,
        &acks::Request {
            delegation: &args.delegation,
            message: &text,
            source,
            defer_unacknowledged: false,
        },
    )?;
    ui.warnings(&report.warnings);
    if !report.events.is_empty() {
        super::append(&store, &report.events, ui)?;
    }
    if !report.audit.is_empty() {
        acks::write_audit(&store, &report.audit)?;
    }
    if report.violations {
        super::escalate(&store, &escalation::due_from_index(&store)?, ui)?;
    }
    if args.format == Format::Json {
        return ui.json_result(&serde_json::json!({
            "delegation": report.delegation,
            "acks": report.lines,
        }));
    }
    if report.lines.is_empty() {
        writeln!(
            ui.out,
            "{}",
            if report.criticals_shown {
                "no acks in the message, and every critical directive shown is acknowledged already: nothing to record"
            } else {
                "no acks in the message, and no critical directive was shown: nothing to record"
            }
        )?;
    }
    for l in &report.lines {
        let mut s = format!("{:<15} {}", l.outcome, l.id);
        if let Some(r) = &l.reason {
            s.push_str(&format!("  reason: {r}"));
        }
        if let Some(n) = &l.note {
            s.push_str(&format!("  ({n})"));
        }
        if !l.recorded {
            s.push_str("  [recorded before]");
        }
        writeln!(ui.out, "{}", super::clean(&s))?;
    }
    Ok(ExitCode::SUCCESS)
}
