//! HIPRTC: compile HIP C++ source to a code object at run time.
//!
//! ```no_run
//! use hip::rtc::ProgramBuilder;
//! let compiled = ProgramBuilder::new(r#"extern "C" __global__ void k(float* x) { x[threadIdx.x] = 1.0f; }"#)
//!     .arch("gfx90a") // without it, the current device's architecture
//!     .compile()?;
//! assert!(!compiled.code().is_empty());
//! # Ok::<(), hip::Error>(())
//! ```
//!
//! Compiles are cached on disk by default (see [`cache`]): compiling the same program again with the same
//! toolchain returns the stored result without running the compiler.

mod arch;
mod bitcode;
pub mod cache;
mod comgr;
#[cfg(hip_platform = "amd")]
mod comgr_meta;
mod diagnostics;
mod half;
mod link;
mod options;
mod result;

pub use cache::{CacheOutcome, CompileCache};
pub use half::HALF_HEADER;
pub use link::{LinkInput, Linker};

use crate::device::Device;
use crate::error::{Error, Result};
use crate::module::cstring;
use std::ffi::{c_char, CString};

/// HIPRTC's version, `(major, minor)` (`hiprtcVersion`).
///
/// # Errors
///
/// [`Error::Rtc`] with what `hiprtcVersion` returns; with `dynamic-loading`, [`Error::LibraryNotFound`]
/// where HIPRTC could not be opened.
///
/// ```no_run
/// let (major, minor) = hip::rtc::version()?;
/// println!("HIPRTC {major}.{minor}");
/// # Ok::<(), hip::Error>(())
/// ```
pub fn version() -> Result<(i32, i32)> {
    result::version()
}

/// Whether this HIPRTC has the linker and bitcode APIs (`hiprtcLink*`, `hiprtcGetBitcode`; ROCm >= 5.3).
pub const HAS_LINKER: bool = cfg!(hiprtc_linker);

/// What to compile and how: source, program name, headers, options, target architecture, name expressions.
#[derive(Clone, Debug)]
pub struct ProgramBuilder {
    source: String,
    name: String,
    headers: Vec<(String, String)>,
    options: Vec<String>,
    arch: Option<String>,
    name_expressions: Vec<String>,
    cache: CacheChoice,
}

/// Which compile cache a builder uses.
#[derive(Clone, Debug)]
enum CacheChoice {
    /// The one the environment chooses, looked up at each compile ([`CompileCache::from_env`]).
    FromEnv,
    Off,
    Use(CompileCache),
}

/// The result of a successful compile: the code object, the compiler's log, and the lowered names of the
/// name expressions, all owned (copied out before the HIPRTC program was destroyed, or read from the
/// compile cache).
///
/// Two programs are equal when their code, log and lowered names are; how each was obtained
/// ([`cache_outcome`](Self::cache_outcome)) is not compared.
#[derive(Clone, Debug)]
pub struct CompiledProgram {
    code: Vec<u8>,
    log: String,
    lowered_names: Vec<(String, String)>,
    cache_outcome: CacheOutcome,
}

impl PartialEq for CompiledProgram {
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code
            && self.log == other.log
            && self.lowered_names == other.lowered_names
    }
}

impl Eq for CompiledProgram {}

impl CompiledProgram {
    /// The code object (AMD: an ELF for the target; NVIDIA: PTX) or, from
    /// [`ProgramBuilder::compile_bitcode`], LLVM bitcode.
    pub fn code(&self) -> &[u8] {
        &self.code
    }

    /// The code, owned.
    pub fn into_code(self) -> Vec<u8> {
        self.code
    }

    /// The compiler's log (warnings), often empty.
    pub fn log(&self) -> &str {
        &self.log
    }

    /// The lowered (mangled) name of a name expression added with [`ProgramBuilder::name_expression`].
    pub fn lowered_name(&self, expr: &str) -> Option<&str> {
        self.lowered_names
            .iter()
            .find(|(e, _)| e == expr)
            .map(|(_, l)| l.as_str())
    }

