//! Changing a directive's file through commands rather than by hand:
//! retiring it and replacing its text after an edit.
//!
//! A directive file is what a human wrote and reviewed, so a change keeps
//! the rest of it byte for byte (retiring rewrites only the `status` value),
//! passes the same gate as `add` and `validate` before it is written, and
//! is written atomically: a reader sees the old file or the new one.

use std::path::{Path, PathBuf};

use toml::de::DeTable;

use crate::directive::Status;
use crate::error::{Error, Result};
use crate::event::Body;
use crate::event::Event;
use crate::problem::{Problem, Severity};
use crate::store::Store;

/// A directive's file, read.
#[derive(Debug, Clone)]
pub struct DirectiveFile {
    pub path: PathBuf,
    /// The path shown to people: `.swarm/directives/<id>.toml`.
    pub rel: String,
    pub text: String,
}

/// Reads the file of directive `id` from `directives/`. An id with no file
/// there is [`Error::UnknownDirective`] (a quarantined one is named as such);
/// a file that is not a plain file is refused, never followed.
pub fn read(store: &Store, id: &str) -> Result<DirectiveFile> {
    if !crate::directive::is_valid_id(id) {
        return Err(Error::UnknownDirective { id: id.to_owned() });
    }
    let dir = store.directives_dir();
    // Read (and later replaced) through a linked folder, the file would be
    // one outside the repository.
    refuse_linked(store, &dir)?;
    let path = dir.join(format!("{id}.toml"));
    let rel = store.rel(&path);
    let unreadable = |code: &str, message: String, hint: &str| {
        Error::Invalid(vec![
            Problem::error(&rel, code, message).at(1, 1).with_hint(hint),
        ])
    };
    let replace_it = "a directive is a small, regular TOML file; replace this one";
    let bytes = match crate::safe_fs::read(&path, crate::directive::limits::FILE_MAX) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let quarantined = store.quarantine_dir().join(format!("{id}.toml"));
            if crate::safe_fs::not_a_folder(&store.quarantine_dir()).is_none()
                && std::fs::symlink_metadata(&quarantined).is_ok_and(|m| m.is_file())
            {
                return Err(Error::usage(
                    format!("`{id}` is quarantined, not a directive"),
                    format!(
                        "fix .swarm/quarantine/{id}.toml by hand (the reason is in it), or delete it"
                    ),
                ));
            }
            return Err(Error::UnknownDirective { id: id.to_owned() });
        }
        Err(e) => {
            return Err(match crate::safe_fs::not_regular(&e) {
                Some(kind) => unreadable(
                    crate::event::NOT_REGULAR,
                    format!("{kind}, not a regular file: not read"),
                    replace_it,
                ),
                None if crate::safe_fs::over_limit(&e).is_some() => {
                    unreadable("unreadable", e.to_string(), replace_it)
                }
                None => Error::io(&path, e),
            });
        }
    };
    let text = String::from_utf8(bytes).map_err(|_| {
        let hint = "TOML files are UTF-8; re-save the file as UTF-8";
        unreadable("not_utf8", "file is not valid UTF-8".into(), hint)
    })?;
    Ok(DirectiveFile { path, rel, text })
}

/// The problems that keep `text` from being the file of directive `id`:
/// what `validate` reports for a file of `directives/` (syntax, types,
/// shape limits, predicates, the gate, an id that is not the file's),
/// errors only, placed in `shown_as` (the path people are told about).
pub fn problems(id: &str, text: &str, shown_as: &str) -> Vec<Problem> {
    let entry =
        crate::index::entry_from_bytes(text.as_bytes(), shown_as, &format!("{id}.toml"), false);
    entry
        .problems
        .into_iter()
        .filter(|p| p.severity == Severity::Error)
        .collect()
}

/// Writes `text` as the file of directive `id` if it passes [`problems`];
/// otherwise changes nothing and returns them as [`Error::Invalid`].
pub fn replace(store: &Store, id: &str, text: &str) -> Result<PathBuf> {
    let dir = store.directives_dir();
    let path = dir.join(format!("{id}.toml"));
    let found = problems(id, text, &store.rel(&path));
    if !found.is_empty() {
        return Err(Error::Invalid(found));
    }
    refuse_linked(store, &dir)?;
    crate::safe_fs::replace(&path, text.as_bytes())?;
    Ok(path)
}

