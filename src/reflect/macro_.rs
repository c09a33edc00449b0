//! Macro reflection: motifs that recur across phases, written as proposals
//! for a person to decide on. A motif is the same failure (one signature)
//! seen in at least two phases — in `reflected` events of meso reflection
//! and in insight candidates still waiting (one task a phase never reaches
//! meso's two tasks, but recurring across phases it is exactly a motif) —
//! or one directive violated in at least two phases (`violated` verdicts and
//! acks, a critical one left unacknowledged). Each motif has a key; one
//! already proposed, whatever became of it, is not proposed again.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::time::Duration;

use serde::Serialize;

use super::Candidate;
use super::meso::{draft, one_line};
use crate::directive::{Directive, Status};
use crate::display::truncate;
use crate::error::Result;
use crate::event::{Event, Kind};
use crate::predicate::Predicate;
use crate::problem::Problem;
use crate::proposal::{self, Proposal, ProposalStatus};
use crate::store::Store;

/// Fewest phases a motif is seen in.
pub const MIN_PHASES: usize = 2;
/// What `source` a proposal of macro reflection names.
pub const SOURCE: &str = "git swarm reflect macro";
/// Most phases named in a proposal's title.
const TITLE_PHASES: usize = 4;
/// Most evidence ids a proposal lists, and most lines of evidence in its
/// prose: the latest. A motif of a thousand failing calls would otherwise
/// make a file too large to read back; the rest are counted, not listed.
pub const EVIDENCE_IDS: usize = 50;
/// See [`EVIDENCE_IDS`].
pub const EVIDENCE_LINES: usize = 20;
/// The lock a run holds, under `.git/swarm/local/`: two runs at once would
/// each find a motif new and record its proposal twice.
const LOCK: &str = "reflect-macro.lock";
/// How long a run waits for another to finish.
const LOCK_WAIT: Duration = Duration::from_secs(10);

/// Takes the lock of `reflect macro`, waiting for a run that holds it; it
/// is held until the returned file is dropped. Take it before reading the
/// log, and keep it until the candidates are consumed: what another run
/// proposed meanwhile is then in the log read.
pub fn lock(store: &Store) -> Result<std::fs::File> {
    let local = store.create_local_dir()?;
    crate::event::open_locked(&local.join(LOCK), LOCK_WAIT)
}

/// A directive known to the store, and whether it is in quarantine.
#[derive(Debug, Clone, Copy)]
pub struct Known<'a> {
    pub directive: &'a Directive,
    pub quarantined: bool,
}

/// A proposal written by this run.
#[derive(Debug, Clone, Serialize)]
pub struct Written {
    pub slug: String,
    pub path: String,
    pub key: String,
    pub title: String,
    pub phases: Vec<String>,
    /// The suggested predicates; empty when none could be derived.
    pub verify: Vec<String>,
}

/// A motif found again that a proposal already has.
#[derive(Debug, Clone, Serialize)]
pub struct Already {
    pub key: String,
    pub slug: String,
    /// Its status, or `None` when its file could not be read.
    pub status: Option<ProposalStatus>,
}

/// What `reflect macro` decided.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub proposed: Vec<Written>,
    pub already: Vec<Already>,
    /// Motifs not proposed by this run (over the limit a run), for the next.
    pub left: usize,
    /// Proposal files and candidate lines that could not be read (skipped).
    #[serde(skip)]
    pub problems: Vec<Problem>,
    /// One `proposed` event for each proposal written (or found written by
    /// a run that stopped before recording it).
    #[serde(skip)]
    pub events: Vec<Event>,
    /// Ids of the waiting candidates proposals used, to consume once the
    /// events are appended.
    #[serde(skip)]
    pub used: HashSet<String>,
}

/// One motif's evidence as it is gathered.
#[derive(Debug, Default)]
struct Motif<'a> {
    phases: BTreeSet<String>,
    /// Milliseconds of its latest evidence.
    last: i64,
    events: Vec<&'a Event>,
    candidates: Vec<&'a Candidate>,
    /// The directives the evidence names: the lessons meso reflection made
    /// (or the ones covering them), or the directive violated.
    directives: BTreeSet<String>,
    /// Roles of the agents whose violations are evidence.
    roles: BTreeSet<String>,
}

