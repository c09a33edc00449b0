//! `git swarm check`: every active directive's `verify` predicates against a change.
//!
//! A directive whose `paths` the change does not touch is **n/a**, not a
//! pass. Within scope each predicate holds, fails or errors; the directive
//! fails if any predicate fails, errors if none fails but one could not be
//! evaluated (which fails closed for `enforce`), and passes otherwise. A
//! directive with no `verify` predicate has nothing to check by machine and
//! is n/a.

mod cache;
mod contain;
mod render;

use gix::bstr::{BStr, ByteSlice};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use render::{code_quality, github_annotations, sarif};

use crate::change::{Change, Content};
use crate::directive::{Directive, Enforcement, Priority, Status};
use crate::error::Result;
use crate::pathglob::PathGlob;
use crate::predicate::Predicate;
use crate::problem::Problem;
use cache::GrepTreeCache;

/// What `check` reads of a directive file, its strings borrowed: from the
/// bytes of a cached parse of a snapshot's directives (see
/// [`crate::index::directives_in_tree`]), which are decoded without copying
/// a string, or from a parsed directive ([`CheckEntry::of`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CheckEntry<'a> {
    /// The file, relative to the repository root (`.swarm/directives/<id>.toml`).
    #[serde(borrow)]
    pub path: std::borrow::Cow<'a, str>,
    /// The file's errors: a file with one is a problem, not a candidate.
    pub errors: Box<[Problem]>,
    /// The directive, when the file parsed.
    #[serde(borrow)]
    pub directive: Option<CheckDirective<'a>>,
}

impl<'a> CheckEntry<'a> {
    /// The entry of a parsed file of `.swarm/directives/`.
    pub fn of(e: &'a crate::index::DirectiveEntry) -> CheckEntry<'a> {
        CheckEntry {
            path: match &e.origin {
                Some(hive) => format!("hive:{hive}/{}", e.file).into(),
                None => format!(".swarm/directives/{}", e.file).into(),
            },
            errors: e
                .problems
                .iter()
                .filter(|p| p.is_error())
                .cloned()
                .collect(),
            directive: e.directive.as_ref().map(CheckDirective::of),
        }
    }

    /// The file name without `.toml`.
    pub fn stem(&self) -> &str {
        let name = self.path.rsplit('/').next().unwrap_or_default();
        name.strip_suffix(".toml").unwrap_or(name)
    }
}

/// The fields of a directive that a check uses.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CheckDirective<'a> {
    pub id: &'a str,
    pub lesson: &'a str,
    pub status: Status,
    pub priority: Priority,
    pub enforcement: Enforcement,
    // Boxed slices, not vectors (here and for `CheckEntry::errors`): they
    // are never grown, and a thousand entries take less memory.
    #[serde(borrow)]
    pub paths: Box<[&'a str]>,
    #[serde(borrow)]
    pub verify: Box<[&'a str]>,
}

impl<'a> CheckDirective<'a> {
    pub fn of(d: &'a Directive) -> CheckDirective<'a> {
        CheckDirective {
            id: &d.id,
            lesson: &d.lesson,
            status: d.status,
            priority: d.priority,
            enforcement: d.enforcement,
            paths: d.paths.iter().map(String::as_str).collect(),
            verify: d.verify.iter().map(String::as_str).collect(),
        }
    }
}

/// A directive to check, with where it came from.
#[derive(Debug, Clone)]
pub struct Candidate<'a> {
    pub directive: &'a CheckDirective<'a>,
    /// Its file, relative to the repository root.
    pub path: &'a str,
    /// The enforcement and priority in force (escalation raises them).
    pub enforcement: Enforcement,
    pub priority: Priority,
    /// Its file has no error (the actionability gate parsed every
    /// predicate): a path predicate whose glob names none of the changed
    /// paths may then be decided without parsing it.
    pub gated: bool,
}

/// What a `tool:` predicate came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolVerdict {
    Holds,
    Fails(String),
    Error(String),
    /// Not run (untrusted tool predicates): neither a pass nor a failure.
    Skipped(String),
}

/// Runs `tool:` predicates; the CLI supplies the sandboxed runner and the trust decision.
pub trait ToolRunner {
    fn run(&self, argv: &[String]) -> ToolVerdict;
    /// What to do about a [`ToolVerdict::Skipped`], for the report's warning.
    fn skip_hint(&self) -> Option<&str> {
        None
    }
}

/// A runner for checks that must not run programs: every tool predicate is
/// skipped with this message and hint.
pub struct NoTools {
    pub message: String,
    pub hint: Option<String>,
}

impl ToolRunner for NoTools {
    fn run(&self, _argv: &[String]) -> ToolVerdict {
        ToolVerdict::Skipped(self.message.clone())
    }

