//! `git swarm hive promote` and `git swarm hive report`: what a project
//! gives back to a hive, each as a branch pushed to the hive for its
//! owners (docs/hive.md). The library ([`git_swarm::hive::promote`],
//! [`git_swarm::hive::report`]) checks, counts and writes; this reads the
//! command line and says what happened and what to do next.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::hive::promote::{self, Promotion, Request};
use git_swarm::hive::{self, report};

use super::{Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct PromoteArgs {
    /// The project's directive to promote.
    #[arg(value_name = "ID")]
    id: String,
    /// The hive to promote it to, by its name in this project.
    #[arg(long = "to", value_name = "NAME")]
    to: String,
    /// The hive branch to write (default: promote/<project>/<ID>).
    #[arg(long, value_name = "BRANCH")]
    branch: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The hive to report to, by its name in this project.
    #[arg(value_name = "NAME")]
    name: String,
}

/// The store, the repository's review and current commit, and the
/// project's name in a hive.
struct Project {
    store: git_swarm::Store,
    review: git_swarm::reviewed::Review,
    head: Option<String>,
    name: String,
}

fn project(ui: &mut Ui) -> Result<Project, super::CliError> {
    let repo = super::repo()?;
    let store = git_swarm::Store::open(&repo, super::clock()?)?;
    ui.problems(&store.config_problems);
    let review = super::review(&repo, ui);
    let head = repo.gix().head_id().ok().map(|id| id.to_string());
    let name = promote::project_name_of(&store);
    Ok(Project {
        store,
        review,
        head,
        name,
    })
}

pub fn promote(args: PromoteArgs, ui: &mut Ui) -> Outcome {
    let p = project(ui)?;
    let sub = git_swarm::hive::subscription(&p.store, &args.to)?;
    let events = super::read_log(&p.store, ui)?;
    let request = Request {
        id: &args.id,
        hive: sub,
        branch: args.branch.as_deref(),
        project: &p.name,
        head: p.head.as_deref(),
    };
    match promote::promote(&p.store, &p.review, &events, &request)? {
        Promotion::Blocked {
            record,
            bar,
            reasons,
        } => {
            writeln!(
                ui.out,
                "hive `{}` does not take `{}` yet (shown {}, applied {}, violated {}):",
                sub.name, args.id, record.shown, record.applied, record.violated
            )?;
            for r in &reasons {
                writeln!(ui.out, "- {r}")?;
            }
            ui.hint(&format!(
                "the bar is the hive's `[promotion]` (min_applied = {}, max_violations = {}); the record grows as delegates ack it (`git swarm ack`)",
                bar.min_applied, bar.max_violations
            ));
            Ok(ExitCode::from(1))
        }
        Promotion::Pushed(done) => {
            writeln!(
                ui.out,
                "promoted `{}` to hive `{}`: branch {} ({} on {})",
                args.id,
                sub.name,
                done.branch,
                hive::short(&done.commit),
                hive::short(&done.base)
            )?;
            writeln!(ui.out, "source = \"{}\"", super::clean(&done.source))?;
            writeln!(
                ui.out,
                "next: open a pull request of {} on the hive ({}); once it is merged, projects take the lesson with `git swarm hive update`",
                done.branch,
                super::clean(&sub.url)
            )?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

pub fn report(args: ReportArgs, ui: &mut Ui) -> Outcome {
    let p = project(ui)?;
    let sub = git_swarm::hive::subscription(&p.store, &args.name)?;
    let events = super::read_log(&p.store, ui)?;
    let Some(done) = report::report(
        &p.store,
        &p.review,
        sub,
        &p.name,
        p.head.as_deref(),
        &events,
    )?
    else {
        writeln!(
            ui.out,
            "nothing to report: no directive of hive `{}` has a signal here, and none is switched off",
            sub.name
        )?;
        return Ok(ExitCode::SUCCESS);
    };
    let n = done.events.len();
    writeln!(
        ui.out,
        "reported {n} directive{} of hive `{}` on its branch {} ({}{})",
        if n == 1 { "" } else { "s" },
        sub.name,
        done.branch,
        hive::short(&done.commit),
        if done.created {
            ", a new branch"
        } else {
            ", appended"
        }
    )?;
    for e in &done.events {
        let field = |k: &str| {
            e.data
                .get(k)
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(0)
        };
        let off = if e.data.get("switched_off") == Some(&serde_json::Value::Bool(true)) {
            ", switched off"
        } else {
            ""
        };
        writeln!(
            ui.out,
            "  {}: shown {}, applied {}, violated {}, prevented {}{off}",
            super::clean(e.directive.as_deref().unwrap_or_default()),
            field("shown"),
            field("applied"),
            field("violated"),
            field("prevented"),
        )?;
    }
    writeln!(
        ui.out,
        "next: the hive's owners merge {} (a pull request on the hive); `git swarm stats` there shows the reports",
        done.branch
    )?;
    Ok(ExitCode::SUCCESS)
}
