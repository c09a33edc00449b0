//! `git swarm run-tool`: plumbing to run one program the way a `tool:`
//! predicate runs, for scripts and for testing the sandbox.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::event::Clock;
use git_swarm::runner::{Allowlist, Limits, ToolOutcome, UserEnv, display_argv, run_tool};
use git_swarm::{Error, Repo, Store};

use super::{Outcome, Ui, clean};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The program and its arguments, after `--`.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "ARGV"
    )]
    argv: Vec<String>,
}

/// What the runner takes from the environment: `PATH` to find programs,
/// `HOME` for the programs' own user configuration, and the index git is
/// committing from (`GIT_INDEX_FILE`, made absolute: git gives it relative
/// to where it runs the hook, and tools run in the repository root).
pub fn user_env() -> UserEnv {
    UserEnv {
        path: std::env::var_os("PATH"),
        home: std::env::var_os("HOME").map(Into::into),
        index_file: std::env::var_os("GIT_INDEX_FILE")
            .filter(|index| !index.is_empty())
            .and_then(|index| std::path::absolute(index).ok()),
    }
}

/// The user's allowlist for `repo`, warning about values that are not program names.
pub fn allowlist(repo: &Repo, ui: &mut Ui) -> Allowlist {
    let allow = Allowlist::for_repo(repo, user_env());
    for value in allow.ignored() {
        ui.warning(
            &format!("swarm.allowTool value `{value}` is not a bare program name; it is ignored"),
            Some("give one program name per value, without a path: `git config --global --add swarm.allowTool NAME`"),
        );
    }
    allow
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    let repo = super::repo()?;
    let limits = match Store::open(&repo, Clock::default()) {
        Ok(store) => {
            ui.problems(&store.config_problems);
            Limits::from_config(&store.config.runner)
        }
        Err(Error::NotInitialised { .. }) => Limits::default(),
        Err(e) => return Err(e.into()),
    };
    let allow = allowlist(&repo, ui);
    let outcome = run_tool(&args.argv, &repo.root, &allow, &limits);
    let shown = display_argv(&args.argv);
    if let Some(output) = outcome.output() {
        // Escape sequences from the repository's content are shown, not sent.
        let shown = |text: String| {
            text.lines()
                .map(|line| format!("{}\n", clean(line)))
                .collect::<String>()
        };
        ui.out.write_all(shown(output.stdout.text()).as_bytes())?;
        std::io::stderr().write_all(shown(output.stderr.text()).as_bytes())?;
        if output.omitted() > 0 {
            ui.warning(
                &format!(
                    "{} bytes of output were read and not kept",
                    output.omitted()
                ),
                Some(&format!(
                    "the runner keeps the first and last {} KiB of each stream",
                    limits.output_cap / 2 / 1024
                )),
            );
        }
    }
    let code = match outcome {
        ToolOutcome::Passed { .. } => 0,
        ToolOutcome::Failed { code, signal, .. } => {
            let how = match (code, signal) {
                (Some(c), _) => format!("exited with status {c}"),
                (None, Some(s)) => format!("was killed by signal {s}"),
                (None, None) => "failed".to_owned(),
            };
            ui.error(&format!("`{shown}` {how}"), None, None);
            1
        }
        ToolOutcome::TimedOut { after, .. } => {
            ui.error(
                &format!(
                    "`{shown}` timed out after {} s; its process group was killed",
                    after.as_secs_f64()
                ),
                None,
                Some("raise `runner.timeout_secs` in .swarm/config.toml if it needs longer"),
            );
            1
        }
        ToolOutcome::Refused(r) => {
            ui.error(
                &format!("refused to run `{shown}`: {}", r.message),
                None,
                Some(&r.hint),
            );
            2
        }
        ToolOutcome::Error { message, hint } => {
            ui.error(&message, None, hint.as_deref());
            3
        }
    };
    Ok(ExitCode::from(code))
}
