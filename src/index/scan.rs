//! Stamping the files the index depends on.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::contents::{Listing, Names, Stamp};
use crate::error::{Error, Result};
use crate::event::is_month_file;
use crate::store::Store;

/// The files the index is built from, with their stamps.
#[derive(Debug, Default)]
pub struct Scan {
    pub(super) config: Option<Stamp>,
    /// The directive files, as the threads that stat them left them.
    directive_chunks: Vec<Stamps>,
    /// The names `directive_chunks` refer to, each followed by a newline.
    names: Names,
    directives: std::cell::OnceCell<Vec<(String, Stamp)>>,
    pub(super) quarantine: Vec<(String, Stamp)>,
    /// The wrapping sums of the [`file_hash`]es of `directives` and `quarantine`.
    directives_sum: u64,
    quarantine_sum: u64,
    pub(super) events: Vec<(String, Stamp)>,
    /// The stamp of the directives folder, as it was before it was listed.
    pub(super) directives_dir: Option<Stamp>,
    /// The directive and quarantine files were not stat'ed: they are as
    /// the index last saw them.
    pub(super) unstamped: bool,
    /// [`crate::index::hive::state_key`]: the hive directives among the entries.
    pub(super) hive_key: u64,
}

impl Scan {
    /// The directive files, stamped, in name order (made on first use).
    pub(super) fn directives(&self) -> &[(String, Stamp)] {
        self.directives
            .get_or_init(|| named(self.names.as_str(), &self.directive_chunks))
    }

    pub(super) fn directive_count(&self) -> usize {
        self.directive_chunks.iter().map(Vec::len).sum()
    }

    /// Fingerprint of the directive and quarantine files alone: their
    /// counts and the sums of their [`file_hash`]es (a sum, so that each
    /// thread stat'ing the files adds its share).
    pub fn entries_fingerprint(&self) -> u64 {
        let mut fields = [0u8; 40];
        fields[..8].copy_from_slice(&(self.directive_count() as u64).to_le_bytes());
        fields[8..16].copy_from_slice(&self.directives_sum.to_le_bytes());
        fields[16..24].copy_from_slice(&(self.quarantine.len() as u64).to_le_bytes());
        fields[24..32].copy_from_slice(&self.quarantine_sum.to_le_bytes());
        fields[32..].copy_from_slice(&self.hive_key.to_le_bytes());
        xxhash_rust::xxh3::xxh3_64(&fields)
    }

    pub fn fingerprint(&self) -> u64 {
        self.fingerprint_with(self.entries_fingerprint())
    }

    /// [`Scan::fingerprint`] with the directive and quarantine files'
    /// fingerprint taken as `entries` (as an index last saw them).
    pub fn fingerprint_with(&self, entries: u64) -> u64 {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        let mut add = |tag: &str, name: &str, s: &Stamp| {
            h.update(tag.as_bytes());
            h.update(name.as_bytes());
            h.update(&[0]);
            h.update(&s.len.to_le_bytes());
            h.update(&s.mtime_ns.to_le_bytes());
            h.update(&s.ctime_ns.to_le_bytes());
            h.update(&s.ino.to_le_bytes());
        };
        if let Some(s) = &self.config {
            add("c", "config.toml", s);
        }
        for (n, s) in &self.events {
            add("e", n, s);
        }
        h.update(b"entries");
        h.update(&entries.to_le_bytes());
        h.digest()
    }
}

/// Stats every file the index depends on; with the directives folder's
/// last [`Listing`], lists that folder only if it changed.
pub(super) fn scan(store: &Store, listing: Option<Listing>) -> Result<Scan> {
    scan_while(store, listing, || {})
}