    fn skip_hint(&self) -> Option<&str> {
        self.hint.as_deref()
    }
}

/// How a directive (or one predicate) came out.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, strum::IntoStaticStr,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Outcome {
    Pass,
    Fail,
    /// Out of scope, or nothing to check by machine.
    #[serde(rename = "n/a")]
    #[strum(serialize = "n/a")]
    NotApplicable,
    Error,
    /// A predicate that was not run (an untrusted tool).
    Skipped,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Where a predicate found the problem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Finding {
    /// Repository-relative path (lossy UTF-8 for other paths).
    pub path: String,
    /// 1-based line, for line findings.
    pub line: Option<u32>,
    /// The offending line (capped at 500 characters), or what happened to the file.
    pub text: Option<String>,
}

/// Findings listed per predicate; the rest are counted in `omitted`. A
/// pathological change (a generated file of a million matching lines) must
/// not make a report of gigabytes, nor a SARIF log code scanning refuses.
pub const MAX_FINDINGS: usize = 1000;

/// One predicate's result.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PredicateResult<'a> {
    pub predicate: &'a str,
    pub outcome: Outcome,
    /// Why it failed, errored or was skipped (with the count of every finding).
    pub message: Option<String>,
    /// The first 1,000 findings.
    pub findings: Vec<Finding>,
    /// Findings beyond the first 1,000: counted in `message`, not listed.
    pub omitted: usize,
}

/// Findings as they are found: the first [`MAX_FINDINGS`] kept, the others counted.
#[derive(Default)]
struct Found {
    list: Vec<Finding>,
    omitted: usize,
}

impl Found {
    fn push(&mut self, finding: impl FnOnce() -> Finding) {
        if self.list.len() < MAX_FINDINGS {
            self.list.push(finding());
        } else {
            self.omitted += 1;
        }
    }

    /// A pass when nothing was found, else a failure with these findings,
    /// its message made from how many there are.
    fn verdict(self, source: &str, message: impl FnOnce(usize) -> String) -> PredicateResult<'_> {
        if self.list.is_empty() {
            return result(source, Outcome::Pass, None);
        }
        let total = self.list.len() + self.omitted;
        PredicateResult {
            findings: self.list,
            omitted: self.omitted,
            ..result(source, Outcome::Fail, Some(message(total)))
        }
    }
}

/// One directive's result.
// Its strings are borrowed from the candidate: a thousand results cost no copies.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DirectiveResult<'a> {
    pub id: &'a str,
    pub lesson: &'a str,
    /// The directive's file.
    pub path: &'a str,
    pub enforcement: Enforcement,
    pub priority: Priority,
    pub outcome: Outcome,
    /// Why it is n/a.
    pub reason: Option<&'static str>,
    pub predicates: Vec<PredicateResult<'a>>,
}

impl DirectiveResult<'_> {
    /// Does this result stop a commit, push or gate? `enforce` failures and
    /// errors always; `warn` ones too with `strict`; `advisory` never.
    pub fn blocks(&self, strict: bool) -> bool {
        matches!(self.outcome, Outcome::Fail | Outcome::Error)
            && match self.enforcement {
                Enforcement::Enforce => true,
                Enforcement::Warn => strict,
                Enforcement::Advisory => false,
            }
    }
}

/// Counts per outcome.
#[derive(Debug, Clone, Copy, Default, Serialize, JsonSchema)]
pub struct Counts {
    pub pass: usize,
    pub fail: usize,
    pub error: usize,
    #[serde(rename = "n/a")]
    pub not_applicable: usize,
}

/// The result of a check.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(title = "git-swarm check report")]
pub struct Report<'a> {
    /// The change checked: `staged`, `worktree`, `A..B`, `commit C`.
    pub change: String,
    /// Identifies the change's content (recorded violations are de-duplicated by it).
    pub fingerprint: String,
    /// Files the change touches.
    pub files: usize,
    pub counts: Counts,
    pub results: Vec<DirectiveResult<'a>>,
    /// Things the user should know that are not results (skipped tool
    /// predicates, paths with unresolved conflicts…).
    #[schemars(with = "Vec<String>")]
    pub warnings: Vec<Warning>,
}

