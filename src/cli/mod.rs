//! The command line: argument parsing, terminal output and exit codes. The
//! only place clap and printing live; everything else is in the library.

mod ack;
mod add;
mod changes;
mod check;
mod deescalate;
mod doctor;
mod generate;
mod hook;
mod hooks;
mod index;
mod init;
mod inject;
mod list;
mod log;
mod pattern;
mod phase;
mod record;
mod review;
mod run_tool;
mod search;
mod show;
mod status;
mod trust;
mod ui;
mod validate;

use std::io;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use git_swarm::event::Clock;
use git_swarm::{Error, Repo, Store};

pub use ui::{Format, Ui, clean};

/// Keep what your coding agents learn — directives, patterns, verdicts — as
/// versioned files under `.swarm/`, and enforce it where code moves.
///
/// Exit status: 0 success; 1 a check failed, a gate blocked or an entry was
/// quarantined; 2 bad usage or bad input; 3 an internal or environment error.
#[derive(Debug, Parser)]
#[command(
    name = "git-swarm",
    bin_name = "git swarm",
    version,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    Init(init::Args),
    Add(Box<add::Args>),
    List(list::Args),
    Show(show::Args),
    Validate(validate::Args),
    Check(check::Args),
    #[command(hide = true)]
    Changes(changes::Args),
    Log(log::Args),
    Inject(inject::Args),
    Search(search::Args),
    Ack(ack::Args),
    Review(review::Args),
    Status(status::Args),
    #[command(subcommand)]
    Phase(phase::Command),
    Deescalate(deescalate::Args),
    #[command(subcommand)]
    Pattern(pattern::Command),
    #[command(subcommand)]
    Index(index::Command),
    Doctor(doctor::Args),
    #[command(subcommand)]
    Generate(generate::Command),
    #[command(subcommand)]
    Hooks(hooks::Command),
    #[command(hide = true)]
    Hook(hook::Args),
    Trust(trust::Args),
    Record(record::Args),
    #[command(hide = true)]
    RunTool(run_tool::Args),
}

/// What a command asks `main` to exit with.
pub type Outcome = Result<ExitCode, CliError>;

/// An error on its way to the terminal.
#[derive(Debug)]
pub enum CliError {
    Swarm(Error),
    Io(io::Error),
}

impl From<Error> for CliError {
    fn from(e: Error) -> Self {
        CliError::Swarm(e)
    }
}

impl From<io::Error> for CliError {
    fn from(e: io::Error) -> Self {
        CliError::Io(e)
    }
}

pub fn main() -> ExitCode {
    if std::env::var_os("GIT_SWARM_TRACE_PERF").is_some_and(|v| !v.is_empty()) {
        git_swarm::trace::enable();
    }
    let cli = Cli::parse();
    git_swarm::trace::mark("arguments parsed");
    let mut ui = Ui::new();
    let result = run(cli.command, &mut ui);
    git_swarm::trace::mark("done");
    for line in git_swarm::trace::report() {
        eprintln!("{line}");
    }
    match result {
        Ok(code) => code,
        Err(CliError::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(CliError::Io(e)) => {
            ui.error(&format!("{e}"), None, None);
            ExitCode::from(3)
        }
        Err(CliError::Swarm(e)) => {
            if let Error::Invalid(problems) = &e {
                for p in problems {
                    ui.problem(p);
                }
            } else {
                ui.error(&e.to_string(), None, e.hint().as_deref());
            }
            ExitCode::from(if e.is_user_error() { 2 } else { 3 })
        }
    }
}

fn run(command: Command, ui: &mut Ui) -> Outcome {
    match command {
        Command::Init(args) => init::run(args, ui),
        Command::Add(args) => add::run(*args, ui),
        Command::List(args) => list::run(args, ui),
        Command::Show(args) => show::run(args, ui),
        Command::Validate(args) => validate::run(args, ui),
        Command::Check(args) => check::run(args, ui),
        Command::Changes(args) => changes::run(args, ui),
        Command::Log(args) => log::run(args, ui),
        Command::Index(cmd) => index::run(cmd, ui),
        Command::Doctor(args) => doctor::run(args, ui),
        Command::Generate(cmd) => generate::run(cmd, ui),
        Command::Hooks(cmd) => hooks::run(cmd, ui),
        Command::Hook(args) => hook::run(args, ui),
        Command::Trust(args) => trust::run(args, ui),
        Command::Record(args) => record::run(args, ui),
        Command::RunTool(args) => run_tool::run(args, ui),
        Command::Status(args) => status::run(args, ui),
        Command::Inject(args) => inject::run(args, ui),
        Command::Search(args) => search::run(args, ui),
        Command::Ack(args) => ack::run(args, ui),
        Command::Review(args) => review::run(args, ui),
        Command::Phase(command) => phase::run(command, ui),
        Command::Deescalate(args) => deescalate::run(args, ui),
        Command::Pattern(command) => pattern::run(command, ui),
    }
}

/// A phase name: a letter or digit, then letters, digits, `.`, `_`, `-` (at most 64).
pub fn check_phase_name(phase: &str) -> Result<(), Error> {
    let ok = phase.len() <= 64
        && phase
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        && phase
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(Error::Usage {
            message: format!("`{phase}` is not a phase name"),
            hint: Some(
                "a phase is a letter or digit, then letters, digits, `.`, `_` or `-` (at most 64), e.g. `2` or `design`".into(),
            ),
        })
    }
}

