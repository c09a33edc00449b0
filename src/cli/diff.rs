//! `git swarm diff`: the semantic change of `.swarm/` between two
//! revisions, for a terminal, a pull request comment (Markdown) or a script.

use std::fmt::Write as _;

use anstyle::{AnsiColor, Style};
use git_swarm::diff::{
    Cause, DirectiveChangeKind, FieldChange, FieldDiff, Report, Revisions, WordOp, Words,
};
use git_swarm::event::Level;

use super::{Outcome, Ui, clean};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// `A..B` (A against B), `A...B` (their merge base against B), or `A`
    /// (A against the working tree); none: the merge base of HEAD and its
    /// upstream against the working tree.
    #[arg(value_name = "REVISIONS")]
    revisions: Option<String>,
    /// How to print the report: text, markdown (a pull request comment) or json.
    #[arg(long, value_enum, default_value_t = DiffFormat::Text)]
    format: DiffFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum DiffFormat {
    /// For people at a terminal.
    Text,
    /// For a pull request comment: a summary, then collapsed details.
    Markdown,
    /// For scripts (schema/diff.schema.json).
    Json,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    let revisions = match &args.revisions {
        Some(spec) => Revisions::parse(spec)?,
        None => Revisions::Upstream,
    };
    let repo = super::repo()?;
    let gix_repo = super::check::open_gix(&repo)?;
    let report = git_swarm::diff::diff(&gix_repo, &repo.root, &revisions)?;
    git_swarm::trace::mark("report built");
    for note in &report.notes {
        ui.note(&format!("note: {note}"));
    }
    for p in &report.problems {
        let mut problem = git_swarm::problem::Problem::error(&p.path, &p.code, &p.message);
        problem.line = p.line;
        problem.column = p.column;
        problem.hint = p.hint.clone();
        ui.problem(&problem);
    }
    match args.format {
        DiffFormat::Json => return ui.json_result(&report),
        DiffFormat::Text => {
            let text = text(&report);
            git_swarm::trace::mark("rendered");
            ui.write_out(text.as_bytes())?;
            git_swarm::trace::mark("written");
        }
        DiffFormat::Markdown => {
            let text = markdown(&report);
            ui.write_out(text.as_bytes())?;
        }
    }
    Ok(std::process::ExitCode::SUCCESS)
}

const ADDED: Style = AnsiColor::Green.on_default();
const REMOVED: Style = AnsiColor::Red.on_default();
const HEADING: Style = Style::new().bold();

fn names(report: &Report) -> (String, String) {
    (report.from.name.clone(), report.to.name.clone())
}

