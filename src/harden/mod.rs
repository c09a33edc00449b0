//! `git swarm harden`: working the quarantine (DESIGN §7).
//!
//! An entry a person fixed in its quarantine file (it passes the gate as
//! it stands) is promoted: its text, every field and comment kept and the
//! quarantine keys left out, is written to `directives/`, then its
//! `promoted` event appended, and only then is the quarantine file removed.
//! A run cut short in between leaves both files; the next run finds them
//! equal, records the promotion if the log lacks it (`by: repair`) and
//! removes the quarantine file, or, if they differ, leaves both for a person.
//!
//! Other entries go to the user's curator program, when one is configured
//! ([`curator`]): one call, and one retry naming what is still missing,
//! each counted against a daily quota ([`ledger`]). A reply that passes the
//! gate is written into the quarantine file first, then promoted as above,
//! so a crash at any point leaves something the next run finishes. A
//! failure is recorded in the quarantine file (`harden_reason`,
//! `harden_attempts`) with an event; an entry for which the curator twice
//! wrote an entry that still fails the gate is flagged `retire_candidate`
//! and not sent again. A curator that failed, hung, printed what is not
//! JSON or no entry at all, or a quota used up, is not the entry's fault:
//! it is tried again on a later run. Without a curator,
//! nothing but hand-fixed entries is touched.
//!
//! A curator-written `tool:` predicate runs a program, and the trust of
//! [`crate::trust`] covers the set of every directive's tool predicates:
//! a new one makes the set untrusted, so it does not run until the user
//! has read it and run `git swarm trust`.

pub mod curator;
mod ledger;
mod text;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::directive::{
    Directive, Quarantined, check_gate, lifecycle, limits, parse_directive_toml,
    parse_quarantined_toml,
};
use crate::error::{Error, Result};
use crate::event::{Body, Event, Kind};
use crate::predicate::Predicate;
use crate::problem::{Problem, Problems, Severity};
use crate::store::Store;

pub use curator::{Answer, Curator, Request};
pub use ledger::LEDGER;

/// Entries worked with the curator in one run, unless `--max` says otherwise.
pub const DEFAULT_MAX: usize = 10;

/// The lock a run holds: two runs at once would send the same entry twice.
const LOCK: &str = "harden.lock";

/// What happened to one quarantined entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Written to `directives/`, its quarantine file removed.
    Promoted,
    /// A promotion cut short finished: the directive was there, equal.
    Repaired,
    /// A directive with its id exists and differs: both left for a person.
    Conflict,
    /// Its quarantine file cannot be read as an entry: fix it by hand.
    Unreadable,
    /// The curator could not make it actionable this time; tried again later.
    Kept,
    /// The curator could not make it actionable after its attempts: a
    /// person should fix it or delete it.
    RetireCandidate,
    /// Not worked in this run (no curator, `--max`, the quota).
    Skipped,
}

/// Who made a promoted entry actionable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum By {
    Hand,
    Curator,
    Repair,
}

impl By {
    pub fn as_str(self) -> &'static str {
        match self {
            By::Hand => "hand",
            By::Curator => "curator",
            By::Repair => "repair",
        }
    }
}

/// One entry's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct Worked {
    pub id: String,
    /// The quarantine file.
    pub file: String,
    pub outcome: Outcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<By>,
    /// The directive file written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Curator calls made for it in this run.
    pub calls: u32,
    /// The `tool:` predicates the curator wrote: they run only once the
    /// user has trusted them (`git swarm trust`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub untrusted_tools: Vec<String>,
}

impl Worked {
    fn new(id: &str, file: &str, outcome: Outcome) -> Worked {
        Worked {
            id: id.to_owned(),
            file: file.to_owned(),
            outcome,
            by: None,
            path: None,
            reason: None,
            calls: 0,
            untrusted_tools: Vec::new(),
        }
    }

    fn because(mut self, reason: impl Into<String>) -> Worked {
        self.reason = Some(reason.into());
        self
    }
}

/// The curator's daily quota, as the run left it.
#[derive(Debug, Clone, Serialize)]
pub struct Quota {
    pub limit: u32,
    pub used: u32,
}

