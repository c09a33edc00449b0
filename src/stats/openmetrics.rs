//! [`Stats`] in the OpenMetrics 1.0 text exposition format, for a
//! Prometheus textfile collector or any scraper that reads a file.
//!
//! Written here rather than with a metrics crate: the stats are a one-shot
//! snapshot, not live instruments to register, and label values (directive
//! ids, roles) come from a pull request, so their escaping is this module's
//! to get right (`\\`, `\"`, `\n`, as the specification says; the Rust
//! `prometheus-client` did not escape label values at the time of writing).
//! Families come in a fixed order, samples sorted by label; every value is
//! finite (a ratio with nothing to divide is left out); the text ends with
//! `# EOF`.

use std::fmt::{Display, Write};

use super::Stats;

/// The OpenMetrics text of `stats`.
pub fn render(stats: &Stats) -> String {
    let mut x = Exposition::default();
    x.family(
        "git_swarm_events",
        "counter",
        "Events in the window, by kind.",
        None,
    );
    for (kind, n) in &stats.by_kind {
        x.sample("git_swarm_events_total", &[("kind", kind)], n);
    }

    type Field = fn(&super::DirectiveStats) -> u64;
    let per_directive: [(&str, &str, Field); 5] = [
        (
            "git_swarm_directive_violations",
            "Violations of a directive the fold counts (failed checks, violated acks and verdicts, unacknowledged criticals, handoff violations of its paths).",
            |d| d.violations,
        ),
        (
            "git_swarm_directive_remediations",
            "Applied acks and verified verdicts of a directive.",
            |d| d.remediations,
        ),
        (
            "git_swarm_directive_escalations",
            "Escalation episodes of a directive that began in the window.",
            |d| d.escalations,
        ),
        (
            "git_swarm_directive_deescalations",
            "Escalation episodes of a directive ended in the window.",
            |d| d.deescalations,
        ),
        (
            "git_swarm_directive_overrides",
            "Phase-gate blockers about a directive accepted by an override.",
            |d| d.overrides,
        ),
    ];
    for (name, help, field) in per_directive {
        x.family(name, "counter", help, None);
        let total = format!("{name}_total");
        for d in &stats.directives {
            x.sample(&total, &[("directive", &d.id)], field(d));
        }
    }
    x.family(
        "git_swarm_directive_escalated",
        "gauge",
        "1 while a directive is escalated (critical and enforce), else 0.",
        None,
    );
    for d in &stats.directives {
        x.sample(
            "git_swarm_directive_escalated",
            &[("directive", &d.id)],
            u8::from(d.escalated),
        );
    }

    x.family(
        "git_swarm_delegations",
        "counter",
        "Delegations (shown events) made in the window, by role.",
        None,
    );
    for r in &stats.roles {
        x.sample(
            "git_swarm_delegations_total",
            &[("role", &r.role)],
            r.delegations,
        );
    }
    x.family(
        "git_swarm_acks",
        "counter",
        "Directives shown in the window's delegations, by role and what they came to.",
        None,
    );
    for r in &stats.roles {
        for (outcome, n) in [
            ("applied", r.applied),
            ("ignored", r.ignored),
            ("n_a", r.n_a),
            ("violated", r.violated),
            ("unacknowledged", r.unacknowledged),
            ("unanswered", r.unanswered),
        ] {
            x.sample(
                "git_swarm_acks_total",
                &[("role", &r.role), ("outcome", outcome)],
                n,
            );
        }
    }
    x.family(
        "git_swarm_spoofed_acks",
        "counter",
        "Acks for directives a delegation was not shown (not credited), by role.",
        None,
    );
    for r in &stats.roles {
        x.sample(
            "git_swarm_spoofed_acks_total",
            &[("role", &r.role)],
            r.spoofed_acks,
        );
    }
    x.family(
        "git_swarm_ack_compliance_ratio",
        "gauge",
        "Answered directives over directives shown, by role; scope critical: over those shown at critical priority.",
        Some("ratio"),
    );
    for r in &stats.roles {
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
    x.family(
        "git_swarm_checks",
        "counter",
        "Recorded check outcomes: fail (check events), pass (a failure on a branch remediated).",
        None,
    );
    x.sample(
        "git_swarm_checks_total",
        &[("outcome", "fail")],
        stats.checks.failed,
    );
    x.sample(
        "git_swarm_checks_total",
        &[("outcome", "pass")],
        stats.checks.passed,
    );
    x.family(
        "git_swarm_handoff_violations",
        "counter",
        "Handoff violations recorded in the window, by violation.",
        None,
    );
    for (violation, n) in &stats.handoff_violations {
        x.sample(
            "git_swarm_handoff_violations_total",
            &[("violation", violation)],
            n,
        );
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

#[derive(Default)]
struct Exposition {
    out: String,
}

impl Exposition {
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