    /// Every `(name expression, lowered name)` pair.
    pub fn lowered_names(&self) -> &[(String, String)] {
        &self.lowered_names
    }

    /// What the compile cache did: [`CacheOutcome::Hit`] when this came from it without compiling.
    pub fn cache_outcome(&self) -> &CacheOutcome {
        &self.cache_outcome
    }

    /// Put together a compiled program from its parts (for caches of the caller's own). Its
    /// [`cache_outcome`](Self::cache_outcome) is [`CacheOutcome::Off`].
    pub fn from_parts(code: Vec<u8>, log: String, lowered_names: Vec<(String, String)>) -> Self {
        CompiledProgram {
            code,
            log,
            lowered_names,
            cache_outcome: CacheOutcome::Off,
        }
    }
}

/// A created HIPRTC program, destroyed on drop.
struct RawProgram(hiprtc_sys::hiprtcProgram);

impl Drop for RawProgram {
    fn drop(&mut self) {
        // SAFETY: `self.0` was created by hiprtcCreateProgram in `compile_with`, the only place a
        // RawProgram is made, and is destroyed only here, once; on AMD the HIPRTC lock is still held
        // (`_serialised` is declared before the program there, so it drops after it).
        let _ = unsafe { result::destroy_program(self.0) };
    }
}

impl ProgramBuilder {
    /// A program from HIP C++ source, named `program.hip` unless [`name`](Self::name) says otherwise.
    pub fn new(source: impl Into<String>) -> Self {
        ProgramBuilder {
            source: source.into(),
            name: "program.hip".into(),
            headers: Vec::new(),
            options: Vec::new(),
            arch: None,
            name_expressions: Vec::new(),
            cache: CacheChoice::FromEnv,
        }
    }

    /// The program's file name, as diagnostics show it.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// A header the source can `#include` by `include_name`.
    pub fn header(mut self, include_name: impl Into<String>, contents: impl Into<String>) -> Self {
        self.headers.push((include_name.into(), contents.into()));
        self
    }

    /// A compiler option, e.g. `-O3` or `-DN=4`. Options are passed in the order given. Options that
    /// mean the same on both platforms are given each compiler's spelling (`-O3`, `-g` and `-ffast-math`
    /// on HIP's NVIDIA platform, where NVRTC compiles; `--use_fast_math`, `-lineinfo` and `-G` on AMD);
    /// one with no equivalent there (`-O0` on NVIDIA) is [`Error::InvalidOption`] naming the platform
    /// and what to use instead: the table is at [`ProgramBuilder::resolved_options`].
    pub fn option(mut self, option: impl Into<String>) -> Self {
        self.options.push(option.into());
        self
    }

    /// Several compiler options.
    pub fn options<S: Into<String>>(mut self, options: impl IntoIterator<Item = S>) -> Self {
        self.options.extend(options.into_iter().map(Into::into));
        self
    }

    /// The target architecture (`gfx90a`, `gfx90a:sramecc+:xnack-`; NVIDIA: `compute_90`), passed as
    /// `--gpu-architecture=`. Without it, and without such an option, the current device's is used.
    pub fn arch(mut self, arch: impl Into<String>) -> Self {
        self.arch = Some(arch.into());
        self
    }

    /// A name expression (e.g. `my_kernel<float>`) whose lowered name the compile should return.
    pub fn name_expression(mut self, expr: impl Into<String>) -> Self {
        self.name_expressions.push(expr.into());
        self
    }

    /// Use this compile cache instead of the one the environment chooses (see [`cache`]).
    pub fn cache(mut self, cache: CompileCache) -> Self {
        self.cache = CacheChoice::Use(cache);
        self
    }

    /// Always compile; neither read nor write any compile cache.
    pub fn no_cache(mut self) -> Self {
        self.cache = CacheChoice::Off;
        self
    }

