//! Escalation: a directive violated on two occasions within 30 days is
//! critical + enforce until a human ends the episode (`git swarm
//! deescalate`). The fold opens the episode from the log; this writes the
//! one `escalation` event that records it, once the violations are appended.

use std::path::PathBuf;

use crate::directive::{Enforcement, Priority};
use crate::error::{Error, Result};
use crate::event::{Body, Event, Level};
use crate::store::Store;

/// The `escalation` events for the open episodes no event records yet, from
/// the index's fold; `declared` gives a directive's declared priority and
/// enforcement when known. Append each with [`append`], one at a time, so
/// that what was written is reported even when a later append fails.
pub fn due(
    store: &Store,
    declared: impl Fn(&str) -> Option<(Priority, Enforcement)>,
) -> Result<Vec<Event>> {
    let fold = crate::index::load_fold(store)?.fold;
    Ok(due_in(store, &fold, declared))
}

/// [`due`] from `fold`.
fn due_in(
    store: &Store,
    fold: &crate::fold::Fold,
    declared: impl Fn(&str) -> Option<(Priority, Enforcement)>,
) -> Vec<Event> {
    let mut out = Vec::new();
    for (id, state) in fold.loop_states() {
        let Some(ep) = state.open() else { continue };
        if ep.recorded {
            continue;
        }
        let declared = declared(id);
        // Already critical + enforce: escalating changes nothing, and an
        // event (and a warning) would only leave a human an episode to end.
        if declared == Some((Priority::Critical, Enforcement::Enforce)) {
            continue;
        }
        let from = declared.map(|(priority, enforcement)| Level {
            priority,
            enforcement,
        });
        let violations: Vec<String> = ep
            .violations
            .iter()
            .map(|k| crate::event::id_of_key(*k))
            .collect();
        let e = store.event(Body::Escalation {
            from,
            to: Level {
                priority: Priority::Critical,
                enforcement: Enforcement::Enforce,
            },
            reason: "violated on 2 occasions within 30 days".to_owned(),
            violations,
            episode: state.open_key(id).unwrap_or_default(),
        });
        out.push(e.about(id));
    }
    out
}

/// One escalation [`append`] was asked to write.
#[derive(Debug)]
pub struct Escalation {
    pub directive: String,
    /// This process wrote the event (of several racing, one does).
    pub written: bool,
    /// Torn lines the append found and saved aside, for the user to hear of.
    pub torn: Vec<PathBuf>,
}

/// [`due`], with the directives read from the index: for a command that
/// recorded violations without having loaded them itself.
pub fn due_from_index(store: &Store) -> Result<Vec<Event>> {
    // One read of the index for the fold and the directives.
    let loaded = crate::index::load(store)?;
    let index = &loaded.index;
    Ok(due_in(store, &index.fold, |id| {
        let d = index.directive(id)?.directive.as_ref()?;
        Some((d.priority, d.enforcement))
    }))
}

/// Appends one `escalation` event of [`due`], once for its episode: of
/// several processes racing, one writes it.
pub fn append(store: &Store, e: &Event) -> Result<Escalation> {
    let episode = e.str_field("episode").unwrap_or("");
    let marker = format!("\"episode\":{}", serde_json::Value::from(episode));
    let (written, torn) =
        crate::event::append_once(&store.log(), e, &marker, &store.config.events)?;
    Ok(Escalation {
        directive: e.directive.clone().unwrap_or_else(|| "?".to_owned()),
        written,
        torn,
    })
}

/// `deescalate`: the event that ends `id`'s open escalation episode, once
/// a human says why in at least [`MIN_JUSTIFICATION`](crate::directive_loop::gate::MIN_JUSTIFICATION)
/// characters.
pub fn deescalate(store: &Store, id: &str, justification: &str) -> Result<Event> {
    let justification = super::gate::justification(
        justification,
        "it",
        "say why the escalation can end, in a sentence",
    )?;
    // The justification is checked first: a refused command reads nothing.
    let fold = crate::index::load_fold(store)?.fold;
    let Some(episode) = fold.loop_state(id).and_then(|s| s.open_key(id)) else {
        return Err(Error::usage(
            format!("`{id}` is not escalated"),
            "`git swarm status` lists the escalated directives",
        ));
    };
    Ok(store
        .event(Body::Deescalation {
            justification: justification.to_owned(),
            episode,
        })
        .about(id))
}
