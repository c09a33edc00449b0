//! Each directive's loop state: violations by occasion, remediations and
//! escalation episodes.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::head::branch_key;
use super::{ESCALATION_WINDOW_MS, EventHead, Signal};
use crate::event::Kind;

/// The loop states, decoded only when first read: most commands never look
/// at them, and they are the costliest part of the fold to decode. Their
/// postcard bytes carry an xxh3 checksum, checked when the index is read.
#[derive(Debug, Default, Clone)]
pub(super) struct Loops {
    raw: Option<Vec<u8>>,
    map: std::sync::OnceLock<BTreeMap<String, LoopState>>,
}

impl Loops {
    pub(super) fn get(&self) -> &BTreeMap<String, LoopState> {
        self.map.get_or_init(|| {
            // Checked on read: the bytes are ones this program encoded.
            self.raw
                .as_deref()
                .and_then(|b| postcard::from_bytes(b).ok())
                .unwrap_or_default()
        })
    }

    /// Have the states been decoded yet?
    #[cfg(test)]
    pub(super) fn is_decoded(&self) -> bool {
        self.map.get().is_some()
    }

    pub(super) fn get_mut(&mut self) -> &mut BTreeMap<String, LoopState> {
        self.get();
        self.raw = None;
        self.map.get_mut().expect("initialised just above")
    }
}

impl PartialEq for Loops {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl Eq for Loops {}

impl Serialize for Loops {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let encoded;
        let bytes = match (&self.raw, self.map.get()) {
            (Some(raw), None) => raw.as_slice(),
            _ => {
                encoded = postcard::to_stdvec(self.get()).map_err(serde::ser::Error::custom)?;
                encoded.as_slice()
            }
        };
        let sum = xxhash_rust::xxh3::xxh3_64(bytes);
        (sum, serde_bytes::Bytes::new(bytes)).serialize(s)
    }
}

impl<'de> Deserialize<'de> for Loops {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (sum, bytes): (u64, serde_bytes::ByteBuf) = Deserialize::deserialize(d)?;
        if xxhash_rust::xxh3::xxh3_64(&bytes) != sum {
            return Err(serde::de::Error::custom("loop states damaged"));
        }
        Ok(Loops {
            raw: Some(bytes.into_vec()),
            map: std::sync::OnceLock::new(),
        })
    }
}

/// What the directive loop has seen of one directive.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopState {
    /// Violations that can still start an episode: since the last episode
    /// ended, within the window of the newest, not fixed on their branch
    /// since: (ts, occasion, event key, branch key of a check violation).
    recent: Vec<(i64, u64, u128, Option<u64>)>,
    /// Every episode, oldest first; the last may be open.
    pub episodes: Vec<Episode>,
    /// The latest violation (ts, event key).
    pub last_violation: Option<(i64, u128)>,
    /// The latest remediation (applied ack, verified verdict): (ts, event key).
    pub last_remediation: Option<(i64, u128)>,
    pub violations: u64,
    pub remediations: u64,
    /// The latest violation with no later remediation that applies to
    /// it, of those not recorded by a check on a branch: (ts, event key).
    open_other: Option<(i64, u128)>,
    /// Per branch (key), the latest check violation there with no later
    /// remediation: a passing check on that branch, an applied ack or a
    /// verified verdict.
    open_checks: Vec<(u64, i64, u128)>,
    /// Delegations that acknowledged the directive, within the window of
    /// the newest event: (ts, delegation key). An `unacknowledged` event
    /// for one of them, made later by a process that had not seen the ack
    /// (on another branch, merged since), is void: one history would not
    /// have recorded it.
    acked: Vec<(i64, u64)>,
}

/// An escalation episode: from the violation that made two occasions within
/// the window until a `deescalation`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Episode {
    /// When it started: the second occasion's violation, in ms.
    pub start: i64,
    /// The event keys of the two violations that started it.
    pub violations: [u128; 2],
    /// When a `deescalation` ended it, in ms.
    pub ended: Option<i64>,
    /// Whether an `escalation` event records it.
    pub recorded: bool,
}

impl LoopState {
    /// A name for the open episode that every process computes alike,
    /// whichever violations each has seen: the directive and the episode's
    /// number (`no-unwrap#2`).
    pub fn open_key(&self, directive: &str) -> Option<String> {
        self.open()
            .map(|_| format!("{directive}#{}", self.episodes.len()))
    }