    /// The options exactly as they go to HIPRTC: the given ones in this platform's spelling, then
    /// `--gpu-architecture=` where needed. Resolves the architecture from the current device when none
    /// was given.
    ///
    /// The spellings (HIPRTC is clang on AMD and NVRTC on NVIDIA):
    ///
    /// | option | AMD (clang) | NVIDIA (NVRTC) |
    /// | --- | --- | --- |
    /// | `-O3`, `-O2`, `-O1` | as is | dropped: NVRTC always optimises device code fully |
    /// | `-O0` | as is | refused: NVRTC's only unoptimised mode is `-G`, which adds debug info |
    /// | `-Os`, `-Oz`, `-Ofast`, other `-O` | as is | refused, naming the platform |
    /// | `-g` | as is | `-lineinfo` (line tables; `-G` would also turn optimisation off) |
    /// | `-ffast-math` | as is | `--use_fast_math` |
    /// | `--use_fast_math`, `-use_fast_math` | `-ffast-math` | as is |
    /// | `-lineinfo`, `--generate-line-info` | `-gline-tables-only` | as is |
    /// | `-G`, `--device-debug` | `-g -O0` | as is |
    ///
    /// Everything else (`-std=`, `-D`, `-U`, `-I`, warnings) passes unchanged. A switch that ends up
    /// given twice (`-ffast-math` and `--use_fast_math`) is passed once: NVRTC refuses repeats.
    ///
    /// Checked first, before any option is read: no string of the builder (source, program name,
    /// headers, options, architecture, name expressions) holds a NUL byte, which would end it early where
    /// HIPRTC reads it ([`Error::InteriorNul`] naming which).
    ///
    /// # Errors
    ///
    /// [`Error::InteriorNul`] for a NUL byte in any string of the builder; [`Error::InvalidOption`] for
    /// an option this platform refuses (above) or a second target; [`Error::UnknownArch`] or
    /// [`Error::UnsupportedArchFeature`] for a target HIPRTC does not know; without an architecture,
    /// [`Error::ArchRequired`] where no device is usable, and what HIP returns for asking the current
    /// device's.
    ///
    /// ```no_run
    /// use hip::rtc::ProgramBuilder;
    ///
    /// let options = ProgramBuilder::new("__global__ void k() {}")
    ///     .option("-ffast-math")
    ///     .arch("gfx90a")
    ///     .resolved_options()?;
    /// assert_eq!(options.last().map(String::as_str), Some("--gpu-architecture=gfx90a"));
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn resolved_options(&self) -> Result<Vec<String>> {
        self.check_nuls()?;
        let mut options = options::portable_all(&self.options, options::Compiler::CURRENT)?;
        // Every option is checked, not only those that start like a target option: HIPRTC 5.2.3 reads
        // `--offload-arch=` anywhere in an option (even inside a -D value) and then aborts the process.
        let mut target: Option<&str> = None;
        for o in &self.options {
            if let arch::OptionTarget::Arch(a) = arch::check_option(o)? {
                one_target(&mut target, a, o)?;
            }
        }
        if let Some(a) = &self.arch {
            arch::check(a)?;
            one_target(&mut target, a, a)?;
            options.push(format!("--gpu-architecture={a}"));
        } else if target.is_none() {
            options.push(format!("--gpu-architecture={}", current_device_arch()?));
        }
        Ok(options)
    }

    /// Compile to a code object for the target architecture (set with [`arch`](Self::arch), else the
    /// current device's).
    ///
    /// Blocks the calling thread for the whole compile: 0.2 to 0.6 s for a small kernel on a 2-core
    /// machine, longer for large sources. On AMD, compiles are serialised process-wide (HIPRTC is not
    /// thread-safe there). A hit in the persistent compile cache (on unless `HIP_RS_CACHE_DISABLE` is set; see
    /// [`CompileCache`]) returns in well under a millisecond instead.
    ///
    /// # Errors
    ///
    /// [`Error::Rtc`] with `HIPRTC_ERROR_COMPILATION` and the full log for a compile error;
    /// [`Error::InteriorNul`] for a NUL byte in any string of the builder; [`Error::InvalidOption`] or
    /// [`Error::UnknownArch`] for a bad option or architecture; without an architecture and without a
    /// usable GPU, [`Error::ArchRequired`].
    ///
    /// ```no_run
    /// use hip::rtc::ProgramBuilder;
    ///
    /// let code = ProgramBuilder::new(r#"extern "C" __global__ void k(float* x) { x[threadIdx.x] = 1.0f; }"#)
    ///     .arch("gfx90a") // no GPU needed with an explicit architecture
    ///     .compile()?;
    /// assert!(!code.code().is_empty());
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn compile(&self) -> Result<CompiledProgram> {
        let options = self.resolved_options()?;
        // SAFETY: `compile_with` calls this only with its live program, once hiprtcCompileProgram
        // succeeded.
        self.compile_cached("code", &options, |prog| unsafe { result::code(prog) })
    }

