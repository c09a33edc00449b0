//! Why a directive stands as it does: its declared and effective priority
//! and enforcement, and every event of the loop about it in (ts, id) order,
//! each with the commit that recorded it.
//!
//! The commit that recorded an event is the one whose `.swarm/events/`
//! file first holds the event's id while none of its parents' does: found
//! by walking the history from HEAD, opening only the event files a commit
//! changed. A union merge brings lines its parents had, so it records none;
//! of several commits that each added the same line (a cherry-pick), the
//! oldest is named.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use crate::directive::{Directive, Enforcement, Priority};
use crate::error::{Error, Result};
use crate::event::{Event, Kind};
use crate::fold::Fold;

/// Events of these kinds are not listed one by one: there can be many,
/// and none of them changes the directive's standing.
const COUNTED_ONLY: &[Kind] = &[Kind::Shown];

/// A commit that recorded events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecordingCommit {
    pub id: String,
    /// The first line of its message.
    pub summary: String,
    /// Committer time, seconds since the epoch.
    #[serde(skip)]
    pub time: i64,
}

/// One event about the directive, and where it was recorded.
#[derive(Debug, Clone, Serialize)]
pub struct ExplainedEvent {
    pub event: Event,
    /// `None`: not in any commit reachable from HEAD (uncommitted).
    pub commit: Option<RecordingCommit>,
}

/// An escalation episode of the directive.
#[derive(Debug, Clone, Serialize)]
pub struct EpisodeSummary {
    /// `<id>#<n>`.
    pub episode: String,
    /// When it opened (the second occasion's violation), RFC 3339.
    pub start: String,
    /// The ids of the two violations that opened it.
    pub violations: [String; 2],
    /// When a `deescalation` ended it; `None` while it is open.
    pub ended: Option<String>,
}

/// Why a directive has its effective priority and enforcement.
#[derive(Debug, Clone, Serialize)]
pub struct Explanation {
    pub id: String,
    /// What its file says; `None` when the file is gone or does not parse.
    pub declared_priority: Option<Priority>,
    pub declared_enforcement: Option<Enforcement>,
    pub status: Option<String>,
    pub effective_priority: Option<Priority>,
    pub effective_enforcement: Option<Enforcement>,
    /// The reason, in a sentence.
    pub why: String,
    pub episodes: Vec<EpisodeSummary>,
    /// A violation no later outcome has remediated.
    pub unremediated: bool,
    /// `shown` events (counted, not listed).
    pub shown: u64,
    pub events: Vec<ExplainedEvent>,
}