/// Something the user should know about a check that is not a result. In
/// JSON it is its message alone; the hint is for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub message: String,
    pub hint: Option<String>,
}

impl Warning {
    pub fn new(message: impl Into<String>, hint: Option<&str>) -> Self {
        Warning {
            message: message.into(),
            hint: hint.map(str::to_owned),
        }
    }
}

impl Serialize for Warning {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.message)
    }
}

impl<'a> Report<'a> {
    pub fn blocking(&self, strict: bool) -> Vec<&DirectiveResult<'a>> {
        self.results.iter().filter(|r| r.blocks(strict)).collect()
    }
}

/// Checks `candidates` against `change`. Predicates were validated when the
/// directives were read; one that does not parse here is an error result.
pub fn evaluate<'a>(
    repo: &gix::Repository,
    change: &Change,
    candidates: &'a [Candidate<'a>],
    tools: &dyn ToolRunner,
) -> Result<Report<'a>> {
    let mut results = Vec::with_capacity(candidates.len());
    let mut warnings = Vec::new();
    let mut cache = GrepTreeCache::at(repo.common_dir());
    let paths = ChangedPaths::of(change);
    for c in candidates {
        let d = &c.directive;
        let mut result = DirectiveResult {
            id: d.id,
            lesson: d.lesson,
            path: c.path,
            enforcement: c.enforcement,
            priority: c.priority,
            outcome: Outcome::NotApplicable,
            reason: None,
            predicates: Vec::new(),
        };
        let scope = (!change.files.is_empty()).then(|| {
            contain::catch(|| in_scope(d, change))
                .unwrap_or_else(|panic| Err(result_of_panic("paths", &panic)))
        });
        match scope {
            None => result.reason = Some("the change is empty"),
            Some(Ok(false)) => result.reason = Some("the change touches none of its paths"),
            // Unknown scope: an error, never a silent n/a.
            Some(Err(bad)) => {
                result.outcome = Outcome::Error;
                result.predicates.push(bad);
            }
            Some(Ok(true)) if d.verify.is_empty() => {
                result.reason =
                    Some("no machine-checkable predicate (`verify`); a reviewer checks it");
            }
            Some(Ok(true)) => {}
        }
        if result.reason.is_some() || result.outcome == Outcome::Error {
            results.push(result);
            continue;
        }
        // Exactly: a first push would make room for four, memory a check
        // of many directives would touch and not use.
        result.predicates.reserve_exact(d.verify.len());
        for &source in &d.verify {
            let changed = c.gated.then_some(&paths);
            let r = match contain::catch(|| {
                evaluate_predicate(repo, change, changed, source, tools, &mut cache)
            }) {
                Ok(r) => r?,
                Err(panic) => result_of_panic(source, &panic),
            };
            if r.outcome == Outcome::Skipped
                && let Some(m) = &r.message
                && !warnings.iter().any(|w: &Warning| &w.message == m)
            {
                warnings.push(Warning::new(m.clone(), tools.skip_hint()));
            }
            result.predicates.push(r);
        }
        let any = |o: Outcome| result.predicates.iter().any(|p| p.outcome == o);
        result.outcome = if any(Outcome::Fail) {
            Outcome::Fail
        } else if any(Outcome::Error) {
            Outcome::Error
        } else if any(Outcome::Pass) {
            Outcome::Pass
        } else {
            result.reason = Some(match (any(Outcome::Skipped), any(Outcome::NotApplicable)) {
                (true, false) => "every predicate was skipped",
                (true, true) => {
                    "its predicates were skipped or are checked before agents' tool calls"
                }
                _ => "its predicates are checked before agents' tool calls",
            });
            Outcome::NotApplicable
        };
        results.push(result);
    }
    cache.save();
    let mut counts = Counts::default();
    for r in &results {
        match r.outcome {
            Outcome::Pass => counts.pass += 1,
            Outcome::Fail => counts.fail += 1,
            Outcome::Error => counts.error += 1,
            Outcome::NotApplicable | Outcome::Skipped => counts.not_applicable += 1,
        }
    }
    Ok(Report {
        change: change.selection.label(),
        fingerprint: change.fingerprint(),
        files: change.files.len(),
        counts,
        results,
        warnings,
    })
}

