//! The other files of `.swarm/` compared: quarantined entries, proposals,
//! handoffs (with where each stands, folded from each side's log) and
//! `config.toml`, key by key.

use std::collections::BTreeSet;

use schemars::JsonSchema;
use serde::Serialize;

use super::directives::{FieldChange, field_changes};
use super::events::Logs;
use super::side::Side;
use crate::error::Result;
use crate::problem::Problem;

/// What happened to a quarantined entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum QuarantineChangeKind {
    /// Quarantined: an entry that failed the actionability gate.
    Added,
    /// Promoted: gone from the quarantine, a directive of the same id on the new side.
    Promoted,
    /// Gone from the quarantine, no directive in its place.
    Removed,
    /// Still quarantined, with fields changed (a reason, `harden`'s record, the entry).
    Changed,
    /// The file does not parse on one side (see the report's problems).
    Unreadable,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct QuarantineChange {
    pub id: String,
    pub change: QuarantineChangeKind,
    /// Why it is quarantined (`missing_predicate`…): new side, or old side when it left.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What is missing, as the gate said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lesson: Option<String>,
    pub fields: Vec<FieldChange>,
}

/// What happened to a proposal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProposalChangeKind {
    Added,
    /// Its status went from open to accepted or rejected.
    Decided,
    Removed,
    /// Changed otherwise (status unchanged).
    Changed,
    Unreadable,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ProposalChange {
    pub slug: String,
    pub change: ProposalChangeKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `open`, `accepted` or `rejected`, on each side.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// Why it was rejected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The directive accepting it made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub directive: Option<String>,
}

/// What happened to a handoff.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HandoffChangeKind {
    /// Its file was added: the task handed off.
    Opened,
    /// Its file was removed.
    Removed,
    /// Where it stands changed (completed, released, blocked…), by events recorded.
    Standing,
    /// Its file changed (a contract is written once: worth a look).
    Rewritten,
    Unreadable,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct HandoffChange {
    pub task: String,
    pub change: HandoffChangeKind,
    /// Where it stands on each side (none: no file there).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub epic: Option<String>,
}

/// A key of `config.toml` that differs.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ConfigChange {
    /// The dotted key (`knowledge.delegate_max_inject_count`).
    pub key: String,
    /// Its value as written, on each side (none: not set, the default applies).
    pub from: Option<String>,
    pub to: Option<String>,
}

/// The paths of one folder that differ between the sides, sorted, with
/// links reported and left out.
fn changed(
    old: &Side,
    new: &Side,
    folder: &str,
    suffix: &str,
    problems: &mut Vec<Problem>,
) -> Vec<String> {
    let prefix = format!("{folder}/");
    let keys: BTreeSet<&String> = old
        .files
        .keys()
        .chain(new.files.keys())
        .filter(|p| p.starts_with(&prefix) && p.ends_with(suffix))
        .collect();
    let mut out = Vec::new();
    for path in keys {
        let (a, b) = (old.files.get(path), new.files.get(path));
        if let (Some(a), Some(b)) = (a, b)
            && a.same(b)
        {
            continue;
        }
        let link = [a, b].into_iter().flatten().find_map(|f| f.kind);
        if let Some(kind) = link {
            problems.push(super::side::not_regular(&format!(".swarm/{path}"), kind));
            continue;
        }
        out.push(path.clone());
    }
    out
}

/// The text of `path` on `side` (`None` when the side has no such file).
fn text(
    repo: &gix::Repository,
    side: &Side,
    path: &str,
    limit: u64,
) -> Result<Option<std::result::Result<String, Problem>>> {
    if !side.files.contains_key(path) {
        return Ok(None);
    }
    let rel = format!(".swarm/{path}");
    Ok(Some(match side.bytes(repo, path, limit)? {
        Ok(bytes) => String::from_utf8(bytes.to_vec())
            .map_err(|_| Problem::error(&rel, "not_utf8", "file is not valid UTF-8").at(1, 1)),
        Err(p) => Err(p),
    }))
}

/// A file's parse on one side: `None` where the side has no such file,
/// `Some(None)` where it does not parse.
type Parse<T> = Option<Option<T>>;

/// Each side's parse of `path`: `None` where the side has no file, and the
/// problems of a side that does not parse in `problems`.
fn both<T>(
    repo: &gix::Repository,
    (old, new): (&Side, &Side),
    path: &str,
    limit: u64,
    parse: impl Fn(&str, &str) -> std::result::Result<T, Vec<Problem>>,
    problems: &mut Vec<Problem>,
) -> Result<(Parse<T>, Parse<T>)> {
    let rel = format!(".swarm/{path}");
    let mut one = |side: &Side| -> Result<Parse<T>> {
        Ok(text(repo, side, path, limit)?.map(|t| {
            match t.map_err(|p| vec![p]).and_then(|t| parse(&t, &rel)) {
                Ok(v) => Some(v),
                Err(p) => {
                    problems.extend(p);
                    None
                }
            }
        }))
    };
    Ok((one(old)?, one(new)?))
}

