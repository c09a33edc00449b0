//! `git swarm agents install|uninstall|status`: git-swarm's lifecycle hooks
//! (and, with `--mcp`, its MCP server) registered in a coding agent
//! harness's project config (docs/agents.md).
//!
//! The configs are the user's files: every edit goes through a concrete
//! syntax tree (`json`, `codex`) so each key, order, indent and comment of
//! theirs stays as it was, and git-swarm's entries are found by their
//! command (`git-swarm-agent-hook …`, or an older install's `git-swarm hook
//! agent …`), never by position. Every edit is
//! planned first and written only when every file parsed, so a malformed
//! config leaves all of them untouched.
//!
//! So that uninstall gives back the very bytes a file had, install keeps a
//! record per file in the git common dir (`swarm/agents/installed/`): what
//! the file was before and what install wrote. Uninstall restores the
//! former when the file is still exactly the latter and nothing of
//! git-swarm's is left in it; otherwise it removes its entries one by one.

mod codex;
mod json;
mod record;
pub mod trust;
pub mod version;

pub use json::shell_command;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::file_kind::FileKind;
use crate::{Error, Result, safe_fs};

/// Largest harness config read (settings files are a few kilobytes).
const READ_MAX: u64 = 4 * 1024 * 1024;

/// The binary the MCP server entries run, called directly (not `git
/// swarm`): it saves git's own start-up.
pub const BINARY: &str = "git-swarm";

/// The binary the hooks run: `git-swarm hook agent` in a binary of its own
/// that links only what a hook runs, so it starts sooner on every tool
/// call (docs/performance.md). `cargo install` installs it beside
/// `git-swarm`.
pub const HOOK_BINARY: &str = "git-swarm-agent-hook";

/// The opencode plugin: written whole, removed whole. Its first line is the
/// marker that makes the file git-swarm's.
pub const OPENCODE_PLUGIN: &str = include_str!("opencode-plugin.ts");
const PLUGIN_MARKER: &str = "// git-swarm:generated";

/// A coding agent harness git-swarm installs into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Harness {
    ClaudeCode,
    Codex,
    Gemini,
    Cursor,
    Opencode,
}

/// How a hook's command is written where the harness offers a choice
/// (Claude Code): `Exec` runs `git-swarm-agent-hook` with `args` and no shell (Claude
/// Code 2.1.139 and later); `Shell` is one command line, which every
/// version runs and which always exits 0. Every other harness runs a shell
/// command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Form {
    Exec,
    Shell,
}

/// One hook entry: the harness's event, its matcher, and git-swarm's event.
#[derive(Debug, Clone, Copy)]
pub struct Hook {
    pub key: &'static str,
    pub matcher: Option<&'static str>,
    pub event: &'static str,
}

const fn hook(key: &'static str, matcher: Option<&'static str>, event: &'static str) -> Hook {
    Hook {
        key,
        matcher,
        event,
    }
}

const CLAUDE_HOOKS: &[Hook] = &[
    hook("SessionStart", None, "session-start"),
    // The spawning tools, and every tool with a command or a file a
    // directive can match (DESIGN §7e): an exact list of names.
    hook(
        "PreToolUse",
        Some("Agent|Task|Bash|Edit|MultiEdit|Write|NotebookEdit|Read"),
        "pre-tool-use",
    ),
    hook("SubagentStart", None, "subagent-start"),
    hook("SubagentStop", None, "subagent-stop"),
    hook("PostToolUse", None, "post-tool-use"),
    hook("PostToolUseFailure", None, "post-tool-use"),
];
const CODEX_HOOKS: &[Hook] = &[
    hook("SessionStart", None, "session-start"),
    // A full-match regex on the hook's tool names: the shell is `Bash`,
    // a patch `apply_patch`.
    hook(
        "PreToolUse",
        Some("spawn_agent|collaborationspawn_agent|Bash|apply_patch"),
        "pre-tool-use",
    ),
    hook("SubagentStart", None, "subagent-start"),
    hook("SubagentStop", None, "subagent-stop"),
    hook("PostToolUse", None, "post-tool-use"),
];
// Gemini CLI has no subagent events: its subagents run as the
// `invoke_agent` tool, whose BeforeTool can rewrite the task (the block goes
// before it) and whose AfterTool (the post-tool hook) carries the answer.
const GEMINI_HOOKS: &[Hook] = &[
    hook("SessionStart", None, "session-start"),
    hook("BeforeTool", Some("invoke_agent"), "subagent-start"),
    // Guards only, and only a command can be refused: a BeforeTool answer
    // cannot add context, so a call's lessons come with its result, from
    // AfterTool. An unanchored regex, anchored here.
    hook("BeforeTool", Some("^run_shell_command$"), "pre-tool-use"),
    hook("AfterTool", None, "post-tool-use"),
];
// Cursor's subagentStart can only allow or deny a subagent, not give it
// context, so its subagents get their directives from `export cursor-rules`.
const CURSOR_HOOKS: &[Hook] = &[
    hook("sessionStart", None, "session-start"),
    hook("postToolUse", None, "post-tool-use"),
    hook("postToolUseFailure", None, "post-tool-use"),
];

