//! The command line: argument parsing, terminal output and exit codes. The
//! only place clap and printing live; everything else is in the library.

mod ack;
mod add;
mod agents;
mod args;
mod changes;
mod check;
mod cochange;
mod commit;
mod config_parameters;
mod deescalate;
mod demo;
mod diff;
mod doctor;
mod edit;
mod epic;
mod explain;
mod export;
mod generate;
mod handoff;
mod harden;
mod hive;
mod hive_share;
mod hook;
mod hook_agent;
mod hooks;
mod import;
mod index;
mod init;
mod inject;
mod list;
mod log;
mod mcp;
mod pattern;
mod phase;
mod proposal;
mod record;
mod reflect;
mod retire;
mod review;
mod run_tool;
mod search;
mod serve;
mod show;
mod stats;
mod status;
mod trust;
mod ui;
mod usage;
mod validate;
mod worktree;

use std::io;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use git_swarm::event::Clock;
use git_swarm::{Error, Repo, Store};

pub use ui::{Format, Ui, clean};

/// Keep what your coding agents learn — directives, patterns, verdicts — as
/// versioned files under `.swarm/`, and enforce it where code moves.
///
/// Exit status: 0 success; 1 a check failed, a gate blocked or an entry was
/// quarantined; 2 bad usage or bad input; 3 an internal or environment error.
#[derive(Debug, Parser)]
#[command(
    name = "git-swarm",
    bin_name = "git swarm",
    version,
    propagate_version = true,
    max_term_width = 100,
    after_help = "`git swarm help [COMMAND]...` (or `git swarm COMMAND --help`) prints the full help of git-swarm or of a command. `git swarm --help` is git's own: it opens the man page (`man git-swarm`), which `git swarm generate man` installs."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

