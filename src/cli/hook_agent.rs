//! `git-swarm-agent-hook <harness> <event>` (and `git-swarm hook agent
//! <harness> <event>`, which older installs call): what the entries `git
//! swarm agents install` writes into an agent harness's hook config call.
//! The harness's payload comes on standard input; the answer, when there
//! is one, goes to standard output in the harness's own format.
//!
//! It fails open: a hook must never break the agent's session, so any
//! error (a malformed payload, an unreadable store, a lock held too long)
//! is one `warning:` line on stderr, nothing on stdout, and exit 0. An
//! uninitialised repository, or none, is not git-swarm's to speak for:
//! exit 0 silently.

use std::ffi::OsString;
use std::io::{IsTerminal, Read, Write};
use std::path::Path;
use std::process::ExitCode;

use serde_json::Value;

use git_swarm::agent_hook::{
    self, Agent, Briefing, Event, Harness, Payload, roles, state, tool_call,
};
use git_swarm::directive_loop::{acks, escalation, inject as loop_inject};
use git_swarm::{Error, Repo, Store};

use super::inject::{Prepared, prepare, prepare_with_index};
use super::reflect::micro::Home;
use super::{CliError, Outcome, Ui};

/// Largest payload read: a post-tool payload carries the tool's output.
const PAYLOAD_MAX: u64 = 16 * 1024 * 1024;

/// The role of the agent a session starts, when its payload names none.
const COORDINATOR: &str = "coordinator";

/// A hook that has not answered by then gives up, answering nothing: below
/// the 10 s `agents install` gives each hook, so that the harness never
/// kills it (which some report as a failed hook). `GIT_SWARM_HOOK_DEADLINE_MS`
/// sets another.
const DEADLINE: std::time::Duration = std::time::Duration::from_secs(8);

/// Set by whichever comes first: the answer being written, or the watchdog
/// giving up. The other then leaves stdout alone.
static FINISHING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// What the watchdog says when it gives up, made before it is armed: a
/// signal handler may not allocate.
static GAVE_UP: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();

/// Arms the timer that ends the process at the deadline, failing open:
/// nothing on stdout, one warning, exit 0. Writes are atomic (a rename, or
/// one appended line) so a process ended between them leaves no torn file.
/// A timer rather than a thread: a thread's start was 3-4 % of every hook.
fn watchdog(harness: &str, event: &str) {
    let deadline = std::env::var("GIT_SWARM_HOOK_DEADLINE_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(DEADLINE, std::time::Duration::from_millis);
    let said = format!(
        "warning: git-swarm's {} hook gave up after {} ms and answered nothing; the session goes on without it\n",
        format!("{harness} {event}").escape_debug(),
        deadline.as_millis()
    );
    if GAVE_UP.set(said.into_bytes()).is_err() {
        return;
    }
    let timer = libc::itimerval {
        it_interval: libc::timeval {
            tv_sec: 0,
            tv_usec: 0,
        },
        it_value: libc::timeval {
            tv_sec: libc::time_t::try_from(deadline.as_secs()).unwrap_or(libc::time_t::MAX),
            // At least a microsecond: a zero timer is no timer.
            // Under a million, so an i32: `suseconds_t` is one on macOS.
            tv_usec: i32::try_from(deadline.subsec_micros())
                .unwrap_or(0)
                .max(i32::from(deadline.is_zero()))
                .into(),
        },
    };
    // SAFETY: `give_up` does only what a signal handler may (an atomic, a
    // write(2) of bytes made before, _exit); the structures are zeroed or
    // filled in full before the calls that read them.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = give_up as extern "C" fn(libc::c_int) as libc::sighandler_t;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        if libc::sigaction(libc::SIGALRM, &action, std::ptr::null_mut()) == 0 {
            libc::setitimer(libc::ITIMER_REAL, &timer, std::ptr::null_mut());
        }
    }
}

/// The watchdog's end of the process, unless the answer is being written.
extern "C" fn give_up(_: libc::c_int) {
    if FINISHING.swap(true, std::sync::atomic::Ordering::SeqCst) {
        return;
    }
    if let Some(said) = GAVE_UP.get() {
        // SAFETY: writes bytes that live for the whole process.
        unsafe { libc::write(2, said.as_ptr().cast(), said.len()) };
    }
    // SAFETY: ends the process at once, as the deadline asks.
    unsafe { libc::_exit(0) }
}

pub fn run(args: &[OsString], ui: &mut Ui) -> Outcome {
    let name = |i: usize| args.get(i).map(|a| a.to_string_lossy().into_owned());
    let (harness_name, event_name) = (name(0).unwrap_or_default(), name(1).unwrap_or_default());
    let Some(harness) = Harness::parse(&harness_name) else {
        ui.warning(
            &format!(
                "git-swarm has no agent hook for the harness `{}` (claude-code, codex, gemini, cursor or opencode); nothing to do",
                harness_name.escape_debug()
            ),
            None,
        );
        return Ok(ExitCode::SUCCESS);
    };
    let Some(event) = Event::parse(&event_name) else {
        ui.warning(
            &format!(
                "git-swarm's agent hook has no event `{}` (session-start, pre-tool-use, subagent-start, subagent-stop or post-tool-use); nothing to do",
                event_name.escape_debug()
            ),
            None,
        );
        return Ok(ExitCode::SUCCESS);
    };
    watchdog(harness.as_str(), event.as_str());
    let answered = answer(harness, event, ui);
    git_swarm::trace::mark("answer returned");
    if FINISHING.swap(true, std::sync::atomic::Ordering::SeqCst) {
        // The watchdog is ending the process (its signal came to another
        // thread): nothing more is said.
        loop {
            std::thread::park();
        }
    }
    match answered {
        Ok(Some(v)) => {
            let mut line = v.to_string();
            line.push('\n');
            // A harness that cannot take the answer (a full disk behind
            // stdout) gets none, and exit 0 all the same; one that closed
            // the pipe is not told.
            if let Err(e) = ui.write_out(line.as_bytes()).and_then(|()| ui.out.flush())
                && e.kind() != std::io::ErrorKind::BrokenPipe
            {
                ui.warning(
                    &format!(
                        "git-swarm's {} {} hook could not write its answer: {e}",
                        harness.as_str(),
                        event.as_str()
                    ),
                    None,
                );
            }
            git_swarm::trace::mark("answered");
        }
        Ok(None) => {}
        Err(CliError::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            return Err(CliError::Io(e));
        }
        Err(e) => ui.warning(
            &format!(
                "git-swarm's {} {} hook did nothing: {}",
                harness.as_str(),
                event.as_str(),
                one_line(&e.to_string())
            ),
            None,
        ),
    }
    Ok(ExitCode::SUCCESS)
}

