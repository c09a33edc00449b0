//! Handoffs: the contract a coordinator gives one worker for one task, one
//! TOML file each under `.swarm/handoffs/<task>.toml` — the paths it owns
//! alone, those it may only read, the tasks it waits for, the criteria
//! that say it is done, and the commit it starts from. The file is
//! written once by `handoff create` and never rewritten: where a handoff
//! stands (open, in review, completed…) is a fold of the event log, so
//! that two branches recording on the same handoff merge.

pub mod check;
pub mod epic;
pub mod grade;
pub mod ownership;
pub mod review;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::event::{Body, Event, Kind};
use crate::problem::Problem;
use crate::store::Store;

use crate::directive_loop::inject::sanitise;
pub use ownership::{Overlap, overlaps};

/// Largest handoff file read, in bytes: a contract and a page of context.
pub const HANDOFF_MAX: u64 = 64 * 1024;

/// The hint of a handoff file that cannot be read.
const FORMAT_HINT: &str = "a handoff is the TOML `handoff create` writes (docs/handoffs.md); write a new one rather than edit it";

/// A handoff file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Handoff {
    /// The task's id, the file stem.
    pub task: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epic: Option<String>,
    /// The role of the worker, as `inject --role` takes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    pub created_at: toml::value::Datetime,
    pub contract: Contract,
    #[serde(default, skip_serializing_if = "Context::is_empty")]
    pub context: Context,
    #[serde(default)]
    pub escalation: Escalation,
}

/// What the worker may touch and when it is done.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Contract {
    /// Globs of the paths this task alone may change (at least one).
    pub owns: Vec<String>,
    /// Globs of the paths it may read and must not change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub readonly: Vec<String>,
    /// Tasks that must be completed first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends: Vec<String>,
    /// What done means: predicates (`grep:…`), `Tests pass: CMD`, or prose for a reviewer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub criteria: Vec<String>,
    /// The commit the work starts from, as 40 hex digits.
    pub base: String,
}

/// What the worker should know beyond the contract.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Context {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
}

impl Context {
    fn is_empty(&self) -> bool {
        self.summary.is_none() && self.next.is_none()
    }
}

/// Whom to ask, and how, when the contract does not fit the work.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Escalation {
    #[serde(default = "default_contact")]
    pub contact: String,
    #[serde(default = "default_scope_change")]
    pub scope_change: String,
}

fn default_contact() -> String {
    "coordinator".to_owned()
}

fn default_scope_change() -> String {
    "Stop and ask the coordinator: name the path outside `owns` you need and why. Do not change it first.".to_owned()
}

impl Default for Escalation {
    fn default() -> Self {
        Escalation {
            contact: default_contact(),
            scope_change: default_scope_change(),
        }
    }
}

impl Handoff {
    /// The file's text.
    pub fn render(&self) -> String {
        // Strings, lists and a datetime always serialise.
        toml::to_string(self).unwrap_or_default()
    }

    /// The handoff as JSON, its time as the RFC 3339 text it is written as
    /// (serde would give toml's private datetime wrapper).
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        if let Some(map) = v.as_object_mut() {
            map.insert("created_at".into(), self.created_at.to_string().into());
        }
        v
    }

    /// Reads a handoff's text; `rel` names the file in the problems.
    pub fn parse(text: &str, rel: &str) -> std::result::Result<Handoff, Problem> {
        let h: Handoff = toml::from_str(text).map_err(|e| {
            Problem::error(rel, "bad_handoff", e.message().trim().to_owned())
                .at_offset(text, e.span().map_or(0, |s| s.start))
                .with_hint(FORMAT_HINT)
        })?;
        let at = |needle: &str| text.find(needle).unwrap_or(0);
        let bad = |offset: usize, message: String| {
            Err(Problem::error(rel, "bad_handoff", message)
                .at_offset(text, offset)
                .with_hint(FORMAT_HINT))
        };
        if !is_valid_task(&h.task) {
            return bad(
                at("task"),
                format!("task `{}` is not a valid task id", h.task),
            );
        }
        if h.contract.owns.is_empty() {
            return bad(
                at("owns"),
                "`owns` names no path: a handoff owns at least one glob".into(),
            );
        }
        for glob in h.contract.owns.iter().chain(&h.contract.readonly) {
            if let Err(e) = crate::pathglob::PathGlob::parse(glob) {
                return bad(at(glob), format!("glob `{glob}`: {e}"));
            }
        }
        if let Some(d) = h.contract.depends.iter().find(|d| !is_valid_task(d)) {
            return bad(at(d), format!("dependency `{d}` is not a valid task id"));
        }
        if !is_commit_id(&h.contract.base) {
            return bad(
                at("base"),
                format!("base `{}` is not a 40-digit commit id", h.contract.base),
            );
        }
        Ok(h)
    }
}

