//! `git swarm hive promote`: a project's directive proposed to a hive, as
//! a branch of the hive for its owners to review (DESIGN §7f,
//! docs/hive.md).
//!
//! Only knowledge that has proven itself leaves a project: the directive
//! must be the project's own, active, pass the actionability gate, be on
//! the project's trusted revision (reviewed there, not minted by a machine
//! and left unread), and meet the hive's bar (`[promotion]` of the hive's
//! config.toml at its head): applied in enough delegations, violated few
//! enough times. Nothing is merged into the hive: the branch is pushed for
//! a pull request, and projects take the lesson when they move their pin.
//!
//! The branch is written as [`super::branch`] writes one: a commit of
//! the user's, made in the hive's mirror, pushed without overwriting.

use std::path::Path;

use crate::config::{HiveSubscription, PromotionConfig};
use crate::directive::Status;
use crate::error::{Error, Result};
use crate::event::Event;
use crate::problem::Problem;
use crate::reviewed::Review;
use crate::store::Store;

use super::branch::HiveWrite;
use super::report::{Signals, signals};

/// What a promotion asks for.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// The project's directive.
    pub id: &'a str,
    pub hive: &'a HiveSubscription,
    /// The hive branch to write (default: [`default_branch`]).
    pub branch: Option<&'a str>,
    /// The project's name (see [`project_name`]).
    pub project: &'a str,
    /// The project's current commit, named in the provenance.
    pub head: Option<&'a str>,
}

/// How a promotion ended.
#[derive(Debug, Clone)]
pub enum Promotion {
    /// The directive falls short of the hive's bar: nothing was written.
    Blocked {
        record: Signals,
        bar: PromotionConfig,
        /// One sentence per shortfall.
        reasons: Vec<String>,
    },
    Pushed(Promoted),
}

/// A promotion pushed to the hive.
#[derive(Debug, Clone)]
pub struct Promoted {
    pub branch: String,
    pub commit: String,
    /// The hive's head the branch starts from.
    pub base: String,
    pub record: Signals,
    /// The provenance written into the directive's `source`.
    pub source: String,
}

/// The project's name in a hive: its root folder's name, in the letters a
/// branch name and an event field hold (lowercase, digits, `-`, `_`), at
/// most 40; `project` when nothing is left.
pub fn project_name(root: &Path) -> String {
    let raw = root
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let mut name = String::new();
    for c in raw.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '_' {
            c
        } else {
            '-'
        };
        if !(c == '-' && (name.is_empty() || name.ends_with('-'))) {
            name.push(c);
        }
    }
    let name: String = name.trim_end_matches('-').chars().take(40).collect();
    let name = name.trim_end_matches('-');
    if name.is_empty() {
        "project".to_owned()
    } else {
        name.to_owned()
    }
}

/// The project's name in a hive (see [`project_name`]): of its main
/// worktree's folder, so that a linked worktree reports as its project.
pub fn project_name_of(store: &Store) -> String {
    let main = store
        .common_dir
        .file_name()
        .filter(|n| *n == ".git")
        .and(store.common_dir.parent());
    project_name(main.unwrap_or(&store.root))
}

/// The branch a promotion goes to unless told: `promote/<project>/<id>`.
pub fn default_branch(project: &str, id: &str) -> String {
    format!("promote/{project}/{id}")
}

/// The provenance line a promoted directive carries in `source`.
pub fn provenance(project: &str, head: Option<&str>, record: &Signals) -> String {
    let at = head.map_or_else(String::new, |c| format!(" at {}", super::short(c)));
    format!(
        "promoted from {project}{at}: shown {}, applied {}, violated {} (git swarm hive promote)",
        record.shown, record.applied, record.violated
    )
}

/// What keeps `record` from the hive's `bar`: one sentence each.
pub fn shortfalls(record: &Signals, bar: &PromotionConfig) -> Vec<String> {
    let mut out = Vec::new();
    if record.applied < u64::from(bar.min_applied) {
        out.push(format!(
            "acknowledged as applied in {} delegation{}; the hive asks for at least {}",
            record.applied,
            if record.applied == 1 { "" } else { "s" },
            bar.min_applied
        ));
    }
    if record.violated > u64::from(bar.max_violations) {
        out.push(format!(
            "violated {} time{}; the hive allows at most {}",
            record.violated,
            if record.violated == 1 { "" } else { "s" },
            bar.max_violations
        ));
    }
    out
}