impl Harness {
    pub const ALL: [Harness; 5] = [
        Harness::ClaudeCode,
        Harness::Codex,
        Harness::Gemini,
        Harness::Cursor,
        Harness::Opencode,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Harness::ClaudeCode => "claude-code",
            Harness::Codex => "codex",
            Harness::Gemini => "gemini",
            Harness::Cursor => "cursor",
            Harness::Opencode => "opencode",
        }
    }

    /// Where the hooks go, relative to the work tree.
    pub fn hooks_file(self) -> &'static str {
        match self {
            Harness::ClaudeCode => ".claude/settings.json",
            Harness::Codex => ".codex/hooks.json",
            Harness::Gemini => ".gemini/settings.json",
            Harness::Cursor => ".cursor/hooks.json",
            Harness::Opencode => ".opencode/plugins/git-swarm.ts",
        }
    }

    /// Where `--mcp` registers the MCP server (for opencode, when there is
    /// no `opencode.jsonc`: see [`mcp_target`]).
    pub fn mcp_file(self) -> &'static str {
        match self {
            Harness::ClaudeCode => ".mcp.json",
            Harness::Codex => ".codex/config.toml",
            Harness::Gemini => ".gemini/settings.json",
            Harness::Cursor => ".cursor/mcp.json",
            Harness::Opencode => "opencode.json",
        }
    }

    /// The hook entries of a harness with a JSON hooks file (none for
    /// opencode, whose plugin handles every event).
    pub fn hooks(self) -> &'static [Hook] {
        match self {
            Harness::ClaudeCode => CLAUDE_HOOKS,
            Harness::Codex => CODEX_HOOKS,
            Harness::Gemini => GEMINI_HOOKS,
            Harness::Cursor => CURSOR_HOOKS,
            Harness::Opencode => &[],
        }
    }

    /// What the user still has to do before the harness runs what install
    /// wrote: the hooks, and with `mcp` the MCP server too (a step for a
    /// server that was not registered would send the user looking for it).
    pub fn trust_step(self, mcp: bool) -> String {
        let (hooks, server) = match self {
            Harness::ClaudeCode => (
                "Claude Code runs project hooks from .claude/settings.json once the folder is trusted",
                "; a project MCP server in .mcp.json waits for your approval at the next start (or `claude mcp` to approve it)",
            ),
            Harness::Codex => (
                "Codex reads .codex/ only in a trusted project (run `codex` here and trust it, or `codex exec --trust`), and runs a project hook only once you have trusted it: open `/hooks` in Codex and trust git-swarm's (again after any change to them); untrusted hooks are skipped without a word; `git swarm agents status` says what is left",
                "",
            ),
            Harness::Gemini => (
                "Gemini CLI runs project hooks only in a trusted folder: trust this one when Gemini asks at its next start (headless: add it to ~/.gemini/trustedFolders.json as TRUST_FOLDER, or run with GEMINI_CLI_TRUST_WORKSPACE=true); `git swarm agents status` says whether it is",
                "",
            ),
            Harness::Cursor => (
                "Cursor loads .cursor/hooks.json when the project opens: restart Cursor (or reopen the project)",
                "; turn the MCP server on under Customize > MCPs",
            ),
            Harness::Opencode => (
                "opencode loads project plugins when it starts: restart opencode; the plugin needs git-swarm-agent-hook on PATH",
                "",
            ),
        };
        if mcp {
            format!("{hooks}{server}")
        } else {
            hooks.to_owned()
        }
    }
}

/// opencode's other project config name: it reads `opencode.jsonc` and
/// `opencode.json` both, so a user who has the former would get a second
/// file beside it.
const OPENCODE_JSONC: &str = "opencode.jsonc";

/// Is there something at `rel` (a link or a folder too: [`read`] refuses those)?
fn is_there(root: &Path, rel: &str) -> bool {
    std::fs::symlink_metadata(root.join(rel)).is_ok()
}