// A subcommand's description is its variant's doc comment (clap takes it
// over the `Args` struct's), so this list reads as the command line's summary.
#[derive(Debug, Subcommand)]
enum Command {
    /// Create `.swarm/` in this repository from the built-in template.
    ///
    /// Writes `config.toml` (every key with its default), three example
    /// directives, `events/`, `quarantine/`, a `.gitattributes` that makes event
    /// files merge with `merge=union`, a `.gitignore` for `local/`, and a short
    /// README for reviewers. Files that exist are left alone, so running it again
    /// changes nothing.
    Init,
    /// Add a directive: a lesson with what to check and whom it is for.
    ///
    /// The entry passes the actionability gate when it has something to check
    /// (--forbid, --require, --verification-check or --verify) and a scope
    /// (--agents or --tools), every predicate parses and the shape limits hold.
    /// Then it is written to `.swarm/directives/<id>.toml`. Otherwise it is
    /// written to `.swarm/quarantine/<id>.toml` with the reason, and the command
    /// exits 1 saying which field to add. Either way an event is appended.
    /// An existing id is never overwritten (exit 2).
    Add(Box<add::Args>),
    /// List directives with their effective state.
    ///
    /// The effective priority and enforcement come from the event log's fold;
    /// EVENTS counts the events that name each directive.
    List(list::Args),
    /// Show one directive (or quarantined entry) with its effective state.
    Show(show::Args),
    /// Check every file under `.swarm/` and report all problems.
    ///
    /// Checks TOML syntax and types, unknown keys, that each id equals its file
    /// name and is unique, the shape limits, that every `verify` predicate
    /// parses, the actionability gate for directives/, and every event line.
    /// Each problem is printed as `path:line:col: error: message` with a hint.
    /// Exits 2 if there is any error (or, with --strict, any warning). Made for CI.
    Validate(validate::Args),
    /// Check a change against the directives' `verify` predicates.
    ///
    /// The change is explicit: --staged (the default: HEAD against the index),
    /// --worktree (HEAD against the working tree, untracked files included),
    /// --range A..B or A...B, or --commit C (against its first parent). The
    /// directives are those of the checked snapshot: the index's `.swarm/` for
    /// --staged (what the commit will carry), the working tree's for --worktree,
    /// the `.swarm/` of B (or C) for a range or commit.
    ///
    /// Every active directive whose `paths` the change touches has each of its
    /// predicates evaluated; one out of scope is n/a. Exits 1 if an `enforce`
    /// directive fails or errors (with --strict, a `warn` one too), 2 on bad
    /// input (a directive file that does not parse, an unknown --directive).
    Check(check::Args),
    /// Print the change `check` would look at, as JSON (plumbing, for scripts and tests).
    ///
    /// One object per changed file: status, path, old path of a rename, and the
    /// lines the change adds (with --lines); with --snapshot, the files of the
    /// checked snapshot instead.
    #[command(hide = true)]
    Changes(changes::Args),
    /// Show what changed in `.swarm/` between two revisions, meaning first.
    ///
    /// Directives added, removed, renamed, retired and edited field by field
    /// (text as a word diff); effective priority and enforcement changes with
    /// their cause (escalations, deescalations, overrides); the violations,
    /// acks and verdicts recorded, per directive; patterns promoted or
    /// deprecated; quarantine, proposals, handoffs and config.toml. REVISIONS
    /// is read as `git diff` reads it: `A..B`, `A...B` (from the merge base),
    /// or `A` (against the working tree); none compares the merge base of HEAD
    /// and its upstream with the working tree (HEAD, with a note, when there
    /// is no upstream). `--format markdown` writes a pull request comment.
    /// Exits 0; 2 for a revision that does not resolve.
    Diff(diff::Args),
    /// Show events, oldest first: de-duplicated by id, ordered by (time, id).
    ///
    /// Malformed lines are skipped and reported on stderr with file:line.
    /// With --follow, keeps running and shows each new event that matches as
    /// it lands in any month file (a new month's file included), once however
    /// many copies a merge or pull brings; JSON is then one object a line.
    Log(log::Args),
    /// Commit the events recorded since the last time, in a commit of their own.
    ///
    /// Recorded events (blocked commits, briefings, acks, verdicts…) wait in
    /// the clone's git dir, never in the work tree, so that no pull, merge,
    /// rebase, checkout or stash refuses because of them; every worktree of
    /// the clone folds them. This appends them to `.swarm/events/<YYYY-MM>.jsonl`
    /// and commits those files alone on the current branch (`git commit --only`:
    /// your hooks run, whatever else is staged stays staged), so that they
    /// reach others by push and pull request. Events recorded meanwhile stay
    /// pending. `git swarm status` says how many wait. Exits 0 (also with
    /// nothing to commit); 2 when git refuses the commit, with nothing moved.
    Commit(commit::Args),
    /// Play the whole loop in a new repository, to see what git-swarm does.
    ///
    /// A scripted team of agents works in a new repository (a temporary
    /// folder, or --dir): a private key blocked by the pre-commit hook, a
    /// lesson escalated after two violations, a lesson minted from two
    /// tasks that failed the same way, the next delegation told and
    /// acknowledging it, a force-push refused before it runs, then `stats`
    /// and `diff`. Every step is a real command or git hook, printed as it
    /// ran; no network, no agent harness. The repository is kept.
    Demo(demo::Args),
    /// Show counts and rates over the event log, for people and dashboards.
    ///
    /// Events by kind; per directive: violations (as escalation counts them),
    /// remediations, escalation episodes begun and ended, overrides; per
    /// role: the directives shown in delegations and what they came to (ack
    /// status, unacknowledged, unanswered), spoofed acks and the ack compliance
    /// ratio (answered over shown, and over criticals shown); patterns by
    /// lifecycle state now; recorded check outcomes; handoff violations;
    /// violations and events per day. --since limits the counts to a window.
    /// `--format openmetrics` writes OpenMetrics text for a scraper (see
    /// docs/observability.md).
    Stats(stats::Args),
    /// Print the directives a delegate should see, with the ack contract.
    ///
    /// Prints a `<delegate_knowledge_directives delegation="ID">` block for the
    /// role: a preface, the ACK CONTRACT (`KNOWLEDGE_APPLIED:<id>`,
    /// `KNOWLEDGE_IGNORED:<id> reason=…`, `KNOWLEDGE_N_A:<id> reason=…`,
    /// `KNOWLEDGE_VIOLATED:<id> reason=…`, one line per critical directive),
    /// then each directive's id, priority,
    /// lesson, forbidden and required actions and verification. Put it in the
    /// delegate's prompt; pass its final message to `git swarm ack --delegation ID`.
    ///
    /// In scope: directives with no agent or tool scope, or whose
    /// `applies_to_agents` has the role, or whose `applies_to_tools` has one of
    /// the tools (`--tools`, else the role's expected tools from config). The
    /// whole store is ranked for the task (see `git swarm search`); critical
    /// ones that match come first, the rest is picked for relevance and
    /// diversity, at most `--max-count` (config `knowledge.delegate_max_inject_count`,
    /// default 8) and `knowledge.inject_char_budget` characters. A `shown`
    /// event records the delegation (not with --dry-run). Nothing is printed,
    /// and nothing recorded, when no directive is in scope. A role that no
    /// directive and no config names is warned about, with the likeliest
    /// intended one.
    Inject(inject::Args),
    /// Show how the directives rank for a query, with each score's parts.
    ///
    /// For people tuning retrieval: the ranking `git swarm inject` starts from
    /// (before scope, pinning and MMR), over every active directive. Parts:
    /// bm25 (unigrams and bigrams, normalised to the best match), context
    /// (role, tool, path and priority), cold start, trigger recall, synonym and
    /// outcome (applied raises, violated lowers). Records nothing.
    Search(search::Args),
    /// Record a delegate's acks from its final message.
    ///
    /// Reads the message (FILE, or standard input for `-` or none) and finds
    /// its `KNOWLEDGE_APPLIED:<id>`, `KNOWLEDGE_IGNORED:<id> reason=…`,
    /// `KNOWLEDGE_N_A:<id> reason=…` and `KNOWLEDGE_VIOLATED:<id>` (a violation
    /// the delegate admits) lines, tolerantly: any case, backticks,
    /// bold, list bullets, `reason:` or `reason=`, trailing words, several on a
    /// line. Markers inside code fences, quotes (`> `) or an echoed directive
    /// block do not count. An ack for a directive the delegation was not shown
    /// is not credited and is recorded as spoofed. Every critical directive
    /// shown without an ack becomes an `unacknowledged` violation, also written
    /// to `.git/swarm/local/unacknowledged-criticals.jsonl`. Running it again on the
    /// same message records nothing new.
    Ack(ack::Args),
    /// The reviewer's side of a phase: what to verify, then the verdicts.
    ///
    /// Without --verdicts, prints a `<directives_to_verify phase="P">` block:
    /// every directive shown during the phase (once, however many delegations
    /// showed it), with its lesson and predicates, and the verdict contract
    /// `VERIFIED:<id> evidence=…`, `VIOLATED:<id> evidence=…`, `N/A:<id> reason=…`.
    ///
    /// With --verdicts FILE, reads the reviewer's verdicts (tolerantly, as acks
    /// are read; only ids of the phase count) and, given a change (--staged,
    /// --worktree, --range A..B or --commit C, as for `check`; none given: no
    /// machine check), runs each directive's predicates against it: where the
    /// machine has an answer (pass or fail) and the reviewer disagrees, the
    /// machine's answer stands and both are recorded. A critical directive with
    /// no verdict is a violation (`reviewer_omitted`) unless the machine passed
    /// it. Records one `verdict` event per directive. Verdicts for a phase in
    /// which no directive was shown are refused (exit 2) as a likely typo.
    Review(review::Args),
    /// The briefing: what needs attention in the directive loop.
    ///
    /// Escalations of the last 7 days (from → to, and why), directives with a
    /// violation not yet followed by an applied or verified outcome,
    /// unacknowledged critical directives, spoofed acks (acks for directives a
    /// delegation was not shown), quarantined entries, events not yet committed,
    /// and the health of the hooks and the index.
    Status(status::Args),
    /// Serve a read-only web page onto the loop, on this machine only.
    ///
    /// The page shows the directives with their effective priority and
    /// enforcement (escalated ones marked), recent escalations and
    /// violations, the event log as it grows (server-sent events: lines
    /// appended by any process appear without a reload), patterns by role,
    /// open handoffs, and a plot of violations and escalations per day per
    /// directive over the last 30 days. It listens on 127.0.0.1 (another
    /// address only with --bind), answers GET and HEAD on its own routes
    /// only, refuses requests not addressed to it by its own address (DNS
    /// rebinding), loads nothing from elsewhere and never writes to
    /// `.swarm/`. It prints the URL, then serves until Ctrl-C or SIGTERM.
    /// See docs/serve.md.
    Serve(serve::Args),
    /// Serve the Model Context Protocol over standard input and output.
    ///
    /// An agent's harness starts `git swarm mcp` in the repository and calls
    /// its tools: `inject`, `ack`, `review_checklist`, `review_verdicts`,
    /// `check`, `search`, `propose_lesson` and `status`. Each runs the
    /// command of the same name with `--format json` (same decisions, same
    /// trust rules for `tool:` predicates); `propose_lesson` writes an open
    /// proposal under `.swarm/proposals/` for a person to accept. A failing
    /// call is a tool result marked as an error, and the server keeps
    /// serving until its input ends. See docs/mcp.md.
    Mcp(mcp::Args),
    /// Register git-swarm's hooks in a coding agent harness's project config.
    ///
    /// `install` merges git-swarm's lifecycle hooks (session start, the
    /// spawn of a subagent, its stop, each tool call) into the config of
    /// Claude Code, Codex, Gemini CLI or Cursor, keeping every entry of
    /// yours, or writes an opencode plugin; `--mcp` registers `git swarm mcp`
    /// as well. `uninstall` removes exactly that; `status` shows where each
    /// harness stands and the trust step it asks of you. See docs/agents.md.
    #[command(subcommand)]
    Agents(agents::Command),
    /// Phases of work: start one, and the gate that closes one.
    #[command(subcommand)]
    Phase(phase::Command),
    /// Lessons shared by many repositories: hives of directives, pinned by commit.
    ///
    /// A hive is a git repository of directives that projects subscribe to
    /// at a pinned commit. `init` makes one; `add` subscribes this project
    /// (the pin is written to `.swarm/config.toml`: commit it); `update`
    /// moves the pin, showing the knowledge diff; `fetch` brings a new clone
    /// the pinned content; `off`/`on` switch one of its directives off here,
    /// with a reason. `promote` proposes a directive of this project to a
    /// hive, and `report` sends this project's signals about a hive's
    /// directives back to it, each as a branch pushed to the hive.
    /// Hive directives reach agents and checks as the project's own do,
    /// named `hive:NAME/ID`; the project's directive of the same id wins.
    /// See docs/hive.md.
    #[command(subcommand)]
    Hive(hive::Command),
    /// End a directive's escalation episode.
    ///
    /// A directive violated on two occasions within 30 days is escalated to
    /// critical + enforce (computed from the event log). This records a
    /// `deescalation` event: the directive is back to what its file says, and
    /// only violations after it count toward a new episode.
    Deescalate(deescalate::Args),
    /// Retire a directive: kept in the store, no longer checked or injected.
    ///
    /// Sets `status = "retired"` in `.swarm/directives/<ID>.toml`, leaving the
    /// rest of the file as written, and records a `retired` event with the
    /// justification; commit the change like any other. An unknown id, a directive
    /// retired already, or a file that does not pass `validate` is refused
    /// (exit 2). `git swarm edit ID` brings one back (`status = "active"`).
    Retire(retire::Args),
    /// Edit a directive in your editor; saved only if it passes validation.
    ///
    /// Opens a copy of `.swarm/directives/<ID>.toml` (in `.git/swarm/local/edit/`) in
    /// the editor git would use (GIT_EDITOR, core.editor, VISUAL, EDITOR, else
    /// vi; run by `sh -c`, so it may carry arguments). When the editor exits,
    /// the copy is checked as `validate` checks a directive file; if it passes,
    /// it replaces the directive atomically. Otherwise each problem is printed
    /// with line:column, the directive is left unchanged, the copy is kept,
    /// and the command exits 2: running it again reopens the copy. Emptying
    /// the copy abandons the edit. If the directive changed on disk while it
    /// was being edited, the save is refused once (exit 2), the copy kept.
    Edit(edit::Args),
    /// Explain why a directive has its effective priority and enforcement.
    ///
    /// Prints what its file declares and what is in force (escalated or not,
    /// and why), its escalation episodes, then every event of the loop about
    /// it, oldest first — checks, acks, verdicts, unacknowledged criticals,
    /// escalations, deescalations, overrides, retirement — each with its id and
    /// the commit that recorded it (or `uncommitted`). `shown` events are
    /// counted, not listed.
    Explain(explain::Args),
    /// Work the quarantine: promote fixed entries, send the rest to a curator.
    ///
    /// An entry fixed by hand in its `.swarm/quarantine/<id>.toml` (it passes
    /// the actionability gate as it stands) is promoted: written to
    /// `.swarm/directives/<id>.toml` with every field and comment kept and the
    /// quarantine keys left out, then its quarantine file is removed. A run
    /// cut short between the two leaves both; the next run removes the
    /// quarantine file when the two agree, and reports a conflict (exit 1)
    /// when they differ.
    ///
    /// Other entries go to your curator program, when `git config
    /// swarm.curator` names one (never a file of the repository): it reads
    /// the entry as JSON on stdin and writes the enriched entry as JSON on
    /// stdout, within `swarm.curatorTimeout` seconds (default 120). A reply
    /// that still fails the gate is retried once with the missing fields
    /// named. Calls count against a daily quota (`swarm.curatorQuota`,
    /// default 50) kept in `.git/swarm/local/`. A failure is recorded in the
    /// quarantine file (`harden_reason`, `harden_attempts`); an entry for
    /// which the curator twice wrote an entry that still fails the gate is
    /// flagged `retire_candidate` and no longer sent (a curator that fails,
    /// hangs or prints what is not JSON flags nothing). A `tool:` predicate
    /// the curator writes does not run until `git swarm trust`. Without a
    /// curator only hand-fixed entries are touched. A second run while one
    /// runs is refused (exit 3).
    Harden(harden::Args),
    /// Reflection: the loop finding lessons in what the agents did.
    ///
    /// `micro` classifies each tool call (run it from the harness's post-tool
    /// hook) and keeps what did not succeed as insight candidates; `meso`
    /// folds a phase's candidates into lessons; `macro` proposes the motifs
    /// that recur across phases (see `git swarm proposal`).
    #[command(subcommand)]
    Reflect(reflect::Command),
    /// Proposals: lessons the loop found, for a person to accept or reject.
    ///
    /// `reflect macro` writes them to `.swarm/proposals/<slug>.md`; accepting
    /// one makes a directive through the actionability gate, rejecting one
    /// records why. Either way the file stays, with its decision.
    #[command(subcommand)]
    Proposal(proposal::Command),
    /// Handoffs: one task's contract for one worker, with paths it alone owns.
    ///
    /// The contract names the paths the task alone may change, those it may
    /// only read, the tasks it waits for and what done means.
    /// `create` writes `.swarm/handoffs/<task>.toml` (never rewritten) and
    /// prints the worker's brief; where a handoff stands is a fold of the
    /// event log. Two handoffs holding ownership never own a path in common.
    #[command(subcommand)]
    Handoff(handoff::Command),
    /// Epics: the handoffs sharing `--epic`, in dependency order.
    #[command(subcommand)]
    Epic(epic::Command),
    /// Propose "when X changes, Y changes too" from files the history changes together.
    ///
    /// Reads the non-merge commits from HEAD, newest first (at most
    /// --max-commits, none older than --since), with renames followed as
    /// `git diff` pairs them (`diff.renames`), so a file's older names count
    /// as its current one; files gone at HEAD, `.swarm/`, lock files and
    /// vendored trees are left out, and bulk commits (over --max-files files)
    /// count for nothing. Pairs are scored by normalised pointwise mutual
    /// information, recent commits weighing more (--half-life); a pair is kept
    /// with --min-support co-changes and --min-npmi, a test beside its
    /// implementation never. "When X changes, Y changes too" is kept when Y
    /// changed in --min-confidence of X's commits. At most 10 new ones a run
    /// are written as proposals (`.swarm/proposals/`, for the coder role, with
    /// `verify = ["file_modified:Y"]`), each with a `proposed` event; one
    /// proposed before, in any status, is not proposed again. Never writes a
    /// directive: `git swarm proposal accept` does, through the gate.
    Cochange(cochange::Args),
    /// Write the active directives for harnesses without hooks, and for humans.
    ///
    /// `agents-md` writes a marked block (`<!-- git-swarm:begin … -->` to
    /// `<!-- git-swarm:end -->`) in AGENTS.md, created when missing, and in
    /// CLAUDE.md when present; every byte outside the block is kept.
    /// `claude-rules` writes `.claude/rules/<id>.md` (`paths:` from the
    /// directive's paths) and `cursor-rules` `.cursor/rules/<id>.mdc`
    /// (`globs`, or `alwaysApply: true` when the directive has no paths). A
    /// rules file is git-swarm's when its front matter carries the
    /// `# git-swarm:generated` comment: those of retired or removed directives
    /// are removed, any other file is never touched. A second run writes
    /// nothing; a link at a target is refused and nothing is written.
    Export(export::Args),
    /// Bring another tool's knowledge in through the actionability gate.
    ///
    /// `opencode-swarm PATH` reads its `knowledge.jsonl`: each entry becomes a
    /// directive, or a quarantined entry with the reason, keeping its id (a
    /// UUID is a valid id; another is derived from the lesson and reported).
    /// `verification_predicate` becomes a `verify` predicate when it is one
    /// git-swarm runs, else a prose verification check, reported. An id
    /// already present is skipped, so a second import changes nothing; a
    /// malformed line is reported with its line and skipped (exit 2).
    Import(import::Args),
    /// Patterns learned from adversarial roles' deliberations.
    ///
    /// Store, score, re-inject and correct them. Every signal is an event;
    /// every count, score and state is computed from them (see docs/patterns.md).
    #[command(subcommand)]
    Pattern(pattern::Command),
    /// Inspect or rebuild the derived index in the git dir.
    ///
    /// The index caches parsed directives and the fold of the event log. It is
    /// keyed by a fingerprint of `.swarm/` and every command refreshes it when
    /// stale, so these are for curiosity and repair.
    #[command(subcommand)]
    Index(index::Command),
    /// Look for damage in the event log and the index; --fix repairs it.
    ///
    /// Reports conflict markers a merge left in any file under .swarm/
    /// (file:line), torn or malformed event lines (file:line), duplicate
    /// event ids, unknown event kinds and a stale index. With --fix, a torn
    /// final line is saved under local/torn/ beside its log
    /// (.git/swarm/local/torn/ for the pending log, .swarm/local/torn/ for a
    /// tracked file) and truncated, and the index is rebuilt; conflicts are
    /// left for a person. Exits 1 while an error remains.
    Doctor(doctor::Args),
    /// Generate the man pages or shell completions from the command definitions.
    #[command(subcommand)]
    Generate(generate::Command),
    /// Install, remove or inspect git-swarm's git hooks.
    ///
    /// The hooks: pre-commit and pre-push check the change against the
    /// directives; post-merge and post-checkout refresh the index. Each is a
    /// small shim in the directory git runs hooks from (`core.hooksPath`, else
    /// the hooks directory all worktrees share) that calls `git swarm hook
    /// NAME`. A hook that was there before is kept and still runs.
    /// GIT_SWARM_SKIP=1 skips git-swarm's part for one command.
    #[command(subcommand)]
    Hooks(hooks::Command),
    /// Give a task its own linked worktree and branch; merge, remove or list them.
    ///
    /// `create` makes the worktree outside the working tree on a new branch
    /// `swarm/TASK` at the task's base; `merge` cherry-picks the task's commits
    /// onto the current branch and rolls every pick back on a conflict; `abort`
    /// removes the worktree and the branch it made, nothing else. The check, the
    /// hooks and `inject` work inside the worktree (its own index and `.swarm/`).
    #[command(subcommand)]
    Worktree(worktree::Command),
    /// Run git-swarm's part of a git hook (called by the installed shims).
    #[command(hide = true)]
    Hook(hook::Args),
    /// Trust this repository's `tool:` predicates to run on this machine.
    ///
    /// Tool predicates come with the repository, so they run only once you have
    /// seen them: `trust` lists them and records a fingerprint of the set in the
    /// local git config (`swarm.trustedTools`). When a pull or a checkout changes
    /// the set, checks skip the tool predicates with a warning until you trust
    /// them again. Which programs may run at all is your allowlist
    /// (`git config --global --add swarm.allowTool NAME`).
    Trust(trust::Args),
    /// Append an event to the log (plumbing for harnesses and scripts).
    ///
    /// Each `--count` repetition is a separate append (its own lock and write),
    /// so concurrent recorders interleave whole lines.
    Record(record::Args),
    /// Run one program as a `tool:` predicate would (plumbing).
    ///
    /// The program must be on your allowlist (`git config swarm.allowTool`) and
    /// the runner's rules apply: no shell, read-only git, no path leaving the
    /// repository, a minimal environment, the timeout of `.swarm/config.toml`.
    /// Exit status: 0 the program exited 0; 1 it failed or timed out; 2 the
    /// runner refused to start it; 3 it could not be run.
    #[command(hide = true)]
    RunTool(run_tool::Args),
}

