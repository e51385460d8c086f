//! comgr, AMD's code object manager: the library HIPRTC compiles and links with, opened at run time.
//!
//! The [`Linker`](super::Linker) links through it (HIPRTC's own `hiprtcLinkComplete` asks the runtime for
//! the current device to pick its target, so it cannot link for an explicit architecture, nor on a machine
//! without a GPU), and the compile cache keys on which comgr is installed (HIP 6.4.3 on Debian sid pairs with
//! comgr 7.0.2: the runtime version alone does not say which compiler ran).
//!
//! Each function here wraps one comgr call and returns `Result`; the RAII handles release what they own.
//! Where there is no linker (HIPRTC < 5.3, the NVIDIA platform) only the fingerprint is used.
#![cfg_attr(not(all(hiprtc_linker, hip_platform = "amd")), allow(dead_code))]

use crate::error::{Error, Result};
use hiprtc_sys::comgr as sys;
use std::ffi::{c_char, CStr, CString};
use std::path::PathBuf;
use std::sync::OnceLock;

/// The opened comgr library and what is known about it.
pub(crate) struct Comgr {
    lib: sys::Comgr,
    /// The library's interface version, `amd_comgr_get_version`.
    pub(crate) version: (usize, usize),
    /// The file the library was loaded from, where the dynamic loader says.
    pub(crate) path: Option<PathBuf>,
}

/// The library names tried, in order: the major interface version the bindings were generated for
/// (its enum values are what this build knows), then ROCm's default location.
fn candidates() -> Vec<String> {
    let major = sys::AMD_COMGR_INTERFACE_VERSION_MAJOR;
    let mut names = Vec::new();
    for var in ["HIP_PATH", "ROCM_PATH"] {
        if let Some(root) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            let lib = PathBuf::from(root).join("lib");
            names.push(format!("{}/libamd_comgr.so.{major}", lib.display()));
        }
    }
    names.push(format!("libamd_comgr.so.{major}"));
    names.push(format!("/opt/rocm/lib/libamd_comgr.so.{major}"));
    names
}

/// comgr, opened once per process. The first failure is kept and returned on every later call.
pub(crate) fn lib() -> Result<&'static Comgr> {
    static LIB: OnceLock<std::result::Result<Comgr, Vec<String>>> = OnceLock::new();
    LIB.get_or_init(open)
        .as_ref()
        .map_err(|tried| Error::LibraryNotFound {
            library: "comgr (libamd_comgr)",
            tried: tried.clone(),
            install:
                "Debian/Ubuntu: apt-get install libamd-comgr-dev (ROCm: the amd-comgr package)",
        })
}

fn open() -> std::result::Result<Comgr, Vec<String>> {
    let mut tried = Vec::new();
    for name in candidates() {
        // SAFETY: opening the library runs comgr's initialisers, which have no preconditions; its symbols
        // are typed from the header of the interface major version checked just below before any other
        // function is called.
        let lib = match unsafe { sys::Comgr::new(&name) } {
            Ok(lib) => lib,
            Err(e) => {
                tried.push(format!("{name}: {e}"));
                continue;
            }
        };
        let Ok(get_version) = lib.amd_comgr_get_version.as_ref() else {
            tried.push(format!("{name}: no amd_comgr_get_version"));
            continue;
        };
        let (mut major, mut minor) = (0, 0);
        // SAFETY: two out-pointers to live local `usize`s (`size_t`), the signature of every interface
        // version.
        unsafe { get_version(&mut major, &mut minor) };
        if major != sys::AMD_COMGR_INTERFACE_VERSION_MAJOR as usize {
            tried.push(format!(
                "{name}: interface {major}.{minor}, but these bindings come from a {}.x header",
                sys::AMD_COMGR_INTERFACE_VERSION_MAJOR
            ));
            continue;
        }
        let path = loaded_from(*get_version as *const std::ffi::c_void);
        return Ok(Comgr {
            lib,
            version: (major, minor),
            path,
        });
    }
    Err(tried)
}

