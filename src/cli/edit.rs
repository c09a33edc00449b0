//! `git swarm edit`.

use std::io::Write;
use std::path::{Path, PathBuf};
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
    let file = git_swarm::lifecycle::read(&store, &args.id)?;
    let copy = store
        .local_dir()
        .join("edit")
        .join(format!("{}.toml", args.id));
    let copy_rel = store.rel(&copy);
    // `.swarm/local` can be committed as a link: the copy would be written,
    // read back and removed wherever it points.
    let copy_dir = copy.parent().map(Path::to_path_buf).unwrap_or_default();
    if let Some((path, kind)) = git_swarm::safe_fs::linked_folder(&store.swarm_dir, &copy_dir) {
        return Err(Error::LinkedFolder { path, kind }.into());
    }
    let kept = std::fs::symlink_metadata(&copy).is_ok_and(|m| m.is_file());
    if kept {
        ui.note(&format!(
            "reopening the edit kept in {copy_rel} (delete it to start again from {})",
            file.rel
        ));
    } else {
        write_copy(&store.swarm_dir, &copy, &file.text)?;
    }
    let editor = editor(&repo)?;
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$@\""))
        .arg(&editor)
        .arg(&copy)
        .status()
        .map_err(|e| Error::Usage {
            message: format!("the editor `{editor}` could not be started: {e}"),
            hint: Some(
                "set GIT_EDITOR, core.editor, VISUAL or EDITOR to an editor that runs".into(),
            ),
        })?;
    if !status.success() {
        return Err(Error::Usage {
            message: format!(
                "the editor `{editor}` failed ({status}): {} is unchanged",
                file.rel
            ),
            hint: Some(format!(
                "the edit is kept in {copy_rel}; `git swarm edit {}` reopens it",
                args.id
            )),
        }
        .into());
    }
    let kept_hint = format!(
        "the edit is kept in {copy_rel}; `git swarm edit {}` reopens it",
        args.id
    );
    let text = git_swarm::safe_fs::read(&copy, git_swarm::directive::limits::FILE_MAX)
        .map_err(|e| match Error::io(&copy, e) {
            Error::Usage { message, .. } => Error::Usage {
                message: format!("{message}: {} is unchanged", file.rel),
                hint: Some(kept_hint.clone()),
            },
            other => other,
        })
        .and_then(|b| {
            String::from_utf8(b).map_err(|_| Error::Usage {
                message: format!("{copy_rel} is not valid UTF-8: {} is unchanged", file.rel),
                hint: Some("save the file as UTF-8".into()),
            })
        })?;
    if text == file.text {
        let _ = std::fs::remove_file(&copy);
        writeln!(ui.out, "no change to {}", file.rel)?;
        return Ok(ExitCode::SUCCESS);
    }
    let problems = git_swarm::lifecycle::problems(&args.id, &text, &copy_rel);
    if !problems.is_empty() {
        for p in &problems {
            ui.problem(p);
        }
        return Err(Error::Usage {
            message: format!(
                "the edited directive has {} problem(s): {} is unchanged",
                problems.len(),
                file.rel
            ),
            hint: Some(format!(
                "the edit is kept in {copy_rel}; `git swarm edit {}` reopens it",
                args.id
            )),
        }
        .into());
    }
    let path = git_swarm::lifecycle::replace(&store, &args.id, &text)?;
    let _ = std::fs::remove_file(&copy);
    writeln!(ui.out, "updated {}", store.rel(&path))?;
    Ok(ExitCode::SUCCESS)
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
        None if dumb => Err(Error::Usage {
            message: "no editor is set, and the terminal is dumb".into(),
            hint: Some("set GIT_EDITOR, core.editor, VISUAL or EDITOR".into()),
        }),
        None => Ok("vi".into()),
    }
}

/// Writes the copy the editor opens, in `.swarm/local/edit/` (under
/// `swarm`, the `.swarm/` folder), never through a link.
fn write_copy(swarm: &Path, copy: &Path, text: &str) -> Result<(), Error> {
    let dir: PathBuf = copy.parent().map(Path::to_path_buf).unwrap_or_default();
    git_swarm::safe_fs::create_dir_all(swarm, &dir)?;
    // Whatever stands at the copy's path is not a kept edit: replaced, not followed.
    if std::fs::symlink_metadata(copy).is_ok() {
        std::fs::remove_file(copy).map_err(|e| Error::io(copy, e))?;
    }
    let mut f = git_swarm::safe_fs::open(
        copy,
        std::fs::OpenOptions::new().write(true).create_new(true),
    )
    .map_err(|e| Error::io(copy, e))?;
    f.write_all(text.as_bytes()).map_err(|e| Error::io(copy, e))
}
