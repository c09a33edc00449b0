//! `git swarm show`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::Error;

use super::{Format, Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The directive's id.
    id: String,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    let store = super::store(ui)?;
    let loaded = super::load_index(&store, ui)?;
    let index = &loaded.index;
    let (entry, quarantined) = match (index.directive(&args.id), index.quarantined(&args.id)) {
        (Some(e), _) => (e, false),
        (None, Some(e)) => (e, true),
        (None, None) => return Err(unknown_directive(&store, &args.id).into()),
    };
    let Some(d) = &entry.directive else {
        return Err(Error::Invalid(entry.problems.clone()).into());
    };
    let row = super::list::row(entry, d, &index.fold, quarantined);
    let last = index
        .fold
        .directive(entry.stem())
        .map(|f| f.last_ts())
        .filter(|&t| t != 0)
        .and_then(|t| jiff::Timestamp::from_millisecond(t).ok())
        .map(git_swarm::event::format_ts);
    if args.format == Format::Json {
        let mut value = serde_json::to_value(&row).map_err(std::io::Error::from)?;
        value["problems"] = serde_json::to_value(&entry.problems).map_err(std::io::Error::from)?;
        value["quarantine_detail"] =
            serde_json::json!(entry.quarantine.as_ref().and_then(|(_, d)| d.clone()));
        value["last_event"] = serde_json::json!(last);
        return ui.json_result(&value);
    }
    let o = &mut ui.out;
    let field = |o: &mut dyn Write, name: &str, value: &str| {
        writeln!(o, "{name:<12} {}", super::clean(value))
    };
    // Nothing for none, a field for one (an optional field too), else a list.
    let list = |o: &mut dyn Write, name: &str, items: &[String]| -> std::io::Result<()> {
        match items {
            [] => Ok(()),
            [one] => writeln!(o, "{name:<12} {}", super::clean(one)),
            many => {
                writeln!(o, "{name}:")?;
                many.iter()
                    .try_for_each(|i| writeln!(o, "  - {}", super::clean(i)))
            }
        }
    };
    field(o, "id", entry.stem())?;
    field(o, "file", &row.path)?;
    field(o, "state", row.state)?;
    if let Some((reason, detail)) = &entry.quarantine {
        field(o, "quarantined", reason)?;
        list(o, "detail", detail.as_slice())?;
    }
    field(o, "lesson", &d.lesson)?;
    list(o, "rationale", d.rationale.as_slice())?;
    field(o, "category", d.category.as_str())?;
    field(
        o,
        "priority",
        &with_effective(d.priority.as_str(), row.effective.priority.as_str()),
    )?;
    field(
        o,
        "enforcement",
        &with_effective(d.enforcement.as_str(), row.effective.enforcement.as_str()),
    )?;
    field(o, "confidence", &d.confidence.to_string())?;
    list(o, "agents", &d.applies_to_agents)?;
    list(o, "tools", &d.applies_to_tools)?;
    list(o, "paths", &d.paths)?;
    list(o, "triggers", &d.triggers)?;
    list(o, "forbidden", &d.forbidden_actions)?;
    list(o, "required", &d.required_actions)?;
    list(o, "checks", &d.verification_checks)?;
    list(o, "verify", &d.verify)?;
    list(o, "tags", &d.tags)?;
    list(o, "created_at", d.created_at.as_slice())?;
    list(o, "source", d.source.as_slice())?;
    if row.events.is_empty() {
        field(o, "events", "none")?;
    } else {
        let counts: Vec<String> = row.events.iter().map(|(k, n)| format!("{k} {n}")).collect();
        let total: u64 = row.events.values().sum();
        let last = last.map(|t| format!(", last {t}")).unwrap_or_default();
        field(
            o,
            "events",
            &format!("{} (total {total}{last})", counts.join(", ")),
        )?;
    }
    ui.problems(&entry.problems);
    Ok(ExitCode::SUCCESS)
}

fn with_effective(declared: &str, effective: &str) -> String {
    if declared == effective {
        declared.to_owned()
    } else {
        format!("{effective} (escalated from {declared})")
    }
}

/// An id with no directive or quarantined entry, as bad usage naming the
/// likeliest intended id (a typo is the usual cause) and where ids are listed.
pub(super) fn unknown_directive(store: &git_swarm::Store, id: &str) -> Error {
    let mut ids: Vec<String> = Vec::new();
    for dir in [store.directives_dir(), store.quarantine_dir()] {
        if let Ok(Some(listing)) = git_swarm::safe_fs::read_dir(&dir) {
            ids.extend(listing.filter_map(|e| {
                let name = e.ok()?.file_name().into_string().ok()?;
                name.strip_suffix(".toml").map(str::to_owned)
            }));
        }
    }
    let list = "`git swarm list` shows the ids (add `--quarantined` for quarantined ones)";
    let hint = match git_swarm::suggest::closest(id, ids.iter().map(String::as_str)) {
        Some(m) => format!("did you mean `{m}`? {list}"),
        None => list.to_owned(),
    };
    Error::usage(
        format!("no directive or quarantined entry with id `{id}`"),
        hint,
    )
}

/// [`unknown_directive`] in place of the library's bare error of that kind.
pub(super) fn with_suggestion(store: &git_swarm::Store, e: Error) -> Error {
    match e {
        Error::UnknownDirective { id } => unknown_directive(store, &id),
        e => e,
    }
}