/// What a command asks `main` to exit with.
pub type Outcome = Result<ExitCode, CliError>;

/// An error on its way to the terminal.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Swarm(#[from] Error),
    #[error(transparent)]
    Io(#[from] io::Error),
}

pub fn main() -> ExitCode {
    let (argv, mut ui) = start();
    // An agent harness runs `git-swarm hook agent HARNESS EVENT` (the form
    // installed before `git-swarm-agent-hook`) on every tool call, and the
    // hook reads its arguments by hand: building clap's whole command tree
    // first was 0.6 ms of it (docs/performance.md).
    let result =
        if argv.get(1).is_some_and(|a| a == "hook") && argv.get(2).is_some_and(|a| a == "agent") {
            git_swarm::trace::mark("arguments parsed");
            hook::run_agent(&argv[3..], &mut ui)
        } else if argv.get(1).is_some_and(|a| a == "hook")
            && argv.get(2).is_some_and(|a| a == "mcp-call")
            && argv.len() == 3
        {
            mcp::run_call(&argv[0], &mut ui)
        } else {
            let cli = match Cli::try_parse_from(&argv) {
                Ok(cli) => cli,
                Err(e) => return usage::report(&e, &argv, &mut ui),
            };
            git_swarm::trace::mark("arguments parsed");
            run(cli.command, &mut ui)
        };
    finish(result, &mut ui)
}

