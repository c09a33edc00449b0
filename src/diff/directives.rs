//! Directive files compared field by field: added, removed, renamed,
//! retired, re-activated, edited. Text fields are compared word by word,
//! lists item by item, the rest as values.
//!
//! A removed and an added file are paired as a rename by what they say,
//! never by how alike their files are: git's similarity pairs two small
//! TOML files of the same shape, and a new directive reported as a rename
//! of an old one would pass review as a mere move. So a rename is a
//! directive whose `id` is the same in both files (the file moved), or
//! whose lesson is the same under a new id; any other removal and
//! addition are one of each.

use std::collections::HashMap;

use schemars::JsonSchema;
use serde::Serialize;

use super::side::Side;
use crate::directive::{Directive, Status};
use crate::error::Result;
use crate::problem::Problem;

/// What happened to a directive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DirectiveChangeKind {
    Added,
    Removed,
    /// The same directive in another file (and perhaps edited): its `id` kept
    /// (the file moved), or its lesson kept under a new id. Never paired by
    /// file similarity alone.
    Renamed,
    /// `status` went from `active` to `retired`.
    Retired,
    /// `status` went from `retired` back to `active`.
    Reactivated,
    /// One or more fields changed; none when only layout or comments did.
    Edited,
    /// The file does not parse on one side (see the report's problems).
    Unreadable,
}

/// A directive that differs between the two sides.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DirectiveChange {
    /// Its id (the file stem) on the new side, or on the old one when removed.
    pub id: String,
    pub change: DirectiveChangeKind,
    /// The file, below the repository root.
    pub path: String,
    /// The file's old path, for a rename.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    /// Its lesson (new side; old side when removed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lesson: Option<String>,
    /// Its declared priority and enforcement (new side; old side when removed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub declared: Option<crate::event::Level>,
    /// The fields that differ, in file order.
    pub fields: Vec<FieldChange>,
}

/// One field that differs.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FieldChange {
    /// The TOML key.
    pub field: String,
    #[serde(flatten)]
    pub diff: FieldDiff,
}

/// How a field differs.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FieldDiff {
    /// A text field, with its word diff.
    Text {
        from: Option<String>,
        to: Option<String>,
        words: Vec<Words>,
    },
    /// A value (an enumeration, a number, a time), as written.
    Value {
        from: Option<String>,
        to: Option<String>,
    },
    /// A list: its items added and removed.
    List {
        added: Vec<String>,
        removed: Vec<String>,
    },
}

/// A run of words of a word diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Words {
    pub op: WordOp,
    pub text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WordOp {
    Equal,
    Removed,
    Added,
}

/// Fields compared as text, word by word.
const TEXT_FIELDS: &[&str] = &["lesson", "rationale", "source"];

/// Every field of a directive (and of a quarantined entry's own keys), in
/// file order: what a diff compares.
pub fn fields(value: &toml::Value) -> Vec<(String, toml::Value)> {
    match value {
        toml::Value::Table(t) => t.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        _ => Vec::new(),
    }
}