/// What a run did.
#[derive(Debug, Serialize)]
pub struct Report {
    /// The curator's command line; `None` when none is configured.
    pub curator: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota: Option<Quota>,
    pub entries: Vec<Worked>,
    /// Files that could not be read (quarantine files, ledger lines).
    /// Kept up to a cap, counted past it.
    pub problems: Problems,
    /// The curator could not be started, so no entry was sent to it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unusable: Option<Unusable>,
}

/// Why the curator could not be started, and what to do.
#[derive(Debug, Clone, Serialize)]
pub struct Unusable {
    pub message: String,
    pub hint: String,
}

impl Report {
    /// Entries a person must look at before a run can finish them.
    pub fn conflicts(&self) -> usize {
        self.entries
            .iter()
            .filter(|w| w.outcome == Outcome::Conflict)
            .count()
    }
}

/// Works the quarantine of `store` (whose work tree is `root`): see the
/// module docs. `max` bounds the entries sent to `curator`. Each event is
/// handed to `record` as soon as the change it records is made, so a run
/// cut short loses none of those already made.
pub fn harden(
    store: &Store,
    root: &Path,
    curator: Option<&Curator>,
    max: usize,
    record: &mut dyn FnMut(&Event) -> Result<()>,
) -> Result<Report> {
    let mut report = Report {
        curator: curator.map(Curator::display),
        quota: None,
        entries: Vec::new(),
        problems: Problems::new(),
        unusable: None,
    };
    // A linked quarantine lists as empty: say it is not read instead.
    let linked = |dir: PathBuf| match crate::safe_fs::linked_folder(&store.swarm_dir, &dir) {
        Some((path, kind)) => Err(Error::LinkedFolder { path, kind }),
        None => Ok(()),
    };
    linked(store.quarantine_dir())?;
    let names = quarantine_files(store)?;
    if names.is_empty() {
        return Ok(report);
    }
    linked(store.directives_dir())?;
    let _lock = lock(store)?;
    // A curator that cannot run is said once, and no call is counted for it.
    if let Some(Answer::Unusable { message, hint }) = curator.and_then(|c| c.unusable(root)) {
        report.unusable = Some(Unusable { message, hint });
    }
    let mut ledger = match curator {
        Some(c) if report.unusable.is_none() => {
            let (ledger, problems) = ledger::Ledger::open(store, c.quota)?;
            report.problems.extend(problems);
            Some(ledger)
        }
        _ => None,
    };
    let mut run = Run {
        store,
        root,
        record,
        worked: 0,
    };
    for name in names {
        let w = run.entry(&name, curator, ledger.as_mut(), max, &mut report)?;
        report.entries.push(w);
    }
    report.quota = ledger.map(|l| Quota {
        limit: l.limit,
        used: l.used,
    });
    Ok(report)
}

/// The `.toml` files of `quarantine/`, sorted.
fn quarantine_files(store: &Store) -> Result<Vec<String>> {
    let dir = store.quarantine_dir();
    let Some(listing) = crate::safe_fs::read_dir(&dir).map_err(|e| Error::io(&dir, e))? else {
        return Ok(Vec::new());
    };
    let mut names: Vec<String> = listing
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".toml") && !n.starts_with('.'))
        .collect();
    names.sort();
    Ok(names)
}

/// Takes the run's lock, or refuses at once when another run holds it
/// (naming its pid): a run may wait minutes on its curator, and the lock is
/// the kernel's, released when its holder ends, so there is never a stale
/// one to wait out or remove.
fn lock(store: &Store) -> Result<std::fs::File> {
    let local = store.create_local_dir()?;
    let path = local.join(LOCK);
    let io = |e| Error::io(&path, e);
    let mut file = crate::safe_fs::open(
        &path,
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false),
    )
    .map_err(io)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut holder = String::new();
            // Bounded: a pid is a few digits.
            let pid = (&mut file)
                .take(32)
                .read_to_string(&mut holder)
                .ok()
                .and_then(|_| holder.trim().parse().ok());
            return Err(Error::Running {
                command: "harden",
                pid,
                lock: store.rel(&path),
            });
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
    }
    file.set_len(0).map_err(io)?;
    file.write_all(std::process::id().to_string().as_bytes())
        .map_err(io)?;
    Ok(file)
}

