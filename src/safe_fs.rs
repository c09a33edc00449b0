//! The one way files under `.swarm/` are opened, read and written
//! (DESIGN §2, principle 5: only regular files inside the repository).
//!
//! A pull request controls every file under `.swarm/`: it can commit a
//! symbolic link to a credentials file or to `/dev/zero` in place of an event
//! file, a directive or `config.toml`, or make a whole folder a link to
//! somewhere outside the repository; a local user can leave a FIFO there. So
//! a file is opened with `O_NOFOLLOW | O_NONBLOCK` and used only if the
//! opened descriptor is a regular file (never waiting on a FIFO, never
//! reading a device); reads stop at a limit; and a folder written into is
//! checked, from `.swarm/` down, to be a folder of its own. What is refused
//! comes back as an [`std::io::Error`] carrying a [`NotRegular`], which
//! readers turn into a reported [`crate::problem::Problem`] (the file is
//! skipped) and [`crate::Error::io`] into a bad-input error (exit 2).

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::error::Error;
pub use crate::file_kind::{FileKind, NotRegular, TooLarge, not_regular, over_limit};

fn refused(kind: FileKind) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, NotRegular(kind))
}

/// Opens `path` only if it is a regular file of its own: never through a
/// symlink at its last component, never waiting on a FIFO, never a device.
/// `options` says how (read, append, create).
pub fn open(path: &Path, options: &mut OpenOptions) -> io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = match options.open(path) {
        Ok(f) => f,
        // ELOOP (a link, with O_NOFOLLOW), ENXIO (a FIFO with no reader, a
        // socket), EISDIR…: say what is there rather than the errno.
        Err(e) if e.kind() != io::ErrorKind::NotFound => {
            return Err(match std::fs::symlink_metadata(path) {
                Ok(m) => FileKind::of(&m).map_or(e, refused),
                Err(_) => e,
            });
        }
        Err(e) => return Err(e),
    };
    if let Some(kind) = FileKind::of(&file.metadata()?) {
        return Err(refused(kind));
    }
    Ok(file)
}

/// [`open`] for reading.
pub fn open_read(path: &Path) -> io::Result<File> {
    open(path, OpenOptions::new().read(true))
}

/// Reads the regular file `path`, refusing it (a [`TooLarge`] error) when it
/// holds more than `limit` bytes: its size is taken from the opened
/// descriptor first (a sparse file of gigabytes is not read at all), and
/// never more than `limit + 1` bytes are read, should it grow meanwhile.
pub fn read(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let file = open_read(path)?;
    let len = file.metadata()?.len();
    if len > limit {
        return Err(too_large(limit));
    }
    // Sized for the whole file: read in a few calls, not in reads that
    // double from 32 bytes.
    let mut bytes = Vec::with_capacity(usize::try_from(len).map_or(0, |n| n.saturating_add(1)));
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(limit));
    }
    Ok(bytes)
}

fn too_large(limit: u64) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, TooLarge(limit))
}

/// Opens the folder `dir` (to stat the names in it), never through a link.
pub fn open_folder(dir: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW);
    }
    options.open(dir)
}

/// What `dir` is, when it exists and is not a folder of its own (a symlink
/// to one included).
pub fn not_a_folder(dir: &Path) -> Option<FileKind> {
    let meta = std::fs::symlink_metadata(dir).ok()?;
    if meta.is_dir() {
        None
    } else {
        Some(FileKind::of(&meta).unwrap_or(FileKind::File))
    }
}

/// Lists `dir`, a folder of `.swarm/`; nothing when it is missing, or when
/// it is a link or no folder (which [`crate::Store::open`] reports).
pub fn read_dir(dir: &Path) -> io::Result<Option<std::fs::ReadDir>> {
    if not_a_folder(dir).is_some() {
        return Ok(None);
    }
    match std::fs::read_dir(dir) {
        Ok(listing) => Ok(Some(listing)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The names in `dir` (as [`read_dir`] lists it) that end with `suffix`,
/// sorted; names that are not UTF-8 are left out.
pub fn names_ending(dir: &Path, suffix: &str) -> io::Result<Vec<String>> {
    let mut names = Vec::new();
    if let Some(listing) = read_dir(dir)? {
        for entry in listing {
            if let Some(name) = entry?.file_name().to_str()
                && name.ends_with(suffix)
            {
                names.push(name.to_owned());
            }
        }
    }
    names.sort();
    Ok(names)
}

/// The first of `swarm` (the `.swarm/` folder) and the folders below it on
/// the way to `dir` that exists and is not a folder of its own, with what
/// it is: a write into `dir` would land wherever that link points.
pub fn linked_folder(swarm: &Path, dir: &Path) -> Option<(PathBuf, FileKind)> {
    let mut at = swarm.to_path_buf();
    let below = dir.strip_prefix(swarm).unwrap_or(Path::new(""));
    let steps = std::iter::once(None).chain(below.components().map(Some));
    for step in steps {
        if let Some(c) = step {
            at.push(c);
        }
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.is_dir() => {}
            Ok(m) => return Some((at, FileKind::of(&m).unwrap_or(FileKind::File))),
            // Missing: created by the writer, as a real folder.
            Err(_) => return None,
        }
    }
    None
}

/// Can the file run (any `x` bit)? Always, off Unix.
#[cfg(unix)]
pub fn is_executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
pub fn is_executable(_: &std::fs::Metadata) -> bool {
    true
}

/// A temporary file in `dir`, to be renamed over a file under `.swarm/`:
/// created with mode 0666 less the umask, as any other file the user
/// writes (tempfile's own 0600 would make a shared checkout's directives
/// unreadable to the rest of the group).
pub fn temp_file_in(dir: &Path) -> Result<tempfile::NamedTempFile, Error> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(".tmp-");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    builder.tempfile_in(dir).map_err(|e| Error::io(dir, e))
}

/// Replaces `path` with `contents` atomically (a temporary file in the same
/// folder, renamed over it): readers see the old file or the new one.
pub fn replace(path: &Path, contents: &[u8]) -> Result<(), Error> {
    write_over(path, contents, true)
}

/// [`replace`] without waiting for the disk: for the agent hooks' session
/// state, as durable as the event log it points into under the default
/// `[events] fsync = "never"`. An fsync cost each write 0.4 ms, one or two
/// per spawn, launch and start. On ext4 a rename over a file keeps the
/// old file or the new one through a crash even without one.
pub fn replace_unsynced(path: &Path, contents: &[u8]) -> Result<(), Error> {
    write_over(path, contents, false)
}

fn write_over(path: &Path, contents: &[u8], sync: bool) -> Result<(), Error> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = temp_file_in(dir)?;
    std::io::Write::write_all(&mut tmp, contents).map_err(|e| Error::io(tmp.path(), e))?;
    if sync {
        tmp.as_file()
            .sync_all()
            .map_err(|e| Error::io(tmp.path(), e))?;
    }
    tmp.persist(path).map_err(|e| Error::io(path, e.error))?;
    Ok(())
}