/// A task id: what a directive id may be (lowercase ASCII letters, digits,
/// `-`, `_`, `.`; 2 to 80 bytes), since both name a file under `.swarm/`,
/// and a valid part of the branch name `swarm/<task>` (see [`task_problem`]).
pub fn is_valid_task(id: &str) -> bool {
    task_problem(id).is_none()
}

/// Why `id` cannot be a task id, in a phrase, or `None` when it can. Beyond
/// the directive id rule, what `git check-ref-format` refuses in a part of a
/// ref name: `..`, a `.lock` ending, a trailing `.` (a leading `.` or `-`
/// and control characters are already outside the directive id rule).
pub fn task_problem(id: &str) -> Option<&'static str> {
    if !crate::directive::is_valid_id(id) {
        Some(
            "a task id is 2 to 80 lowercase letters, digits, `-`, `_` or `.`, starting with a letter or digit",
        )
    } else if id.contains("..") {
        Some("it contains `..`, which a git branch name `swarm/<task>` may not")
    } else if id.ends_with(".lock") {
        Some("it ends with `.lock`, which a git branch name `swarm/<task>` may not")
    } else if id.ends_with('.') {
        Some("it ends with `.`, which a git branch name `swarm/<task>` may not")
    } else {
        None
    }
}

/// The lock `handoff create` holds from reading the handoffs until the new
/// one is written and its event appended, so that two creates at once
/// cannot both take the same paths. Waits for a create that holds it; held
/// until the returned file is dropped.
pub fn lock(store: &Store) -> Result<std::fs::File> {
    let local = store.create_local_dir()?;
    crate::event::open_locked(
        &local.join("handoff-create.lock"),
        std::time::Duration::from_secs(10),
    )
}

