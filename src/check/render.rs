//! Machine formats of a check report: GitHub workflow annotations, SARIF
//! 2.1.0 and GitLab's Code Quality report.

use serde_json::{Value, json};

use super::{DirectiveResult, MAX_FINDINGS, Outcome, Report};

/// GitHub code scanning refuses a run with more results than this.
const MAX_SARIF_RESULTS: usize = 25_000;
use crate::directive::Enforcement;

fn level(r: &DirectiveResult) -> &'static str {
    match (r.outcome, r.enforcement) {
        (_, Enforcement::Enforce) => "error",
        (Outcome::Error, _) | (_, Enforcement::Warn) => "warning",
        (_, Enforcement::Advisory) => "note",
    }
}

/// Escapes a workflow command's message (`%`, CR, LF).
fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a workflow command's property value (also `:` and `,`).
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// One `::warning` line per warning of the report (skipped tool predicates,
/// unresolved conflicts…), then one `::error …::message` line per finding of
/// every failed or errored directive (or one per predicate when it has no
/// finding).
pub fn github_annotations(report: &Report) -> String {
    let mut out = String::new();
    for w in &report.warnings {
        let text = match &w.hint {
            Some(hint) => format!("{}\nhint: {hint}", w.message),
            None => w.message.clone(),
        };
        out.push_str(&format!(
            "::warning title=git-swarm::{}\n",
            escape_data(&text)
        ));
    }
    for r in report
        .results
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Fail | Outcome::Error))
    {
        let command = match level(r) {
            "note" => "notice",
            level => level,
        };
        let title = escape_property(&format!("{} ({})", r.id, r.outcome.as_str()));
        for p in r
            .predicates
            .iter()
            .filter(|p| matches!(p.outcome, Outcome::Fail | Outcome::Error))
        {
            let why = p.message.as_deref().unwrap_or("");
            let message = escape_data(&format!("{}\n{}: {}", r.lesson, p.predicate, why));
            if p.findings.is_empty() {
                out.push_str(&format!(
                    "::{command} file={},line=1,title={title}::{message}\n",
                    escape_property(r.path)
                ));
            }
            for f in &p.findings {
                let line = f.line.map(|l| format!(",line={l}")).unwrap_or_default();
                out.push_str(&format!(
                    "::{command} file={}{line},title={title}::{message}\n",
                    escape_property(&f.path)
                ));
            }
        }
    }
    out
}

/// A relative URI reference for a repository path: every byte outside
/// RFC 3986's unreserved set (and `/`) percent-encoded.
fn uri(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Stable across pushes: the rule and where the finding is, so code scanning
/// keeps one alert per finding rather than one per change.
fn finding_fingerprint(rule: &str, location: &Value) -> String {
    let key = format!("{rule}\0{location}");
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(key.as_bytes()))
}

