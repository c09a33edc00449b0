//! `git swarm reflect micro`.

use std::io::{Read, Write};
use std::process::ExitCode;

use git_swarm::reflect::{self, Context, Format as Payload};

use crate::cli::{Outcome, Ui};

/// Largest payload read from standard input.
const PAYLOAD_MAX: u64 = 16 * 1024 * 1024;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The payload's format: auto, claude, codex, gemini, opencode or generic
    /// (`auto` tells it by its fields). An unknown one is a warning, not an
    /// error: a hook's command line must never fail the agent's call.
    #[arg(long, value_name = "FORMAT", default_value = "auto")]
    payload: String,
    /// The task the call belongs to [default: the payload's agent, else its session].
    #[arg(long, value_name = "ID")]
    task: Option<String>,
    /// The phase [default: GIT_SWARM_PHASE, else the phase of `git swarm phase start`].
    #[arg(long, value_name = "PHASE")]
    phase: Option<String>,
    /// The agent's role [default: the role the payload's agent type maps to].
    #[arg(long)]
    role: Option<String>,
    /// text or json. An unknown one is a warning, as for --payload.
    #[arg(long, value_name = "FORMAT", default_value = "text")]
    format: String,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    // A hook must not fail the agent's tool call: whatever goes wrong is one
    // warning, and the exit is 0.
    if let Err(message) = reflect_one(&args, ui) {
        ui.warning(&format!("reflect micro: {message}; nothing recorded"), None);
    }
    Ok(ExitCode::SUCCESS)
}

/// One tool call read and classified, and where its candidate was kept.
pub struct Reflected {
    pub micro: reflect::Micro,
    /// The candidates file (relative to the work tree), when one was kept.
    pub recorded: Option<String>,
}

/// Reads and classifies the tool call in `payload` and keeps a
/// non-success as an insight candidate in the `.swarm/` of the repository
/// `home`. Most calls succeed, so the repository is opened only for a
/// candidate.
pub fn reflect_payload(
    payload: &str,
    format: Payload,
    context: Context,
    clock: git_swarm::event::Clock,
    home: Home<'_>,
) -> Result<Reflected, git_swarm::Error> {
    let role_given = context.role.is_some();
    let micro = reflect::micro(payload, format, context, clock.now()).map_err(|e| {
        git_swarm::Error::usage(
            e.to_string(),
            "pass the harness's post-tool hook payload on standard input",
        )
    })?;
    keep_reflected(micro, role_given, clock, home)
}

/// The repository a call's candidate is kept in.
pub enum Home<'a> {
    /// This one, found already.
    Found(&'a git_swarm::store::Repo),
    /// The one around this directory (default: the current one), found
    /// only if there is a candidate to keep.
    Around(Option<&'a std::path::Path>),
}

/// Keeps `micro`'s candidate, if any, in the repository `home`, its role
/// mapped through the repository's `[agent_types]` unless `role_given`.
pub fn keep_reflected(
    mut micro: reflect::Micro,
    role_given: bool,
    clock: git_swarm::event::Clock,
    home: Home<'_>,
) -> Result<Reflected, git_swarm::Error> {
    let mut recorded = None;
    if let Some(candidate) = &mut micro.candidate {
        let around;
        let repo = match home {
            Home::Found(repo) => repo,
            Home::Around(Some(dir)) => {
                around = crate::cli::repo_at(dir)?;
                &around
            }
            Home::Around(None) => {
                around = crate::cli::repo()?;
                &around
            }
        };
        let store = git_swarm::store::Store::open(repo, clock)?;
        if !role_given && let Some(t) = micro.call.agent_type.as_deref() {
            let mapped = git_swarm::agent_hook::roles::role_for(&store.config.agent_types, t);
            candidate.role = mapped.or(candidate.role.take());
        }
        if candidate.phase.is_none() {
            candidate.phase = reflect::current_phase(&store);
        }
        // `None`: this tool call's candidate is kept already.
        recorded = reflect::keep(&store, candidate)?.map(|path| store.rel(&path));
    }
    Ok(Reflected { micro, recorded })
}

fn reflect_one(args: &Args, ui: &mut Ui) -> Result<(), String> {
    let format: Payload = args.payload.parse()?;
    let json = match args.format.as_str() {
        "text" => false,
        "json" => true,
        other => return Err(format!("`{other}` is not an output format (text or json)")),
    };
    if let Some(role) = &args.role {
        crate::cli::args::check_role(role).map_err(|e| e.to_string())?;
    }
    let env_phase = std::env::var("GIT_SWARM_PHASE")
        .ok()
        .filter(|p| !p.is_empty());
    let phase = args.phase.clone().or(env_phase);
    if let Some(p) = &phase {
        crate::cli::args::check_phase_name(p).map_err(|e| e.to_string())?;
    }
    let mut payload = String::new();
    std::io::stdin()
        .take(PAYLOAD_MAX + 1)
        .read_to_string(&mut payload)
        .map_err(|e| format!("cannot read the payload: {e}"))?;
    if payload.len() as u64 > PAYLOAD_MAX {
        return Err(format!("the payload is over {PAYLOAD_MAX} bytes"));
    }
    let clock = crate::cli::clock().map_err(|e| e.to_string())?;
    let context = Context {
        task: args.task.clone(),
        phase,
        role: args.role.clone(),
    };
    let Reflected { micro, recorded } =
        reflect_payload(&payload, format, context, clock, Home::Around(None))
            .map_err(|e| e.to_string())?;
    let sub = micro.reading.sub.map(|s| s.as_str());
    if json {
        ui.json(&serde_json::json!({
            "class": micro.reading.class,
            "sub": sub,
            "harness": micro.call.harness,
            "tool": micro.call.tool,
            "evidence": micro.reading.evidence,
            "candidate": micro.candidate,
            "recorded": recorded,
        }))
        .map_err(|e| e.to_string())?;
    } else {
        let line = match sub {
            Some(sub) => format!("{} {sub}", micro.reading.class.as_str()),
            None => micro.reading.class.as_str().to_owned(),
        };
        writeln!(ui.out, "{line}").map_err(|e| e.to_string())?;
    }
    Ok(())
}