/// The one-line summary, ids written by `id`.
fn summary(r: &Report, id: &dyn Fn(&str) -> String) -> String {
    let s = &r.summary;
    let n = |count: usize, one: &str, many: &str| match count {
        0 => None,
        1 => Some(format!("1 {one}")),
        n => Some(format!("{n} {many}")),
    };
    let named = |verb: &str, ids: Vec<&str>| match ids.len() {
        0 => None,
        1..=3 => Some(format!(
            "{verb} {}",
            ids.iter().map(|i| id(i)).collect::<Vec<_>>().join(", ")
        )),
        k => Some(format!("{verb} {k} directives")),
    };
    let escalated: Vec<&str> = r
        .effective
        .iter()
        .filter(|e| e.escalated_to && !e.escalated_from)
        .map(|e| e.id.as_str())
        .collect();
    let deescalated: Vec<&str> = r
        .effective
        .iter()
        .filter(|e| e.escalated_from && !e.escalated_to)
        .map(|e| e.id.as_str())
        .collect();
    let groups: Vec<Vec<Option<String>>> = vec![
        vec![
            named("escalated", escalated),
            named("de-escalated", deescalated),
            n(s.overrides, "override", "overrides"),
        ],
        directive_counts(s)
            .into_iter()
            .enumerate()
            .map(|(i, (count, verb))| {
                (count > 0).then(|| match (i, count) {
                    (_, 1) if first_directive(s) == i => format!("1 directive {verb}"),
                    (_, k) if first_directive(s) == i => format!("{k} directives {verb}"),
                    (_, k) => format!("{k} {verb}"),
                })
            })
            .chain([
                n(s.quarantined, "quarantined", "quarantined"),
                n(s.unquarantined, "out of quarantine", "out of quarantine"),
            ])
            .collect(),
        vec![
            n(
                s.violations as usize,
                "violation recorded",
                "violations recorded",
            ),
            n(s.acks as usize, "ack", "acks"),
            n(s.verdicts as usize, "verdict", "verdicts"),
            n(
                s.prevented as usize,
                "mistake prevented",
                "mistakes prevented",
            ),
        ],
        vec![
            n(s.patterns_promoted, "pattern promoted", "patterns promoted"),
            n(
                s.patterns_deprecated,
                "pattern deprecated",
                "patterns deprecated",
            ),
            n(s.proposals_added, "proposal", "proposals"),
            n(s.proposals_decided, "proposal decided", "proposals decided"),
            n(s.handoffs_opened, "handoff opened", "handoffs opened"),
            n(
                s.handoffs_completed,
                "handoff completed",
                "handoffs completed",
            ),
            n(s.config_keys, "setting changed", "settings changed"),
        ],
        vec![n(
            s.missing_events,
            "event missing from the log",
            "events missing from the log",
        )],
        vec![n(
            s.other_files,
            "other file under .swarm/ changed",
            "other files under .swarm/ changed",
        )],
    ];
    let parts: Vec<String> = groups
        .into_iter()
        .map(|g| g.into_iter().flatten().collect::<Vec<_>>().join(", "))
        .filter(|g| !g.is_empty())
        .collect();
    if parts.is_empty() {
        if s.events_added > 0 {
            return format!("{} events recorded", s.events_added);
        }
        if s.problems > 0 {
            return format!(
                "no change read; {} file(s) skipped (see the problems)",
                s.problems
            );
        }
        return "layout only".into();
    }
    parts.join("; ")
}

