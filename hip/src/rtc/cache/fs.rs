//! The compile cache's file-system safety: which directories it will use, and how it opens, creates and
//! deletes files so that nobody else's file is ever touched or trusted.
//!
//! - The cache directory the caller or environment names must be owned by the current user and not
//!   writable by group or others (as ssh and pip require); otherwise it is not used at all. Inside it the
//!   cache keeps its own subfolder (`SUBDIR`), created mode 0700 and checked the same way (a real
//!   directory, never a symlink). A directory that fails a check costs one warning per process and a
//!   compile without the cache.
//! - Entries are opened with `O_NOFOLLOW` and trusted only if they are regular files owned by the current
//!   user; temporary files are created with `O_CREAT | O_EXCL | O_NOFOLLOW`, mode 0600.
//! - Eviction and `clear` delete only regular files in the subfolder whose names follow the cache's
//!   patterns and whose contents start with its magic.
//! - Elsewhere than Unix (Windows) these checks have no equivalent here (owners and modes are ACLs
//!   there): the on-disk cache is never used; each compile says why once per process and runs uncached.

#[cfg(unix)]
use std::fs;
use std::fs::File;
use std::io;
#[cfg(unix)]
use std::io::Read;
#[cfg(unix)]
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The subfolder of the cache directory that holds every file the cache writes.
pub(crate) const SUBDIR: &str = "hip-rs-rtc-cache-v1";

#[cfg(unix)]
fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Why `meta` (of `dir`) is not a directory the cache may trust, if it is not.
#[cfg(unix)]
fn untrusted(dir: &Path, meta: &fs::Metadata) -> Option<String> {
    if !meta.is_dir() {
        return Some(format!("{} is not a directory", dir.display()));
    }
    if meta.uid() != euid() {
        return Some(format!(
            "{} is owned by uid {}, not by the current user (uid {})",
            dir.display(),
            meta.uid(),
            euid()
        ));
    }
    if meta.permissions().mode() & 0o022 != 0 {
        return Some(format!(
            "{} is writable by group or others (mode {:o})",
            dir.display(),
            meta.permissions().mode() & 0o7777
        ));
    }
    None
}

/// The cache's subfolder of `root`, after checking both (creating them, mode 0700, where missing when
/// `create`). `Ok(None)`: `root` does not exist and `create` is false (an empty cache).
#[cfg(unix)]
pub(crate) fn checked_subdir(root: &Path, create: bool) -> Result<Option<PathBuf>, String> {
    let sub = root.join(SUBDIR);
    match fs::metadata(root) {
        Ok(meta) => {
            if let Some(why) = untrusted(root, &meta) {
                return Err(why);
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound && !create => return Ok(None),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(root)
                .map_err(|e| format!("cannot create {}: {e}", root.display()))?;
        }
        Err(e) => return Err(format!("cannot read {}: {e}", root.display())),
    }
    match fs::symlink_metadata(&sub) {
        Ok(meta) => {
            if meta.file_type().is_symlink() {
                return Err(format!("{} is a symbolic link", sub.display()));
            }
            untrusted(&sub, &meta).map_or(Ok(Some(sub)), Err)
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound && !create => Ok(None),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            match fs::DirBuilder::new().mode(0o700).create(&sub) {
                Ok(()) => {}
                // Another thread or process made it first: check what is there now.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(format!("cannot create {}: {e}", sub.display())),
            }
            let meta = fs::symlink_metadata(&sub).map_err(|e| e.to_string())?;
            if meta.file_type().is_symlink() {
                return Err(format!("{} is a symbolic link", sub.display()));
            }
            untrusted(&sub, &meta).map_or(Ok(Some(sub)), Err)
        }
        Err(e) => Err(format!("cannot read {}: {e}", sub.display())),
    }
}

/// Open an entry for reading: never through a symlink, and only a regular file of the current user.
#[cfg(unix)]
pub(crate) fn open_entry(path: &Path) -> io::Result<File> {
    let file = File::options()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() || meta.uid() != euid() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "not a regular file of the current user",
        ));
    }
    Ok(file)
}

/// Create a new temporary file, exclusively (never an existing file, never through a symlink), mode 0600.
#[cfg(unix)]
pub(crate) fn create_temp(path: &Path) -> io::Result<File> {
    File::options()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(0o600)
        .open(path)
}

/// Whether `path` is a file the cache wrote: a regular file (not a symlink) of the current user whose
/// contents start with `magic`.
#[cfg(unix)]
pub(crate) fn is_ours(path: &Path, magic: &[u8]) -> bool {
    let Ok(meta) = fs::symlink_metadata(path) else {
        return false;
    };
    if !meta.file_type().is_file() || meta.uid() != euid() {
        return false;
    }
    let mut head = vec![0u8; magic.len()];
    open_entry(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| head == magic)
}

/// Not Unix: the cache's directory checks (owner, mode) have no equivalent here, so no directory is
/// trusted and nothing is read or written.
#[cfg(not(unix))]
pub(crate) fn checked_subdir(root: &Path, _create: bool) -> Result<Option<PathBuf>, String> {
    Err(format!(
        "the compile cache checks its directory's owner and mode, which it does on Unix only: {} is not used",
        root.display()
    ))
}

/// Not Unix: never reached (no directory is trusted), and refuses.
#[cfg(not(unix))]
pub(crate) fn open_entry(_path: &Path) -> io::Result<File> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "the compile cache is Unix only",
    ))
}

/// Not Unix: never reached (no directory is trusted), and refuses.
#[cfg(not(unix))]
pub(crate) fn create_temp(_path: &Path) -> io::Result<File> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "the compile cache is Unix only",
    ))
}

/// Not Unix: nothing is the cache's.
#[cfg(not(unix))]
pub(crate) fn is_ours(_path: &Path, _magic: &[u8]) -> bool {
    false
}
