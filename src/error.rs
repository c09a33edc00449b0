//! The library's error type. A failed check or a blocked gate is a result,
//! not an error; errors are for what stopped a command from doing its work.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::problem::Problem;

/// The error of a lower layer (gix, I/O) kept as the source of ours.
pub type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("not a git repository (or any parent up to the root): {}", path.display())]
    NotARepository {
        path: PathBuf,
        #[source]
        source: Box<gix::Error>,
    },

    #[error("{} is a bare repository; git-swarm needs a work tree", path.display())]
    BareRepository { path: PathBuf },

    #[error("no .swarm/ in {}", root.display())]
    NotInitialised { root: PathBuf },

    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A path under `.swarm/` that is not a regular file (a symlink, FIFO,
    /// device…): never followed, read or written through.
    #[error("{} is {kind}, not a regular file: git-swarm does not follow, read or write through it", path.display())]
    NotRegular {
        path: PathBuf,
        kind: crate::file_kind::FileKind,
    },

    /// A folder of `.swarm/` (or `.swarm/` itself) that is a symlink or not
    /// a folder: nothing is written through it.
    #[error("{} is {kind}, not a folder of its own: git-swarm does not read or write through it", path.display())]
    LinkedFolder {
        path: PathBuf,
        kind: crate::file_kind::FileKind,
    },

    #[error("timed out after {:.1} s waiting for the lock on {}", waited.as_secs_f64(), path.display())]
    LockTimeout { path: PathBuf, waited: Duration },

    /// A command that must run alone found another run of it holding its
    /// lock: refused at once, as git refuses when its index is locked,
    /// rather than waiting on a run that may take minutes.
    #[error("another `git swarm {command}` is running{}", pid.map(|p| format!(" (pid {p})")).unwrap_or_default())]
    Running {
        command: &'static str,
        pid: Option<u32>,
        /// The lock file, relative to the repository.
        lock: String,
    },

    #[error("directive `{id}` already exists at {path}")]
    AlreadyExists { id: String, path: String },

    #[error("no directive or quarantined entry with id `{id}`")]
    UnknownDirective { id: String },

    #[error("{message}")]
    InvalidEvent { message: String },

    /// Input that cannot be used; the problems say where and why.
    #[error("{}", .0.first().map(ToString::to_string).unwrap_or_default())]
    Invalid(Vec<Problem>),

    #[error("{message}")]
    Usage {
        message: String,
        hint: Option<String>,
    },

    /// Bad usage or input that a lower layer refused: `message`, a colon,
    /// then what it said.
    #[error("{message}: {source}")]
    Refused {
        message: String,
        hint: Option<String>,
        #[source]
        source: Cause,
    },

    #[error("index: {0}")]
    Index(#[from] crate::index::Error),

    /// git data could not be read (a bad revision, a missing object…).
    #[error("{context}: {source}")]
    Git {
        context: String,
        #[source]
        source: Cause,
    },
}

impl Error {
    /// Wraps a gix error with what was being done.
    pub fn git(context: impl Into<String>, source: impl Into<Cause>) -> Error {
        Error::Git {
            context: context.into(),
            source: source.into(),
        }
    }

    /// Bad usage or input, with what to do about it.
    pub fn usage(message: impl Into<String>, hint: impl Into<String>) -> Error {
        Error::Usage {
            message: message.into(),
            hint: Some(hint.into()),
        }
    }

    /// Bad usage or input that `source` refused, with what to do about it.
    pub fn refused(
        message: impl Into<String>,
        hint: Option<String>,
        source: impl Into<Cause>,
    ) -> Error {
        Error::Refused {
            message: message.into(),
            hint,
            source: source.into(),
        }
    }

    /// An I/O error on `path`; a file [`crate::safe_fs`] refused to open
    /// becomes [`Error::NotRegular`], one over its read limit bad input.
    pub fn io(path: &Path, source: std::io::Error) -> Error {
        if let Some(kind) = crate::file_kind::not_regular(&source) {
            return Error::NotRegular {
                path: path.to_path_buf(),
                kind,
            };
        }
        if let Some(limit) = crate::file_kind::over_limit(&source) {
            return Error::usage(
                format!("{}: {}", path.display(), crate::file_kind::TooLarge(limit)),
                "a file git-swarm reads under .swarm/ is small: cut it down",
            );
        }
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// Does this error come from bad usage or bad input (exit 2), rather
    /// than from the environment (exit 3: I/O, a lock, the index, git data)?
    pub fn is_user_error(&self) -> bool {
        !matches!(
            self,
            Error::Io { .. }
                | Error::LockTimeout { .. }
                | Error::Running { .. }
                | Error::Index(_)
                | Error::Git { .. }
        )
    }

    /// What to do about it, when there is something to say.
    pub fn hint(&self) -> Option<String> {
        match self {
            Error::NotARepository { .. } => Some("run git swarm inside a git repository, or create one with `git init`".into()),
            Error::NotInitialised { .. } => Some("run `git swarm init` first".into()),
            Error::AlreadyExists { .. } => Some("choose another `--id`, or edit the existing file and commit it".into()),
            Error::UnknownDirective { .. } => Some("`git swarm list` shows the ids (add `--quarantined` for quarantined ones)".into()),
            Error::LockTimeout { .. } => Some("another git-swarm process holds the lock; retry, or raise `events.lock_timeout_ms`".into()),
            Error::Running { command, lock, .. } => Some(format!("wait for it to finish, then run `git swarm {command}` again; its lock ({lock}) is released when it ends, so there is nothing to remove")),
            Error::Invalid(problems) => problems.first().and_then(|p| p.hint.clone()),
            Error::Usage { hint, .. } | Error::Refused { hint, .. } => hint.clone(),
            Error::NotRegular { .. } => Some("replace it with a regular file, or remove it: a link committed under .swarm/ could point anywhere".into()),
            Error::LinkedFolder { .. } => Some("replace it with a real folder (`rm` the link, then `mkdir`): a link committed under .swarm/ could point anywhere".into()),
            Error::Index(_) => Some("`git swarm index rebuild` recreates the index from .swarm/".into()),
            Error::Git { .. } => Some("check the revision names (`git rev-parse` them) and that the repository is intact (`git fsck`)".into()),
            _ => None,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use std::error::Error as _;
    use std::io;

    use super::Error;

    #[test]
    fn the_cause_is_kept_and_the_message_is_unchanged() {
        let git = Error::git("reading HEAD", io::Error::other("object missing"));
        assert_eq!(git.to_string(), "reading HEAD: object missing");
        let source = git.source().expect("a source");
        assert_eq!(
            source.downcast_ref::<io::Error>().map(io::Error::kind),
            Some(io::ErrorKind::Other)
        );
        assert!(!git.is_user_error());

        let refused = Error::refused(
            "the work tree /x cannot be read",
            Some("fix it".into()),
            io::Error::from(io::ErrorKind::NotFound),
        );
        assert_eq!(
            refused.to_string(),
            format!(
                "the work tree /x cannot be read: {}",
                io::Error::from(io::ErrorKind::NotFound)
            )
        );
        assert!(refused.source().is_some());
        assert!(refused.is_user_error());
        assert_eq!(refused.hint().as_deref(), Some("fix it"));
    }
}
