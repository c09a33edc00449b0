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
    if predicates.is_empty() {
        writeln!(
            ui.out,
            "There are no tool predicates in .swarm/directives; there is nothing to trust."
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let fingerprint = trust::fingerprint(&predicates);
    let allow = super::run_tool::allowlist(&repo, ui);
    let n = predicates.len();
    let (s, are, were) = if n == 1 {
        ("", "is", "was")
    } else {
        ("s", "are", "were")
    };
    if args.show {
        let trusted = trust::is_trusted(&repo, &fingerprint);
        let how = if trusted {
            "trusted"
        } else {
            "not trusted: new, or changed since `git swarm trust` was last run here"
        };
        writeln!(
            ui.out,
            "The {n} tool predicate{s} {are} {how} ({fingerprint}):"
        )?;
        list(ui, &predicates, &allow)?;
        if !trusted {
            ui.hint("review them, then run `git swarm trust`; until then checks skip them");
        }
        return Ok(ExitCode::from(u8::from(!trusted)));
    }
    if trust::record_trust(&repo, &fingerprint)? {
        writeln!(
            ui.out,
            "Trusted {n} tool predicate{s} (recorded as swarm.trustedTools {fingerprint} in the local git config):"
        )?;
    } else {
        writeln!(ui.out, "The {n} tool predicate{s} {were} already trusted:")?;
    }
    list(ui, &predicates, &allow)?;
    Ok(ExitCode::SUCCESS)
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
