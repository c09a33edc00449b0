//! [`Stats`] in the OpenMetrics 1.0 text exposition format, for a
//! scraper that reads OpenMetrics (Prometheus over HTTP; not the node
//! exporter's textfile collector, which reads the classic format).
//!
//! Written here rather than with a metrics crate: the stats are a one-shot
//! snapshot, not live instruments to register, and label values (directive
//! ids, roles) come from a pull request, so their escaping is this module's
//! to get right (`\\`, `\"`, `\n`, as the specification says; the Rust
//! `prometheus-client` did not escape label values at the time of writing).
//! Families come in a fixed order, samples sorted by label; every value is
//! finite (a ratio with nothing to divide is left out); the text ends with
//! `# EOF`.
//!
//! A counter is only what grows as events are appended (events by kind,
//! delegations, spoofed acks, checks, handoff violations, overrides), and
//! only over the whole log: what a merged ack can lower (violations,
//! outcomes) and every count of a `--since` window is a gauge, named
//! without `_total`. Label values come from the log, so their number is
//! bounded: per-directive series are for the directives of the working
//! tree only (the others are counted by `git_swarm_unknown_directives`),
//! and kinds beyond the known ones, roles and handoff violations keep at
//! most [`MAX_LABEL_VALUES`] values each (the largest), the rest summed
//! under [`OTHER`].

/// How many values of a label from the log (an unknown kind, a role, a
/// handoff violation) get series of their own.
pub const MAX_LABEL_VALUES: usize = 20;

/// The label value the rest are summed under.
pub const OTHER: &str = "_other";

use std::fmt::{Display, Write};

use std::collections::BTreeMap;

use super::{RoleStats, Stats};
use crate::event::KNOWN_KINDS;