fn stem(path: &str, suffix: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.strip_suffix(suffix).unwrap_or(name).to_owned()
}

pub fn quarantine(
    repo: &gix::Repository,
    old: &Side,
    new: &Side,
    problems: &mut Vec<Problem>,
) -> Result<Vec<QuarantineChange>> {
    let mut out = Vec::new();
    for path in changed(old, new, "quarantine", ".toml", problems) {
        let id = stem(&path, ".toml");
        let parse = |t: &str, rel: &str| match crate::directive::parse_quarantined_toml(t, rel) {
            (Some(q), _) => Ok(q),
            (None, p) => Err(p.into_iter().filter(Problem::is_error).collect()),
        };
        let (a, b) = both(
            repo,
            (old, new),
            &path,
            crate::directive::limits::FILE_MAX,
            parse,
            problems,
        )?;
        let promoted = new.files.contains_key(&format!("directives/{id}.toml"));
        let of = |q: &crate::directive::Quarantined, change, fields| QuarantineChange {
            id: id.clone(),
            change,
            reason: Some(q.quarantine_reason.as_str().to_owned()),
            detail: q.quarantine_detail.clone(),
            lesson: Some(q.directive.lesson.clone()),
            fields,
        };
        use QuarantineChangeKind as K;
        out.push(match (a, b) {
            (None, Some(Some(q))) => of(&q, K::Added, Vec::new()),
            (Some(Some(q)), None) => of(
                &q,
                if promoted { K::Promoted } else { K::Removed },
                Vec::new(),
            ),
            (Some(Some(a)), Some(Some(b))) => {
                let table = |q: &crate::directive::Quarantined| {
                    toml::Value::try_from(q).unwrap_or(toml::Value::Table(toml::Table::new()))
                };
                of(&b, K::Changed, field_changes(&table(&a), &table(&b)))
            }
            _ => QuarantineChange {
                id: id.clone(),
                change: K::Unreadable,
                reason: None,
                detail: None,
                lesson: None,
                fields: Vec::new(),
            },
        });
    }
    Ok(out)
}

pub fn proposals(
    repo: &gix::Repository,
    old: &Side,
    new: &Side,
    problems: &mut Vec<Problem>,
) -> Result<Vec<ProposalChange>> {
    use crate::proposal::{PROPOSAL_MAX, Proposal, ProposalStatus};
    let mut out = Vec::new();
    for path in changed(old, new, "proposals", ".md", problems) {
        let parse = |t: &str, rel: &str| Proposal::parse(t, rel).map_err(|p| vec![p]);
        let (a, b) = both(repo, (old, new), &path, PROPOSAL_MAX, parse, problems)?;
        let slug = stem(&path, ".md");
        let status = |p: &Proposal| p.status.as_str().to_owned();
        use ProposalChangeKind as K;
        let (change, shown, from) = match (&a, &b) {
            (None, Some(Some(p))) => (K::Added, p, None),
            (Some(Some(p)), None) => (K::Removed, p, Some(status(p))),
            (Some(Some(a)), Some(Some(b))) => {
                let decided = a.status == ProposalStatus::Open && b.status != ProposalStatus::Open;
                (
                    if decided { K::Decided } else { K::Changed },
                    b,
                    Some(status(a)),
                )
            }
            _ => {
                out.push(ProposalChange {
                    slug,
                    change: K::Unreadable,
                    title: None,
                    from: None,
                    to: None,
                    reason: None,
                    directive: None,
                });
                continue;
            }
        };
        out.push(ProposalChange {
            slug,
            change,
            title: Some(shown.title.clone()),
            to: (change != K::Removed).then(|| status(shown)),
            from,
            reason: shown.reason.clone(),
            directive: shown.directive.clone(),
        });
    }
    Ok(out)
}

