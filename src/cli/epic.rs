//! `git swarm epic …`: the handoffs of one epic, in dependency order.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::handoff::{self, epic};

use super::{Format, Outcome, Ui, clean};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Each task of the epic with its standing, in dependency order.
    ///
    /// A task comes after the tasks it depends on (ties by id). Tasks on a
    /// dependency cycle cannot be ordered: they are listed as such, and the
    /// command exits 1. A dependency outside the epic is named.
    Status(Args),
    /// The briefs of the tasks ready to hand out, as `handoff create` prints them.
    ///
    /// A task is ready when it is open and every task it depends on is
    /// completed; nothing in review, completed or released is offered again.
    /// No delegation is recorded.
    Next(Args),
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The epic's id.
    #[arg(value_name = "EPIC")]
    epic: String,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(command: Command, ui: &mut Ui) -> Outcome {
    match command {
        Command::Status(args) => status(args, ui),
        Command::Next(args) => next(args, ui),
    }
}

/// The epic's handoffs and the log; an epic without handoffs is an error.
fn load(
    epic_id: &str,
    ui: &mut Ui,
) -> Result<
    (
        git_swarm::Store,
        Vec<handoff::Handoff>,
        Vec<git_swarm::event::Event>,
    ),
    git_swarm::Error,
> {
    let store = super::store(ui)?;
    let (handoffs, problems) = handoff::load_all(&store)?;
    ui.problems(&problems);
    if epic::members(epic_id, &handoffs).is_empty() {
        return Err(git_swarm::Error::usage(
            format!("no handoff belongs to epic `{epic_id}`"),
            "`git swarm handoff list` lists the handoffs and their epics; `handoff create --epic ID` adds one",
        ));
    }
    let log = super::read_log(&store, ui)?;
    Ok((store, handoffs, log))
}

fn status(args: Args, ui: &mut Ui) -> Outcome {
    let (store, handoffs, log) = load(&args.epic, ui)?;
    let order = epic::order(
        &args.epic,
        &handoffs,
        &log,
        store.config.handoffs.max_review_attempts,
    );
    let code = if order.cycle.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    };
    if args.format == Format::Json {
        ui.json(&serde_json::json!({
            "epic": args.epic,
            "tasks": order.tasks.iter().map(|(t, s)| serde_json::json!({"task": t, "standing": s})).collect::<Vec<_>>(),
            "cycle": order.cycle,
            "outside": order.outside.iter().map(|(t, d)| serde_json::json!({"task": t, "depends": d})).collect::<Vec<_>>(),
        }))?;
        return Ok(code);
    }
    for (t, s) in &order.tasks {
        writeln!(ui.out, "{t}  {}", s.as_str())?;
    }
    for (t, d) in &order.outside {
        ui.warning(
            &format!("`{t}` depends on `{}`, which is not a handoff of epic `{}`", clean(d), args.epic),
            Some("it is waited for all the same: `git swarm handoff show` on it says where it stands"),
        );
    }
    if !order.cycle.is_empty() {
        ui.error(
            &format!(
                "these tasks depend on each other in a cycle and cannot be ordered: {}",
                order.cycle.join(", ")
            ),
            None,
            Some("a handoff is never rewritten: release one of them and create it again without the dependency that closes the cycle"),
        );
    }
    Ok(code)
}

fn next(args: Args, ui: &mut Ui) -> Outcome {
    let (store, handoffs, log) = load(&args.epic, ui)?;
    let max = store.config.handoffs.max_review_attempts;
    let ready = epic::next(&args.epic, &handoffs, &log, max);
    let briefs: Vec<handoff::Brief> = ready
        .iter()
        .map(|h| handoff::brief(h, &handoffs, &log, max))
        .collect();
    if args.format == Format::Json {
        return ui.json_result(&briefs);
    }
    if briefs.is_empty() {
        writeln!(
            ui.out,
            "no task of epic `{}` is ready to hand out",
            args.epic
        )?;
        ui.hint("a task is ready when it is open and every task it depends on is completed: `git swarm epic status EPIC` shows them");
    }
    let text: Vec<String> = briefs.iter().map(super::handoff::render_brief).collect();
    ui.write_out(text.join("\n").as_bytes())?;
    Ok(ExitCode::SUCCESS)
}