    /// Compile with `-fgpu-rdc` to LLVM bitcode, for a [`Linker`]. Needs HIPRTC >= 5.3
    /// ([`HAS_LINKER`]); older ones give [`Error::NotSupported`] without compiling.
    ///
    /// # Errors
    ///
    /// [`Error::NotSupported`] without the linker API; otherwise what [`compile`](Self::compile)
    /// returns ([`Error::Rtc`] with the log for a compile error, [`Error::InteriorNul`],
    /// [`Error::InvalidOption`], [`Error::UnknownArch`], [`Error::ArchRequired`]).
    ///
    /// ```no_run
    /// use hip::rtc::{LinkInput, Linker, ProgramBuilder};
    ///
    /// let helper = ProgramBuilder::new(r#"__device__ float twice(float x) { return 2 * x; }"#)
    ///     .arch("gfx90a")
    ///     .compile_bitcode()?;
    /// let mut linker = Linker::for_arch("gfx90a", [] as [&str; 0])?;
    /// linker.add_data(LinkInput::Bitcode, helper.code(), "helper")?;
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn compile_bitcode(&self) -> Result<CompiledProgram> {
        #[cfg(hiprtc_linker)]
        {
            let mut options = self.resolved_options()?;
            options.push("-fgpu-rdc".into());
            // SAFETY: as in `compile`; the options carry the `-fgpu-rdc` pushed just above.
            self.compile_cached("bitcode", &options, |prog| unsafe { result::bitcode(prog) })
        }
        #[cfg(not(hiprtc_linker))]
        {
            Err(link::not_supported("hiprtcGetBitcode"))
        }
    }

    /// Look the compile up in the cache, else compile and store it. `output` names what `get_output`
    /// returns, for the key.
    fn compile_cached(
        &self,
        output: &'static str,
        options: &[String],
        get_output: impl FnOnce(hiprtc_sys::hiprtcProgram) -> Result<Vec<u8>>,
    ) -> Result<CompiledProgram> {
        self.check_inputs()?;
        let cache = match &self.cache {
            CacheChoice::FromEnv => CompileCache::from_env(),
            CacheChoice::Off => None,
            CacheChoice::Use(c) => Some(c.clone()),
        };
        let Some(cache) = cache else {
            return self.compile_with(options, get_output);
        };
        let Some(toolchain) = cache::Toolchain::current() else {
            let mut program = self.compile_with(options, get_output)?;
            program.cache_outcome =
                CacheOutcome::NotStored("the HIPRTC or HIP runtime version is unknown".into());
            return Ok(program);
        };
        let request = cache::Request {
            output,
            source: &self.source,
            name: &self.name,
            headers: &self.headers,
            options,
            name_expressions: &self.name_expressions,
        };
        let key = cache::Key::new(toolchain, &request);
        let mut uncacheable = cache::options_read_files(&request);
        if uncacheable.is_none() {
            if let Some(hit) = cache.load(&key) {
                return Ok(hit);
            }
            // Only texts that passed this scan are ever stored, and the key holds the texts: a lookup
            // needs no scan, a store does.
            uncacheable = cache::texts_read_files(&request);
        }
        let mut program = self.compile_with(options, get_output)?;
        program.cache_outcome = match uncacheable {
            Some(reason) => CacheOutcome::NotStored(reason),
            None => cache.store(&key, &program),
        };
        Ok(program)
    }