/// The field-by-field difference of two TOML tables (a directive or a
/// quarantined entry as serialised), keys in `old`'s order then `new`'s.
pub fn field_changes(old: &toml::Value, new: &toml::Value) -> Vec<FieldChange> {
    let (old, new) = (fields(old), fields(new));
    let mut keys: Vec<&String> = old.iter().map(|(k, _)| k).collect();
    for (k, _) in &new {
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let get = |list: &[(String, toml::Value)], key: &str| {
        list.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
    };
    let mut out = Vec::new();
    for key in keys {
        let (a, b) = (get(&old, key), get(&new, key));
        if a == b {
            continue;
        }
        let is_list = |v: &Option<toml::Value>| matches!(v, Some(toml::Value::Array(_)));
        let diff = if is_list(&a) || is_list(&b) {
            let items = |v: &Option<toml::Value>| match v {
                Some(toml::Value::Array(items)) => items.iter().map(as_text).collect(),
                Some(v) => vec![as_text(v)],
                None => Vec::new(),
            };
            let (a, b): (Vec<String>, Vec<String>) = (items(&a), items(&b));
            FieldDiff::List {
                added: b.iter().filter(|x| !a.contains(x)).cloned().collect(),
                removed: a.iter().filter(|x| !b.contains(x)).cloned().collect(),
            }
        } else {
            let (from, to) = (a.as_ref().map(as_text), b.as_ref().map(as_text));
            if TEXT_FIELDS.contains(&key.as_str()) {
                let words = word_diff(from.as_deref().unwrap_or(""), to.as_deref().unwrap_or(""));
                FieldDiff::Text { from, to, words }
            } else {
                FieldDiff::Value { from, to }
            }
        };
        // A list reordered has nothing added or removed: no change worth a line.
        if let FieldDiff::List { added, removed } = &diff
            && added.is_empty()
            && removed.is_empty()
        {
            continue;
        }
        out.push(FieldChange {
            field: key.clone(),
            diff,
        });
    }
    out
}

/// A TOML value as a person reads it: a string as is, the rest as TOML writes it.
fn as_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The word diff of two texts (words and the whitespace between them are
/// the tokens), adjacent runs of one kind joined.
pub fn word_diff(old: &str, new: &str) -> Vec<Words> {
    let diff = similar::TextDiff::configure()
        .timeout(std::time::Duration::from_millis(200))
        .diff_words(old, new);
    let mut out: Vec<Words> = Vec::new();
    for change in diff.iter_all_changes() {
        let op = match change.tag() {
            similar::ChangeTag::Equal => WordOp::Equal,
            similar::ChangeTag::Delete => WordOp::Removed,
            similar::ChangeTag::Insert => WordOp::Added,
        };
        match out.last_mut() {
            Some(last) if last.op == op => last.text.push_str(change.value()),
            _ => out.push(Words {
                op,
                text: change.value().to_owned(),
            }),
        }
    }
    out
}

/// A directive file of one side, parsed: the directive, or the problems
/// that kept it from being read.
pub type Loaded = std::result::Result<Directive, Vec<Problem>>;

/// A side of the diff, to name which side's file is meant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Which {
    Old,
    New,
}

/// The directive files of both sides parsed so far, by path below
/// `.swarm/`: each is parsed once, whichever part of the report reads it
/// (the comparison, then the effective states).
#[derive(Debug, Default)]
pub struct Declared {
    files: HashMap<(Which, String), Loaded>,
}

impl Declared {
    /// The file at `path` on side `which`, if it has been parsed.
    pub fn get(&self, which: Which, path: &str) -> Option<&Loaded> {
        self.files.get(&(which, path.to_owned()))
    }

    /// Parses the files of `wanted` not parsed yet, half on each core (a
    /// directive parse is most of what a diff of directives costs). A file
    /// the new side shares with the old one is parsed once.
    pub fn parse(
        &mut self,
        repo: &gix::Repository,
        (old, new): (&Side, &Side),
        wanted: impl IntoIterator<Item = (Which, String)>,
    ) -> Result<()> {
        let side = |which: Which| match which {
            Which::Old => old,
            Which::New => new,
        };
        let shared = |path: &str| match (old.files.get(path), new.files.get(path)) {
            (Some(a), Some(b)) => a.same(b),
            _ => false,
        };
        let mut jobs: Vec<(Which, String)> = Vec::new();
        let mut copies: Vec<String> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for (which, path) in wanted {
            if self.files.contains_key(&(which, path.clone()))
                || !seen.insert((which, path.clone()))
            {
                continue;
            }
            if which == Which::New && shared(&path) {
                if !self.files.contains_key(&(Which::Old, path.clone()))
                    && seen.insert((Which::Old, path.clone()))
                {
                    jobs.push((Which::Old, path.clone()));
                }
                copies.push(path);
            } else {
                jobs.push((which, path));
            }
        }
        // Parsing is most of what a diff of directives costs.
        let loaded = super::on_two_threads(repo, &jobs, |repo, (which, path)| {
            load(repo, side(*which), path)
        })?;
        for (job, loaded) in jobs.into_iter().zip(loaded) {
            self.files.insert(job, loaded);
        }
        for path in copies {
            if let Some(loaded) = self.files.get(&(Which::Old, path.clone())).cloned() {
                self.files.insert((Which::New, path), loaded);
            }
        }
        Ok(())
    }
}

/// Parses the directive file at `path` of `side`.
fn load(repo: &gix::Repository, side: &Side, path: &str) -> Result<Loaded> {
    let rel = format!(".swarm/{path}");
    let bytes = match side.bytes(repo, path, crate::directive::limits::FILE_MAX)? {
        Ok(b) => b,
        Err(problem) => return Ok(Err(vec![problem])),
    };
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return Ok(Err(vec![
            Problem::error(&rel, "not_utf8", "file is not valid UTF-8").at(1, 1),
        ]));
    };
    let loaded = crate::directive::parse_directive_toml(text, &rel);
    match loaded.directive {
        Some(d) => Ok(Ok(d)),
        None => Ok(Err(loaded
            .problems
            .into_iter()
            .filter(Problem::is_error)
            .collect())),
    }
}

