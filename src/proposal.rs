//! Proposals: lessons the loop found but a person decides on, one Markdown
//! file each under `.swarm/proposals/<slug>.md` — YAML front matter with
//! the draft directive and its evidence, then the evidence in prose.
//! `reflect macro` and `cochange` write them; `proposal accept` turns one
//! into a directive through the actionability gate, `proposal reject`
//! records why not. Either way the file stays, with its decision, so the
//! same motif is not proposed again.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::directive::{Category, Directive};
use crate::error::{Error, Result};
use crate::event::{Body, Event, Kind};
use crate::problem::Problem;
use crate::store::{Minted, Store};

/// Largest proposal file read, in bytes: front matter and a page of prose.
pub const PROPOSAL_MAX: u64 = 256 * 1024;
/// Most proposals one run of a command writes.
pub const MAX_PER_RUN: usize = 10;
/// The line that opens and closes the front matter.
const FENCE: &str = "---";

crate::directive::string_enum! {
    /// Where a proposal stands.
    ProposalStatus {
        /// Waiting for a person.
        Open => "open",
        /// Turned into a directive (active or quarantined).
        Accepted => "accepted",
        /// Declined, with the reason.
        Rejected => "rejected",
    } default Open
}

/// The front matter: the draft directive, its evidence and its decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Proposal {
    /// The file stem, and the id of the directive accepting it makes.
    pub slug: String,
    /// The lesson: one line, 15–280 characters.
    pub title: String,
    #[serde(default)]
    pub status: ProposalStatus,
    /// The command that proposed it (`reflect macro`, `cochange`).
    pub source: String,
    #[serde(default)]
    pub category: Category,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applies_to_agents: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applies_to_tools: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    /// The suggested predicates (`kind:argument`), each one that parses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verify: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required_actions: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forbidden_actions: Vec<String>,
    /// The ids of the events that show the motif.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
    /// What the motif is, for telling the same one found again.
    pub key: String,
    pub created_at: String,
    /// When it was accepted or rejected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_at: Option<String>,
    /// Why it was rejected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The directive (or quarantined entry) accepting it made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directive: Option<String>,
    /// The evidence in prose: the Markdown after the front matter.
    #[serde(skip)]
    pub body: String,
}

impl Proposal {
    /// The file's text: front matter between `---` lines, then the prose.
    pub fn render(&self) -> String {
        // Serialising plain strings, lists and enums does not fail.
        let yaml = serde_saphyr::to_string(self).unwrap_or_default();
        let mut out = format!("{FENCE}\n{yaml}");
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(FENCE);
        out.push_str("\n\n");
        out.push_str(self.body.trim_end());
        out.push('\n');
        out
    }

    /// Reads a proposal's text; `rel` names the file in the problem.
    pub fn parse(text: &str, rel: &str) -> std::result::Result<Proposal, Problem> {
        let problem = |line: u32, message: String| {
            Problem::error(rel, "bad_proposal", message)
                .at_line(line)
                .with_hint("a proposal is YAML front matter between `---` lines, then prose (docs/formats.md)")
        };
        let mut lines = text.split_inclusive('\n');
        if lines.next().map(str::trim_end) != Some(FENCE) {
            return Err(problem(
                1,
                "no front matter: the first line is not `---`".into(),
            ));
        }
        let start = FENCE.len() + 1;
        let mut at = start;
        let mut end = None;
        for line in lines {
            if line.trim_end() == FENCE {
                end = Some((at, at + line.len()));
                break;
            }
            at += line.len();
        }
        let Some((yaml_end, body_start)) = end else {
            return Err(problem(
                1,
                "the front matter is not closed with `---`".into(),
            ));
        };
        let yaml = text.get(start..yaml_end).unwrap_or_default();
        let mut p: Proposal = serde_saphyr::from_str(yaml).map_err(|e| {
            let line = e.location().map_or(1, |l| l.line() as u32 + 1);
            let message = e.to_string();
            let first = message.lines().next().unwrap_or("not valid YAML");
            // The problem carries the line: saphyr's own `error: line L column C: ` prefix goes.
            let first = first.strip_prefix("error: ").unwrap_or(first);
            let first = match first.strip_prefix("line ").and_then(|r| r.split_once(": ")) {
                Some((place, rest)) if place.contains(" column ") => rest,
                _ => first,
            };
            problem(line, first.to_owned())
        })?;
        if !crate::directive::is_valid_id(&p.slug) {
            return Err(problem(
                2,
                format!("slug `{}` is not a valid directive id", p.slug),
            ));
        }
        p.body = text.get(body_start..).unwrap_or_default().trim().to_owned();
        Ok(p)
    }