/// The MCP config install edits: `opencode.jsonc` when there is one.
fn mcp_target(root: &Path, h: Harness) -> &'static str {
    if h == Harness::Opencode && is_there(root, OPENCODE_JSONC) {
        OPENCODE_JSONC
    } else {
        h.mcp_file()
    }
}

/// The MCP configs uninstall and status look into: for opencode, each of
/// its two names that is there (the entry may be in either, if the user
/// created `opencode.jsonc` after install).
fn mcp_candidates(root: &Path, h: Harness) -> Vec<&'static str> {
    let mut v = Vec::new();
    if h == Harness::Opencode && is_there(root, OPENCODE_JSONC) {
        v.push(OPENCODE_JSONC);
        if is_there(root, h.mcp_file()) {
            v.push(h.mcp_file());
        }
    } else {
        v.push(h.mcp_file());
    }
    v
}

/// What happened to one file.
#[derive(Debug, Clone, Serialize)]
pub struct FileChange {
    pub harness: Harness,
    /// Relative to the work tree, `/`-separated.
    pub path: String,
    /// What was added or removed: harness event names, `mcp`, `plugin`.
    pub entries: Vec<String>,
    /// Entries left alone, with why (a user's `git-swarm` MCP entry that differs from ours).
    pub kept: Vec<String>,
}

/// What install or uninstall did.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Report {
    /// Files written (or, for uninstall, restored or removed).
    pub changed: Vec<FileChange>,
    /// Files that already were as asked: nothing written.
    pub unchanged: Vec<FileChange>,
    /// The repository has no `.swarm/`: every hook installed does nothing
    /// until it has one (`git swarm init`).
    pub no_swarm: bool,
}

/// Where install works: the work tree, and the folder of its records.
pub struct Place<'a> {
    pub root: &'a Path,
    records: PathBuf,
}

impl<'a> Place<'a> {
    /// The records live in the git dir every worktree shares
    /// (`swarm/agents/installed/`), one folder per worktree: each has its
    /// own `.claude/settings.json`.
    pub fn of(repo: &'a crate::store::Repo) -> Place<'a> {
        let worktree = if repo.git_dir == repo.common_dir {
            std::ffi::OsString::from("main")
        } else {
            let name = repo.git_dir.file_name().unwrap_or_default();
            let mut tagged = std::ffi::OsString::from("worktree-");
            tagged.push(name);
            tagged
        };
        Place {
            root: &repo.root,
            records: repo
                .common_dir
                .join("swarm")
                .join("agents")
                .join("installed")
                .join(worktree),
        }
    }
}

/// One file of a plan: its bytes on disk and what the plan makes of them.
struct Planned {
    before: Option<String>,
    after: Option<String>,
}

/// The files a command reads and writes, read once and edited in memory.
struct Plan<'a> {
    place: &'a Place<'a>,
    files: BTreeMap<String, Planned>,
}

impl<'a> Plan<'a> {
    fn new(place: &'a Place<'a>) -> Self {
        Plan {
            place,
            files: BTreeMap::new(),
        }
    }

    /// The file's text as planned so far, without a byte-order mark.
    fn text(&mut self, rel: &str) -> Result<Option<String>> {
        if !self.files.contains_key(rel) {
            let before = read(self.place.root, rel)?;
            let after = before.clone();
            self.files.insert(rel.to_owned(), Planned { before, after });
        }
        Ok(self.files[rel]
            .after
            .as_deref()
            .map(|t| without_bom(t).to_owned()))
    }

    /// Plans `after` for `rel`, with the byte-order mark and the line
    /// endings the file had.
    fn set(&mut self, rel: &str, after: Option<String>) {
        if let Some(p) = self.files.get_mut(rel) {
            p.after = after.map(|a| match &p.before {
                Some(b) => {
                    let a = line_endings_of(b, a);
                    if b.starts_with(BOM) {
                        format!("{BOM}{a}")
                    } else {
                        a
                    }
                }
                None => a,
            });
        }
    }
}

/// Adds git-swarm's hooks (and, with `mcp`, its MCP server) for each of
/// `harnesses`. Nothing is written unless every file involved parses.
pub fn install(
    place: &Place<'_>,
    harnesses: &[Harness],
    mcp: bool,
    claude_form: Form,
) -> Result<Report> {
    let _lock = lock(place)?;
    let mut plan = Plan::new(place);
    let mut changes = Vec::new();
    for &h in dedup(harnesses).iter() {
        changes.push(install_hooks(&mut plan, h, claude_form)?);
        if mcp {
            changes.push(install_mcp(&mut plan, h, mcp_target(place.root, h))?);
        }
    }
    apply(place, &plan, true)?;
    let mut report = split(changes);
    // The hooks look for the store and quietly do nothing without it, so
    // install says so (and still installs: `init` may come next).
    report.no_swarm = !place.root.join(crate::store::SWARM_DIR).is_dir();
    Ok(report)
}