/// The file holding the code at `addr`, as the dynamic loader reports it.
#[cfg(unix)]
fn loaded_from(addr: *const libc::c_void) -> Option<PathBuf> {
    // SAFETY: `Dl_info` is a C struct of pointers and integers, for which all-zero bits (null pointers)
    // are a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only looks `addr` up (it dereferences nothing there) and fills `info`, a live local.
    if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: non-null (checked): dladdr pointed it at the loaded object's NUL-terminated path name,
    // owned by the dynamic loader while that object stays loaded, as it does here (the caller holds the
    // library open); it is copied out below.
    let name = unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy();
    std::fs::canonicalize(name.as_ref()).ok()
}

/// Not Unix: not asked (`dladdr` is Unix's); the fingerprint then has the interface version only.
#[cfg(not(unix))]
fn loaded_from(_addr: *const std::ffi::c_void) -> Option<PathBuf> {
    None
}

/// What identifies the installed comgr for the compile cache: its interface version, and the real path,
/// size and modification time of its library (a new comgr package changes them; hashing the ~60 MB file
/// would cost more than the cache saves on a first hit). `None` where no comgr can be opened.
pub(crate) fn fingerprint() -> Option<String> {
    let c = any()?;
    let (major, minor) = c.version;
    let file = c.path.as_ref().and_then(|p| {
        let meta = std::fs::metadata(p).ok()?;
        let mtime = meta
            .modified()
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?;
        Some(format!(
            "{} {} {}",
            p.display(),
            meta.len(),
            mtime.as_nanos()
        ))
    });
    Some(format!(
        "comgr {major}.{minor} {}",
        file.unwrap_or_default()
    ))
}

/// comgr for the queries whose functions and values are the same in every interface version: its version,
/// its ISA names and ISA metadata (`amd_comgr_get_version`, `_get_isa_count`, `_get_isa_name`,
/// `_get_isa_metadata`, the metadata node functions; success is 0 in both 2.x and 3.x). That is [`lib`]
/// where it opens, else any installed comgr: a `dynamic-loading` binary built on ROCm 5 (interface 2)
/// running on ROCm 6 or 7 (interface 3) must still check targets, since HIPRTC 5.2.3 and 6.4.3 abort the
/// process on an unknown one (seen: `free(): invalid pointer` on 6.4.3). Never used for actions or data
/// kinds, whose values changed.
pub(crate) fn any() -> Option<&'static Comgr> {
    if let Ok(c) = lib() {
        return Some(c);
    }
    static ANY: OnceLock<Option<Comgr>> = OnceLock::new();
    ANY.get_or_init(|| {
        for name in ["libamd_comgr.so.3", "libamd_comgr.so.2", "libamd_comgr.so"] {
            // SAFETY: opening comgr runs initialisers without preconditions; only the functions named
            // above, whose signatures every interface version shares, are called through this handle.
            let Ok(lib) = (unsafe { sys::Comgr::new(name) }) else {
                continue;
            };
            let Ok(get_version) = lib.amd_comgr_get_version.as_ref() else {
                continue;
            };
            let (mut major, mut minor) = (0, 0);
            // SAFETY: as in `open`: two out-pointers to live locals, the signature of every version.
            unsafe { get_version(&mut major, &mut minor) };
            let path = loaded_from(*get_version as *const std::ffi::c_void);
            return Some(Comgr {
                lib,
                version: (major, minor),
                path,
            });
        }
        None
    })
    .as_ref()
}

/// The function `f` of the loaded comgr, or `NotSupported` naming it where this comgr lacks it.
fn func<'a, T>(
    f: &'a std::result::Result<T, libloading::Error>,
    name: &'static str,
) -> Result<&'a T> {
    f.as_ref().map_err(|_| Error::NotSupported {
        what: name,
        reason: "the installed comgr does not export this function",
    })
}

impl Comgr {
    /// The raw functions, for callers in this crate that read comgr's metadata (`rtc::arch`).
    pub(crate) fn raw(&self) -> &sys::Comgr {
        &self.lib
    }