fn is_commit_id(s: &str) -> bool {
    s.len() == 40
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The folder handoffs are kept in.
pub fn dir(store: &Store) -> PathBuf {
    store.swarm_dir.join("handoffs")
}

/// The file of the handoff `task`.
pub fn path(store: &Store, task: &str) -> PathBuf {
    dir(store).join(format!("{task}.toml"))
}

/// Every handoff, sorted by task, with the problems of the files that could
/// not be read (a link, too large, bad TOML), which are skipped.
pub fn load_all(store: &Store) -> Result<(Vec<Handoff>, Vec<Problem>)> {
    let dir = dir(store);
    let names = crate::safe_fs::names_ending(&dir, ".toml").map_err(|e| Error::io(&dir, e))?;
    let (mut handoffs, mut problems) = (Vec::new(), Vec::new());
    for name in names {
        match load(store, &dir.join(&name)) {
            Ok(h) => handoffs.push(h),
            Err(problem) => problems.push(problem),
        }
    }
    // By task, not file name: `auth.toml` would sort after `auth-2.toml`.
    handoffs.sort_by(|a, b| a.task.cmp(&b.task));
    Ok((handoffs, problems))
}

/// Handoffs holding ownership whose `owns` overlap: only `create` refuses
/// an overlap, so two branches each creating a handoff on the same paths
/// meet only when merged. One warning per such pair, at the `owns` line of
/// the later one (by `created_at`, then task), naming both tasks and a path
/// both own.
pub fn standing_overlaps(store: &Store, handoffs: &[Handoff], log: &[Event]) -> Vec<Problem> {
    let max = store.config.handoffs.max_review_attempts;
    let mut holding: Vec<&Handoff> = handoffs
        .iter()
        .filter(|h| standing(&h.task, log, max).holds_ownership())
        .collect();
    holding.sort_by_key(|h| (h.created_at.to_string(), h.task.clone()));
    let mut problems = Vec::new();
    for (i, later) in holding.iter().enumerate() {
        for earlier in &holding[..i] {
            let Some(o) = overlaps(&later.contract.owns, &earlier.contract.owns, &[]) else {
                continue;
            };
            let file = path(store, &later.task);
            let rel = store.rel(&file);
            let shared = if o.decided {
                format!("both own {}", o.witness)
            } else {
                "whether they share a path could not be decided".to_owned()
            };
            let mut problem = Problem::warning(
                &rel,
                "handoff_overlap",
                format!(
                    "handoff `{}`'s `{}` overlaps handoff `{}`'s `{}`: {shared}",
                    later.task, o.mine, earlier.task, o.theirs
                ),
            )
            .with_hint(format!(
                "a path is owned by one open handoff at a time (they met in a merge): `git swarm handoff release {} --reason TEXT` for the one given up",
                later.task
            ));
            // The file was read a moment ago; without it the warning has no line.
            if let Some(text) = crate::safe_fs::read(&file, HANDOFF_MAX)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
            {
                let at = text
                    .lines()
                    .scan(0, |start, line| {
                        let here = *start;
                        *start += line.len() + 1;
                        Some((here, line))
                    })
                    .find(|(_, line)| line.trim_start().starts_with("owns"))
                    .map_or(0, |(at, _)| at);
                problem = problem.at_offset(&text, at);
            }
            problems.push(problem);
        }
    }
    problems
}

/// One handoff file, checked to be a regular file within the size limit
/// whose task is its file stem.
pub fn load(store: &Store, path: &Path) -> std::result::Result<Handoff, Problem> {
    load_in(&store.root, path)
}

/// [`load`] for a caller with a work tree but maybe no `.swarm/` store
/// (`worktree create`); `root` is the work tree the problems are named from.
pub fn load_in(root: &Path, path: &Path) -> std::result::Result<Handoff, Problem> {
    let rel = path
        .strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/");
    let text =
        crate::store::read_owned_text(path, &rel, HANDOFF_MAX, "a handoff", "shorten its context")?;
    let h = Handoff::parse(&text, &rel)?;
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    if h.task != stem {
        return Err(Problem::error(
            &rel,
            "bad_handoff",
            format!("task `{}` is not the file's name `{stem}`", h.task),
        )
        .at_offset(&text, text.find("task").unwrap_or(0))
        .with_hint("a handoff's task is its file stem"));
    }
    Ok(h)
}

/// The handoff `task`: an error naming the closest task when there is none,
/// or the file's problem when it cannot be read.
pub fn find(store: &Store, task: &str) -> Result<Handoff> {
    let (handoffs, problems) = load_all(store)?;
    if let Some(h) = handoffs.into_iter().find(|h| h.task == task) {
        return Ok(h);
    }
    let rel = store.rel(&path(store, task));
    let mine: Vec<Problem> = problems.into_iter().filter(|p| p.path == rel).collect();
    if !mine.is_empty() {
        return Err(Error::Invalid(mine));
    }
    let tasks = tasks(store);
    let list = "`git swarm handoff list` lists them";
    let hint = match crate::suggest::closest(task, tasks.iter().map(String::as_str)) {
        Some(m) => format!("did you mean `{m}`? {list}"),
        None => list.to_owned(),
    };
    Err(Error::usage(format!("no handoff `{task}`"), hint))
}

/// The file stems of the handoffs folder, readable or not.
pub fn tasks(store: &Store) -> Vec<String> {
    let Ok(Some(listing)) = crate::safe_fs::read_dir(&dir(store)) else {
        return Vec::new();
    };
    listing
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".toml").map(str::to_owned)
        })
        .collect()
}