/// The directive files that differ between `old` and `new`, compared.
/// Problems (files that do not parse, links) go to `problems`; the files
/// parsed stay in `declared`.
pub fn compare(
    repo: &gix::Repository,
    old: &Side,
    new: &Side,
    declared: &mut Declared,
    problems: &mut Vec<Problem>,
) -> Result<Vec<DirectiveChange>> {
    let is_directive = |p: &&String| p.starts_with("directives/") && p.ends_with(".toml");
    let mut deleted = Vec::new();
    let mut added = Vec::new();
    let mut modified = Vec::new();
    for path in old.files.keys().filter(is_directive) {
        match new.files.get(path) {
            Some(f) if f.same(&old.files[path]) => {}
            Some(_) => modified.push(path.clone()),
            None => deleted.push(path.clone()),
        }
    }
    for path in new.files.keys().filter(is_directive) {
        if !old.files.contains_key(path) {
            added.push(path.clone());
        }
    }
    // Links are reported, never read nor paired.
    let mut regular = |side: &Side, paths: Vec<String>| -> Vec<String> {
        paths
            .into_iter()
            .filter(|p| match side.files[p].kind {
                Some(kind) => {
                    problems.push(super::side::not_regular(&format!(".swarm/{p}"), kind));
                    false
                }
                None => true,
            })
            .collect()
    };
    let deleted = regular(old, deleted);
    let added = regular(new, added);
    let modified = {
        let m = regular(old, modified);
        regular(new, m)
    };
    // Every file removed or added is read anyway (its lesson is shown):
    // read them first, and pair them by what they say.
    let wanted = deleted
        .iter()
        .map(|p| (Which::Old, p.clone()))
        .chain(added.iter().map(|p| (Which::New, p.clone())))
        .chain(
            modified
                .iter()
                .flat_map(|p| [(Which::Old, p.clone()), (Which::New, p.clone())]),
        );
    declared.parse(repo, (old, new), wanted)?;
    let moves = pair_moves(declared, &deleted, &added);
    let moved_to: std::collections::HashSet<&String> = moves.values().collect();
    let mut changes: Vec<Change> = Vec::new();
    for path in &deleted {
        match moves.get(path) {
            Some(to) => changes.push(Change::Edit(path.clone(), to.clone())),
            None => changes.push(Change::Removed(path.clone())),
        }
    }
    for path in added.iter().filter(|p| !moved_to.contains(p)) {
        changes.push(Change::Added(path.clone()));
    }
    changes.extend(modified.into_iter().map(|p| Change::Edit(p.clone(), p)));
    let mut out: Vec<DirectiveChange> = changes
        .iter()
        .map(|change| match change {
            Change::Edit(from, to) => edit(declared, from, to, problems),
            Change::Removed(path) => one_side(
                declared,
                Which::Old,
                path,
                DirectiveChangeKind::Removed,
                problems,
            ),
            Change::Added(path) => one_side(
                declared,
                Which::New,
                path,
                DirectiveChangeKind::Added,
                problems,
            ),
        })
        .collect();
    out.sort_by(|a, b| a.id.cmp(&b.id).then(a.path.cmp(&b.path)));
    Ok(out)
}