    /// An error for `status` returned by `call`, with comgr's own text for it.
    fn check(&self, call: &'static str, status: sys::amd_comgr_status_t) -> Result<()> {
        if status == sys::AMD_COMGR_STATUS_SUCCESS {
            return Ok(());
        }
        let mut text: *const c_char = std::ptr::null();
        let message = match self.lib.amd_comgr_status_string.as_ref() {
            Ok(f)
                // SAFETY: a status value and an out-pointer to a live local; comgr answers any status
                // with a static string, or an error for one it does not know.
                if unsafe { f(status, &mut text) } == sys::AMD_COMGR_STATUS_SUCCESS
                    && !text.is_null() =>
            {
                // SAFETY: non-null (checked) and set by comgr on success to a static NUL-terminated
                // string; copied out at once.
                unsafe { CStr::from_ptr(text) }
                    .to_string_lossy()
                    .into_owned()
            }
            _ => String::new(),
        };
        // The enum's C type is the compiler's choice (unsigned here, int elsewhere).
        #[allow(clippy::unnecessary_cast)]
        let status = status as u32;
        Err(Error::Comgr {
            call,
            status,
            message,
            log: None,
        })
    }
}

/// A comgr data object (`amd_comgr_data_t`), released on drop.
pub(crate) struct Data<'c> {
    comgr: &'c Comgr,
    raw: sys::amd_comgr_data_t,
}

impl<'c> Data<'c> {
    /// `amd_comgr_create_data` + `amd_comgr_set_data` + `amd_comgr_set_data_name`.
    pub(crate) fn new(
        comgr: &'c Comgr,
        kind: sys::amd_comgr_data_kind_t,
        bytes: &[u8],
        name: &str,
    ) -> Result<Self> {
        let name = CString::new(name).map_err(|_| Error::InteriorNul {
            what: "link input name",
            value: name.to_string(),
        })?;
        let mut raw = sys::amd_comgr_data_t::default();
        let create = func(&comgr.lib.amd_comgr_create_data, "amd_comgr_create_data")?;
        // SAFETY: a data kind and an out-pointer to a live local handle. (The functions are those of
        // `comgr`; only `lib()`'s, whose interface version matches the header, creates data objects.)
        comgr.check("amd_comgr_create_data", unsafe { create(kind, &mut raw) })?;
        let data = Data { comgr, raw };
        let set = func(&comgr.lib.amd_comgr_set_data, "amd_comgr_set_data")?;
        // SAFETY: `raw` is the data object created above (owned by `data`); comgr copies `bytes.len()`
        // bytes from the live slice during the call.
        comgr.check("amd_comgr_set_data", unsafe {
            set(raw, bytes.len(), bytes.as_ptr() as *const c_char)
        })?;
        let set_name = func(
            &comgr.lib.amd_comgr_set_data_name,
            "amd_comgr_set_data_name",
        )?;
        // SAFETY: `raw` is live (owned by `data`); `name` is a NUL-terminated CString that outlives the
        // call, and comgr keeps its own copy of the string.
        comgr.check("amd_comgr_set_data_name", unsafe {
            set_name(raw, name.as_ptr())
        })?;
        Ok(data)
    }

    /// The data's bytes, copied out (`amd_comgr_get_data`, asked for the size first).
    pub(crate) fn bytes(&self) -> Result<Vec<u8>> {
        let get = func(&self.comgr.lib.amd_comgr_get_data, "amd_comgr_get_data")?;
        let mut size = 0usize;
        // SAFETY: `self.raw` is live (released only in Drop); with a null buffer comgr only writes the
        // size to `size`, a live local.
        self.comgr.check("amd_comgr_get_data", unsafe {
            get(self.raw, &mut size, std::ptr::null_mut())
        })?;
        let mut buf = vec![0u8; size];
        // SAFETY: `buf` is a live buffer of `size` bytes, the size comgr just gave, and comgr writes at
        // most `size` bytes to it.
        self.comgr.check("amd_comgr_get_data", unsafe {
            get(self.raw, &mut size, buf.as_mut_ptr() as *mut c_char)
        })?;
        buf.truncate(size);
        Ok(buf)
    }
}

