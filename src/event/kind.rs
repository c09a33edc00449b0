//! Every event kind this version writes, with its fields: the one list of
//! kinds. Writers build a [`Body`]; the folds match on [`Kind`];
//! `schema/event.schema.json` is generated from both. A body becomes the
//! event's map of fields when the event is made, so that fields and kinds
//! unknown to this version are kept, and fields are written sorted.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use strum::{EnumDiscriminants, EnumString, IntoStaticStr, VariantNames};

use crate::directive::{Enforcement, Priority};
use crate::pattern::text::Category;

/// An event's kind and the fields it writes; [`Kind`] names the kind alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, EnumDiscriminants)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[strum_discriminants(
    name(Kind),
    doc = "The kinds this version knows, each a variant of [`Body`].",
    derive(Hash, EnumString, IntoStaticStr, VariantNames),
    strum(serialize_all = "snake_case")
)]
pub enum Body {
    /// `git swarm add`: an entry that passed the gate.
    Added {
        /// The directive file written, relative to the repository.
        path: String,
    },
    /// `inject`: the directives a delegate was shown. The event's id is the delegation's id.
    Shown {
        tools: Vec<String>,
        /// The ids shown.
        directives: Vec<String>,
        /// Each directive shown, with the priority it was shown at.
        shown: Vec<ShownEntry>,
        /// The patterns injected with them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        patterns: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        phase: Option<String>,
        /// The tool call the lessons were shown before (or with): a hook's
        /// just-in-time lessons, which no ack answers. Absent for a delegation.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call: Option<String>,
    },
    /// An agent's tool call refused by a guard (an `enforce` directive
    /// whose tool-call predicate the call broke): a mistake stopped before
    /// it happened. A signal, not a violation.
    Prevented {
        /// The tool, as the harness names it.
        tool: String,
        /// The call's command line, cut to 500 bytes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        command: Option<String>,
        /// The files it would have touched.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        paths: Vec<String>,
        /// The predicates it broke.
        predicates: Vec<String>,
        /// The harness that refused it.
        harness: String,
    },
    /// `hive off`: this project switched a hive directive off for itself
    /// (the event's directive), with the reason. A signal the hive's owners
    /// see in `hive report`.
    HiveOff {
        /// The hive, as the project names it.
        hive: String,
        reason: String,
    },
    /// `hive on`: a hive directive switched off is taken again.
    HiveOn { hive: String },
    /// `hive report`: what one project's log says of a hive directive (the
    /// event's directive), written into the hive for its owners. Counts
    /// over the project's whole log when it reported; a later report of
    /// the same project stands for it.
    HiveReport {
        /// The reporting project (its folder's name).
        project: String,
        /// Delegations that showed it.
        shown: u64,
        /// Delegations that acknowledged it as applied.
        applied: u64,
        /// Violations, as escalation counts them.
        violated: u64,
        /// Tool calls its guard refused.
        prevented: u64,
        /// The project switched it off (`hive off`).
        switched_off: bool,
        /// Why, when switched off.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// `ack`: a delegate's answer about a directive it was shown.
    Ack {
        delegation: String,
        /// `applied`, `ignored`, `n_a` or `violated`.
        status: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        phase: Option<String>,
    },
    /// `ack`: an answer about a directive the delegation was not shown (not credited).
    SpoofedAck {
        delegation: String,
        /// The directive id claimed.
        claimed: String,
        status: String,
    },
    /// `ack`: a critical directive shown and not acknowledged.
    Unacknowledged {
        delegation: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        phase: Option<String>,
    },
    /// `review`: the verdict that stands for a directive in a phase.
    Verdict {
        phase: String,
        /// `verified`, `violated` or `n_a`.
        verdict: String,
        /// The reviewer's word, or `omitted`.
        reviewer: String,
        /// The machine check: `pass`, `fail`, `n/a`, `error` or `not run`.
        machine: String,
        /// Reviewer and machine disagreed (the machine's result stands).
        disagreement: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        evidence: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// `check --record`: a directive's predicates failed on a change.
    Check {
        /// Always `fail`.
        outcome: CheckOutcome,
        /// The fingerprint of the change.
        change: String,
        /// What was checked (`staged`, a range, …).
        selection: String,
        enforcement: Enforcement,
        /// The predicates that failed.
        predicates: Vec<String>,
        /// The branch checked, as a full ref name, when on one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        branch: Option<String>,
    },
    /// `check --record`: a pass on a branch where a check failure stands.
    CheckPassed {
        change: String,
        selection: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        branch: Option<String>,
    },
    /// A directive's escalation episode began.
    Escalation {
        /// The priority and enforcement its file declared (null: no file).
        from: Option<Level>,
        to: Level,
        reason: String,
        /// The ids of the violating events.
        violations: Vec<String>,
        /// `<directive>#<n>`: the n-th episode.
        episode: String,
    },
    /// `deescalate`: an episode ended by a person.
    Deescalation {
        justification: String,
        episode: String,
    },
    /// `phase complete --accept`: a blocker accepted.
    Override {
        phase: String,
        justification: String,
        /// The reason it blocked.
        blocked: String,
    },
    /// `phase complete`: the phase closed.
    Phase {
        phase: String,
        status: PhaseStatus,
        directives: Vec<String>,
    },
    /// `phase start`: the phase that tool calls are reflected in from now on.
    PhaseStarted { phase: String },
    /// `reflect meso`: a phase's insight candidates of one signature used.
    /// The event is about the lesson written, or the directive covering them.
    Reflected {
        phase: String,
        /// What the candidates share.
        signature: String,
        /// The ids of the candidates consumed.
        candidates: Vec<String>,
        tasks: Vec<String>,
        /// `added`, `quarantined`, `existing` (written by a run that stopped
        /// before consuming) or `covered`.
        outcome: String,
    },
    /// `reflect macro`, `cochange`: a proposal written for a person to decide on.
    /// The event is about the proposal's slug.
    Proposed {
        /// The proposal file, relative to the repository.
        path: String,
        /// The command that proposed it.
        source: String,
        /// What the motif is (a signature, a directive, a pair of files).
        key: String,
    },
    /// `proposal accept`: a proposal turned into a directive through the gate.
    ProposalAccepted {
        path: String,
        /// `added` or `quarantined`.
        outcome: String,
    },
    /// `proposal reject`: a proposal declined.
    ProposalRejected { path: String, reason: String },
    /// `git swarm add`: an entry that failed the gate.
    Quarantined {
        path: String,
        reason: String,
        detail: String,
    },
    /// `harden`: a quarantined entry promoted to `directives/`.
    Promoted {
        /// The directive file written, relative to the repository.
        path: String,
        /// The quarantine file it came from, now removed.
        from: String,
        /// `hand` (fixed in its file by a person), `curator` (enriched by
        /// the user's curator program), or `repair` (a promotion cut short
        /// after writing the directive, before recording it).
        by: String,
    },
    /// `harden`: the curator did not make a quarantined entry actionable;
    /// the entry stays in quarantine with the reason.
    HardenFailed {
        /// The quarantine file, relative to the repository.
        path: String,
        reason: String,
        /// Curator calls made for it in this run.
        calls: u32,
        /// Flagged for a person to fix by hand or delete.
        retire_candidate: bool,
    },
    /// `retire`.
    Retired { reason: String },
    /// `pattern extract`: a pattern seen in a run.
    PatternObserved {
        pattern: String,
        /// The id of the observation's own text, when it joined a near-duplicate `pattern`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        alias: Option<String>,
        role: String,
        text: String,
        category: Category,
        run: String,
        labels: Vec<String>,
        files: Vec<String>,
    },
    /// `pattern feedback`: a pattern the validator's verdict confirmed.
    PatternValidated {
        pattern: String,
        run: String,
        /// 1 or 2.
        level: u8,
    },
    /// `pattern feedback`: a pattern the validator called a false positive.
    PatternIgnored {
        pattern: String,
        run: String,
        /// The adversarial role's weight.
        weight: f64,
        /// It had been validated before.
        regression: bool,
        false_positive: String,
        /// How the false positive was matched to the finding.
        #[serde(rename = "match")]
        how: String,
    },
    /// `pattern feedback`: a pattern not used in a run.
    PatternAged { pattern: String, run: String },
    /// `pattern promote`.
    PatternPromoted {
        pattern: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        justification: Option<String>,
    },
    /// `pattern deprecate`.
    PatternDeprecated {
        pattern: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// `pattern inject --run`: the patterns injected.
    PatternShown { patterns: Vec<String>, run: String },
    /// `pattern outcome`: how a run's merged work ended.
    Outcome {
        run: String,
        result: RunResult,
        /// The patterns graded.
        patterns: Vec<String>,
    },
    /// Reserved: work handed from one agent to another.
    Handoff {},
    /// `handoff create`: a task's contract written to `.swarm/handoffs/<task>.toml`.
    HandoffCreated {
        task: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        epic: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        role: Option<String>,
        /// The file's git blob id (`git hash-object`, SHA-1) when created:
        /// check, complete and approve refuse a file that differs from it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        digest: Option<String>,
    },
    /// `handoff check`, `handoff complete`: one run of a handoff's check.
    HandoffChecked {
        task: String,
        /// No violation was found.
        ok: bool,
        /// The commits checked (`BASE..HEAD`).
        range: String,
        violations: u32,
    },
    /// `handoff check`: one thing a handoff's work broke. The event's
    /// directive is set on the copy a path-scoped directive sees.
    HandoffViolation {
        task: String,
        /// `scope_creep`, `readonly_touched`, `dependency_open` or `criterion_failed`.
        violation: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        criterion: Option<String>,
        /// Why a criterion failed; the dependency still open.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
        /// The offence: the path and its blob id at the end of the change
        /// (`PATH@BLOB`, `-` when gone; `FILE:LINE@BLOB` for a log edit),
        /// the criterion, or the dependency. A violation is recorded once
        /// per offence, and the directive loop counts one occasion per offence.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        change: Option<String>,
    },
    /// `handoff review`: a reviewer's verdict on a handoff's work.
    HandoffReview {
        task: String,
        /// `approve` or `needs_changes`.
        verdict: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// `handoff complete`: the work is done; its ownership is given back.
    HandoffCompleted {
        task: String,
        /// The change that was checked: the handoff's base to the commit
        /// completed, as `BASE..COMMIT`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        range: Option<String>,
    },
    /// `handoff release`: the task given up; its ownership is given back.
    HandoffReleased { task: String, reason: String },
}

/// Kinds this version knows, as written. Others are kept and folded as "other".
pub const KNOWN_KINDS: &[&str] = Kind::VARIANTS;

impl Kind {
    /// The kind as written.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Is this one of the pattern loop's kinds (read by the pattern fold)?
    pub fn is_pattern(self) -> bool {
        matches!(
            self,
            Kind::PatternObserved
                | Kind::PatternValidated
                | Kind::PatternIgnored
                | Kind::PatternAged
                | Kind::PatternPromoted
                | Kind::PatternDeprecated
                | Kind::PatternShown
                | Kind::Outcome
        )
    }
}

/// One directive of a `shown` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ShownEntry {
    pub id: String,
    pub priority: Priority,
}

/// A priority and enforcement, before or after an escalation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Level {
    pub priority: Priority,
    pub enforcement: Enforcement,
}

/// What a `check` event records: only failures are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckOutcome {
    Fail,
}

/// What a `phase` event records: phases are only ever completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PhaseStatus {
    Complete,
}