    /// Refuse a NUL byte in any string of the builder ([`Error::InteriorNul`] naming which): C reads each
    /// only up to its first NUL.
    fn check_nuls(&self) -> Result<()> {
        let nul = |what: &'static str, s: &str| {
            if s.contains('\0') {
                Err(Error::InteriorNul {
                    what,
                    value: s.to_string(),
                })
            } else {
                Ok(())
            }
        };
        nul("kernel source", &self.source)?;
        nul("program name", &self.name)?;
        for (name, contents) in &self.headers {
            nul("header name", name)?;
            nul("header contents", contents)?;
        }
        for o in &self.options {
            nul("compiler option", o)?;
        }
        if let Some(a) = &self.arch {
            nul("target architecture", a)?;
        }
        for e in &self.name_expressions {
            nul("name expression", e)?;
        }
        Ok(())
    }

    /// Refuse inputs HIPRTC would answer with a bare `HIPRTC_ERROR_INVALID_INPUT`, naming what is wrong.
    fn check_inputs(&self) -> Result<()> {
        let bad = |what: &'static str, value: &str, reason: &str| {
            Err(Error::InvalidArgument {
                what,
                value: value.to_string(),
                reason: reason.to_string(),
            })
        };
        if self.source.is_empty() {
            return bad("kernel source", "", "it is empty");
        }
        if let Some((n, _)) = self.headers.iter().find(|(n, _)| n.trim().is_empty()) {
            return bad(
                "header name",
                n,
                "it is empty; give the name the source #includes",
            );
        }
        if let Some(e) = self.name_expressions.iter().find(|e| e.trim().is_empty()) {
            return bad(
                "name expression",
                e,
                "it is empty; give a kernel or variable name such as `fill<float>`",
            );
        }
        Ok(())
    }

    fn compile_with(
        &self,
        options: &[String],
        output: impl FnOnce(hiprtc_sys::hiprtcProgram) -> Result<Vec<u8>>,
    ) -> Result<CompiledProgram> {
        let src = cstring("kernel source", &self.source)?;
        let name = cstring("program name", &self.name)?;
        let header_names = self
            .headers
            .iter()
            .map(|(n, _)| cstring("header name", n))
            .collect::<Result<Vec<_>>>()?;
        let header_bodies = self
            .headers
            .iter()
            // HIPRTC 5.2 refuses an empty header with a bare HIPRTC_ERROR_INVALID_INPUT; a newline is the
            // same empty file to the preprocessor.
            .map(|(_, c)| cstring("header contents", if c.is_empty() { "\n" } else { c }))
            .collect::<Result<Vec<_>>>()?;
        let opts = options
            .iter()
            .map(|o| cstring("compiler option", o))
            .collect::<Result<Vec<_>>>()?;
        let exprs = self
            .name_expressions
            .iter()
            .map(|e| cstring("name expression", e))
            .collect::<Result<Vec<_>>>()?;

        let _serialised = hiprtc_lock();
        // SAFETY: the pointers are those of `header_bodies` and `header_names`, CStrings (NUL-terminated)
        // owned by this function and not touched until after the call.
        let prog = RawProgram(unsafe {
            result::create_program(&src, &name, &ptrs(&header_bodies), &ptrs(&header_names))
        }?);
        // Each expression once: HIPRTC 5.2 fails the whole compile when one is added twice.
        for (i, e) in exprs.iter().enumerate() {
            if exprs[..i].contains(e) {
                continue;
            }
            // SAFETY: `prog` is live (created above, destroyed when this function returns) and not yet
            // compiled; `e` is a NUL-terminated CString borrowed for the call.
            unsafe { result::add_name_expression(prog.0, e)? };
        }
        // SAFETY: `prog` was created above, no other thread has it, and it is destroyed only when this
        // function returns; the option pointers are those of `opts`, CStrings owned by this function.
        let rc = unsafe { result::compile_program(prog.0, &ptrs(&opts)) }?;
        // SAFETY: `prog` is live, as above.
        let log = unsafe { result::program_log(prog.0) }.unwrap_or_default();
        let log = diagnostics::show_names(&log, &self.name);
        if rc != hiprtc_sys::HIPRTC_SUCCESS {
            return Err(Error::from_rtc("hiprtcCompileProgram", rc, Some(log)));
        }
        let code = output(prog.0)?;
        let lowered_names = self
            .name_expressions
            .iter()
            .zip(&exprs)
            // SAFETY: `prog` is live and compiled successfully (checked above); `c` is a NUL-terminated
            // expression added before the compile.
            .map(|(e, c)| Ok((e.clone(), unsafe { result::lowered_name(prog.0, c)? })))
            .collect::<Result<Vec<_>>>()?;
        Ok(CompiledProgram {
            code,
            log,
            lowered_names,
            cache_outcome: CacheOutcome::Off,
        })
    }
}