impl Drop for Data<'_> {
    fn drop(&mut self) {
        if let Ok(release) = self.comgr.lib.amd_comgr_release_data.as_ref() {
            // SAFETY: this `Data` owns one reference to `self.raw` (from amd_comgr_create_data, or
            // amd_comgr_action_data_get_data, which adds one), released once, here.
            let _ = unsafe { release(self.raw) };
        }
    }
}

/// A comgr data set (`amd_comgr_data_set_t`), destroyed on drop.
pub(crate) struct DataSet<'c> {
    comgr: &'c Comgr,
    raw: sys::amd_comgr_data_set_t,
}

impl<'c> DataSet<'c> {
    /// `amd_comgr_create_data_set`.
    pub(crate) fn new(comgr: &'c Comgr) -> Result<Self> {
        let create = func(
            &comgr.lib.amd_comgr_create_data_set,
            "amd_comgr_create_data_set",
        )?;
        let mut raw = sys::amd_comgr_data_set_t::default();
        // SAFETY: an out-pointer to a live local handle.
        comgr.check("amd_comgr_create_data_set", unsafe { create(&mut raw) })?;
        Ok(DataSet { comgr, raw })
    }

    /// `amd_comgr_data_set_add`: the set takes its own reference; `data` may be dropped after.
    pub(crate) fn add(&self, data: &Data<'_>) -> Result<()> {
        let add = func(
            &self.comgr.lib.amd_comgr_data_set_add,
            "amd_comgr_data_set_add",
        )?;
        self.comgr
            // SAFETY: both handles are live (each until its owner drops); the set takes its own reference
            // to the data object.
            .check("amd_comgr_data_set_add", unsafe { add(self.raw, data.raw) })
    }