/// The project's directive `id` as a candidate: its file's text, once it
/// is the project's own, active, actionable and reviewed. Each refusal is
/// bad input (exit 2) with what to do.
pub fn candidate(store: &Store, review: &Review, id: &str) -> Result<String> {
    if !crate::directive::is_valid_id(id) {
        return Err(Error::usage(
            format!("`{}` is not a directive id", id.escape_debug()),
            "`git swarm list` shows this project's directives",
        ));
    }
    let rel = format!(".swarm/directives/{id}.toml");
    let path = store.directives_dir().join(format!("{id}.toml"));
    let bytes = match crate::safe_fs::read(&path, crate::directive::limits::FILE_MAX) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(not_the_projects(store, id));
        }
        Err(e) => return Err(Error::io(&path, e)),
    };
    let entry = crate::index::entry_from_bytes(&bytes, &rel, &format!("{id}.toml"), false);
    let errors: Vec<Problem> = entry
        .problems
        .iter()
        .filter(|p| p.is_error())
        .cloned()
        .collect();
    let Some(directive) = entry.directive.as_ref().filter(|_| errors.is_empty()) else {
        // The gate's problems name each field with line and column.
        return Err(Error::Invalid(errors));
    };
    if let Err(failure) = crate::directive::check_gate(directive) {
        return Err(Error::usage(
            format!(
                "`{id}` does not pass the actionability gate ({}): {}",
                failure.reason.as_str(),
                failure.detail()
            ),
            "fix it in the project first (`git swarm edit`); only an actionable lesson goes to a hive",
        ));
    }
    if directive.status == Status::Retired {
        return Err(Error::usage(
            format!("`{id}` is retired"),
            "only an active directive goes to a hive; `git swarm edit` brings one back",
        ));
    }
    if !review.is_reviewed(entry.blob.as_ref()) {
        return Err(Error::usage(
            format!(
                "`{id}` is not reviewed: its content is not on {}",
                review.revision_name()
            ),
            "a hive takes only reviewed lessons: commit it and merge it there (through a pull request), then promote it",
        ));
    }
    String::from_utf8(bytes).map_err(|_| {
        Error::usage(
            format!("{rel} is not UTF-8"),
            "re-save it as UTF-8, then run this again",
        )
    })
}

/// Why `id`, which the project has no file of, cannot be promoted.
fn not_the_projects(store: &Store, id: &str) -> Error {
    if let Some((_, sub)) = super::directive_file(store, id) {
        return Error::usage(
            format!(
                "`{id}` is a directive of hive `{}` ({}), not this project's",
                sub.name,
                super::origin_name(&sub.name, id)
            ),
            "only a project's own directive is promoted; change a hive's directive through a pull request on the hive",
        );
    }
    if store
        .quarantine_dir()
        .join(format!("{id}.toml"))
        .symlink_metadata()
        .is_ok()
    {
        return Error::usage(
            format!("`{id}` is in quarantine: it did not pass the actionability gate"),
            "fix it and `git swarm harden` promotes it into the project's directives first",
        );
    }
    Error::usage(
        format!("this project has no directive `{id}`"),
        "`git swarm list` shows this project's directives",
    )
}

/// `text` (a directive file) with `source` set to `source`, every other
/// byte kept as written.
pub fn with_source(text: &str, source: &str) -> Result<String> {
    let mut doc = text.parse::<toml_edit::DocumentMut>().map_err(|e| {
        Error::usage(
            format!("the directive does not parse: {e}"),
            "`git swarm validate` names the problem",
        )
    })?;
    doc.insert("source", toml_edit::value(source));
    Ok(doc.to_string())
}

