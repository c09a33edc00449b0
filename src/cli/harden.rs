//! `git swarm harden`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::harden::{self, By, Curator, Outcome as Done, curator};

use super::{Format, Outcome, Ui, clean};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Send at most N entries to the curator in this run (hand-fixed entries are always promoted).
    #[arg(long, value_name = "N", default_value_t = harden::DEFAULT_MAX)]
    max: usize,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    let repo = super::repo()?;
    let store = super::store(ui)?;
    let curator = Curator::from_config(&repo, super::run_tool::user_env())?;
    let mut torn = Vec::new();
    let report = harden::harden(
        &store,
        &repo.root,
        curator.as_ref(),
        args.max,
        &mut |event| {
            torn.extend(store.append(std::slice::from_ref(event))?);
            Ok(())
        },
    )?;
    super::report_torn(&store, &torn, ui);
    ui.capped(&report.problems);
    let code = ExitCode::from(u8::from(report.conflicts() > 0));
    if args.format == Format::Json {
        ui.json(&report)?;
        return Ok(code);
    }
    if report.entries.is_empty() {
        writeln!(ui.out, "The quarantine is empty: nothing to harden.")?;
        return Ok(code);
    }
    for w in &report.entries {
        // A file name under quarantine/ came in a pull request, like its contents.
        let id = clean(&w.id);
        let reason = w.reason.as_deref().map(clean).unwrap_or_default();
        let calls = match w.calls {
            0 => String::new(),
            1 => " (1 curator call)".to_owned(),
            n => format!(" ({n} curator calls)"),
        };
        let line = match w.outcome {
            Done::Promoted => {
                let by = match w.by {
                    Some(By::Curator) => "by the curator",
                    _ => "by hand",
                };
                let path = clean(w.path.as_deref().unwrap_or_default());
                format!("promoted {id} {by}{calls}: {path}")
            }
            Done::Repaired => format!("repaired {id}: {reason}"),
            Done::Conflict => format!("conflict {id}: {reason}"),
            Done::Unreadable => format!("unreadable {id}: {reason}"),
            Done::Kept => format!("kept {id}{calls}: {reason}"),
            Done::RetireCandidate => format!("retire candidate {id}{calls}: {reason}"),
            Done::Skipped => format!("skipped {id}: {reason}"),
        };
        writeln!(ui.out, "{line}")?;
    }
    let tools: Vec<String> = report
        .entries
        .iter()
        .flat_map(|w| {
            w.untrusted_tools
                .iter()
                .map(|t| format!("{}: {}", clean(&w.id), clean(t)))
        })
        .collect();
    if !tools.is_empty() {
        ui.warning(
            &format!(
                "the curator wrote tool predicates, which do not run until you trust them: {}",
                tools.join(", ")
            ),
            Some("read them in the new directive files, then run `git swarm trust`"),
        );
    }
    if let Some(unusable) = &report.unusable {
        ui.warning(&unusable.message, Some(&unusable.hint));
    }
    let untouched = report
        .entries
        .iter()
        .filter(|w| w.outcome == Done::Skipped)
        .count();
    if curator.is_none() && untouched > 0 {
        ui.note(&format!(
            "No curator is configured: {untouched} {} the gate stay{} in quarantine until fixed by hand.",
            if untouched == 1 { "entry that fails" } else { "entries that fail" },
            if untouched == 1 { "s" } else { "" }
        ));
        ui.hint(&format!(
            "fix an entry in its .swarm/quarantine/ file and run `git swarm harden` again, or set a curator program: `git config {} 'PROGRAM ARGS'` (see docs/harden.md)",
            curator::CURATOR_KEY
        ));
    }
    if let Some(quota) = &report.quota {
        ui.note(&format!(
            "Curator calls today: {} of {} (git config {}).",
            quota.used,
            quota.limit,
            curator::QUOTA_KEY
        ));
    }
    if report.conflicts() > 0 {
        ui.hint("a conflict is an entry both in directives/ and quarantine/: keep the one you want and delete the other");
    }
    Ok(code)
}
