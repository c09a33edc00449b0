//! Cache files beside the index (the check cache, the snapshot directives):
//! a magic, a checksum of the body, the body. A file whose checksum does
//! not match is a cache miss, never decoded.

use super::mapped::Map;

/// A cache file's bytes: `magic`, the xxh3-64 of `body` (u64 LE), `body`.
pub(crate) fn sealed(magic: &[u8], body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(magic.len() + 8 + body.len());
    out.extend_from_slice(magic);
    out.extend_from_slice(&xxhash_rust::xxh3::xxh3_64(body).to_le_bytes());
    out.extend_from_slice(body);
    out
}

/// The body of a [`sealed`] cache file; `None` if it has another magic or
/// its bytes were damaged.
fn unsealed<'a>(magic: &[u8], bytes: &'a [u8]) -> Option<&'a [u8]> {
    let rest = bytes.strip_prefix(magic)?;
    let (sum, body) = rest.split_at_checked(8)?;
    (u64::from_le_bytes(sum.try_into().ok()?) == xxhash_rust::xxh3::xxh3_64(body)).then_some(body)
}

/// A [`sealed`] cache file, mapped, whose magic and checksum were found right.
pub(crate) struct SealedFile {
    map: Map,
    magic_len: usize,
}

impl SealedFile {
    /// The file at `path` when it is a regular file (not a FIFO, device or
    /// link: those are cache misses) with this magic and an intact body.
    pub(crate) fn open(path: &std::path::Path, magic: &[u8]) -> Option<SealedFile> {
        let file = crate::safe_fs::open_read(path).ok()?;
        let map = Map::open(&file)?;
        unsealed(magic, map.bytes())?;
        Some(SealedFile {
            map,
            magic_len: magic.len(),
        })
    }

    /// The body, after the magic and the checksum.
    pub(crate) fn body(&self) -> &[u8] {
        &self.map.bytes()[self.magic_len + 8..]
    }
}
