//! `git swarm hook NAME [ARGS]...`: what the shims installed by `git swarm
//! hooks install` call. Hidden; git is its only caller.
//!
//! A hook must never stand between a user and git for a reason that is not
//! a failed check: skipping, an uninitialised repository, a hook git has
//! that git-swarm has not (a shim of another version may call it) or any
//! error while running (a repository it cannot read, a lock, a pushed
//! object it cannot walk) all exit 0, the last two with a warning. A name
//! that is no git hook at all was typed by a person (`git swarm hook
//! install` for `hooks install`): that is bad usage, exit 2.

use std::ffi::OsString;
use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;

use git_swarm::change::Selection;
use git_swarm::hooks::{self, PushUpdate};
use git_swarm::{Error, Store};

use super::{CliError, Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The hook git is running: pre-commit, pre-push, post-merge or
    /// post-checkout; or `agent`, for an agent harness's hook (`agent
    /// HARNESS EVENT`, the payload on standard input).
    name: String,
    /// The arguments git gave the hook.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<OsString>,
}

/// `hook agent ARGS` (see [`super::hook_agent`]), skipped like every hook
/// with `GIT_SWARM_SKIP=1`.
pub fn run_agent(args: &[OsString], ui: &mut Ui) -> Outcome {
    if std::env::var_os(hooks::SKIP_ENV).is_some_and(|v| v == "1") {
        return Ok(ExitCode::SUCCESS);
    }
    super::hook_agent::run(args, ui)
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    if args.name == "agent" {
        return run_agent(&args.args, ui);
    }
    if !hooks::GIT_HOOKS.contains(&args.name.as_str()) {
        return Err(not_a_hook(&args.name).into());
    }
    if std::env::var_os(hooks::SKIP_ENV).is_some_and(|v| v == "1") {
        return Ok(ExitCode::SUCCESS);
    }
    let Some(&hook) = hooks::HOOKS.iter().find(|&&h| h == args.name) else {
        ui.warning(
            &format!(
                "git-swarm has no `{}` hook; nothing to do",
                args.name.escape_debug()
            ),
            Some("`git swarm hooks install` writes shims that call the hooks it has"),
        );
        return Ok(ExitCode::SUCCESS);
    };
    // The one place where a hook's errors become exit codes: only a failed
    // check blocks; anything else is said and git carries on.
    match run_hook(hook, args, ui) {
        Err(e) => not_blocking(ui, hook, e).map(|()| ExitCode::SUCCESS),
        ok => ok,
    }
}

fn run_hook(hook: &str, args: Args, ui: &mut Ui) -> Outcome {
    // git writes the pushed refs on a pre-push hook's stdin; a person running
    // this by hand at a terminal has none to give, so do not wait for them.
    let mut stdin = Vec::new();
    if hook == "pre-push" && !std::io::stdin().is_terminal() {
        std::io::stdin().read_to_end(&mut stdin)?;
    }
    if std::env::var_os("GIT_SWARM_TRACE").is_some_and(|v| v == "1") {
        trace(&args, &stdin);
    }
    let repo = super::repo()?;
    // Opened without reporting `config.toml`'s problems: the check reports
    // them itself, and the refresh below does it here, so each is said once.
    let store = match Store::open(&repo, super::clock()?) {
        Ok(store) => store,
        Err(Error::NotInitialised { .. }) => return Ok(ExitCode::SUCCESS),
        Err(e) => return Err(e.into()),
    };
    match hook {
        "post-merge" | "post-checkout" => {
            ui.problems(&store.config_problems);
            git_swarm::index::refresh(&store)?;
            Ok(ExitCode::SUCCESS)
        }
        _ => {
            let updates = if hook == "pre-push" {
                hooks::parse_push_updates(&stdin)?
            } else {
                Vec::new()
            };
            run_check(&repo, hook, &updates, ui)
        }
    }
}