    /// The directive accepting it makes, to go through the gate.
    pub fn to_directive(&self, now: &str) -> Directive {
        let mut d = Directive::new(self.slug.clone(), self.title.clone());
        d.category = self.category;
        d.applies_to_agents = self.applies_to_agents.clone();
        d.applies_to_tools = self.applies_to_tools.clone();
        d.paths = self.paths.clone();
        d.verify = self.verify.clone();
        d.required_actions = self.required_actions.clone();
        d.forbidden_actions = self.forbidden_actions.clone();
        d.rationale = Some(crate::display::truncate(&self.body, 4000));
        d.source = Some(format!("proposal {} ({})", self.slug, self.source));
        d.created_at = Some(now.to_owned());
        d
    }
}

/// The folder proposals are kept in.
pub fn dir(store: &Store) -> PathBuf {
    store.swarm_dir.join("proposals")
}

/// The file of the proposal `slug`.
pub fn path(store: &Store, slug: &str) -> PathBuf {
    dir(store).join(format!("{slug}.md"))
}

/// Every proposal, sorted by slug, with the problems of the files that
/// could not be read (a link, too large, bad front matter), which are skipped.
pub fn load_all(store: &Store) -> Result<(Vec<Proposal>, Vec<Problem>)> {
    let dir = dir(store);
    let names = crate::safe_fs::names_ending(&dir, ".md").map_err(|e| Error::io(&dir, e))?;
    let (mut proposals, mut problems) = (Vec::new(), Vec::new());
    for name in names {
        match load(store, &dir.join(&name)) {
            Ok(p) => proposals.push(p),
            Err(problem) => problems.push(problem),
        }
    }
    Ok((proposals, problems))
}

/// One proposal file, checked to be a regular file within the size limit
/// whose slug is its file stem.
pub fn load(store: &Store, path: &Path) -> std::result::Result<Proposal, Problem> {
    let rel = store.rel(path);
    let text = crate::store::read_owned_text(
        path,
        &rel,
        PROPOSAL_MAX,
        "a proposal",
        "shorten its prose or its evidence list",
    )?;
    let p = Proposal::parse(&text, &rel)?;
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    if p.slug != stem {
        return Err(Problem::error(
            &rel,
            "bad_proposal",
            format!("slug `{}` is not the file's name `{stem}`", p.slug),
        )
        .at_line(2)
        .with_hint("a proposal's slug is its file stem"));
    }
    Ok(p)
}

/// `p`'s text, refused when it is more than [`load`] reads back: a
/// proposal written but never read would keep its motif from being
/// proposed again while no one can decide on it.
fn render_bounded(store: &Store, p: &Proposal) -> Result<String> {
    let text = p.render();
    if text.len() as u64 > PROPOSAL_MAX {
        return Err(Error::usage(
            format!(
                "proposal `{}` would be {} bytes, more than the {PROPOSAL_MAX} a proposal may hold: not written to {}",
                p.slug,
                text.len(),
                store.rel(&path(store, &p.slug))
            ),
            "its evidence is too long to keep: shorten the prose or the lists of its front matter",
        ));
    }
    Ok(text)
}

/// Writes a new proposal; refuses to overwrite one (or anything else at
/// its path), and one too large to read back.
pub fn write_new(store: &Store, p: &Proposal) -> Result<PathBuf> {
    let path = path(store, &p.slug);
    let rel = store.rel(&path);
    let text = render_bounded(store, p)?;
    match crate::safe_fs::create_new(&store.swarm_dir, &path, text.as_bytes(), &rel, &p.slug) {
        Err(Error::AlreadyExists { .. }) => Err(Error::usage(
            format!("proposal `{}` already exists at {rel}", p.slug),
            "a proposal's file is never replaced: `git swarm proposal show SLUG` shows it; remove an entry there that is not a proposal",
        )),
        other => other.map(|()| path),
    }
}

/// The `proposed` event of `p`: its file, source and key, about its slug.
pub fn proposed_event(store: &Store, p: &Proposal) -> Event {
    store
        .event(Body::Proposed {
            path: store.rel(&path(store, &p.slug)),
            source: p.source.clone(),
            key: p.key.clone(),
        })
        .about(&p.slug)
}