impl<'a> Motif<'a> {
    fn seen(&mut self, phase: &str, ts: i64) {
        self.phases.insert(phase.to_owned());
        self.last = self.last.max(ts);
    }
}

/// Finds the motifs of `log` and `candidates` at or after `since`
/// (milliseconds), and writes a proposal for each new one, at most
/// [`proposal::MAX_PER_RUN`], the strongest first (most phases, then most
/// recent). Returns the events to append and the candidates to consume.
pub fn propose(
    store: &Store,
    log: &[Event],
    known: &[Known<'_>],
    since: Option<i64>,
) -> Result<Report> {
    let (candidates, mut problems) = super::read_candidates(store)?;
    let (existing, proposal_problems) = proposal::load_all(store)?;
    problems.extend(proposal_problems);
    let motifs = gather(log, &candidates, since);

    let by_key: HashMap<&str, &Proposal> = existing.iter().map(|p| (p.key.as_str(), p)).collect();
    let recorded: HashSet<&str> = log
        .iter()
        .filter(|e| e.known_kind() == Some(Kind::Proposed))
        .filter_map(|e| e.directive.as_deref())
        .collect();
    let directives: HashMap<&str, Known<'_>> = known
        .iter()
        .map(|k| (k.directive.id.as_str(), *k))
        .collect();
    let mut report = Report {
        proposed: Vec::new(),
        already: Vec::new(),
        left: 0,
        problems,
        events: Vec::new(),
        used: HashSet::new(),
    };
    let mut fresh = Vec::new();
    for (key, motif) in motifs {
        if let Some(p) = by_key.get(key.as_str()) {
            // A run that stopped after writing the proposal left its
            // candidates and perhaps its event: finish that run's work. Its
            // evidence lists the latest only; the candidates before the
            // proposal was made were the motif's all the same.
            let made = crate::event::parse_ts_millis(&p.created_at);
            report.used.extend(
                motif
                    .candidates
                    .iter()
                    .filter(|c| {
                        p.evidence.contains(&c.id)
                            || made.is_some_and(|m| {
                                crate::event::parse_ts_millis(&c.ts).is_some_and(|t| t <= m)
                            })
                    })
                    .map(|c| c.id.clone()),
            );
            if !recorded.contains(p.slug.as_str()) {
                report.events.push(proposal::proposed_event(store, p));
            }
            report.already.push(Already {
                key,
                slug: p.slug.clone(),
                status: Some(p.status),
            });
            continue;
        }
        fresh.push((key, motif));
    }
    fresh.sort_by(|(ka, a), (kb, b)| {
        (b.phases.len(), b.last)
            .cmp(&(a.phases.len(), a.last))
            .then_with(|| ka.cmp(kb))
    });
    let now = crate::event::format_ts(store.clock.now());
    for (key, motif) in fresh {
        if report.proposed.len() == proposal::MAX_PER_RUN {
            report.left += 1;
            continue;
        }
        let p = draft_proposal(&key, &motif, &directives, &now);
        let path = proposal::path(store, &p.slug);
        // Anything at the path holds the slug, a link to nowhere included
        // (which `exists` would not see): it is not overwritten.
        if std::fs::symlink_metadata(&path).is_ok() {
            let rel = store.rel(&path);
            let status = existing.iter().find(|e| e.slug == p.slug).map(|e| e.status);
            if status.is_none() && !report.problems.iter().any(|pr| pr.path == rel) {
                report.problems.push(
                    Problem::error(
                        &rel,
                        "unreadable",
                        "not a proposal that can be read: not replaced",
                    )
                    .with_hint(
                        "remove it, and the next `git swarm reflect macro` proposes the motif",
                    ),
                );
            }
            report.already.push(Already {
                key,
                slug: p.slug,
                status,
            });
            continue;
        }
        let path = proposal::write_new(store, &p)?;
        report.events.push(proposal::proposed_event(store, &p));
        report
            .used
            .extend(motif.candidates.iter().map(|c| c.id.clone()));
        report.proposed.push(Written {
            slug: p.slug.clone(),
            path: store.rel(&path),
            key,
            title: p.title.clone(),
            phases: motif.phases.iter().cloned().collect(),
            verify: p.verify.clone(),
        });
    }
    Ok(report)
}

/// The motifs seen in at least [`MIN_PHASES`] phases, by key: `signature:
/// <signature>` for a recurring failure, `violated: <id>` for a directive
/// violated again and again.
fn gather<'a>(
    log: &'a [Event],
    candidates: &'a [Candidate],
    since: Option<i64>,
) -> BTreeMap<String, Motif<'a>> {
    let mut motifs: BTreeMap<String, Motif<'a>> = BTreeMap::new();
    let recent = |ts: i64| since.is_none_or(|s| ts >= s);
    for e in log {
        let Some(ts) = e.ts_millis().filter(|&t| recent(t)) else {
            continue;
        };
        let Some(phase) = e.str_field("phase") else {
            continue;
        };
        // The violations the fold counts (`fold::head`), but for check
        // failures, which are of a change and carry no phase.
        let violation = match e.known_kind() {
            Some(Kind::Verdict) => e.str_field("verdict") == Some("violated"),
            Some(Kind::Ack) => e.str_field("status") == Some("violated"),
            Some(Kind::Unacknowledged) => true,
            _ => false,
        };
        let key = match (e.known_kind(), &e.directive) {
            (Some(Kind::Reflected), _) => match e.str_field("signature") {
                Some(sig) => format!("signature: {sig}"),
                None => continue,
            },
            (_, Some(id)) if violation => format!("violated: {id}"),
            _ => continue,
        };
        let m = motifs.entry(key).or_default();
        m.seen(phase, ts);
        m.events.push(e);
        m.directives.extend(e.directive.clone());
        m.roles.extend(e.actor.role.clone());
    }
    for c in candidates {
        let Some(ts) = crate::event::parse_ts_millis(&c.ts).filter(|&t| recent(t)) else {
            continue;
        };
        let Some(phase) = &c.phase else { continue };
        let m = motifs
            .entry(format!("signature: {}", c.signature))
            .or_default();
        m.seen(phase, ts);
        m.candidates.push(c);
    }
    motifs.retain(|_, m| m.phases.len() >= MIN_PHASES);
    motifs
}

