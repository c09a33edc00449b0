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
    let (store, review) = super::store_and_review(ui)?;
    let loaded = super::load_index(&store, ui)?;
    let index = &loaded.index;
    // What is exported reaches agents: only reviewed directives, unless the
    // user's git config lets the others through (marked, for `mark`).
    let mut withheld = Vec::new();
    let directives: Vec<std::borrow::Cow<'_, git_swarm::directive::Directive>> = index
        .directives
        .iter()
        .filter_map(|e| Some((e.directive.as_ref()?, review.is_reviewed(e.blob.as_ref()))))
        .filter_map(|(d, reviewed)| {
            if !review.shows(reviewed) {
                if d.status == git_swarm::directive::Status::Active {
                    withheld.push(d.id.clone());
                }
                None
            } else if !reviewed && review.policy == git_swarm::reviewed::Unreviewed::Mark {
                Some(std::borrow::Cow::Owned(git_swarm::reviewed::marked(d)))
            } else {
                Some(std::borrow::Cow::Borrowed(d))
            }
        })
        .collect();
    withheld.sort();
    if let Some(line) = git_swarm::directive_loop::inject::withheld_line(&withheld, &review) {
        ui.note(&line);
    }
    let entries: Vec<Entry<'_>> = directives
        .iter()
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
