//! The persistent compile cache: a HIPRTC compile's result kept on disk, keyed by everything that changes it.
//!
//! On by default. Where it lives, first match wins:
//!
//! 1. `HIP_RS_CACHE_DISABLE` set to anything but `""` or `"0"`: no cache at all;
//! 2. `HIP_RS_CACHE_DIR`;
//! 3. `$XDG_CACHE_HOME/hip-rs`;
//! 4. `$HOME/.cache/hip-rs`;
//! 5. otherwise no cache.
//!
//! `HIP_RS_CACHE_MAX_BYTES` sets the size limit (default [`CompileCache::DEFAULT_MAX_BYTES`]). A program
//! chooses per compile with [`ProgramBuilder::cache`](super::ProgramBuilder::cache) and
//! [`ProgramBuilder::no_cache`](super::ProgramBuilder::no_cache).
//!
//! # What a hit means
//!
//! The key covers the source, program name, headers (names and contents, in order), options in order
//! (with the resolved `--gpu-architecture=`, so the device's full `gcnArchName`), name expressions, the
//! output kind (code object or bitcode), the platform, the HIPRTC and HIP runtime versions, and the compiler
//! HIPRTC runs on (comgr's interface version and the path, size and modification time of its library:
//! Debian sid pairs HIP 6.4.3 with comgr 7.0.2, so the runtime version alone does not name it). An entry
//! stores the whole key next to the code object, the compile log and the lowered names, so a hit returns
//! exactly what the compile returned, and two keys whose file names collide only cost a recompile.
//!
//! HIPRTC >= 6 output is not byte-reproducible: two cold compiles of one program with name expressions
//! gave two code objects of the same length and symbols whose bytes differ (the statics HIPRTC adds for
//! name expressions swap order; HIP 6.4.3 and 7.2.4). A hit returns the bytes of the compile that stored
//! it, never a different program; HIPRTC 5.2.3 and 5.7.1 gave identical bytes every time.
//!
//! # comgr's own cache
//!
//! comgr >= 3.0 (HIP 6.4.3 and 7.2.4 on Debian) keeps a cache of its own, on by default, in
//! `$AMD_COMGR_CACHE_DIR`, else `$XDG_CACHE_HOME/comgr` or `~/.cache/comgr`; `AMD_COMGR_CACHE=0` turns it
//! off. It sits below this one (it caches comgr's steps; a hit here never reaches HIPRTC at all), and the
//! `HIP_RS_CACHE_*` variables do not govern it: `HIP_RS_CACHE_DISABLE` stops this cache only. For a compile
//! that writes nothing to disk, set both `HIP_RS_CACHE_DISABLE=1` and `AMD_COMGR_CACHE=0` (tested). comgr
//! 2.x (HIP 5.2.3, 5.7.1) has no such cache.
//!
//! # Programs that read files
//!
//! Compiles that may read files outside the given headers are **not cached**: they always run the
//! compiler, and [`CacheOutcome::NotStored`] says why. A hit could otherwise return code built from an
//! older version of such a file. This is decided conservatively, before compiling:
//!
//! - every option must be one known to read no file: `-O*`, `-D*`, `-U*`, `-std=`, `-g*`, `-w`, warning
//!   flags (`-Wall`, not `-Wl,`/`-Wp,`), the target options, `-f`/`-m` flags without a value. `-I`,
//!   `-isystem`, `-include`, `@file`, `-Xclang`, `-mllvm`, `--sysroot=`, ... make a compile uncached;
//! - every occurrence of the words `include`, `import`, `embed` or `incbin` (inline assembly) in the source
//!   and the headers (after joining backslash-continued lines) must be an `#include "name"` or
//!   `#include <name>` of a header given to the builder by exactly that name: an absolute path, a header
//!   not given, a macro include, `#include_next`, `__has_include` or `asm(".incbin ...")` make it uncached;
//! - `HIPRTC_COMPILE_OPTIONS_APPEND` / `HIPRTC_LINK_OPTIONS_APPEND` (options newer HIPRTCs add from the
//!   environment) must be unset or empty.
//!
//! The option and environment checks run on every compile. The scan of the texts runs before a store only:
//! its answer follows from the source, headers and names the key holds, and the key also holds the scan
//! rules' version, so an entry exists only for texts that passed these rules, and a hit needs no scan.
//!
//! # Whose files
//!
//! Everything the cache writes lives in its own subfolder of the directory
//! ([`CompileCache::entries_dir`], named `hip-rs-rtc-cache-v1`, created mode 0700), under names
//! (`<32 hex digits>.hipc`, `.tmp-<32 hex digits>-<pid>-<n>`) and a file header (magic) only it uses.
//! Eviction and [`CompileCache::clear`] delete only regular files there that match those names and start
//! with the magic, so pointing `HIP_RS_CACHE_DIR` at a shared folder never deletes anyone's files.
//! Temporary files are created with `O_CREAT | O_EXCL | O_NOFOLLOW` (mode 0600) and entries are opened
//! with `O_NOFOLLOW` and trusted only when owned by the current user.
//!
//! The directory and the subfolder must be owned by the current user and not writable by group or others,
//! as ssh and pip require: otherwise anyone who can write there could choose the code a hit returns. A
//! directory that fails this is not used: one warning on stderr per process, and the compile goes on
//! without the cache (its outcome says why).
//!
//! # Never wrong, never in the way
//!
//! - An entry is written to a temporary file in the same directory and renamed into place, so threads and
//!   processes compiling the same program at once never see a torn entry; the last rename wins and every
//!   writer wrote the same bytes.
//! - Each entry carries its length and a checksum. A short, corrupt or foreign file is deleted and the
//!   program recompiled (and stored again).
//! - A directory that cannot be created or written, or a full disk, means the compile goes on without the
//!   cache: the caller gets its program, [`CompiledProgram::cache_outcome`](super::CompiledProgram::cache_outcome)
//!   says why nothing was stored, and the first such failure in a process is reported once on stderr.
//! - After each store, least recently used entries (by modification time, refreshed on each hit) are
//!   removed until the directory is within its limit; an entry larger than the limit is not stored.
//! - Failed compiles are never stored.