/// How a run's merged work ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, IntoStaticStr)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum RunResult {
    Pass,
    Fail,
}

impl RunResult {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Event;

    /// The fields of `body` as written after the envelope.
    fn fields(body: Body) -> String {
        let ts = "2026-11-22T10:00:00Z".parse().expect("valid test input");
        let e = Event::new(body, ts);
        let data = serde_json::to_string(&e.data).expect("JSON");
        format!("{} {data}", e.kind)
    }

    #[test]
    fn bodies_write_the_fields_as_before() {
        assert_eq!(
            fields(Body::Shown {
                tools: vec!["bash".into()],
                directives: vec!["ab".into()],
                shown: vec![ShownEntry {
                    id: "ab".into(),
                    priority: Priority::High,
                }],
                patterns: Vec::new(),
                phase: None,
                call: None,
            }),
            r#"shown {"directives":["ab"],"shown":[{"id":"ab","priority":"high"}],"tools":["bash"]}"#
        );
        assert_eq!(
            fields(Body::Escalation {
                from: None,
                to: Level {
                    priority: Priority::Critical,
                    enforcement: Enforcement::Enforce,
                },
                reason: "r".into(),
                violations: vec!["v".into()],
                episode: "ab#1".into(),
            }),
            r#"escalation {"episode":"ab#1","from":null,"reason":"r","to":{"enforcement":"enforce","priority":"critical"},"violations":["v"]}"#
        );
        assert_eq!(
            fields(Body::Check {
                outcome: CheckOutcome::Fail,
                change: "c".into(),
                selection: "staged".into(),
                enforcement: Enforcement::Warn,
                predicates: vec!["grep:x".into()],
                branch: None,
            }),
            r#"check {"change":"c","enforcement":"warn","outcome":"fail","predicates":["grep:x"],"selection":"staged"}"#
        );
        assert_eq!(
            fields(Body::PatternIgnored {
                pattern: "p".into(),
                run: "r".into(),
                weight: 0.5,
                regression: false,
                false_positive: "fp".into(),
                how: "phrase".into(),
            }),
            r#"pattern_ignored {"false_positive":"fp","match":"phrase","pattern":"p","regression":false,"run":"r","weight":0.5}"#
        );
        assert_eq!(
            fields(Body::Promoted {
                path: ".swarm/directives/ab.toml".into(),
                from: ".swarm/quarantine/ab.toml".into(),
                by: "hand".into(),
            }),
            r#"promoted {"by":"hand","from":".swarm/quarantine/ab.toml","path":".swarm/directives/ab.toml"}"#
        );
    }
}
