//! `git swarm list`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::directive::{Directive, Priority, Status};
use git_swarm::fold::Fold;
use git_swarm::index::DirectiveEntry;
use serde::Serialize;

use super::{Format, Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only directives for this agent role.
    #[arg(long)]
    role: Option<String>,
    /// Only directives for one of these tools (comma-separated, repeatable).
    #[arg(long, alias = "tool", value_delimiter = ',', value_name = "TOOL,..")]
    tools: Vec<String>,
    /// Only directives in this state: active or retired.
    #[arg(long, alias = "status", value_name = "STATE", value_parser = str::parse::<Status>)]
    state: Option<Status>,
    /// Only directives with this (effective) priority.
    #[arg(long, value_parser = str::parse::<Priority>)]
    priority: Option<Priority>,
    /// List quarantined entries instead, with the reason.
    #[arg(long)]
    quarantined: bool,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

/// One row of `list --format json` (and the heart of `show --format json`).
#[derive(Debug, Serialize)]
pub struct Row<'a> {
    pub id: &'a str,
    pub path: String,
    /// `active`, `retired` or `quarantined`.
    pub state: &'a str,
    pub effective: Effective,
    pub events: std::collections::BTreeMap<String, u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quarantine_reason: Option<&'a str>,
    /// The hive it comes from (docs/hive.md); absent for the project's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    pub directive: &'a Directive,
}

#[derive(Debug, Serialize)]
pub struct Effective {
    pub priority: git_swarm::directive::Priority,
    pub enforcement: git_swarm::directive::Enforcement,
}

/// The priority and enforcement in force: the file's, or critical and
/// enforce while the fold has an escalation episode open.
fn effective(d: &Directive, fold: &Fold) -> Effective {
    let (priority, enforcement) = fold.effective(d);
    Effective {
        priority,
        enforcement,
    }
}

pub fn row<'a>(
    entry: &'a DirectiveEntry,
    d: &'a Directive,
    fold: &Fold,
    quarantined: bool,
) -> Row<'a> {
    let (folder, state) = if quarantined {
        ("quarantine", "quarantined")
    } else {
        ("directives", d.status.as_str())
    };
    Row {
        // The file name is the identity: it is what `show` and events use. A
        // file whose `id` disagrees is reported by `validate`.
        id: entry.stem(),
        path: match &entry.origin {
            Some(hive) => format!("hive:{hive}/{}", entry.file),
            None => format!(".swarm/{folder}/{}", entry.file),
        },
        state,
        effective: effective(d, fold),
        events: fold
            .directive(entry.stem())
            .map(|f| f.counts())
            .unwrap_or_default(),
        quarantine_reason: entry.quarantine.as_ref().map(|(r, _)| r.as_str()),
        origin: entry
            .origin
            .as_ref()
            .map(|h| git_swarm::hive::origin_name(h, entry.stem())),
        directive: d,
    }
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    let store = super::store(ui)?;
    let loaded = super::load_index(&store, ui)?;
    let index = &loaded.index;
    let entries = if args.quarantined {
        &index.quarantine
    } else {
        &index.directives
    };
    let selected: Vec<(&DirectiveEntry, &Directive)> = entries
        .iter()
        .filter_map(|e| e.directive.as_ref().map(|d| (e, d)))
        .filter(|(_, d)| {
            args.role
                .as_ref()
                .is_none_or(|r| d.applies_to_agents.contains(r))
        })
        .filter(|(_, d)| {
            args.tools.is_empty() || args.tools.iter().any(|t| d.applies_to_tools.contains(t))
        })
        .filter(|(_, d)| args.state.is_none_or(|s| d.status == s))
        .filter(|(_, d)| {
            args.priority
                .is_none_or(|p| effective(d, &index.fold).priority == p)
        })
        .collect();

    if let Some(role) = &args.role {
        warn_unknown_role(role, &store, index, ui);
    }
    if args.format == Format::Json {
        let rows: Vec<Row<'_>> = selected
            .iter()
            .map(|(e, d)| row(e, d, &index.fold, args.quarantined))
            .collect();
        return ui.json_result(&rows);
    }
    if selected.is_empty() {
        let what = if args.quarantined {
            "quarantined entries"
        } else {
            "directives"
        };
        writeln!(ui.out, "No {what} match.")?;
        return Ok(ExitCode::SUCCESS);
    }
    let id_width = selected
        .iter()
        .map(|(e, _)| e.shown_id().len())
        .max()
        .unwrap_or(2)
        .max(2);
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, &mut ui.out);
    if args.quarantined {
        writeln!(out, "{:id_width$}  {:27}  LESSON", "ID", "REASON")?;
    } else {
        writeln!(
            out,
            "{:id_width$}  {:8}  {:11}  {:7}  {:>6}  LESSON",
            "ID", "PRIORITY", "ENFORCEMENT", "STATUS", "EVENTS"
        )?;
    }
    for (entry, d) in &selected {
        let shown = entry.shown_id();
        let id = super::clean(&shown);
        let lesson = super::ui::truncate(&super::clean(&d.lesson), 70);
        if args.quarantined {
            let reason = entry.quarantine.as_ref().map_or("-", |(r, _)| r.as_str());
            writeln!(out, "{id:id_width$}  {reason:27}  {lesson}")?;
        } else {
            let e = effective(d, &index.fold);
            let events = index.fold.directive(entry.stem()).map_or(0, |f| f.total());
            writeln!(
                out,
                "{id:id_width$}  {:8}  {:11}  {:7}  {events:>6}  {lesson}",
                e.priority.as_str(),
                e.enforcement.as_str(),
                d.status.as_str(),
            )?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// `--role` naming a role that no directive or quarantined entry is for
/// lists nothing, which reads as "nothing for that role" when it is more
/// often a typo: say so, with the likeliest intended role.
fn warn_unknown_role(
    role: &str,
    store: &git_swarm::Store,
    index: &git_swarm::index::Index,
    ui: &mut Ui,
) {
    let mut known: Vec<&str> = index
        .directives
        .iter()
        .chain(&index.quarantine)
        .filter_map(|e| e.directive.as_ref())
        .flat_map(|d| &d.applies_to_agents)
        .map(String::as_str)
        .collect();
    if known.contains(&role) {
        return;
    }
    known.extend(store.config.roles.keys().map(String::as_str));
    known.sort_unstable();
    known.dedup();
    let names = git_swarm::suggest::name_list(known.iter().copied(), 12);
    let hint = match git_swarm::suggest::closest(role, known.iter().copied()) {
        Some(m) => format!("did you mean `{m}`? (roles named: {names})"),
        None if known.is_empty() => {
            "no directive names a role yet (`applies_to_agents`)".to_owned()
        }
        None => format!("roles named: {names}"),
    };
    ui.warning(
        &format!("no directive is for the role `{role}` (`applies_to_agents`)"),
        Some(&hint),
    );
}