/// The repository around the current directory.
pub fn repo() -> Result<Repo, Error> {
    let cwd = std::env::current_dir().map_err(|e| Error::io(std::path::Path::new("."), e))?;
    Repo::discover(&cwd)
}

/// The `.swarm/` of the repository around the current directory.
pub fn store(ui: &mut Ui) -> Result<Store, Error> {
    let store = Store::open(&repo()?, clock()?)?;
    git_swarm::trace::mark("store opened");
    for p in &store.config_problems {
        ui.problem(p);
    }
    Ok(store)
}

/// `GIT_SWARM_NOW` fixes the clock (tests and reproducible runs); otherwise the system clock.
fn clock() -> Result<Clock, Error> {
    match std::env::var("GIT_SWARM_NOW") {
        Ok(s) if !s.is_empty() => s
            .parse::<jiff::Timestamp>()
            .map(|t| Clock { fixed: Some(t) })
            .map_err(|e| Error::Usage {
                message: format!("GIT_SWARM_NOW=`{s}` is not an RFC 3339 time: {e}"),
                hint: Some("use a time like 2026-11-22T10:00:00Z, or unset it".into()),
            }),
        _ => Ok(Clock::default()),
    }
}

/// Appends events, telling the user about any torn line the append found
/// (a write cut short earlier) and saved aside.
pub fn append(store: &Store, events: &[git_swarm::event::Event], ui: &mut Ui) -> Result<(), Error> {
    let saved = store.append(events)?;
    report_torn(store, &saved, ui);
    Ok(())
}

/// Tells the user about torn lines an append saved aside.
pub fn report_torn(store: &Store, saved: &[std::path::PathBuf], ui: &mut Ui) {
    for s in saved {
        ui.warning(
            &format!("an incomplete line at the end of the event log (a write cut short) was moved to {}", store.rel(s)),
            Some("nothing else was touched; `git swarm doctor` checks the log"),
        );
    }
}

/// [`escalate`], with the directives read from the index: for a command
/// that recorded violations without having loaded them itself.
pub fn escalate_from_index(store: &Store, ui: &mut Ui) -> Result<(), Error> {
    let loaded = git_swarm::index::load(store)?;
    let index = &loaded.index;
    escalate(
        store,
        |id| index.directive(id).and_then(|e| e.directive.as_ref()),
        ui,
    )
    .map(drop)
}

/// After violations were recorded: appends an `escalation` event for each
/// episode the fold has opened and no event records yet, once (of several
/// processes racing, one writes it), and says so. Returns the ids of the
/// directives escalated now.
pub fn escalate<'a>(
    store: &Store,
    directives: impl Fn(&str) -> Option<&'a git_swarm::directive::Directive>,
    ui: &mut Ui,
) -> Result<Vec<String>, Error> {
    let mut escalated = Vec::new();
    let loaded = git_swarm::index::refresh_fold(store)?;
    for e in git_swarm::learning::escalations_due(store, &loaded.index.fold, directives) {
        let episode = e.data.get("episode").and_then(|v| v.as_str()).unwrap_or("");
        let marker = format!("\"episode\":{}", serde_json::Value::from(episode));
        let (written, saved) =
            git_swarm::event::append_once(&store.events_dir(), &e, &marker, &store.config.events)?;
        report_torn(store, &saved, ui);
        if written {
            escalated.extend(e.directive.clone());
            ui.warning(
                &format!(
                    "escalated {} to critical + enforce: violated on 2 occasions within 30 days",
                    e.directive.as_deref().unwrap_or("?")
                ),
                Some("`git swarm status` lists escalations; `git swarm deescalate ID --justification TEXT` ends one"),
            );
        }
    }
    Ok(escalated)
}

/// Loads the index, telling the user about problems it found in `.swarm/`.
pub fn load_index(store: &Store, ui: &mut Ui) -> Result<git_swarm::index::Loaded, Error> {
    let loaded = git_swarm::index::load(store)?;
    warn_problems(&loaded, ui);
    Ok(loaded)
}

/// [`load_index`] for commands that rank directives: the retrieval corpus
/// (`index.corpus`) instead of the parsed entries.
pub fn load_corpus(store: &Store, ui: &mut Ui) -> Result<git_swarm::index::Loaded, Error> {
    let loaded = git_swarm::index::corpus(store)?;
    warn_problems(&loaded, ui);
    Ok(loaded)
}

/// [`load_corpus`] with the pattern fold too (`index.patterns`): what `inject` reads.
pub fn load_delegation(store: &Store, ui: &mut Ui) -> Result<git_swarm::index::Loaded, Error> {
    let loaded = git_swarm::index::delegation(store)?;
    warn_problems(&loaded, ui);
    Ok(loaded)
}

fn warn_problems(loaded: &git_swarm::index::Loaded, ui: &mut Ui) {
    let errors = loaded.index.error_count();
    if errors > 0 {
        ui.warning(
            &format!(
                "{errors} problem{} in .swarm/ (files that do not parse and malformed event lines are left out)",
                if errors == 1 { "" } else { "s" }
            ),
            Some("run `git swarm validate` to see them"),
        );
    }
}
