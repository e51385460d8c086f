//! The raw C++ baseline (`bench/baseline/baseline.cpp`), loaded from the shared library scripts/bench.sh
//! builds, so it runs in this process on the same device, interleaved with the Rust contenders.
use hip::sys::{hipEvent_t, hipFunction_t, hipStream_t};
use std::ffi::{c_char, c_int, c_void, CStr, CString};

type Init = unsafe extern "C" fn(c_int) -> c_int;
type LaunchEmpty = unsafe extern "C" fn(hipFunction_t, c_int, u32) -> f64;
type Launch8 = unsafe extern "C" fn(
    hipFunction_t,
    c_int,
    u32,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    f32,
    f32,
    u32,
    u32,
) -> f64;
type Copy = unsafe extern "C" fn(c_int, *mut c_void, *const c_void, usize, c_int) -> f64;
type Events = unsafe extern "C" fn(c_int) -> f64;
type EventsOn = unsafe extern "C" fn(hipEvent_t, hipStream_t, c_int) -> c_int;
type LaunchOnly = unsafe extern "C" fn(hipFunction_t, c_int, u32, hipStream_t) -> c_int;
type LaunchArgs = unsafe extern "C" fn(
    hipFunction_t,
    c_int,
    u32,
    hipStream_t,
    hipStream_t,
    *mut *mut c_void,
) -> c_int;
type GraphReplay = unsafe extern "C" fn(hipFunction_t, c_int, c_int, u32, *mut f64) -> f64;
type Compile = unsafe extern "C" fn(*const c_char, *const c_char, *const c_char, *mut usize) -> f64;
type Pipeline = unsafe extern "C" fn(
    hipFunction_t,
    *mut f32,
    *mut f32,
    *mut f32,
    usize,
    c_int,
    c_int,
    u32,
) -> f64;

/// The baseline's entry points (see baseline.cpp for what each measures).
pub struct Baseline {
    pub launch_empty: LaunchEmpty,
    pub launch_8: Launch8,
    pub copy: Copy,
    pub event_record_query: Events,
    pub event_record_query_on: EventsOn,
    pub compile: Compile,
    pub pipeline: Pipeline,
    pub graph_replay: GraphReplay,
    pub launch_only: LaunchOnly,
    pub launch_args: LaunchArgs,
    init: Init,
}

/// The function `name` in `lib` as an `F`.
///
/// # Safety
/// `F` is a function pointer type matching the symbol's C signature.
unsafe fn symbol<F>(lib: *mut c_void, path: &str, name: &CStr) -> Result<F, String> {
    let p = libc::dlsym(lib, name.as_ptr());
    if p.is_null() {
        return Err(format!("{path} has no symbol {name:?}"));
    }
    Ok(std::mem::transmute_copy::<*mut c_void, F>(&p))
}

impl Baseline {
    /// Load the library at `path`.
    pub fn load(path: &str) -> Result<Baseline, String> {
        let c = CString::new(path).map_err(|_| "library path contains NUL".to_string())?;
        // SAFETY: dlopen/dlsym with valid C strings; the symbols are the extern "C" functions of
        // baseline.cpp with exactly these signatures, and the library is never unloaded.
        unsafe {
            let lib = libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL);
            if lib.is_null() {
                let why = CStr::from_ptr(libc::dlerror())
                    .to_string_lossy()
                    .into_owned();
                return Err(format!("cannot load the C++ baseline {path}: {why}"));
            }
            Ok(Baseline {
                launch_empty: symbol(lib, path, c"bl_launch_empty")?,
                launch_8: symbol(lib, path, c"bl_launch_8")?,
                copy: symbol(lib, path, c"bl_copy")?,
                event_record_query: symbol(lib, path, c"bl_event_record_query")?,
                event_record_query_on: symbol(lib, path, c"bl_event_record_query_on")?,
                compile: symbol(lib, path, c"bl_compile")?,
                pipeline: symbol(lib, path, c"bl_pipeline")?,
                graph_replay: symbol(lib, path, c"bl_graph_replay")?,
                launch_only: symbol(lib, path, c"bl_launch_only")?,
                launch_args: symbol(lib, path, c"bl_launch_args")?,
                init: symbol(lib, path, c"bl_init")?,
            })
        }
    }

    /// Bind device `ordinal` and create the baseline's stream.
    pub fn init(&self, ordinal: usize) -> Result<(), String> {
        match unsafe { (self.init)(ordinal as c_int) } {
            0 => Ok(()),
            rc => Err(format!("bl_init failed ({rc})")),
        }
    }
}

/// A baseline timing, or the failure it signalled (negative).
pub fn checked(what: &str, ns: f64) -> Result<f64, String> {
    if ns < 0.0 {
        Err(format!("C++ baseline: {what} failed ({ns})"))
    } else {
        Ok(ns)
    }
}