/// Writes a new handoff; refuses to overwrite one (or anything else at its path).
pub fn write_new(store: &Store, h: &Handoff) -> Result<PathBuf> {
    let path = path(store, &h.task);
    let rel = store.rel(&path);
    let text = h.render();
    if text.len() as u64 > HANDOFF_MAX {
        return Err(Error::usage(
            format!(
                "handoff `{}` would be {} bytes, more than the {HANDOFF_MAX} a handoff may hold",
                h.task,
                text.len()
            ),
            "shorten its summary, next step or criteria",
        ));
    }
    match crate::safe_fs::create_new(&store.swarm_dir, &path, text.as_bytes(), &rel, &h.task) {
        Err(Error::AlreadyExists { .. }) => Err(exists(&h.task, &rel)),
        other => other.map(|()| path),
    }
}

/// The error of a task id already taken.
pub fn exists(task: &str, rel: &str) -> Error {
    Error::usage(
        format!("handoff `{task}` already exists at {rel}"),
        format!(
            "a handoff is never rewritten: `git swarm handoff show {task}` shows it; choose another task id"
        ),
    )
}

/// The `handoff_created` event of `h`.
pub fn created_event(store: &Store, h: &Handoff) -> Event {
    store.event(Body::HandoffCreated {
        task: h.task.clone(),
        epic: h.epic.clone(),
        role: h.role.clone(),
        digest: Some(digest(h.render().as_bytes())),
    })
}

/// The digest `handoff_created` records of a handoff file: its git blob id
/// (what `git hash-object` prints in a SHA-1 repository), whatever the
/// repository's hash, so the record reads the same everywhere.
pub fn digest(bytes: &[u8]) -> String {
    match gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, bytes) {
        Ok(id) => id.to_string(),
        // Hashing in memory does not fail; a marker no file matches if it did.
        Err(_) => "unhashable".into(),
    }
}

/// Was the file of `task` changed since `handoff create` recorded its
/// digest? A worker's change may not rewrite its own contract. A handoff
/// created before digests were recorded is never called edited.
pub fn edited(store: &Store, task: &str, events: &[Event]) -> bool {
    let Some(recorded) = events
        .iter()
        .filter(|e| e.kind == Kind::HandoffCreated.as_str() && e.str_field("task") == Some(task))
        .find_map(|e| e.str_field("digest"))
    else {
        return false;
    };
    match crate::safe_fs::read(&path(store, task), HANDOFF_MAX) {
        Ok(bytes) => digest(&bytes) != recorded,
        Err(_) => true,
    }
}

crate::directive::string_enum! {
    /// Where a handoff stands: a fold of its events.
    Standing {
        /// Created, not yet checked.
        Open => "open",
        /// The latest check passed, or a review asked for changes: waiting for a review or a new check.
        InReview => "in_review",
        /// The latest check found violations.
        Violated => "violated",
        /// Sent back for changes as many times as `handoffs.max_review_attempts` allows.
        Blocked => "blocked",
        /// Done: its ownership is given back.
        Completed => "completed",
        /// Given up: its ownership is given back.
        Released => "released",
    } default Open
}

impl Standing {
    /// Does a handoff standing so keep its `owns` paths from other handoffs?
    pub fn holds_ownership(self) -> bool {
        !matches!(self, Standing::Completed | Standing::Released)
    }
}

