//! `git swarm log`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::Error;
use git_swarm::event::Event;

use super::{Format, Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only events of these kinds (comma-separated, repeatable).
    #[arg(long, value_delimiter = ',', value_name = "KIND,..")]
    kind: Vec<String>,
    /// Only events at or after this time: an RFC 3339 time, a date (UTC), or an age such as 7d, 12h, 30m, 2w.
    #[arg(long, value_name = "WHEN")]
    since: Option<String>,
    /// Only events about this directive.
    #[arg(long, value_name = "ID")]
    directive: Option<String>,
    /// Show only the last N events that match (with --follow: then every new one).
    #[arg(short = 'n', long, value_name = "N")]
    max_count: Option<usize>,
    /// Keep running, and show each new event that matches as it lands (JSON: one object a line).
    #[arg(short = 'f', long)]
    follow: bool,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    let store = super::store(ui)?;
    let since = args
        .since
        .as_deref()
        .map(|s| parse_since(s, store.clock.now()))
        .transpose()?;
    let filter = Filter {
        kinds: &args.kind,
        since,
        directive: args.directive.as_deref(),
    };
    if args.follow {
        return follow(&store, &args, &filter, ui);
    }
    let events = super::read_log(&store, ui)?;
    warn_unknown_kinds(&args.kind, &events, ui);
    let mut events: Vec<Event> = events.into_iter().filter(|e| filter.keeps(e)).collect();
    if let Some(n) = args.max_count {
        let skip = events.len().saturating_sub(n);
        events.drain(..skip);
    }
    if args.format == Format::Json {
        return ui.json_result(&events);
    }
    let mut out = std::io::BufWriter::new(&mut ui.out);
    for e in &events {
        writeln!(out, "{}", super::clean(&text_line(e)))?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// What `--kind`, `--since` and `--directive` keep.
struct Filter<'a> {
    kinds: &'a [String],
    since: Option<i64>,
    directive: Option<&'a str>,
}

impl Filter<'_> {
    fn keeps(&self, e: &Event) -> bool {
        let Some(t) = e.ts_millis() else { return false };
        (self.kinds.is_empty() || self.kinds.contains(&e.kind))
            && self.since.is_none_or(|s| t >= s)
            && self.directive.is_none_or(|d| mentions(e, d))
    }
}

/// One event as the text format shows it.
fn text_line(e: &Event) -> String {
    let directive = e.directive.as_deref().unwrap_or("-");
    let mut line = format!("{}  {:<12} {:<24} {}", e.ts, e.kind, directive, e.id);
    if let Some(role) = &e.actor.role {
        line.push_str(&format!("  role={role}"));
    }
    for (k, v) in &e.data {
        let v = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
        line.push_str(&format!("  {k}={v}"));
    }
    line
}

/// `--follow`: what `log` shows, then each new event as it lands, flushed
/// one by one so that a pipe (`| jq`) sees it at once. Runs until
/// interrupted; a closed pipe ends it quietly (exit 0, in `main`).
fn follow(store: &git_swarm::Store, args: &Args, filter: &Filter<'_>, ui: &mut Ui) -> Outcome {
    let dirs = store.log_dirs();
    let mut follower = git_swarm::event::Follower::new(&dirs, &store.config.events);
    let mut waiter = git_swarm::event::Waiter::new(&dirs.map(|(d, _)| d));
    let first = follower.poll()?;
    ui.capped(&first.problems);
    warn_unknown_kinds(&args.kind, &first.events, ui);
    let mut events: Vec<&Event> = first.events.iter().filter(|e| filter.keeps(e)).collect();
    if let Some(n) = args.max_count {
        let skip = events.len().saturating_sub(n);
        events.drain(..skip);
    }
    for e in events {
        print_one(e, args.format, ui)?;
    }
    loop {
        waiter.wait();
        let batch = follower.poll()?;
        ui.capped(&batch.problems);
        for e in batch.events.iter().filter(|e| filter.keeps(e)) {
            print_one(e, args.format, ui)?;
        }
    }
}

fn print_one(e: &Event, format: Format, ui: &mut Ui) -> std::io::Result<()> {
    match format {
        Format::Json => {
            let line = serde_json::to_string(e).map_err(std::io::Error::from)?;
            writeln!(ui.out, "{line}")?;
        }
        Format::Text => writeln!(ui.out, "{}", super::clean(&text_line(e)))?,
    }
    ui.out.flush()
}

/// A `--kind` that git-swarm does not know and the log does not hold shows
/// nothing, which reads as "no such events" when it is more often a typo:
/// say so (another tool's kinds are legitimate, hence a warning).
fn warn_unknown_kinds(kinds: &[String], events: &[Event], ui: &mut Ui) {
    let known = git_swarm::event::KNOWN_KINDS;
    for kind in kinds {
        if known.contains(&kind.as_str()) || events.iter().any(|e| &e.kind == kind) {
            continue;
        }
        let mut names: Vec<&str> = known.to_vec();
        for e in events {
            if !names.contains(&e.kind.as_str()) {
                names.push(&e.kind);
            }
        }
        ui.warning(
            &format!("no event in the log is of kind `{kind}`, and git-swarm knows no such kind"),
            Some(&kinds_hint(kind, &names)),
        );
    }
}

/// The kind among `names` that `kind` is likely a typo of, and the kinds git-swarm knows.
pub fn kinds_hint(kind: &str, names: &[&str]) -> String {
    let known = git_swarm::event::KNOWN_KINDS;
    let list = git_swarm::suggest::name_list(known.iter().copied(), known.len());
    match git_swarm::suggest::closest(kind, names.iter().copied()) {
        Some(m) => format!("did you mean `{m}`? Known kinds: {list}"),
        None => format!("known kinds: {list}"),
    }
}

fn mentions(e: &Event, id: &str) -> bool {
    e.directive.as_deref() == Some(id)
        || e.data
            .get("directives")
            .and_then(|v| v.as_array())
            .is_some_and(|a| a.iter().any(|v| v.as_str() == Some(id)))
}

/// Milliseconds since the epoch of a `--since` value.
pub(crate) fn parse_since(s: &str, now: jiff::Timestamp) -> Result<i64, Error> {
    if let Ok(t) = s.parse::<jiff::Timestamp>() {
        return Ok(t.as_millisecond());
    }
    if let Ok(d) = s.parse::<jiff::civil::Date>()
        && let Ok(z) = d.to_zoned(jiff::tz::TimeZone::UTC)
    {
        return Ok(z.timestamp().as_millisecond());
    }
    let (num, unit) = s.split_at(s.len().saturating_sub(1));
    let ms_per = match unit {
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        "w" => 7 * 86_400_000,
        _ => 0,
    };
    match num.parse::<i64>() {
        Ok(n) if ms_per > 0 && n >= 0 => Ok(now.as_millisecond() - n.saturating_mul(ms_per)),
        _ => Err(Error::usage(
            format!("--since `{s}` is not a time, a date or an age"),
            "use 2026-11-22T10:00:00Z, 2026-11-22, or an age like 7d, 12h, 30m, 2w",
        )),
    }
}