/// Removes what [`install`] added for each of `harnesses` (with `mcp`, the
/// MCP server too), restoring a file's bytes from before install where it
/// can (see the module documentation).
pub fn uninstall(place: &Place<'_>, harnesses: &[Harness], mcp: bool) -> Result<Report> {
    let _lock = lock(place)?;
    let mut plan = Plan::new(place);
    let mut changes = Vec::new();
    for &h in dedup(harnesses).iter() {
        changes.push(uninstall_hooks(&mut plan, h)?);
        if mcp {
            for rel in mcp_candidates(place.root, h) {
                changes.push(uninstall_mcp(&mut plan, h, rel)?);
            }
        }
    }
    apply(place, &plan, false)?;
    Ok(split(changes))
}

/// How long a command waits for another install or uninstall to finish.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// Takes this worktree's lock, waiting for a run that holds it; held until
/// the file is dropped. Two runs at once would each read the configs and
/// the records, then write them back over each other's entries (two
/// harnesses share `.gemini/settings.json`, every file the list of created
/// folders), so every file is read only once the lock is held.
fn lock(place: &Place<'_>) -> Result<std::fs::File> {
    let dir = &place.records;
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    crate::event::open_locked(&dir.join("lock"), LOCK_WAIT)
}

fn dedup(harnesses: &[Harness]) -> Vec<Harness> {
    let mut v = harnesses.to_vec();
    v.sort();
    v.dedup();
    v
}

fn split(changes: Vec<FileChange>) -> Report {
    let (changed, unchanged) = changes.into_iter().partition(|c| !c.entries.is_empty());
    Report {
        changed,
        unchanged,
        no_swarm: false,
    }
}

fn change(harness: Harness, path: &str, entries: Vec<String>) -> FileChange {
    FileChange {
        harness,
        path: path.to_owned(),
        entries,
        kept: Vec::new(),
    }
}

fn install_hooks(plan: &mut Plan<'_>, h: Harness, form: Form) -> Result<FileChange> {
    let rel = h.hooks_file();
    let text = plan.text(rel)?;
    if h == Harness::Opencode {
        let Some(text) = text else {
            plan.set(rel, Some(OPENCODE_PLUGIN.to_owned()));
            return Ok(change(h, rel, vec!["plugin".into()]));
        };
        return match plugin_state(&plan.place.records, &text) {
            Plugin::Current => Ok(change(h, rel, vec![])),
            Plugin::Foreign => Err(Error::usage(
                format!(
                    "{rel} is there and is not git-swarm's plugin (its first line is not `{PLUGIN_MARKER}`): nothing was written"
                ),
                "move your own plugin to another name under .opencode/plugins/, then install again",
            )),
            // An edit is the user's, as for uninstall: never written over.
            Plugin::Edited => {
                let mut c = change(h, rel, vec![]);
                c.kept.push(format!(
                    "{rel} was edited since git-swarm wrote it; left as it is"
                ));
                Ok(c)
            }
            Plugin::Older => {
                plan.set(rel, Some(OPENCODE_PLUGIN.to_owned()));
                Ok(change(h, rel, vec!["plugin".into()]))
            }
        };
    }
    let (after, added) = json::add_hooks(h, rel, text.as_deref(), form)?;
    if !added.is_empty() {
        plan.set(rel, Some(after));
    }
    Ok(change(h, rel, added))
}

fn install_mcp(plan: &mut Plan<'_>, h: Harness, rel: &str) -> Result<FileChange> {
    let text = plan.text(rel)?;
    let added = if h == Harness::Codex {
        codex::add_mcp(rel, text.as_deref())?
    } else {
        json::add_mcp(h, rel, text.as_deref())?
    };
    let entries = match added {
        Some(after) => {
            plan.set(rel, Some(after));
            vec!["mcp".to_owned()]
        }
        None => vec![],
    };
    Ok(change(h, rel, entries))
}