/// The events about `task` (any `handoff_*` kind whose `task` field is it).
pub fn events_of<'a>(task: &'a str, events: &'a [Event]) -> impl Iterator<Item = &'a Event> + 'a {
    events.iter().filter(move |e| {
        e.known_kind().is_some_and(is_handoff_kind) && e.str_field("task") == Some(task)
    })
}

/// Is `kind` one of the handoff kinds?
pub fn is_handoff_kind(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::HandoffCreated
            | Kind::HandoffChecked
            | Kind::HandoffViolation
            | Kind::HandoffReview
            | Kind::HandoffCompleted
            | Kind::HandoffReleased
    )
}

/// Where `task` stands after `events` (in fold order), in this order of
/// precedence: completed, released, blocked (at least `max_attempts`
/// distinct `needs_changes` reviews and no approval after the last),
/// violated (the latest check failed), in review (the latest check passed,
/// or changes were asked for), open.
pub fn standing(task: &str, events: &[Event], max_attempts: u32) -> Standing {
    let mut completed = false;
    let mut released = false;
    let mut needs_changes = std::collections::HashSet::new();
    let mut approved_after = false;
    let mut last_check: Option<bool> = None;
    for e in events_of(task, events) {
        match e.known_kind() {
            Some(Kind::HandoffCompleted) => completed = true,
            Some(Kind::HandoffReleased) => released = true,
            Some(Kind::HandoffChecked) => {
                last_check = e
                    .data
                    .get("ok")
                    .and_then(serde_json::Value::as_bool)
                    .or(last_check);
            }
            Some(Kind::HandoffReview) => match e.str_field("verdict") {
                Some("needs_changes") => {
                    needs_changes.insert(e.id.as_str());
                    approved_after = false;
                }
                Some("approve") => approved_after = true,
                _ => {}
            },
            _ => {}
        }
    }
    if completed {
        Standing::Completed
    } else if released {
        Standing::Released
    } else if needs_changes.len() >= max_attempts as usize && !approved_after && max_attempts > 0 {
        Standing::Blocked
    } else if last_check == Some(false) {
        Standing::Violated
    } else if last_check == Some(true) || !needs_changes.is_empty() {
        Standing::InReview
    } else {
        Standing::Open
    }
}

/// What `handoff create` was asked, the base already resolved to a commit.
#[derive(Debug, Clone, Default)]
pub struct CreateRequest {
    pub task: String,
    pub epic: Option<String>,
    pub role: Option<String>,
    pub owns: Vec<String>,
    pub readonly: Vec<String>,
    pub depends: Vec<String>,
    pub criteria: Vec<String>,
    pub summary: Option<String>,
    pub next: Option<String>,
    /// 40 hex digits.
    pub base: String,
}

/// What `handoff create` decided.
#[derive(Debug, Clone)]
pub enum Created {
    /// The handoff to write.
    Ready(Box<Handoff>),
    /// `owns` overlaps a handoff still holding its ownership.
    Overlaps { task: String, overlap: Overlap },
}