/// Promotes the project's directive `req.id` into the hive `req.hive`:
/// checks it (see [`candidate`]), fetches the hive, reads its bar and
/// refuses an id the hive's head already has, then pushes a branch whose
/// one commit adds the directive with its provenance. `events` is the
/// project's log (see [`signals`]).
pub fn promote(
    store: &Store,
    review: &Review,
    events: &[Event],
    req: &Request<'_>,
) -> Result<Promotion> {
    let text = candidate(store, review, req.id)?;
    let record = signals(events).get(req.id).copied().unwrap_or_default();
    let branch = match req.branch {
        Some(b) => b.to_owned(),
        None => default_branch(req.project, req.id),
    };
    super::branch::check_branch_name(&branch)?;
    let hive = HiveWrite::open(store, review, req.hive)?;
    let bar = bar(&hive)?;
    let rel = format!(".swarm/directives/{}.toml", req.id);
    if hive.has_path(&hive.head, &rel)? {
        return Err(Error::usage(
            format!(
                "hive `{}` already has `{}` at its head ({})",
                req.hive.name,
                req.id,
                super::short(&hive.head)
            ),
            "a hive's directive changes through a pull request on the hive; `git swarm hive update` takes its newest",
        ));
    }
    let reasons = shortfalls(&record, &bar);
    if !reasons.is_empty() {
        return Ok(Promotion::Blocked {
            record,
            bar,
            reasons,
        });
    }
    if hive.remote_branch(&branch)?.is_some() {
        return Err(Error::usage(
            format!("hive `{}` already has a branch {branch}", req.hive.name),
            "--branch names another; or see the pull request of that one",
        ));
    }
    let source = provenance(req.project, req.head, &record);
    let promoted = with_source(&text, &source)?;
    // What the hive will check when a project takes it.
    let entry = crate::index::entry_from_bytes(
        promoted.as_bytes(),
        &rel,
        &format!("{}.toml", req.id),
        false,
    );
    let errors: Vec<Problem> = entry
        .problems
        .into_iter()
        .filter(Problem::is_error)
        .collect();
    if !errors.is_empty() {
        return Err(Error::Invalid(errors));
    }
    let lesson = entry.directive.map(|d| d.lesson).unwrap_or_default();
    let message = format!(
        "Promote `{id}` from {project}\n\n{lesson}\n\n\
         Its record in {project}: shown in {shown} delegations, applied in {applied}, \
         violated {violated} times, {prevented} tool calls refused by its guard. \
         The hive asks for at least {min} applied and at most {max} violations.\n\n\
         ({source})\n",
        id = req.id,
        project = req.project,
        shown = record.shown,
        applied = record.applied,
        violated = record.violated,
        prevented = record.prevented,
        min = bar.min_applied,
        max = bar.max_violations,
    );
    let commit = hive.commit(&hive.head, &[(rel, promoted.into_bytes())], &message)?;
    hive.push(&commit, &branch, None)?;
    Ok(Promotion::Pushed(Promoted {
        branch,
        commit,
        base: hive.head.clone(),
        record,
        source,
    }))
}

/// The hive's bar: `[promotion]` of its `.swarm/config.toml` at its
/// head (the defaults when it has none). A config that does not parse
/// is refused, naming its problems.
fn bar(hive: &HiveWrite<'_>) -> Result<PromotionConfig> {
    let rel = ".swarm/config.toml";
    let Some(bytes) = hive.read_file(&hive.head, rel, crate::store::CONFIG_MAX)? else {
        return Ok(PromotionConfig::default());
    };
    let text = String::from_utf8(bytes).map_err(|_| {
        Error::usage(
            format!("{rel} of hive `{}` is not UTF-8", hive.sub.name),
            "ask the hive's owners to fix it",
        )
    })?;
    let (config, problems) =
        crate::config::Config::parse(&text, &format!("hive:{}/{rel}", hive.sub.name));
    let errors: Vec<Problem> = problems.into_iter().filter(Problem::is_error).collect();
    if !errors.is_empty() {
        return Err(Error::Invalid(errors));
    }
    Ok(config.promotion)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_is_named_by_its_folder_in_branch_letters() {
        for (root, name) in [
            ("/work/My Project", "my-project"),
            ("/x/api.server", "api-server"),
            ("/x/--weird--", "weird"),
            ("/x/ünï", "n"),
            ("/x/§§", "project"),
            ("/", "project"),
        ] {
            assert_eq!(project_name(Path::new(root)), name, "{root}");
        }
        assert_eq!(project_name(Path::new(&"a".repeat(60))).len(), 40);
    }

    #[test]
    fn the_bar_names_each_shortfall() {
        let bar = PromotionConfig {
            min_applied: 2,
            max_violations: 0,
        };
        let record = Signals {
            shown: 3,
            applied: 1,
            violated: 1,
            prevented: 0,
        };
        assert_eq!(
            shortfalls(&record, &bar),
            [
                "acknowledged as applied in 1 delegation; the hive asks for at least 2",
                "violated 1 time; the hive allows at most 0"
            ]
        );
        let good = Signals {
            applied: 2,
            violated: 0,
            ..record
        };
        assert!(shortfalls(&good, &bar).is_empty());
    }

    #[test]
    fn the_source_is_set_and_the_rest_kept() {
        let text = "# why\nid = \"ab\"\nlesson = \"x\" # kept\nsource = \"PR 3\"\n";
        assert_eq!(
            with_source(text, "promoted").expect("parses"),
            "# why\nid = \"ab\"\nlesson = \"x\" # kept\nsource = \"promoted\"\n"
        );
        let none = with_source("id = \"ab\"\n", "p").expect("parses");
        assert_eq!(none, "id = \"ab\"\nsource = \"p\"\n");
    }
}