/// The check a blocking hook runs. pre-commit: `check --staged --record`.
/// pre-push: each pushed commit on its own (see [`hooks::push_selections`]),
/// each commit once however many pushed refs bring it. A `.swarm/` file a
/// commit brings that `validate` rejects blocks it; a directive file broken
/// before, that the commit leaves alone, is reported and does not block
/// (unless, checked as written, it fails closed in its own scope); nor
/// does a pushed ref or commit that cannot be checked (the others still
/// are, and block).
fn run_check(repo: &git_swarm::Repo, hook: &str, updates: &[PushUpdate], ui: &mut Ui) -> Outcome {
    use super::check::{CheckFormat, Request, run_request};
    let request = |selection| Request {
        selection,
        directive: None,
        strict: false,
        record: hook == "pre-commit",
        format: CheckFormat::Text,
        hook: true,
        knowledge: None,
    };
    let selections = match hook {
        "pre-push" => {
            let gix_repo = super::check::open_gix(repo)?;
            let mut all = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for update in updates {
                match hooks::push_selections(&gix_repo, update) {
                    // `--follow-tags` pushes a branch and a tag on it: the
                    // same commits, checked (and reported) once.
                    Ok(selections) => all.extend(selections.into_iter().filter(|s| match s {
                        Selection::Commit(id) => seen.insert(id.clone()),
                        _ => true,
                    })),
                    Err(e) => ui.warning(
                        &format!(
                            "git-swarm's pre-push hook did not check the commits pushed to {}: {e}",
                            update.remote_ref
                        ),
                        e.hint().as_deref(),
                    ),
                }
            }
            // The pre-commit framework keeps git's stdin and names the pushed
            // range in its own variables instead.
            if updates.is_empty()
                && let (Some(from), Some(to)) = (
                    std::env::var_os("PRE_COMMIT_FROM_REF"),
                    std::env::var_os("PRE_COMMIT_TO_REF"),
                )
                && let (Some(from), Some(to)) = (from.to_str(), to.to_str())
            {
                all.push(Selection::Range {
                    from: from.to_owned(),
                    to: to.to_owned(),
                    symmetric: false,
                });
            }
            all
        }
        _ => vec![Selection::Staged],
    };
    let mut verdicts = Vec::new();
    for selection in selections {
        match run_request(&request(selection), ui) {
            Ok(verdict) => verdicts.push(verdict),
            // One commit that cannot be checked does not let the others through.
            Err(e) => not_blocking(ui, hook, e)?,
        }
    }
    if verdicts.iter().any(|v| v.exit_code() != ExitCode::SUCCESS) {
        say_who_fixes_what(&verdicts, ui);
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// The last words of a blocked hook: what is to fix — a `.swarm/` file
/// the commit brings, a directive whose own file is broken, or the change
/// — and how.
fn say_who_fixes_what(verdicts: &[super::check::Verdict], ui: &mut Ui) {
    const SKIP: &str = "GIT_SWARM_SKIP=1 skips git-swarm's hooks once";
    let mut files: Vec<&str> = verdicts
        .iter()
        .flat_map(|v| v.broken_files.iter().map(String::as_str))
        .collect();
    files.sort_unstable();
    files.dedup();
    let mut directives: Vec<(&str, &str)> = verdicts
        .iter()
        .flat_map(|v| &v.broken_directives)
        .map(|(id, path)| (id.as_str(), path.as_str()))
        // A file the commit brings is said once, as a file.
        .filter(|(_, path)| !files.contains(path))
        .collect();
    directives.sort_unstable();
    directives.dedup();
    // Blocked by a directive that was evaluated: the change is to fix.
    let by_change = verdicts
        .iter()
        .any(|v| v.blocking > v.broken_directives.len());
    if !files.is_empty() {
        ui.error(
            &format!(
                "the commit brings {} file{} under .swarm/ that `git swarm validate` rejects: {}",
                files.len(),
                if files.len() == 1 { "" } else { "s" },
                files.join(", ")
            ),
            None,
            Some(&format!(
                "fix {} as the problems above say, `git add` {} and commit again; {SKIP}",
                if files.len() == 1 { "it" } else { "them" },
                if files.len() == 1 { "it" } else { "them" },
            )),
        );
    }
    for (id, path) in &directives {
        ui.error(
            &format!(
                "directive `{id}` cannot be evaluated: its own file {path} is broken (the problems above), not the change"
            ),
            None,
            Some(&format!(
                "fix {path} (`git swarm validate` says where) and commit the fix: until then it blocks every change in its scope; {SKIP}"
            )),
        );
    }
    if by_change {
        ui.hint(&format!(
            "fix the change, or mark the directive `warn` in review; {SKIP}"
        ));
    }
}

/// The error for `git swarm hook NAME` where NAME is no hook of git's.
fn not_a_hook(name: &str) -> Error {
    let shown = name.escape_debug();
    let hooks_command = ["install", "uninstall", "status"].contains(&name);
    Error::usage(
        format!("`{shown}` is not a git hook: `git swarm hook NAME` is what git's hooks call"),
        if hooks_command {
            format!("did you mean `git swarm hooks {name}`?")
        } else {
            "`git swarm hooks install` installs the hooks; `git swarm help hooks` says more"
                .to_owned()
        },
    )
}

/// Says what went wrong and that git carries on. A closed stdout is passed
/// up: nobody is reading any more, and main exits quietly.
fn not_blocking(ui: &mut Ui, hook: &str, e: CliError) -> Result<(), CliError> {
    let hint = match &e {
        CliError::Io(io) if io.kind() == std::io::ErrorKind::BrokenPipe => return Err(e),
        CliError::Swarm(e) => e.hint(),
        CliError::Io(_) => None,
    };
    ui.warning(
        &format!("git-swarm's {hook} hook did not run: {e}"),
        hint.as_deref(),
    );
    Ok(())
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