/// The directive counts of the summary, in the order they are said.
fn directive_counts(s: &git_swarm::diff::Summary) -> [(usize, &'static str); 6] {
    [
        (s.directives_added, "added"),
        (s.directives_removed, "removed"),
        (s.directives_renamed, "renamed"),
        (s.directives_retired, "retired"),
        (s.directives_reactivated, "re-activated"),
        (s.directives_edited, "edited"),
    ]
}

/// Which directive count is said first (and names the noun).
fn first_directive(s: &git_swarm::diff::Summary) -> usize {
    directive_counts(s)
        .iter()
        .position(|(n, _)| *n > 0)
        .unwrap_or(usize::MAX)
}

fn level(l: &Option<Level>) -> String {
    l.map_or("-".into(), |l| format!("{}/{}", l.priority, l.enforcement))
}

fn counts(map: &std::collections::BTreeMap<String, u64>) -> String {
    map.iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn cause_line(c: &Cause, esc: &dyn Fn(&str) -> String) -> String {
    let mut line = c.kind.replace('_', " ");
    if let Some(e) = &c.event {
        let _ = write!(line, " {}", esc(e));
    }
    if let Some(ep) = &c.episode {
        let _ = write!(line, " ({})", esc(ep));
    }
    if let Some(t) = &c.text {
        let _ = write!(line, ": {}", esc(t));
    }
    if !c.violations.is_empty() {
        let ids: Vec<String> = c.violations.iter().map(|v| esc(v)).collect();
        let _ = write!(line, " [violations {}]", ids.join(", "));
    }
    line
}

// ---- text ----

pub fn text(r: &Report) -> String {
    let (from, to) = names(r);
    let (from, to) = (clean(&from), clean(&to));
    if r.is_empty() {
        return format!("no change in .swarm/ from {from} to {to}\n");
    }
    let esc = |s: &str| clean(s).into_owned();
    let mut o = String::new();
    let _ = writeln!(o, "{HEADING}.swarm/ from {from} to {to}{HEADING:#}");
    let _ = writeln!(o, "{}", summary(r, &|id| clean(id).into_owned()));
    let section = |o: &mut String, title: &str, n: usize| {
        if n > 0 {
            let _ = writeln!(o, "\n{HEADING}{title}{HEADING:#}");
        }
        n > 0
    };
    if section(&mut o, "Directives", r.directives.len()) {
        for d in &r.directives {
            let (mark, style) = match d.change {
                DirectiveChangeKind::Added => ("+", ADDED),
                DirectiveChangeKind::Removed => ("-", REMOVED),
                _ => ("~", Style::new()),
            };
            let mut line = format!(
                "{style}{mark} {}{style:#} {}",
                esc(&d.id),
                change_word(d.change)
            );
            if let Some(old) = &d.old_path {
                let _ = write!(line, " from {}", esc(old));
            }
            if let (Some(lesson), true) = (&d.lesson, d.fields.is_empty()) {
                let _ = write!(line, ": {}", esc(lesson));
            }
            if let (Some(l), DirectiveChangeKind::Added) = (d.declared, d.change) {
                let _ = write!(line, " [{}]", level(&Some(l)));
            }
            let _ = writeln!(o, "  {line}");
            for f in &d.fields {
                let _ = writeln!(o, "      {}", field_text(f));
            }
        }
    }
    if section(&mut o, "Effective state", r.effective.len()) {
        for e in &r.effective {
            let _ = writeln!(
                o,
                "  {}: {} -> {}",
                esc(&e.id),
                level(&e.from),
                level(&e.to)
            );
            for c in &e.causes {
                let _ = writeln!(o, "      {}", cause_line(c, &esc));
            }
        }
    }
    if section(&mut o, "Signals recorded", r.signals.len()) {
        for s in &r.signals {
            let _ = writeln!(o, "  {}: {}", esc(&s.id), signal_parts(s).join("; "));
        }
    }
    if section(&mut o, "Patterns", r.patterns.len()) {
        for p in &r.patterns {
            let mut line = format!("  {} {}", p.change, esc(&p.id));
            if let Some(role) = &p.role {
                let _ = write!(line, " ({})", esc(role));
            }
            if let Some(t) = &p.text {
                let _ = write!(line, ": {}", esc(t));
            }
            if let Some(t) = &p.reason {
                let _ = write!(line, " — {}", esc(t));
            }
            let _ = writeln!(o, "{line}");
        }
    }
    if section(&mut o, "Quarantine", r.quarantine.len()) {
        for q in &r.quarantine {
            let mut line = format!("  {} {}", esc(&q.id), snake(&q.change));
            if let Some(reason) = &q.reason {
                let _ = write!(line, " ({})", esc(reason));
            }
            if let (Some(lesson), true) = (&q.lesson, q.fields.is_empty()) {
                let _ = write!(line, ": {}", esc(lesson));
            }
            let _ = writeln!(o, "{line}");
            for f in &q.fields {
                let _ = writeln!(o, "      {}", field_text(f));
            }
        }
    }
    if section(&mut o, "Proposals", r.proposals.len()) {
        for p in &r.proposals {
            let _ = writeln!(o, "  {}", proposal_line(p, &esc));
        }
    }
    if section(&mut o, "Handoffs", r.handoffs.len()) {
        for h in &r.handoffs {
            let _ = writeln!(o, "  {}", handoff_line(h, &esc));
        }
    }
    if section(&mut o, "Config", r.config.len()) {
        for c in &r.config {
            let _ = writeln!(
                o,
                "  {}: {} -> {}",
                esc(&c.key),
                esc(c.from.as_deref().unwrap_or("(default)")),
                esc(c.to.as_deref().unwrap_or("(default)"))
            );
        }
    }
    if section(&mut o, "Hives", r.hives.len()) {
        for h in &r.hives {
            let _ = writeln!(o, "  {}", hive_line(h, &esc));
            if let Some(report) = &h.report {
                for line in text(report).lines() {
                    let _ = writeln!(o, "    {line}");
                }
            }
            if let Some(note) = &h.note {
                let _ = writeln!(o, "    {}", esc(note));
            }
        }
    }
    if section(
        &mut o,
        "Events missing from the new side (the log is append-only)",
        r.missing_events.len(),
    ) {
        for e in &r.missing_events {
            let _ = writeln!(
                o,
                "  {} {} {} {}",
                esc(&e.id),
                esc(&e.ts),
                esc(&e.kind),
                esc(e.directive.as_deref().unwrap_or("-"))
            );
        }
    }
    if section(
        &mut o,
        "Other files under .swarm/ (git-swarm does not read them: review them as code)",
        r.other_files.len(),
    ) {
        for f in &r.other_files {
            let _ = writeln!(o, "  {} {}", esc(&f.change), esc(&f.path));
        }
    }
    o
}

fn snake<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(|s| s.replace('_', " ")))
        .unwrap_or_default()
}