/// The HIPRTC lock: on AMD every program's life, from create to destroy, and every comgr link, holds it;
/// compiles in one process run one at a time (cache hits do not take it). NVRTC is thread-safe and is not
/// serialised.
///
/// Evidence, per version (Debian's packages, 2 cores, no GPU):
/// - 5.2.3: not thread-safe. One thread's `hiprtcAddNameExpression` crashed (SIGSEGV inside libamdhip64)
///   while another thread's `hiprtcCompileProgram` ran (the cache tests, 5 of 5 runs before the lock);
///   the raw `sys_hiprtc` tests run in parallel crashed in `hiprtcCompileProgram` in 5 of 5 runs of the
///   `dynamic-loading` build.
/// - 5.7.1, 6.4.3, 7.2.4: 8 threads compiling 24 programs with name expressions at once, without the lock,
///   10 runs each: no crash, no wrong result (the same test with the lock also 10 of 10). Ten clean runs
///   do not prove thread safety, AMD documents none for these versions, and with compiles taking
///   hundreds of milliseconds the lock costs nothing measurable on 2 cores (with/without: 4.2/10.6 s,
///   5.0/5.7 s, 5.6/3.8 s per run on 5.7.1, 6.4.3, 7.2.4, under varying load). So the lock stays on every
///   AMD version.
pub(crate) fn hiprtc_lock() -> Option<std::sync::MutexGuard<'static, ()>> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    cfg!(hip_platform = "amd").then(|| LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
}

/// Note the target `arch` asked by `what`; refuse a second, different one (HIPRTC would silently pick one).
fn one_target<'a>(target: &mut Option<&'a str>, arch: &'a str, what: &str) -> Result<()> {
    match target {
        Some(t) if *t != arch => Err(Error::InvalidOption {
            option: what.to_string(),
            reason: "a second, different target architecture; one compile has one target",
        }),
        _ => {
            *target = Some(arch);
            Ok(())
        }
    }
}

fn ptrs(strings: &[CString]) -> Vec<*const c_char> {
    strings.iter().map(|s| s.as_ptr()).collect()
}

/// The architecture of the current device, or `ArchRequired` saying why there is none.
pub(crate) fn current_device_arch() -> Result<String> {
    let count = match Device::count() {
        Ok(n) => n,
        Err(e) => {
            return Err(Error::ArchRequired {
                reason: format!("no HIP device is usable ({e})"),
            })
        }
    };
    if count == 0 {
        return Err(Error::ArchRequired {
            reason: "no HIP device found".into(),
        });
    }
    let ordinal = crate::result::get_device()?;
    // A device's architecture does not change while the process runs, and asking for it opens the
    // device and reads its properties (cudaGetDeviceProperties on NVIDIA): once per device, so that a
    // compile-cache hit does not pay for it.
    static KNOWN: std::sync::Mutex<Vec<(i32, String)>> = std::sync::Mutex::new(Vec::new());
    let known = || {
        KNOWN
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    };
    if let Some((_, arch)) = known().iter().find(|(o, _)| *o == ordinal) {
        return Ok(arch.clone());
    }
    let device = Device::get(ordinal.max(0) as usize)?;
    let arch = device.arch_name()?;
    if arch.is_empty() {
        return Err(Error::ArchRequired {
            reason: format!("device {ordinal} reports no architecture name"),
        });
    }
    known().push((ordinal, arch.clone()));
    Ok(arch)
}