/// `git-swarm-agent-hook HARNESS EVENT`: `hook agent` without the rest of
/// the command line, which its binary does not link.
pub fn agent_hook_main() -> ExitCode {
    let (argv, mut ui) = start();
    git_swarm::trace::mark("arguments parsed");
    let result = match argv.get(1).and_then(|a| a.to_str()) {
        Some("-h" | "--help") => ui
            .write_out(AGENT_HOOK_HELP.as_bytes())
            .map(|()| ExitCode::SUCCESS)
            .map_err(CliError::from),
        Some("-V" | "--version") => ui
            .write_out(format!("git-swarm-agent-hook {}\n", env!("CARGO_PKG_VERSION")).as_bytes())
            .map(|()| ExitCode::SUCCESS)
            .map_err(CliError::from),
        _ => hook::run_agent(argv.get(1..).unwrap_or_default(), &mut ui),
    };
    finish(result, &mut ui)
}

/// `git-swarm-agent-hook --help`.
const AGENT_HOOK_HELP: &str = "\
git-swarm's hook for coding agent harnesses (Claude Code, Codex, Gemini CLI, Cursor, opencode).

Usage: git-swarm-agent-hook HARNESS EVENT

`git swarm agents install HARNESS` registers it in the harness's hook config; the harness
runs it with its hook payload (JSON) on standard input, and it answers on standard output
in the harness's own format. HARNESS is claude-code, codex, gemini, cursor or opencode;
EVENT is session-start, pre-tool-use, subagent-start, subagent-stop or post-tool-use.