/// The answer to print, if any.
fn answer(harness: Harness, event: Event, ui: &mut Ui) -> Result<Option<Value>, CliError> {
    let json = read_payload()?;
    git_swarm::trace::mark("payload read");
    let clock = super::clock()?;
    if event == Event::PostToolUse {
        let reflected = post_tool_use(harness, &json, clock, ui);
        // Gemini CLI and opencode take a call's lessons only with its result.
        let lessons = if tool_call::context_before(harness) {
            Ok(None)
        } else {
            at_tool_call(harness, &json, false, clock, ui)
        };
        return match (reflected, lessons) {
            (Err(e), Ok(Some(answer))) => {
                ui.warning(
                    &format!(
                        "the tool call was not reflected on: {}",
                        one_line(&e.to_string())
                    ),
                    None,
                );
                Ok(Some(answer))
            }
            (Err(e), _) => Err(e),
            (Ok(()), lessons) => lessons,
        };
    }
    if matches!(event, Event::SubagentStart | Event::SubagentStop) && !harness.has_subagents() {
        return Err(usage(format!(
            "{} has no subagent events",
            harness.as_str()
        )));
    }
    let p = agent_hook::parse(harness, event, &json).map_err(|e| usage(e.to_string()))?;
    let Some(repo) = repo_for(p.cwd.as_deref())? else {
        return Ok(None);
    };
    git_swarm::trace::mark("repo found");
    // A repository git-swarm was never set up in is not its business: a
    // stat, before any state is read or written.
    if !repo.root.join(".swarm").is_dir() {
        return Ok(None);
    }
    let session = p.session.clone().unwrap_or_default();
    let now = clock.now().as_millisecond();
    match event {
        Event::SessionStart => {
            // Here only, so that the frequent events stay cheap.
            state::sweep(&repo.common_dir, std::time::SystemTime::now());
            git_swarm::trace::mark("swept");
            // A resumed session runs in a new process: the subagents of the
            // old one are gone.
            let own = (p.source.as_deref() == Some("resume")).then_some(session.as_str());
            end_open_delegations(&repo, own, clock, ui);
            git_swarm::trace::mark("open delegations ended");
            session_start(harness, &p, &repo, clock, ui)
        }
        Event::PreToolUse => {
            // Only the spawning tool is of interest; never a permission
            // decision.
            if let Some(spawn) = p.spawn.clone()
                && harness.has_subagents()
            {
                let id = p.tool_use_id.clone();
                let mut warnings = Vec::new();
                let r = state::update(&repo.common_dir, &session, now, &mut warnings, |s| {
                    s.stash(spawn, id, now)
                });
                warn_all(ui, &warnings);
                r?;
                // Claude Code takes the block in the task itself, which
                // pairs it with its spawn by construction: its subagents'
                // starts arrive together and name no spawn.
                if harness == Harness::ClaudeCode
                    && let Some(id) = &p.tool_use_id
                    && p.tool_input.is_some()
                {
                    let mut at_spawn = p.clone();
                    at_spawn.agent_id = Some(state::spawn_key(id));
                    // The subagent's type, not the caller's: the main agent
                    // of `claude --agent X` names X on every payload.
                    at_spawn.agent_type = p.spawn.as_ref().map(|s| s.agent_type.clone());
                    return subagent_start(harness, &at_spawn, &repo, clock, ui, true);
                }
                return Ok(None);
            }
            at_tool_call(harness, &json, true, clock, ui)
        }
        Event::SubagentStart => subagent_start(harness, &p, &repo, clock, ui, false),
        Event::SubagentStop => subagent_stop(harness, &p, &repo, clock, ui),
        Event::PostToolUse => Ok(None),
    }
}

/// Ends the delegations no stop ended (see [`state::end_open`]): the
/// criticals each was shown and that no ack answered are recorded
/// `unacknowledged`, as a stop with an empty final message would. A
/// failure is a warning: the session's briefing must still come.
fn end_open_delegations(
    repo: &Repo,
    own: Option<&str>,
    clock: git_swarm::event::Clock,
    ui: &mut Ui,
) {
    let now = clock.now().as_millisecond();
    let mut warnings = Vec::new();
    let ended = match state::end_open(&repo.common_dir, own, now, &mut warnings) {
        Ok(ended) => ended,
        Err(e) => {
            warnings.push(format!("open delegations were not ended: {e}"));
            Vec::new()
        }
    };
    // One read of each work tree's log for all of its delegations: most
    // were acked by their stop, and only need to be found so.
    let mut by_root: std::collections::BTreeMap<std::path::PathBuf, Vec<state::Ending>> =
        Default::default();
    for e in ended {
        let list = by_root.entry(e.root.clone()).or_default();
        if !list.iter().any(|o| o.delegation == e.delegation) {
            list.push(e);
        }
    }
    for (root, endings) in by_root {
        if let Err(err) = end_delegations(&root, &endings, clock, ui) {
            warnings.push(format!(
                "{} open delegation(s) in {} could not be ended: {}",
                endings.len(),
                root.display(),
                one_line(&err.to_string())
            ));
        }
    }
    warn_all(ui, &warnings);
}