/// `hive team: 4a59d77d7714 -> 1f82f3088f2e` (or subscribed, unsubscribed).
fn hive_line(h: &git_swarm::diff::HiveMove, esc: &dyn Fn(&str) -> String) -> String {
    let short = |r: &str| esc(git_swarm::pins::short(r));
    match (&h.from, &h.to) {
        (Some(a), Some(b)) => format!("hive {}: {} -> {}", esc(&h.name), short(a), short(b)),
        (None, Some(b)) => format!("hive {} subscribed at {}", esc(&h.name), short(b)),
        (Some(a), None) => format!("hive {} unsubscribed (was at {})", esc(&h.name), short(a)),
        (None, None) => format!("hive {}", esc(&h.name)),
    }
}

fn change_word(k: DirectiveChangeKind) -> String {
    match k {
        DirectiveChangeKind::Reactivated => "re-activated".into(),
        DirectiveChangeKind::Unreadable => "does not parse on one side".into(),
        k => snake(&k),
    }
}

fn signal_parts(s: &git_swarm::diff::Signals) -> Vec<String> {
    let mut parts = Vec::new();
    if s.violations > 0 {
        parts.push(format!(
            "{} violation{}",
            s.violations,
            if s.violations == 1 { "" } else { "s" }
        ));
    }
    if !s.acks.is_empty() {
        parts.push(format!("acks: {}", counts(&s.acks)));
    }
    if !s.verdicts.is_empty() {
        parts.push(format!("verdicts: {}", counts(&s.verdicts)));
    }
    if s.shown > 0 {
        parts.push(format!("shown {}", s.shown));
    }
    if s.prevented > 0 {
        parts.push(format!("prevented {}", s.prevented));
    }
    let others: std::collections::BTreeMap<String, u64> = s
        .kinds
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "ack" | "verdict" | "shown" | "prevented"))
        .map(|(k, v)| (k.clone(), *v))
        .collect();
    if !others.is_empty() {
        parts.push(format!("events: {}", counts(&others)));
    }
    parts
}

fn proposal_line(p: &git_swarm::diff::ProposalChange, esc: &dyn Fn(&str) -> String) -> String {
    let mut line = format!("{} {}", esc(&p.slug), snake(&p.change));
    match (&p.from, &p.to) {
        (Some(a), Some(b)) if a != b => {
            let _ = write!(line, " ({a} -> {b})");
        }
        (None, Some(b)) => {
            let _ = write!(line, " ({b})");
        }
        _ => {}
    }
    if let Some(t) = &p.title {
        let _ = write!(line, ": {}", esc(t));
    }
    if let Some(d) = &p.directive {
        let _ = write!(line, " -> directive {}", esc(d));
    }
    if let Some(r) = &p.reason {
        let _ = write!(line, " (reason: {})", esc(r));
    }
    line
}

fn handoff_line(h: &git_swarm::diff::HandoffChange, esc: &dyn Fn(&str) -> String) -> String {
    let mut line = format!(
        "{} {}: {} -> {}",
        esc(&h.task),
        snake(&h.change),
        h.from.as_deref().unwrap_or("-"),
        h.to.as_deref().unwrap_or("-")
    );
    if let Some(role) = &h.role {
        let _ = write!(line, " (role {})", esc(role));
    }
    if let Some(epic) = &h.epic {
        let _ = write!(line, " (epic {})", esc(epic));
    }
    line
}

/// A field change in text: a word diff as `git diff --word-diff` writes it.
fn field_text(f: &FieldChange) -> String {
    let esc = |s: &str| clean(s).into_owned();
    match &f.diff {
        FieldDiff::Text { words, .. } => format!("{}: {}", f.field, words_text(words)),
        FieldDiff::Value { from, to } => format!(
            "{}: {} -> {}",
            f.field,
            esc(from.as_deref().unwrap_or("(unset)")),
            esc(to.as_deref().unwrap_or("(unset)"))
        ),
        FieldDiff::List { added, removed } => {
            let mut parts: Vec<String> = added
                .iter()
                .map(|a| format!("{ADDED}+{}{ADDED:#}", esc(a)))
                .collect();
            parts.extend(
                removed
                    .iter()
                    .map(|r| format!("{REMOVED}-{}{REMOVED:#}", esc(r))),
            );
            format!("{}: {}", f.field, parts.join(" "))
        }
    }
}