It is `git-swarm hook agent HARNESS EVENT` in a binary that starts sooner. It fails open:
whatever goes wrong, it says so in one warning on standard error, answers nothing and
exits 0, so the harness goes on. GIT_SWARM_SKIP=1 turns it off. See docs/agents.md.
";

/// What every command does first: `git -c`'s settings, the trace, the ids
/// of a test, the arguments and the terminal.
fn start() -> (Vec<std::ffi::OsString>, Ui) {
    // SAFETY: the first thing the process does, before any other thread runs.
    let unread_config = unsafe { config_parameters::apply() }.err();
    if std::env::var_os("GIT_SWARM_TRACE_PERF").is_some_and(|v| !v.is_empty()) {
        git_swarm::trace::enable();
    }
    fix_ids();
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let mut ui = Ui::new();
    if let Some(why) = unread_config {
        ui.warning(
            &format!("the settings of `git -c` were left out: {why}"),
            None,
        );
    }
    (argv, ui)
}

/// The exit status of a command's `result`, its error rendered.
fn finish(result: Outcome, ui: &mut Ui) -> ExitCode {
    git_swarm::trace::mark("done");
    for line in git_swarm::trace::report() {
        eprintln!("{line}");
    }
    match result {
        Ok(code) => code,
        Err(CliError::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(CliError::Io(e)) => {
            ui.error(&format!("{e}"), None, None);
            ExitCode::from(3)
        }
        Err(CliError::Swarm(e)) => {
            if let Error::Invalid(problems) = &e {
                ui.problems(problems);
            } else {
                ui.error(&e.to_string(), None, e.hint().as_deref());
            }
            ExitCode::from(if e.is_user_error() { 2 } else { 3 })
        }
    }
}

fn run(command: Command, ui: &mut Ui) -> Outcome {
    match command {
        Command::Init => init::run(ui),
        Command::Add(args) => add::run(*args, ui),
        Command::List(args) => list::run(args, ui),
        Command::Show(args) => show::run(args, ui),
        Command::Validate(args) => validate::run(args, ui),
        Command::Check(args) => check::run(args, ui),
        Command::Changes(args) => changes::run(args, ui),
        Command::Log(args) => log::run(args, ui),
        Command::Commit(args) => commit::run(args, ui),
        Command::Demo(args) => demo::run(args, ui),
        Command::Diff(args) => diff::run(args, ui),
        Command::Stats(args) => stats::run(args, ui),
        Command::Index(cmd) => index::run(cmd, ui),
        Command::Doctor(args) => doctor::run(args, ui),
        Command::Generate(cmd) => generate::run(cmd, ui),
        Command::Hooks(cmd) => hooks::run(cmd, ui),
        Command::Worktree(cmd) => worktree::run(cmd, ui),
        Command::Hook(args) => hook::run(args, ui),
        Command::Trust(args) => trust::run(args, ui),
        Command::Record(args) => record::run(args, ui),
        Command::RunTool(args) => run_tool::run(args, ui),
        Command::Status(args) => status::run(args, ui),
        Command::Serve(args) => serve::run(args, ui),
        Command::Mcp(args) => mcp::run(args, ui),
        Command::Agents(cmd) => agents::run(cmd, ui),
        Command::Inject(args) => inject::run(args, ui),
        Command::Search(args) => search::run(args, ui),
        Command::Ack(args) => ack::run(args, ui),
        Command::Review(args) => review::run(args, ui),
        Command::Phase(command) => phase::run(command, ui),
        Command::Hive(command) => hive::run(command, ui),
        Command::Deescalate(args) => deescalate::run(args, ui),
        Command::Retire(args) => retire::run(args, ui),
        Command::Edit(args) => edit::run(args, ui),
        Command::Explain(args) => explain::run(args, ui),
        Command::Pattern(command) => pattern::run(command, ui),
        Command::Reflect(command) => reflect::run(command, ui),
        Command::Proposal(command) => proposal::run(command, ui),
        Command::Handoff(command) => handoff::run(command, ui),
        Command::Epic(command) => epic::run(command, ui),
        Command::Harden(args) => harden::run(args, ui),
        Command::Cochange(args) => cochange::run(args, ui),
        Command::Export(args) => export::run(args, ui),
        Command::Import(args) => import::run(args, ui),
    }
}

/// The repository around the current directory.
pub fn repo() -> Result<Repo, Error> {
    let cwd = std::env::current_dir().map_err(|e| Error::io(std::path::Path::new("."), e))?;
    repo_at(&cwd)
}

/// The repository around `dir`, found as git would from there.
pub fn repo_at(dir: &std::path::Path) -> Result<Repo, Error> {
    let cwd = dir;
    let env = git_swarm::store::GitEnv {
        git_dir: std::env::var_os("GIT_DIR"),
        work_tree: std::env::var_os("GIT_WORK_TREE"),
        implicit_work_tree: std::env::var_os("GIT_IMPLICIT_WORK_TREE"),
    };
    Repo::discover(cwd, &env)
}

/// The `.swarm/` of the repository around the current directory.
pub fn store(ui: &mut Ui) -> Result<Store, Error> {
    let store = Store::open(&repo()?, clock()?)?;
    git_swarm::trace::mark("store opened");
    ui.problems(&store.config_problems);
    Ok(store)
}

/// The `.swarm/` of the repository around the current directory, with
/// what its clone takes as reviewed (see [`git_swarm::reviewed`]): for the
/// commands that show directives to agents.
pub fn store_and_review(ui: &mut Ui) -> Result<(Store, git_swarm::reviewed::Review), Error> {
    let repo = repo()?;
    let store = Store::open(&repo, clock()?)?;
    ui.problems(&store.config_problems);
    let review = review(&repo, ui);
    Ok((store, review))
}

/// What the clone of `repo` takes as reviewed, its settings' problems warned about.
pub fn review(repo: &Repo, ui: &mut Ui) -> git_swarm::reviewed::Review {
    let review = git_swarm::reviewed::Review::read(repo);
    git_swarm::trace::mark("review read");
    for (what, hint) in &review.problems {
        ui.warning(what, Some(hint));
    }
    review
}

/// The event log, telling the user about its malformed lines.
pub fn read_log(store: &Store, ui: &mut Ui) -> Result<Vec<git_swarm::event::Event>, Error> {
    let (events, problems) = git_swarm::directive_loop::records::read_log(store)?;
    ui.capped(&problems);
    Ok(events)
}

/// `GIT_SWARM_FIXED_IDS` with a clock fixed by `GIT_SWARM_NOW` fixes the
/// event ids too, seeded by the command line and the clock (see
/// [`git_swarm::event::fix_ids`]): `git swarm demo --fixed` runs each
/// command at a time of its own. The program's own path is left out, so
/// that a binary installed elsewhere (CI's checkout) prints the same ids.
fn fix_ids() {
    let on = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty());
    if !(on("GIT_SWARM_FIXED_IDS") && on("GIT_SWARM_NOW")) {
        return;
    }
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for a in std::env::args_os().skip(1) {
        h.update(a.as_encoded_bytes());
        h.update(&[0]);
    }
    h.update(
        std::env::var_os("GIT_SWARM_NOW")
            .unwrap_or_default()
            .as_encoded_bytes(),
    );
    git_swarm::event::fix_ids(h.digest());
}