/// The removed files (`deleted`, old side) and added ones (`added`, new
/// side) that are one directive moved, as old path → new path: first those
/// whose `id` is the same, then those whose lesson is the same (its words,
/// whitespace aside); each file in one pair at most, in path order. A file
/// that does not parse is never paired: it is a removal or an addition.
/// Linear in the files (a pull request may add thousands).
fn pair_moves(
    declared: &Declared,
    deleted: &[String],
    added: &[String],
) -> HashMap<String, String> {
    /// The files of `paths` that parse, in path order.
    fn parsed<'a>(
        declared: &'a Declared,
        which: Which,
        paths: &'a [String],
    ) -> Vec<(&'a String, &'a Directive)> {
        let mut out: Vec<(&String, &Directive)> = paths
            .iter()
            .filter_map(|p| match declared.get(which, p) {
                Some(Ok(d)) => Some((p, d)),
                _ => None,
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(b.0));
        out
    }
    let (old, new) = (
        parsed(declared, Which::Old, deleted),
        parsed(declared, Which::New, added),
    );
    // The id first, so that a file moved is not taken by a lesson copied.
    let key = |by_id: bool, d: &Directive| {
        let k = if by_id {
            d.id.clone()
        } else {
            d.lesson.split_whitespace().collect::<Vec<_>>().join(" ")
        };
        (!k.is_empty()).then_some(k)
    };
    let mut new_paired = vec![false; new.len()];
    let mut pairs: HashMap<String, String> = HashMap::new();
    for by_id in [true, false] {
        let key = |d: &Directive| key(by_id, d);
        // The added files not paired yet, by key, in path order.
        let mut by_key: HashMap<String, std::collections::VecDeque<usize>> = HashMap::new();
        for (j, (_, d)) in new.iter().enumerate() {
            if let Some(k) = key(d).filter(|_| !new_paired[j]) {
                by_key.entry(k).or_default().push_back(j);
            }
        }
        for (from, d) in &old {
            if pairs.contains_key(*from) {
                continue;
            }
            let Some(j) = key(d)
                .and_then(|k| by_key.get_mut(&k))
                .and_then(|q| q.pop_front())
            else {
                continue;
            };
            new_paired[j] = true;
            pairs.insert((*from).clone(), new[j].0.clone());
        }
    }
    pairs
}

/// A directive file that differs, by what happened to it.
enum Change {
    /// Both sides have it: (old path, new path), which differ for a rename.
    Edit(String, String),
    Removed(String),
    Added(String),
}

/// The id a directive file stands for: its stem.
pub fn stem(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.strip_suffix(".toml").unwrap_or(name).to_owned()
}

fn level(d: &Directive) -> crate::event::Level {
    crate::event::Level {
        priority: d.priority,
        enforcement: d.enforcement,
    }
}

/// A directive only one side has.
fn one_side(
    declared: &Declared,
    which: Which,
    path: &str,
    change: DirectiveChangeKind,
    problems: &mut Vec<Problem>,
) -> DirectiveChange {
    let (lesson, declared) = match declared.get(which, path) {
        Some(Ok(d)) => (Some(d.lesson.clone()), Some(level(d))),
        Some(Err(p)) => {
            problems.extend(p.iter().cloned());
            (None, None)
        }
        None => (None, None),
    };
    DirectiveChange {
        id: stem(path),
        change,
        path: format!(".swarm/{path}"),
        old_path: None,
        lesson,
        declared,
        fields: Vec::new(),
    }
}