fn words_text(words: &[Words]) -> String {
    let mut o = String::new();
    for w in words {
        let t = clean(&w.text);
        match w.op {
            WordOp::Equal => o.push_str(&t),
            WordOp::Removed => {
                let _ = write!(o, "{REMOVED}[-{t}-]{REMOVED:#}");
            }
            WordOp::Added => {
                let _ = write!(o, "{ADDED}{{+{t}+}}{ADDED:#}");
            }
        }
    }
    o
}

// ---- markdown ----

/// A string from `.swarm/` made inert in Markdown: hidden characters shown
/// as escapes, one line, HTML's special characters as entities and
/// Markdown's punctuation backslash-escaped, so that a lesson can neither
/// format, link, close a `<details>` nor open a comment or a tag.
fn md(s: &str) -> String {
    let s = clean(s);
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '&' => o.push_str("&amp;"),
            '\n' | '\r' => o.push(' '),
            '\\' | '`' | '*' | '_' | '[' | ']' | '(' | ')' | '#' | '|' | '~' | '!' | '{' | '}'
            | '+' | '-' | '@' | ':' | '"' | '\'' => {
                o.push('\\');
                o.push(c);
            }
            c => o.push(c),
        }
    }
    o
}

/// An id as inline code, escaped (an id from a file name can hold anything).
fn code(s: &str) -> String {
    format!("<code>{}</code>", md(s))
}

fn md_words(words: &[Words]) -> String {
    let mut o = String::new();
    for w in words {
        let t = md(&w.text);
        match w.op {
            WordOp::Equal => o.push_str(&t),
            WordOp::Removed => {
                let _ = write!(o, "<del>{t}</del>");
            }
            WordOp::Added => {
                let _ = write!(o, "<ins>{t}</ins>");
            }
        }
    }
    o
}

fn md_field(f: &FieldChange) -> String {
    let name = code(&f.field);
    match &f.diff {
        FieldDiff::Text { words, .. } => format!("{name}: {}", md_words(words)),
        FieldDiff::Value { from, to } => format!(
            "{name}: {} → {}",
            md(from.as_deref().unwrap_or("(unset)")),
            md(to.as_deref().unwrap_or("(unset)"))
        ),
        FieldDiff::List { added, removed } => {
            let mut parts: Vec<String> = added
                .iter()
                .map(|a| format!("<ins>{}</ins>", md(a)))
                .collect();
            parts.extend(removed.iter().map(|r| format!("<del>{}</del>", md(r))));
            format!("{name}: {}", parts.join(", "))
        }
    }
}

fn details(o: &mut String, title: &str, n: usize, body: impl FnOnce(&mut String)) {
    if n == 0 {
        return;
    }
    let _ = writeln!(o, "\n<details><summary>{title} ({n})</summary>\n");
    body(o);
    let _ = writeln!(o, "\n</details>");
}

