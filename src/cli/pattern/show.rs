//! `git swarm pattern show`.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::event::Event;
use git_swarm::pattern::fold;

use crate::cli::{Format, Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The pattern's id (`p` and 16 hex digits, as `pattern list` shows), or an alias of it.
    #[arg(value_name = "ID")]
    id: String,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    let store = crate::cli::store(ui)?;
    let fold = git_swarm::index::load_patterns(&store)?;
    let (id, p) = super::find(&fold, &args.id)?;
    let cfg = &store.config.patterns;
    let now = super::now_ms(&store);
    let events = crate::cli::read_log(&store, ui)?;
    let mine: Vec<&Event> = events
        .iter()
        .filter(|e| {
            e.known_kind()
                .is_some_and(git_swarm::event::Kind::is_pattern)
                && e.names_pattern(id)
        })
        .collect();
    if args.format == Format::Json {
        let mut r = super::row(id, p, cfg, now);
        r["events"] = serde_json::to_value(&mine).unwrap_or_default();
        return ui.json_result(&r);
    }
    let s = fold::score(p, cfg, now, &[], &[]);
    let out = &mut ui.out;
    writeln!(out, "pattern {id}")?;
    writeln!(out, "role:      {}", p.role)?;
    writeln!(
        out,
        "category:  {}",
        p.stats.category.map_or("?", |c| c.as_str())
    )?;
    writeln!(
        out,
        "state:     {}",
        fold::state(&p.stats, cfg, now).as_str()
    )?;
    writeln!(out, "text:      {}", crate::cli::clean(&p.text))?;
    writeln!(
        out,
        "record:    {} observed, {} validated, {} ignored (weight {:.2}), {} regression(s), outcomes {} pass / {} fail, aged {}",
        p.stats.observations,
        p.stats.validated,
        p.stats.ignored,
        p.stats.ignore_weight,
        p.stats.regressions,
        p.stats.outcome_passes,
        p.stats.outcome_fails,
        p.stats.aged
    )?;
    writeln!(
        out,
        "score:     {:.3} = success rate {:.3} × decay {:.3} (age {:.1} days) × category {:.2} × context {:.2}",
        s.total, s.success_rate, s.decay, s.age_days, s.category, s.context
    )?;
    if !p.labels.is_empty() || !p.files.is_empty() {
        writeln!(out, "contexts:  labels {:?} files {:?}", p.labels, p.files)?;
    }
    writeln!(out, "events:")?;
    for e in mine {
        let mut detail: Vec<String> = Vec::new();
        // Shown as stored, of whatever type (as `log` shows fields): this
        // renders the record, it decides nothing from it.
        for k in [
            "run",
            "weight",
            "regression",
            "level",
            "result",
            "false_positive",
            "reason",
            "justification",
        ] {
            if let Some(v) = e.data.get(k) {
                detail.push(format!(
                    "{k}={}",
                    v.as_str().map_or_else(|| v.to_string(), str::to_owned)
                ));
            }
        }
        let line = format!("  {} {:<18} {}", e.ts, e.kind, detail.join(" "));
        writeln!(out, "{}", crate::cli::clean(&line))?;
    }
    Ok(ExitCode::SUCCESS)
}