/// `proposed` events for those of `proposals` that have none in `log`: a
/// run that stopped after writing a proposal and before appending its
/// event left it unrecorded, and the next run records it.
pub fn unrecorded<'a>(
    store: &Store,
    proposals: impl IntoIterator<Item = &'a Proposal>,
    log: &[Event],
) -> Vec<Event> {
    let recorded: std::collections::HashSet<&str> = log
        .iter()
        .filter(|e| e.known_kind() == Some(Kind::Proposed))
        .filter_map(|e| e.directive.as_deref())
        .collect();
    proposals
        .into_iter()
        .filter(|p| !recorded.contains(p.slug.as_str()))
        .map(|p| proposed_event(store, p))
        .collect()
}

/// Replaces a proposal's file with `p` (its decision recorded), atomically.
pub fn rewrite(store: &Store, p: &Proposal) -> Result<PathBuf> {
    let path = path(store, &p.slug);
    let text = render_bounded(store, p)?;
    crate::safe_fs::create_dir_all(&store.swarm_dir, &dir(store))?;
    crate::safe_fs::replace(&path, text.as_bytes())?;
    Ok(path)
}

/// A slug for `title` under `prefix`, made from the words of the title and
/// `key`'s hash: the same motif always has the same slug, and two motifs
/// of the same words differ by the hash. It is not checked against the
/// store: an entry already at the proposal's path is left and reported by
/// `reflect macro` and `cochange`, and an id another directive holds is refused by
/// [`accept`].
pub fn slug(prefix: &str, title: &str, key: &str) -> String {
    let hash = xxhash_rust::xxh3::xxh3_64(key.as_bytes());
    let words = crate::directive::slug_from_lesson(title);
    let mut s = format!("{prefix}-{words}");
    s.truncate(80 - 9);
    let s = s.trim_end_matches(['-', '.', '_']);
    format!("{s}-{:08x}", hash as u32)
}

/// The proposal `slug`: an error naming the closest slug when there is no
/// such proposal, or the file's problem when it cannot be read.
pub fn find(store: &Store, slug: &str) -> Result<Proposal> {
    let (proposals, problems) = load_all(store)?;
    if let Some(p) = proposals.into_iter().find(|p| p.slug == slug) {
        return Ok(p);
    }
    let rel = store.rel(&path(store, slug));
    let mine: Vec<Problem> = problems.into_iter().filter(|p| p.path == rel).collect();
    if !mine.is_empty() {
        return Err(Error::Invalid(mine));
    }
    let slugs = slugs(store);
    let list = "`git swarm proposal list --status all` lists them";
    let hint = match crate::suggest::closest(slug, slugs.iter().map(String::as_str)) {
        Some(m) => format!("did you mean `{m}`? {list}"),
        None => list.to_owned(),
    };
    Err(Error::usage(format!("no proposal `{slug}`"), hint))
}

/// The file stems of the proposals folder, readable or not.
fn slugs(store: &Store) -> Vec<String> {
    let Ok(Some(listing)) = crate::safe_fs::read_dir(&dir(store)) else {
        return Vec::new();
    };
    listing
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".md").map(str::to_owned)
        })
        .collect()
}

/// A decided proposal cannot be decided again.
fn check_open(p: &Proposal) -> Result<()> {
    match p.status {
        ProposalStatus::Open => Ok(()),
        ProposalStatus::Accepted => Err(Error::usage(
            format!(
                "proposal `{}` was accepted already{}",
                p.slug,
                p.directive
                    .as_deref()
                    .map(|d| format!(": it made `{d}`"))
                    .unwrap_or_default()
            ),
            "a decision stays; `git swarm show ID` shows the directive, `git swarm retire ID --reason TEXT` retires it",
        )),
        ProposalStatus::Rejected => Err(Error::usage(
            format!(
                "proposal `{}` was rejected already{}",
                p.slug,
                p.reason
                    .as_deref()
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default()
            ),
            "a decision stays; `git swarm add` writes the directive by hand if it is wanted after all",
        )),
    }
}

/// What accepting a proposal made of it.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Made {
    /// A directive that passed the gate.
    Added { id: String, path: String },
    /// An entry that failed it, kept in `quarantine/` with the reason.
    Quarantined {
        id: String,
        path: String,
        reason: String,
        detail: String,
    },
}