/// [`scan`], while this thread runs `meanwhile`. A large directives folder
/// is stat'ed on helper threads, which this thread does not join, to keep
/// what `meanwhile` decoded in its caches; a small one is stat'ed here,
/// after `meanwhile` (docs/performance.md).
pub(super) fn scan_while(
    store: &Store,
    listing: Option<Listing>,
    meanwhile: impl FnOnce(),
) -> Result<Scan> {
    let swarm = &store.swarm_dir;
    let dir = swarm.join("directives");
    // A linked folder is not listed (the store reports it): as if missing.
    let dir_stamp = lstat(&dir)?.filter(|m| m.is_dir()).map(|m| Stamp::of(&m));
    // The stamps refer to the names by place: none is copied unless directives changed.
    let text = match listing {
        Some(l) if Some(l.dir) == dir_stamp => l.names,
        _ => Names::Owned(joined(
            list_dir(&dir, |n| n.ends_with(".toml"))?
                .iter()
                .map(String::as_str),
        )),
    };
    let stamper = Stamper::new(dir, text.as_str())?;
    let others = std::thread::scope(|s| {
        let helpers: Vec<_> = (0..stamper.helpers())
            .map(|_| s.spawn(|| stamper.work()))
            .collect();
        meanwhile();
        let others = (|| -> Result<_> {
            Ok((
                config_stamp(swarm)?,
                scan_dir(&swarm.join("quarantine"), |n| n.ends_with(".toml"))?,
                scan_log(store)?,
            ))
        })();
        if helpers.is_empty() {
            stamper.work();
        }
        for h in helpers {
            // A helper that panicked leaves chunks unrecorded: `finish` reports it.
            let _ = h.join();
        }
        others
    });
    let (config, (quarantine, quarantine_sum), events) = others?;
    let (directive_chunks, directives_sum) = stamper.finish()?;
    Ok(Scan {
        config,
        names: text,
        directive_chunks,
        directives: std::cell::OnceCell::new(),
        quarantine,
        directives_sum,
        quarantine_sum,
        events,
        directives_dir: dir_stamp,
        unstamped: false,
        hive_key: crate::index::hive::state_key(store),
    })
}

/// The stamp of the directives folder (`None`: missing, or not a folder).
pub(super) fn directives_dir_stamp(store: &Store) -> Result<Option<Stamp>> {
    let dir = store.swarm_dir.join("directives");
    Ok(lstat(&dir)?.filter(|m| m.is_dir()).map(|m| Stamp::of(&m)))
}

/// Stats `config.toml` and the event files only.
pub(super) fn scan_events(store: &Store) -> Result<Scan> {
    let swarm = &store.swarm_dir;
    Ok(Scan {
        config: config_stamp(swarm)?,
        events: scan_log(store)?,
        unstamped: true,
        ..Scan::default()
    })
}

/// Stats the log's files: the tracked ones by name, then the pending ones
/// as `pending/NAME` (see [`Store::event_file`]).
fn scan_log(store: &Store) -> Result<Vec<(String, Stamp)>> {
    let mut files = scan_dir(&store.events_dir(), is_month_file)?.0;
    let pending = scan_dir(&store.pending_dir(), is_month_file)?.0;
    files.extend(
        (pending.into_iter())
            .map(|(name, stamp)| (format!("{}{name}", crate::store::PENDING_PREFIX), stamp)),
    );
    Ok(files)
}

/// The stamp of `config.toml`, or of the link or FIFO in its place (which
/// the store reports and does not read).
fn config_stamp(swarm: &Path) -> Result<Option<Stamp>> {
    Ok(lstat(&swarm.join("config.toml"))?.map(|m| Stamp::of(&m)))
}