/// Records the delegations `endings` of the work tree `root` as a stop
/// with an empty final message would.
fn end_delegations(
    root: &Path,
    endings: &[state::Ending],
    clock: git_swarm::event::Clock,
    ui: &mut Ui,
) -> Result<(), CliError> {
    if !root.is_dir() {
        return Ok(());
    }
    let home = super::repo_at(root)?;
    let Some(store) = open_store(&home, clock)? else {
        return Ok(());
    };
    let (events, _problems) = git_swarm::directive_loop::records::read_log(&store)?;
    let mut violations = false;
    for e in endings {
        let report = acks::record(
            &store,
            &events,
            &acks::Request {
                delegation: &e.delegation,
                message: "",
                source: "no final message (the subagent's stop never came)",
                defer_unacknowledged: false,
            },
        )?;
        if !report.events.is_empty() {
            super::append(&store, &report.events, ui)?;
        }
        if !report.audit.is_empty() {
            acks::write_audit(&store, &report.audit)?;
        }
        violations |= report.violations;
    }
    if violations {
        super::escalate(&store, &escalation::due_from_index(&store)?, ui)?;
    }
    Ok(())
}

/// The briefing: the directives for the session's role, shown and not
/// recorded, then what needs attention, bounded.
fn session_start(
    harness: Harness,
    p: &Payload,
    repo: &Repo,
    clock: git_swarm::event::Clock,
    ui: &mut Ui,
) -> Result<Option<Value>, CliError> {
    let Some(store) = open_store(repo, clock)? else {
        return Ok(None);
    };
    git_swarm::trace::mark("store opened");
    let role = (p.agent_type.as_deref())
        .and_then(|t| roles::role_for(&store.config.agent_types, t))
        .unwrap_or_else(|| COORDINATOR.to_owned());
    let req = loop_inject::Request::new(
        &store.config,
        &role,
        Vec::new(),
        String::new(),
        None,
        Vec::new(),
        None,
    );
    let review = super::review(repo, ui);
    // One index read for the briefing and its highlights.
    let (Prepared { sel, patterns, .. }, index) = prepare_with_index(&store, req, &review, ui)?;
    let mut briefing = Briefing {
        patterns: patterns.render(),
        ..Briefing::default()
    };
    if !sel.shown.is_empty() {
        (briefing.head, briefing.entries, briefing.tail) = loop_inject::briefing_parts(&sel, &role);
    }
    briefing.highlights = super::status::highlights(&store, &index);
    // Ids only: the text of what awaits review is what must not reach the agent.
    if let Some(line) = git_swarm::directive_loop::inject::withheld_line(&sel.withheld, &review) {
        briefing.highlights.insert(0, format!("- {line}"));
    }
    if patterns.withheld > 0 {
        briefing.highlights.insert(
            0,
            format!(
                "- {} learned pattern(s) await review and are withheld from agents until on {}",
                patterns.withheld,
                review.revision_name()
            ),
        );
    }
    let text = agent_hook::bound_briefing(&briefing);
    git_swarm::trace::mark("briefing built");
    if text.is_empty() {
        return Ok(None);
    }
    Ok(agent_hook::context_answer(
        harness,
        Event::SessionStart,
        &text,
    ))
}