/// An accepted proposal: what it made, the proposal with its decision (to
/// write once the events are appended) and the events to append.
#[derive(Debug, Clone)]
pub struct Acceptance {
    pub made: Made,
    pub proposal: Proposal,
    pub events: Vec<Event>,
    /// The directive was written by an earlier run that stopped before it
    /// recorded the decision; this one finishes it.
    pub finished: bool,
}

/// Accepts the open proposal `slug`: its directive goes through the
/// actionability gate ([`Store::mint`]), to `directives/` or `quarantine/`.
/// The directive is written first and the proposal last, so an accept cut
/// short is finished by the next: one that finds the id taken by this
/// proposal's own directive records what `log` lacks and the decision.
pub fn accept(store: &Store, slug: &str, log: &[Event]) -> Result<Acceptance> {
    let mut p = find(store, slug)?;
    check_open(&p)?;
    let now = store
        .clock
        .now()
        .round(jiff::Unit::Second)
        .unwrap_or(store.clock.now())
        .to_string();
    let draft = p.to_directive(&now);
    let logged = |kind: Kind| {
        log.iter()
            .any(|e| e.known_kind() == Some(kind) && e.directive.as_deref() == Some(slug))
    };
    let mut events = Vec::new();
    let (made, finished) = match store.id_taken(slug) {
        Some(taken) => {
            let made = made_by(store, &taken, &draft)?;
            let (kind, body) = match &made {
                Made::Added { path, .. } => (Kind::Added, Body::Added { path: path.clone() }),
                Made::Quarantined {
                    path,
                    reason,
                    detail,
                    ..
                } => (
                    Kind::Quarantined,
                    Body::Quarantined {
                        path: path.clone(),
                        reason: reason.clone(),
                        detail: detail.clone(),
                    },
                ),
            };
            if !logged(kind) {
                events.push(store.event(body).about(slug));
            }
            (made, true)
        }
        None => match store.mint(draft)? {
            Minted::Added { path, event } => {
                events.push(event);
                let path = store.rel(&path);
                let id = slug.to_owned();
                (Made::Added { id, path }, false)
            }
            Minted::Quarantined {
                path,
                event,
                failure,
            } => {
                events.push(event);
                let made = Made::Quarantined {
                    id: slug.to_owned(),
                    path: store.rel(&path),
                    reason: failure.reason.as_str().to_owned(),
                    detail: failure.detail(),
                };
                (made, false)
            }
        },
    };
    if !logged(Kind::ProposalAccepted) {
        let outcome = match made {
            Made::Added { .. } => "added",
            Made::Quarantined { .. } => "quarantined",
        };
        events.push(
            store
                .event(Body::ProposalAccepted {
                    path: store.rel(&path(store, slug)),
                    outcome: outcome.to_owned(),
                })
                .about(slug),
        );
    }
    p.status = ProposalStatus::Accepted;
    p.directive = Some(slug.to_owned());
    p.decided_at = Some(crate::event::format_ts(store.clock.now()));
    Ok(Acceptance {
        made,
        proposal: p,
        events,
        finished,
    })
}

/// What the entry at `taken` is, when accepting `draft`'s proposal made it;
/// an error when it is someone else's.
fn made_by(store: &Store, taken: &Path, draft: &Directive) -> Result<Made> {
    let rel = store.rel(taken);
    let bytes = crate::safe_fs::read(taken, crate::directive::limits::FILE_MAX)
        .map_err(|e| Error::io(taken, e))?;
    let text = String::from_utf8_lossy(&bytes);
    let quarantined = taken.starts_with(store.quarantine_dir());
    let (source, q) = if quarantined {
        let (q, _) = crate::directive::parse_quarantined_toml(&text, &rel);
        (q.as_ref().and_then(|q| q.directive.source.clone()), q)
    } else {
        let loaded = crate::directive::parse_directive_toml(&text, &rel);
        (loaded.directive.and_then(|d| d.source), None)
    };
    if source != draft.source {
        return Err(Error::usage(
            format!("{rel} exists and did not come from proposal `{}`", draft.id),
            "ids are unique across directives/ and quarantine/: rename that entry, or reject the proposal",
        ));
    }
    Ok(match q {
        Some(q) => Made::Quarantined {
            id: draft.id.clone(),
            path: rel,
            reason: q.quarantine_reason.as_str().to_owned(),
            detail: q.quarantine_detail.unwrap_or_default(),
        },
        None => Made::Added {
            id: draft.id.clone(),
            path: rel,
        },
    })
}

/// Most characters of a rejection's reason.
pub const REASON_MAX: usize = 1000;

