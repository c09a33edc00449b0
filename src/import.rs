//! `git swarm import opencode-swarm`: the entries of opencode-swarm's
//! `knowledge.jsonl` (schema v2, v6.17+) as directives, through the same
//! actionability gate as `add`.
//!
//! Every entry is kept: one that fails the gate goes to `quarantine/` with
//! the reason; a `verification_predicate` that does not translate becomes a
//! prose `verification_checks` item and is reported. Ids are kept (UUIDs are
//! valid ids), so importing the same file again finds every id taken and
//! changes nothing.

use std::collections::HashSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::directive::{
    Category, Directive, Enforcement, Priority, QuarantineReason, Quarantined, Status, check_gate,
    is_valid_id, slug_from_lesson,
};
use crate::predicate::Predicate;
use crate::problem::{Problem, Problems};
use crate::store::Minted;
use crate::{Error, Result, Store, safe_fs};

/// Largest `knowledge.jsonl` read: opencode-swarm caps its store far below.
pub const FILE_MAX: u64 = 64 * 1024 * 1024;
/// Largest line parsed as one entry.
const LINE_MAX: usize = 256 * 1024;

/// One line of `knowledge.jsonl`, the fields that map onto a directive.
/// Others (`retrieval_outcomes`, `confirmed_by`, hive fields…) are ignored.
#[derive(Debug, Deserialize)]
struct Entry {
    id: String,
    lesson: String,
    #[serde(default)]
    category: Option<String>,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    confidence: Option<f64>,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    triggers: Vec<String>,
    #[serde(default)]
    required_actions: Vec<String>,
    #[serde(default)]
    forbidden_actions: Vec<String>,
    #[serde(default)]
    applies_to_agents: Vec<String>,
    #[serde(default)]
    applies_to_tools: Vec<String>,
    #[serde(default)]
    verification_checks: Vec<String>,
    #[serde(default)]
    verification_predicate: Option<String>,
    #[serde(default)]
    directive_priority: Option<String>,
    #[serde(default)]
    enforcement_mode: Option<String>,
    #[serde(default)]
    created_at: Option<String>,
    #[serde(default)]
    project_name: Option<String>,
}

/// One entry read and translated, not yet written.
#[derive(Debug)]
pub struct Item {
    /// 1-based line in the file.
    pub line: u32,
    pub directive: Directive,
    /// The entry's own id when it was not a valid id and one was derived.
    pub original_id: Option<String>,
    /// Notes on what did not translate as it was.
    pub notes: Vec<String>,
    /// opencode-swarm had quarantined the entry (its `status`): it stays so.
    pub quarantined_upstream: Option<String>,
}

/// Why an entry opencode-swarm had quarantined goes to `quarantine/` here,
/// with the gate's own findings when there are some.
fn upstream_quarantine(d: &Directive, status: &str) -> (QuarantineReason, String) {
    let said = format!("quarantined in opencode-swarm: status `{status}`");
    match check_gate(d) {
        Ok(()) => (QuarantineReason::InvalidShape, said),
        Err(f) => (f.reason, format!("{said}; {}", f.detail())),
    }
}

/// What became of one entry.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub line: u32,
    pub id: String,
    /// `added`, `quarantined` or `skipped`.
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The quarantine reason, or why the entry was skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Reads `path`, bounded by [`FILE_MAX`].
pub fn read_file(path: &Path, rel: &str) -> Result<Vec<u8>> {
    safe_fs::read(path, FILE_MAX).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::usage(
                format!("{rel}: no such file"),
                "give the path of opencode-swarm's knowledge file, usually .swarm/knowledge.jsonl",
            )
        } else {
            Error::io(path, e)
        }
    })
}

/// Translates the entries of `bytes` (a `knowledge.jsonl`) one at a time,
/// giving each to `each` as soon as it is read: nothing holds every entry
/// at once. Malformed lines are added to `problems` with file:line (kept up
/// to its cap, counted past it) and left out.
pub fn for_each_entry(
    bytes: &[u8],
    rel: &str,
    problems: &mut Problems,
    mut each: impl FnMut(Item) -> Result<()>,
) -> Result<()> {
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let line = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let bad = |message: String| {
            Problem::error(rel, "import_line", message)
                .at_line(line)
                .with_hint("fix or remove the line and import again; the other entries were read")
        };
        if raw.trim_ascii().is_empty() {
            continue;
        }
        if raw.len() > LINE_MAX {
            problems.push_error_with(rel, || {
                bad(format!(
                    "line is {} bytes, over the {LINE_MAX}-byte limit of an entry",
                    raw.len()
                ))
            });
            continue;
        }
        match serde_json::from_slice::<Entry>(raw) {
            Ok(entry) => each(translate(entry, line))?,
            Err(e) => {
                problems.push_error_with(rel, || bad(format!("not a knowledge entry: {e}")));
            }
        }
    }
    Ok(())
}

