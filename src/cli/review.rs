//! `git swarm review`.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;

use serde::Serialize;

use git_swarm::change::Change;
use git_swarm::check::{self, Candidate, CheckDirective, CheckEntry, Outcome as Machine};
use git_swarm::directive::{Directive, Priority};
use git_swarm::directive_loop::inject::sanitise;
use git_swarm::directive_loop::marks::{self, VerdictStatus};
use git_swarm::directive_loop::records as learning;
use git_swarm::{Error, Store};

use super::{Format, Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The phase.
    #[arg(long, value_name = "PHASE")]
    phase: String,
    /// The reviewer's message with its verdict lines (`-`: standard input).
    #[arg(long, alias = "verdict", value_name = "FILE")]
    verdicts: Option<String>,
    // The change the predicates run against, named as for `check`.
    #[command(flatten)]
    change: super::check::ChangeArgs,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

/// The block's size bound: directives beyond it are named, not shown.
const BLOCK_CHARS: usize = 24_000;

#[derive(Debug, Serialize)]
struct Recorded {
    id: String,
    verdict: String,
    reviewer: String,
    machine: String,
    evidence: Option<String>,
    reason: Option<String>,
    disagreement: bool,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    super::check_phase_name(&args.phase)?;
    if args.change.given() && args.verdicts.is_none() {
        return Err(Error::Usage {
            message: "a change (--staged, --worktree, --range, --commit) is only used with --verdicts".into(),
            hint: Some("pass the reviewer's message with --verdicts FILE to check their verdicts against the change".into()),
        }
        .into());
    }
    let store = super::store(ui)?;
    let loaded = super::load_index(&store, ui)?;
    let index = &loaded.index;
    let (events, problems) = learning::read_log(&store)?;
    for p in &problems {
        ui.problem(p);
    }
    let records = learning::phase_records(&events, &args.phase, index);
    if records.is_empty() && args.verdicts.is_some() {
        // Verdicts for a phase nothing was shown in can only be ignored:
        // more often a mistyped name than a review of nothing.
        return Err(Error::Usage {
            message: format!(
                "no directive was shown in phase `{}`: no verdict recorded",
                args.phase
            ),
            hint: Some(super::phase::unknown_phase_hint(&events, &args.phase)),
        }
        .into());
    }
    match &args.verdicts {
        None => block(&args, &records, index, ui),
        Some(file) => verdicts(&args, file, &store, &records, index, ui),
    }
}

fn block(
    args: &Args,
    records: &[learning::PhaseRecord],
    index: &git_swarm::index::Index,
    ui: &mut Ui,
) -> Outcome {
    if args.format == Format::Json {
        let list: Vec<serde_json::Value> = records
            .iter()
            .map(|r| {
                let d = index.directive(&r.id).and_then(|e| e.directive.as_ref());
                serde_json::json!({
                    "id": r.id,
                    "critical": r.critical,
                    "lesson": d.map(|d| d.lesson.clone()),
                    "verify": d.map(|d| d.verify.clone()).unwrap_or_default(),
                    "verification_checks": d.map(|d| d.verification_checks.clone()).unwrap_or_default(),
                })
            })
            .collect();
        ui.json(&serde_json::json!({"phase": args.phase, "directives": list}))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = format!("<directives_to_verify phase=\"{}\">\n", args.phase);
    out.push_str("Give one verdict line per directive below, one of\n");
    out.push_str("VERIFIED:<id> evidence=<what shows it> | VIOLATED:<id> evidence=<where> | N/A:<id> reason=<why>\n");
    out.push_str("Critical directives without a verdict count as violations.\n");
    let mut used = 0;
    let mut omitted = Vec::new();
    for r in records {
        let d = index.directive(&r.id).and_then(|e| e.directive.as_ref());
        let mut entry = format!(
            "- id: {}\n  priority: {}\n",
            r.id,
            if r.critical {
                "critical"
            } else {
                "not critical"
            }
        );
        match d {
            Some(d) => {
                entry.push_str(&format!("  lesson: {}\n", sanitise(&d.lesson)));
                let checks: Vec<String> = d
                    .verification_checks
                    .iter()
                    .chain(&d.verify)
                    .map(|t| sanitise(t))
                    .collect();
                if !checks.is_empty() {
                    entry.push_str(&format!("  verification: {}\n", checks.join("; ")));
                }
            }
            None => entry.push_str("  lesson: (no longer in .swarm/directives/)\n"),
        }
        if used + entry.len() > BLOCK_CHARS {
            omitted.push(r.id.clone());
            continue;
        }
        used += entry.len();
        out.push_str(&entry);
    }
    if !omitted.is_empty() {
        out.push_str(&format!(
            "({} more, over the size bound: {})\n",
            omitted.len(),
            omitted.join(", ")
        ));
    }
    out.push_str("</directives_to_verify>\n");
    if records.is_empty() {
        ui.note(&format!(
            "no directive was shown in phase {} (`git swarm inject --phase {}` shows them)",
            args.phase, args.phase
        ));
        return Ok(ExitCode::SUCCESS);
    }
    write!(ui.out, "{out}")?;
    Ok(ExitCode::SUCCESS)
}

fn verdicts(
    args: &Args,
    file: &str,
    store: &Store,
    records: &[learning::PhaseRecord],
    index: &git_swarm::index::Index,
    ui: &mut Ui,
) -> Outcome {
    let text = super::inject::read_input(file, "verdicts")?;
    if text.trim().is_empty() {
        // Every critical would be recorded as omitted by the reviewer, from no review at all.
        return Err(Error::Usage {
            message: format!(
                "{} is empty: no verdicts to record",
                if file == "-" { "standard input" } else { file }
            ),
            hint: Some(
                "pass the reviewer's final message, with a VERIFIED:/VIOLATED:/N/A: line per directive"
                    .into(),
            ),
        }
        .into());
    }
    let mut given: BTreeMap<String, marks::Verdict> = BTreeMap::new();
    let mut outside = Vec::new();
    let shown_file = if file == "-" { "standard input" } else { file };
    for mut v in marks::parse_verdicts(&text) {
        if let Some(ev) = &mut v.evidence {
            let place = format!("{shown_file}:{}", v.line);
            super::ack::cap_reason(ev, &place, "evidence", &v.id, ui);
        }
        if records.iter().any(|r| r.id == v.id) {
            given.insert(v.id.clone(), v);
        } else if !outside.contains(&v.id) {
            outside.push(v.id.clone());
        }
    }
    let machine = machine_results(args, store, records, index, ui)?;
    let mut recorded = Vec::new();
    let mut events = Vec::new();
    for r in records {
        let reviewer = given.get(&r.id);
        let m = machine.get(&r.id).copied();
        let m_word = m.map_or("not run", Machine::as_str);
        let reviewer_word = reviewer.map_or("omitted", |v| verdict_word(v.status));
        let (verdict, reason, disagreement) = match (reviewer.map(|v| v.status), m) {
            (Some(VerdictStatus::Violated), Some(Machine::Pass)) => ("verified", None, true),
            (Some(VerdictStatus::Verified | VerdictStatus::NotApplicable), Some(Machine::Fail)) => {
                ("violated", None, true)
            }
            (Some(s), _) => (verdict_word(s), None, false),
            (None, Some(Machine::Pass)) => ("verified", None, false),
            (None, Some(Machine::Fail)) => ("violated", None, false),
            (None, _) if r.critical => ("violated", Some("reviewer_omitted".to_owned()), false),
            (None, _) => continue,
        };
        let reason = reason.or_else(|| {
            reviewer
                .and_then(|v| v.evidence.clone())
                .filter(|_| verdict == "n_a")
        });
        let evidence = reviewer.and_then(|v| v.evidence.clone());
        let mut e = store
            .event("verdict")
            .with("phase", args.phase.clone())
            .with("verdict", verdict)
            .with("reviewer", reviewer_word)
            .with("machine", m_word)
            .with("disagreement", disagreement);
        if let Some(ev) = &evidence {
            e = e.with("evidence", ev.clone());
        }
        if let Some(rs) = &reason {
            e = e.with("reason", rs.clone());
        }
        e.directive = Some(r.id.clone());
        events.push(e);
        recorded.push(Recorded {
            id: r.id.clone(),
            verdict: verdict.into(),
            reviewer: reviewer_word.into(),
            machine: m_word.into(),
            evidence,
            reason,
            disagreement,
        });
    }
    if !events.is_empty() {
        super::append(store, &events, ui)?;
    }
    if recorded.iter().any(|r| r.verdict == "violated") {
        super::escalate(
            store,
            |id| {
                let d = index.directive(id)?.directive.as_ref()?;
                Some((d.priority, d.enforcement))
            },
            ui,
        )?;
    }
    if args.format == Format::Json {
        ui.json(&serde_json::json!({
            "phase": args.phase,
            "verdicts": recorded,
            "not_in_phase": outside,
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    for r in &recorded {
        let mut line = format!("{:<9} {}", r.verdict, r.id);
        line.push_str(&format!(
            "  (reviewer: {}, machine: {})",
            r.reviewer, r.machine
        ));
        if r.disagreement {
            line.push_str("  the machine's answer stands");
        }
        if let Some(reason) = &r.reason {
            line.push_str(&format!("  reason: {reason}"));
        }
        writeln!(ui.out, "{}", super::clean(&line))?;
    }
    for id in &outside {
        let hint = super::ui::did_you_mean(id, records.iter().map(|r| r.id.as_str())).map(|m| {
            format!(
                "did you mean `{m}`? `git swarm review --phase {}` lists the phase's directives",
                args.phase
            )
        });
        ui.warning(
            &format!(
                "verdict for `{id}` ignored: it was not shown in phase {}",
                args.phase
            ),
            hint.as_deref(),
        );
    }
    writeln!(
        ui.out,
        "recorded {} verdict(s) for phase {}",
        recorded.len(),
        args.phase
    )?;
    Ok(ExitCode::SUCCESS)
}

fn verdict_word(s: VerdictStatus) -> &'static str {
    match s {
        VerdictStatus::Verified => "verified",
        VerdictStatus::Violated => "violated",
        VerdictStatus::NotApplicable => "n_a",
    }
}

/// Each phase directive's outcome against the given change (none given: empty).
fn machine_results(
    args: &Args,
    store: &Store,
    records: &[learning::PhaseRecord],
    index: &git_swarm::index::Index,
    ui: &mut Ui,
) -> Result<BTreeMap<String, Machine>, Error> {
    if !args.change.given() {
        return Ok(BTreeMap::new());
    }
    let selection = args.change.selection()?;
    let repo = super::repo()?;
    let gix = super::check::open_gix(&repo)?;
    let change = Change::read(&gix, &repo.root, &selection)?;
    // Each record's directive, with its file: what the candidates borrow.
    let views: Vec<(&learning::PhaseRecord, String, CheckDirective, bool)> = records
        .iter()
        .filter_map(|r| {
            let e = index.directive(&r.id)?;
            let d: &Directive = e.directive.as_ref()?;
            Some((
                r,
                format!(".swarm/directives/{}", e.file),
                CheckDirective::of(d),
                // Edited since it was shown, its file may not pass the gate now.
                !e.problems.iter().any(|p| p.is_error()),
            ))
        })
        .collect();
    let candidates: Vec<Candidate> = views
        .iter()
        .map(|(r, file, d, gated)| {
            let (priority, enforcement) = index.fold.effective_of(d.id, d.priority, d.enforcement);
            Candidate {
                directive: d,
                path: file,
                enforcement,
                priority: if r.critical {
                    Priority::Critical
                } else {
                    priority
                },
                gated: *gated,
            }
        })
        .collect();
    let limits = git_swarm::runner::Limits::from_config(&store.config.runner);
    let entries: Vec<CheckEntry> = index.directives.iter().map(CheckEntry::of).collect();
    let tools = super::check::tool_runner(&repo, &entries, &candidates, limits, ui);
    let report = check::evaluate(&gix, &change, &candidates, tools.as_ref())?;
    for w in &report.warnings {
        ui.warning(&w.message, w.hint.as_deref());
    }
    Ok(report
        .results
        .into_iter()
        .map(|r| (r.id.to_owned(), r.outcome))
        .collect())
}
