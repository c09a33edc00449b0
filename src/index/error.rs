//! What can go wrong reading or writing the index and the caches beside it.
//! A damaged index is rebuilt, not reported: most of these reach the user
//! only when a rebuild fails too, or from `index refresh`.

/// An index error; it becomes [`crate::Error::Index`].
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("the index's {what} are damaged (their checksum does not match)")]
    Damaged { what: &'static str },

    #[error("the index's {what} lies past its end")]
    Truncated { what: &'static str },

    #[error("the index's {what} do not decode: {source}")]
    Decode {
        what: &'static str,
        #[source]
        source: postcard::Error,
    },

    #[error("{source}")]
    Encode {
        #[source]
        source: postcard::Error,
    },

    #[error("{source} (the index's corpus)")]
    Corpus {
        #[source]
        source: crate::retrieve::DamagedCorpus,
    },

    #[error("a thread reading {what} panicked")]
    WorkerPanicked { what: &'static str },

    #[error("a thread stat'ing the files in {} stopped", folder.display())]
    StatStopped { folder: std::path::PathBuf },

    #[error("encoding the directives of the checked snapshot: {source}")]
    EncodeSnapshot {
        #[source]
        source: postcard::Error,
    },

    #[error("the cached directives of the checked snapshot: {source}")]
    DecodeSnapshot {
        #[source]
        source: postcard::Error,
    },

    #[error("directive `{id}` changed while it was being read; run the command again")]
    DirectiveChanged { id: String },
}
