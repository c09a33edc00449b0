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
#[expect(
    dead_code,
    reason = "read by the real check that replaces `todo_check`"
)]
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
            todo_check(&store, &call, ui)
        }
    }
}

/// TODO(checks): the check a blocking hook runs. Replace this with the real
/// one: pre-commit is `check --staged --record`; pre-push checks the pushed
/// ranges in `call.updates` (a new branch: the commits on no remote ref; a
/// deletion: nothing). Return exit 1 to block the commit or push.
fn todo_check(_store: &Store, _call: &HookCall, _ui: &mut Ui) -> Outcome {
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