/// Explains directive `id` from the folded log, the whole log (`events`,
/// de-duplicated and in (ts, id) order as [`crate::directive_loop::records::read_log`]
/// returns it) and the repository's history. `quarantined` is the reason
/// recorded in `quarantine/<id>.toml` when the id is a quarantined entry.
pub fn explain(
    id: &str,
    directive: Option<&Directive>,
    quarantined: Option<&str>,
    fold: &Fold,
    events: &[Event],
    repo: Option<&gix::Repository>,
    max_file_bytes: u64,
) -> Result<Explanation> {
    let state = fold.loop_state(id);
    let ms = |t: i64| {
        jiff::Timestamp::from_millisecond(t)
            .map(crate::event::format_ts)
            .unwrap_or_default()
    };
    let episodes: Vec<EpisodeSummary> = state
        .map(|s| {
            s.episodes
                .iter()
                .enumerate()
                .map(|(n, e)| EpisodeSummary {
                    episode: format!("{id}#{}", n + 1),
                    start: ms(e.start),
                    violations: e.violations.map(crate::event::id_of_key),
                    ended: e.ended.map(ms),
                })
                .collect()
        })
        .unwrap_or_default();
    let open = fold.escalated(id).is_some();
    let retired = directive.is_some_and(|d| d.status == crate::directive::Status::Retired);
    // A retired directive is not checked, injected or gating: nothing is in force.
    let effective = directive.filter(|_| !retired).map(|d| fold.effective(d));
    let why = match (directive, open) {
        (None, _) if quarantined.is_some() => format!(
            "quarantined ({}): nothing is in force until it is fixed and moved to .swarm/directives/",
            quarantined.unwrap_or_default()
        ),
        (Some(_), _) if retired => format!(
            "retired: not checked or injected, whatever its priority and enforcement; `git swarm edit {id}` (`status = \"active\"`) brings it back"
        ),
        (None, true) => "escalated (its file is missing or does not parse): critical and enforce while the episode is open".to_owned(),
        (None, false) => "its file is missing or does not parse: nothing is in force".to_owned(),
        (Some(d), true)
            if (d.priority, d.enforcement) == (Priority::Critical, Enforcement::Enforce) =>
        {
            "declared critical and enforce; violated on 2 occasions within 30 days, which changes nothing".to_owned()
        }
        (Some(_), true) => {
            let ep = episodes.last().map(|e| e.episode.clone()).unwrap_or_default();
            format!(
                "escalated to critical and enforce: violated on 2 occasions within 30 days (episode {ep}), until `git swarm deescalate {id}` ends it"
            )
        }
        (Some(_), false) if !episodes.is_empty() => {
            "as its file declares: its last escalation was ended by a deescalation".to_owned()
        }
        (Some(_), false) => "as its file declares: it has never been escalated".to_owned(),
    };
    let about = |e: &Event| {
        e.directive.as_deref() == Some(id)
            || (e.known_kind() == Some(Kind::SpoofedAck) && e.str_field("claimed") == Some(id))
    };
    let mine: Vec<&Event> = events
        .iter()
        .filter(|e| about(e) && e.known_kind().is_none_or(|k| !COUNTED_ONLY.contains(&k)))
        .collect();
    let ids: Vec<&str> = mine.iter().map(|e| e.id.as_str()).collect();
    let commits = match repo {
        Some(r) => recording_commits(r, &ids, max_file_bytes)?,
        None => HashMap::new(),
    };
    Ok(Explanation {
        id: id.to_owned(),
        declared_priority: directive.map(|d| d.priority),
        declared_enforcement: directive.map(|d| d.enforcement),
        status: directive.map(|d| d.status.as_str().to_owned()),
        effective_priority: effective.map(|e| e.0),
        effective_enforcement: effective.map(|e| e.1),
        why,
        episodes,
        unremediated: state.is_some_and(crate::fold::LoopState::unremediated),
        shown: fold
            .directive(id)
            .and_then(|d| d.counts().get("shown").copied())
            .unwrap_or(0),
        events: mine
            .into_iter()
            .map(|e| ExplainedEvent {
                commit: commits.get(e.id.as_str()).cloned(),
                event: e.clone(),
            })
            .collect(),
    })
}