/// `GIT_SWARM_NOW` fixes the clock (tests and reproducible runs); otherwise the system clock.
pub fn clock() -> Result<Clock, Error> {
    match std::env::var("GIT_SWARM_NOW") {
        Ok(s) if !s.is_empty() => s
            .parse::<jiff::Timestamp>()
            .map(|t| Clock { fixed: Some(t) })
            .map_err(|e| {
                Error::usage(
                    format!("GIT_SWARM_NOW=`{s}` is not an RFC 3339 time: {e}"),
                    "use a time like 2026-11-22T10:00:00Z, or unset it",
                )
            }),
        _ => Ok(Clock::default()),
    }
}

/// Appends events, telling the user about any torn line the append found
/// (a write cut short earlier) and saved aside.
pub fn append(store: &Store, events: &[git_swarm::event::Event], ui: &mut Ui) -> Result<(), Error> {
    let saved = store.append(events)?;
    report_torn(store, &saved, ui);
    Ok(())
}

/// Tells the user about torn lines an append saved aside.
pub fn report_torn(store: &Store, saved: &[std::path::PathBuf], ui: &mut Ui) {
    for s in saved {
        ui.warning(
            &format!("an incomplete line at the end of the event log (a write cut short) was moved to {}", store.rel(s)),
            Some("nothing else was touched; `git swarm doctor` checks the log"),
        );
    }
}