/// Creates `dir`, a folder at or under `swarm` (the `.swarm/` folder), and
/// the folders missing on the way, after checking that none of those that
/// exist (`swarm` included) is a link or something other than a folder.
pub fn create_dir_all(swarm: &Path, dir: &Path) -> Result<(), Error> {
    if let Some((path, kind)) = linked_folder(swarm, dir) {
        return Err(Error::LinkedFolder { path, kind });
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    // Created meanwhile by someone else as a link: refused all the same.
    match linked_folder(swarm, dir) {
        Some((path, kind)) => Err(Error::LinkedFolder { path, kind }),
        None => Ok(()),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_link_a_fifo_and_a_device_are_refused_by_kind() {
        let dir = tempfile::tempdir().expect("temp dir");
        let outside = dir.path().join("outside");
        std::fs::write(&outside, "secret").expect("write");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&outside, &link).expect("symlink");
        let kind = |p: &Path| not_regular(&read(p, 100).expect_err("refused"));
        assert_eq!(kind(&link), Some(FileKind::Symlink));
        assert_eq!(kind(Path::new("/dev/null")), Some(FileKind::Device));
        assert_eq!(kind(dir.path()), Some(FileKind::Folder));
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().expect("utf-8")).expect("c string");
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(kind(&fifo), Some(FileKind::Fifo));
        let append = open(&fifo, OpenOptions::new().append(true)).expect_err("refused");
        assert_eq!(not_regular(&append), Some(FileKind::Fifo));
        assert_eq!(read(&outside, 6).expect("read"), b"secret");
        let big = read(&outside, 5).expect_err("too large");
        assert!(big.to_string().contains("5-byte limit"), "{big}");
    }

    #[test]
    fn a_cache_is_replaced_whole_with_the_users_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("state.json");
        std::fs::write(&path, "old and longer").expect("write");
        replace_unsynced(&path, b"new").expect("replaced");
        assert_eq!(std::fs::read(&path).expect("read"), b"new");
        let names: Vec<_> = (std::fs::read_dir(dir.path()).expect("list"))
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, ["state.json"], "no temporary file is left");
        // As any file the user writes: 0666 less the umask.
        let probe = dir.path().join("probe");
        std::fs::write(&probe, "").expect("write");
        let mode = |p: &Path| std::fs::metadata(p).expect("stat").permissions().mode() & 0o777;
        assert_eq!(mode(&path), mode(&probe));
    }

    #[test]
    fn a_linked_folder_is_found_from_the_swarm_folder_down() {
        let dir = tempfile::tempdir().expect("temp dir");
        let swarm = dir.path().join(".swarm");
        std::fs::create_dir_all(swarm.join("events")).expect("mkdir");
        std::fs::create_dir(dir.path().join("elsewhere")).expect("mkdir");
        std::os::unix::fs::symlink("../elsewhere", swarm.join("local")).expect("symlink");
        assert!(linked_folder(&swarm, &swarm.join("events")).is_none());
        assert!(linked_folder(&swarm, &swarm.join("new/deeper")).is_none());
        let (at, kind) = linked_folder(&swarm, &swarm.join("local/torn")).expect("linked");
        assert_eq!((at, kind), (swarm.join("local"), FileKind::Symlink));
        assert!(create_dir_all(&swarm, &swarm.join("local/torn")).is_err());
        assert!(!dir.path().join("elsewhere/torn").exists());
        create_dir_all(&swarm, &swarm.join("new/deeper")).expect("created");
    }
}

/// Creates `path`, under `swarm` (the `.swarm/` folder), with `contents`
/// atomically: the file appears whole or not at all, an existing file (or
/// link) is never replaced, and no folder on the way is a link.
pub fn create_new(
    swarm: &Path,
    path: &Path,
    contents: &[u8],
    rel: &str,
    id: &str,
) -> Result<(), Error> {
    let dir = path.parent().unwrap_or(Path::new("."));
    create_dir_all(swarm, dir)?;
    let mut tmp = temp_file_in(dir)?;
    std::io::Write::write_all(&mut tmp, contents).map_err(|e| Error::io(tmp.path(), e))?;
    tmp.persist_noclobber(path).map_err(|e| {
        if e.error.kind() == std::io::ErrorKind::AlreadyExists {
            Error::AlreadyExists {
                id: id.to_owned(),
                path: rel.to_owned(),
            }
        } else {
            Error::io(path, e.error)
        }
    })?;
    Ok(())
}
