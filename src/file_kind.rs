//! What a path under `.swarm/` is when it is not a regular file, and the
//! payloads of the [`io::Error`]s with which [`crate::safe_fs`] refuses one.
//! Apart from `safe_fs` so that [`crate::error`], which turns those refusals
//! into messages, need not depend on the module that returns its errors.

use std::fmt;
use std::fs::Metadata;
use std::io;

/// What a path under `.swarm/` is, when it is not a regular file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FileKind {
    Symlink,
    Folder,
    Fifo,
    Socket,
    Device,
    /// A regular file where a folder was expected.
    File,
    /// A gitlink (mode 160000) in a tree or the index: a commit of another
    /// repository, no file at all.
    Submodule,
    Other,
}

impl FileKind {
    /// The kind of `meta` (from `symlink_metadata` or an open descriptor);
    /// `None` for a regular file.
    pub fn of(meta: &Metadata) -> Option<FileKind> {
        let t = meta.file_type();
        if t.is_file() {
            return None;
        }
        Some(if t.is_symlink() {
            FileKind::Symlink
        } else if t.is_dir() {
            FileKind::Folder
        } else {
            special(&t)
        })
    }
}

#[cfg(unix)]
fn special(t: &std::fs::FileType) -> FileKind {
    use std::os::unix::fs::FileTypeExt;
    if t.is_fifo() {
        FileKind::Fifo
    } else if t.is_socket() {
        FileKind::Socket
    } else if t.is_block_device() || t.is_char_device() {
        FileKind::Device
    } else {
        FileKind::Other
    }
}

#[cfg(not(unix))]
fn special(_: &std::fs::FileType) -> FileKind {
    FileKind::Other
}

/// What the file is, for messages: "a symbolic link".
impl fmt::Display for FileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FileKind::Symlink => "a symbolic link",
            FileKind::Folder => "a folder",
            FileKind::Fifo => "a FIFO (named pipe)",
            FileKind::Socket => "a socket",
            FileKind::Device => "a device",
            FileKind::File => "a regular file",
            FileKind::Submodule => "a submodule (gitlink)",
            FileKind::Other => "not a regular file",
        })
    }
}

/// The payload of the [`io::Error`] for a path that is not a regular file.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("{0}, not a regular file: git-swarm does not follow, read or write through it")]
pub struct NotRegular(pub FileKind);

/// The payload of the [`io::Error`] for a file over the read limit.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("file is over the {0}-byte limit")]
pub struct TooLarge(pub u64);

/// The kind of file an error from `safe_fs` refused, if that is what it says.
pub fn not_regular(e: &io::Error) -> Option<FileKind> {
    e.get_ref()?.downcast_ref::<NotRegular>().map(|n| n.0)
}

/// The limit an error from `safe_fs` says a file is over, if that is what it says.
pub fn over_limit(e: &io::Error) -> Option<u64> {
    e.get_ref()?.downcast_ref::<TooLarge>().map(|t| t.0)
}