/// opencode-swarm's predicate language is ours for these kinds (ours is a
/// superset: the glob split at the last `:`, `tool:` argv with no shell).
/// Their `grep` passes when the files hold no match — our `grep_tree`; our
/// `grep` looks only at the lines a change adds. A path of `file_modified`/`file_not_modified` was compared
/// literally there and is a glob here, so its glob characters are escaped.
fn translate_predicate(source: &str) -> std::result::Result<String, String> {
    let source = source.trim();
    let Some((kind, arg)) = source.split_once(':') else {
        return Err("no predicate kind".into());
    };
    let kind = kind.trim();
    let arg = match kind {
        "file_modified" | "file_not_modified" => literal_glob(arg.trim().trim_start_matches("./")),
        "grep" => return grep_tree(arg),
        "tool" => arg.to_owned(),
        other => {
            return Err(format!(
                "`{other}` is not a predicate opencode-swarm or git-swarm knows"
            ));
        }
    };
    let ours = format!("{kind}:{arg}");
    Predicate::parse(&ours).map_err(|e| e.message)?;
    Ok(ours)
}

fn grep_tree(arg: &str) -> std::result::Result<String, String> {
    let ours = format!("grep_tree:{arg}");
    Predicate::parse(&ours).map_err(|e| e.message)?;
    Ok(ours)
}

/// A glob matching exactly the path `p`: each glob metacharacter becomes a
/// one-character class (backslash escapes are off in `pathglob`).
fn literal_glob(p: &str) -> String {
    let mut out = String::with_capacity(p.len());
    for c in p.chars() {
        match c {
            '[' | '*' | '?' | '{' | '}' => {
                out.push('[');
                out.push(c);
                out.push(']');
            }
            c => out.push(c),
        }
    }
    out
}

fn translate(e: Entry, line: u32) -> Item {
    let mut notes = Vec::new();
    let raw_id = e.id.trim().to_ascii_lowercase();
    let (id, original_id) = if is_valid_id(&raw_id) {
        (raw_id, None)
    } else {
        let derived = slug_from_lesson(&e.lesson);
        let derived = if is_valid_id(&derived) {
            derived
        } else {
            format!("imported-{line}")
        };
        notes.push(format!(
            "id `{}` is not a valid id; imported as `{derived}`",
            e.id
        ));
        (derived, Some(e.id.clone()))
    };
    let mut d = Directive::new(id, e.lesson.trim());
    d.category = match e.category.as_deref() {
        None => Category::default(),
        Some(c) => c.parse().unwrap_or_else(|_| {
            // `todo` and unknown categories have no counterpart.
            notes.push(format!("category `{c}` imported as `other`"));
            Category::Other
        }),
    };
    if let Some(p) = e.directive_priority.as_deref() {
        d.priority = p.parse().unwrap_or_else(|_| {
            notes.push(format!("priority `{p}` unknown; imported as `medium`"));
            Priority::Medium
        });
    }
    if let Some(m) = e.enforcement_mode.as_deref() {
        d.enforcement = m.parse().unwrap_or_else(|_| {
            notes.push(format!("enforcement `{m}` unknown; imported as `warn`"));
            Enforcement::Warn
        });
    }
    if e.status.as_deref() == Some("archived") {
        d.status = Status::Retired;
    }
    if let Some(c) = e.confidence.filter(|c| (0.0..=1.0).contains(c)) {
        d.confidence = c;
    }
    d.tags = e.tags;
    d.triggers = e.triggers;
    d.required_actions = e.required_actions;
    d.forbidden_actions = e.forbidden_actions;
    d.applies_to_agents = e.applies_to_agents;
    d.applies_to_tools = e.applies_to_tools;
    d.verification_checks = e.verification_checks;
    if let Some(p) = e.verification_predicate.filter(|p| !p.trim().is_empty()) {
        match translate_predicate(&p) {
            Ok(ours) => d.verify.push(ours),
            Err(why) => {
                notes.push(format!(
                    "verification_predicate `{p}` not translated ({why}); kept as a verification check"
                ));
                d.verification_checks
                    .push(format!("opencode-swarm predicate (not run): {p}"));
            }
        }
    }
    d.created_at = e
        .created_at
        .and_then(|c| c.parse::<jiff::Timestamp>().ok())
        .map(|t| t.round(jiff::Unit::Second).unwrap_or(t).to_string());
    d.source = Some(match e.project_name {
        Some(p) => format!("opencode-swarm knowledge.jsonl ({p}), line {line}"),
        None => format!("opencode-swarm knowledge.jsonl, line {line}"),
    });
    let quarantined_upstream = e
        .status
        .filter(|s| matches!(s.as_str(), "quarantined" | "quarantined_unactionable"));
    if let Some(s) = &quarantined_upstream {
        notes.push(format!(
            "status `{s}` in opencode-swarm: kept in quarantine"
        ));
    }
    Item {
        line,
        directive: d,
        original_id,
        notes,
        quarantined_upstream,
    }
}

