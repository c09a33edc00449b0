//! `git swarm proposal …`: deciding on the lessons the loop proposed.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::proposal::{self, Made, Proposal, ProposalStatus};

use super::{Format, Outcome, Ui, clean};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// List proposals: slug, status, title.
    ///
    /// A proposal file that cannot be read (bad front matter, a link) is
    /// reported with its file and line, and the others are listed.
    List(ListArgs),
    /// Show one proposal: its front matter and its evidence.
    Show(ShowArgs),
    /// Turn a proposal into a directive, through the actionability gate.
    ///
    /// The directive (id: the slug) is written to `.swarm/directives/` when
    /// it passes the gate, else to `.swarm/quarantine/` with the reason (exit
    /// 1, as `add`), never lost. The proposal is then marked `accepted` with
    /// the directive and the time; `added`/`quarantined` and
    /// `proposal_accepted` events are recorded. An accept cut short is
    /// finished by running it again.
    Accept(AcceptArgs),
    /// Decline a proposal, recording why.
    ///
    /// The proposal stays, marked `rejected` with the reason and the time, so
    /// that the same motif is not proposed again; a `proposal_rejected` event
    /// is recorded first. A reject cut short is finished by running it again.
    Reject(RejectArgs),
}

pub fn run(command: Command, ui: &mut Ui) -> Outcome {
    match command {
        Command::List(args) => list(args, ui),
        Command::Show(args) => show(args, ui),
        Command::Accept(args) => accept(args, ui),
        Command::Reject(args) => reject(args, ui),
    }
}

/// Which proposals `list` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
enum Which {
    /// Waiting for a decision.
    #[default]
    Open,
    /// Turned into a directive.
    Accepted,
    /// Declined, with a reason.
    Rejected,
    /// Every one.
    All,
}

#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Which proposals to list.
    #[arg(long, value_enum, default_value_t)]
    status: Which,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