/// A rejected proposal: the proposal with its decision, to write once the
/// event (if any) is appended.
#[derive(Debug, Clone)]
pub struct Rejection {
    pub proposal: Proposal,
    /// The `proposal_rejected` event to append; `None` when the log has it.
    pub event: Option<Event>,
    /// What this run finished of an earlier one cut short, if anything.
    pub finished: Option<Finished>,
}

/// The part of a reject an earlier run did not get to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finished {
    /// The event was recorded, the proposal not marked: marked now, with
    /// the reason recorded.
    Marked,
    /// The proposal was marked, the event not recorded: recorded now, with
    /// the proposal's reason.
    Recorded,
}

/// Rejects the open proposal `slug` with `reason`. The event goes first
/// and the proposal's file last, so a reject cut short is finished by the
/// next: an open proposal whose rejection `log` has is marked with the
/// reason recorded, a rejected one whose event `log` lacks has it recorded.
pub fn reject(store: &Store, slug: &str, reason: &str, log: &[Event]) -> Result<Rejection> {
    let reason = reason.split_whitespace().collect::<Vec<_>>().join(" ");
    if reason.is_empty() || reason.chars().count() > REASON_MAX {
        return Err(Error::usage(
            format!("--reason must say why, in 1 to {REASON_MAX} characters"),
            "the reason is kept in the proposal, so that the next person to find the motif knows why",
        ));
    }
    let mut p = find(store, slug)?;
    let logged = log.iter().rev().find(|e| {
        e.known_kind() == Some(Kind::ProposalRejected) && e.directive.as_deref() == Some(slug)
    });
    let event = |reason: String| {
        store
            .event(Body::ProposalRejected {
                path: store.rel(&path(store, slug)),
                reason,
            })
            .about(slug)
    };
    match (p.status, logged) {
        (ProposalStatus::Rejected, None) => {
            let reason = p.reason.clone().unwrap_or_default();
            return Ok(Rejection {
                event: Some(event(reason)),
                proposal: p,
                finished: Some(Finished::Recorded),
            });
        }
        (ProposalStatus::Open, Some(e)) => {
            p.status = ProposalStatus::Rejected;
            p.reason = Some(e.str_field("reason").unwrap_or(&reason).to_owned());
            p.decided_at = Some(e.ts.clone());
            return Ok(Rejection {
                proposal: p,
                event: None,
                finished: Some(Finished::Marked),
            });
        }
        _ => check_open(&p)?,
    }
    p.status = ProposalStatus::Rejected;
    p.reason = Some(reason.clone());
    p.decided_at = Some(crate::event::format_ts(store.clock.now()));
    Ok(Rejection {
        proposal: p,
        event: Some(event(reason)),
        finished: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Proposal {
        Proposal {
            slug: "macro-run-cargo-test-1234abcd".into(),
            title: "Run `cargo test` before handing off: it failed in 2 phases".into(),
            status: ProposalStatus::Open,
            source: "git swarm reflect macro".into(),
            category: Category::Testing,
            applies_to_agents: vec!["coder".into()],
            applies_to_tools: vec!["bash".into()],
            paths: vec![],
            verify: vec!["tool:cargo test".into()],
            required_actions: vec![],
            forbidden_actions: vec![],
            evidence: vec!["01JABC".into(), "01JDEF".into()],
            key: "signature: test cargo test".into(),
            created_at: "2026-01-02T03:04:05Z".into(),
            decided_at: None,
            reason: None,
            directive: None,
            body: "Seen in phases `a` and `b`:\n\n- one\n- two: with a colon".into(),
        }
    }

    #[test]
    fn a_proposal_reads_back_as_written() {
        let p = sample();
        let text = p.render();
        assert!(text.starts_with("---\n"), "{text}");
        assert_eq!(Proposal::parse(&text, "x.md").expect("parses"), p);
    }

    #[test]
    fn bad_front_matter_is_a_problem_with_a_line() {
        let p = Proposal::parse("no fence\n", "x.md").expect_err("refused");
        assert_eq!(p.line, Some(1));
        let text = sample().render().replace("status: open", "status: maybe");
        let p = Proposal::parse(&text, "x.md").expect_err("refused");
        assert_eq!(p.code, "bad_proposal");
        assert!(p.line.unwrap_or(0) > 1, "{p:?}");
        let unclosed = "---\nslug: a\n";
        assert!(Proposal::parse(unclosed, "x.md").is_err());
    }
}
