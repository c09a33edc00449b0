//! `git swarm trust`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::predicate::Predicate;
use git_swarm::runner::Allowlist;
use git_swarm::trust::{self, ToolPredicate};

use super::{Outcome, Ui, clean};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Say whether the current set is trusted (exit 1 if not); record nothing.
    #[arg(long)]
    show: bool,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    let repo = super::repo()?;
    let store = super::store(ui)?;
    let loaded = super::load_index(&store, ui)?;
    let predicates = trust::tool_predicates(trust::verify_entries(
        loaded
            .index
            .directives
            .iter()
            .filter_map(|e| e.directive.as_ref()),
    ));
    // The handoffs' commands are a set of their own, trusted beside the
    // directives': a new handoff must not make the directives' set untrusted.
    let (handoffs, problems) = git_swarm::handoff::load_all(&store)?;
    ui.problems(&problems);
    let criteria = git_swarm::handoff::check::tool_criteria(&handoffs);
    if predicates.is_empty() && criteria.is_empty() {
        writeln!(
            ui.out,
            "There are no tool predicates in .swarm/directives; there is nothing to trust."
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let allow = super::run_tool::allowlist(&repo, ui);
    let mut untrusted = false;
    for (set, what, fingerprint) in [
        (
            &predicates,
            "tool predicate",
            trust::fingerprint(&predicates),
        ),
        (
            &criteria,
            "handoff tool criterion",
            trust::criteria_fingerprint(&criteria),
        ),
    ] {
        if set.is_empty() {
            continue;
        }
        untrusted |= one_set(&repo, set, what, fingerprint, args.show, &allow, ui)?;
    }
    if args.show && untrusted {
        ui.hint("review them, then run `git swarm trust`; until then checks skip them");
    }
    Ok(ExitCode::from(u8::from(args.show && untrusted)))
}

/// Shows or records one set; true when `--show` finds it untrusted.
fn one_set(
    repo: &git_swarm::Repo,
    predicates: &[ToolPredicate],
    what: &str,
    fingerprint: String,
    show: bool,
    allow: &Allowlist,
    ui: &mut Ui,
) -> Result<bool, super::CliError> {
    let n = predicates.len();
    let (s, are, were) = if n == 1 {
        ("", "is", "was")
    } else if what.ends_with("criterion") {
        ("", "are", "were")
    } else {
        ("s", "are", "were")
    };
    let what = if n != 1 && what.ends_with("criterion") {
        "handoff tool criteria"
    } else {
        what
    };
    if show {
        let trusted = trust::is_trusted(repo, &fingerprint);
        let how = if trusted {
            "trusted"
        } else {
            "not trusted: new, or changed since `git swarm trust` was last run here"
        };
        writeln!(ui.out, "The {n} {what}{s} {are} {how} ({fingerprint}):")?;
        list(ui, predicates, allow)?;
        return Ok(!trusted);
    }
    if trust::record_trust(repo, &fingerprint)? {
        writeln!(
            ui.out,
            "Trusted {n} {what}{s} (recorded as swarm.trustedTools {fingerprint} in the local git config):"
        )?;
    } else {
        writeln!(ui.out, "The {n} {what}{s} {were} already trusted:")?;
    }
    list(ui, predicates, allow)?;
    Ok(false)
}

fn list(ui: &mut Ui, predicates: &[ToolPredicate], allow: &Allowlist) -> std::io::Result<()> {
    let width = predicates
        .iter()
        .map(|p| p.directive.len())
        .max()
        .unwrap_or(0);
    for p in predicates {
        let program = match Predicate::parse(&p.predicate) {
            Ok(Predicate::Tool { argv }) => argv.into_iter().next(),
            _ => None,
        };
        let note = match program {
            Some(program) if !allow.allows(&program) => {
                format!("  (`{program}` is not on your allowlist: it will not run)")
            }
            _ => String::new(),
        };
        writeln!(
            ui.out,
            "  {:<width$}  {}{}",
            clean(&p.directive),
            clean(&p.predicate),
            clean(&note)
        )?;
    }
    Ok(())
}