/// Checks a request against the handoffs there are and the log, and makes
/// the handoff to write: bad input is an error (exit 2), an overlap with a
/// handoff still holding its paths is [`Created::Overlaps`].
pub fn create(
    store: &Store,
    req: CreateRequest,
    handoffs: &[Handoff],
    log: &[Event],
    tracked: &[String],
) -> Result<Created> {
    if let Some(why) = task_problem(&req.task) {
        return Err(Error::usage(
            format!("`{}` is not a valid task id: {why}", req.task),
            "a task id is 2 to 80 lowercase letters, digits, `-`, `_` or `.`, starting with a letter or digit, with no `..` and not ending in `.` or `.lock` (it names the branch `swarm/<task>`)",
        ));
    }
    if let Some(epic) = req.epic.as_deref()
        && let Some(why) = task_problem(epic)
    {
        return Err(Error::usage(
            format!("`{epic}` is not a valid epic id: {why}"),
            "an epic id follows the task id rule: lowercase letters, digits, `-`, `_` or `.`, with no `..` and not ending in `.` or `.lock`",
        ));
    }
    if req.owns.is_empty() {
        return Err(Error::usage(
            "a handoff owns at least one path",
            "name what the task alone may change: `--owns 'src/auth/**'`",
        ));
    }
    for glob in req.owns.iter().chain(&req.readonly) {
        if let Err(e) = crate::pathglob::PathGlob::parse(glob) {
            return Err(Error::usage(e.message, e.hint));
        }
    }
    let rel = store.rel(&path(store, &req.task));
    if handoffs.iter().any(|h| h.task == req.task)
        || path(store, &req.task).symlink_metadata().is_ok()
    {
        return Err(exists(&req.task, &rel));
    }
    for d in &req.depends {
        if d == &req.task {
            return Err(Error::usage(
                format!("task `{d}` cannot depend on itself"),
                "name the tasks that must be completed before this one",
            ));
        }
        if !handoffs.iter().any(|h| &h.task == d) {
            let list = "create that handoff first, or `git swarm handoff list` lists them";
            let hint = match crate::suggest::closest(d, handoffs.iter().map(|h| h.task.as_str())) {
                Some(m) => format!("did you mean `{m}`? {list}"),
                None => list.to_owned(),
            };
            return Err(Error::usage(
                format!("dependency `{d}` is not a handoff"),
                hint,
            ));
        }
    }
    let max = store.config.handoffs.max_review_attempts;
    for other in handoffs {
        if !standing(&other.task, log, max).holds_ownership() {
            continue;
        }
        if let Some(overlap) = overlaps(&req.owns, &other.contract.owns, tracked) {
            return Ok(Created::Overlaps {
                task: other.task.clone(),
                overlap,
            });
        }
    }
    // Whole seconds: the time a person reads in the file, not the log's.
    let now = store
        .clock
        .now()
        .round(jiff::Unit::Second)
        .unwrap_or(store.clock.now());
    let created_at = now
        .to_string()
        .parse::<toml::value::Datetime>()
        .map_err(|e| {
            Error::usage(
                format!("the clock's time cannot be written: {e}"),
                "set GIT_SWARM_NOW to an RFC 3339 time",
            )
        })?;
    Ok(Created::Ready(Box::new(Handoff {
        task: req.task,
        epic: req.epic,
        role: req.role,
        created_at,
        contract: Contract {
            owns: req.owns,
            readonly: req.readonly,
            depends: req.depends,
            criteria: req.criteria,
            base: req.base,
        },
        context: Context {
            summary: req.summary,
            next: req.next,
        },
        escalation: Escalation::default(),
    })))
}

/// The commit `spec` names (a tag peeled), as 40 hex digits.
pub fn resolve_base(repo: &gix::Repository, spec: &str) -> Result<String> {
    let not_commit = |what: &str| {
        Error::usage(
            format!("--base `{spec}` {what}"),
            "name a commit, branch or tag that `git rev-parse --verify REV^{commit}` accepts (default: HEAD)",
        )
    };
    let id = repo
        .rev_parse_single(spec)
        .map_err(|_| not_commit("does not name a revision in this repository"))?;
    let object = id
        .object()
        .map_err(|e| Error::git(format!("reading {spec}"), e))?
        .peel_tags_to_end()
        .map_err(|e| Error::git(format!("peeling the tag {spec}"), e))?;
    if object.kind != gix::object::Kind::Commit {
        return Err(not_commit(&format!(
            "names a {}, not a commit",
            object.kind
        )));
    }
    Ok(object.id.to_string())
}

/// The files git tracks (its index), the overlap test's fallback witnesses.
pub fn tracked_files(repo: &gix::Repository) -> Vec<String> {
    let Ok(index) = repo.index_or_empty() else {
        return Vec::new();
    };
    index
        .entries()
        .iter()
        .filter_map(|e| std::str::from_utf8(e.path(&index)).ok().map(str::to_owned))
        .collect()
}