/// The proposal a motif makes: the lesson and its suggested predicates,
/// derived as meso reflection derives them, with the evidence in prose.
fn draft_proposal(
    key: &str,
    motif: &Motif<'_>,
    directives: &HashMap<&str, Known<'_>>,
    now: &str,
) -> Proposal {
    let names: Vec<&str> = motif.phases.iter().map(String::as_str).collect();
    let mut list = names
        .iter()
        .take(TITLE_PHASES)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > TITLE_PHASES {
        list.push_str(", …");
    }
    let seen = format!("{} phases ({list})", names.len());
    let named: Vec<Known<'_>> = motif
        .directives
        .iter()
        .filter_map(|id| directives.get(id.as_str()).copied())
        .collect();
    let mut notes = Vec::new();
    let violated = key.strip_prefix("violated: ");
    let (title, base) = if let Some(id) = violated {
        match named.first() {
            Some(k) => (
                format!(
                    "Enforce `{id}`: violated in {seen}: {}",
                    one_line(&k.directive.lesson)
                ),
                Some(k.directive.clone()),
            ),
            None => {
                notes.push(format!("Directive `{id}` is no longer in the store."));
                (format!("Directive `{id}` was violated in {seen}"), None)
            }
        }
    } else if let Some(first) = motif.candidates.first() {
        let mut d = draft(first, &motif.candidates, &seen);
        // What meso's lesson of the same failure scoped it to counts too.
        for k in &named {
            d.applies_to_agents
                .extend(k.directive.applies_to_agents.iter().cloned());
            d.applies_to_tools
                .extend(k.directive.applies_to_tools.iter().cloned());
        }
        (d.lesson.clone(), Some(d))
    } else if let Some(k) = named.first() {
        (
            format!(
                "Still failing in {seen} despite `{}`: {}",
                k.directive.id,
                one_line(&k.directive.lesson)
            ),
            Some(k.directive.clone()),
        )
    } else {
        let sig = key.strip_prefix("signature: ").unwrap_or(key);
        (format!("`{}` recurred in {seen}", one_line(sig)), None)
    };
    for k in &named {
        let state = if k.quarantined {
            "is in quarantine".to_owned()
        } else if k.directive.status == Status::Active {
            "is active".to_owned()
        } else {
            format!("is {}", k.directive.status.as_str())
        };
        let advice = if violated.is_some() {
            "accepting this makes a second directive of it; raising its priority or enforcement may be the better fix"
        } else if k.directive.status == Status::Active && !k.quarantined {
            "it did not stop the failure, so a stronger rule (enforce, critical) is proposed"
        } else {
            "the failure went on"
        };
        notes.push(format!("Directive `{}` {state}: {advice}.", k.directive.id));
    }
    let title = truncate(&title, 280);
    // A title built around a directive's lesson starts with words of its
    // own ("Still failing in…"): the slug is made of the lesson's words.
    let words = match named.first() {
        Some(k) if violated.is_some() || motif.candidates.is_empty() => &k.directive.lesson,
        _ => &title,
    };
    let slug = proposal::slug("macro", words, key);
    let mut p = Proposal {
        slug,
        title,
        status: ProposalStatus::Open,
        source: SOURCE.to_owned(),
        category: Default::default(),
        applies_to_agents: Vec::new(),
        applies_to_tools: Vec::new(),
        paths: Vec::new(),
        verify: Vec::new(),
        required_actions: Vec::new(),
        forbidden_actions: Vec::new(),
        evidence: latest(motif, EVIDENCE_IDS)
            .into_iter()
            .map(|item| item.id().to_owned())
            .collect(),
        key: key.to_owned(),
        created_at: now.to_owned(),
        decided_at: None,
        reason: None,
        directive: None,
        body: String::new(),
    };
    if let Some(d) = base {
        let scope = |names: &[String], extra: &BTreeSet<String>| -> Vec<String> {
            let set: BTreeSet<String> = names
                .iter()
                .chain(extra)
                .map(|n| n.to_ascii_lowercase())
                .filter(|n| crate::directive::is_valid_scope_name(n))
                .collect();
            set.into_iter().take(20).collect()
        };
        p.category = d.category;
        p.applies_to_agents = scope(&d.applies_to_agents, &motif.roles);
        p.applies_to_tools = scope(&d.applies_to_tools, &BTreeSet::new());
        p.paths = d.paths;
        p.verify = d
            .verify
            .into_iter()
            .filter(|v| Predicate::parse(v).is_ok())
            .collect();
        p.forbidden_actions = d.forbidden_actions;
        // A proposal has no verification checks of its own: what is to be
        // checked by hand is something to do before handing off.
        p.required_actions = d
            .required_actions
            .into_iter()
            .chain(
                d.verification_checks
                    .iter()
                    .map(|v| truncate(&format!("check that {v}"), 200)),
            )
            .take(20)
            .collect();
    }
    p.body = prose(key, motif, &seen, &p, &notes);
    p
}

