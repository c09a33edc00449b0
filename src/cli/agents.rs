//! `git swarm agents install|uninstall|status`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::agents::{self, Harness, Place, Report, State};
use serde::Serialize;

use super::{Format, Outcome, Ui};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Add git-swarm's lifecycle hooks to a harness's project config.
    ///
    /// Merges git-swarm's entries into the config each harness reads
    /// (claude-code: .claude/settings.json, codex: .codex/hooks.json, gemini:
    /// .gemini/settings.json, cursor: .cursor/hooks.json), keeping every key,
    /// hook, comment and indent of yours; for opencode it writes the plugin
    /// .opencode/plugins/git-swarm.ts. Each hook runs `git-swarm-agent-hook
    /// <harness> <event>` (installed beside git-swarm), so it must be on PATH. Running it again
    /// changes nothing. A config that does not parse is reported with its
    /// line and column (exit 2) and nothing is written; a link is refused.
    /// An opencode plugin edited since git-swarm wrote it is kept, with a
    /// warning (delete it, then install, for git-swarm's current one).
    /// With --mcp, also registers `git swarm mcp` as the harness's MCP server.
    /// Then take the trust step it prints. See docs/agents.md.
    Install(ChangeArgs),
    /// Remove what `agents install` added, and nothing else.
    ///
    /// A file install created is removed (with the folders it created, when
    /// empty); a file that was there gets back its bytes from before install
    /// when nothing else changed it since, else only git-swarm's entries
    /// (found by their `git-swarm-agent-hook` command, or an older install's `git-swarm hook agent`) are taken out. The
    /// opencode plugin goes only while it is exactly what git-swarm wrote (an
    /// edited one is kept, with a warning). With --mcp, the MCP server entry
    /// too, when it is the one install wrote.
    Uninstall(ChangeArgs),
    /// Show, per harness, whether git-swarm's hooks and MCP server are installed.
    ///
    /// States: installed, partly installed (the harness events still missing
    /// git-swarm's hook, or an older plugin), edited (the opencode plugin,
    /// changed since git-swarm wrote it: yours now), not installed,
    /// unreadable (the config does not parse, or has a shape install refuses). Also whether the MCP server is registered, and whether that
    /// `git-swarm` entry is git-swarm's or your own; whether `git-swarm` is on
    /// PATH (every hook calls it); and the trust step each harness still asks
    /// of you.
    Status(StatusArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
enum HarnessArg {
    ClaudeCode,
    Codex,
    Gemini,
    Cursor,
    Opencode,
}

impl From<HarnessArg> for Harness {
    fn from(h: HarnessArg) -> Harness {
        match h {
            HarnessArg::ClaudeCode => Harness::ClaudeCode,
            HarnessArg::Codex => Harness::Codex,
            HarnessArg::Gemini => Harness::Gemini,
            HarnessArg::Cursor => Harness::Cursor,
            HarnessArg::Opencode => Harness::Opencode,
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct ChangeArgs {
    /// The harnesses.
    #[arg(value_enum, required = true)]
    harnesses: Vec<HarnessArg>,
    /// The MCP server entry too (`git swarm mcp`).
    #[arg(long)]
    mcp: bool,
}

#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(cmd: Command, ui: &mut Ui) -> Outcome {
    let repo = super::repo()?;
    let place = Place::of(&repo);
    match cmd {
        Command::Install(args) => {
            let harnesses = harnesses(&args);
            let mut claude_form = agents::Form::Shell;
            if harnesses.contains(&Harness::ClaudeCode) {
                let found = probe(Harness::ClaudeCode);
                claude_form = agents::version::claude_form(found.version);
                let why = match (&found.path, found.version) {
                    (Some(_), Some(v)) if claude_form == agents::Form::Exec => {
                        format!("Claude Code {v} runs them without a shell")
                    }
                    (Some(_), Some(v)) => format!(
                        "Claude Code {v} is older than {}, which ignores a hook's `args`",
                        agents::version::CLAUDE_EXEC_MIN
                    ),
                    (Some(_), None) => "`claude --version` said no version".to_owned(),
                    (None, _) => {
                        "`claude` is not on PATH here, so its version is not known".to_owned()
                    }
                };
                let form = match claude_form {
                    agents::Form::Exec => "exec form (`git-swarm` with `args`)",
                    agents::Form::Shell => "shell form, which every version runs",
                };
                ui.note(&format!("claude-code: hooks in the {form}: {why}"));
            }
            let report = agents::install(&place, &harnesses, args.mcp, claude_form)?;
            render(ui, &report, "added", &harnesses)?;
            for &h in &harnesses {
                writeln!(ui.out, "{}: {}", h.name(), h.trust_step(args.mcp))?;
            }
            if !args.mcp {
                let names: Vec<&str> = harnesses.iter().map(|h| h.name()).collect();
                writeln!(
                    ui.out,
                    "To register the MCP server too: git swarm agents install {} --mcp",
                    names.join(" ")
                )?;
            }
            if report.no_swarm {
                ui.warning(
                    "this repository has no .swarm/: the hooks installed do nothing until it has one",
                    Some("run `git swarm init`"),
                );
            }
            warn_path(ui);
            Ok(ExitCode::SUCCESS)
        }
        Command::Uninstall(args) => {
            let harnesses = harnesses(&args);
            let report = agents::uninstall(&place, &harnesses, args.mcp)?;
            render(ui, &report, "removed", &harnesses)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Status(args) => status(ui, &place, &repo, args.format),
    }
}

fn harnesses(args: &ChangeArgs) -> Vec<Harness> {
    let mut v = args.harnesses.clone();
    v.sort();
    v.dedup();
    v.into_iter().map(Harness::from).collect()
}

fn render(ui: &mut Ui, report: &Report, verb: &str, harnesses: &[Harness]) -> std::io::Result<()> {
    for c in &report.changed {
        writeln!(
            ui.out,
            "{}: {}: {verb} {}",
            c.harness.name(),
            c.path,
            c.entries.join(", ")
        )?;
    }
    let hint = if verb == "added" {
        "git-swarm does not write over what it did not write: delete it, then install again, to get git-swarm's current one"
    } else {
        "git-swarm removes only what it wrote; edit or delete it by hand if you want it gone"
    };
    for c in report.changed.iter().chain(&report.unchanged) {
        for k in &c.kept {
            ui.warning(
                &format!("{}: {}: {k}", c.harness.name(), c.path),
                Some(hint),
            );
        }
    }
    if report.changed.is_empty() {
        // A harness whose file was kept is neither installed nor not: say so.
        let kept: Vec<&agents::FileChange> = report
            .unchanged
            .iter()
            .filter(|c| !c.kept.is_empty())
            .collect();
        let names: Vec<&str> = harnesses
            .iter()
            .filter(|h| !kept.iter().any(|c| c.harness == **h))
            .map(|h| h.name())
            .collect();
        let what = if verb == "added" {
            "already installed"
        } else {
            "not installed"
        };
        if !names.is_empty() {
            writeln!(ui.out, "{}: {what}; nothing changed.", names.join(", "))?;
        }
        for c in kept {
            writeln!(
                ui.out,
                "{}: kept {} as it is; nothing changed.",
                c.harness.name(),
                c.path
            )?;
        }
    }
    Ok(())
}

/// Is `git-swarm-agent-hook` a file in one of PATH's folders? Every hook
/// calls it.
fn on_path() -> bool {
    find_on_path(agents::HOOK_BINARY).is_some()
}

/// `name` as PATH finds it.
fn find_on_path(name: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).find_map(|dir| {
        let candidate = dir.join(name);
        [candidate.clone(), candidate.with_extension("exe")]
            .into_iter()
            .find(|c| c.is_file())
    })
}

/// How long a harness's `--version` may take (Gemini CLI starts Node).
const VERSION_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// A harness's program on PATH, and the version it says it is.
fn probe(h: Harness) -> agents::Found {
    let Some(path) = agents::version::program(h).and_then(find_on_path) else {
        return agents::Found::default();
    };
    let version = version_of(&path);
    agents::Found {
        path: Some(path),
        version,
        trust: None,
    }
}

/// Most bytes of a harness's trust file read.
const TRUST_FILE_MAX: u64 = 1024 * 1024;

/// What the harness's own trust file says of `root`, where it keeps one
/// (see `agents::trust`): the user's file, read bounded, never followed
/// through a link.
fn trust_of(h: Harness, root: &std::path::Path) -> Option<agents::trust::Trust> {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let read = |file: &std::path::Path| -> Result<Option<String>, String> {
        match git_swarm::safe_fs::read(file, TRUST_FILE_MAX) {
            Ok(bytes) => String::from_utf8(bytes)
                .map(Some)
                .map_err(|_| format!("{} is not UTF-8", file.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("{} could not be read: {e}", file.display())),
        }
    };
    match h {
        Harness::Gemini => {
            let file = match std::env::var_os("GEMINI_CLI_TRUSTED_FOLDERS_PATH") {
                Some(p) => std::path::PathBuf::from(p),
                None => std::env::var_os("GEMINI_CLI_HOME")
                    .map(std::path::PathBuf::from)
                    .or(home)?
                    .join(".gemini/trustedFolders.json"),
            };
            let env = std::env::var("GEMINI_CLI_TRUST_WORKSPACE").ok();
            Some(match read(&file) {
                Ok(text) => agents::trust::gemini(text.as_deref(), &file, &root, env.as_deref()),
                Err(why) => agents::trust::Trust::Unknown { why },
            })
        }
        Harness::Codex => {
            let file = std::env::var_os("CODEX_HOME")
                .map(std::path::PathBuf::from)
                .or_else(|| home.map(|h| h.join(".codex")))?
                .join("config.toml");
            let hooks = match agents::codex_hooks(&root) {
                Ok(h) => h,
                Err(e) => {
                    return Some(agents::trust::Trust::Unknown { why: e.to_string() });
                }
            };
            Some(match read(&file) {
                Ok(text) => agents::trust::codex(text.as_deref(), &file, &root, &hooks),
                Err(why) => agents::trust::Trust::Unknown { why },
            })
        }
        _ => None,
    }
}

/// What `program --version` prints, read as a version; `None` when it
/// fails, prints none, or takes longer than [`VERSION_WAIT`] (it is killed).
fn version_of(program: &std::path::Path) -> Option<agents::version::Version> {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let mut child = Command::new(program)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = std::time::Instant::now() + VERSION_WAIT;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let mut out = String::new();
    child
        .stdout
        .take()?
        .take(4096)
        .read_to_string(&mut out)
        .ok()?;
    agents::version::parse(&out)
}

fn warn_path(ui: &mut Ui) {
    if !on_path() {
        ui.warning(
            "git-swarm-agent-hook is not on PATH: the hooks call it and do nothing (harmlessly) until it is",
            Some("install it with git-swarm (`cargo install --path .` installs both) or add its folder to PATH"),
        );
    }
}

#[derive(Serialize)]
struct StatusReport {
    binary_on_path: bool,
    harnesses: Vec<agents::HarnessStatus>,
    /// The agent types the hooks met, most recent first, with the role each
    /// maps to now.
    agent_types: Vec<SeenType>,
}

#[derive(Serialize)]
struct SeenType {
    harness: String,
    agent_type: String,
    role: Option<String>,
    /// `config`, `built-in` or `itself` (see docs/agents.md).
    mapped_by: Option<&'static str>,
    /// Whether a directive was in scope for the role when last seen.
    directives: bool,
}

/// The agent types `hook agent` recorded, mapped with this repository's
/// `[agent_types]` as they stand now.
fn seen_types(repo: &git_swarm::Repo) -> Vec<SeenType> {
    let overrides = (super::clock().ok())
        .and_then(|clock| git_swarm::Store::open(repo, clock).ok())
        .map(|s| s.config.agent_types)
        .unwrap_or_default();
    git_swarm::agent_hook::state::seen_types(&repo.common_dir)
        .into_iter()
        .map(|t| {
            let mapped = git_swarm::agent_hook::roles::resolve(&overrides, &t.agent_type);
            SeenType {
                harness: t.harness,
                role: mapped.as_ref().map(|(r, _)| r.clone()),
                mapped_by: mapped.map(|(_, s)| s.as_str()),
                directives: t.directives,
                agent_type: t.agent_type,
            }
        })
        .collect()
}

fn status(ui: &mut Ui, place: &Place<'_>, repo: &git_swarm::Repo, format: Format) -> Outcome {
    let report = StatusReport {
        binary_on_path: on_path(),
        agent_types: seen_types(repo),
        harnesses: {
            // Each harness's `--version` at once: Node-based ones take a second.
            let found: Vec<(Harness, agents::Found)> = std::thread::scope(|scope| {
                let root = place.root;
                let probes: Vec<_> = (Harness::ALL.iter())
                    .map(|&h| {
                        let t = scope.spawn(move || {
                            let mut f = probe(h);
                            f.trust = trust_of(h, root);
                            f
                        });
                        (h, t)
                    })
                    .collect();
                probes
                    .into_iter()
                    .map(|(h, t)| (h, t.join().unwrap_or_default()))
                    .collect()
            });
            agents::status(place, &|h| {
                (found.iter())
                    .find(|(f, _)| *f == h)
                    .map(|(_, f)| f.clone())
                    .unwrap_or_default()
            })
        },
    };
    if format == Format::Json {
        return ui.json_result(&report);
    }
    for s in &report.harnesses {
        let state = match s.state {
            State::Installed => "installed".to_owned(),
            State::Partial => format!("partly installed (missing: {})", s.missing.join(", ")),
            State::NotInstalled => "not installed".to_owned(),
            State::Edited => "edited since git-swarm wrote it (yours now: install and uninstall leave it alone; delete it, then install, for git-swarm's current plugin)".to_owned(),
            State::Unreadable => format!(
                "unreadable: {}",
                super::clean(s.problem.as_deref().unwrap_or(""))
            ),
        };
        let mcp = if let Some(p) = &s.mcp_problem {
            format!("unreadable: {}", super::clean(p))
        } else if s.mcp_foreign {
            "registered, but not git-swarm's entry (yours, left alone)".to_owned()
        } else if s.mcp_registered {
            "registered".to_owned()
        } else {
            "not registered".to_owned()
        };
        writeln!(ui.out, "{:<12} {state} ({})", s.harness.name(), s.file)?;
        writeln!(ui.out, "{:<12} MCP server {mcp} ({})", "", s.mcp_file)?;
        if matches!(s.state, State::Installed | State::Partial | State::Edited) {
            if let Some(program) = &s.program {
                let version = match (&s.program_path, &s.version, s.support) {
                    (None, _, _) => String::new(),
                    (Some(_), None, _) => format!("{program}: no version"),
                    (Some(_), Some(v), support) => format!(
                        "{program} {v}{}",
                        match support {
                            Some(agents::version::Support::Tested) => " (the version tested)",
                            Some(agents::version::Support::Newer) =>
                                " (newer than the version tested)",
                            Some(agents::version::Support::Older) =>
                                " (older than the version tested)",
                            None => "",
                        }
                    ),
                };
                if !version.is_empty() {
                    writeln!(ui.out, "{:<12} harness: {version}", "")?;
                }
            }
            match &s.trust {
                Some(agents::trust::Trust::Trusted { why }) => {
                    writeln!(ui.out, "{:<12} trust: trusted ({})", "", super::clean(why))?;
                }
                Some(agents::trust::Trust::NotTrusted { .. }) => {
                    writeln!(ui.out, "{:<12} trust: not trusted", "")?;
                }
                _ => writeln!(ui.out, "{:<12} trust: {}", "", s.trust_step)?,
            }
            for t in &s.todo {
                writeln!(ui.out, "{:<12} to do: {}", "", super::clean(t))?;
            }
        }
    }
    if !report.agent_types.is_empty() {
        writeln!(
            ui.out,
            "agent types seen by the hooks, and the role each gets the directives of:"
        )?;
        for t in &report.agent_types {
            let role = match (&t.role, t.mapped_by) {
                (Some(r), Some(by)) => format!("{r} ({by})"),
                _ => "no role (map it in .swarm/config.toml [agent_types])".to_owned(),
            };
            let none = if t.directives {
                ""
            } else {
                ", no directive scoped to it when last seen"
            };
            writeln!(
                ui.out,
                "  {:<12} {} -> {role}{none}",
                t.harness,
                super::clean(&t.agent_type)
            )?;
        }
    }
    writeln!(
        ui.out,
        "git-swarm-agent-hook on PATH: {}",
        if report.binary_on_path {
            "yes"
        } else {
            "no (the hooks call it)"
        }
    )?;
    Ok(ExitCode::SUCCESS)
}
