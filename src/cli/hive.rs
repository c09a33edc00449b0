//! `git swarm hive …`: directives shared by many repositories, kept in a
//! git repository of their own (docs/hive.md). The library
//! ([`git_swarm::hive`]) fetches and checks; this reads the command line,
//! edits `[[hive]]` in `.swarm/config.toml` and says what happened.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use git_swarm::config::{HiveSubscription, is_valid_hive_name};
use git_swarm::hive;
use toml_edit::{DocumentMut, Item, Table, value};

use super::{Format, Outcome, Ui};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Make DIR a hive: a git repository whose `.swarm/` holds directives
    /// for many projects (created if missing; its first commit made).
    Init(InitArgs),
    /// Subscribe this project to a hive, pinned at its default branch's
    /// commit (or `--rev`).
    ///
    /// The hive is fetched into the git dir, and every directive of that
    /// commit checked: one that does not parse refuses the hive, naming the
    /// file and line. The subscription is written to `.swarm/config.toml`;
    /// commit it, so that every clone uses the same hive content.
    Add(AddArgs),
    /// Move a hive's pin to its default branch's newest commit (or
    /// `--rev`), showing what that changes, as `git swarm diff` does.
    ///
    /// The new revision's directives are checked first: a malformed one
    /// fails the update with its file and line, and nothing is changed.
    /// Commit `.swarm/config.toml` to share the move, reviewed.
    Update(UpdateArgs),
    /// Fetch the pinned revision of every hive (or NAME) without moving
    /// any pin: what a new clone runs once.
    Fetch(FetchArgs),
    /// The hives this project subscribes to.
    List(ListArgs),
    /// Unsubscribe from a hive.
    Remove(RemoveArgs),
    /// Switch a hive directive off for this project, with a reason (kept in
    /// `.swarm/config.toml`, recorded as a `hive_off` event).
    Off(OffArgs),
    /// Take a hive directive switched off again.
    On(OnArgs),
    /// Propose a directive of this project to a hive, as a branch for review.
    ///
    /// The directive must be this project's own, active, pass the
    /// actionability gate and be reviewed (its content on the trusted
    /// revision), and meet the hive's bar (`[promotion]` of its
    /// config.toml): acknowledged as applied in at least `min_applied`
    /// delegations, violated at most `max_violations` times. Below the bar
    /// it exits 1, one line per shortfall; any other refusal exits 2. The
    /// hive is fetched, and one commit on a new branch from its head adds
    /// the directive with its record in `source`; the branch is pushed to
    /// the hive. Nothing is merged: the hive's owners review it.
    Promote(super::hive_share::PromoteArgs),
    /// Send this project's signals about a hive's directives back to the hive.
    ///
    /// One `hive_report` event per directive of the hive that was shown,
    /// applied, violated or refused a tool call here, or that this project
    /// switched off (with the reason). The events are appended to the
    /// hive's event log on its branch `reports/<project>` (made from the
    /// hive's head when missing) and pushed; once the hive merges it, `git
    /// swarm stats` there shows them.
    Report(super::hive_share::ReportArgs),
}

pub fn run(command: Command, ui: &mut Ui) -> Outcome {
    match command {
        Command::Init(args) => init(args, ui),
        Command::Add(args) => add(args, ui),
        Command::Update(args) => update(args, ui),
        Command::Fetch(args) => fetch(args, ui),
        Command::List(args) => list(args, ui),
        Command::Remove(args) => remove(args, ui),
        Command::Off(args) => off(args, ui),
        Command::On(args) => on(args, ui),
        Command::Promote(args) => super::hive_share::promote(args, ui),
        Command::Report(args) => super::hive_share::report(args, ui),
    }
}

#[derive(Debug, clap::Args)]
pub struct InitArgs {
    /// The hive's folder.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
}

