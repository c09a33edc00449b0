//! `git swarm phase complete`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::Error;
use git_swarm::directive_loop::records::{self as learning, Blocker};

use super::{Format, Outcome, Ui};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    Complete(CompleteArgs),
}

/// Complete a phase, unless a critical directive of it is unresolved.
///
/// The phase's directives are those shown by `git swarm inject --phase P`.
/// Each critical one (critical when shown, or escalated since) needs a
/// terminal outcome in the phase (an `applied` ack or a `verified` verdict,
/// or an `ignored`/`n_a` one with a reason), and its last violation must be
/// followed by an applied or verified outcome. Otherwise this prints
/// `PHASE_COMPLETE_BLOCKED:` and one `- <id>: <reason>` line per directive,
/// and exits 1. `--accept-violations` overrides named directives, with a
/// justification of at least 10 characters, recorded as `override` events.
///
/// A phase in which no directive was shown is refused (exit 2) as a likely
/// typo, naming the phases that exist; `--allow-empty` completes it.
#[derive(Debug, clap::Args)]
pub struct CompleteArgs {
    /// The phase.
    #[arg(value_name = "PHASE")]
    phase: String,
    /// Directives to accept despite their state (comma-separated ids, repeatable).
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "ID,..",
        requires = "justification"
    )]
    accept_violations: Vec<String>,
    /// Why the violations are accepted (at least 10 characters).
    #[arg(long, value_name = "TEXT", requires = "accept_violations")]
    justification: Option<String>,
    /// Complete the phase even though no directive was shown in it.
    #[arg(long)]
    allow_empty: bool,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

/// The shortest justification accepted for an override.
pub const MIN_JUSTIFICATION: usize = 10;

pub fn run(command: Command, ui: &mut Ui) -> Outcome {
    match command {
        Command::Complete(args) => complete(args, ui),
    }
}