/// The subagent's directives, for its role and (when its spawn is known
/// without doubt) its task, recorded as a delegation its stop acks.
/// `at_spawn`: Claude Code's PreToolUse of the `Agent` tool, whose answer
/// puts the block into the task (the subagent's start then adds nothing).
fn subagent_start(
    harness: Harness,
    p: &Payload,
    repo: &Repo,
    clock: git_swarm::event::Clock,
    ui: &mut Ui,
    at_spawn: bool,
) -> Result<Option<Value>, CliError> {
    let agent_id = p
        .agent_id
        .clone()
        .ok_or_else(|| usage("the payload names no subagent (`agent_id`)".into()))?;
    let session = p.session.clone().unwrap_or_default();
    let common = &repo.common_dir;
    let now = clock.now().as_millisecond();
    let mut warnings = Vec::new();
    // Started again (a resume): the same block, and nothing new recorded.
    let (known, warning) = state::read_session(common, &session);
    warnings.extend(warning);
    git_swarm::trace::mark("session state read");
    // The block as the harness takes it: Gemini CLI's in the call's input.
    let respond = |block: &str| match (harness, &p.tool_input) {
        (Harness::Gemini, Some(input)) => Some(agent_hook::gemini_subagent_answer(input, block)),
        (Harness::ClaudeCode, Some(input)) if at_spawn => {
            Some(agent_hook::claude_spawn_answer(input, block))
        }
        (Harness::Gemini, None) => None,
        _ => agent_hook::context_answer(harness, Event::SubagentStart, block),
    };
    // Gemini takes the block only in the call's input, which must be an object.
    if harness == Harness::Gemini && p.tool_input.is_none() {
        return Ok(None);
    }
    if let Some(a) = known.agents.get(&agent_id) {
        warn_all(ui, &warnings);
        // A start whose block is in its task already adds nothing; nor
        // does one after the subagent's stop, which dropped its block (it
        // has it in its context).
        if (a.in_task && !at_spawn && harness != Harness::Gemini) || a.block.is_empty() {
            return Ok(None);
        }
        return Ok(respond(&a.block));
    }
    // A start that names no type is of the harness's default one, as its
    // spawn would be (Codex leaves `agent_type` out without roles defined).
    let agent_type = (p.agent_type.clone())
        .or_else(|| p.spawn.as_ref().map(|s| s.agent_type.clone()))
        .unwrap_or_else(|| agent_hook::spawn_type(harness, None));
    let Some(store) = open_store(repo, clock)? else {
        return Ok(None);
    };
    git_swarm::trace::mark("store opened");
    let Some(role) = roles::role_for(&store.config.agent_types, &agent_type) else {
        return Err(usage(format!(
            "the subagent's type `{}` maps to no role; map it in .swarm/config.toml [agent_types]",
            agent_type.escape_debug()
        )));
    };
    let task = match harness {
        _ if at_spawn => p.spawn.as_ref().map(|s| s.task.clone()),
        Harness::Opencode | Harness::Gemini => p.spawn.as_ref().map(|s| s.task.clone()),
        // Claude Code's spawns carry their block in their task: the start
        // is paired with its spawn only to name its delegation, and never
        // waits. A start no spawn hook saw gets its role's block.
        Harness::ClaudeCode => {
            /// What the start's spawn was.
            enum Claimed {
                /// Its task carries its block: the subagent has it.
                Delivered,
                /// Several of its type wait and none is named its own:
                /// each carries its block, its stop finds which.
                Unpaired,
                /// It had no block (or no spawn hook saw it): the start
                /// gives one, for the task when it is known.
                Give(Option<String>),
            }
            let claimed = state::update(common, &session, now, &mut warnings, |s| {
                // Named already (its launch came first): its task had its block.
                if s.agents.contains_key(&agent_id) {
                    return Claimed::Delivered;
                }
                match s.take_task(&agent_id, &agent_type) {
                    state::Take::Task(spawn) => {
                        let delivered = (spawn.id.as_deref())
                            .is_some_and(|id| s.agents.contains_key(&state::spawn_key(id)));
                        if delivered {
                            s.adopt(&agent_id, &spawn);
                            Claimed::Delivered
                        } else {
                            Claimed::Give(Some(spawn.task))
                        }
                    }
                    state::Take::Ambiguous => Claimed::Unpaired,
                    state::Take::NoSpawn => Claimed::Give(None),
                }
            })?;
            match claimed {
                Claimed::Delivered | Claimed::Unpaired => {
                    warn_all(ui, &warnings);
                    return Ok(None);
                }
                Claimed::Give(task) => task,
            }
        }
        _ => state::take_waiting(
            common,
            &session,
            &agent_id,
            &agent_type,
            if harness.links_spawns() {
                agent_hook::LINK_WAIT
            } else {
                std::time::Duration::ZERO
            },
            now,
            &mut warnings,
        )?
        .map(|spawn| spawn.task),
    };
    git_swarm::trace::mark("spawn paired");
    let phase = std::env::var("GIT_SWARM_PHASE")
        .ok()
        .filter(|p| git_swarm::reflect::is_phase_name(p))
        .or_else(|| git_swarm::reflect::current_phase(&store));
    let req = loop_inject::Request::new(
        &store.config,
        &role,
        Vec::new(),
        task.unwrap_or_default(),
        phase,
        Vec::new(),
        None,
    );
    let Prepared {
        sel,
        patterns,
        event,
        ..
    } = prepare(&store, req, false, &super::review(repo, ui), ui)?;
    let mut block = String::new();
    let delegation = event.as_ref().map(|e| e.id.clone());
    if let (Some(e), Some(d)) = (&event, &delegation) {
        store.check_appendable(e)?;
        block.push_str(&loop_inject::render(&sel, &role, d));
    }
    block.push_str(&patterns.render());
    git_swarm::trace::mark("block rendered");
    let seen = state::SeenType {
        harness: harness.as_str().to_owned(),
        agent_type: agent_type.chars().take(64).collect(),
        role: role.clone(),
        directives: !sel.shown.is_empty(),
        at: now,
    };
    if let Err(e) = state::note_seen(common, seen) {
        warnings.push(format!(
            "the agent types seen could not be recorded: {}",
            one_line(&e.to_string())
        ));
    }
    if sel.shown.is_empty()
        && state::update(common, &session, now, &mut warnings, |s| {
            s.first_warning(&role)
        })?
    {
        warnings.push(format!(
            "subagent type `{}` maps to role `{role}`, and no directive is scoped to `{role}`: it gets no lessons (map the type to another role in .swarm/config.toml [agent_types], or scope directives to `{role}`; `git swarm agents status` lists the types seen)",
            agent_type.escape_debug()
        ));
    }
    git_swarm::trace::mark("agent type noted");
    if block.is_empty() {
        warn_all(ui, &warnings);
        return Ok(None);
    }
    // The entry that lets the stop ack the delegation is written first,
    // then the delegation: a state that cannot be written leaves no
    // delegation that nothing could ack. Both come before the answer: a
    // hook that fails must print nothing, so the answer is the last thing
    // it does. A block that then never reaches the subagent shows at its
    // stop, as missing acks.
    let root = repo.root.clone();
    let entry = Agent {
        delegation,
        root,
        block,
        showed: Vec::new(),
        asked: false,
        at: now,
        in_task: at_spawn || harness == Harness::Gemini,
        ended: false,
    };
    // Gemini's AfterTool may carry the task as given or as changed (the
    // block before it): the subagent is found by either.
    let alias = (harness == Harness::Gemini)
        .then(|| {
            let spawn = p.spawn.as_ref()?;
            Some(agent_hook::gemini_agent_id(
                &session,
                &spawn.agent_type,
                &agent_hook::prompt_with_block(&entry.block, &spawn.task),
            ))
        })
        .flatten();
    let (block, mine) = state::update(common, &session, now, &mut warnings, |s| {
        // A start of the same subagent that won the race answers its block.
        match s.agents.get(&agent_id) {
            Some(a) => (a.block.clone(), false),
            None => {
                s.agents.insert(agent_id.clone(), entry.clone());
                if let Some(alias) = &alias {
                    s.agents.insert(alias.clone(), entry.clone());
                }
                (entry.block.clone(), true)
            }
        }
    })?;
    git_swarm::trace::mark("subagent recorded");
    warn_all(ui, &warnings);
    if mine
        && let Some(e) = event
        && let Err(err) = super::append(&store, &[e], ui)
    {
        // Without its `shown` event the entry would ask the stop for
        // acks of a delegation that does not exist: take it back.
        let undone = state::update(common, &session, now, &mut Vec::new(), |s| {
            s.agents.remove(&agent_id);
            if let Some(alias) = &alias {
                s.agents.remove(alias);
            }
        });
        if let Err(u) = undone {
            ui.warning(
                &format!(
                    "subagent `{}`'s state entry could not be removed either: {}",
                    agent_id.escape_debug(),
                    one_line(&u.to_string())
                ),
                None,
            );
        }
        return Err(err.into());
    }
    Ok(respond(&block))
}