fn uninstall_hooks(plan: &mut Plan<'_>, h: Harness) -> Result<FileChange> {
    let rel = h.hooks_file();
    let Some(text) = plan.text(rel)? else {
        return Ok(change(h, rel, vec![]));
    };
    if h == Harness::Opencode {
        let mut c = change(h, rel, vec![]);
        match plugin_state(&plan.place.records, &text) {
            Plugin::Foreign => c.kept.push(format!(
                "{rel} is not git-swarm's plugin (no `{PLUGIN_MARKER}` first line)"
            )),
            Plugin::Edited => c.kept.push(format!(
                "{rel} was edited since git-swarm wrote it; left as it is"
            )),
            Plugin::Current | Plugin::Older => {
                plan.set(rel, None);
                c.entries.push("plugin".into());
            }
        }
        return Ok(c);
    }
    let (after, removed) = json::remove_hooks(h, rel, &text)?;
    if !removed.is_empty() {
        plan.set(rel, Some(after));
    }
    Ok(change(h, rel, removed))
}

fn uninstall_mcp(plan: &mut Plan<'_>, h: Harness, rel: &str) -> Result<FileChange> {
    let Some(text) = plan.text(rel)? else {
        return Ok(change(h, rel, vec![]));
    };
    let removed = if h == Harness::Codex {
        codex::remove_mcp(rel, &text)?
    } else {
        json::remove_mcp(h, rel, &text)?
    };
    let mut c = change(h, rel, vec![]);
    match removed {
        json::Removed::Yes(after) => {
            plan.set(rel, Some(after));
            c.entries.push("mcp".into());
        }
        json::Removed::Absent => {}
        json::Removed::Differs => c.kept.push(
            "the `git-swarm` MCP server entry is not the one install writes; left as it is".into(),
        ),
    }
    Ok(c)
}

/// Whose the opencode plugin at git-swarm's path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plugin {
    /// This version's plugin.
    Current,
    /// Exactly what install last wrote here (an older git-swarm's plugin).
    Older,
    /// git-swarm's marker, but bytes git-swarm did not write: the user's
    /// edit, which install and uninstall both leave alone.
    Edited,
    /// Not git-swarm's at all (no marker first line).
    Foreign,
}

/// One decision for install, uninstall and status: `text` is the plugin
/// without a byte-order mark.
fn plugin_state(records: &Path, text: &str) -> Plugin {
    if text == OPENCODE_PLUGIN {
        return Plugin::Current;
    }
    if !text.starts_with(PLUGIN_MARKER) {
        return Plugin::Foreign;
    }
    let written = record::load(records, Harness::Opencode.hooks_file())
        .filter(|r| r.version == record::VERSION)
        .is_some_and(|r| without_bom(&r.written) == text);
    if written {
        Plugin::Older
    } else {
        Plugin::Edited
    }
}

/// A UTF-8 byte-order mark: some Windows editors open a file with one.
/// The parsers refuse it, the harnesses' readers skip it, so it is set
/// aside for the edit and put back when writing.
const BOM: char = '\u{feff}';

fn without_bom(text: &str) -> &str {
    text.strip_prefix(BOM).unwrap_or(text)
}

/// `after` with the line endings of `before`: the editors write `\n`, so a
/// file whose every line ends in `\r\n` would get lines of another kind.
/// A file mixing both is left as the edit made it.
fn line_endings_of(before: &str, after: String) -> String {
    let crlf = before.matches("\r\n").count();
    if crlf == 0 || crlf != before.matches('\n').count() {
        return after;
    }
    let mut out = String::with_capacity(after.len() + after.len() / 16);
    let mut prev = '\0';
    for c in after.chars() {
        if c == '\n' && prev != '\r' {
            out.push('\r');
        }
        out.push(c);
        prev = c;
    }
    out
}

/// Whose `git-swarm` MCP server entry a config holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpState {
    Absent,
    /// Exactly the entry install writes.
    Ours,
    /// An entry of that name the user wrote: registered, but not git-swarm's.
    Foreign,
}

/// Does `text` (the file `rel`) still hold anything of git-swarm's?
fn holds_ours(rel: &str, text: &str) -> bool {
    let text = without_bom(text);
    if rel.ends_with(".ts") {
        return text.starts_with(PLUGIN_MARKER);
    }
    if rel.ends_with(".toml") {
        // Unreadable counts as holding ours: the bytes are not restored over it.
        return !matches!(
            codex::mcp_state(rel, text),
            Ok(McpState::Absent | McpState::Foreign)
        );
    }
    json::holds_ours(text)
}

