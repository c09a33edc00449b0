//! An index or cache file's bytes, and reading values out of them.

use std::fs::File;

use serde::Deserialize;

use super::Error;
use crate::error::Result;

/// An index or cache file's bytes: mapped, or read when it cannot be mapped.
pub(crate) enum Map {
    Mapped(memmap2::Mmap),
    Read(Vec<u8>),
}

impl std::fmt::Debug for Map {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Map({} bytes)", self.bytes().len())
    }
}

impl AsRef<[u8]> for Map {
    fn as_ref(&self) -> &[u8] {
        self.bytes()
    }
}

impl Map {
    pub(crate) fn open(file: &File) -> Option<Map> {
        // SAFETY: the index (and each cache) is replaced by rename, never modified in place,
        // so the mapped file does not change under the mapping. (Another
        // program truncating it would, as for any mapped file, end the
        // process with SIGBUS; git maps its pack files on the same terms.)
        match unsafe { memmap2::Mmap::map(file) } {
            Ok(m) => Some(Map::Mapped(m)),
            Err(_) => {
                let mut bytes = Vec::new();
                std::io::Read::read_to_end(&mut &*file, &mut bytes).ok()?;
                Some(Map::Read(bytes))
            }
        }
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            Map::Mapped(m) => m,
            Map::Read(v) => v,
        }
    }
}

/// The `len` bytes at `at` of an index file.
pub fn bytes_at<'a>(map: &'a Map, at: u64, len: u64, what: &'static str) -> Result<&'a [u8]> {
    let bytes = map.bytes();
    usize::try_from(at)
        .ok()
        .zip(usize::try_from(len).ok())
        .and_then(|(at, len)| bytes.get(at..at.checked_add(len)?))
        .ok_or_else(|| Error::Truncated { what }.into())
}

pub fn decode<'a, T: Deserialize<'a>>(bytes: &'a [u8], what: &'static str) -> Result<T> {
    postcard::from_bytes(bytes).map_err(|source| Error::Decode { what, source }.into())
}