mod entry;
mod fs;
mod inputs;

use entry::{decode, encode, hash64, Decoded, Writer};

pub(crate) use inputs::{options_read_files, texts_read_files};

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use super::CompiledProgram;

/// A compile-cache directory and its size limit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileCache {
    dir: PathBuf,
    max_bytes: u64,
}

/// What the cache did for one compile; see [`CompiledProgram::cache_outcome`](super::CompiledProgram::cache_outcome).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CacheOutcome {
    /// Caching was off for this compile (disabled, or no cache directory could be determined).
    Off,
    /// The program came from the cache; nothing was compiled.
    Hit,
    /// The program was compiled and stored.
    Stored,
    /// The program was compiled but not stored, for the reason given (unwritable directory, full disk,
    /// larger than the cache's limit, unknown runtime version).
    NotStored(String),
}

/// How many entries a cache directory holds and their total size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheUsage {
    /// Complete entries (the cache's own files ending in `.hipc`).
    pub entries: usize,
    /// Their total size in bytes.
    pub bytes: u64,
}

const ENTRY_EXT: &str = "hipc";
const TEMP_PREFIX: &str = ".tmp-";
const MAGIC: &[u8; 8] = b"HIPRSC01";
const HEADER_LEN: usize = 24;
/// Temporary files older than this were left by a writer that died; eviction removes them.
const STALE_TEMP: Duration = Duration::from_secs(600);

impl CompileCache {
    /// The size limit when none is given: 1 GiB.
    pub const DEFAULT_MAX_BYTES: u64 = 1 << 30;