/// Writes what the plan changed and keeps the records up to date.
fn apply(place: &Place<'_>, plan: &Plan<'_>, installing: bool) -> Result<()> {
    let mut dirs = record::created_dirs(&place.records);
    let mut removed_any = false;
    for (rel, p) in &plan.files {
        if p.after == p.before {
            continue;
        }
        // The record holds while the file is exactly what git-swarm last wrote.
        let current = record::load(&place.records, rel)
            .filter(|r| r.version == record::VERSION)
            .filter(|r| p.before.as_deref() == Some(r.written.as_str()));
        if installing {
            let after = p.after.as_deref().unwrap_or_default();
            dirs.extend(write(place.root, rel, after)?);
            let r = match current {
                Some(mut r) => {
                    r.written = after.to_owned();
                    r
                }
                None => record::Record::new(p.before.clone(), after.to_owned()),
            };
            record::save(&place.records, rel, &r)?;
            continue;
        }
        let ours_left = p.after.as_deref().is_some_and(|t| holds_ours(rel, t));
        // Nothing of git-swarm's left and nothing else changed: the bytes
        // from before install (or no file, when install created it).
        let target = match &current {
            Some(r) if !ours_left => r.original.as_deref(),
            _ => p.after.as_deref(),
        };
        match target {
            Some(t) => {
                write(place.root, rel, t)?;
            }
            None => {
                remove(place.root, rel)?;
                removed_any = true;
            }
        }
        match current {
            Some(mut r) if ours_left => {
                r.written = p.after.clone().unwrap_or_default();
                record::save(&place.records, rel, &r)?;
            }
            _ => record::forget(&place.records, rel)?,
        }
    }
    if removed_any {
        // Deepest first; a folder the user put something into stays.
        dirs.sort_by_key(|d| std::cmp::Reverse(d.len()));
        for d in &dirs {
            let _ = std::fs::remove_dir(place.root.join(d));
        }
        dirs.retain(|d| place.root.join(d).is_dir());
    }
    dirs.sort();
    dirs.dedup();
    record::save_created_dirs(&place.records, &dirs)
}

/// Reads the config `rel`, `None` when it is missing; a link (at the file
/// or a folder on the way), anything but a regular file, or a file that is
/// not UTF-8 is refused.
fn read(root: &Path, rel: &str) -> Result<Option<String>> {
    refuse_link(root, rel)?;
    let path = root.join(rel);
    let bytes = match safe_fs::read(&path, READ_MAX) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            if let Some(kind) = safe_fs::not_regular(&e) {
                return Err(refused(rel, kind, "a regular file"));
            }
            if let Some(limit) = safe_fs::over_limit(&e) {
                return Err(Error::usage(
                    format!(
                        "{rel}: {}: nothing was written",
                        crate::file_kind::TooLarge(limit)
                    ),
                    "a harness config is a few kilobytes of settings: check that this is the file you meant, cut it down (or move it away), then run again",
                ));
            }
            return Err(Error::io(&path, e));
        }
    };
    String::from_utf8(bytes).map(Some).map_err(|_| {
        Error::usage(
            format!("{rel} is not UTF-8 text: nothing was written"),
            "a harness config is JSON or TOML text; fix or move the file, then run again",
        )
    })
}

/// Writes `rel` atomically, creating the folders on the way; returns the
/// folders it created (relative, deepest last) so uninstall can remove them.
fn write(root: &Path, rel: &str, text: &str) -> Result<Vec<String>> {
    refuse_link(root, rel)?;
    let mut created = Vec::new();
    let mut at = PathBuf::from(root);
    let parts: Vec<&str> = rel.split('/').collect();
    for (i, part) in parts[..parts.len() - 1].iter().enumerate() {
        at.push(part);
        if std::fs::symlink_metadata(&at).is_err() {
            std::fs::create_dir(&at).map_err(|e| Error::io(&at, e))?;
            created.push(parts[..=i].join("/"));
        }
    }
    refuse_link(root, rel)?;
    safe_fs::replace(&root.join(rel), text.as_bytes())?;
    Ok(created)
}

/// Removes `rel` (gone already is fine).
fn remove(root: &Path, rel: &str) -> Result<()> {
    refuse_link(root, rel)?;
    let path = root.join(rel);
    match std::fs::remove_file(&path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(&path, e)),
        _ => Ok(()),
    }
}

/// Refuses `rel` when it, or a folder on the way to it, is a link or not
/// what it should be: a config is never read or written through a link.
fn refuse_link(root: &Path, rel: &str) -> Result<()> {
    let mut at = root.to_path_buf();
    let parts: Vec<&str> = rel.split('/').collect();
    for (i, part) in parts.iter().enumerate() {
        at.push(part);
        let Ok(meta) = std::fs::symlink_metadata(&at) else {
            return Ok(());
        };
        let kind = FileKind::of(&meta);
        let shown = parts[..=i].join("/");
        if i + 1 == parts.len() {
            if let Some(kind) = kind {
                return Err(refused(&shown, kind, "a regular file"));
            }
        } else if kind != Some(FileKind::Folder) {
            return Err(refused(&shown, kind.unwrap_or(FileKind::File), "a folder"));
        }
    }
    Ok(())
}

