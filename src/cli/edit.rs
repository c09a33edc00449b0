//! `git swarm edit`.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use git_swarm::{Error, Repo};

use super::{Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The directive to edit.
    #[arg(value_name = "ID")]
    id: String,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    let repo = super::repo()?;
    let store = super::store(ui)?;
    super::hive::refuse_if_hive(&store, &args.id, "edit")?;
    let file = git_swarm::directive::lifecycle::read(&store, &args.id)
        .map_err(|e| super::show::with_suggestion(&store, e))?;
    // Before anything is written: with no editor there is no edit to keep.
    let editor = editor(&repo)?;
    let dir = store.local_dir().join("edit");
    git_swarm::safe_fs::create_dir_all(&store.git_dir, &dir)?;
    let copy = dir.join(format!("{}.toml", args.id));
    // The directive as the copy was made from it: a save over anything else
    // would undo a change made meanwhile (a pull, another edit).
    let base = dir.join(format!("{}.toml.orig", args.id));
    let copy_rel = store.rel(&copy);
    let kept = std::fs::symlink_metadata(&copy).is_ok_and(|m| m.is_file());
    let base_text = if kept {
        let base_text = read_text(&base, &store.rel(&base)).unwrap_or_else(|_| file.text.clone());
        ui.note(&format!(
            "reopening the edit kept in {copy_rel} (delete it to start again from {})",
            file.rel
        ));
        base_text
    } else {
        write_new(&copy, &file.text)?;
        write_new(&base, &file.text)?;
        file.text.clone()
    };
    let kept_hint = format!(
        "the edit is kept in {copy_rel}; `git swarm edit {}` reopens it",
        args.id
    );
    // The edit is kept, and the directive's file left as it was.
    let unchanged =
        |what: String| Error::usage(format!("{what}: {} is unchanged", file.rel), &kept_hint);
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$@\""))
        .arg(&editor)
        .arg(&copy)
        .status()
        .map_err(|e| {
            Error::usage(
                format!("the editor `{editor}` could not be started: {e}"),
                "set GIT_EDITOR, core.editor, VISUAL or EDITOR to an editor that runs",
            )
        })?;
    if !status.success() {
        return Err(unchanged(format!("the editor `{editor}` failed ({status})")).into());
    }
    // A copy the editor removed is abandoned as an emptied one is.
    let text = match std::fs::symlink_metadata(&copy) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        // Over the size limit, say so and keep the edit, as for a bad one.
        _ => read_text(&copy, &copy_rel).map_err(|e| match e {
            Error::Usage { message, .. } => unchanged(message),
            other => other,
        })?,
    };
    if text.trim().is_empty() {
        // As an empty commit message aborts a commit, an emptied file abandons the edit.
        discard(&copy, &base);
        return Err(Error::usage(
            format!("the edit is empty: {} is unchanged", file.rel),
            format!(
                "emptying the file abandons the edit; `git swarm retire {}` retires a directive",
                args.id
            ),
        )
        .into());
    }
    let now = git_swarm::directive::lifecycle::read(&store, &args.id)?;
    if now.text != base_text {
        // Shown once: the next save, from the kept edit, goes over this version.
        write_new(&base, &now.text)?;
        let message = format!(
            "{} changed on disk since the edit began: not saved over it",
            file.rel
        );
        let hint = format!(
            "the edit is kept in {copy_rel} (`diff {} {copy_rel}` compares them); `git swarm edit {}` reopens it to save it over the new version, or delete it to start again from the file",
            file.rel, args.id
        );
        return Err(Error::usage(message, hint).into());
    }
    if text == now.text {
        discard(&copy, &base);
        writeln!(ui.out, "no change to {}", file.rel)?;
        return Ok(ExitCode::SUCCESS);
    }
    let problems = git_swarm::directive::lifecycle::problems(&args.id, &text, &copy_rel);
    if !problems.is_empty() {
        ui.problems(&problems);
        let what = format!("the edited directive has {} problem(s)", problems.len());
        return Err(unchanged(what).into());
    }
    let path = git_swarm::directive::lifecycle::replace(&store, &args.id, &text)?;
    discard(&copy, &base);
    writeln!(ui.out, "updated {}", store.rel(&path))?;
    Ok(ExitCode::SUCCESS)
}

/// Removes the kept edit and its base; one left behind is only reopened.
fn discard(copy: &Path, base: &Path) {
    let _ = std::fs::remove_file(copy);
    let _ = std::fs::remove_file(base);
}

/// Reads a file of `.git/swarm/local/edit/` as UTF-8 text, never through a link.
fn read_text(path: &Path, rel: &str) -> Result<String, Error> {
    let bytes = git_swarm::safe_fs::read(path, git_swarm::directive::limits::FILE_MAX)
        .map_err(|e| Error::io(path, e))?;
    String::from_utf8(bytes).map_err(|_| Error::Usage {
        message: format!("{rel} is not valid UTF-8 (save it as UTF-8)"),
        hint: None,
    })
}

/// The editor git would use: `GIT_EDITOR`, `core.editor`, `VISUAL` (not on
/// a dumb terminal), `EDITOR`, else `vi`; like git, run through `sh -c` so
/// that it may carry arguments.
fn editor(repo: &Repo) -> Result<String, Error> {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
    let dumb = std::env::var("TERM").map_or(true, |t| t == "dumb");
    let chosen = var("GIT_EDITOR")
        .or_else(|| {
            repo.config_values("core.editor")
                .pop()
                .filter(|v| !v.trim().is_empty())
        })
        .or_else(|| var("VISUAL").filter(|_| !dumb))
        .or_else(|| var("EDITOR"));
    match chosen {
        Some(e) => Ok(e),
        None if dumb => Err(Error::usage(
            "no editor is set, and the terminal is dumb",
            "set GIT_EDITOR, core.editor, VISUAL or EDITOR",
        )),
        None => Ok("vi".into()),
    }
}

/// Writes `path` in `.git/swarm/local/edit/` (checked to be a folder of its
/// own) afresh: whatever stands there is replaced, never followed.
fn write_new(path: &Path, text: &str) -> Result<(), Error> {
    if std::fs::symlink_metadata(path).is_ok() {
        std::fs::remove_file(path).map_err(|e| Error::io(path, e))?;
    }
    let mut f = git_swarm::safe_fs::open(
        path,
        std::fs::OpenOptions::new().write(true).create_new(true),
    )
    .map_err(|e| Error::io(path, e))?;
    f.write_all(text.as_bytes()).map_err(|e| Error::io(path, e))
}