    /// A cache in `dir` (created when first written) with the default size limit.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        CompileCache {
            dir: dir.into(),
            max_bytes: Self::DEFAULT_MAX_BYTES,
        }
    }

    /// The same cache with a size limit of `max_bytes`.
    pub fn with_max_bytes(mut self, max_bytes: u64) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    /// The cache the environment chooses (see the [module docs](self)), or `None` when it is disabled or no
    /// directory can be determined.
    pub fn from_env() -> Option<Self> {
        let var = |name| std::env::var_os(name).filter(|v| !v.is_empty());
        if var("HIP_RS_CACHE_DISABLE").is_some_and(|v| v != "0") {
            return None;
        }
        let dir = var("HIP_RS_CACHE_DIR")
            .map(PathBuf::from)
            .or_else(|| var("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("hip-rs")))
            .or_else(|| var("HOME").map(|d| PathBuf::from(d).join(".cache").join("hip-rs")))?;
        let max_bytes = match var("HIP_RS_CACHE_MAX_BYTES") {
            None => Self::DEFAULT_MAX_BYTES,
            Some(v) => match v.to_str().and_then(|s| s.trim().parse().ok()) {
                Some(n) => n,
                None => {
                    warn_once(format_args!(
                        "HIP_RS_CACHE_MAX_BYTES={v:?} is not a number of bytes; using {}",
                        Self::DEFAULT_MAX_BYTES
                    ));
                    Self::DEFAULT_MAX_BYTES
                }
            },
        };
        Some(CompileCache { dir, max_bytes })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The size limit in bytes.
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// The subfolder of [`dir`](Self::dir) that holds the cache's files.
    pub fn entries_dir(&self) -> PathBuf {
        self.dir.join(fs::SUBDIR)
    }

    /// The entries in the directory now (none if it does not exist).
    ///
    /// # Errors
    ///
    /// The [`io::Error`] of listing the cache's folder or reading an entry's size, and
    /// `PermissionDenied` for a folder that fails the cache's checks (its owner and mode); a folder that
    /// does not exist is no error (no entries).
    ///
    /// ```no_run
    /// use hip::rtc::CompileCache;
    ///
    /// if let Some(cache) = CompileCache::from_env() {
    ///     let usage = cache.usage()?;
    ///     println!("{} entries, {} bytes in {}", usage.entries, usage.bytes, cache.dir().display());
    /// }
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn usage(&self) -> io::Result<CacheUsage> {
        let entries = self.entries()?;
        Ok(CacheUsage {
            entries: entries.len(),
            bytes: u64::try_from(total_len(&entries)).unwrap_or(u64::MAX),
        })
    }

    /// Remove every entry (and leftover temporary file) the cache wrote; nothing else in the directory is
    /// touched, and the directory itself stays.
    ///
    /// # Errors
    ///
    /// The [`io::Error`] of listing the cache's folder or removing a file (a file already gone is no
    /// error), and `PermissionDenied` for a folder that fails the cache's checks (its owner and mode).
    ///
    /// ```no_run
    /// use hip::rtc::CompileCache;
    ///
    /// let cache = CompileCache::new("/var/cache/my-app/hip-rs");
    /// cache.clear()?; // every later compile through it starts cold
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn clear(&self) -> io::Result<()> {
        for e in self.entries()? {
            remove_if_present(&e.path)?;
        }
        for t in self.temp_files()? {
            if fs::is_ours(&t, MAGIC) {
                remove_if_present(&t)?;
            }
        }
        Ok(())
    }

    /// The stored program for `key`, if a complete, matching entry exists. A damaged entry is removed.
    pub(crate) fn load(&self, key: &Key) -> Option<CompiledProgram> {
        let dir = match fs::checked_subdir(&self.dir, false) {
            Ok(dir) => dir?,
            Err(why) => {
                warn_once(format_args!(
                    "compile cache not used ({why}); compiling without it"
                ));
                return None;
            }
        };
        let path = dir.join(entry_name(key));
        let mut file = fs::open_entry(&path).ok()?;
        let mut bytes = Vec::new();
        if file.read_to_end(&mut bytes).is_err() {
            return None;
        }
        match decode(&bytes, key) {
            Decoded::Entry(program) => {
                // Refresh the modification time: eviction removes the least recently used first.
                let _ = File::options()
                    .append(true)
                    .open(&path)
                    .and_then(|f| f.set_modified(SystemTime::now()));
                Some(program)
            }
            Decoded::OtherKey => None, // a hash collision: the store after compiling replaces it
            Decoded::Damaged => {
                let _ = std::fs::remove_file(&path);
                None
            }
        }
    }

    /// Store a compiled program under `key`, then evict down to the limit. Returns the outcome.
    pub(crate) fn store(&self, key: &Key, program: &CompiledProgram) -> CacheOutcome {
        let bytes = encode(key, program);
        if bytes.len() as u64 > self.max_bytes {
            return CacheOutcome::NotStored(format!(
                "the entry ({} bytes) is larger than the cache limit ({} bytes)",
                bytes.len(),
                self.max_bytes
            ));
        }
        let dir = match fs::checked_subdir(&self.dir, true) {
            Ok(Some(dir)) => dir,
            Ok(None) => unreachable!("checked_subdir creates the directory when asked"),
            Err(why) => {
                warn_once(format_args!(
                    "compile cache not used ({why}); compiling without it"
                ));
                return CacheOutcome::NotStored(why);
            }
        };
        match write_entry(&dir, key, &bytes) {
            Ok(()) => {
                let _ = self.evict();
                CacheOutcome::Stored
            }
            Err(e) => {
                let reason = format!("cannot write to {}: {e}", dir.display());
                warn_once(format_args!(
                    "compile cache not used ({reason}); compiling without it"
                ));
                CacheOutcome::NotStored(reason)
            }
        }
    }

    /// Remove least recently used entries until the total is within the limit, and stale temporary files.
    fn evict(&self) -> io::Result<()> {
        let now = SystemTime::now();
        for t in self.temp_files()? {
            let age = std::fs::symlink_metadata(&t)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|m| now.duration_since(m).ok());
            if age.is_some_and(|a| a > STALE_TEMP) && fs::is_ours(&t, MAGIC) {
                let _ = std::fs::remove_file(&t);
            }
        }
        let mut entries = self.entries()?;
        let mut total = total_len(&entries);
        entries.sort_by_key(|e| e.modified);
        for e in entries {
            if total <= u128::from(self.max_bytes) {
                break;
            }
            if remove_if_present(&e.path).is_ok() {
                total -= u128::from(e.len);
            }
        }
        Ok(())
    }

    /// The cache's own complete entries: names `<32 hex digits>.hipc`, regular files of the current user
    /// starting with the magic, in a checked subfolder. None when the directory is not usable.
    fn entries(&self) -> io::Result<Vec<EntryFile>> {
        let mut out = Vec::new();
        let Some(dir) = self.checked_dir_for_listing()? else {
            return Ok(out);
        };
        for item in read_dir_if_present(&dir)? {
            let item = item?;
            let path = item.path();
            let name = item.file_name();
            let ours = name
                .to_str()
                .and_then(|n| n.strip_suffix(&format!(".{ENTRY_EXT}")))
                .is_some_and(is_stem);
            if ours && fs::is_ours(&path, MAGIC) {
                // An entry removed by another process between listing and stat is simply gone.
                if let Ok(meta) = std::fs::symlink_metadata(&path) {
                    out.push(EntryFile {
                        path,
                        len: meta.len(),
                        modified: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                    });
                }
            }
        }
        Ok(out)
    }

    /// The cache's own temporary files (`.tmp-<32 hex>-<pid>-<n>`); deleting one still checks its magic.
    fn temp_files(&self) -> io::Result<Vec<PathBuf>> {
        let mut out = Vec::new();
        let Some(dir) = self.checked_dir_for_listing()? else {
            return Ok(out);
        };
        for item in read_dir_if_present(&dir)? {
            let item = item?;
            let name = item.file_name();
            let ours = name
                .to_str()
                .and_then(|n| n.strip_prefix(TEMP_PREFIX))
                .is_some_and(|rest| {
                    let mut parts = rest.split('-');
                    parts.next().is_some_and(is_stem)
                        && parts.next().is_some_and(is_number)
                        && parts.next().is_some_and(is_number)
                        && parts.next().is_none()
                });
            if ours {
                out.push(item.path());
            }
        }
        Ok(out)
    }

    /// The subfolder to list, if it exists and passes the checks; an untrusted one is an error.
    fn checked_dir_for_listing(&self) -> io::Result<Option<PathBuf>> {
        fs::checked_subdir(&self.dir, false)
            .map_err(|why| io::Error::new(io::ErrorKind::PermissionDenied, why))
    }
}

fn is_stem(s: &str) -> bool {
    s.len() == 32
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn is_number(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

fn entry_name(key: &Key) -> String {
    format!("{}.{ENTRY_EXT}", key.file_stem())
}

/// Write an entry to a fresh temporary file (exclusive, no symlinks, mode 0600) in `dir`, then rename it
/// into place.
fn write_entry(dir: &Path, key: &Key, bytes: &[u8]) -> io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let temp = dir.join(format!(
        "{TEMP_PREFIX}{}-{}-{}",
        key.file_stem(),
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let written = fs::create_temp(&temp)
        .and_then(|mut f| f.write_all(bytes))
        .and_then(|()| std::fs::rename(&temp, dir.join(entry_name(key))));
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

struct EntryFile {
    path: PathBuf,
    len: u64,
    modified: SystemTime,
}

/// The entries' total size, exact: each size comes from the file system (a sparse file on XFS or btrfs
/// can claim 2^63 bytes), so a `u64` sum could overflow (a panic in a debug build, a wrapped total that
/// evicts nothing in release). No `u128` sum of `u64`s from a `Vec` can overflow.
fn total_len(entries: &[EntryFile]) -> u128 {
    entries.iter().map(|e| u128::from(e.len)).sum()
}

fn read_dir_if_present(
    dir: &Path,
) -> io::Result<impl Iterator<Item = io::Result<std::fs::DirEntry>>> {
    match std::fs::read_dir(dir) {
        Ok(it) => Ok(Some(it).into_iter().flatten()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None.into_iter().flatten()),
        Err(e) => Err(e),
    }
}

fn remove_if_present(path: &Path) -> io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Report a cache problem on stderr, once per process.
fn warn_once(message: std::fmt::Arguments<'_>) {
    static WARNED: AtomicBool = AtomicBool::new(false);
    if !WARNED.swap(true, Ordering::Relaxed) {
        eprintln!("hip-rs: {message}");
    }
}

/// The toolchain part of a key: what produced the code besides the program itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Toolchain {
    pub platform: &'static str,
    pub hiprtc_version: (i32, i32),
    pub runtime_version: i32,
    /// Which compiler HIPRTC runs on: comgr's version and library file ([`super::comgr::fingerprint`]);
    /// empty on NVIDIA (NVRTC's version is `hiprtc_version`). Debian sid pairs HIP 6.4.3 with comgr 7.0.2,
    /// so the runtime's version alone does not name the compiler.
    pub compiler: String,
}

impl Toolchain {
    /// This process's toolchain, asked once; `None` when a version cannot be read (then nothing is cached,
    /// since entries from different runtimes could not be told apart).
    pub fn current() -> Option<&'static Toolchain> {
        static CURRENT: OnceLock<Option<Toolchain>> = OnceLock::new();
        CURRENT
            .get_or_init(|| {
                Some(Toolchain {
                    platform: crate::PLATFORM,
                    hiprtc_version: super::result::version().ok()?,
                    runtime_version: crate::result::runtime_version().ok()?,
                    compiler: if cfg!(hip_platform = "amd") {
                        super::comgr::fingerprint()?
                    } else {
                        String::new()
                    },
                })
            })
            .as_ref()
    }
}

/// Everything that decides a compile's output, serialised unambiguously (each field length-prefixed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Key {
    bytes: Vec<u8>,
}

/// The parts of a compile request, borrowed from the builder.
pub(crate) struct Request<'a> {
    pub output: &'static str,
    pub source: &'a str,
    pub name: &'a str,
    pub headers: &'a [(String, String)],
    pub options: &'a [String],
    pub name_expressions: &'a [String],
}

impl Key {
    pub fn new(toolchain: &Toolchain, request: &Request<'_>) -> Key {
        let mut k = Writer(Vec::with_capacity(request.source.len() + 256));
        k.str(toolchain.platform);
        k.u64(toolchain.hiprtc_version.0 as u64);
        k.u64(toolchain.hiprtc_version.1 as u64);
        k.u64(toolchain.runtime_version as u64);
        k.str(&toolchain.compiler);
        k.u64(inputs::RULES);
        k.str(request.output);
        k.str(request.source);
        k.str(request.name);
        k.u64(request.headers.len() as u64);
        for (name, contents) in request.headers {
            k.str(name);
            k.str(contents);
        }
        k.u64(request.options.len() as u64);
        for o in request.options {
            k.str(o);
        }
        k.u64(request.name_expressions.len() as u64);
        for e in request.name_expressions {
            k.str(e);
        }
        Key { bytes: k.0 }
    }

    /// 128 bits of hash as 32 hex digits: the entry's file name.
    fn file_stem(&self) -> String {
        format!(
            "{:016x}{:016x}",
            hash64(&self.bytes, 0x9e37_79b9_7f4a_7c15),
            hash64(&self.bytes, 0xc2b2_ae3d_27d4_eb4f)
        )
    }
}

#[cfg(test)]
mod tests;