/// The OpenMetrics text of `stats`.
pub fn render(stats: &Stats) -> String {
    let mut x = Exposition {
        out: String::new(),
        window: stats.since.is_some(),
    };
    let events = x.count_family(
        "git_swarm_events",
        true,
        "Events in the window, by kind (kinds beyond the known ones capped, the rest as _other).",
    );
    let kinds = capped(&stats.by_kind, |k| KNOWN_KINDS.contains(&k));
    for (kind, n) in &kinds {
        x.sample(&events, &[("kind", kind)], n);
    }

    type Field = fn(&super::DirectiveStats) -> u64;
    let per_directive: [(&str, bool, &str, Field); 5] = [
        (
            "git_swarm_directive_violations",
            false,
            "Violations of a directive the fold counts (failed checks, violated acks and verdicts, unacknowledged criticals, handoff violations of its paths).",
            |d| d.violations,
        ),
        (
            "git_swarm_directive_remediations",
            false,
            "Applied acks and verified verdicts of a directive.",
            |d| d.remediations,
        ),
        (
            "git_swarm_directive_escalations",
            false,
            "Escalation episodes of a directive that began in the window.",
            |d| d.escalations,
        ),
        (
            "git_swarm_directive_deescalations",
            false,
            "Escalation episodes of a directive ended in the window.",
            |d| d.deescalations,
        ),
        (
            "git_swarm_directive_overrides",
            true,
            "Phase-gate blockers about a directive accepted by an override.",
            |d| d.overrides,
        ),
    ];
    let in_tree = || stats.directives.iter().filter(|d| d.in_tree);
    for (name, grows, help, field) in per_directive {
        let sample = x.count_family(name, grows, help);
        for d in in_tree() {
            x.sample(&sample, &[("directive", &d.id)], field(d));
        }
    }
    x.family(
        "git_swarm_directive_escalated",
        "gauge",
        "1 while a directive is escalated (critical and enforce), else 0.",
        None,
    );
    for d in in_tree() {
        x.sample(
            "git_swarm_directive_escalated",
            &[("directive", &d.id)],
            u8::from(d.escalated),
        );
    }
    x.family(
        "git_swarm_unknown_directives",
        "gauge",
        "Directives the window's events name that no file of the working tree declares (no series of their own).",
        None,
    );
    x.sample(
        "git_swarm_unknown_directives",
        &[],
        stats.directives.iter().filter(|d| !d.in_tree).count(),
    );
    let roles = capped_roles(&stats.roles);

    let delegations = x.count_family(
        "git_swarm_delegations",
        true,
        "Delegations (shown events) made in the window, by role.",
    );
    for r in &roles {
        x.sample(&delegations, &[("role", &r.role)], r.delegations);
    }
    // A merged ack turns an unanswered pair into an answered one: a gauge.
    let acks = x.count_family(
        "git_swarm_acks",
        false,
        "Directives shown in the window's delegations, by role and what they came to.",
    );
    for r in &roles {
        for (outcome, n) in [
            ("applied", r.applied),
            ("ignored", r.ignored),
            ("n_a", r.n_a),
            ("violated", r.violated),
            ("unacknowledged", r.unacknowledged),
            ("unanswered", r.unanswered),
        ] {
            x.sample(&acks, &[("role", &r.role), ("outcome", outcome)], n);
        }
    }
    let spoofed = x.count_family(
        "git_swarm_spoofed_acks",
        true,
        "Acks for directives a delegation was not shown (not credited), by role.",
    );
    for r in &roles {
        x.sample(&spoofed, &[("role", &r.role)], r.spoofed_acks);
    }
    x.family(
        "git_swarm_ack_compliance_ratio",
        "gauge",
        "Answered directives over directives shown, by role; scope critical: over those shown at critical priority.",
        Some("ratio"),
    );
    for r in &roles {
        for (scope, v) in [
            ("all", r.ack_compliance),
            ("critical", r.critical_ack_compliance),
        ] {
            if let Some(v) = v.filter(|v| v.is_finite()) {
                x.sample(
                    "git_swarm_ack_compliance_ratio",
                    &[("role", &r.role), ("scope", scope)],
                    v,
                );
            }
        }
    }

    x.family(
        "git_swarm_patterns",
        "gauge",
        "Observed patterns by lifecycle state, now.",
        None,
    );
    for (state, n) in &stats.patterns {
        x.sample("git_swarm_patterns", &[("state", state)], n);
    }
    let checks = x.count_family(
        "git_swarm_checks",
        true,
        "Recorded check outcomes: fail (check events), pass (a failure on a branch remediated).",
    );
    x.sample(&checks, &[("outcome", "fail")], stats.checks.failed);
    x.sample(&checks, &[("outcome", "pass")], stats.checks.passed);
    let handoff = x.count_family(
        "git_swarm_handoff_violations",
        true,
        "Handoff violations recorded in the window, by violation (capped, the rest as _other).",
    );
    for (violation, n) in &capped(&stats.handoff_violations, |_| false) {
        x.sample(&handoff, &[("violation", violation)], n);
    }

    for (name, help, value) in [
        (
            "git_swarm_violations_per_day",
            "Violations of all directives per day of the window.",
            stats.rates.violations_per_day,
        ),
        (
            "git_swarm_events_per_day",
            "Events per day of the window.",
            stats.rates.events_per_day,
        ),
    ] {
        x.family(name, "gauge", help, None);
        if let Some(v) = value.filter(|v| v.is_finite()) {
            x.sample(name, &[], v);
        }
    }
    x.family(
        "git_swarm_window_seconds",
        "gauge",
        "Length of the window the counts are over: from --since (else the first event) to now.",
        Some("seconds"),
    );
    let seconds = stats.window_days * 86_400.0;
    x.sample(
        "git_swarm_window_seconds",
        &[],
        if seconds.is_finite() { seconds } else { 0.0 },
    );
    x.out.push_str("# EOF\n");
    x.out
}