fn refused(rel: &str, kind: FileKind, wanted: &str) -> Error {
    let what = match kind {
        FileKind::Other => "something other than a regular file".to_owned(),
        k => k.to_string(),
    };
    let hint = match kind {
        FileKind::Symlink => {
            "replace the link with the file itself (or move it away), then run again".to_owned()
        }
        FileKind::Folder => format!(
            "{rel} should be a file the harness reads: move the folder away (or rename it), then run again"
        ),
        FileKind::File => format!(
            "the harness config goes inside a folder named {rel}: move that file away (or rename it), then run again"
        ),
        _ => format!("remove {rel} (or move it away), then run again"),
    };
    Error::usage(
        format!(
            "{rel} is {what}, not {wanted}: git-swarm does not read or write a harness config through it; nothing was written"
        ),
        hint,
    )
}

/// Where one harness stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Installed,
    /// Some of git-swarm's entries are there, not all (or the plugin is an older one).
    Partial,
    /// The opencode plugin was edited since git-swarm wrote it: it runs,
    /// and install and uninstall leave it alone.
    Edited,
    NotInstalled,
    /// The config could not be read or parsed.
    Unreadable,
}

/// `agents status` for one harness.
#[derive(Debug, Clone, Serialize)]
pub struct HarnessStatus {
    pub harness: Harness,
    pub file: String,
    pub state: State,
    /// Harness events without git-swarm's hook (for `partial`).
    pub missing: Vec<String>,
    pub mcp_file: String,
    /// A `git-swarm` MCP server entry is there (git-swarm's or the user's own).
    pub mcp_registered: bool,
    /// The registered `git-swarm` entry is not the one install writes: the
    /// user's own, which install and uninstall leave alone.
    pub mcp_foreign: bool,
    pub trust_step: String,
    /// Why the config could not be read, for `unreadable`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// Why the MCP config could not be read (then `mcp_registered` is false).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mcp_problem: Option<String>,
    /// Claude Code's hooks: `exec` or `shell` (see [`Form`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub form: Option<Form>,
    /// The harness's program, as found on PATH (see [`Found`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub program_path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The version against the one git-swarm's real-harness suite runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub support: Option<version::Support>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tested_version: Option<String>,
    /// What the harness's own trust file says of this work tree.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trust: Option<trust::Trust>,
    /// What is still to do before the hooks run, each a sentence.
    pub todo: Vec<String>,
}

/// What the command line found of a harness's program.
#[derive(Debug, Clone, Default)]
pub struct Found {
    /// Its path on PATH; `None` when it is not there.
    pub path: Option<PathBuf>,
    /// What its `--version` said.
    pub version: Option<version::Version>,
    /// What its trust file says of this work tree, where it keeps one.
    pub trust: Option<trust::Trust>,
}

/// Where each harness stands in this work tree. `found` is what the
/// command line found of each harness's program.
pub fn status(place: &Place<'_>, found: &dyn Fn(Harness) -> Found) -> Vec<HarnessStatus> {
    let root = place.root;
    Harness::ALL
        .iter()
        .map(|&h| {
            let mut s = HarnessStatus {
                harness: h,
                file: h.hooks_file().to_owned(),
                state: State::NotInstalled,
                missing: Vec::new(),
                mcp_file: mcp_target(root, h).to_owned(),
                mcp_registered: false,
                mcp_foreign: false,
                trust_step: String::new(),
                problem: None,
                mcp_problem: None,
                form: None,
                program: version::program(h).map(str::to_owned),
                program_path: None,
                version: None,
                support: None,
                tested_version: version::tested(h).map(|v| v.to_string()),
                trust: None,
                todo: Vec::new(),
            };
            match hook_state(place, h) {
                Ok((state, missing, form)) => {
                    s.state = state;
                    s.missing = missing;
                    s.form = form;
                }
                Err(e) => {
                    s.state = State::Unreadable;
                    s.problem = Some(e.to_string());
                }
            }
            let mut mcp = McpState::Absent;
            for rel in mcp_candidates(root, h) {
                match mcp_state(root, h, rel) {
                    Ok(McpState::Absent) => {}
                    Ok(state) => {
                        mcp = state;
                        s.mcp_file = rel.to_owned();
                        break;
                    }
                    Err(e) => {
                        s.mcp_problem = Some(e.to_string());
                        s.mcp_file = rel.to_owned();
                        break;
                    }
                }
            }
            s.mcp_registered = mcp != McpState::Absent;
            s.mcp_foreign = mcp == McpState::Foreign;
            s.trust_step = h.trust_step(s.mcp_registered);
            if matches!(s.state, State::Installed | State::Partial | State::Edited) {
                assess(&mut s, &found(h));
            }
            s
        })
        .collect()
}