fn list(args: ListArgs, ui: &mut Ui) -> Outcome {
    let store = super::store(ui)?;
    let (proposals, problems) = proposal::load_all(&store)?;
    ui.problems(&problems);
    let wanted = |s: ProposalStatus| match args.status {
        Which::All => true,
        Which::Open => s == ProposalStatus::Open,
        Which::Accepted => s == ProposalStatus::Accepted,
        Which::Rejected => s == ProposalStatus::Rejected,
    };
    let shown: Vec<&Proposal> = proposals.iter().filter(|p| wanted(p.status)).collect();
    if args.format == Format::Json {
        let list: Vec<serde_json::Value> = shown.iter().map(|p| as_json(&store, p)).collect();
        return ui.json_result(&list);
    }
    if shown.is_empty() {
        let none = match args.status {
            Which::All => "no proposals".to_owned(),
            other => format!("no {} proposals", which_name(other)),
        };
        writeln!(ui.out, "{none}")?;
    }
    for p in shown {
        writeln!(
            ui.out,
            "{}  {:<8}  {}",
            p.slug,
            p.status.as_str(),
            clean(&p.title)
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn which_name(w: Which) -> &'static str {
    match w {
        Which::Open => "open",
        Which::Accepted => "accepted",
        Which::Rejected => "rejected",
        Which::All => "",
    }
}

/// The proposal as JSON: its front matter, its file and its prose.
fn as_json(store: &git_swarm::Store, p: &Proposal) -> serde_json::Value {
    let mut v = serde_json::to_value(p).unwrap_or_default();
    if let Some(map) = v.as_object_mut() {
        map.insert(
            "path".into(),
            store.rel(&proposal::path(store, &p.slug)).into(),
        );
        map.insert("body".into(), p.body.clone().into());
    }
    v
}

#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// The proposal's slug (its file stem).
    #[arg(value_name = "SLUG")]
    slug: String,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

fn show(args: ShowArgs, ui: &mut Ui) -> Outcome {
    let store = super::store(ui)?;
    let p = proposal::find(&store, &args.slug)?;
    if args.format == Format::Json {
        return ui.json_result(&as_json(&store, &p));
    }
    let mut out = format!("{}  {}\n{}\n", p.slug, p.status.as_str(), clean(&p.title));
    let mut field = |name: &str, value: String| {
        if !value.is_empty() {
            out.push_str(&format!("{name:<10} {}\n", clean(&value)));
        }
    };
    field("source", p.source.clone());
    field("category", p.category.as_str().to_owned());
    field("agents", p.applies_to_agents.join(", "));
    field("tools", p.applies_to_tools.join(", "));
    field("paths", p.paths.join(", "));
    field("verify", p.verify.join(", "));
    field("requires", p.required_actions.join("; "));
    field("forbids", p.forbidden_actions.join("; "));
    field("key", p.key.clone());
    field("evidence", p.evidence.join(", "));
    field("created", p.created_at.clone());
    field("decided", p.decided_at.clone().unwrap_or_default());
    field("directive", p.directive.clone().unwrap_or_default());
    field("reason", p.reason.clone().unwrap_or_default());
    out.push('\n');
    // `clean` escapes a newline: the prose is cleaned a line at a time.
    for line in p.body.lines() {
        out.push_str(&clean(line));
        out.push('\n');
    }
    ui.write_out(out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Debug, clap::Args)]
pub struct AcceptArgs {
    /// The proposal's slug.
    #[arg(value_name = "SLUG")]
    slug: String,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

fn accept(args: AcceptArgs, ui: &mut Ui) -> Outcome {
    let store = super::store(ui)?;
    let log = super::read_log(&store, ui)?;
    let a = proposal::accept(&store, &args.slug, &log)?;
    // The directive is written; its events, then the proposal's decision:
    // a run cut short before the last is finished by the next.
    super::append(&store, &a.events, ui)?;
    proposal::rewrite(&store, &a.proposal)?;
    let code = match a.made {
        Made::Added { .. } => ExitCode::SUCCESS,
        Made::Quarantined { .. } => ExitCode::from(1),
    };
    if args.format == Format::Json {
        ui.json(&a.made)?;
        return Ok(code);
    }
    if a.finished {
        ui.note("the directive was written by an accept that stopped before it recorded the decision: finished");
    }
    match &a.made {
        Made::Added { id, path } => {
            writeln!(ui.out, "accepted {}: added `{id}` at {path}", args.slug)?
        }
        Made::Quarantined {
            id,
            path,
            reason,
            detail,
        } => {
            writeln!(
                ui.out,
                "accepted {}: quarantined `{id}` at {path}: {reason}",
                args.slug
            )?;
            ui.hint(&format!(
                "{}; fix {path}, then `git swarm harden` promotes it to .swarm/directives/",
                clean(detail)
            ));
        }
    }
    Ok(code)
}

#[derive(Debug, clap::Args)]
pub struct RejectArgs {
    /// The proposal's slug.
    #[arg(value_name = "SLUG")]
    slug: String,
    /// Why not: kept in the proposal and the event, for whoever finds the motif next.
    #[arg(long, value_name = "TEXT")]
    reason: String,
}

fn reject(args: RejectArgs, ui: &mut Ui) -> Outcome {
    let store = super::store(ui)?;
    let log = super::read_log(&store, ui)?;
    let r = proposal::reject(&store, &args.slug, &args.reason, &log)?;
    // The event first, then the proposal's decision: a reject cut short
    // before the last is finished by the next.
    if let Some(event) = &r.event {
        super::append(&store, std::slice::from_ref(event), ui)?;
    }
    let path = proposal::rewrite(&store, &r.proposal)?;
    let p = &r.proposal;
    match r.finished {
        Some(proposal::Finished::Recorded) => ui.note(
            "the proposal was rejected by a reject that stopped before it recorded the decision: recorded now, with the proposal's reason",
        ),
        Some(proposal::Finished::Marked) => ui.note(
            "the rejection was recorded by a reject that stopped before it marked the proposal: marked now, with the reason recorded",
        ),
        None => {}
    }
    writeln!(
        ui.out,
        "rejected {} ({}): {}",
        p.slug,
        store.rel(&path),
        clean(p.reason.as_deref().unwrap_or_default())
    )?;
    Ok(ExitCode::SUCCESS)
}