/// A directive both sides have (at `old_path` and `new_path`), compared.
fn edit(
    declared: &Declared,
    old_path: &str,
    new_path: &str,
    problems: &mut Vec<Problem>,
) -> DirectiveChange {
    let renamed = old_path != new_path;
    let mut change = DirectiveChange {
        id: stem(new_path),
        change: DirectiveChangeKind::Edited,
        path: format!(".swarm/{new_path}"),
        old_path: renamed.then(|| format!(".swarm/{old_path}")),
        lesson: None,
        declared: None,
        fields: Vec::new(),
    };
    match (
        declared.get(Which::Old, old_path),
        declared.get(Which::New, new_path),
    ) {
        (Some(Ok(a)), Some(Ok(b))) => {
            change.lesson = Some(b.lesson.clone());
            change.declared = Some(level(b));
            change.fields = field_changes(&table(a), &table(b));
            change.change = if renamed {
                DirectiveChangeKind::Renamed
            } else {
                match (a.status, b.status) {
                    (Status::Active, Status::Retired) => DirectiveChangeKind::Retired,
                    (Status::Retired, Status::Active) => DirectiveChangeKind::Reactivated,
                    _ => DirectiveChangeKind::Edited,
                }
            };
        }
        (a, b) => {
            for side in [a, b].into_iter().flatten() {
                if let Err(p) = side {
                    problems.extend(p.iter().cloned());
                }
            }
            change.change = DirectiveChangeKind::Unreadable;
        }
    }
    change
}

/// A directive as the TOML table of its fields, in file order.
pub fn table(d: &Directive) -> toml::Value {
    toml::Value::try_from(d).unwrap_or(toml::Value::Table(toml::Table::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_diffs_join_runs() {
        let words = word_diff(
            "never call unwrap in library code",
            "never call expect in code",
        );
        let text: Vec<(WordOp, &str)> = words.iter().map(|w| (w.op, w.text.as_str())).collect();
        assert_eq!(
            text,
            [
                (WordOp::Equal, "never call "),
                (WordOp::Removed, "unwrap"),
                (WordOp::Added, "expect"),
                (WordOp::Equal, " in"),
                (WordOp::Removed, " library"),
                (WordOp::Equal, " code"),
            ]
        );
    }

    /// The same id pairs first, then the same lesson; files alike in
    /// every other way pair with nothing.
    #[test]
    fn moves_pair_by_id_then_by_lesson_never_by_likeness() {
        let mut declared = Declared::default();
        let mut put = |which: Which, path: &str, id: &str, lesson: &str| {
            declared
                .files
                .insert((which, path.to_owned()), Ok(Directive::new(id, lesson)));
        };
        put(
            Which::Old,
            "directives/a.toml",
            "a",
            "Keep lesson one in mind",
        );
        put(
            Which::Old,
            "directives/b.toml",
            "b",
            "Keep lesson two in mind",
        );
        put(
            Which::Old,
            "directives/c.toml",
            "c",
            "Keep lesson three in mind",
        );
        // Same id as `a`, the lesson of `b`: the id wins.
        put(
            Which::New,
            "directives/sub/a.toml",
            "a",
            "Keep lesson two in mind",
        );
        put(
            Which::New,
            "directives/z.toml",
            "z",
            "Keep  lesson two\tin mind",
        );
        put(
            Which::New,
            "directives/x.toml",
            "x",
            "Keep lesson four in mind",
        );
        let deleted = ["a", "b", "c"].map(|s| format!("directives/{s}.toml"));
        let added = ["sub/a", "z", "x"].map(|s| format!("directives/{s}.toml"));
        let mut pairs: Vec<(String, String)> = pair_moves(&declared, &deleted, &added)
            .into_iter()
            .collect();
        pairs.sort();
        assert_eq!(
            pairs,
            [
                ("directives/a.toml".into(), "directives/sub/a.toml".into()),
                ("directives/b.toml".into(), "directives/z.toml".into()),
            ]
        );
    }

    #[test]
    fn lists_show_items_added_and_removed_and_ignore_order() {
        let mut a = Directive::new("ab", "a lesson long enough to pass");
        a.tags = vec!["x".into(), "y".into()];
        let mut b = a.clone();
        b.tags = vec!["y".into(), "z".into()];
        b.priority = crate::directive::Priority::High;
        let changes = field_changes(&table(&a), &table(&b));
        let fields: Vec<&str> = changes.iter().map(|c| c.field.as_str()).collect();
        assert_eq!(fields, ["priority", "tags"]);
        let mut c = a.clone();
        c.tags.reverse();
        assert!(field_changes(&table(&a), &table(&c)).is_empty());
    }
}