#[derive(Debug, clap::Args)]
pub struct AddArgs {
    /// The hive: a URL git can fetch, or a path.
    #[arg(value_name = "URL-OR-PATH")]
    url: String,
    /// Its name in this project (default: from the URL's last part).
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// Pin this revision of the hive (a branch or a commit) rather than
    /// its default branch.
    #[arg(long, value_name = "REV")]
    rev: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct UpdateArgs {
    /// The hive to update (default: every one).
    #[arg(value_name = "NAME")]
    name: Option<String>,
    /// Move the pin to this revision (a branch or a commit of the hive).
    #[arg(long, value_name = "REV", requires = "name")]
    rev: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct FetchArgs {
    /// The hive to fetch (default: every one).
    #[arg(value_name = "NAME")]
    name: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// How to print: text or json.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Debug, clap::Args)]
pub struct RemoveArgs {
    /// The hive to unsubscribe from.
    #[arg(value_name = "NAME")]
    name: String,
}

#[derive(Debug, clap::Args)]
pub struct OffArgs {
    /// The directive, as `NAME/ID` (or `hive:NAME/ID`).
    #[arg(value_name = "NAME/ID")]
    directive: String,
    /// Why this project does without it (the hive's owners see it).
    #[arg(long, value_name = "TEXT")]
    reason: String,
}

#[derive(Debug, clap::Args)]
pub struct OnArgs {
    /// The directive, as `NAME/ID` (or `hive:NAME/ID`).
    #[arg(value_name = "NAME/ID")]
    directive: String,
}

/// What a hive's `.swarm/` starts with.
const HIVE_README: &str = "# A hive of git-swarm directives

Lessons shared by every project that subscribes to this repository
(`git swarm hive add URL`). Each directive is one file in `directives/`,
checked as a project's are (`git swarm validate`). Projects take the
directives of a pinned commit of the default branch: change them through
pull requests here, and each project moves its pin with
`git swarm hive update`, a reviewed commit of its own.

`git swarm hive promote ID --to NAME` proposes a project's directive here
as a branch, when it passes the bar in `config.toml` (`[promotion]`).
";

const HIVE_CONFIG: &str = "# This repository is a hive: see README.md and docs/hive.md.
# What a directive promoted here must show in its project.
[promotion]
# The least delegations in which it was acknowledged as applied.
min_applied = 2
";

fn init(args: InitArgs, ui: &mut Ui) -> Outcome {
    let dir = &args.dir;
    if dir
        .symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink())
    {
        return Err(git_swarm::Error::usage(
            format!("{} is a symlink", dir.display()),
            "name the hive's real folder",
        )
        .into());
    }
    std::fs::create_dir_all(dir).map_err(|e| git_swarm::Error::io(dir, e))?;
    let swarm = dir.join(".swarm");
    if swarm.symlink_metadata().is_ok() {
        return Err(git_swarm::Error::usage(
            format!("{} already has a .swarm/", dir.display()),
            "a hive is made once; `git swarm hive add` subscribes a project to it",
        )
        .into());
    }
    let git = |args: &[&str], what: &str| {
        let mut cmd = hive::git();
        cmd.arg("-C").arg(dir).args(args);
        hive::run_local(cmd, None, what)
    };
    if !dir.join(".git").exists() {
        git(&["init", "--quiet"], "cannot make the hive's repository")?;
    }
    for (rel, text) in [
        ("README.md", HIVE_README),
        ("config.toml", HIVE_CONFIG),
        (".gitattributes", "events/*.jsonl merge=union\n"),
        (".gitignore", "local/\n"),
        ("directives/.gitkeep", ""),
        ("events/.gitkeep", ""),
        ("quarantine/.gitkeep", ""),
    ] {
        let path = swarm.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| git_swarm::Error::io(parent, e))?;
        }
        std::fs::write(&path, text).map_err(|e| git_swarm::Error::io(&path, e))?;
    }
    git(&["add", "--", ".swarm"], "cannot stage the hive's .swarm/")?;
    git(
        &[
            "commit",
            "--quiet",
            "-m",
            "A hive of git-swarm directives",
            "--",
            ".swarm",
        ],
        "cannot make the hive's first commit",
    )?;
    writeln!(ui.out, "made a hive in {}", dir.display())?;
    writeln!(
        ui.out,
        "next: add directives there (`git swarm add`, through pull requests), then in a project: git swarm hive add {}",
        dir.display()
    )?;
    Ok(ExitCode::SUCCESS)
}