fn markdown(r: &Report) -> String {
    let (from, to) = names(r);
    let head = format!(
        "**git swarm diff** of `.swarm/` from {} to {}",
        md(&from),
        md(&to)
    );
    if r.is_empty() {
        return format!("{head}: no change.\n");
    }
    let mut o = String::new();
    let _ = writeln!(o, "{head}\n");
    let _ = writeln!(o, "{}", md_summary(r));
    details(&mut o, "Directives", r.directives.len(), |o| {
        for d in &r.directives {
            let mut line = format!("- **{}** {}", change_word(d.change), code(&d.id));
            if let Some(old) = &d.old_path {
                let _ = write!(line, " from {}", code(old));
            }
            if let (Some(lesson), true) = (&d.lesson, d.fields.is_empty()) {
                let _ = write!(line, ": {}", md(lesson));
            }
            if let (Some(l), DirectiveChangeKind::Added) = (d.declared, d.change) {
                let _ = write!(line, " ({})", level(&Some(l)));
            }
            let _ = writeln!(o, "{line}");
            for f in &d.fields {
                let _ = writeln!(o, "  - {}", md_field(f));
            }
        }
    });
    details(&mut o, "Effective state", r.effective.len(), |o| {
        for e in &r.effective {
            let _ = writeln!(
                o,
                "- {}: {} → **{}**",
                code(&e.id),
                level(&e.from),
                level(&e.to)
            );
            for c in &e.causes {
                let _ = writeln!(o, "  - {}", cause_line(c, &md));
            }
        }
    });
    details(&mut o, "Signals recorded", r.signals.len(), |o| {
        let _ = writeln!(
            o,
            "| directive | violations | acks | verdicts | shown | prevented |\n| --- | --- | --- | --- | --- | --- |"
        );
        for s in &r.signals {
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} | {} |",
                code(&s.id),
                s.violations,
                md(&counts(&s.acks)),
                md(&counts(&s.verdicts)),
                s.shown,
                s.prevented
            );
        }
    });
    details(&mut o, "Patterns", r.patterns.len(), |o| {
        for p in &r.patterns {
            let mut line = format!("- **{}** {}", p.change, code(&p.id));
            if let Some(role) = &p.role {
                let _ = write!(line, " ({})", md(role));
            }
            if let Some(t) = &p.text {
                let _ = write!(line, ": {}", md(t));
            }
            if let Some(t) = &p.reason {
                let _ = write!(line, " — {}", md(t));
            }
            let _ = writeln!(o, "{line}");
        }
    });
    details(&mut o, "Quarantine", r.quarantine.len(), |o| {
        for q in &r.quarantine {
            let mut line = format!("- **{}** {}", snake(&q.change), code(&q.id));
            if let Some(reason) = &q.reason {
                let _ = write!(line, " ({})", md(reason));
            }
            if let (Some(lesson), true) = (&q.lesson, q.fields.is_empty()) {
                let _ = write!(line, ": {}", md(lesson));
            }
            let _ = writeln!(o, "{line}");
            for f in &q.fields {
                let _ = writeln!(o, "  - {}", md_field(f));
            }
        }
    });
    details(&mut o, "Proposals", r.proposals.len(), |o| {
        for p in &r.proposals {
            let _ = writeln!(o, "- {}", proposal_line(p, &md));
        }
    });
    details(&mut o, "Handoffs", r.handoffs.len(), |o| {
        for h in &r.handoffs {
            let _ = writeln!(o, "- {}", handoff_line(h, &md));
        }
    });
    details(&mut o, "Config", r.config.len(), |o| {
        for c in &r.config {
            let _ = writeln!(
                o,
                "- {}: {} → {}",
                code(&c.key),
                md(c.from.as_deref().unwrap_or("(default)")),
                md(c.to.as_deref().unwrap_or("(default)"))
            );
        }
    });
    details(&mut o, "Hives", r.hives.len(), |o| {
        for h in &r.hives {
            let _ = writeln!(o, "- {}", hive_line(h, &md));
            if let Some(report) = &h.report {
                // The hive's own report as text, fenced longer than any run
                // of backticks in it: a lesson cannot close the fence.
                let body = text(report);
                let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
                let fence = "`".repeat(longest.max(2) + 1);
                let _ = writeln!(o, "\n  {fence}text");
                for line in body.lines() {
                    let _ = writeln!(o, "  {line}");
                }
                let _ = writeln!(o, "  {fence}");
            }
            if let Some(note) = &h.note {
                let _ = writeln!(o, "  {}", md(note));
            }
        }
    });
    details(
        &mut o,
        "Events missing from the log (it is append-only)",
        r.missing_events.len(),
        |o| {
            for e in &r.missing_events {
                let _ = writeln!(
                    o,
                    "- {} {} {} {}",
                    code(&e.id),
                    md(&e.ts),
                    md(&e.kind),
                    code(e.directive.as_deref().unwrap_or("-"))
                );
            }
        },
    );
    details(
        &mut o,
        "Other files under .swarm/ (git-swarm does not read them: review them as code)",
        r.other_files.len(),
        |o| {
            for f in &r.other_files {
                let _ = writeln!(o, "- {} {}", md(&f.change), code(&f.path));
            }
        },
    );
    o
}

fn md_summary(r: &Report) -> String {
    summary(r, &|id| code(id))
}