/// For each of `ids`, the commit reachable from HEAD that recorded the
/// event (see the module docs). Ids no commit recorded are left out. An
/// event file blob over `max_file_bytes` (`events.max_file_bytes`) is never
/// inflated: read as no file, its lines record nothing.
pub fn recording_commits(
    repo: &gix::Repository,
    ids: &[&str],
    max_file_bytes: u64,
) -> Result<HashMap<String, RecordingCommit>> {
    let mut found: HashMap<String, RecordingCommit> = HashMap::new();
    if ids.is_empty() {
        return Ok(found);
    }
    let wanted: HashSet<&str> = ids.iter().copied().collect();
    // An unborn HEAD has no history: everything is uncommitted.
    let Ok(head) = repo.head_id() else {
        return Ok(found);
    };
    let events_tree = |commit: gix::ObjectId| -> Result<Option<gix::ObjectId>> {
        let tree = repo
            .find_commit(commit)
            .map_err(|e| Error::git("reading a commit", e))?
            .tree()
            .map_err(|e| Error::git("reading a commit's tree", e))?;
        Ok(tree
            .lookup_entry_by_path(".swarm/events")
            .map_err(|e| Error::git("reading .swarm/events", e))?
            .filter(|e| e.mode().is_tree())
            .map(|e| e.object_id()))
    };
    let files = |tree: Option<gix::ObjectId>| -> Result<HashMap<Vec<u8>, gix::ObjectId>> {
        let mut out = HashMap::new();
        let Some(tree) = tree else { return Ok(out) };
        let tree = repo
            .find_tree(tree)
            .map_err(|e| Error::git("reading .swarm/events", e))?;
        for e in tree.iter() {
            let e = e.map_err(|e| Error::git("reading .swarm/events", e))?;
            if e.mode().is_blob() {
                out.insert(e.filename().to_vec(), e.oid().to_owned());
            }
        }
        Ok(out)
    };
    let walk = repo
        .rev_walk([head.detach()])
        .all()
        .map_err(|e| Error::git("walking the history", e))?;
    for info in walk {
        let info = info.map_err(|e| Error::git("walking the history", e))?;
        let mine = events_tree(info.id)?;
        if mine.is_none() {
            continue;
        }
        let parents: Vec<Option<gix::ObjectId>> = info
            .parent_ids
            .iter()
            .map(|p| events_tree(*p))
            .collect::<Result<_>>()?;
        // A parent with the same folder had every line of it.
        if parents.contains(&mine) {
            continue;
        }
        let parent_files: Vec<HashMap<Vec<u8>, gix::ObjectId>> =
            parents.into_iter().map(files).collect::<Result<_>>()?;
        let commit = repo
            .find_commit(info.id)
            .map_err(|e| Error::git("reading a commit", e))?;
        let time = commit.time().map(|t| t.seconds).unwrap_or(0);
        let summary = || {
            commit
                .message_raw_sloppy()
                .to_string()
                .lines()
                .next()
                .unwrap_or_default()
                .to_owned()
        };
        for (name, blob) in files(mine)? {
            let before: Vec<gix::ObjectId> = parent_files
                .iter()
                .filter_map(|f| f.get(&name).copied())
                .collect();
            if before.contains(&blob) {
                continue;
            }
            // Sized from the object header first: a committed file of
            // gigabytes (zeros compress to nothing) is never inflated.
            let read = |id: gix::ObjectId| -> Result<Option<Vec<u8>>> {
                let size = repo
                    .find_header(id)
                    .map_err(|e| Error::git("reading an event file", e))?
                    .size();
                if size > max_file_bytes {
                    return Ok(None);
                }
                Ok(Some(
                    repo.find_blob(id)
                        .map_err(|e| Error::git("reading an event file", e))?
                        .data
                        .clone(),
                ))
            };
            let Some(data) = read(blob)? else { continue };
            let parents: Vec<Vec<u8>> = before
                .iter()
                .map(|b| read(*b))
                .filter_map(Result::transpose)
                .collect::<Result<_>>()?;
            // The log is appended to: a parent's file is most often the
            // start of this one, and only the lines after it are new. The
            // lines of the other parents (a union merge's) are looked up by id.
            let (skip, longest) = parents
                .iter()
                .enumerate()
                .filter(|(_, p)| data.starts_with(p) && p.ends_with(b"\n"))
                .map(|(i, p)| (p.len(), Some(i)))
                .max()
                .unwrap_or((0, None));
            let mut added: Vec<&str> = line_ids(&data[skip..])
                .filter(|id| wanted.contains(id))
                .collect();
            if added.is_empty() {
                continue;
            }
            let others: HashSet<&str> = parents
                .iter()
                .enumerate()
                .filter(|(i, _)| Some(*i) != longest)
                .flat_map(|(_, p)| line_ids(p))
                .collect();
            added.retain(|id| !others.contains(id));
            for id in added {
                if found.get(id).is_some_and(|c| c.time <= time) {
                    continue;
                }
                found.insert(
                    id.to_owned(),
                    RecordingCommit {
                        id: info.id.to_string(),
                        summary: summary(),
                        time,
                    },
                );
            }
        }
    }
    Ok(found)
}

/// The ids of the events in the lines of `data` (lines that are no event
/// are passed over: the readers report them).
fn line_ids(data: &[u8]) -> impl Iterator<Item = &str> {
    #[derive(serde::Deserialize)]
    struct Id<'a> {
        #[serde(borrow)]
        id: &'a str,
    }
    data.split(|&b| b == b'\n').filter_map(|line| {
        // Each line is searched for the id's key before it is parsed.
        memchr::memmem::find(line, b"\"id\"")?;
        serde_json::from_slice::<Id<'_>>(line).ok().map(|i| i.id)
    })
}
