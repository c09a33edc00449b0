//! `git swarm status`.

use std::io::Write;
use std::process::ExitCode;

use serde::Serialize;

use git_swarm::hooks::{self, HookState};
use git_swarm::index::Refresh;

use super::{Format, Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

#[derive(Debug, Serialize)]
struct Escalated {
    id: String,
    since: String,
    from: Option<String>,
    to: String,
    reason: String,
    open: bool,
}

#[derive(Debug, Serialize)]
struct Unremediated {
    id: String,
    violations: u64,
    last_violation: String,
}

#[derive(Debug, Serialize)]
struct Status {
    recently_escalated: Vec<Escalated>,
    unremediated_violations: Vec<Unremediated>,
    unacknowledged_criticals: Vec<(String, u64)>,
    spoofed_acks: u64,
    quarantined: Vec<String>,
    uncommitted_events: u64,
    hooks: Vec<(String, String)>,
    index: String,
    handoffs: git_swarm::handoff::review::Attention,
    review: git_swarm::reviewed::ReviewStatus,
    /// Each subscribed hive: name, pinned revision, and its directives
    /// here (`None`: not fetched).
    hives: Vec<(String, String, Option<usize>)>,
}

const WEEK_MS: i64 = 7 * 24 * 60 * 60 * 1000;

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    let store = super::store(ui)?;
    let loaded = super::load_index(&store, ui)?;
    let index = &loaded.index;
    let fold = &index.fold;
    let Attention {
        recently_escalated,
        unremediated_violations,
        unacknowledged_criticals,
    } = attention(&store, index);
    let handoffs = handoffs(&store, ui)?;
    let repo = super::repo()?;
    let review = super::review(&repo, ui);
    let active = index.directives.iter().filter_map(|e| {
        let d = e.directive.as_ref()?;
        (d.status == git_swarm::directive::Status::Active)
            .then_some((d.id.as_str(), e.blob.as_ref()))
    });
    let review = git_swarm::reviewed::ReviewStatus::of(active, &review);
    let hooks = hooks::hooks_dir(&repo).and_then(|d| hooks::status(&d));
    let status = Status {
        recently_escalated,
        unremediated_violations,
        unacknowledged_criticals,
        spoofed_acks: fold
            .kinds()
            .find(|(k, _)| *k == "spoofed_ack")
            .map_or(0, |(_, n)| n),
        quarantined: index
            .quarantine
            .iter()
            .map(|e| e.stem().to_owned())
            .collect(),
        uncommitted_events: uncommitted(&store).unwrap_or(0),
        hives: (store.config.hive.iter())
            .map(|h| {
                let dir = git_swarm::hive::pinned_dir(&store.common_dir, &h.name, &h.rev);
                let here = git_swarm::hive::is_fetched(&store.common_dir, h).then(|| {
                    git_swarm::safe_fs::names_ending(&dir, ".toml").map_or(0, |n| n.len())
                });
                (h.name.clone(), h.rev.clone(), here)
            })
            .collect(),
        hooks: hooks
            .unwrap_or_default()
            .into_iter()
            .map(|h| {
                let state = match h.state {
                    HookState::Installed | HookState::Wrapped if h.current => "installed",
                    HookState::Installed | HookState::Wrapped => "outdated",
                    HookState::Absent => "absent",
                    HookState::Foreign => "foreign",
                };
                (h.name.to_string(), state.to_owned())
            })
            .collect(),
        index: match (index.error_count(), &loaded.refresh) {
            (0, Refresh::Fresh) => "fresh".to_owned(),
            (0, Refresh::Updated { directives, events }) => format!(
                "refreshed ({directives} directive file(s) and {events} event file(s) had changed)"
            ),
            (0, Refresh::Rebuilt { reason }) => format!("rebuilt ({reason})"),
            (n, _) => format!("{n} problem(s) in .swarm/ (`git swarm validate` lists them)"),
        },
        handoffs,
        review,
    };
    if args.format == Format::Json {
        return ui.json_result(&status);
    }
    text(&status, ui)?;
    Ok(ExitCode::SUCCESS)
}

/// The handoffs' part: the log is read only when there are handoffs.
fn handoffs(
    store: &git_swarm::Store,
    ui: &mut Ui,
) -> Result<git_swarm::handoff::review::Attention, git_swarm::Error> {
    let (list, problems) = git_swarm::handoff::load_all(store)?;
    ui.problems(&problems);
    if list.is_empty() {
        return Ok(Default::default());
    }
    let log = super::read_log(store, ui)?;
    let since = store.clock.now().as_millisecond() - WEEK_MS;
    Ok(git_swarm::handoff::review::attention(
        &list,
        &log,
        store.config.handoffs.max_review_attempts,
        since,
    ))
}

