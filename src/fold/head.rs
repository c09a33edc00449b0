//! What the fold reads of an event line, parsed without the rest.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::event::Kind;
use crate::pattern::fold::PatternEvent;

/// The parts of an event the fold reads, parsed without allocating the rest.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EventHead {
    /// [`crate::event::id_key`] of the id.
    pub key: u128,
    /// Milliseconds since the epoch.
    pub ts: i64,
    pub kind: String,
    /// The kind, if this version knows it.
    pub known: Option<Kind>,
    /// The directive(s) the event is about: `directive`, plus `directives` for events about several.
    pub directives: Vec<String>,
    /// For a `check` event, the fingerprint of the change it recorded a failure of.
    pub change: Option<String>,
    /// For a `check` event, a key of the branch checked (`branch`), when it was on one.
    pub branch: Option<u64>,
    /// What the event means for escalation and remediation.
    pub signal: Signal,
    /// For `ack` and `unacknowledged` events: a key of the delegation.
    pub delegation: Option<u64>,
    /// For the pattern loop's kinds: the fields its fold reads (`None` if they do not parse).
    pub pattern: Option<Box<PatternEvent>>,
}

/// The part an event plays in the directive loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Signal {
    #[default]
    None,
    /// A violation (an unacknowledged critical, a `violated` ack or
    /// verdict, a recorded check failure), on an occasion: violations on the same
    /// occasion (one change, delegation or phase) are one.
    Violation { occasion: u64 },
    /// Evidence the directive was followed: an `applied` ack, a `verified` verdict.
    Remediation,
    /// A `check_passed` event: remediates the directive's check violations
    /// recorded before it on the same branch. A kind of its own, not a
    /// `check` with another outcome: a version that does not know it folds
    /// it as nothing rather than as one more violation.
    Pass,
    /// An `escalation` event (the audit record of an episode).
    Escalation,
    /// A `deescalation`: ends the directive's open episode, if it is the
    /// one it names (`episode`: `<directive>#<n>`, the n-th episode).
    /// One that names no episode ends whichever is open; one made on
    /// another branch for an episode already ended ends nothing.
    Deescalation { episode: Option<u32> },
}

/// Violations on two occasions this close together escalate a directive.
pub const ESCALATION_WINDOW_MS: i64 = 30 * 24 * 60 * 60 * 1000;

/// What [`EventHead::parse`] reads of a line, borrowed where no escape is in the way.
#[derive(Deserialize)]
struct RawHead<'a> {
    #[serde(borrow)]
    id: Cow<'a, str>,
    #[serde(borrow)]
    ts: Cow<'a, str>,
    #[serde(borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    directive: Option<Cow<'a, str>>,
    directives: Option<Lenient<Vec<String>>>,
    #[serde(borrow)]
    change: Option<Cow<'a, str>>,
    branch: Option<Lenient<String>>,
    #[serde(borrow)]
    delegation: Option<Cow<'a, str>>,
    #[serde(borrow)]
    phase: Option<Cow<'a, str>>,
    #[serde(borrow)]
    verdict: Option<Cow<'a, str>>,
    #[serde(borrow)]
    status: Option<Cow<'a, str>>,
    episode: Option<Lenient<String>>,
    /// Checked, not used: the fold must accept exactly the lines the readers accept.
    #[allow(dead_code)]
    actor: Option<crate::event::Actor>,
}

/// A kind's own field that the fold reads when it is a `T`; a value of
/// another type is kept and ignored.
#[derive(Deserialize)]
#[serde(untagged)]
enum Lenient<T> {
    Is(T),
    Other(IgnoredAny),
}

impl<T> Lenient<T> {
    fn get(self) -> Option<T> {
        match self {
            Lenient::Is(v) => Some(v),
            Lenient::Other(_) => None,
        }
    }
}

impl EventHead {
    /// Parses one line; `None` if it is not a well-formed event (readers
    /// that report problems use [`crate::event::parse_event_line`]).
    pub fn parse(line: &[u8]) -> Option<EventHead> {
        // serde_json skips the fields it ignores without checking their
        // UTF-8, so a line the readers reject would otherwise be folded.
        let text = std::str::from_utf8(line).ok()?;
        let raw: RawHead<'_> = serde_json::from_str(text).ok()?;
        let ts = crate::event::check_envelope(&raw.id, &raw.ts, &raw.kind).ok()?;
        let mut directives: Vec<String> = raw.directive.into_iter().map(Cow::into_owned).collect();
        directives.extend(raw.directives.and_then(Lenient::get).into_iter().flatten());
        let occasion = |parts: &[&str]| {
            let mut h = xxhash_rust::xxh3::Xxh3::new();
            for p in parts {
                h.update(p.as_bytes());
                h.update(&[0]);
            }
            h.digest()
        };
        let known: Option<Kind> = raw.kind.parse().ok();
        let delegation = match known {
            Some(Kind::Ack | Kind::Unacknowledged) => raw
                .delegation
                .as_deref()
                .map(|d| occasion(&["delegation", d])),
            _ => None,
        };
        let branch = match known {
            Some(Kind::Check | Kind::CheckPassed) => {
                raw.branch.and_then(Lenient::get).map(|b| branch_key(&b))
            }
            _ => None,
        };
        let signal = match (known, raw.verdict.as_deref(), raw.status.as_deref()) {
            (Some(Kind::CheckPassed), _, _) => Signal::Pass,
            (Some(Kind::Check), _, _) => Signal::Violation {
                occasion: occasion(&["check", raw.change.as_deref().unwrap_or(&raw.id)]),
            },
            // The copy of a handoff's violation a path-scoped directive sees
            // (only it names a directive): one occasion per offence, which
            // its `change` names (a path and its content, or a criterion).
            (Some(Kind::HandoffViolation), _, _) => Signal::Violation {
                occasion: occasion(&["handoff", raw.change.as_deref().unwrap_or(&raw.id)]),
            },
            (Some(Kind::Unacknowledged), _, _) | (Some(Kind::Ack), _, Some("violated")) => {
                Signal::Violation {
                    occasion: occasion(&[
                        "delegation",
                        raw.delegation.as_deref().unwrap_or(&raw.id),
                    ]),
                }
            }
            (Some(Kind::Verdict), Some("violated"), _) => Signal::Violation {
                occasion: occasion(&["phase", raw.phase.as_deref().unwrap_or(&raw.id)]),
            },
            (Some(Kind::Verdict), Some("verified"), _) | (Some(Kind::Ack), _, Some("applied")) => {
                Signal::Remediation
            }
            (Some(Kind::Escalation), _, _) => Signal::Escalation,
            (Some(Kind::Deescalation), _, _) => Signal::Deescalation {
                // `<directive>#<n>`; a name that does not parse names no episode.
                episode: raw.episode.and_then(Lenient::get).map(|name| {
                    name.rsplit_once('#')
                        .and_then(|(_, n)| n.parse().ok())
                        .unwrap_or(u32::MAX)
                }),
            },
            _ => Signal::None,
        };
        let pattern = if known.is_some_and(Kind::is_pattern) {
            serde_json::from_str(text).ok().map(Box::new)
        } else {
            None
        };
        Some(EventHead {
            key: crate::event::id_key(&raw.id),
            ts,
            kind: raw.kind.into_owned(),
            known,
            directives,
            change: raw.change.map(Cow::into_owned),
            branch,
            signal,
            delegation,
            pattern,
        })
    }

    pub fn order(&self) -> (i64, u128) {
        (self.ts, self.key)
    }
}

/// The key a branch's name is folded under.
pub(super) fn branch_key(branch: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(branch.as_bytes())
}