struct Run<'a> {
    store: &'a Store,
    root: &'a Path,
    record: &'a mut dyn FnMut(&Event) -> Result<()>,
    /// Entries sent to the curator so far.
    worked: usize,
}

/// A quarantine file, read.
struct Entry {
    id: String,
    path: PathBuf,
    rel: String,
    text: String,
}

impl Run<'_> {
    fn entry(
        &mut self,
        name: &str,
        curator: Option<&Curator>,
        ledger: Option<&mut ledger::Ledger>,
        max: usize,
        report: &mut Report,
    ) -> Result<Worked> {
        let store = self.store;
        // One `.toml` off: `x.toml.toml` is the file of id `x.toml`.
        let id = name.strip_suffix(".toml").unwrap_or(name);
        let path = store.quarantine_dir().join(name);
        let rel = store.rel(&path);
        let directive = store.directives_dir().join(name);
        if std::fs::symlink_metadata(&directive).is_ok() {
            return self.both(id, &path, &rel, report);
        }
        let indexed = crate::index::read_entry(&path, &rel, name, true);
        let problems: Vec<Problem> = indexed
            .problems
            .into_iter()
            .filter(|p| p.severity == Severity::Error)
            .collect();
        if let Some(first) = problems.first() {
            let w = Worked::new(id, &rel, Outcome::Unreadable)
                .because(format!("{} (fix the file by hand)", first.message));
            report.problems.extend(problems);
            return Ok(w);
        }
        let text = read_text(&path)?;
        let (Some(q), _) = parse_quarantined_toml(&text, &rel) else {
            return Ok(Worked::new(id, &rel, Outcome::Unreadable).because("it does not parse"));
        };
        let entry = Entry {
            id: id.to_owned(),
            path,
            rel,
            text,
        };
        if check_gate(&q.directive).is_ok() {
            return self.promote(&entry, &entry.text, By::Hand);
        }
        let skipped =
            |reason: String| Ok(Worked::new(id, &entry.rel, Outcome::Skipped).because(reason));
        if q.retire_candidate {
            let why = q
                .harden_reason
                .as_deref()
                .unwrap_or("the curator could not fix it");
            return Ok(
                Worked::new(id, &entry.rel, Outcome::RetireCandidate).because(format!(
                    "flagged before ({why}); fix it by hand or delete it"
                )),
            );
        }
        if let Some(unusable) = &report.unusable {
            return skipped(unusable.message.clone());
        }
        let (Some(curator), Some(ledger)) = (curator, ledger) else {
            return skipped(format!("{}; fix it by hand", q.quarantine_reason));
        };
        if self.worked >= max {
            return skipped(format!(
                "over --max {max} entries sent to the curator in one run"
            ));
        }
        if ledger.remaining() == 0 {
            return skipped(format!(
                "the daily curator quota ({} call{}) is used up; kept for tomorrow",
                ledger.limit,
                if ledger.limit == 1 { "" } else { "s" }
            ));
        }
        self.worked += 1;
        self.with_curator(&entry, &q, curator, ledger, report)
    }

    /// A directive with the entry's id exists: the end of a promotion cut
    /// short, or a clash for a person.
    fn both(&mut self, id: &str, path: &Path, rel: &str, report: &mut Report) -> Result<Worked> {
        let store = self.store;
        let conflict = |why: String| {
            Ok(Worked::new(id, rel, Outcome::Conflict)
                .because(format!("{why}; keep the one you want and delete the other")))
        };
        let file = match lifecycle::read(store, id) {
            Ok(file) => file,
            Err(e) => return conflict(format!("the directive cannot be read: {e}")),
        };
        let found = lifecycle::problems(id, &file.text, &file.rel);
        if !found.is_empty() {
            report.problems.extend(found);
            return conflict(format!("{} exists and does not pass validate", file.rel));
        }
        let text = match read_text(path) {
            Ok(text) => text,
            Err(e) => return conflict(format!("the quarantine file cannot be read: {e}")),
        };
        let (quarantined, _) = parse_quarantined_toml(&text, rel);
        let directive = parse_directive_toml(&file.text, &file.rel).directive;
        let same = quarantined.is_some_and(|q| Some(q.directive) == directive);
        if !same {
            return conflict(format!("{} and {rel} both exist and differ", file.rel));
        }
        let mut w = Worked::new(id, rel, Outcome::Repaired);
        w.path = Some(file.rel.clone());
        // Cut short after its event was appended: the log has it already.
        if promotion_recorded(store, id, &mut report.problems)? {
            remove(path)?;
            return Ok(w.because(
                "a promotion cut short: the directive was written and recorded, the quarantine file is now removed",
            ));
        }
        let event = store
            .event(Body::Promoted {
                path: file.rel,
                from: rel.to_owned(),
                by: By::Repair.as_str().to_owned(),
            })
            .about(id);
        store.check_appendable(&event)?;
        (self.record)(&event)?;
        remove(path)?;
        w.by = Some(By::Repair);
        Ok(w.because(
            "a promotion cut short: the directive was written, the quarantine file is now removed",
        ))
    }

    /// Writes `text` (an entry that passes the gate), less the quarantine
    /// keys, to `directives/`, then removes the quarantine file.
    fn promote(&mut self, entry: &Entry, text: &str, by: By) -> Result<Worked> {
        let store = self.store;
        let unreadable =
            |why: String| Ok(Worked::new(&entry.id, &entry.rel, Outcome::Unreadable).because(why));
        let Some(directive_text) = text::without_keys(text, Quarantined::KEYS) else {
            return unreadable("its quarantine keys cannot be removed alone (a key shares a line?); move the entry by hand".into());
        };
        let path = store.directives_dir().join(format!("{}.toml", entry.id));
        let rel = store.rel(&path);
        let found = lifecycle::problems(&entry.id, &directive_text, &rel);
        if let Some(first) = found.first() {
            return unreadable(format!(
                "as a directive it would not pass validate: {}",
                first.message
            ));
        }
        let event = store
            .event(Body::Promoted {
                path: rel.clone(),
                from: entry.rel.clone(),
                by: by.as_str().to_owned(),
            })
            .about(&entry.id);
        store.check_appendable(&event)?;
        crate::store::create_new(
            &store.swarm_dir,
            &path,
            directive_text.as_bytes(),
            &rel,
            &entry.id,
        )?;
        // The event before the removal: a run cut short in between leaves
        // both files, which the next run finds recorded (see `both`).
        (self.record)(&event)?;
        remove(&entry.path)?;
        let mut w = Worked::new(&entry.id, &entry.rel, Outcome::Promoted);
        w.by = Some(by);
        w.path = Some(rel);
        Ok(w)
    }

    fn with_curator(
        &mut self,
        entry: &Entry,
        q: &Quarantined,
        curator: &Curator,
        ledger: &mut ledger::Ledger,
        report: &mut Report,
    ) -> Result<Worked> {
        let store = self.store;
        let mut request = Request::first(q);
        let mut calls = 0;
        // Replies that made an entry still failing the gate: only they flag it.
        let mut made_entries = 0;
        let failure = loop {
            if !ledger.reserve(store, &entry.id)? {
                break "the daily curator quota ran out before the retry".to_owned();
            }
            calls += 1;
            let refused = match curator.call(self.root, &request) {
                Answer::Unusable { message, hint } => {
                    // The program never ran: nothing to record about the entry.
                    report.unusable = Some(Unusable {
                        message: message.clone(),
                        hint,
                    });
                    let mut w =
                        Worked::new(&entry.id, &entry.rel, Outcome::Skipped).because(message);
                    w.calls = calls;
                    return Ok(w);
                }
                Answer::Failed(why) => break why,
                Answer::Reply(reply) => {
                    match curator::read_reply(q, reply).and_then(|d| self.enriched(entry, q, d)) {
                        Ok((d, text)) => {
                            return self.promote_curated(entry, d, &text, calls);
                        }
                        Err(refused) => {
                            made_entries += u32::from(refused.made_entry);
                            refused
                        }
                    }
                }
            };
            if request.attempt >= 2 {
                break refused.why;
            }
            request = Request {
                attempt: 2,
                missing: refused.missing,
                refused: Some(refused.why),
                ..Request::first(q)
            };
        };
        let retire = made_entries >= 2;
        let attempts = q.harden_attempts.saturating_add(calls);
        let mut set = vec![
            ("harden_reason", toml::Value::String(failure.clone())),
            ("harden_attempts", toml::Value::Integer(attempts.into())),
        ];
        if retire {
            set.push(("retire_candidate", toml::Value::Boolean(true)));
        }
        let event = store
            .event(Body::HardenFailed {
                path: entry.rel.clone(),
                reason: failure.clone(),
                calls,
                retire_candidate: retire,
            })
            .about(&entry.id);
        store.check_appendable(&event)?;
        let outcome = if retire {
            Outcome::RetireCandidate
        } else {
            Outcome::Kept
        };
        let mut w = Worked::new(&entry.id, &entry.rel, outcome).because(failure);
        w.calls = calls;
        match text::with_keys(&entry.text, &set) {
            Some(text) => crate::safe_fs::replace(&entry.path, text.as_bytes())?,
            // It parsed when read: only a change meanwhile gets here.
            None => return Ok(w),
        }
        (self.record)(&event)?;
        Ok(w)
    }

    /// The quarantine file the curator's directive `d` makes, if it would
    /// pass `validate` once promoted.
    fn enriched(
        &self,
        entry: &Entry,
        q: &Quarantined,
        d: Directive,
    ) -> std::result::Result<(Directive, String), curator::Refused> {
        let fixed = Quarantined::new(d, q.quarantine_reason, q.quarantine_detail.clone());
        let text = fixed.to_toml();
        let refused = |why: String| curator::Refused {
            why,
            missing: Vec::new(),
            made_entry: true,
        };
        if text.len() as u64 > limits::FILE_MAX {
            return Err(refused(format!(
                "the enriched entry is over the {}-byte limit of a directive file",
                limits::FILE_MAX
            )));
        }
        let as_directive = text::without_keys(&text, Quarantined::KEYS).unwrap_or_default();
        let rel = format!(".swarm/directives/{}.toml", entry.id);
        let found = lifecycle::problems(&entry.id, &as_directive, &rel);
        if !found.is_empty() {
            let all: Vec<String> = found.iter().map(|p| p.message.clone()).collect();
            return Err(refused(format!(
                "the enriched entry would not pass validate: {}",
                all.join("; ")
            )));
        }
        Ok((fixed.directive, text))
    }

    /// Promotes the curator's entry: written into its quarantine file first
    /// (a run cut short after this finds a fixed entry), then as a hand-fixed one.
    fn promote_curated(
        &mut self,
        entry: &Entry,
        d: Directive,
        text: &str,
        calls: u32,
    ) -> Result<Worked> {
        crate::safe_fs::replace(&entry.path, text.as_bytes())?;
        let mut w = self.promote(entry, text, By::Curator)?;
        w.calls = calls;
        w.untrusted_tools = d
            .verify
            .iter()
            .filter(|v| matches!(Predicate::parse(v), Ok(Predicate::Tool { .. })))
            .cloned()
            .collect();
        Ok(w)
    }
}

/// Whether the log already records the promotion of `id`: its last
/// `quarantined` or `promoted` event is a `promoted`. A quarantine file
/// always comes with a `quarantined` event, so a `promoted` after it is
/// this promotion's, not one of an earlier life of the id. Lines of the
/// log that cannot be read are added to `problems`.
fn promotion_recorded(store: &Store, id: &str, problems: &mut Problems) -> Result<bool> {
    let (events, found) = crate::directive_loop::records::read_log(store)?;
    problems.append(found);
    let last = events
        .iter()
        .rev()
        .filter(|e| e.directive.as_deref() == Some(id))
        .filter_map(Event::known_kind)
        .find(|k| matches!(k, Kind::Quarantined | Kind::Promoted));
    Ok(last == Some(Kind::Promoted))
}

fn read_text(path: &Path) -> Result<String> {
    let bytes = crate::safe_fs::read(path, limits::FILE_MAX).map_err(|e| Error::io(path, e))?;
    String::from_utf8(bytes).map_err(|_| {
        Error::io(
            path,
            std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8"),
        )
    })
}

fn remove(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        // Removed meanwhile by another run: what was wanted.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(path, e)),
    }
}
