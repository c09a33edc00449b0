//! `git swarm add`.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use git_swarm::Error;
use git_swarm::directive::{
    Category, Directive, Enforcement, Priority, is_valid_id, parse_directive_toml_without_id,
    slug_from_lesson,
};
use git_swarm::event::Body;
use git_swarm::problem::Problem;
use git_swarm::store::Minted;

use super::{Format, Outcome, Ui};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  git swarm add --lesson 'Never call unwrap() in library code' --agents coder \\\n      --verify 'grep:\\.unwrap\\(\\):src/**/*.rs' --priority high --enforcement enforce\n  git swarm add --from lesson.toml"
)]
pub struct Args {
    /// Read the directive from a TOML file (`-` for stdin) instead of flags.
    #[arg(long, value_name = "FILE.toml", conflicts_with_all = ["lesson", "rationale", "category", "priority", "enforcement", "confidence", "agents", "tools", "paths", "trigger", "forbid", "require", "verification_check", "verify", "tag", "source"])]
    from: Option<PathBuf>,
    /// Id (file stem); derived from the lesson when left out.
    #[arg(long)]
    id: Option<String>,
    /// What to do or not do: one line, 15–280 characters.
    #[arg(long, required_unless_present = "from")]
    lesson: Option<String>,
    /// Why, in free text.
    #[arg(long)]
    rationale: Option<String>,
    #[arg(long, value_parser = str::parse::<Category>, help = format!("One of {}", Category::NAMES.join(", ")))]
    category: Option<Category>,
    #[arg(long, value_parser = str::parse::<Priority>, help = format!("One of {} (default medium)", Priority::NAMES.join(", ")))]
    priority: Option<Priority>,
    #[arg(long, value_parser = str::parse::<Enforcement>, help = format!("One of {} (default warn); enforce blocks", Enforcement::NAMES.join(", ")))]
    enforcement: Option<Enforcement>,
    /// How sure you are, 0..1 (default 0.5).
    #[arg(long)]
    confidence: Option<f64>,
    /// Agent roles it applies to (comma-separated, repeatable).
    #[arg(long, value_delimiter = ',', value_name = "ROLE,..")]
    agents: Vec<String>,
    /// Tools it applies to (comma-separated, repeatable).
    #[arg(long, value_delimiter = ',', value_name = "TOOL,..")]
    tools: Vec<String>,
    /// Path glob it applies to (repeatable; globs may contain commas).
    #[arg(long = "paths", value_name = "GLOB")]
    paths: Vec<String>,
    /// Phrase that surfaces it in retrieval (repeatable).
    #[arg(long, value_name = "PHRASE")]
    trigger: Vec<String>,
    /// Something never to do (repeatable).
    #[arg(long, value_name = "ACTION")]
    forbid: Vec<String>,
    /// Something always to do (repeatable).
    #[arg(long, value_name = "ACTION")]
    require: Vec<String>,
    /// How a reviewer checks it, in prose (repeatable).
    #[arg(long, value_name = "CHECK")]
    verification_check: Vec<String>,
    /// Machine check: file_modified:GLOB, file_not_modified:GLOB, grep:REGEX[:GLOB], grep_tree:REGEX[:GLOB] or tool:ARGV (repeatable).
    #[arg(long, value_name = "PREDICATE")]
    verify: Vec<String>,
    /// Tag (repeatable).
    #[arg(long, value_name = "TAG")]
    tag: Vec<String>,
    /// Where the lesson came from (a PR, a run, a review).
    #[arg(long)]
    source: Option<String>,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    let (store, review) = super::store_and_review(ui)?;
    let mut d = match &args.from {
        Some(path) => from_file(path)?,
        None => from_flags(&args),
    };
    // Text typed by hand that no line can hold is refused, not quarantined:
    // there is nothing to keep.
    git_swarm::directive::check_lines(&d)?;
    if args.from.is_none() {
        d.applies_to_agents = as_roles(&store.config.agent_types, &d.applies_to_agents, ui);
    }
    if let Some(id) = &args.id {
        d.id = id.clone();
    }
    if d.id.is_empty() {
        d.id = unique_id(&store, &slug_from_lesson(&d.lesson));
    } else if !is_valid_id(&d.id) {
        return Err(Error::usage(
            format!("`{}` is not a valid directive id", d.id.escape_debug()),
            "ids are 2–80 characters of a-z, 0-9, `.`, `_` and `-`, starting with a letter or digit",
        )
        .into());
    }
    if let Some(path) = store.id_taken(&d.id) {
        return Err(Error::AlreadyExists {
            id: d.id.clone(),
            path: store.rel(&path),
        }
        .into());
    }
    if d.created_at.is_none() {
        let now = store.clock.now();
        d.created_at = Some(now.round(jiff::Unit::Second).unwrap_or(now).to_string());
    }