/// The subagent's acks, from its final message: asked for once when a
/// critical one is missing, then recorded as `ack` records them. The whole
/// stop holds the session's lock, so that two stops of one subagent at
/// once neither both ask nor both record: the second sees what the first
/// did.
fn subagent_stop(
    harness: Harness,
    p: &Payload,
    repo: &Repo,
    clock: git_swarm::event::Clock,
    ui: &mut Ui,
) -> Result<Option<Value>, CliError> {
    let Some(agent_id) = p.agent_id.clone() else {
        return Ok(None);
    };
    reflect_report(harness, p, repo, clock);
    let session = p.session.clone().unwrap_or_default();
    let common = &repo.common_dir;
    let now = clock.now().as_millisecond();
    let mut warnings = Vec::new();
    let mut said = Vec::new();
    let out = state::update(common, &session, now, &mut warnings, |s| {
        let agent = match s.agents.get(&agent_id).cloned() {
            Some(a) => a,
            // Its start was not paired with its spawn (two spawns of one
            // type at once, in the foreground): its own transcript names
            // the delegation its task carried.
            None => {
                let shown = (p.transcript.as_deref())
                    .filter(|_| harness == Harness::ClaudeCode)
                    .and_then(|t| agent_hook::delegation_in_transcript(Path::new(t)));
                match shown {
                    Some(d) if s.adopt_delegation(&agent_id, &d) => s.agents[&agent_id].clone(),
                    _ => return Ok(None),
                }
            }
        };
        let Some(delegation) = agent.delegation.clone() else {
            return Ok(None);
        };
        // The delegation is in the log of the work tree the subagent
        // started in, wherever it stops.
        if !agent.root.is_dir() {
            s.agents.remove(&agent_id);
            return Err(usage(format!(
                "the work tree {} where subagent `{}` was shown delegation {delegation} is gone, so its acks are not recorded",
                agent.root.display(),
                agent_id.escape_debug()
            )));
        }
        // Found again only when it started in another work tree.
        let home = if agent.root == repo.root {
            repo.clone()
        } else {
            super::repo_at(&agent.root)?
        };
        let Some(store) = open_store(&home, clock)? else {
            return Ok(None);
        };
        // Only the delegation's events: the rest of the log is not parsed.
        let events = git_swarm::directive_loop::records::read_delegation_log(&store, &delegation)?;
        let message = p.message.clone().unwrap_or_default();
        // A subagent that failed has no final message to ask on: its
        // delegation ends now, a critical it was shown unacknowledged (once:
        // `ack` records nothing a delegation recorded already).
        let died = p.failure.is_some() && p.message.is_none();
        let may_ask = harness.can_block_stop() && !p.stop_hook_active && !agent.asked && !died;
        let report = acks::record(
            &store,
            &events,
            &acks::Request {
                delegation: &delegation,
                message: &message,
                source: if died {
                    "the failed subagent's task (it ended in an error, with no final message)"
                } else {
                    "the subagent's final message"
                },
                defer_unacknowledged: may_ask,
            },
        )?;
        said.extend(report.warnings.iter().cloned());
        if !report.events.is_empty() {
            super::append(&store, &report.events, ui)?;
        }
        if !report.audit.is_empty() {
            acks::write_audit(&store, &report.audit)?;
        }
        // Gemini CLI has no resumes: a later `invoke_agent` with the same
        // agent and task is a new subagent, with a delegation of its own.
        if harness == Harness::Gemini {
            s.agents
                .retain(|_, a| a.delegation.as_deref() != Some(delegation.as_str()));
        }
        // A violation the subagent admits counts whether or not it is asked on.
        if report.violations {
            super::escalate(&store, &escalation::due_from_index(&store)?, ui)?;
        }
        if may_ask && !report.missing.is_empty() {
            // Claimed in the state this lock guards, so never asked twice.
            if let Some(a) = s.agents.get_mut(&agent_id) {
                a.asked = true;
                a.drop_block();
            }
            let reason = agent_hook::ask_reason(&delegation, &report.missing);
            return Ok(agent_hook::block_answer(harness, &reason));
        }
        // Its block is dropped (at an ask above too), the ids it showed
        // kept for its tool calls: it has the block in its context, and a
        // session keeps a stopped subagent's entry for days, so the blocks
        // of every subagent it ran would otherwise be read and written by
        // each of its later hooks (a long session's state was most of a
        // subagent start's time). Not marked ended: a session start that
        // ends it finds it recorded in the log, and adds nothing.
        if let Some(a) = s.agents.get_mut(&agent_id) {
            a.drop_block();
        }
        Ok(None)
    });
    warn_all(ui, &warnings);
    ui.warnings(&said);
    out?
}

/// What a subagent reports of its own task ("ran out of context", "I
/// reverted it"), read as `reflect micro` reads the spawning tool's result:
/// here, at its stop, where every harness hands over the final message,
/// the background subagents' of Claude Code included (their spawn's result
/// says only that they were launched). Kept once per subagent; a failure to
/// keep it never stops the stop.
fn reflect_report(harness: Harness, p: &Payload, repo: &Repo, clock: git_swarm::event::Clock) {
    let (Some(message), Some(agent)) = (p.message.as_deref(), p.agent_id.as_deref()) else {
        return;
    };
    if message.trim().is_empty() {
        return;
    }
    let call = git_swarm::reflect::ToolCall {
        harness: harness.reflect_harness(),
        tool: harness.spawn_tool().to_owned(),
        kind: git_swarm::reflect::payload::ToolKind::Delegate,
        command: None,
        output: message
            .chars()
            .take(git_swarm::reflect::payload::OUTPUT_KEEP)
            .collect(),
        exit_code: None,
        error: None,
        interrupted: false,
        denied: None,
        session: p.session.clone(),
        agent: Some(agent.to_owned()),
        agent_type: p.agent_type.clone(),
        call_id: Some(format!("stop:{agent}")),
        transcript: None,
    };
    let micro = git_swarm::reflect::micro_call(call, Default::default(), clock.now());
    let _ = super::reflect::micro::keep_reflected(micro, false, clock, Home::Found(repo));
}