fn complete(args: CompleteArgs, ui: &mut Ui) -> Outcome {
    super::check_phase_name(&args.phase)?;
    let store = super::store(ui)?;
    let index = git_swarm::index::load(&store)?.index;
    let fold = &index.fold;
    let (events, problems) = learning::read_log(&store)?;
    for p in &problems {
        ui.problem(p);
    }
    let mut records = learning::phase_records(&events, &args.phase, &index);
    let mut blockers = learning::phase_blockers(&records, fold);

    // An id given twice is one override.
    let mut accepted: Vec<String> = Vec::new();
    for id in &args.accept_violations {
        if !accepted.contains(id) {
            accepted.push(id.clone());
        }
    }
    if !accepted.is_empty() {
        let justification = args.justification.as_deref().unwrap_or("").trim();
        if justification.chars().count() < MIN_JUSTIFICATION {
            return Err(Error::Usage {
                message: format!(
                    "the justification is {} character(s); an override needs at least {MIN_JUSTIFICATION}",
                    justification.chars().count()
                ),
                hint: Some("say why these violations are acceptable, in a sentence".into()),
            }
            .into());
        }
        for id in &accepted {
            if !records.iter().any(|r| &r.id == id) {
                return Err(Error::Usage {
                    message: format!("`{id}` was not shown in phase `{}`", args.phase),
                    hint: Some(format!(
                        "only the phase's directives can be accepted; `git swarm review --phase {}` lists them",
                        args.phase
                    )),
                }
                .into());
            }
        }
        // An override records a decision about a blocker: an id that does
        // not block (or a phase already complete) has nothing to override.
        let done = learning::phase_completed(&events, &args.phase).is_some();
        let mut overrides = Vec::new();
        for id in &accepted {
            match blockers.iter().find(|b| &b.id == id) {
                Some(b) if !done => {
                    let mut e = store
                        .event("override")
                        .with("phase", args.phase.clone())
                        .with("justification", justification.to_owned())
                        .with("blocked", b.reason.clone());
                    e.directive = Some(id.clone());
                    overrides.push(e);
                }
                _ => ui.warning(
                    &format!(
                        "`{id}` {}: no override recorded for it",
                        if done {
                            format!("is in phase {}, which was already complete", args.phase)
                        } else {
                            format!("does not block phase {}", args.phase)
                        }
                    ),
                    None,
                ),
            }
        }
        if !overrides.is_empty() {
            super::append(&store, &overrides, ui)?;
            ui.note(&format!(
                "recorded {} override(s) for phase {}",
                overrides.len(),
                args.phase
            ));
        }
        blockers.retain(|b| !accepted.contains(&b.id));
        for r in records.iter_mut().filter(|r| {
            overrides
                .iter()
                .any(|o| o.directive.as_ref() == Some(&r.id))
        }) {
            r.overridden = true;
        }
    }

    if !blockers.is_empty() {
        render_blocked(&args, &blockers, ui)?;
        return Ok(ExitCode::from(1));
    }
    let critical = records.iter().filter(|r| r.critical).count();
    let done = learning::phase_completed(&events, &args.phase).is_some();
    if records.is_empty() && !done && !args.allow_empty {
        // Nothing to gate is more often a mistyped name than a phase in
        // which nothing was in scope: the latter is said explicitly.
        let hint = format!(
            "{}; --allow-empty completes a phase in which nothing was in scope",
            unknown_phase_hint(&events, &args.phase)
        );
        return Err(Error::Usage {
            message: format!(
                "no directive was shown in phase `{}`: nothing recorded",
                args.phase
            ),
            hint: Some(hint),
        }
        .into());
    }
    if !done {
        let ids: Vec<&str> = records.iter().map(|r| r.id.as_str()).collect();
        let e = store
            .event("phase")
            .with("phase", args.phase.clone())
            .with("status", "complete")
            .with("directives", ids);
        super::append(&store, &[e], ui)?;
    }
    if args.format == Format::Json {
        ui.json(&serde_json::json!({
            "phase": args.phase,
            "complete": true,
            "already_complete": done,
            "directives": records,
            "blockers": [],
        }))?;
    } else {
        writeln!(
            ui.out,
            "phase {} {}: {} directive(s) shown, {} critical, none unresolved",
            args.phase,
            if done {
                "was already complete"
            } else {
                "complete"
            },
            records.len(),
            critical
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn render_blocked(args: &CompleteArgs, blockers: &[Blocker], ui: &mut Ui) -> std::io::Result<()> {
    if args.format == Format::Json {
        return ui.json(&serde_json::json!({
            "phase": args.phase,
            "complete": false,
            "blockers": blockers,
        }));
    }
    writeln!(ui.out, "PHASE_COMPLETE_BLOCKED:")?;
    for b in blockers {
        writeln!(
            ui.out,
            "- {}: {}",
            super::clean(&b.id),
            super::clean(&b.reason)
        )?;
    }
    ui.hint(&format!(
        "resolve them (ack, review verdicts) or accept with `git swarm phase complete {} --accept-violations ID,.. --justification TEXT`",
        args.phase
    ));
    Ok(())
}

/// What to say of `phase`, in which no directive was shown: the closest
/// phase that had some, or the phases that did, or where names come from.
pub(super) fn unknown_phase_hint(events: &[git_swarm::event::Event], phase: &str) -> String {
    let mut phases: Vec<&str> = events
        .iter()
        .filter(|e| e.kind == "shown")
        .filter_map(|e| e.data.get("phase").and_then(|v| v.as_str()))
        .collect();
    phases.sort_unstable();
    phases.dedup();
    match (
        super::ui::did_you_mean(phase, phases.iter().copied()),
        phases.is_empty(),
    ) {
        (Some(m), _) => format!(
            "did you mean `{m}`? (phases with directives shown: {})",
            super::ui::name_list(phases.iter().copied(), 12)
        ),
        (None, false) => format!(
            "phases with directives shown: {}",
            super::ui::name_list(phases.iter().copied(), 12)
        ),
        (None, true) => "the name is the one given to `git swarm inject --phase`".to_owned(),
    }
}
