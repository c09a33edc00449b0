//! `git swarm export`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::export::{Action, Change, Entry, Target};
use serde::Serialize;

use super::{Format, Outcome, Ui};

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum TargetArg {
    /// A marked block in AGENTS.md (created when missing) and in CLAUDE.md when present.
    AgentsMd,
    /// One `.claude/rules/<id>.md` per directive, `paths:` from its paths.
    ClaudeRules,
    /// One `.cursor/rules/<id>.mdc` per directive, `globs` from its paths.
    CursorRules,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Where to write the directives.
    #[arg(value_enum)]
    target: TargetArg,
    /// Say what would change; write nothing.
    #[arg(long)]
    dry_run: bool,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

#[derive(Serialize)]
struct Report<'a> {
    target: Target,
    dry_run: bool,
    files: &'a [Change],
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    let target = match args.target {
        TargetArg::AgentsMd => Target::AgentsMd,
        TargetArg::ClaudeRules => Target::ClaudeRules,
        TargetArg::CursorRules => Target::CursorRules,
    };
    let store = super::store(ui)?;
    let loaded = super::load_index(&store, ui)?;
    let index = &loaded.index;
    let entries: Vec<Entry<'_>> = index
        .directives
        .iter()
        .filter_map(|e| e.directive.as_ref())
        .map(|d| Entry {
            directive: d,
            priority: index.fold.effective(d).0,
        })
        .collect();
    let changes = git_swarm::export::plan(&store.root, target, &entries)?;
    if !args.dry_run {
        git_swarm::export::apply(&store.root, &changes)?;
    }
    if args.format == Format::Json {
        return ui.json_result(&Report {
            target,
            dry_run: args.dry_run,
            files: &changes,
        });
    }
    let would = if args.dry_run { "would be " } else { "" };
    for c in &changes {
        match c.action {
            Action::Unchanged => {}
            Action::Skipped => ui.warning(
                &format!("skipped {}: {}", c.path, c.reason.as_deref().unwrap_or("")),
                Some("git-swarm writes only its own files and never through a link; move that one away to have git-swarm's written there"),
            ),
            a => writeln!(ui.out, "{}: {would}{}", c.path, a.as_str())?,
        }
    }
    let touched = changes
        .iter()
        .filter(|c| matches!(c.action, Action::Written | Action::Removed))
        .count();
    let unchanged = changes
        .iter()
        .filter(|c| c.action == Action::Unchanged)
        .count();
    if touched == 0 {
        writeln!(
            ui.out,
            "Nothing to change: {unchanged} file{} already up to date.",
            if unchanged == 1 { "" } else { "s" }
        )?;
    } else if unchanged > 0 {
        writeln!(
            ui.out,
            "{unchanged} file{} unchanged.",
            if unchanged == 1 { "" } else { "s" }
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