/// git-swarm's hooks in this work tree's `.codex/hooks.json`, as Codex
/// keys and hashes their trust (see [`trust::codex`]).
pub fn codex_hooks(root: &Path) -> Result<Vec<trust::CodexHook>> {
    let rel = Harness::Codex.hooks_file();
    let Some(text) = read(root, rel)? else {
        return Ok(Vec::new());
    };
    let file = root.join(rel);
    Ok(json::placed(Harness::Codex, rel, without_bom(&text))?
        .iter()
        .map(|p| trust::CodexHook::of(&file, p))
        .collect())
}

/// What follows from the harness's program for an installed harness: its
/// version against the one tested, and what is still to do.
fn assess(s: &mut HarnessStatus, found: &Found) {
    let h = s.harness;
    s.trust = found.trust.clone();
    match &found.trust {
        Some(trust::Trust::NotTrusted { todo }) => s.todo.push(todo.clone()),
        Some(trust::Trust::Unknown { why }) => s.todo.push(format!(
            "whether {} trusts this folder is not known: {why}",
            h.name()
        )),
        _ => {}
    }
    s.program_path = found.path.as_ref().map(|p| p.display().to_string());
    s.version = found.version.map(|v| v.to_string());
    s.support = found.version.and_then(|v| version::support(h, v));
    let Some(program) = version::program(h) else {
        return;
    };
    if found.path.is_none() {
        s.todo.push(format!(
            "`{program}` is not on PATH here, so its version is not known (git-swarm's suite runs {})",
            s.tested_version.as_deref().unwrap_or("?")
        ));
        return;
    }
    if let (Some(v), Some(version::Support::Older)) = (found.version, s.support) {
        s.todo.push(format!(
            "{program} {v} is older than {} (the version git-swarm's suite runs): its hooks may lack events or fields; update it",
            s.tested_version.as_deref().unwrap_or("?")
        ));
    }
    if h == Harness::ClaudeCode
        && s.form == Some(Form::Exec)
        && found.version.is_some_and(|v| v < version::CLAUDE_EXEC_MIN)
    {
        s.todo.push(format!(
            "Claude Code before {} ignores the hooks' `args` and would deny every subagent spawn: run `git swarm agents install claude-code` again (it writes the shell form for this version), or update Claude Code",
            version::CLAUDE_EXEC_MIN
        ));
    }
}

fn mcp_state(root: &Path, h: Harness, rel: &str) -> Result<McpState> {
    let Some(text) = read(root, rel)? else {
        return Ok(McpState::Absent);
    };
    let text = without_bom(&text);
    if h == Harness::Codex {
        codex::mcp_state(rel, text)
    } else {
        json::mcp_state(h, rel, text)
    }
}

fn hook_state(place: &Place<'_>, h: Harness) -> Result<(State, Vec<String>, Option<Form>)> {
    let rel = h.hooks_file();
    let Some(text) = read(place.root, rel)? else {
        return Ok((State::NotInstalled, vec![], None));
    };
    let text = without_bom(&text).to_owned();
    if h == Harness::Opencode {
        return Ok(match plugin_state(&place.records, &text) {
            Plugin::Current => (State::Installed, vec![], None),
            Plugin::Older => (
                State::Partial,
                vec!["plugin (an older version: install again)".into()],
                None,
            ),
            Plugin::Edited => (State::Edited, vec![], None),
            Plugin::Foreign => (State::NotInstalled, vec![], None),
        });
    }
    let mut missing = json::missing_hooks(h, rel, &text)?;
    let (outdated, form) = json::handlers_form(h, rel, &text)?;
    if outdated && missing.len() < h.hooks().len() {
        missing.push("entries of an older git-swarm (install again)".into());
    }
    let state = if missing.is_empty() {
        State::Installed
    } else if missing.len() == h.hooks().len() {
        State::NotInstalled
    } else {
        State::Partial
    };
    let missing = if state == State::Partial {
        missing
    } else {
        vec![]
    };
    Ok((state, missing, form))
}