/// Does the change touch the directive's `paths`? A glob that does not
/// parse (in a file that failed the gate) is an error result, not a glob
/// left out: left out, the directive could pass as n/a.
fn in_scope<'a>(
    d: &CheckDirective<'a>,
    change: &Change,
) -> std::result::Result<bool, PredicateResult<'a>> {
    if d.paths.is_empty() {
        return Ok(true);
    }
    let globs = d
        .paths
        .iter()
        .map(|&g| {
            PathGlob::parse(g).map_err(|e| {
                result(
                    g,
                    Outcome::Error,
                    Some(format!("`paths` glob cannot be used: {}", e.message)),
                )
            })
        })
        .collect::<std::result::Result<Vec<_>, _>>()?;
    Ok(globs.iter().any(|g| change.touches(g)))
}

/// The error result of a predicate whose evaluation panicked.
fn result_of_panic<'a>(source: &'a str, panic: &contain::Panicked) -> PredicateResult<'a> {
    result(
        source,
        Outcome::Error,
        Some(format!(
            "it could not be evaluated: git-swarm failed on it ({panic})"
        )),
    )
}

fn lossy(path: &BStr) -> String {
    path.to_str_lossy().into_owned()
}

fn cap(text: &[u8]) -> String {
    let s = text.to_str_lossy();
    match s.char_indices().nth(500) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.into_owned(),
    }
}

/// The result of a predicate whose regex cannot be used (past the regex
/// crate's size limits).
fn unusable_regex(predicate: &str, e: impl std::fmt::Display) -> PredicateResult<'_> {
    let message = format!("the regex cannot be used: {e}");
    result(predicate, Outcome::Error, Some(message))
}

/// A result with no finding.
fn result(predicate: &str, outcome: Outcome, message: Option<String>) -> PredicateResult<'_> {
    PredicateResult {
        predicate,
        outcome,
        message,
        findings: Vec::new(),
        omitted: 0,
    }
}

