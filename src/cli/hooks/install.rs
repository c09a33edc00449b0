//! `git swarm hooks install`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::hooks::{self, Detected, Framework, Installed};

use super::super::{Outcome, Ui};

/// Install git-swarm's git hooks: pre-commit, pre-push, post-merge, post-checkout.
///
/// Writes a shim per hook into the directory git runs hooks from
/// (`core.hooksPath` if set, else the hooks directory all worktrees share),
/// creating it if needed. A hook that is already there is moved into
/// `swarm-orig/` beside the shims and run first by the shim, under its own
/// name; its exit status still counts. Running install again changes
/// nothing, and `git swarm hooks uninstall` puts back exactly what was
/// there.
///
/// When husky, lefthook or the pre-commit framework manages the hooks,
/// install refuses (exit 1) and shows how to call git-swarm from that
/// framework instead.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Install even though husky, lefthook or pre-commit manages the hooks.
    #[arg(long)]
    force: bool,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    let repo = super::super::repo()?;
    let dir = hooks::hooks_dir(&repo)?;
    let shown = super::shown(&repo, &dir);
    let frameworks = hooks::detect_frameworks(&repo, &dir);
    if !frameworks.is_empty() && !args.force {
        let names: Vec<_> = frameworks.iter().map(|d| d.framework.name()).collect();
        ui.error(
            &format!(
                "this repository's hooks are managed by {}; git-swarm's own hooks would go around it",
                names.join(" and ")
            ),
            None,
            Some("call git-swarm from it as shown on stdout, or run `git swarm hooks install --force` to install the shims anyway"),
        );
        for detected in &frameworks {
            write_instructions(ui, detected)?;
        }
        return Ok(ExitCode::from(1));
    }

    let report = hooks::install(&dir)?;
    if !report.changed() && !report.refused() {
        writeln!(
            ui.out,
            "git-swarm's hooks are already installed in {shown}; nothing changed."
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    if report.created_dir {
        writeln!(ui.out, "Created {shown}.")?;
    }
    writeln!(ui.out, "Installed git-swarm's hooks in {shown}:")?;
    for (name, what) in &report.hooks {
        let line = match what {
            Installed::Added => "added".to_owned(),
            Installed::Wrapped { .. } => format!(
                "added; the hook that was there is kept as {}/{name} and runs first",
                hooks::KEPT_DIR
            ),
            Installed::Updated => "updated to this version".to_owned(),
            Installed::Unchanged => "already installed".to_owned(),
            Installed::Refused { reason, hint } => {
                ui.error(reason, Some(&shown), Some(hint));
                "left alone (see above)".to_owned()
            }
        };
        writeln!(ui.out, "  {name:<14} {line}")?;
    }
    if dir != hooks::default_hooks_dir(&repo) {
        if hooks::is_in_repository(&repo, &dir) {
            writeln!(ui.out, "core.hooksPath is set, so they went there.")?;
        } else {
            writeln!(
                ui.out,
                "core.hooksPath is set to a directory outside this repository, so they went there; every repository using that directory runs them (they do nothing where there is no .swarm/)."
            )?;
        }
    }
    if !repo.root.join(git_swarm::store::SWARM_DIR).is_dir() {
        writeln!(
            ui.out,
            "This repository has no .swarm/ yet: the hooks do nothing until `git swarm init`."
        )?;
    }
    Ok(ExitCode::from(u8::from(report.refused())))
}

fn write_instructions(ui: &mut Ui, detected: &Detected) -> std::io::Result<()> {
    let text = match detected.framework {
        Framework::Husky => HUSKY,
        Framework::Lefthook => LEFTHOOK,
        Framework::PreCommit => PRE_COMMIT,
    };
    writeln!(
        ui.out,
        "{} (found: {}):",
        detected.framework.name(),
        detected.evidence.join(", ")
    )?;
    write!(ui.out, "{text}")
}

const HUSKY: &str = r#"  add a line to each hook file in .husky/ (create the ones that are missing):
    .husky/pre-commit     git swarm hook pre-commit
    .husky/pre-push       git swarm hook pre-push "$@"
    .husky/post-merge     git swarm hook post-merge "$@"
    .husky/post-checkout  git swarm hook post-checkout "$@"
"#;

const LEFTHOOK: &str = r#"  add to lefthook.yml:
    pre-commit:
      commands:
        git-swarm:
          run: git swarm hook pre-commit
    pre-push:
      commands:
        git-swarm:
          run: git swarm hook pre-push {1} {2}
          use_stdin: true
    post-merge:
      commands:
        git-swarm:
          run: git swarm hook post-merge {1}
    post-checkout:
      commands:
        git-swarm:
          run: git swarm hook post-checkout {1} {2} {3}
"#;

const PRE_COMMIT: &str = r#"  add to .pre-commit-config.yaml (git-swarm must be on PATH):
    - repo: local
      hooks:
        - id: git-swarm-check
          name: git-swarm check
          entry: git swarm hook pre-commit
          language: system
          pass_filenames: false
          always_run: true
          stages: [pre-commit]
  or point a `repo:` entry at git-swarm's repository, which ships .pre-commit-hooks.yaml
  (hook ids git-swarm-check and git-swarm-pre-push).
"#;