/// A derived id (the lesson's slug, cut short) may be taken by an entry
/// with another lesson: then a short hash of this lesson is added, so the
/// entry is not skipped as already present. Same lesson: left as is, so a
/// second import still skips it.
pub fn settle_id(store: &Store, item: &mut Item) {
    if item.original_id.is_none() {
        return;
    }
    let d = &mut item.directive;
    let Some(path) = store.id_taken(&d.id) else {
        return;
    };
    let theirs = safe_fs::read(&path, crate::directive::limits::FILE_MAX)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|t| t.parse::<toml::Table>().ok())
        .and_then(|t| t.get("lesson").and_then(|l| l.as_str()).map(str::to_owned));
    if theirs.as_deref() == Some(d.lesson.as_str()) {
        return;
    }
    let hash = xxhash_rust::xxh3::xxh3_64(d.lesson.as_bytes());
    let id = format!("{}-{:08x}", d.id, hash as u32);
    item.notes.push(format!(
        "id `{}` is taken by another lesson; imported as `{id}`",
        d.id
    ));
    d.id = id;
}

/// What [`Store::mint`] would do with `item`, without writing: for
/// `--dry-run`, and to skip ids already present. `seen`: the ids of the
/// entries before it in the file (a set: a file of 450,000 entries was
/// quadratic with a list).
pub fn preview(store: &Store, item: &Item, seen: &HashSet<String>) -> Outcome {
    let d = &item.directive;
    let mut out = Outcome {
        line: item.line,
        id: d.id.clone(),
        status: "added",
        path: None,
        reason: None,
        notes: item.notes.clone(),
    };
    if let Some(path) = store.id_taken(&d.id) {
        out.status = "skipped";
        out.reason = Some(format!("already present at {}", store.rel(&path)));
    } else if seen.contains(&d.id) {
        out.status = "skipped";
        out.reason = Some("the same id appears earlier in the file".into());
    } else if let Some(status) = &item.quarantined_upstream {
        out.status = "quarantined";
        out.reason = Some(upstream_quarantine(d, status).0.as_str().to_owned());
    } else if let Err(f) = check_gate(d) {
        out.status = "quarantined";
        out.reason = Some(f.reason.as_str().to_owned());
    }
    out
}

/// Mints `item` through the gate; returns its outcome and the event to append.
pub fn mint(store: &Store, item: Item) -> Result<(Outcome, crate::event::Event)> {
    let notes = item.notes;
    let line = item.line;
    let id = item.directive.id.clone();
    if let Some(status) = &item.quarantined_upstream {
        let (reason, detail) = upstream_quarantine(&item.directive, status);
        let q = Quarantined::new(item.directive, reason, Some(detail.clone()));
        let path = store.write_quarantined(&q)?;
        let event = store
            .event(crate::event::Body::Quarantined {
                path: store.rel(&path),
                reason: reason.as_str().to_owned(),
                detail,
            })
            .about(&id);
        return Ok((
            Outcome {
                line,
                id,
                status: "quarantined",
                path: Some(store.rel(&path)),
                reason: Some(reason.as_str().to_owned()),
                notes,
            },
            event,
        ));
    }
    Ok(match store.mint(item.directive)? {
        Minted::Added { path, event } => (
            Outcome {
                line,
                id,
                status: "added",
                path: Some(store.rel(&path)),
                reason: None,
                notes,
            },
            event,
        ),
        Minted::Quarantined {
            path,
            event,
            failure,
        } => (
            Outcome {
                line,
                id,
                status: "quarantined",
                path: Some(store.rel(&path)),
                reason: Some(failure.reason.as_str().to_owned()),
                notes,
            },
            event,
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::translate_predicate;

    #[test]
    fn predicates_translate_or_say_why_not() {
        assert_eq!(
            translate_predicate("file_modified:./src/auth.ts").as_deref(),
            Ok("file_modified:src/auth.ts")
        );
        assert_eq!(
            translate_predicate("grep:console\\.log:src/**/*.ts").as_deref(),
            Ok("grep_tree:console\\.log:src/**/*.ts")
        );
        assert!(translate_predicate("lint:eslint").is_err());
        assert!(translate_predicate("grep:(unclosed:src/**").is_err());
    }

    #[test]
    fn an_escaped_path_matches_only_itself() {
        let g = crate::pathglob::PathGlob::parse(&super::literal_glob("app/[slug]/{a,b}*?.tsx"))
            .expect("glob");
        assert!(g.is_match("app/[slug]/{a,b}*?.tsx"));
        assert!(!g.is_match("app/s/ax1.tsx"));
    }
}