fn evaluate_predicate<'a>(
    repo: &gix::Repository,
    change: &Change,
    paths: Option<&ChangedPaths>,
    source: &'a str,
    tools: &dyn ToolRunner,
    cache: &mut GrepTreeCache,
) -> Result<PredicateResult<'a>> {
    // Only for a gated candidate: its predicates are known to parse.
    if let Some(r) = paths.and_then(|paths| untouched(paths, source)) {
        return Ok(r);
    }
    // A `grep_tree` result kept for a tree above every file its glob can
    // name needs no parse either: a parse error is never kept.
    let mut tree_keys = Vec::new();
    if let Some(glob) = grep_tree_glob(source) {
        // The folder every file the glob can name is in.
        let prefix = crate::pathglob::literal_prefix_of(glob);
        let folder = prefix.rfind('/').map_or("", |i| &prefix[..i]);
        // From the root down, reading no tree below the first one recognised.
        let mut hit = None;
        change.folder_trees(repo, folder, |level, tree| {
            let key = GrepTreeCache::tree_key(source, level, tree);
            hit = cache.get(key, source);
            if hit.is_none() {
                tree_keys.push(key);
            }
            hit.is_some()
        })?;
        if let Some(hit) = hit {
            // Kept under the folders above it that missed, too.
            cache.put(&tree_keys, &hit);
            return Ok(hit);
        }
    }
    let predicate = match Predicate::parse_gated(source) {
        Ok(p) => p,
        Err(e) => return Ok(result(source, Outcome::Error, Some(e.message))),
    };
    Ok(match &predicate {
        Predicate::FileModified(glob) => {
            if change.touches(glob) {
                result(source, Outcome::Pass, None)
            } else {
                result(
                    source,
                    Outcome::Fail,
                    Some(format!(
                        "the change touches no path matching `{}`",
                        glob.as_str()
                    )),
                )
            }
        }
        Predicate::FileNotModified(glob) => {
            let mut found = Found::default();
            for f in &change.files {
                for p in f.paths().filter(|p| glob.is_match_bytes(p)) {
                    found.push(|| Finding {
                        path: lossy(p),
                        line: None,
                        text: Some(<&str>::from(f.status).to_owned()),
                    });
                }
            }
            found.verdict(source, |total| {
                format!(
                    "the change touches {total} path(s) matching `{}`",
                    glob.as_str()
                )
            })
        }
        Predicate::Grep { regex, glob } => {
            let mut found = Found::default();
            for (i, f) in change.files.iter().enumerate() {
                if glob.as_ref().is_some_and(|g| !g.is_match_bytes(&f.path))
                    || skips_swarm(glob.as_ref(), &f.path)
                {
                    continue;
                }
                let lines = change.added_lines(repo, i)?;
                if lines.is_empty() {
                    continue;
                }
                let re = match regex.get() {
                    Ok(re) => re,
                    Err(e) => return Ok(unusable_regex(source, e)),
                };
                for line in lines.iter() {
                    if re.is_match(&line.text) {
                        found.push(|| Finding {
                            path: lossy(f.path.as_bstr()),
                            line: Some(line.line),
                            text: Some(cap(&line.text)),
                        });
                    }
                }
            }
            found.verdict(source, |total| {
                format!("{total} added line(s) match `{}`", regex.as_str())
            })
        }
        Predicate::GrepTree { regex, glob } => {
            // No tree above its files was recognised (looked up above).
            let mut keys = tree_keys;
            let mut files = change.snapshot_files(repo, glob.as_ref())?;
            files.retain(|f| !skips_swarm(glob.as_ref(), &f.path));
            // Blobs only: a file of the working tree can change under the same path.
            let key = files
                .iter()
                .map(|f| match &f.content {
                    Content::Blob(id) => Some((f.path.as_slice(), id.as_ref())),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()
                .map(|files| GrepTreeCache::key(source, files.into_iter()));
            let r = match key.and_then(|k| cache.get(k, source)) {
                Some(hit) => hit,
                None => {
                    keys.extend(key);
                    grep_tree(repo, source, regex, glob.as_ref(), &files)?
                }
            };
            cache.put(&keys, &r);
            r
        }
        // Checked before an agent's tool call, by its hook: a change has no command line.
        Predicate::Command { .. } => result(
            source,
            Outcome::NotApplicable,
            Some("checked before an agent's tool call, not on a change".to_owned()),
        ),
        Predicate::Tool { argv } => match tools.run(argv) {
            ToolVerdict::Holds => result(source, Outcome::Pass, None),
            ToolVerdict::Fails(message) => result(source, Outcome::Fail, Some(message)),
            ToolVerdict::Error(message) => result(source, Outcome::Error, Some(message)),
            ToolVerdict::Skipped(message) => result(source, Outcome::Skipped, Some(message)),
        },
    })
}

/// Searches `files` of the snapshot, whole, for `regex`: zero files is an error.
fn grep_tree<'a>(
    repo: &gix::Repository,
    source: &'a str,
    regex: &crate::predicate::LazyRegex,
    glob: Option<&PathGlob>,
    files: &[crate::change::SnapshotFile],
) -> Result<PredicateResult<'a>> {
    if files.is_empty() {
        let what = glob.map_or("any file".to_owned(), |g| format!("`{}`", g.as_str()));
        return Ok(result(
            source,
            Outcome::Error,
            Some(format!(
                "no file of the checked snapshot matches {what}, so nothing was searched"
            )),
        ));
    }
    let re = match regex.get() {
        Ok(re) => re,
        Err(e) => return Ok(unusable_regex(source, e)),
    };
    let mut found = Found::default();
    for file in files {
        let path = &file.path;
        let Some(bytes) = crate::change::content(repo, &file.content)? else {
            continue;
        };
        if crate::change::is_binary(&bytes) {
            continue;
        }
        // A CRLF line keeps its `\r`, as for `grep` and `git grep`.
        for (n, line) in bytes.lines_with_terminator().enumerate() {
            let line = line.strip_suffix(b"\n").unwrap_or(line);
            if re.is_match(line) {
                found.push(|| Finding {
                    path: lossy(path.as_bstr()),
                    line: u32::try_from(n + 1).ok(),
                    text: Some(cap(line)),
                });
            }
        }
    }
    Ok(found.verdict(source, |total| {
        format!("{total} line(s) in the snapshot match `{}`", regex.as_str())
    }))
}

/// Every path of a change (a rename's source too), sorted: whether one
/// starts with a glob's literal prefix is a binary search, not a scan, for
/// each of a thousand predicates.
struct ChangedPaths<'a>(Vec<&'a [u8]>);

