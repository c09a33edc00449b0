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

/// Writes `body` [`sealed`] to `path` atomically (a temporary file renamed
/// into place: a reader sees the old file or the new one, never half of
/// one), then keeps the `keep` most recently written files of its folder.
pub(crate) fn write_sealed(
    path: &std::path::Path,
    magic: &[u8],
    body: &[u8],
    keep: usize,
) -> crate::error::Result<()> {
    use std::io::Write as _;
    let dir = path.parent().unwrap_or(std::path::Path::new("."));
    let io = |p: &std::path::Path, e| crate::error::Error::io(p, e);
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| io(dir, e))?;
    tmp.write_all(&sealed(magic, body))
        .map_err(|e| io(tmp.path(), e))?;
    tmp.persist(path).map_err(|e| io(path, e.error))?;
    prune(dir, keep);
    Ok(())
}

/// Keeps the `keep` most recently written files of `dir`.
fn prune(dir: &std::path::Path, keep: usize) {
    let Ok(listing) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<(std::time::SystemTime, std::path::PathBuf)> = listing
        .filter_map(|e| e.ok())
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    if files.len() <= keep {
        return;
    }
    files.sort();
    for (_, path) in &files[..files.len() - keep] {
        let _ = std::fs::remove_file(path);
    }
}
