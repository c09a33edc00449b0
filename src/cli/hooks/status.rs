//! `git swarm hooks status`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::hooks::{self, HookState};

use super::super::{Format, Outcome, Ui};

/// Show, hook by hook, whether git-swarm's hooks are installed.
///
/// States: installed (git-swarm's shim), wrapped (git-swarm's shim, running
/// the hook that was there before), absent, foreign (a hook git-swarm did
/// not write and does not run in). Also names a hook framework (husky,
/// lefthook, pre-commit) found in the repository.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    let repo = super::super::repo()?;
    let dir = hooks::hooks_dir(&repo)?;
    let statuses = hooks::status(&dir)?;
    let frameworks = hooks::detect_frameworks(&repo, &dir);
    let default = dir == hooks::default_hooks_dir(&repo);
    let shown = super::shown(&repo, &dir);
    if args.format == Format::Json {
        return ui.json_result(&serde_json::json!({
            "hooks_dir": shown,
            "from_core_hooks_path": !default,
            "hooks": statuses,
            "frameworks": frameworks,
        }));
    }
    let whence = if default {
        ""
    } else {
        " (from core.hooksPath)"
    };
    writeln!(ui.out, "hooks dir: {shown}{whence}")?;
    for s in &statuses {
        let mut line = match s.state {
            HookState::Installed => "installed".to_owned(),
            HookState::Wrapped => format!(
                "installed, wrapping the earlier hook kept as {}",
                s.original.as_deref().unwrap_or(hooks::KEPT_DIR)
            ),
            HookState::Absent => "absent".to_owned(),
            HookState::Foreign => {
                "foreign: a hook git-swarm did not write; git-swarm does not run in it".to_owned()
            }
        };
        let ours = matches!(s.state, HookState::Installed | HookState::Wrapped);
        if ours && !s.current {
            line.push_str(" (outdated or not executable; `git swarm hooks install` fixes it)");
        }
        if let Some(original) = s.original.as_deref().filter(|_| s.stray_original) {
            line.push_str(&format!(" ({original} is there without git-swarm's shim)"));
        }
        writeln!(ui.out, "  {:<14} {line}", s.name)?;
    }
    for f in &frameworks {
        writeln!(
            ui.out,
            "framework: {} ({}); see `git swarm hooks install` for how to call git-swarm from it",
            f.framework.name(),
            f.evidence.join(", ")
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
