//! What the fold reads of an event line, parsed without the rest.

use crate::event::Kind;
use crate::pattern::fold::PatternEvent;

/// The parts of an event the fold reads, parsed without allocating the rest.
#[derive(Debug, Clone, PartialEq)]
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

#[derive(serde::Deserialize)]
struct RawHead<'a> {
    #[serde(borrow)]
    id: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    ts: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    kind: std::borrow::Cow<'a, str>,
    #[serde(default, borrow)]
    directive: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    directives: Option<Directives<'a>>,
    /// For `check` events: the fingerprint of the change checked.
    #[serde(default, borrow)]
    change: Option<std::borrow::Cow<'a, str>>,
    /// For `check` and `check_passed` events: the branch checked.
    #[serde(default, borrow)]
    branch: Option<Text<'a>>,
    #[serde(default, borrow)]
    delegation: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    phase: Option<std::borrow::Cow<'a, str>>,
    /// For `verdict` events: the verdict that stands (verified, violated, n_a).
    #[serde(default, borrow)]
    verdict: Option<std::borrow::Cow<'a, str>>,
    /// For `ack` events: applied, ignored, n_a.
    #[serde(default, borrow)]
    status: Option<std::borrow::Cow<'a, str>>,
    /// For `deescalation` events: the episode ended.
    #[serde(default, borrow)]
    episode: Option<Text<'a>>,
    // Checked, not used: the fold must accept exactly the lines the readers accept.
    #[serde(default, borrow)]
    #[allow(dead_code)]
    actor: Option<RawActor<'a>>,
}

#[derive(serde::Deserialize)]
#[allow(dead_code)]
struct RawActor<'a> {
    #[serde(default, borrow)]
    role: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    agent: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    user: Option<std::borrow::Cow<'a, str>>,
}

/// A kind's own field that the fold reads when it is a string; anything
/// else is kept and ignored.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum Text<'a> {
    Str(#[serde(borrow)] std::borrow::Cow<'a, str>),
    Other(serde::de::IgnoredAny),
}

/// `directives` is a kind's own field: a list of ids where it means
/// something to the fold, anything else is kept and ignored.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum Directives<'a> {
    Ids(#[serde(borrow)] Vec<std::borrow::Cow<'a, str>>),
    Other(serde::de::IgnoredAny),
}

impl EventHead {
    /// Parses one line; `None` if it is not a well-formed event (readers
    /// that report problems use [`crate::event::parse_event_line`]).
    pub fn parse(line: &[u8]) -> Option<EventHead> {
        // serde_json skips the fields it ignores without checking their
        // UTF-8, so a line the readers reject would otherwise be folded.
        let text = std::str::from_utf8(line).ok()?;
        let raw: RawHead<'_> = serde_json::from_str(text).ok()?;
        if raw.id.is_empty() || raw.id.len() > 128 || !crate::event::is_valid_kind(&raw.kind) {
            return None;
        }
        let ts = crate::event::parse_ts_millis(&raw.ts)?;
        let mut directives: Vec<String> =
            raw.directive.into_iter().map(|d| d.into_owned()).collect();
        if let Some(Directives::Ids(ids)) = raw.directives {
            directives.extend(ids.into_iter().map(|d| d.into_owned()));
        }
        let occasion = |parts: &[Option<&str>]| {
            let mut h = xxhash_rust::xxh3::Xxh3::new();
            for p in parts {
                h.update(p.unwrap_or("").as_bytes());
                h.update(&[0]);
            }
            h.digest()
        };
        let known: Option<Kind> = raw.kind.parse().ok();
        let delegation = match known {
            Some(Kind::Ack | Kind::Unacknowledged) => raw
                .delegation
                .as_deref()
                .map(|d| occasion(&[Some("delegation"), Some(d)])),
            _ => None,
        };
        let string = |t: &Option<Text<'_>>| match t {
            Some(Text::Str(s)) => Some(s.to_string()),
            _ => None,
        };
        let branch = match known {
            Some(Kind::Check | Kind::CheckPassed) => string(&raw.branch).map(|b| branch_key(&b)),
            _ => None,
        };
        let signal = match (known, raw.verdict.as_deref(), raw.status.as_deref()) {
            (Some(Kind::CheckPassed), _, _) => Signal::Pass,
            (Some(Kind::Check), _, _) => Signal::Violation {
                occasion: occasion(&[Some("check"), raw.change.as_deref().or(Some(&raw.id))]),
            },
            (Some(Kind::Unacknowledged), _, _) | (Some(Kind::Ack), _, Some("violated")) => {
                Signal::Violation {
                    occasion: occasion(&[
                        Some("delegation"),
                        raw.delegation.as_deref().or(Some(&raw.id)),
                    ]),
                }
            }
            (Some(Kind::Verdict), Some("violated"), _) => Signal::Violation {
                occasion: occasion(&[Some("phase"), raw.phase.as_deref().or(Some(&raw.id))]),
            },
            (Some(Kind::Verdict), Some("verified"), _) | (Some(Kind::Ack), _, Some("applied")) => {
                Signal::Remediation
            }
            (Some(Kind::Escalation), _, _) => Signal::Escalation,
            (Some(Kind::Deescalation), _, _) => Signal::Deescalation {
                // `<directive>#<n>`; a name that does not parse names no episode.
                episode: match &raw.episode {
                    Some(Text::Str(name)) => Some(
                        name.rsplit_once('#')
                            .and_then(|(_, n)| n.parse().ok())
                            .unwrap_or(u32::MAX),
                    ),
                    _ => None,
                },
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
            change: raw.change.map(|c| c.into_owned()),
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