    /// The open episode, if the directive is escalated now.
    pub fn open(&self) -> Option<&Episode> {
        self.episodes.last().filter(|e| e.ended.is_none())
    }

    /// A violation with no later remediation: an applied ack or verified
    /// verdict after it, or for a check violation on a branch, a check of
    /// the directive that passed on that branch after it.
    pub fn unremediated(&self) -> bool {
        self.open_other.is_some() || !self.open_checks.is_empty()
    }

    /// Is there a check violation on `branch` (a full ref name) that no
    /// passing check there, applied ack or verified verdict has remediated?
    pub fn open_on_branch(&self, branch: &str) -> bool {
        self.open_on_branch_at(branch).is_some()
    }

    /// The (ts, event key) of the latest such violation on `branch`.
    pub fn open_on_branch_at(&self, branch: &str) -> Option<(i64, u128)> {
        let key = branch_key(branch);
        self.open_checks
            .iter()
            .find(|(b, _, _)| *b == key)
            .map(|(_, ts, k)| (*ts, *k))
    }

    /// Applies `e`; false if it is void for this directive (see `acked`).
    pub(super) fn apply(&mut self, e: &EventHead) -> bool {
        if let Some(delegation) = e.delegation {
            self.acked
                .retain(|(ts, _)| e.ts - *ts <= ESCALATION_WINDOW_MS);
            let acked = self.acked.iter().any(|(_, d)| *d == delegation);
            if e.known == Some(Kind::Ack) {
                if !acked {
                    self.acked.push((e.ts, delegation));
                }
            } else if acked && matches!(e.signal, Signal::Violation { .. }) {
                return false;
            }
        }
        match e.signal {
            Signal::Violation { occasion } => {
                self.violations += 1;
                self.last_violation = Some(e.order());
                let branch = e.branch.filter(|_| e.known == Some(Kind::Check));
                match branch {
                    Some(b) => {
                        self.open_checks.retain(|(x, _, _)| *x != b);
                        self.open_checks.push((b, e.ts, e.key));
                    }
                    None => self.open_other = Some(e.order()),
                }
                if self.open().is_some() {
                    return true;
                }
                self.recent
                    .retain(|(ts, _, _, _)| e.ts - *ts <= ESCALATION_WINDOW_MS);
                // The earliest violation in the window on another occasion.
                if let Some(first) = self.recent.iter().find(|(_, o, _, _)| *o != occasion) {
                    self.episodes.push(Episode {
                        start: e.ts,
                        violations: [first.2, e.key],
                        ended: None,
                        recorded: false,
                    });
                    self.recent.clear();
                } else {
                    self.recent.push((e.ts, occasion, e.key, branch));
                }
            }
            Signal::Remediation => {
                self.remediated(e);
                // Applied in (ts, id) order: every violation folded so far is earlier.
                self.open_other = None;
                self.open_checks.clear();
            }
            Signal::Pass => {
                let Some(b) = e.branch else { return true };
                // A pass remediates only where it clears something: the
                // checks that record one are made for that reason alone.
                if !self.open_checks.iter().any(|(x, _, _)| *x == b) {
                    return true;
                }
                self.remediated(e);
                self.open_checks.retain(|(x, _, _)| *x != b);
                // Fixed on its branch before another violation came: it no
                // longer counts toward an escalation (a blocked commit that
                // was corrected never reached the history).
                self.recent.retain(|(_, _, _, x)| *x != Some(b));
            }
            Signal::Escalation => {
                if let Some(ep) = self.episodes.last_mut()
                    && ep.ended.is_none()
                {
                    ep.recorded = true;
                }
            }
            Signal::Deescalation { episode } => {
                let open = self.open().map(|_| self.episodes.len());
                if episode.is_some_and(|n| usize::try_from(n).ok() != open) {
                    // Not the open episode's: one ended already (by a
                    // branch that had not seen this one), or none open.
                    return true;
                }
                if let Some(ep) = self.episodes.last_mut()
                    && ep.ended.is_none()
                {
                    ep.ended = Some(e.ts);
                }
                self.recent.clear();
            }
            Signal::None => {}
        }
        true
    }

    fn remediated(&mut self, e: &EventHead) {
        self.remediations += 1;
        self.last_remediation = Some(
            self.last_remediation
                .map_or(e.order(), |r| r.max(e.order())),
        );
    }
}
