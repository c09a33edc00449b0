//! `git swarm stats`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::stats::{Input, Stats};

use super::{Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Count only events at or after this time: an RFC 3339 time, a date (UTC), or an age such as 7d, 12h, 30m, 2w.
    #[arg(long, value_name = "WHEN")]
    since: Option<String>,
    #[arg(long, value_enum, default_value_t)]
    format: StatsFormat,
}

/// `--format` of `stats`: the usual two, and OpenMetrics for dashboards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
enum StatsFormat {
    /// For people.
    #[default]
    Text,
    /// JSON for scripts (schema/stats.schema.json).
    Json,
    /// OpenMetrics 1.0 text, for a scraper that reads OpenMetrics.
    Openmetrics,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    let store = super::store(ui)?;
    let now = store.clock.now();
    let since = args
        .since
        .as_deref()
        .map(|s| super::log::parse_since(s, now))
        .transpose()?;
    let loaded = super::load_index(&store, ui)?;
    let directives: Vec<String> = loaded
        .index
        .directives
        .iter()
        .filter_map(|e| e.directive.as_ref().map(|d| d.id.clone()))
        .collect();
    let events = super::read_log(&store, ui)?;
    let patterns = git_swarm::index::load_patterns(&store)?;
    let stats = git_swarm::stats::compute(&Input {
        events: &events,
        directives: &directives,
        patterns: &patterns,
        patterns_config: &store.config.patterns,
        since,
        now,
    });
    match args.format {
        StatsFormat::Json => ui.json(&stats)?,
        StatsFormat::Openmetrics => {
            ui.write_out(git_swarm::stats::openmetrics::render(&stats).as_bytes())?;
        }
        StatsFormat::Text => text(&stats, ui)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn text(s: &Stats, ui: &mut Ui) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(&mut ui.out);
    let clean = |t: &str| super::clean(t).into_owned();
    let rate = |r: Option<f64>| r.map_or_else(|| "-".to_owned(), |r| format!("{r:.2}"));
    let percent =
        |r: Option<f64>| r.map_or_else(|| "-".to_owned(), |r| format!("{:.0}%", r * 100.0));
    let from = s.since.as_deref().unwrap_or("the first event");
    writeln!(
        out,
        "Window: {from} to {} ({:.1} days): {} events, {} violations a day.",
        s.until,
        s.window_days,
        s.events,
        rate(s.rates.violations_per_day)
    )?;
    writeln!(out, "\nEvents by kind:")?;
    if s.by_kind.is_empty() {
        writeln!(out, "  (none)")?;
    }
    for (kind, n) in &s.by_kind {
        writeln!(out, "  {:<24} {n:>7}", clean(kind))?;
    }
    writeln!(out, "\nDirectives:")?;
    // As wide as the longest id (ids are at most 80 characters), so columns line up.
    let w = s
        .directives
        .iter()
        .map(|d| clean(&d.id).chars().count())
        .max()
        .unwrap_or(0)
        .max(2);
    writeln!(
        out,
        "  {:<w$} {:>10} {:>12} {:>11} {:>13} {:>9} {:>9} {:>8}  NOW",
        "ID",
        "VIOLATIONS",
        "REMEDIATIONS",
        "ESCALATIONS",
        "DEESCALATIONS",
        "OVERRIDES",
        "PREVENTED",
        "AT CALLS"
    )?;
    for d in &s.directives {
        let now = match (d.escalated, d.in_tree) {
            (true, _) => "escalated",
            (false, true) => "-",
            (false, false) => "no file",
        };
        writeln!(
            out,
            "  {:<w$} {:>10} {:>12} {:>11} {:>13} {:>9} {:>9} {:>8}  {now}",
            clean(&d.id),
            d.violations,
            d.remediations,
            d.escalations,
            d.deescalations,
            d.overrides,
            d.prevented,
            d.shown_at_calls
        )?;
    }
    writeln!(
        out,
        "\nAcks by role (over the directives shown in the window's delegations):"
    )?;
    writeln!(
        out,
        "  {:<16} {:>6} {:>6} {:>8} {:>8} {:>4} {:>9} {:>7} {:>11} {:>8} {:>11} {:>9}",
        "ROLE",
        "DELEG.",
        "SHOWN",
        "APPLIED",
        "IGNORED",
        "N/A",
        "VIOLATED",
        "UNACK.",
        "UNANSWERED",
        "SPOOFED",
        "COMPLIANCE",
        "CRITICAL"
    )?;
    for r in &s.roles {
        writeln!(
            out,
            "  {:<16} {:>6} {:>6} {:>8} {:>8} {:>4} {:>9} {:>7} {:>11} {:>8} {:>11} {:>9}",
            clean(&r.role),
            r.delegations,
            r.shown,
            r.applied,
            r.ignored,
            r.n_a,
            r.violated,
            r.unacknowledged,
            r.unanswered,
            r.spoofed_acks,
            percent(r.ack_compliance),
            percent(r.critical_ack_compliance)
        )?;
    }
    writeln!(
        out,
        "  all: {} of directives shown answered, {} of criticals",
        percent(s.rates.ack_compliance),
        percent(s.rates.critical_ack_compliance)
    )?;
    let patterns: Vec<String> = s.patterns.iter().map(|(k, n)| format!("{k} {n}")).collect();
    writeln!(out, "\nPatterns now: {}.", patterns.join(", "))?;
    writeln!(
        out,
        "Checks recorded: {} failed, {} passed after a failure.",
        s.checks.failed, s.checks.passed
    )?;
    let handoffs: Vec<String> = s
        .handoff_violations
        .iter()
        .map(|(k, n)| format!("{} {n}", clean(k)))
        .collect();
    writeln!(
        out,
        "Handoff violations: {}.",
        if handoffs.is_empty() {
            "none".to_owned()
        } else {
            handoffs.join(", ")
        }
    )?;
    if !s.reported.is_empty() {
        writeln!(
            out,
            "\nReported by projects (the latest `git swarm hive report` of each):"
        )?;
        let w = s
            .reported
            .iter()
            .map(|r| clean(&r.id).chars().count())
            .max()
            .unwrap_or(0)
            .max(2);
        writeln!(
            out,
            "  {:<w$} {:>8} {:>8} {:>8} {:>9} {:>12}",
            "ID", "PROJECTS", "APPLIED", "VIOLATED", "PREVENTED", "SWITCHED OFF"
        )?;
        for r in &s.reported {
            writeln!(
                out,
                "  {:<w$} {:>8} {:>8} {:>8} {:>9} {:>12}",
                clean(&r.id),
                r.projects,
                r.applied,
                r.violated,
                r.prevented,
                r.switched_off
            )?;
        }
    }
    out.flush()
}
