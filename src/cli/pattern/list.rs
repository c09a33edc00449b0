//! `git swarm pattern list`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::pattern::fold::{self, Pattern, State};

use crate::cli::{Format, Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only patterns learned from this role.
    #[arg(long, value_name = "ROLE")]
    role: Option<String>,
    /// Only patterns in this lifecycle state.
    #[arg(long, alias = "status", value_name = "STATE", value_parser = state_parser())]
    state: Option<State>,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

/// Parses `--state`: one of the lifecycle states, by name.
fn state_parser() -> impl clap::builder::TypedValueParser<Value = State> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(State::NAMES)
        .map(|name| name.parse::<State>().expect("a possible value is a state"))
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    if let Some(r) = &args.role {
        crate::cli::args::check_role(r)?;
    }
    let store = crate::cli::store(ui)?;
    let fold = git_swarm::index::load_patterns(&store)?;
    let cfg = &store.config.patterns;
    let now = super::now_ms(&store);
    let mut rows: Vec<(&String, &Pattern, f64, State)> = fold
        .observed()
        .filter(|(_, p)| args.role.as_ref().is_none_or(|r| &p.role == r))
        .map(|(id, p)| {
            (
                id,
                p,
                fold::score(p, cfg, now, &[], &[]).total,
                fold::state(&p.stats, cfg, now),
            )
        })
        .filter(|r| args.state.is_none_or(|s| s == r.3))
        .collect();
    rows.sort_by(|a, b| b.2.total_cmp(&a.2).then_with(|| a.0.cmp(b.0)));
    if args.format == Format::Json {
        let out: Vec<_> = rows
            .iter()
            .map(|(id, p, _, _)| super::row(id, p, cfg, now))
            .collect();
        return ui.json_result(&out);
    }
    if rows.is_empty() {
        writeln!(ui.out, "no patterns")?;
        return Ok(ExitCode::SUCCESS);
    }
    for (id, p, score, state) in &rows {
        let record = p
            .stats
            .record()
            .unwrap_or_else(|| format!("{}x seen", p.stats.observations));
        let line = format!(
            "{id}  {:<10} {score:>5.2}  {:<20} {:<10} {}",
            state.as_str(),
            record,
            p.role,
            crate::cli::ui::truncate(&p.text, 72)
        );
        writeln!(ui.out, "{}", crate::cli::clean(&line))?;
    }
    Ok(ExitCode::SUCCESS)
}