/// One piece of a motif's evidence.
#[derive(Clone, Copy)]
enum Item<'a> {
    Event(&'a Event),
    Candidate(&'a Candidate),
}

impl Item<'_> {
    fn id(&self) -> &str {
        match self {
            Item::Event(e) => &e.id,
            Item::Candidate(c) => &c.id,
        }
    }

    fn millis(&self) -> i64 {
        match self {
            Item::Event(e) => e.ts_millis().unwrap_or(0),
            Item::Candidate(c) => crate::event::parse_ts_millis(&c.ts).unwrap_or(0),
        }
    }
}

/// The latest `n` pieces of `motif`'s evidence, oldest first.
fn latest<'a>(motif: &Motif<'a>, n: usize) -> Vec<Item<'a>> {
    let mut items: Vec<Item<'a>> = motif
        .events
        .iter()
        .map(|&e| Item::Event(e))
        .chain(motif.candidates.iter().map(|&c| Item::Candidate(c)))
        .collect();
    // Stable: events of one time keep the log's order.
    items.sort_by_key(Item::millis);
    let skip = items.len().saturating_sub(n);
    items.split_off(skip)
}

/// The evidence in prose: the phases, then the latest events and candidates
/// with their phase, task and what they said (the earlier ones counted),
/// then the suggested predicates.
fn prose(key: &str, motif: &Motif<'_>, seen: &str, p: &Proposal, notes: &[String]) -> String {
    let mut out = format!("Seen in {seen}. Motif: `{}`.\n\n", one_line(key));
    out.push_str("Evidence:\n\n");
    let shown = latest(motif, EVIDENCE_LINES);
    let more = motif.events.len() + motif.candidates.len() - shown.len();
    if more > 0 {
        out.push_str(&format!(
            "- and {more} more before these ({} events and {} insight candidates in all)\n",
            motif.events.len(),
            motif.candidates.len()
        ));
    }
    for item in shown {
        match item {
            Item::Event(e) => out.push_str(&event_line(e)),
            Item::Candidate(c) => out.push_str(&candidate_line(c)),
        }
    }
    out.push('\n');
    for n in notes {
        out.push_str(n);
        out.push('\n');
    }
    if p.verify.is_empty() {
        out.push_str("No predicate could be derived from the evidence.\n");
    } else {
        let list: Vec<String> = p.verify.iter().map(|v| format!("`{v}`")).collect();
        out.push_str(&format!("Suggested predicate: {}.\n", list.join(", ")));
    }
    // Said now, so that a person deciding knows what accepting it does.
    if let Err(failure) = crate::directive::check_gate(&p.to_directive(&p.created_at)) {
        out.push_str(&format!(
            "As it stands it fails the actionability gate ({}: {}): accepting it quarantines the directive with that reason, until the missing part is written in.\n",
            failure.reason.as_str(),
            failure.detail()
        ));
    }
    out
}

