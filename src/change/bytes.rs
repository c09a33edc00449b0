//! The bytes of one side of a change, as git would store them: a blob, or
//! a working-tree file with its line endings converted as `core.autocrlf`
//! says.

use std::path::Path;

use gix::bstr::ByteSlice;

use super::Content;
use crate::error::{Error, Result};

/// Does `core.autocrlf` (true or input) make git store text files with LF
/// line endings? Then a working-tree file is compared after CRLF → LF, as
/// `git diff` does. (Per-path `text`/`eol` attributes are not applied.)
pub fn converts_crlf(repo: &gix::Repository) -> bool {
    repo.config_snapshot()
        .string("core.autocrlf")
        .is_some_and(|v| {
            matches!(
                v.to_str_lossy().to_ascii_lowercase().as_str(),
                "true" | "input" | "yes" | "on" | "1"
            )
        })
}

/// A working-tree file's bytes as git would store them (see [`converts_crlf`]).
pub fn to_git(bytes: Vec<u8>, convert: bool) -> Vec<u8> {
    if !convert || super::is_binary(&bytes) || !bytes.contains(&b'\r') {
        return bytes;
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n') {
            i += 1;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

/// The bytes of one side of a change (`None` when there are none to read:
/// absent, a submodule, a file that vanished).
pub fn content(repo: &gix::Repository, content: &Content) -> Result<Option<Vec<u8>>> {
    match content {
        Content::Absent | Content::Gitlink(_) => Ok(None),
        Content::Blob(id) => {
            let mut blob = repo
                .find_blob(*id)
                .map_err(|e| Error::git(format!("reading blob {id}"), e))?;
            // Taken, not copied: the handle would only return the buffer to
            // the repository's free list.
            Ok(Some(blob.take_data()))
        }
        Content::File(path) => file_content(path),
    }
}

/// A working-tree file's content as git would store it (before line-ending
/// conversion): a symlink's target, a file's bytes; `None` for anything else
/// or nothing.
pub fn file_content(path: &Path) -> Result<Option<Vec<u8>>> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            let target = std::fs::read_link(path).map_err(|e| Error::io(path, e))?;
            Ok(Some(target.into_os_string().into_encoded_bytes()))
        }
        Ok(m) if m.is_file() => std::fs::read(path)
            .map(Some)
            .map_err(|e| Error::io(path, e)),
        Ok(_) => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(path, e)),
    }
}