/// After violations were recorded: appends the escalations `due` (see
/// [`git_swarm::directive_loop::escalation::due`]), each said at once so
/// that one written before a failing append is still reported. Returns the
/// ids of the directives escalated now.
pub fn escalate(
    store: &Store,
    due: &[git_swarm::event::Event],
    ui: &mut Ui,
) -> Result<Vec<String>, Error> {
    let mut escalated = Vec::new();
    for e in due {
        let e = git_swarm::directive_loop::escalation::append(store, e)?;
        report_torn(store, &e.torn, ui);
        if e.written {
            ui.warning(
                &format!(
                    "escalated {} to critical + enforce: violated on 2 occasions within 30 days",
                    e.directive
                ),
                Some("`git swarm status` lists escalations; `git swarm deescalate ID --justification TEXT` ends one"),
            );
            escalated.push(e.directive);
        }
    }
    Ok(escalated)
}

/// Loads the index, telling the user about problems it found in `.swarm/`.
pub fn load_index(store: &Store, ui: &mut Ui) -> Result<git_swarm::index::Loaded, Error> {
    let loaded = git_swarm::index::load(store)?;
    warn_problems(loaded.index.error_count(), ui);
    Ok(loaded)
}

/// Warns of the problems the index found in `.swarm/`, whose files are left out.
pub fn warn_problems(errors: u64, ui: &mut Ui) {
    if errors > 0 {
        ui.warning(
            &format!(
                "{errors} problem{} in .swarm/ (files that do not parse and malformed event lines are left out)",
                if errors == 1 { "" } else { "s" }
            ),
            Some("run `git swarm validate` to see them"),
        );
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::Cli;

    /// clap's own checks of the definitions (conflicting names, bad
    /// defaults…), over the whole tree.
    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    /// The groups list their members once built.
    #[test]
    fn groups_are_complete_once_built() {
        let mut cmd = Cli::command();
        cmd.build();
        let phase = cmd.find_subcommand("phase").expect("phase");
        assert!(phase.find_subcommand("complete").is_some());
        let pattern = cmd.find_subcommand("pattern").expect("pattern");
        assert!(pattern.get_subcommands().count() > 3);
    }
}