/// Most lines of context a brief gives beside its contract.
pub const BRIEF_LINES: usize = 50;

/// What a worker is given: the contract as JSON, then a few lines of context.
#[derive(Debug, Clone, Serialize)]
pub struct Brief {
    pub contract: serde_json::Value,
    pub context: Vec<String>,
}

/// The brief of `h`: its contract, and what the worker needs around it —
/// the epic's summary, its role, what each dependency produced and whether
/// it is done, what comes next, how to escalate — at most [`BRIEF_LINES`] lines.
///
/// A brief goes into a worker's prompt, beside the `inject` block, and
/// every handoff file came in a pull request: each of its texts (a
/// dependency's summary as much as this task's criteria) is
/// [`sanitise`]d as a lesson is, so it can neither close a block nor start
/// a line of its own nor hide words.
pub fn brief(h: &Handoff, handoffs: &[Handoff], log: &[Event], max_attempts: u32) -> Brief {
    let c = &h.contract;
    let all = |items: &[String]| items.iter().map(|s| sanitise(s)).collect::<Vec<_>>();
    let contract = serde_json::json!({
        "task": sanitise(&h.task),
        "owns": all(&c.owns),
        "readonly": all(&c.readonly),
        "depends": all(&c.depends),
        "criteria": all(&c.criteria),
        "base": sanitise(&c.base),
    });
    // The fixed words of a line hold no tag and no line break: the whole
    // line is sanitised, whatever of it came from a file, its indent kept.
    let line = |s: String| {
        let text = s.trim_start_matches(' ');
        let indent = &s[..s.len() - text.len()];
        crate::display::truncate(&format!("{indent}{}", sanitise(text)), 300)
    };
    let mut lines = Vec::new();
    if let Some(epic) = &h.epic {
        lines.push(line(format!("Epic: {epic}")));
    }
    if let Some(summary) = &h.context.summary {
        lines.push(line(format!("Summary: {summary}")));
    }
    if let Some(role) = &h.role {
        lines.push(line(format!("Role: {role}")));
    }
    for d in &c.depends {
        let standing = standing(d, log, max_attempts);
        let done = events_of(d, log)
            .filter(|e| e.known_kind() == Some(Kind::HandoffCompleted))
            .last()
            .map(|e| format!(" at {}", e.ts))
            .unwrap_or_default();
        lines.push(line(format!("Depends on {d}: {}{done}", standing.as_str())));
        if let Some(dep) = handoffs.iter().find(|x| &x.task == d) {
            if let Some(summary) = &dep.context.summary {
                lines.push(line(format!("  produced: {summary}")));
            }
            if !dep.contract.criteria.is_empty() {
                lines.push(line(format!("  met: {}", dep.contract.criteria.join("; "))));
            }
        }
    }
    if let Some(next) = &h.context.next {
        lines.push(line(format!("Next: {next}")));
    }
    lines.push(line(format!(
        "Escalate to {}: {}",
        h.escalation.contact, h.escalation.scope_change
    )));
    if lines.len() > BRIEF_LINES {
        // The escalation line is kept: a worker must always know whom to ask.
        let last = lines.pop().unwrap_or_default();
        lines.truncate(BRIEF_LINES - 2);
        lines.push("(more context left out)".into());
        lines.push(last);
    }
    Brief {
        contract,
        context: lines,
    }
}

/// What `handoff release` decided.
#[derive(Debug, Clone)]
pub enum Released {
    /// The `handoff_released` event to append.
    Now(Event),
    /// Completed or released already: it holds nothing to give back.
    Already(Standing),
}