/// The metadata of `path` itself, never of a link's target; `None` if it is missing.
fn lstat(path: &Path) -> Result<Option<std::fs::Metadata>> {
    match std::fs::symlink_metadata(path) {
        Ok(m) => Ok(Some(m)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// The files in `dir` that `keep` keeps, stamped, and the sum of their [`file_hash`]es.
fn scan_dir(dir: &Path, keep: impl Fn(&str) -> bool) -> Result<(Vec<(String, Stamp)>, u64)> {
    let names = list_dir(dir, keep)?;
    if names.is_empty() {
        return Ok((Vec::new(), 0));
    }
    let text = joined(names.iter().map(String::as_str));
    let stamper = Stamper::new(dir.to_path_buf(), &text)?;
    stamper.work();
    let (chunks, sum) = stamper.finish()?;
    Ok((named(&text, &chunks), sum))
}

/// The names in `dir` that `keep` keeps, sorted; none if it is missing or
/// is a link (see [`crate::safe_fs::read_dir`]).
fn list_dir(dir: &Path, keep: impl Fn(&str) -> bool) -> Result<Vec<String>> {
    let Some(listing) = crate::safe_fs::read_dir(dir).map_err(|e| Error::io(dir, e))? else {
        return Ok(Vec::new());
    };
    let mut names = Vec::new();
    for entry in listing {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        // A name that is not UTF-8, or holds a line break (names are kept
        // one a line), cannot be a directive or event file; `validate` reports it.
        if let Ok(name) = entry.file_name().into_string()
            && !name.contains(['\n', '\r'])
            && keep(&name)
        {
            names.push(name);
        }
    }
    names.sort_unstable();
    Ok(names)
}

/// Names, each followed by a newline: a [`Listing`]'s names.
pub fn joined<'a>(names: impl Iterator<Item = &'a str> + Clone) -> String {
    let mut out = String::with_capacity(names.clone().map(|n| n.len() + 1).sum());
    for n in names {
        out.push_str(n);
        out.push('\n');
    }
    out
}

/// The stamped names of `chunks`, in order, taken from `text`.
fn named(text: &str, chunks: &[Stamps]) -> Vec<(String, Stamp)> {
    chunks
        .iter()
        .flatten()
        .map(|&(at, len, stamp)| {
            let name = text
                .get(at as usize..(at + len) as usize)
                .unwrap_or_default();
            (name.to_owned(), stamp)
        })
        .collect()
}

/// Names in a folder to stat, shared by the threads that stat them.
struct Stamper<'a> {
    folder: Folder,
    /// What `names` are slices of.
    text: &'a str,
    names: Vec<&'a str>,
    /// The next chunk of `names` to claim.
    next: AtomicUsize,
    /// The stamps of each chunk claimed, by chunk number.
    done: Mutex<Vec<(usize, ChunkStamps)>>,
}

/// The files of a chunk of names, stamped (a link, FIFO or device as
/// itself), and the sum of their [`file_hash`]es.
type ChunkStamps = Result<(Stamps, u64)>;

/// Files and their stamps, each name as its offset and length in the names' text.
type Stamps = Vec<(u32, u32, Stamp)>;

/// The hash of a file's name and stamp, for [`Scan::entries_fingerprint`].
fn file_hash(name: &str, s: &Stamp) -> u64 {
    let mut record = [0u8; 32 + 256];
    let n = name.len().min(256);
    record[..n].copy_from_slice(&name.as_bytes()[..n]);
    // A name longer than a file name can be is hashed whole.
    let tail = if name.len() > 256 {
        xxhash_rust::xxh3::xxh3_64(name.as_bytes())
    } else {
        0
    };
    let mut at = n;
    for field in [s.len, s.mtime_ns as u64, s.ctime_ns as u64, s.ino] {
        record[at..at + 8].copy_from_slice(&field.to_le_bytes());
        at += 8;
    }
    xxhash_rust::xxh3::xxh3_64_with_seed(&record[..at], tail ^ n as u64)
}

/// Names a thread claims at a time: small enough to balance the threads,
/// large enough that claiming costs nothing.
const CHUNK: usize = 128;

/// Fewer names than this are stat'ed by the calling thread: starting a
/// thread costs as much as a few dozen stats.
const MIN_SHARED: usize = 2 * CHUNK;

impl<'a> Stamper<'a> {
    /// Stats the names in `text`, one a line.
    fn new(dir: PathBuf, text: &'a str) -> Result<Stamper<'a>> {
        let names: Vec<&str> = text.lines().filter(|n| !n.is_empty()).collect();
        // A missing folder has no names, and needs no descriptor.
        let folder = Folder::open(dir, !names.is_empty())?;
        Ok(Stamper {
            folder,
            text,
            names,
            next: AtomicUsize::new(0),
            done: Mutex::new(Vec::new()),
        })
    }

    /// How many helper threads are worth starting: none for a small folder,
    /// else one a core (at most four). Like git's preloaded index.
    fn helpers(&self) -> usize {
        if self.names.len() < MIN_SHARED {
            return 0;
        }
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, 4)
    }

    /// Stats chunks of names until none is left.
    fn work(&self) {
        let mut mine = Vec::new();
        loop {
            let chunk = self.next.fetch_add(1, Ordering::Relaxed);
            let Some(part) = self.names.chunks(CHUNK).nth(chunk) else {
                break;
            };
            let mut sum = 0u64;
            let stamps = part
                .iter()
                .filter_map(|&n| match self.folder.stamp(n) {
                    Ok(Some(stamp)) => {
                        sum = sum.wrapping_add(file_hash(n, &stamp));
                        Some(Ok((self.place(n), n.len() as u32, stamp)))
                    }
                    Ok(None) => None,
                    Err(e) => Some(Err(e)),
                })
                .collect::<Result<Vec<_>>>()
                .map(|files| (files, sum));
            mine.push((chunk, stamps));
        }
        self.done
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend(mine);
    }

    /// Where `name`, a slice of the text, starts in it.
    fn place(&self, name: &str) -> u32 {
        (name.as_ptr() as usize - self.text.as_ptr() as usize) as u32
    }

    /// The stamped names, in order, and the sum of their hashes; missing
    /// names and folders are left out.
    fn finish(self) -> Result<(Vec<Stamps>, u64)> {
        let mut done = self
            .done
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        done.sort_unstable_by_key(|(chunk, _)| *chunk);
        if done.len() != self.names.len().div_ceil(CHUNK) {
            return Err(super::Error::StatStopped {
                folder: self.folder.path.clone(),
            }
            .into());
        }
        let mut out = Vec::with_capacity(done.len());
        let mut sum = 0u64;
        for (_, stamps) in done {
            let (files, part) = stamps?;
            out.push(files);
            sum = sum.wrapping_add(part);
        }
        Ok((out, sum))
    }
}

/// A folder open for stat'ing the names in it (relative to its descriptor on Linux).
struct Folder {
    path: PathBuf,
    #[cfg(target_os = "linux")]
    fd: Option<std::fs::File>,
}

impl Folder {
    fn open(path: PathBuf, needed: bool) -> Result<Folder> {
        // Not through a link put in the folder's place since it was listed.
        #[cfg(target_os = "linux")]
        let fd = match needed {
            true => Some(crate::safe_fs::open_folder(&path).map_err(|e| Error::io(&path, e))?),
            false => None,
        };
        #[cfg(not(target_os = "linux"))]
        let _ = needed;
        Ok(Folder {
            path,
            #[cfg(target_os = "linux")]
            fd,
        })
    }

    /// The stamp of an entry of the folder, never following a link; `None`
    /// if it is missing or a folder.
    #[cfg(target_os = "linux")]
    fn stamp(&self, name: &str) -> Result<Option<Stamp>> {
        use rustix::fs::{AtFlags, FileType, StatxFlags, statx};
        let mask = StatxFlags::TYPE
            | StatxFlags::SIZE
            | StatxFlags::MTIME
            | StatxFlags::CTIME
            | StatxFlags::INO;
        let Some(fd) = &self.fd else {
            return Ok(None);
        };
        match statx(fd, name, AtFlags::SYMLINK_NOFOLLOW, mask) {
            Ok(st) => {
                if FileType::from_raw_mode(u32::from(st.stx_mode)) == FileType::Directory {
                    return Ok(None);
                }
                let ns = |t: rustix::fs::StatxTimestamp| {
                    i64::try_from(i128::from(t.tv_sec) * 1_000_000_000 + i128::from(t.tv_nsec))
                        .unwrap_or(i64::MAX)
                        .max(0)
                };
                Ok(Some(Stamp {
                    len: st.stx_size,
                    mtime_ns: ns(st.stx_mtime),
                    ctime_ns: ns(st.stx_ctime),
                    ino: st.stx_ino,
                }))
            }
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(Error::io(&self.path.join(name), e.into())),
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn stamp(&self, name: &str) -> Result<Option<Stamp>> {
        let meta = lstat(&self.path.join(name))?;
        Ok(meta.filter(|m| !m.is_dir()).map(|m| Stamp::of(&m)))
    }
}
