//! `git swarm mcp`: the Model Context Protocol over stdio, with rmcp.
//!
//! tokio lives here alone: a current-thread runtime is built for this
//! command, so no other command starts one. Each tool runs this same
//! program's command (`src/mcp/`) as a child process: standard output is
//! the protocol's channel, and a command writing to it in-process would
//! corrupt the stream; a child also keeps one call's failure from ever
//! taking the server down.

use std::io::Write;
use std::process::{ExitCode, Stdio};

use git_swarm::mcp::{
    AckArgs, CheckArgs, InjectArgs, Invocation, ProposeLessonArgs, ReviewChecklistArgs,
    ReviewVerdictsArgs, SearchArgs, StatusArgs,
};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};

use super::{Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args, ui: &mut Ui) -> Outcome {
    // A directory that is not a repository with `.swarm/` is refused at
    // start (exit 2), before a client is told the server is ready.
    super::store(ui)?;
    let exe = std::env::current_exe()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let served = runtime.block_on(async move {
        let server = Swarm {
            exe,
            tool_router: Swarm::tool_router(),
        };
        let service = server.serve(rmcp::transport::stdio()).await?;
        service.waiting().await?;
        Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
    });
    match served {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) => {
            ui.error(&format!("mcp: {e}"), None, None);
            Ok(ExitCode::from(3))
        }
    }
}

#[derive(Clone)]
struct Swarm {
    exe: std::path::PathBuf,
    tool_router: ToolRouter<Self>,
}

// The tools that change nothing say so (`readOnlyHint`): Codex 0.171 asks
// for approval of every MCP tool that does not, and headless (`codex exec`,
// approval `never`) refuses it. `inject` records the delegation, `ack` and
// `review_verdicts` record events, `propose_lesson` writes a proposal.
#[tool_router]
impl Swarm {
    /// The directives for a delegate's role and task, as the block to put in its prompt. Records the delegation (its id is in the result) for `ack`.
    #[tool]
    async fn inject(&self, Parameters(a): Parameters<InjectArgs>) -> CallToolResult {
        self.call(&a.invocation())
    }

    /// Record which directives a delegate applied or violated, from its final message's KNOWLEDGE_APPLIED / KNOWLEDGE_VIOLATED lines.
    #[tool]
    async fn ack(&self, Parameters(a): Parameters<AckArgs>) -> CallToolResult {
        self.call(&a.invocation())
    }

    /// The reviewer's checklist for a phase: the critical directives its delegations were shown.
    #[tool(annotations(read_only_hint = true))]
    async fn review_checklist(
        &self,
        Parameters(a): Parameters<ReviewChecklistArgs>,
    ) -> CallToolResult {
        self.call(&a.invocation())
    }

    /// Record a reviewer's verdicts on a phase's directives (VERIFIED / VIOLATED lines), checked against the change.
    #[tool]
    async fn review_verdicts(
        &self,
        Parameters(a): Parameters<ReviewVerdictsArgs>,
    ) -> CallToolResult {
        self.call(&a.invocation())
    }

    /// Check the staged (default) or working-tree change against the directives. `tool:` predicates run only if the repository's tool set is trusted, as for `git swarm check`.
    #[tool(annotations(read_only_hint = true))]
    async fn check(&self, Parameters(a): Parameters<CheckArgs>) -> CallToolResult {
        self.call(&a.invocation())
    }

    /// Search the directives by words, ranked as `inject` ranks them.
    #[tool(annotations(read_only_hint = true))]
    async fn search(&self, Parameters(a): Parameters<SearchArgs>) -> CallToolResult {
        self.call(&a.invocation())
    }

    /// The briefing: escalations, open violations, unacknowledged criticals, quarantine, uncommitted events, hook and index health.
    #[tool(annotations(read_only_hint = true))]
    async fn status(&self, Parameters(a): Parameters<StatusArgs>) -> CallToolResult {
        self.call(&a.invocation())
    }