/// `handoff release`: the `handoff_released` event, or the standing that
/// refuses it (a handoff completed or released holds nothing).
pub fn release(store: &Store, h: &Handoff, reason: &str, log: &[Event]) -> Result<Released> {
    let reason = crate::directive_loop::gate::justification(
        reason,
        "releasing a handoff",
        "say why the task is given up, e.g. `--reason \"the epic was dropped\"`",
    )?;
    let now = standing(&h.task, log, store.config.handoffs.max_review_attempts);
    if !now.holds_ownership() {
        return Ok(Released::Already(now));
    }
    Ok(Released::Now(store.event(Body::HandoffReleased {
        task: h.task.clone(),
        reason: reason.to_owned(),
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(id: u32, body: Body) -> Event {
        let ts = "2026-11-25T12:00:00Z".parse().expect("valid test input");
        let mut e = Event::new(body, ts);
        e.id = format!("01KAAAAAAAAAAAAAAAAAAAA{id:03}");
        e
    }

    fn review(id: u32, verdict: &str) -> Event {
        ev(
            id,
            Body::HandoffReview {
                task: "t1".into(),
                verdict: verdict.into(),
                note: None,
            },
        )
    }

    fn checked(id: u32, ok: bool) -> Event {
        ev(
            id,
            Body::HandoffChecked {
                task: "t1".into(),
                ok,
                range: "a..b".into(),
                violations: u32::from(!ok),
            },
        )
    }

    #[test]
    fn standing_follows_the_events_in_order_of_precedence() {
        let created = ev(
            1,
            Body::HandoffCreated {
                task: "t1".into(),
                epic: None,
                role: None,
                digest: None,
            },
        );
        let mut log = vec![created];
        assert_eq!(standing("t1", &log, 3), Standing::Open);
        log.push(checked(2, false));
        assert_eq!(standing("t1", &log, 3), Standing::Violated);
        log.push(checked(3, true));
        assert_eq!(standing("t1", &log, 3), Standing::InReview);
        log.push(review(4, "needs_changes"));
        log.push(review(4, "needs_changes"));
        log.push(review(5, "needs_changes"));
        // The same event twice (a merge) counts once.
        assert_eq!(standing("t1", &log, 3), Standing::InReview);
        log.push(review(6, "needs_changes"));
        assert_eq!(standing("t1", &log, 3), Standing::Blocked);
        log.push(review(7, "approve"));
        assert_eq!(standing("t1", &log, 3), Standing::InReview);
        log.push(ev(
            8,
            Body::HandoffReleased {
                task: "t1".into(),
                reason: "r".into(),
            },
        ));
        assert_eq!(standing("t1", &log, 3), Standing::Released);
        log.push(ev(
            9,
            Body::HandoffCompleted {
                task: "t1".into(),
                range: None,
            },
        ));
        assert_eq!(standing("t1", &log, 3), Standing::Completed);
        // Another task's events are not this one's.
        assert_eq!(standing("t2", &log, 3), Standing::Open);
    }

    #[test]
    fn a_bad_file_is_a_problem_at_its_place() {
        let text = "task = \"t1\"\ncreated_at = 2026-11-25T12:00:00Z\n[contract]\nowns = [\"src/**\"]\nbase = \"abc\"\n";
        let p = Handoff::parse(text, ".swarm/handoffs/t1.toml").expect_err("short base");
        assert_eq!((p.line, p.column), (Some(5), Some(1)), "{p}");
        let text = "task = \"t1\"\nsurprise = 1\n";
        let p = Handoff::parse(text, "h.toml").expect_err("unknown key");
        assert_eq!(p.line, Some(2), "{p}");
    }

    #[test]
    fn task_ids_are_safe_file_stems_and_branch_names() {
        assert!(is_valid_task("auth-login"));
        assert!(is_valid_task("v1.2_x"));
        assert!(!is_valid_task("a..b"));
        assert!(!is_valid_task("x.lock"));
        assert!(!is_valid_task("Auth"));
        assert!(!is_valid_task("../x"));
    }
}