pub fn handoffs(
    repo: &gix::Repository,
    old: &Side,
    new: &Side,
    logs: &Logs,
    max_attempts: u32,
    problems: &mut Vec<Problem>,
) -> Result<Vec<HandoffChange>> {
    use crate::handoff::{HANDOFF_MAX, Handoff, standing};
    let files = changed(old, new, "handoffs", ".toml", problems);
    // Tasks whose standing the added (or missing) events may have moved.
    let mut tasks: BTreeSet<String> = logs
        .added
        .iter()
        .chain(&logs.missing)
        .filter(|logged| {
            logged
                .head
                .known
                .is_some_and(crate::handoff::is_handoff_kind)
        })
        .filter_map(|logged| logged.event()?.str_field("task").map(str::to_owned))
        .collect();
    tasks.extend(files.iter().map(|p| stem(p, ".toml")));
    let mut out = Vec::new();
    for task in tasks {
        let path = format!("handoffs/{task}.toml");
        let in_change = files.contains(&path);
        let parse = |t: &str, rel: &str| Handoff::parse(t, rel).map_err(|p| vec![p]);
        let (a, b) = if in_change {
            both(repo, (old, new), &path, HANDOFF_MAX, parse, problems)?
        } else {
            // Unchanged: the same file on both sides, read once.
            let one = both(repo, (new, new), &path, HANDOFF_MAX, parse, &mut Vec::new())?.0;
            (one.clone(), one)
        };
        let stand = |present: bool, events: &[crate::event::Event]| {
            present.then(|| standing(&task, events, max_attempts).as_str().to_owned())
        };
        let from = stand(a.is_some(), &logs.old.handoff_events);
        let to = stand(b.is_some(), &logs.new.handoff_events);
        use HandoffChangeKind as K;
        let change = match (&a, &b) {
            (Some(None), _) | (_, Some(None)) => K::Unreadable,
            (None, Some(_)) => K::Opened,
            (Some(_), None) => K::Removed,
            _ if in_change => K::Rewritten,
            _ if from != to => K::Standing,
            _ => continue,
        };
        let shown = b.clone().flatten().or(a.clone().flatten());
        out.push(HandoffChange {
            task: task.clone(),
            change,
            from,
            to,
            role: shown.as_ref().and_then(|h| h.role.clone()),
            epic: shown.as_ref().and_then(|h| h.epic.clone()),
        });
    }
    Ok(out)
}

/// A hive's name and its pinned revision, as a side's `config.toml` holds them.
pub type HivePins = std::collections::BTreeMap<String, String>;

/// The keys of `config.toml` that differ, dotted, sorted; and the hive
/// pins of each side (both empty when the file did not change).
pub fn config(
    repo: &gix::Repository,
    old: &Side,
    new: &Side,
    problems: &mut Vec<Problem>,
) -> Result<(Vec<ConfigChange>, [HivePins; 2])> {
    if changed_file(old, new, "config.toml", problems) {
        let parse = |t: &str, rel: &str| {
            t.parse::<toml::Table>().map_err(|e| {
                vec![
                    Problem::error(rel, "bad_toml", e.message().to_owned())
                        .at_offset(t, e.span().map_or(0, |s| s.start)),
                ]
            })
        };
        let (a, b) = both(
            repo,
            (old, new),
            "config.toml",
            crate::store::CONFIG_MAX,
            parse,
            problems,
        )?;
        let (a, b) = (
            a.flatten().unwrap_or_default(),
            b.flatten().unwrap_or_default(),
        );
        let pins = [hive_pins(&a), hive_pins(&b)];
        let flat = |t: toml::Table| {
            let mut out = std::collections::BTreeMap::new();
            flatten("", &toml::Value::Table(t), &mut out);
            out
        };
        let (a, b) = (flat(a), flat(b));
        let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
        let changes = keys
            .into_iter()
            .filter(|k| a.get(*k) != b.get(*k))
            .map(|k| ConfigChange {
                key: k.clone(),
                from: a.get(k).cloned(),
                to: b.get(k).cloned(),
            })
            .collect();
        return Ok((changes, pins));
    }
    Ok((Vec::new(), Default::default()))
}

/// The well-named, pinned `[[hive]]` entries of a `config.toml`.
fn hive_pins(config: &toml::Table) -> HivePins {
    let items = config.get("hive").and_then(toml::Value::as_array);
    (items.into_iter().flatten())
        .take(crate::config::HiveSubscription::MAX)
        .filter_map(|t| {
            let name = t.get("name")?.as_str()?;
            let rev = t.get("rev")?.as_str()?;
            crate::config::is_valid_hive_name(name).then(|| (name.to_owned(), rev.to_owned()))
        })
        .collect()
}

fn changed_file(old: &Side, new: &Side, path: &str, problems: &mut Vec<Problem>) -> bool {
    match (old.files.get(path), new.files.get(path)) {
        (None, None) => false,
        (Some(a), Some(b)) if a.same(b) => false,
        (a, b) => match [a, b].into_iter().flatten().find_map(|f| f.kind) {
            Some(kind) => {
                problems.push(super::side::not_regular(&format!(".swarm/{path}"), kind));
                false
            }
            None => true,
        },
    }
}

fn flatten(prefix: &str, v: &toml::Value, out: &mut std::collections::BTreeMap<String, String>) {
    match v {
        toml::Value::Table(t) => {
            for (k, v) in t {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, out);
            }
        }
        other => {
            out.insert(prefix.to_owned(), other.to_string());
        }
    }
}