    /// Propose a lesson learned. It is written as an open proposal under .swarm/proposals/ for a person to accept (`git swarm proposal accept`, through the actionability gate); it does not bind anyone until then.
    #[tool]
    async fn propose_lesson(&self, Parameters(a): Parameters<ProposeLessonArgs>) -> CallToolResult {
        let proposed = super::repo()
            .and_then(|repo| git_swarm::Store::open(&repo, super::clock()?))
            .and_then(|store| {
                let p = git_swarm::mcp::propose_lesson(&store, &a)?;
                store.append(std::slice::from_ref(&p.event))?;
                Ok(p)
            });
        match proposed {
            Ok(p) => CallToolResult::structured(serde_json::json!({
                "slug": p.proposal.slug,
                "path": p.path,
                "status": "open",
                "event": p.event.id,
                "next": format!("git swarm proposal accept {}", p.proposal.slug),
            })),
            Err(e) => error_result(&e.to_string(), e.hint().as_deref()),
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Swarm {
    fn get_info(&self) -> ServerConfig {
        // The SDK's default names the SDK itself; a client shows this name.
        let me = rmcp::model::Implementation::new("git-swarm", env!("CARGO_PKG_VERSION"));
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(me)
            .with_instructions(
            "git-swarm: the team's directives for this repository. Call `inject` before delegating, \
             `ack` with the delegate's final message, `check` before committing, and \
             `propose_lesson` for something learned.",
        )
    }
}

impl Swarm {
    /// Runs `git swarm <invocation>` and makes its JSON report the tool's
    /// result. Exit 1 (a check failed, an entry quarantined) is a report,
    /// not an error; exit 2 or more, or no JSON on standard output, is an
    /// error result carrying the command's message and hint.
    fn call(&self, inv: &Invocation) -> CallToolResult {
        let output = match run_child(&self.exe, inv) {
            Ok(o) => o,
            Err(e) => return error_result(&format!("could not run git-swarm: {e}"), None),
        };
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let code = output.status.code();
        let report: Option<serde_json::Value> = serde_json::from_slice(&output.stdout).ok();
        match (code, report) {
            (Some(c @ (0 | 1)), Some(report)) => {
                let mut value = serde_json::json!({ "exit_code": c, "report": report });
                if !stderr.trim().is_empty() {
                    value["warnings"] = stderr.trim_end().into();
                }
                CallToolResult::structured(value)
            }
            (code, _) => {
                let what = match code {
                    Some(c) => format!("`git swarm {}` exited {c}", inv.args[0]),
                    None => format!("`git swarm {}` was killed by a signal", inv.args[0]),
                };
                let text = if stderr.trim().is_empty() {
                    what
                } else {
                    format!("{}\n({what})", stderr.trim_end())
                };
                CallToolResult::error(vec![ContentBlock::text(text)])
            }
        }
    }
}

/// Runs `inv` as `git-swarm hook mcp-call`, the invocation on the child's
/// standard input (see [`Invocation`]): no argument's length or commas
/// reach a command line.
fn run_child(exe: &std::path::Path, inv: &Invocation) -> std::io::Result<std::process::Output> {
    let mut child = std::process::Command::new(exe)
        .args(["hook", "mcp-call"])
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    // Written from a thread: a request larger than the pipe's buffer must
    // not block while the child's output fills the other pipes.
    let request = inv.request();
    let writer = child
        .stdin
        .take()
        .map(|mut pipe| std::thread::spawn(move || pipe.write_all(&request)));
    let output = child.wait_with_output()?;
    if let Some(w) = writer {
        // The child may stop reading early (a usage error); its exit says why.
        let _ = w.join();
    }
    Ok(output)
}

/// `git-swarm hook mcp-call`: reads an [`Invocation`] on standard input
/// (bounded) and runs it as if it were the command line, its `stdin` being
/// what `-` reads.
pub fn run_call(program: &std::ffi::OsStr, ui: &mut Ui) -> Outcome {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(git_swarm::mcp::REQUEST_MAX + 1)
        .read_to_end(&mut bytes)?;
    let inv = Invocation::from_request(&bytes)?;
    if let Some(text) = inv.stdin {
        super::args::give_stdin(text);
    }
    let argv = std::iter::once(program.to_owned()).chain(inv.args.into_iter().map(Into::into));
    let cli = <super::Cli as clap::Parser>::parse_from(argv);
    super::run(cli.command, ui)
}

fn error_result(message: &str, hint: Option<&str>) -> CallToolResult {
    let text = match hint {
        Some(h) => format!("error: {message}\nhint: {h}"),
        None => format!("error: {message}"),
    };
    CallToolResult::error(vec![ContentBlock::text(text)])
}