/// A name for a hive from its URL: its last part, without `.git`, cut to
/// what a hive's name may hold.
fn name_of(url: &str) -> String {
    let last = url
        .trim_end_matches(['/', '\\'])
        .rsplit(['/', ':', '\\'])
        .next()
        .unwrap_or_default();
    let last = last.strip_suffix(".git").unwrap_or(last);
    let mut name: String = last
        .chars()
        .map(|c| c.to_ascii_lowercase())
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    name = name
        .trim_start_matches(['-', '_'])
        .chars()
        .take(40)
        .collect();
    if name.is_empty() {
        "hive".to_owned()
    } else {
        name
    }
}

/// A config with errors is in use as its defaults, with no hive: a hive
/// command refuses it rather than act on what the file does not say.
fn refuse_bad_config(store: &git_swarm::Store) -> Result<(), super::CliError> {
    let errors: Vec<_> = (store.config_problems.iter())
        .filter(|p| p.is_error())
        .cloned()
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(git_swarm::Error::Invalid(errors).into())
    }
}

/// `.swarm/config.toml`, for editing.
struct ConfigFile {
    path: PathBuf,
    doc: DocumentMut,
}

impl ConfigFile {
    fn read(store: &git_swarm::Store) -> Result<ConfigFile, super::CliError> {
        refuse_bad_config(store)?;
        let path = store.swarm_dir.join("config.toml");
        let text = match git_swarm::safe_fs::read(&path, 1024 * 1024) {
            Ok(bytes) => String::from_utf8(bytes).map_err(|_| {
                git_swarm::Error::usage(
                    format!("{} is not UTF-8", path.display()),
                    "fix .swarm/config.toml, then run this again",
                )
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(git_swarm::Error::io(&path, e).into()),
        };
        let doc = text.parse::<DocumentMut>().map_err(|e| {
            git_swarm::Error::usage(
                format!("{}: {e}", path.display()),
                "fix .swarm/config.toml, then run this again",
            )
        })?;
        Ok(ConfigFile { path, doc })
    }

    /// The `[[hive]]` tables, made so if the file writes them as an inline
    /// array (`hive = [{ ... }]`); anything else under `hive` is refused.
    fn hives(&mut self) -> Result<&mut toml_edit::ArrayOfTables, super::CliError> {
        match self.doc.remove("hive") {
            None => {
                self.doc
                    .insert("hive", Item::ArrayOfTables(toml_edit::ArrayOfTables::new()));
            }
            Some(item) => match item.into_array_of_tables() {
                Ok(tables) => {
                    self.doc.insert("hive", Item::ArrayOfTables(tables));
                }
                Err(item) => {
                    self.doc.insert("hive", item);
                    return Err(git_swarm::Error::usage(
                        format!("{}: `hive` is not a list of hives", self.path.display()),
                        "write each hive as a `[[hive]]` table (name, url, rev), as `git swarm hive add` does",
                    )
                    .into());
                }
            },
        }
        Ok(self
            .doc
            .get_mut("hive")
            .and_then(Item::as_array_of_tables_mut)
            .expect("an array of tables was just put there"))
    }

    fn hive(&mut self, name: &str) -> Result<&mut Table, super::CliError> {
        let path = self.path.display().to_string();
        self.hives()?
            .iter_mut()
            .find(|t| t.get("name").and_then(Item::as_str) == Some(name))
            .ok_or_else(|| {
                git_swarm::Error::usage(
                    format!("{path}: no `[[hive]]` table named `{name}`"),
                    "`git swarm hive list` shows the hives",
                )
                .into()
            })
    }

    fn write(&self) -> Result<(), super::CliError> {
        git_swarm::safe_fs::replace(&self.path, self.doc.to_string().as_bytes())?;
        Ok(())
    }
}

fn count_directives(dir: &Path) -> usize {
    git_swarm::safe_fs::names_ending(dir, ".toml").map_or(0, |n| n.len())
}

fn add(args: AddArgs, ui: &mut Ui) -> Outcome {
    let store = super::store(ui)?;
    let name = args.name.clone().unwrap_or_else(|| name_of(&args.url));
    if !is_valid_hive_name(&name) {
        return Err(git_swarm::Error::usage(
            format!("`{}` is not a hive name", name.escape_debug()),
            "a hive's name is lowercase letters, digits, `-` and `_`, at most 40: give one with --name",
        )
        .into());
    }
    if store.config.hive.iter().any(|h| h.name == name) {
        return Err(git_swarm::Error::usage(
            format!("this project already has a hive named `{name}`"),
            "`git swarm hive update` moves its pin; --name gives another hive another name",
        )
        .into());
    }
    refuse_bad_config(&store)?;
    // A path is kept absolute and real (no link on the way, checked by the
    // fetch): clones elsewhere name the same folder.
    let url = if Path::new(&args.url).exists() {
        std::fs::canonicalize(&args.url)
            .unwrap_or_else(|_| PathBuf::from(&args.url))
            .to_string_lossy()
            .into_owned()
    } else {
        args.url.clone()
    };
    hive::refuse_links_on_the_way(&args.url, Path::new(&args.url))?;
    let head = hive::fetch(&store.common_dir, &store.root, &name, &url)?;
    let rev = match &args.rev {
        Some(spec) => hive::resolve(&store.common_dir, &name, spec)?,
        None => head,
    };
    let dir = hive::materialize(&store.common_dir, &name, &rev)?;
    let mut config = ConfigFile::read(&store)?;
    let mut table = Table::new();
    table.insert("name", value(name.as_str()));
    table.insert("url", value(url.as_str()));
    table.insert("rev", value(rev.as_str()));
    config.hives()?.push(table);
    config.write()?;
    refresh(ui);
    writeln!(
        ui.out,
        "subscribed to hive `{name}` at {} ({} directives)",
        hive::short(&rev),
        count_directives(&dir)
    )?;
    writeln!(
        ui.out,
        "commit .swarm/config.toml to share it: until it is on the trusted revision, its directives reach no agent"
    )?;
    Ok(ExitCode::SUCCESS)
}

/// Brings the index up to date after the subscriptions changed, so that
/// the hooks that trust it see the change at once.
fn refresh(ui: &mut Ui) {
    if let Ok(store) = super::store(ui) {
        let _ = git_swarm::index::refresh(&store);
    }
}

fn update(args: UpdateArgs, ui: &mut Ui) -> Outcome {
    let store = super::store(ui)?;
    let names: Vec<String> = match &args.name {
        Some(n) => vec![git_swarm::hive::subscription(&store, n)?.name.clone()],
        None => store.config.hive.iter().map(|h| h.name.clone()).collect(),
    };
    if names.is_empty() {
        writeln!(
            ui.out,
            "no hive: `git swarm hive add URL` subscribes to one"
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    refuse_bad_config(&store)?;
    // Every move is checked before any is written: all or nothing.
    let mut moves = Vec::new();
    for name in &names {
        let sub = git_swarm::hive::subscription(&store, name)?;
        let head = hive::fetch(&store.common_dir, &store.root, name, &sub.url)?;
        let rev = match &args.rev {
            Some(spec) => hive::resolve(&store.common_dir, name, spec)?,
            None => head,
        };
        hive::materialize(&store.common_dir, name, &rev)?;
        moves.push((sub.clone(), rev));
    }
    let mut config = ConfigFile::read(&store)?;
    let mut moved = 0;
    for (sub, rev) in &moves {
        if sub.rev == *rev {
            writeln!(
                ui.out,
                "hive `{}`: already at {}",
                sub.name,
                hive::short(rev)
            )?;
            continue;
        }
        writeln!(
            ui.out,
            "hive `{}`: {} -> {}",
            sub.name,
            hive::short(&sub.rev),
            hive::short(rev)
        )?;
        let mirror = hive::mirror_dir(&store.common_dir, &sub.name);
        let diff = gix::open(&mirror)
            .map_err(|e| git_swarm::Error::git(format!("hive `{}`", sub.name), e.to_string()))
            .and_then(|repo| {
                // An old pin the mirror no longer has (a force-pushed hive)
                // is shown as everything added.
                let from = if hive::resolve(&store.common_dir, &sub.name, &sub.rev).is_ok() {
                    sub.rev.clone()
                } else {
                    "4b825dc642cb6eb9a060e54bf8d69288fbee4904".to_owned()
                };
                let revisions = git_swarm::diff::Revisions::parse(&format!("{from}..{rev}"))?;
                git_swarm::diff::diff(&repo, &mirror, &revisions)
            });
        match diff {
            Ok(report) => {
                let text = super::diff::text(&report);
                for line in text.lines() {
                    writeln!(ui.out, "  {line}")?;
                }
            }
            Err(e) => ui.warning(
                &format!("the change of hive `{}` cannot be shown: {e}", sub.name),
                None,
            ),
        }
        config.hive(&sub.name)?.insert("rev", value(rev.as_str()));
        moved += 1;
    }
    if moved > 0 {
        config.write()?;
        refresh(ui);
        writeln!(
            ui.out,
            "commit .swarm/config.toml to share the move: until it is on the trusted revision, the new directives reach no agent"
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn fetch(args: FetchArgs, ui: &mut Ui) -> Outcome {
    let store = super::store(ui)?;
    refuse_bad_config(&store)?;
    let subs: Vec<&HiveSubscription> = match &args.name {
        Some(n) => vec![git_swarm::hive::subscription(&store, n)?],
        None => store.config.hive.iter().collect(),
    };
    for sub in subs {
        hive::fetch(&store.common_dir, &store.root, &sub.name, &sub.url)?;
        let dir = hive::materialize(&store.common_dir, &sub.name, &sub.rev)?;
        writeln!(
            ui.out,
            "hive `{}` at {}: {} directives",
            sub.name,
            hive::short(&sub.rev),
            count_directives(&dir)
        )?;
    }
    // The trusted revision's pins too: what tells a reviewed hive directive.
    let repo = super::repo()?;
    if let Some(commit) = git_swarm::reviewed::trusted_commit(&repo) {
        git_swarm::hive::fetch_trusted(&store, &repo.gix(), commit);
    }
    refresh(ui);
    Ok(ExitCode::SUCCESS)
}

#[derive(serde::Serialize)]
struct Listed<'a> {
    name: &'a str,
    url: &'a str,
    rev: &'a str,
    /// Whether its pinned revision is fetched here.
    fetched: bool,
    directives: usize,
    off: &'a std::collections::BTreeMap<String, String>,
}

fn list(args: ListArgs, ui: &mut Ui) -> Outcome {
    let store = super::store(ui)?;
    let listed: Vec<Listed<'_>> = store
        .config
        .hive
        .iter()
        .map(|h| {
            let dir = hive::pinned_dir(&store.common_dir, &h.name, &h.rev);
            let fetched = hive::is_fetched(&store.common_dir, h);
            Listed {
                name: &h.name,
                url: &h.url,
                rev: &h.rev,
                fetched,
                directives: if fetched { count_directives(&dir) } else { 0 },
                off: &h.off,
            }
        })
        .collect();
    if args.format == Format::Json {
        return ui.json_result(&listed);
    }
    if listed.is_empty() {
        writeln!(
            ui.out,
            "no hive: `git swarm hive add URL` subscribes to one"
        )?;
    }
    for l in &listed {
        let state = if l.fetched {
            format!("{} directives", l.directives)
        } else {
            "not fetched (git swarm hive fetch)".to_owned()
        };
        let off = if l.off.is_empty() {
            String::new()
        } else {
            format!(", {} switched off", l.off.len())
        };
        writeln!(
            ui.out,
            "{}\t{}\t{}\t{state}{off}",
            l.name,
            hive::short(l.rev),
            l.url
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn remove(args: RemoveArgs, ui: &mut Ui) -> Outcome {
    let store = super::store(ui)?;
    git_swarm::hive::subscription(&store, &args.name)?;
    let mut config = ConfigFile::read(&store)?;
    let hives = config.hives()?;
    hives.retain(|t| t.get("name").and_then(Item::as_str) != Some(args.name.as_str()));
    if hives.is_empty() {
        config.doc.remove("hive");
    }
    config.write()?;
    refresh(ui);
    writeln!(ui.out, "unsubscribed from hive `{}`", args.name)?;
    Ok(ExitCode::SUCCESS)
}

/// `NAME/ID` (or `hive:NAME/ID`), checked.
fn hive_directive(spec: &str) -> Result<(&str, &str), super::CliError> {
    let bare = spec.strip_prefix("hive:").unwrap_or(spec);
    match bare.split_once('/') {
        Some((name, id))
            if is_valid_hive_name(name) && git_swarm::directive::is_valid_id(id) =>
        {
            Ok((name, id))
        }
        _ => Err(git_swarm::Error::usage(
            format!("`{}` does not name a hive directive", spec.escape_debug()),
            "name it as NAME/ID, e.g. team/no-lockfile-edits (`git swarm list` shows each hive directive's origin)",
        )
        .into()),
    }
}

fn off(args: OffArgs, ui: &mut Ui) -> Outcome {
    let (name, id) = hive_directive(&args.directive)?;
    let reason = args.reason.trim();
    if reason.chars().count() < 10 || reason.contains(['\n', '\r']) {
        return Err(git_swarm::Error::usage(
            "a reason is one line of at least 10 characters",
            "say why this project does without the lesson: the hive's owners read it",
        )
        .into());
    }
    let store = super::store(ui)?;
    let sub = git_swarm::hive::subscription(&store, name)?;
    let dir = hive::pinned_dir(&store.common_dir, name, &sub.rev);
    if !dir.join(format!("{id}.toml")).is_file() && !sub.off.contains_key(id) {
        return Err(git_swarm::Error::usage(
            format!("hive `{name}` has no directive `{id}` at its pinned revision"),
            "`git swarm list` shows the hive directives this project takes",
        )
        .into());
    }
    let mut config = ConfigFile::read(&store)?;
    let table = config.hive(name)?;
    if !table.contains_key("off") {
        let t = toml_edit::InlineTable::new();
        table.insert("off", value(t));
    }
    if let Some(off) = table.get_mut("off").and_then(Item::as_table_like_mut) {
        off.insert(id, value(reason));
    }
    let event = store
        .event(git_swarm::event::Body::HiveOff {
            hive: name.to_owned(),
            reason: reason.to_owned(),
        })
        .about(id);
    config.write()?;
    super::append(&store, &[event], ui)?;
    refresh(ui);
    writeln!(
        ui.out,
        "switched {} off for this project; commit .swarm/config.toml to share it",
        hive::origin_name(name, id)
    )?;
    Ok(ExitCode::SUCCESS)
}

fn on(args: OnArgs, ui: &mut Ui) -> Outcome {
    let (name, id) = hive_directive(&args.directive)?;
    let store = super::store(ui)?;
    let sub = git_swarm::hive::subscription(&store, name)?;
    if !sub.off.contains_key(id) {
        writeln!(
            ui.out,
            "{} is not switched off",
            hive::origin_name(name, id)
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut config = ConfigFile::read(&store)?;
    let table = config.hive(name)?;
    let empty = match table.get_mut("off").and_then(Item::as_table_like_mut) {
        Some(off) => {
            off.remove(id);
            off.is_empty()
        }
        None => true,
    };
    if empty {
        table.remove("off");
    }
    let event = store
        .event(git_swarm::event::Body::HiveOn {
            hive: name.to_owned(),
        })
        .about(id);
    config.write()?;
    super::append(&store, &[event], ui)?;
    refresh(ui);
    writeln!(ui.out, "{} is taken again", hive::origin_name(name, id))?;
    Ok(ExitCode::SUCCESS)
}

/// Refuses a command that would change directive `id` when it is a hive's
/// (no project file of that id): it is changed in the hive, or switched
/// off here.
pub fn refuse_if_hive(
    store: &git_swarm::Store,
    id: &str,
    what: &str,
) -> Result<(), super::CliError> {
    if store.directives_dir().join(format!("{id}.toml")).exists() {
        return Ok(());
    }
    match hive::directive_file(store, id) {
        Some((_, sub)) => Err(git_swarm::Error::usage(
            format!(
                "`{id}` is {}, a directive of hive `{}`: this project cannot {what} it",
                hive::origin_name(&sub.name, id),
                sub.name
            ),
            format!(
                "change it in the hive (a pull request there), or do without it here: git swarm hive off {}/{id} --reason \"...\"",
                sub.name
            ),
        )
        .into()),
        None => Ok(()),
    }
}