/// `counts` with every value `keep` accepts, and at most
/// [`MAX_LABEL_VALUES`] others (the largest, then by name), the rest summed
/// under [`OTHER`].
fn capped(counts: &BTreeMap<String, u64>, keep: impl Fn(&str) -> bool) -> BTreeMap<String, u64> {
    let (mut out, mut rest): (BTreeMap<String, u64>, Vec<(&String, &u64)>) =
        (BTreeMap::new(), Vec::new());
    for (k, n) in counts {
        if keep(k) {
            out.insert(k.clone(), *n);
        } else {
            rest.push((k, n));
        }
    }
    rest.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    for (i, (k, n)) in rest.into_iter().enumerate() {
        let label = if i < MAX_LABEL_VALUES {
            k.as_str()
        } else {
            OTHER
        };
        *out.entry(label.to_owned()).or_default() += n;
    }
    out
}

/// The roles with the most delegations, at most [`MAX_LABEL_VALUES`], the
/// rest summed into one [`OTHER`] role (its ratios over the sums).
fn capped_roles(roles: &[RoleStats]) -> Vec<RoleStats> {
    if roles.len() <= MAX_LABEL_VALUES {
        return roles.to_vec();
    }
    let mut sorted: Vec<&RoleStats> = roles.iter().collect();
    sorted.sort_by(|a, b| b.delegations.cmp(&a.delegations).then(a.role.cmp(&b.role)));
    let mut out: Vec<RoleStats> = sorted[..MAX_LABEL_VALUES]
        .iter()
        .map(|r| (*r).clone())
        .collect();
    let mut other = RoleStats {
        role: OTHER.to_owned(),
        ..RoleStats::default()
    };
    for r in &sorted[MAX_LABEL_VALUES..] {
        other.delegations += r.delegations;
        other.shown += r.shown;
        other.critical_shown += r.critical_shown;
        other.applied += r.applied;
        other.ignored += r.ignored;
        other.n_a += r.n_a;
        other.violated += r.violated;
        other.unacknowledged += r.unacknowledged;
        other.unanswered += r.unanswered;
        other.critical_answered += r.critical_answered;
        other.spoofed_acks += r.spoofed_acks;
    }
    let answered = other.applied + other.ignored + other.n_a + other.violated;
    other.ack_compliance = super::ratio(answered, other.shown);
    other.critical_ack_compliance = super::ratio(other.critical_answered, other.critical_shown);
    out.push(other);
    out.sort_by(|a, b| a.role.cmp(&b.role));
    out
}

struct Exposition {
    out: String,
    /// Counts are of a `--since` window: every one is a gauge.
    window: bool,
}

impl Exposition {
    /// A family of counts: a counter (samples `<name>_total`) when it
    /// `grows` as events are appended and is over the whole log, else a
    /// gauge (samples `<name>`). Returns the samples' name.
    fn count_family(&mut self, name: &str, grows: bool, help: &str) -> String {
        if grows && !self.window {
            self.family(name, "counter", help, None);
            format!("{name}_total")
        } else {
            self.family(name, "gauge", help, None);
            name.to_owned()
        }
    }

    fn family(&mut self, name: &str, kind: &str, help: &str, unit: Option<&str>) {
        // Writing to a String cannot fail.
        let _ = writeln!(self.out, "# TYPE {name} {kind}");
        if let Some(unit) = unit {
            let _ = writeln!(self.out, "# UNIT {name} {unit}");
        }
        let _ = writeln!(self.out, "# HELP {name} {}", escape(help));
    }

    fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: impl Display) {
        self.out.push_str(name);
        if !labels.is_empty() {
            self.out.push('{');
            for (i, (k, v)) in labels.iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                let _ = write!(self.out, "{k}=\"{}\"", escape(v));
            }
            self.out.push('}');
        }
        let _ = writeln!(self.out, " {value}");
    }
}

/// A label value or help text as OpenMetrics writes it: a backslash, a
/// double quote and a line feed escaped, everything else as it is.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_escape_exactly_three_characters() {
        assert_eq!(escape("a\\b\"c\nd\te"), "a\\\\b\\\"c\\nd\te");
        assert_eq!(escape("plain-id.1"), "plain-id.1");
    }
}