    // A directive file written whose `added` (or `quarantined`) event the
    // log then refuses could never be recorded: the id is taken by then.
    store.check_appendable(&store.event(Body::Added {
        path: String::new(),
    }))?;
    let id = d.id.clone();
    match store.mint(d)? {
        Minted::Added { path, event } => {
            let rel = store.rel(&path);
            super::append(&store, &[event], ui)?;
            if args.format == Format::Json {
                ui.json(&serde_json::json!({ "status": "added", "id": id, "path": rel }))?;
            } else {
                writeln!(ui.out, "Added directive `{id}` at {rel}")?;
            }
            let blob = git_swarm::safe_fs::read(&path, git_swarm::directive::limits::FILE_MAX)
                .ok()
                .and_then(|b| git_swarm::reviewed::blob_id(&b));
            if !review.shows(review.is_reviewed(blob.as_ref())) {
                ui.note(&format!(
                    "agents are shown `{id}` once it is on {}: commit it there (or merge it); `git config swarm.injectUnreviewed mark` shows it before, marked as unreviewed",
                    review.revision_name()
                ));
            }
            Ok(ExitCode::SUCCESS)
        }
        Minted::Quarantined {
            path,
            event,
            failure,
        } => {
            let rel = store.rel(&path);
            super::append(&store, &[event], ui)?;
            if args.format == Format::Json {
                let issues: Vec<_> = failure
                    .issues
                    .iter()
                    .map(|i| serde_json::json!({ "field": i.field, "index": i.index, "message": i.message, "hint": i.hint }))
                    .collect();
                ui.json(&serde_json::json!({ "status": "quarantined", "id": id, "path": rel, "reason": failure.reason, "issues": issues }))?;
            } else {
                writeln!(ui.out, "Quarantined `{id}` at {rel}: {}", failure.reason)?;
                for issue in &failure.issues {
                    let field = match issue.index {
                        Some(i) => format!("{}[{i}]", issue.field),
                        None => issue.field.to_owned(),
                    };
                    writeln!(ui.out, "  {field}: {}", super::clean(&issue.message))?;
                    ui.hint(&issue.hint);
                }
                ui.hint(&format!(
                    "fix {rel}, then `git swarm harden` promotes it to .swarm/directives/; or delete it and run `git swarm add` again with the missing fields"
                ));
            }
            Ok(ExitCode::from(1))
        }
    }
}

/// `--agents` names as roles: a harness's agent type (`general-purpose`,
/// `Explore`) becomes the role it maps to, with a note saying so, since a
/// directive is scoped to roles and the hooks map the types onto them.
fn as_roles(
    overrides: &std::collections::BTreeMap<String, String>,
    names: &[String],
    ui: &mut Ui,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(names.len());
    for name in names {
        let role = match git_swarm::agent_hook::roles::harness_type(overrides, name) {
            Some((role, whose)) => {
                ui.note(&format!(
                    "`{}` is an agent type ({whose}) that git-swarm maps to the role `{role}`: the directive is scoped to `{role}`",
                    name.escape_debug()
                ));
                role
            }
            None => name.clone(),
        };
        if !out.contains(&role) {
            out.push(role);
        }
    }
    out
}

fn from_flags(args: &Args) -> Directive {
    let mut d = Directive::new(String::new(), args.lesson.clone().unwrap_or_default());
    d.rationale = args.rationale.clone();
    d.category = args.category.unwrap_or_default();
    d.priority = args.priority.unwrap_or_default();
    d.enforcement = args.enforcement.unwrap_or_default();
    if let Some(c) = args.confidence {
        d.confidence = c;
    }
    let clean = |v: &[String]| {
        v.iter()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
    };
    d.applies_to_agents = clean(&args.agents);
    d.applies_to_tools = clean(&args.tools);
    d.paths = args.paths.clone();
    d.triggers = args.trigger.clone();
    d.forbidden_actions = args.forbid.clone();
    d.required_actions = args.require.clone();
    d.verification_checks = args.verification_check.clone();
    d.verify = args.verify.clone();
    d.tags = args.tag.clone();
    d.source = args.source.clone();
    d
}

fn from_file(path: &std::path::Path) -> Result<Directive, Error> {
    let shown = path.display().to_string();
    let max = git_swarm::directive::limits::FILE_MAX;
    let bytes = if shown == "-" {
        let mut b = Vec::new();
        std::io::stdin()
            .take(max + 1)
            .read_to_end(&mut b)
            .map_err(|e| Error::io(path, e))?;
        if b.len() as u64 > max {
            return Err(Error::Invalid(vec![Problem::error(
                "<stdin>",
                "too_large",
                format!("input is over the {max}-byte limit"),
            )]));
        }
        b
    } else {
        git_swarm::index::read_capped(path, max).map_err(|e| {
            Error::Invalid(vec![Problem::error(&shown, "unreadable", e.to_string())])
        })?
    };
    let text = String::from_utf8(bytes).map_err(|e| {
        let good =
            String::from_utf8_lossy(&e.as_bytes()[..e.utf8_error().valid_up_to()]).into_owned();
        Error::Invalid(vec![
            Problem::error(&shown, "not_utf8", "file is not valid UTF-8")
                .at_offset(&good, good.len())
                .with_hint("save the file as UTF-8"),
        ])
    })?;
    let loaded = parse_directive_toml_without_id(&text, &shown);
    match loaded.directive {
        Some(d) if loaded.problems.is_empty() => Ok(d),
        _ => Err(Error::Invalid(loaded.problems)),
    }
}

/// `base`, or `base-2`, `base-3`… whichever is free in directives/ and quarantine/.
fn unique_id(store: &git_swarm::Store, base: &str) -> String {
    std::iter::once(base.to_owned())
        .chain((2..).map(|n| format!("{base}-{n}")))
        .find(|candidate| store.id_taken(candidate).is_none())
        .expect("an endless run of candidates has a free one")
}