/// What in the directive loop needs someone's attention.
struct Attention {
    recently_escalated: Vec<Escalated>,
    unremediated_violations: Vec<Unremediated>,
    unacknowledged_criticals: Vec<(String, u64)>,
}

fn attention(store: &git_swarm::Store, index: &git_swarm::index::Index) -> Attention {
    let fold = &index.fold;
    let now = store.clock.now().as_millisecond();
    let declared = |id: &str| {
        index
            .directive(id)
            .and_then(|e| e.directive.as_ref())
            .map(|d| format!("{}/{}", d.priority.as_str(), d.enforcement.as_str()))
    };
    let mut recently_escalated = Vec::new();
    let mut unremediated_violations = Vec::new();
    let mut unacknowledged_criticals = Vec::new();
    for (id, state) in fold.loop_states() {
        let from = declared(id);
        // A directive declared critical + enforce is not made any stricter.
        let changes = from.as_deref() != Some("critical/enforce");
        for ep in state
            .episodes
            .iter()
            .filter(|e| changes && now - e.start <= WEEK_MS)
        {
            recently_escalated.push(Escalated {
                id: id.to_owned(),
                since: ms(ep.start),
                from: from.clone(),
                to: "critical/enforce".into(),
                reason: "violated on 2 occasions within 30 days".into(),
                open: ep.ended.is_none(),
            });
        }
        if state.unremediated()
            && !index.is_retired(id)
            && let Some((ts, _)) = state.last_violation
        {
            unremediated_violations.push(Unremediated {
                id: id.to_owned(),
                violations: state.violations,
                last_violation: ms(ts),
            });
        }
        if let Some(n) = fold
            .directive(id)
            .and_then(|d| d.counts().get("unacknowledged").copied())
            && !index.is_retired(id)
        {
            unacknowledged_criticals.push((id.to_owned(), n));
        }
    }
    Attention {
        recently_escalated,
        unremediated_violations,
        unacknowledged_criticals,
    }
}

/// The status's highlights as a few lines for an agent's briefing: open
/// escalations, unremediated violations, unacknowledged criticals and the
/// quarantine's size; empty when nothing needs attention. Hooks and
/// uncommitted events are left to `git swarm status` (a person's concern,
/// and they cost the repository's index to read).
pub fn highlights(store: &git_swarm::Store, index: &git_swarm::index::Index) -> Vec<String> {
    let a = attention(store, index);
    let mut lines = Vec::new();
    for e in a.recently_escalated.iter().filter(|e| e.open) {
        lines.push(format!(
            "- escalated to critical/enforce since {}: {} ({})",
            e.since, e.id, e.reason
        ));
    }
    for u in &a.unremediated_violations {
        lines.push(format!(
            "- violated and not yet remediated: {} ({} violation(s), last {})",
            u.id, u.violations, u.last_violation
        ));
    }
    for (id, n) in &a.unacknowledged_criticals {
        lines.push(format!(
            "- critical left unacknowledged: {id} ({n} time(s))"
        ));
    }
    if !index.quarantine.is_empty() {
        lines.push(format!(
            "- {} quarantined entr{} waiting for a fix (`git swarm harden`)",
            index.quarantine.len(),
            if index.quarantine.len() == 1 {
                "y"
            } else {
                "ies"
            }
        ));
    }
    lines
}