    /// Every data object of `kind` in the set (`amd_comgr_action_data_count` / `_get_data`).
    pub(crate) fn all(&self, kind: sys::amd_comgr_data_kind_t) -> Result<Vec<Data<'c>>> {
        let count = func(
            &self.comgr.lib.amd_comgr_action_data_count,
            "amd_comgr_action_data_count",
        )?;
        let get = func(
            &self.comgr.lib.amd_comgr_action_data_get_data,
            "amd_comgr_action_data_get_data",
        )?;
        let mut n = 0usize;
        // SAFETY: `self.raw` is live, `kind` a data kind, `n` a live local.
        self.comgr.check("amd_comgr_action_data_count", unsafe {
            count(self.raw, kind, &mut n)
        })?;
        (0..n)
            .map(|i| {
                let mut raw = sys::amd_comgr_data_t::default();
                // SAFETY: `self.raw` is live, `i` < the count just read, `raw` a live local; the
                // returned data object carries a new reference, which the `Data` below releases.
                self.comgr.check("amd_comgr_action_data_get_data", unsafe {
                    get(self.raw, kind, i, &mut raw)
                })?;
                Ok(Data {
                    comgr: self.comgr,
                    raw,
                })
            })
            .collect()
    }

    /// The text of every log in the set, joined.
    pub(crate) fn log(&self) -> String {
        let logs = self.all(sys::AMD_COMGR_DATA_KIND_LOG).unwrap_or_default();
        logs.iter()
            .filter_map(|d| d.bytes().ok())
            .map(|b| {
                String::from_utf8_lossy(&b)
                    .trim_end_matches('\0')
                    .to_string()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for DataSet<'_> {
    fn drop(&mut self) {
        if let Ok(destroy) = self.comgr.lib.amd_comgr_destroy_data_set.as_ref() {
            // SAFETY: the set was created by `DataSet::new` (or handed to `run` as its output) and is
            // destroyed only here, once; data objects taken from it hold their own references.
            let _ = unsafe { destroy(self.raw) };
        }
    }
}

/// A comgr action info (`amd_comgr_action_info_t`): target ISA, language, options, logging.
pub(crate) struct ActionInfo<'c> {
    comgr: &'c Comgr,
    raw: sys::amd_comgr_action_info_t,
}

impl<'c> ActionInfo<'c> {
    /// An action info for HIP code of target `isa` (`amdgcn-amd-amdhsa--gfx90a`), logging on.
    pub(crate) fn new(comgr: &'c Comgr, isa: &str) -> Result<Self> {
        let create = func(
            &comgr.lib.amd_comgr_create_action_info,
            "amd_comgr_create_action_info",
        )?;
        let mut raw = sys::amd_comgr_action_info_t::default();
        // SAFETY: an out-pointer to a live local handle.
        comgr.check("amd_comgr_create_action_info", unsafe { create(&mut raw) })?;
        let info = ActionInfo { comgr, raw };
        let isa = CString::new(isa).map_err(|_| Error::InteriorNul {
            what: "target ISA",
            value: isa.to_string(),
        })?;
        let set_isa = func(
            &comgr.lib.amd_comgr_action_info_set_isa_name,
            "amd_comgr_action_info_set_isa_name",
        )?;
        // SAFETY: `raw` is live (owned by `info`); `isa` is a NUL-terminated CString that outlives the
        // call, and comgr keeps its own copy.
        comgr.check("amd_comgr_action_info_set_isa_name", unsafe {
            set_isa(raw, isa.as_ptr())
        })?;
        let set_lang = func(
            &comgr.lib.amd_comgr_action_info_set_language,
            "amd_comgr_action_info_set_language",
        )?;
        // SAFETY: `raw` is live; the language is a value of the header's enum.
        comgr.check("amd_comgr_action_info_set_language", unsafe {
            set_lang(raw, sys::AMD_COMGR_LANGUAGE_HIP)
        })?;
        let set_logging = func(
            &comgr.lib.amd_comgr_action_info_set_logging,
            "amd_comgr_action_info_set_logging",
        )?;
        // SAFETY: `raw` is live; a plain bool.
        comgr.check("amd_comgr_action_info_set_logging", unsafe {
            set_logging(raw, true)
        })?;
        Ok(info)
    }

    /// `amd_comgr_action_info_set_option_list`: the options the next actions run with.
    pub(crate) fn set_options(&self, options: &[CString]) -> Result<()> {
        let set = func(
            &self.comgr.lib.amd_comgr_action_info_set_option_list,
            "amd_comgr_action_info_set_option_list",
        )?;
        let mut ptrs: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
        self.comgr
            // SAFETY: `self.raw` is live; `ptrs` holds `ptrs.len()` pointers to NUL-terminated strings
            // (`options`, borrowed for the call), and comgr keeps its own copies of them.
            .check("amd_comgr_action_info_set_option_list", unsafe {
                set(self.raw, ptrs.as_mut_ptr(), ptrs.len())
            })
    }

    /// `amd_comgr_do_action`: run `action` on `input` into a new set. A failure carries the action's log.
    pub(crate) fn run(
        &self,
        call: &'static str,
        action: sys::amd_comgr_action_kind_t,
        input: &DataSet<'c>,
    ) -> Result<DataSet<'c>> {
        let run = func(&self.comgr.lib.amd_comgr_do_action, "amd_comgr_do_action")?;
        let output = DataSet::new(self.comgr)?;
        // SAFETY: the action info, the input set and the new output set are live handles (each until its
        // owner drops); comgr only reads the first two and adds results to the output.
        let status = unsafe { run(action, self.raw, input.raw, output.raw) };
        match self.comgr.check(call, status) {
            Ok(()) => Ok(output),
            Err(Error::Comgr {
                call,
                status,
                message,
                ..
            }) => Err(Error::Comgr {
                call,
                status,
                message,
                log: Some(output.log()),
            }),
            Err(e) => Err(e),
        }
    }
}

impl Drop for ActionInfo<'_> {
    fn drop(&mut self) {
        if let Ok(destroy) = self.comgr.lib.amd_comgr_destroy_action_info.as_ref() {
            // SAFETY: the action info was created by `ActionInfo::new` and is destroyed only here, once.
            let _ = unsafe { destroy(self.raw) };
        }
    }
}
