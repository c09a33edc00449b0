//! `git swarm search`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::Error;
use git_swarm::retrieve::Query;

use super::{Format, Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The query: task words.
    #[arg(value_name = "QUERY", num_args = 1.., required = true)]
    query: Vec<String>,
    /// Score as for this role.
    #[arg(long, value_name = "ROLE")]
    role: Option<String>,
    /// Score as for these tools.
    #[arg(long, value_delimiter = ',', value_name = "TOOL,..")]
    tools: Vec<String>,
    /// Files the task touches.
    #[arg(long, value_delimiter = ',', value_name = "PATH,..")]
    files: Vec<String>,
    /// Show at most N (at least 1).
    #[arg(short = 'n', long, value_name = "N", default_value_t = 20,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    max_count: usize,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    if let Some(role) = &args.role {
        super::args::check_role(role)?;
    }
    if args.query.iter().all(|q| q.trim().is_empty())
        && args.role.is_none()
        && args.tools.is_empty()
        && args.files.is_empty()
    {
        return Err(Error::usage(
            "the query is empty",
            "give task words, or --role, --tools or --files to rank by",
        )
        .into());
    }
    let store = super::store(ui)?;
    let ranking = git_swarm::index::load_corpus(&store)?;
    super::warn_problems(ranking.summary.error_count(), ui);
    let corpus = &ranking.corpus;
    let query = Query {
        text: args.query.join(" "),
        role: args.role.clone(),
        tools: args.tools.clone(),
        files: args.files.clone(),
    };
    let fold = &ranking.summary.fold;
    let standings = fold.standings(corpus.ids());
    let mut scored = corpus.score(&query, &|doc| {
        git_swarm::directive_loop::inject::track(standings[doc])
    });
    scored.truncate(args.max_count);
    if args.format == Format::Json {
        return ui.json_result(&scored);
    }
    if scored.is_empty() {
        writeln!(ui.out, "no directive matches")?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(
        ui.out,
        "{:>6}  {:<32} {:>6} {:>7} {:>6} {:>7} {:>7} {:>7}",
        "score", "id", "bm25", "context", "cold", "trigger", "synonym", "outcome"
    )?;
    for s in &scored {
        let p = &s.parts;
        let line = format!(
            "{:>6.3}  {:<32} {:>6.3} {:>7.3} {:>6.3} {:>7.3} {:>7.3} {:>7.3}",
            s.total, s.id, p.bm25, p.context, p.cold_start, p.trigger_recall, p.synonym, p.outcome
        );
        writeln!(ui.out, "{}", super::clean(&line))?;
    }
    Ok(ExitCode::SUCCESS)
}