/// The report as a SARIF 2.1.0 log that GitHub code scanning accepts: one
/// rule per directive checked, one result per finding.
pub fn sarif(report: &Report, tool_version: &str) -> Value {
    let rules: Vec<Value> = report
        .results
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "name": r.id,
                "shortDescription": { "text": r.lesson },
                "fullDescription": { "text": format!("{} (directive file {}, enforcement {})", r.lesson, r.path, r.enforcement) },
                "defaultConfiguration": { "level": match r.enforcement { Enforcement::Enforce => "error", Enforcement::Warn => "warning", Enforcement::Advisory => "note" } },
                "properties": { "priority": r.priority.as_str(), "tags": ["git-swarm"] },
            })
        })
        .collect();
    let mut results = Vec::new();
    let mut left_out = 0usize;
    let mut omitted = 0usize;
    for (rule_index, r) in report.results.iter().enumerate() {
        if !matches!(r.outcome, Outcome::Fail | Outcome::Error) {
            continue;
        }
        for p in r
            .predicates
            .iter()
            .filter(|p| matches!(p.outcome, Outcome::Fail | Outcome::Error))
        {
            omitted += p.omitted;
            let text = format!(
                "{} — {}: {}",
                r.lesson,
                p.predicate,
                p.message.as_deref().unwrap_or(p.outcome.as_str())
            );
            let location = |path: &str, line: u32| json!({ "physicalLocation": { "artifactLocation": { "uri": uri(path), "uriBaseId": "%SRCROOT%" }, "region": { "startLine": line } } });
            let locations: Vec<Value> = if p.findings.is_empty() {
                vec![location(r.path, 1)]
            } else {
                p.findings
                    .iter()
                    .map(|f| location(&f.path, f.line.unwrap_or(1)))
                    .collect()
            };
            for loc in locations {
                if results.len() == MAX_SARIF_RESULTS {
                    left_out += 1;
                    continue;
                }
                results.push(json!({
                    "ruleId": r.id,
                    "ruleIndex": rule_index,
                    "level": level(r),
                    "message": { "text": text },
                    "locations": [loc],
                    "partialFingerprints": { "gitSwarmFinding/v1": finding_fingerprint(r.id, &loc) },
                }));
            }
        }
    }
    // The report's warnings are notifications of the run, not results; so
    // are the findings that are not listed.
    let mut notifications: Vec<Value> = report
        .warnings
        .iter()
        .map(|w| json!({ "level": "warning", "message": { "text": w.message } }))
        .collect();
    if omitted > 0 {
        notifications.push(json!({ "level": "warning", "message": { "text": format!(
            "{omitted} finding(s) not listed: a predicate lists at most {MAX_FINDINGS}; the result messages count them all"
        ) } }));
    }
    if left_out > 0 {
        notifications.push(json!({ "level": "warning", "message": { "text": format!(
            "{left_out} result(s) left out: code scanning takes at most {MAX_SARIF_RESULTS} a run"
        ) } }));
    }
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": { "name": "git-swarm", "version": tool_version, "rules": rules } },
            "automationDetails": { "id": format!("git-swarm/{}", report.change) },
            "invocations": [{ "executionSuccessful": true, "toolExecutionNotifications": notifications }],
            "results": results,
        }],
    })
}

/// The report as a GitLab Code Quality report (the subset of the Code
/// Climate issue format GitLab reads from `artifacts:reports:codequality`):
/// one issue per finding of each failed or errored directive, as for SARIF.
/// GitLab has no place for the report's warnings; the command prints them
/// on stderr.
pub fn code_quality(report: &Report) -> Value {
    let mut issues = Vec::new();
    for r in report
        .results
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Fail | Outcome::Error))
    {
        // `blocker` for what blocks a merge; the scale is info, minor,
        // major, critical, blocker.
        let severity = match level(r) {
            "error" => "blocker",
            "warning" => "major",
            _ => "info",
        };
        for p in r
            .predicates
            .iter()
            .filter(|p| matches!(p.outcome, Outcome::Fail | Outcome::Error))
        {
            let description = format!(
                "{} — {}: {}",
                r.lesson,
                p.predicate,
                p.message.as_deref().unwrap_or(p.outcome.as_str())
            );
            let places: Vec<(&str, u32)> = if p.findings.is_empty() {
                vec![(r.path, 1)]
            } else {
                p.findings
                    .iter()
                    .map(|f| (f.path.as_str(), f.line.unwrap_or(1)))
                    .collect()
            };
            for (path, line) in places {
                let location = json!({ "path": path, "lines": { "begin": line } });
                // GitLab shows one issue per fingerprint, so the predicate is
                // part of it: two predicates failing on one line are two issues.
                let rule = format!("{}\0{}", r.id, p.predicate);
                issues.push(json!({
                    "description": description,
                    "check_name": format!("git-swarm/{}", r.id),
                    "fingerprint": finding_fingerprint(&rule, &location),
                    "severity": severity,
                    "location": location,
                }));
            }
        }
    }
    Value::Array(issues)
}