/// `reflect micro` on the payload; nothing is printed (Claude Code would
/// take it as context). The spawning tool's own post-tool event (it
/// returned, failed or was denied) drops its spawn from those waiting.
/// Lessons at the moment of action (DESIGN §7e): before a tool call
/// (`before`), a guard's refusal or the lessons the agent has not seen;
/// after one, for a harness that takes context only with the result, the
/// lessons. Nothing is read past the index's corpus unless a directive
/// can match the call.
fn at_tool_call(
    harness: Harness,
    json: &str,
    before: bool,
    clock: git_swarm::event::Clock,
    ui: &mut Ui,
) -> Result<Option<Value>, CliError> {
    let value = agent_hook::read_json(json).map_err(|e| usage(e.to_string()))?;
    let p = agent_hook::parse_value(harness, Event::PreToolUse, &value)
        .map_err(|e| usage(e.to_string()))?;
    if (p.tool.as_deref()).is_some_and(|t| agent_hook::is_spawn_tool(harness, t)) {
        return Ok(None);
    }
    // opencode's plugin reports a call that threw: it has no output to add to.
    if !before && p.failure.is_some() {
        return Ok(None);
    }
    let Some(repo) = repo_for(p.cwd.as_deref())? else {
        return Ok(None);
    };
    if !repo.root.join(".swarm").is_dir() {
        return Ok(None);
    }
    let Some(call) = tool_call::call_of(harness, &value, &repo.root) else {
        return Ok(None);
    };
    let Some(store) = open_store(&repo, clock)? else {
        return Ok(None);
    };
    let ranking = git_swarm::index::load_call_corpus(&store)?;
    git_swarm::trace::mark("corpus loaded");
    let subagent = p.agent_id.as_ref().filter(|_| harness != Harness::Opencode);
    // Gemini CLI names no agent on any call: one made while an
    // `invoke_agent` subagent runs may be either's, and gets only the
    // directives scoped to no role (no role is better than a wrong one).
    let gemini_subagent_running = harness == Harness::Gemini && {
        let (s, _) = state::read_session(&repo.common_dir, p.session.as_deref().unwrap_or(""));
        s.agents.keys().any(|k| k.starts_with("gemini-"))
    };
    let role = match (&p.agent_type, subagent) {
        _ if gemini_subagent_running => Some(String::new()),
        // A type that maps to no role, or a subagent that names none, gets
        // the directives scoped to no role (the guards among them).
        (Some(t), _) => roles::role_for(&store.config.agent_types, t).or(Some(String::new())),
        (None, None) => Some(COORDINATOR.to_owned()),
        (None, Some(_)) => Some(String::new()),
    };
    let Some(role) = role else {
        return Ok(None);
    };
    // opencode's subagents are sessions of their own; its `callID` is the call's.
    let agent = match harness {
        Harness::Opencode => None,
        _ => p.agent_id.clone(),
    }
    .unwrap_or_else(|| "main".to_owned());
    let docs = (ranking.corpus).call_docs_for(
        &call.names,
        &role,
        !call.paths.is_empty(),
        call.command.is_some(),
    );
    // The review, read once and only if a directive needs it.
    let review_cell = std::cell::OnceCell::new();
    let review = || review_cell.get_or_init(|| git_swarm::reviewed::Review::read(&repo));
    let matched = tool_call::matching(&call, docs, &|doc| {
        let r = review();
        r.shows(r.is_reviewed(ranking.corpus.blob(doc.doc).as_ref()))
    });
    git_swarm::trace::mark("matched");
    if matched.is_empty() {
        return Ok(None);
    }
    let session = p.session.clone().unwrap_or_default();
    // Read without the lock: an agent has mostly seen its lessons, and
    // then only a guard can have something to say.
    let known = state::read_session(&repo.common_dir, &session).0;
    let seen = |id: &str| {
        known
            .seen
            .get(&agent)
            .is_some_and(|ids| ids.iter().any(|s| s == id))
            || agent_hook::block_showed(&known, &agent, id)
    };
    if matched
        .iter()
        .all(|m| m.failed.is_empty() && seen(m.doc.id))
    {
        return Ok(None);
    }
    let review = review();
    for (what, hint) in &review.problems {
        ui.warning(what, Some(hint));
    }
    let fold = &ranking.summary.fold;
    let decision = tool_call::decide(
        matched,
        &|doc| {
            let (priority, enforcement) = fold.effective_of(doc.id, doc.priority, doc.enforcement);
            let reviewed = review.is_reviewed(ranking.corpus.blob(doc.doc).as_ref());
            tool_call::Standing {
                priority,
                enforcement,
                reviewed,
                marked: review.shown(reviewed) == git_swarm::reviewed::Shown::Marked,
            }
        },
        &|reviewed| review.shows(reviewed),
    );
    git_swarm::trace::mark("decided");
    let actor = |e: git_swarm::event::Event| {
        let mut e = e.by_role(Some(role.clone()).filter(|r| !r.is_empty()));
        e.actor.agent = Some(agent.clone());
        e
    };
    // The index is trusted while the directives folder is unchanged: a
    // guard's file edited in place since (retired, say) must not refuse.
    // Only the file as it is now, and reviewed, refuses.
    let mut decision = decision;
    decision.refuse.retain(|g| {
        let own = store.directives_dir().join(format!("{}.toml", g.id));
        // The project's own file wins; else a hive's pinned one (docs/hive.md).
        let path = match git_swarm::hive::directive_file(&store, &g.id) {
            Some((hive, _)) if !own.exists() => hive,
            _ => own,
        };
        git_swarm::safe_fs::read(&path, 1 << 20)
            .ok()
            .and_then(|bytes| git_swarm::reviewed::blob_id(&bytes))
            .is_some_and(|blob| review.is_reviewed(Some(&blob)))
    });
    if before && !decision.refuse.is_empty() {
        let command = call.command.as_deref().map(|c| {
            let mut end = c.len().min(500);
            while !c.is_char_boundary(end) {
                end -= 1;
            }
            c[..end].to_owned()
        });
        let events: Vec<_> = (decision.refuse.iter())
            .map(|g| {
                actor(
                    store
                        .event(git_swarm::event::Body::Prevented {
                            tool: call.tool.clone(),
                            command: command.clone(),
                            paths: call.paths.clone(),
                            predicates: g.failed.clone(),
                            harness: harness.as_str().to_owned(),
                        })
                        .about(g.id.clone()),
                )
            })
            .collect();
        // The refusal stands even if the log cannot take its record.
        if let Err(e) = super::append(&store, &events, ui) {
            ui.warning(&format!("the refused call was not recorded: {e}"), None);
        }
        let reason = tool_call::refusal_text(&decision.refuse);
        return Ok(tool_call::refusal_answer(harness, &reason));
    }
    // Nothing is recorded as shown where the harness would show nothing.
    if decision.context.is_empty()
        || tool_call::context_before(harness) != before
        || tool_call::call_context_answer(harness, before, "").is_none()
    {
        return Ok(None);
    }
    let limits = tool_call::Limits {
        count: store.config.knowledge.tool_call_max_count.clamp(1, 20),
        bytes: store
            .config
            .knowledge
            .tool_call_byte_budget
            .clamp(256, 16384),
    };
    let now = clock.now().as_millisecond();
    let mut warnings = Vec::new();
    let unseen = |s: &state::SessionState| -> Vec<tool_call::Lesson> {
        let seen = s.seen.get(&agent);
        (decision.context.iter())
            .filter(|l| !seen.is_some_and(|ids| ids.contains(&l.id)))
            // A subagent's block has shown it its lessons already.
            .filter(|l| !agent_hook::block_showed(s, &agent, &l.id))
            .cloned()
            .collect()
    };
    if unseen(&known).is_empty() {
        return Ok(None);
    }
    let shown = state::update(&repo.common_dir, &session, now, &mut warnings, |s| {
        let kept = tool_call::bounded(unseen(s), limits);
        let ids: Vec<String> = kept.iter().map(|l| l.id.clone()).collect();
        let first = s.first_sight(&agent, &ids);
        (kept.into_iter())
            .filter(|l| first.contains(&l.id))
            .collect::<Vec<_>>()
    });
    warn_all(ui, &warnings);
    let shown = shown?;
    if shown.is_empty() {
        return Ok(None);
    }
    let event = actor(
        store.event(git_swarm::event::Body::Shown {
            tools: vec![call.tool.clone()],
            directives: shown.iter().map(|l| l.id.clone()).collect(),
            shown: (shown.iter())
                .map(|l| git_swarm::event::ShownEntry {
                    id: l.id.clone(),
                    priority: l.priority,
                })
                .collect(),
            patterns: Vec::new(),
            phase: None,
            call: Some(call.tool.clone()),
        }),
    );
    // The lessons are given even if the log cannot take their record.
    if let Err(e) = super::append(&store, &[event], ui) {
        ui.warning(&format!("the lessons shown were not recorded: {e}"), None);
    }
    let text = tool_call::context_text(&call.tool, &shown);
    Ok(tool_call::call_context_answer(harness, before, &text))
}