/// Fails when `dir`, or a folder on the way to it from `.swarm/` (itself
/// included), is a link or not a folder: what is read or written there
/// would be outside the repository.
fn refuse_linked(store: &Store, dir: &Path) -> Result<()> {
    match crate::safe_fs::linked_folder(&store.swarm_dir, dir) {
        Some((path, kind)) => Err(Error::LinkedFolder { path, kind }),
        None => Ok(()),
    }
}

/// What [`retire`] did.
#[derive(Debug)]
pub struct Retired {
    pub path: PathBuf,
    /// The `retired` event recorded.
    pub event: Event,
}

/// Sets `status = "retired"` in directive `id`'s file, leaving the rest of
/// it as written, and returns the `retired` event to record (`reason`).
/// Refuses a directive that is retired already, and one whose file does
/// not pass `validate` (it would be written back as broken as it is).
pub fn retire(store: &Store, id: &str, reason: &str) -> Result<Retired> {
    let file = read(store, id)?;
    let found = problems(id, &file.text, &file.rel);
    if !found.is_empty() {
        return Err(Error::Invalid(found));
    }
    let loaded = crate::directive::parse_directive_toml(&file.text, &file.rel);
    if loaded
        .directive
        .as_ref()
        .is_some_and(|d| d.status == Status::Retired)
    {
        return Err(Error::usage(
            format!("`{id}` is retired already"),
            format!(
                "`git swarm explain {id}` shows its history; set `status = \"active\"` with `git swarm edit {id}` to bring it back"
            ),
        ));
    }
    let text = with_status(&file.text, Status::Retired.as_str())
        .expect("a file that passed validation parses");
    let event = store
        .event(Body::Retired {
            reason: reason.to_owned(),
        })
        .about(id);
    // The log must be able to take the event before the file changes.
    store.check_appendable(&event)?;
    let path = replace(store, id, &text)?;
    Ok(Retired { path, event })
}

/// `text` with the top-level `status` set to `value`: the old value
/// replaced where it stands, or a `status` line added after the `id` line
/// (at the top when there is none). `None` if `text` does not parse.
pub fn with_status(text: &str, value: &str) -> Option<String> {
    let table = DeTable::parse(text).ok()?;
    let span = |key: &str| {
        let (_, v) = table.get_ref().iter().find(|(k, _)| k.get_ref() == key)?;
        Some(v.span())
    };
    let quoted = format!("\"{value}\"");
    let mut out = text.to_owned();
    if let Some(span) = span("status") {
        out.replace_range(span, &quoted);
        return Some(out);
    }
    let after_id = span("id").map_or(0, |id| {
        text[id.end..]
            .find('\n')
            .map_or(text.len(), |n| id.end + n + 1)
    });
    let mut line = format!("status = {quoted}\n");
    if after_id == text.len() && !text.is_empty() && !text.ends_with('\n') {
        line.insert(0, '\n');
    }
    out.insert_str(after_id, &line);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_is_replaced_in_place_or_added_after_the_id() {
        let text = "# kept\nid = \"x\"\nstatus = \"active\" # a comment\nlesson = \"y\"\n";
        assert_eq!(
            with_status(text, "retired").expect("parses"),
            "# kept\nid = \"x\"\nstatus = \"retired\" # a comment\nlesson = \"y\"\n"
        );
        let text = "id = 'x'   # the id\nlesson = \"y\"\n";
        assert_eq!(
            with_status(text, "retired").expect("parses"),
            "id = 'x'   # the id\nstatus = \"retired\"\nlesson = \"y\"\n"
        );
        assert_eq!(
            with_status("lesson = \"y\"", "retired").expect("parses"),
            "status = \"retired\"\nlesson = \"y\""
        );
        assert_eq!(
            with_status("id = \"x\"", "retired").expect("parses"),
            "id = \"x\"\nstatus = \"retired\"\n"
        );
        assert!(with_status("id = ", "retired").is_none());
    }
}