fn text(s: &Status, ui: &mut Ui) -> std::io::Result<()> {
    // Ids and reasons come from the event log: each line is shown escaped.
    let mut buf = Vec::new();
    let out = &mut buf;
    let escalated = s.recently_escalated.iter().map(|e| {
        format!(
            "{}  {} -> {}  since {}{}  ({})",
            e.id,
            e.from.as_deref().unwrap_or("?"),
            e.to,
            e.since,
            if e.open { "" } else { ", deescalated" },
            e.reason
        )
    });
    section(out, "Recently escalated (last 7 days):", escalated)?;
    let unremediated = s.unremediated_violations.iter().map(|u| {
        format!(
            "{}  {} violation(s), last {}",
            u.id, u.violations, u.last_violation
        )
    });
    section(out, "Unremediated violations:", unremediated)?;
    let unacknowledged = s
        .unacknowledged_criticals
        .iter()
        .map(|(id, n)| format!("{id}  {n} time(s)"));
    section(out, "Unacknowledged criticals:", unacknowledged)?;
    let h = &s.handoffs;
    writeln!(
        out,
        "Open handoffs: {}{}",
        h.open.len(),
        if h.open.is_empty() {
            String::new()
        } else {
            format!(" ({})", h.open.join(", "))
        }
    )?;
    let blocked = h
        .blocked
        .iter()
        .map(|(task, n)| format!("{task}  sent back {n} time(s)"));
    section(out, "Blocked reviews:", blocked)?;
    let violations = h
        .recent_violations
        .iter()
        .map(|v| format!("{}  {} {}  {}", v.task, v.violation, v.what, v.ts));
    section(out, "Handoff violations (last 7 days):", violations)?;
    let r = &s.review;
    let heading = format!(
        "Awaiting review (not on {}; {}):",
        r.trusted_revision
            .as_deref()
            .unwrap_or("a trusted revision: none found, set `git config swarm.trustedRef REV`"),
        match r.unreviewed {
            git_swarm::reviewed::Unreviewed::Withhold => "withheld from agents",
            git_swarm::reviewed::Unreviewed::Mark => "shown to agents marked unreviewed",
            git_swarm::reviewed::Unreviewed::Allow =>
                "shown to agents, as swarm.injectUnreviewed allows",
        }
    );
    section(out, &heading, r.awaiting_review.iter().cloned())?;
    if !s.hives.is_empty() {
        let hives = s.hives.iter().map(|(name, rev, here)| match here {
            Some(n) => format!("{name}  at {}  {n} directives", git_swarm::hive::short(rev)),
            None => format!(
                "{name}  at {}  not fetched here: `git swarm hive fetch`",
                git_swarm::hive::short(rev)
            ),
        });
        section(out, "Hives:", hives)?;
    }
    writeln!(out, "Spoofed acks: {}", s.spoofed_acks)?;
    writeln!(
        out,
        "Quarantined: {}",
        if s.quarantined.is_empty() {
            "none".to_owned()
        } else {
            s.quarantined.join(", ")
        }
    )?;
    if s.uncommitted_events == 0 {
        writeln!(out, "Events not yet committed: 0")?;
    } else {
        writeln!(
            out,
            "Events not yet committed: {} (`git swarm commit` records them in a commit of their own)",
            s.uncommitted_events
        )?;
    }
    let hooks: Vec<String> = s.hooks.iter().map(|(n, st)| format!("{n} {st}")).collect();
    writeln!(out, "Hooks: {}", hooks.join(", "))?;
    writeln!(out, "Index: {}", s.index)?;
    for line in String::from_utf8_lossy(&buf).lines() {
        writeln!(ui.out, "{}", super::clean(line))?;
    }
    Ok(())
}

/// A heading, then its lines indented, or `none`.
fn section(
    out: &mut Vec<u8>,
    title: &str,
    lines: impl Iterator<Item = String>,
) -> std::io::Result<()> {
    writeln!(out, "{title}")?;
    let mut lines = lines.peekable();
    if lines.peek().is_none() {
        writeln!(out, "  none")?;
    }
    lines.try_for_each(|l| writeln!(out, "  {l}"))
}

fn ms(ts: i64) -> String {
    jiff::Timestamp::from_millisecond(ts)
        .map(git_swarm::event::format_ts)
        .unwrap_or_else(|_| ts.to_string())
}

/// Event lines waiting in the pending log, and in the working tree's
/// tracked log beyond those in HEAD's (written by hand, or by a version
/// that recorded into the tree).
fn uncommitted(store: &git_swarm::Store) -> Option<u64> {
    let pending = git_swarm::event::commit::pending_lines(store).unwrap_or(0);
    Some(pending + uncommitted_in_tree(store).unwrap_or(0))
}

fn uncommitted_in_tree(store: &git_swarm::Store) -> Option<u64> {
    let repo = super::repo().ok()?;
    let gix = repo.gix();
    let head_tree = gix.head_commit().ok().and_then(|c| c.tree().ok());
    let mut total = 0u64;
    let max_file = store.config.events.max_file_bytes;
    for path in git_swarm::event::event_files(&store.events_dir()).ok()? {
        // A link, a FIFO or a file over the bound is not read (the index reports it).
        let Ok(now) = git_swarm::safe_fs::read(&path, max_file) else {
            continue;
        };
        let rel = store.rel(&path);
        let entry = head_tree
            .as_ref()
            .and_then(|t| t.lookup_entry_by_path(&rel).ok().flatten())
            .filter(|e| e.mode().is_blob());
        // The committed file is sized from its object header: one over the
        // bound is never inflated, and its lines are not counted.
        if entry.as_ref().is_some_and(|e| {
            gix.find_header(e.oid())
                .map_or(true, |h| h.size() > max_file)
        }) {
            continue;
        }
        let committed = entry
            .and_then(|e| e.object().ok())
            .map(|o| o.data.clone())
            .unwrap_or_default();
        let lines = |b: &[u8]| b.iter().filter(|&&c| c == b'\n').count() as u64;
        total += lines(&now).saturating_sub(lines(&committed));
    }
    Some(total)
}