impl<'a> ChangedPaths<'a> {
    fn of(change: &'a Change) -> ChangedPaths<'a> {
        let mut paths: Vec<&[u8]> = change
            .files
            .iter()
            .flat_map(|f| f.paths())
            .map(|p| p.as_bytes())
            .collect();
        paths.sort_unstable();
        ChangedPaths(paths)
    }

    /// Does a path start with `prefix`? The paths that do sort together,
    /// from the first one not below `prefix`.
    fn any_starts_with(&self, prefix: &[u8]) -> bool {
        let at = self.0.partition_point(|p| *p < prefix);
        self.0.get(at).is_some_and(|p| p.starts_with(prefix))
    }
}

/// The glob of a `grep_tree` predicate (empty without one).
fn grep_tree_glob(source: &str) -> Option<&str> {
    let (kind, arg) = crate::predicate::split_kind(source)?;
    (kind == "grep_tree").then(|| crate::predicate::split_grep(arg).1.unwrap_or(""))
}

/// The result of a `file_modified`, `file_not_modified` or `grep`
/// predicate whose glob names none of the change's paths, told from the
/// glob's literal start without parsing it (parsing a thousand predicates
/// was a tenth of a check). Only for a gated candidate, whose predicates
/// all parse: the result is the one the full evaluation gives.
fn untouched<'a>(paths: &ChangedPaths, source: &'a str) -> Option<PredicateResult<'a>> {
    let (kind, arg) = crate::predicate::split_kind(source)?;
    let glob = match kind {
        "file_modified" | "file_not_modified" => arg,
        // Without a glob, grep reads every changed file.
        "grep" => crate::predicate::split_grep(arg).1?,
        _ => return None,
    };
    let prefix = crate::pathglob::literal_prefix_of(glob);
    if prefix.is_empty() || paths.any_starts_with(prefix.as_bytes()) {
        return None;
    }
    Some(if kind == "file_modified" {
        result(
            source,
            Outcome::Fail,
            Some(format!("the change touches no path matching `{glob}`")),
        )
    } else {
        result(source, Outcome::Pass, None)
    })
}

/// `.swarm/` itself is not searched unless the glob names it: a directive's
/// own lesson and predicate contain the text it forbids, and would otherwise
/// fail the commit that adds it.
fn skips_swarm(glob: Option<&PathGlob>, path: &[u8]) -> bool {
    path.starts_with(b".swarm/") && !glob.is_some_and(|g| g.literal_prefix().starts_with(".swarm/"))
}

/// The directives checked in a snapshot, and the problems of their files.
/// A file with errors is a problem (bad input); if the directive in it
/// could still be read (it failed the gate: a predicate or glob that does
/// not parse, a shape out of bounds), it is a candidate too, not gated: a
/// predicate that cannot be evaluated is then an error, which fails closed
/// for `enforce`, where leaving the directive out would let the change pass.
pub fn candidates<'a>(
    entries: &'a [CheckEntry<'a>],
    fold: &crate::fold::Fold,
    only: Option<&str>,
) -> (Vec<Candidate<'a>>, Vec<Problem>) {
    let mut out = Vec::with_capacity(entries.len());
    let mut problems = Vec::new();
    for e in entries {
        if only.is_some_and(|id| id != e.stem()) {
            continue;
        }
        problems.extend(e.errors.iter().cloned());
        let Some(d) = &e.directive else { continue };
        if d.status != Status::Active {
            continue;
        }
        let (priority, enforcement) = fold.effective_of(d.id, d.priority, d.enforcement);
        out.push(Candidate {
            directive: d,
            path: &e.path,
            enforcement,
            priority,
            gated: e.errors.is_empty(),
        });
    }
    (out, problems)
}

#[cfg(test)]
mod tests {
    use super::ChangedPaths;

    #[test]
    fn changed_paths_find_a_prefix_wherever_it_sorts() {
        let paths = ChangedPaths(
            ["a.txt", "src/a/x.rs", "src/ab", "src/b/y.rs", "z"]
                .iter()
                .map(|p| p.as_bytes())
                .collect(),
        );
        for (prefix, expected) in [
            ("src/a/", true),
            ("src/ab", true),
            ("src/b/", true),
            ("src/", true),
            ("a.txt", true),
            ("z", true),
            ("src/c/", false),
            ("src/a/y", false),
            ("b", false),
            ("zz", false),
            ("0", false),
        ] {
            assert_eq!(
                paths.any_starts_with(prefix.as_bytes()),
                expected,
                "{prefix}"
            );
        }
    }
}