fn post_tool_use(
    harness: Harness,
    json: &str,
    clock: git_swarm::event::Clock,
    ui: &mut Ui,
) -> Result<(), CliError> {
    if json.trim().is_empty() {
        return Err(usage("the payload is empty".into()));
    }
    let head = PostHead::read(harness, json);
    // Gemini CLI's `invoke_agent` returning is its subagent's stop.
    if harness == Harness::Gemini
        && head.as_ref().and_then(|h| h.tool_name.as_deref()) == Some("invoke_agent")
    {
        let p = agent_hook::parse(harness, Event::SubagentStop, json)
            .map_err(|e| usage(e.to_string()))?;
        let Some(repo) = repo_for(p.cwd.as_deref())? else {
            return Ok(());
        };
        if repo.root.join(".swarm").is_dir() {
            subagent_stop(harness, &p, &repo, clock, ui)?;
        }
        return Ok(());
    }
    if let Some(head) = &head
        && harness.has_subagents()
        && let (Some(tool), Some(session)) = (&head.tool_name, &head.session_id)
        && agent_hook::is_spawn_tool(harness, tool)
        && let Some(launch) = agent_hook::launch(harness, json)
        && let Some(repo) = repo_for(head.cwd.as_deref())?
        && repo.root.join(".swarm").is_dir()
    {
        let now = clock.now().as_millisecond();
        let mut warnings = Vec::new();
        let r = state::update(&repo.common_dir, session, now, &mut warnings, |s| {
            match (&launch.child, &launch.tool_use_id) {
                // The subagent is named: its spawn is its own.
                (Some(child), id) => {
                    s.launched(id.as_deref(), child, Some(launch.spawn.clone()), now)
                }
                // Started, unnamed (Codex's multi-agent v2): the spawn
                // waits for its start.
                (None, _) if launch.started => {}
                // The call ended (returned, failed or was denied): no
                // start of its own is still to come.
                (None, Some(id)) => s.forget(id),
                (None, None) => {}
            }
        });
        warn_all(ui, &warnings);
        r?;
    }
    // A spawn that returned: what its subagent reports is read at that
    // subagent's stop (a background one's return says only that it was
    // launched); read here too, a foreground one's would be kept twice.
    if let Some(h) = &head
        && h.tool_name
            .as_deref()
            .is_some_and(|t| agent_hook::is_spawn_tool(harness, t))
        && h.event.as_deref() != Some("PostToolUseFailure")
        && harness.has_subagents()
    {
        return Ok(());
    }
    let mapped;
    let payload = if harness == Harness::Cursor {
        mapped = agent_hook::cursor_tool_call(json).map_err(|e| usage(e.to_string()))?;
        mapped.as_str()
    } else {
        json
    };
    // A call with no agent type is the session's main agent's, which the
    // briefing calls the coordinator; a subagent's maps through its type
    // (in `reflect_payload`, with the repository's `[agent_types]`).
    // Gemini CLI names no agent on any call: a call made while none of the
    // session's `invoke_agent` subagents runs is the main agent's; one made
    // while one runs may be either, and no role is better than a wrong one.
    // The repository, when it had to be found already (kept there too).
    let mut found = None;
    let main_agent = match (harness, &head) {
        (_, None) => false,
        (Harness::Gemini, Some(h)) => {
            found = repo_for(h.cwd.as_deref())?;
            match (&h.session_id, &found) {
                (Some(session), Some(repo)) => {
                    let (s, _) = state::read_session(&repo.common_dir, session);
                    !s.agents.keys().any(|k| k.starts_with("gemini-"))
                }
                _ => false,
            }
        }
        (_, Some(h)) => h.agent_type.is_none(),
    };
    let context = git_swarm::reflect::Context {
        task: None,
        phase: std::env::var("GIT_SWARM_PHASE")
            .ok()
            .filter(|p| git_swarm::reflect::is_phase_name(p)),
        role: main_agent.then(|| COORDINATOR.to_owned()),
    };
    let dir = head.and_then(|h| h.cwd).filter(|d| Path::new(d).is_dir());
    let home = match &found {
        Some(repo) => Home::Found(repo),
        None => Home::Around(dir.as_deref().map(Path::new)),
    };
    match super::reflect::micro::reflect_payload(
        payload,
        harness.reflect_format(),
        context,
        clock,
        home,
    ) {
        Ok(_) => Ok(()),
        Err(e) if quiet(&e) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// The few fields of a post-tool payload read before `reflect micro`
/// reads it whole (the rest is skipped unread).
#[derive(Default)]
struct PostHead {
    session_id: Option<String>,
    cwd: Option<String>,
    tool_name: Option<String>,
    agent_type: Option<String>,
    /// `PostToolUse`, or Claude Code's `PostToolUseFailure`.
    event: Option<String>,
}

impl PostHead {
    /// `None` for a payload that is no JSON object, or opencode's (whose
    /// plugin runs the hook in the session's directory).
    fn read(harness: Harness, json: &str) -> Option<PostHead> {
        /// Each field as any JSON, so that one of an unexpected type is
        /// ignored rather than failing the others.
        #[derive(serde::Deserialize)]
        struct Raw {
            session_id: Option<Value>,
            conversation_id: Option<Value>,
            cwd: Option<Value>,
            workspace_roots: Option<Value>,
            tool_name: Option<Value>,
            agent_type: Option<Value>,
            hook_event_name: Option<Value>,
        }
        if harness == Harness::Opencode {
            return None;
        }
        let raw: Raw = serde_json::from_str(json).ok()?;
        let text = |v: Option<Value>| match v {
            Some(Value::String(s)) if !s.is_empty() => Some(s),
            _ => None,
        };
        // Cursor names the workspace where others name the directory.
        let first_root = raw.workspace_roots.and_then(|r| r.get(0).cloned());
        Some(PostHead {
            session_id: text(raw.session_id).or_else(|| text(raw.conversation_id)),
            cwd: text(raw.cwd).or_else(|| text(first_root)),
            tool_name: text(raw.tool_name),
            agent_type: text(raw.agent_type),
            event: text(raw.hook_event_name),
        })
    }
}

/// The repository the payload's `cwd` is in (else the current
/// directory's); `None` outside any, which is not git-swarm's business.
fn repo_for(cwd: Option<&str>) -> Result<Option<Repo>, CliError> {
    let found = match cwd.map(Path::new).filter(|d| d.is_dir()) {
        Some(dir) => super::repo_at(dir),
        None => super::repo(),
    };
    match found {
        Ok(repo) => Ok(Some(repo)),
        Err(e) if quiet(&e) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// The store, opened without reporting `config.toml`'s problems (a
/// harness shows a hook's stderr to nobody or to everybody); `None` when
/// the repository has no `.swarm/`.
fn open_store(repo: &Repo, clock: git_swarm::event::Clock) -> Result<Option<Store>, CliError> {
    match Store::open(repo, clock) {
        Ok(store) => Ok(Some(store)),
        Err(e) if quiet(&e) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Errors that mean git-swarm has nothing to say here: no repository, or
/// one without `.swarm/`.
fn quiet(e: &Error) -> bool {
    matches!(
        e,
        Error::NotInitialised { .. } | Error::NotARepository { .. } | Error::BareRepository { .. }
    )
}

/// Standard input, bounded; nothing when it is a terminal (a person
/// trying the command has no payload to give).
fn read_payload() -> Result<String, CliError> {
    let mut stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Ok(String::new());
    }
    let mut buf = Vec::new();
    (&mut stdin).take(PAYLOAD_MAX + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > PAYLOAD_MAX {
        return Err(usage(format!("the payload is over {PAYLOAD_MAX} bytes")));
    }
    String::from_utf8(buf).map_err(|_| usage("the payload is not UTF-8".into()))
}

fn usage(message: String) -> CliError {
    Error::usage(
        message,
        "the payload is the harness's hook input, on standard input",
    )
    .into()
}

/// An error's message on one line, as the single warning line.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Each of the state's warnings, on its own line.
fn warn_all(ui: &mut Ui, warnings: &[String]) {
    for w in warnings {
        ui.warning(w, None);
    }
}