/// One `reflected` or violation event, as a line of the prose.
fn event_line(e: &Event) -> String {
    let phase = truncate(e.str_field("phase").unwrap_or("?"), 64);
    let what = match e.known_kind() {
        Some(Kind::Reflected) => format!(
            "tasks {}, outcome {}{}",
            e.data
                .get("tasks")
                .and_then(|t| t.as_array())
                .map(|t| {
                    t.iter()
                        .filter_map(|v| v.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_default(),
            e.str_field("outcome").unwrap_or("?"),
            e.directive
                .as_deref()
                .map(|d| format!(", directive `{d}`"))
                .unwrap_or_default()
        ),
        _ => format!(
            "violated{}{}",
            e.actor
                .role
                .as_deref()
                .map(|r| format!(", by {r}"))
                .unwrap_or_default(),
            e.str_field("reason")
                .map(|r| format!(": {}", truncate(&one_line(r), 200)))
                .unwrap_or_default()
        ),
    };
    format!(
        "- phase `{phase}`: `{}` event {} at {} ({what})\n",
        e.kind, e.id, e.ts
    )
}

/// One insight candidate, as a line of the prose.
fn candidate_line(c: &Candidate) -> String {
    let mut line = format!(
        "- phase `{}`: insight candidate {} at {}, {} `{}`",
        truncate(c.phase.as_deref().unwrap_or("?"), 64),
        c.id,
        c.ts,
        c.tool,
        truncate(&one_line(c.command.as_deref().unwrap_or("")), 200)
    );
    if let Some(task) = &c.task {
        line.push_str(&format!(" in task {}", truncate(&one_line(task), 200)));
    }
    if let Some(excerpt) = &c.excerpt {
        line.push_str(&format!(": {}", truncate(&one_line(excerpt), 200)));
    }
    line.push('\n');
    line
}
