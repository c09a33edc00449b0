//! `git swarm hook NAME [ARGS]...`: what the shims installed by `git swarm
//! hooks install` call. Hidden; git is its only caller.
//!
//! A hook must never stand between a user and git for a reason that is not
//! a failed check: skipping, an uninitialised repository, an unknown hook
//! name or an environment error all exit 0 (the last two with a warning).

use std::ffi::OsString;
use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;

use git_swarm::hooks::{self, PushUpdate};
use git_swarm::{Error, Store};

use super::{Outcome, Ui};

/// Run git-swarm's part of a git hook (called by the installed shims).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The hook git is running: pre-commit, pre-push, post-merge or post-checkout.
    name: String,
    /// The arguments git gave the hook.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<OsString>,
}

/// Everything a blocking hook's check gets from git.
#[derive(Debug)]
#[expect(dead_code, reason = "args are kept for the hooks that will read them")]
pub struct HookCall {
    pub name: Hook,
    /// As git passed them: none for pre-commit; `<remote name> <remote url>` for pre-push.
    pub args: Vec<OsString>,
    /// pre-push only: the ref lines git wrote on stdin, parsed (empty otherwise).
    pub updates: Vec<PushUpdate>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hook {
    PreCommit,
    PrePush,
    PostMerge,
    PostCheckout,
}

impl Hook {
    fn as_str(self) -> &'static str {
        match self {
            Hook::PreCommit => "pre-commit",
            Hook::PrePush => "pre-push",
            Hook::PostMerge => "post-merge",
            Hook::PostCheckout => "post-checkout",
        }
    }

    fn parse(name: &str) -> Option<Hook> {
        Some(match name {
            "pre-commit" => Hook::PreCommit,
            "pre-push" => Hook::PrePush,
            "post-merge" => Hook::PostMerge,
            "post-checkout" => Hook::PostCheckout,
            _ => return None,
        })
    }
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    if std::env::var_os(hooks::SKIP_ENV).is_some_and(|v| v == "1") {
        return Ok(ExitCode::SUCCESS);
    }
    let Some(hook) = Hook::parse(&args.name) else {
        ui.warning(
            &format!(
                "git-swarm has no `{}` hook; nothing to do",
                args.name.escape_debug()
            ),
            Some("`git swarm hooks install` writes shims that call the hooks it has"),
        );
        return Ok(ExitCode::SUCCESS);
    };
    // git writes the pushed refs on a pre-push hook's stdin; a person running
    // this by hand at a terminal has none to give, so do not wait for them.
    let mut stdin = Vec::new();
    if hook == Hook::PrePush && !std::io::stdin().is_terminal() {
        std::io::stdin().read_to_end(&mut stdin)?;
    }
    if std::env::var_os("GIT_SWARM_TRACE").is_some_and(|v| v == "1") {
        trace(&args, &stdin);
    }
    let store = match super::store(ui) {
        Ok(store) => store,
        Err(Error::NotInitialised { .. }) => return Ok(ExitCode::SUCCESS),
        Err(e) => return Ok(not_blocking(ui, &args.name, &e)),
    };
    match hook {
        Hook::PostMerge | Hook::PostCheckout => {
            if let Err(e) = git_swarm::index::refresh(&store) {
                return Ok(not_blocking(ui, &args.name, &e));
            }
            Ok(ExitCode::SUCCESS)
        }
        Hook::PreCommit | Hook::PrePush => {
            let updates = if hook == Hook::PrePush {
                match hooks::parse_push_updates(&stdin) {
                    Ok(updates) => updates,
                    Err(e) => return Ok(not_blocking(ui, &args.name, &e)),
                }
            } else {
                Vec::new()
            };
            let call = HookCall {
                name: hook,
                args: args.args,
                updates,
            };
            run_check(&store, &call, ui)
        }
    }
}

/// The check a blocking hook runs. pre-commit: `check --staged --record`.
/// pre-push: each pushed range (a new branch: its commits that are on no
/// remote ref; a deletion: nothing). A directive file that does not parse is
/// reported and does not block.
fn run_check(_store: &Store, call: &HookCall, ui: &mut Ui) -> Outcome {
    use super::check::{Broken, CheckFormat, Request, run_request};
    let request = |selection| Request {
        selection,
        directive: None,
        strict: false,
        record: call.name == Hook::PreCommit,
        format: CheckFormat::Text,
        broken: Broken::Warn,
        quiet: true,
    };
    let selections = match call.name {
        Hook::PrePush => {
            let repo = super::repo()?;
            let gix_repo = super::check::open_gix(&repo)?;
            let mut all = Vec::new();
            for update in &call.updates {
                all.extend(hooks::push_selections(&gix_repo, update)?);
            }
            // The pre-commit framework keeps git's stdin and names the pushed
            // range in its own variables instead.
            if call.updates.is_empty()
                && let (Some(from), Some(to)) = (
                    std::env::var_os("PRE_COMMIT_FROM_REF"),
                    std::env::var_os("PRE_COMMIT_TO_REF"),
                )
                && let (Some(from), Some(to)) = (from.to_str(), to.to_str())
            {
                all.push(git_swarm::change::Selection::Range {
                    from: from.to_owned(),
                    to: to.to_owned(),
                    symmetric: false,
                });
            }
            all
        }
        _ => vec![git_swarm::change::Selection::Staged],
    };
    let mut blocked = false;
    for selection in selections {
        match run_request(&request(selection), ui) {
            Ok(code) if code == ExitCode::SUCCESS => {}
            Ok(_) => blocked = true,
            Err(super::CliError::Swarm(e)) => return Ok(not_blocking(ui, call.name.as_str(), &e)),
            Err(e) => return Err(e),
        }
    }
    if blocked {
        ui.hint("fix the change, or mark the directive `warn` in review; GIT_SWARM_SKIP=1 skips git-swarm's hooks once");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// Says what went wrong and lets git carry on.
fn not_blocking(ui: &mut Ui, name: &str, e: &Error) -> ExitCode {
    ui.warning(
        &format!("git-swarm's {name} hook did not run: {e}"),
        e.hint().as_deref(),
    );
    ExitCode::SUCCESS
}

/// With GIT_SWARM_TRACE=1, one stderr line per hook run (and per ref line
/// of a push), so that tests and curious users can see the hook ran.
fn trace(args: &Args, stdin: &[u8]) {
    let mut line = format!("git-swarm: hook {}", args.name);
    for a in &args.args {
        line.push(' ');
        line.push_str(&a.to_string_lossy());
    }
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{}", super::clean(&line));
    for ref_line in String::from_utf8_lossy(stdin).lines() {
        let _ = writeln!(err, "git-swarm:   {}", super::clean(ref_line));
    }
}
