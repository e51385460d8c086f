//! Modules (loaded code objects), their kernels and their globals.

use crate::code_object::signature::Signature;
use crate::code_object::{CodeObject, Format, Kernel};
use crate::device::Device;
use crate::error::{Error, HipErrorCode, Result};
use crate::memory::{DeviceCopy, DevicePtr};
use crate::result;
use hip_sys as sys;
use std::ffi::{c_void, CString};
use std::marker::PhantomData;
use std::path::Path;
use std::sync::Arc;

/// A loaded code object. Cheap to clone; unloaded when the last clone and the last [`Function`] or
/// [`Global`] taken from it are gone. A launch does not keep the module alive, so unloading first waits for
/// all work on the module's device (`hipDeviceSynchronize`): a kernel from it may still be queued.
#[derive(Clone, Debug)]
pub struct Module(Arc<ModuleInner>);

#[derive(Debug)]
struct ModuleInner {
    raw: sys::hipModule_t,
    device: Device,
    /// The kernels' signatures, parsed once at load; `None` where the image could not be read for them.
    code: Option<CodeObject>,
}

// SAFETY: a hipModule_t is a loaded image that nothing changes after the load; HIP allows its calls
// (function and global lookups, unload) from any thread. The other fields are Send + Sync.
unsafe impl Send for ModuleInner {}
// SAFETY: as for Send: `&ModuleInner` only looks names up in the image.
unsafe impl Sync for ModuleInner {}

impl Drop for ModuleInner {
    /// Kernels launched from the module may still be queued or running (a launch does not keep the
    /// `Function` alive), and HIP does not wait for them before unloading their code. So the device is
    /// synchronised first; if that fails the module is leaked, never unloaded under a running kernel.
    fn drop(&mut self) {
        if crate::release::in_host_fn() {
            // No HIP call inside a host function (and the synchronization below would wait for the
            // function itself): the releasing thread unloads it.
            let moved = ModuleInner {
                raw: self.raw,
                device: self.device.clone(),
                code: self.code.take(),
            };
            crate::release::defer(Box::new(move || drop(moved)));
            return;
        }
        if self.device.synchronize().is_ok() {
            // SAFETY: `self.raw` was loaded by `load_data` / `load_file` and is unloaded only here, once.
            // The last Module, Function and Global are gone (each holds an Arc of this), graphs keep the
            // Functions of the kernels they captured, and every kernel queued from it on this device (the
            // only one its functions launch on) has finished: synchronised just above.
            let _ = unsafe { result::module_unload(self.raw) };
        }
    }
}

impl Module {
    /// Load a code object from memory: an AMD GPU ELF or clang offload bundle, or on NVIDIA PTX text, a
    /// cubin or a fatbin ([`check_nvidia`](crate::code_object::check_nvidia): anything else is refused
    /// naming what it is, where the driver would say only "device kernel image is invalid").
    ///
    /// HIP is not told the image's size, so the image is checked first ([`crate::code_object`]): a
    /// truncated or malformed ELF or bundle is refused here rather than letting the runtime read past the
    /// slice. On AMD a bundle must also hold a code object for this device: HIP 5 aborts the process when
    /// it does not. The kernels' signatures are parsed before HIP sees the image too, and an ELF or bundle
    /// whose metadata cannot be parsed is refused: nothing that can fail is left until after the module
    /// is loaded, so a failure never leaks a loaded module.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidCodeObject`] for an image that is truncated, malformed, of another kind, or (on
    /// AMD) without code for this device; [`Error::Hip`] with what `hipModuleLoadData` returns (an
    /// image for another architecture: `hipErrorNoBinaryForGpu`).
    ///
    /// ```no_run
    /// use hip::prelude::*;
    ///
    /// let device = Device::get(0)?;
    /// let code = ProgramBuilder::new(r#"extern "C" __global__ void k(float* x) { x[threadIdx.x] = 1.0f; }"#)
    ///     .compile()?;
    /// let module = Module::load_data(&device, code.code())?;
    /// let k = module.function("k")?; // Error::UnknownName for a name the module lacks
    /// # let _ = k;
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn load_data(device: &Device, image: &[u8]) -> Result<Module> {
        let (image, code) = checked_image(image, || device.arch_name())?;
        device.bind()?;
        // SAFETY: `checked_image` accepted these bytes (a slice that lives until after the call, or its
        // NUL-terminated copy): on AMD an EM_AMDGPU ELF or a bundle holding this device's code object,
        // which code_object::check found HIP reads nothing past; on NVIDIA a checked cubin or PTX text
        // ending in a NUL.
        let raw = unsafe { result::module_load_data(image.as_ptr().cast()) }?;
        Ok(Module(Arc::new(ModuleInner {
            raw,
            device: device.clone(),
            code,
        })))
    }

    /// Load a code object from a file. Every failure is [`Error::ModuleFile`] naming the path (its
    /// [`status`](Error::status) and [`hip_code`](Error::hip_code) are those of the cause).
    ///
    /// On AMD the file is read and loaded with [`Module::load_data`]'s checks (HIP's `hipModuleLoad` sizes
    /// the mapped file's code object from its own headers, as in memory). On NVIDIA the driver reads the file
    /// (`hipModuleLoad`), and the path's bytes go to it as they are: a non-UTF-8 name is not altered into
    /// another file's name.
    ///
    /// # Errors
    ///
    /// [`Error::ModuleFile`] naming the path, around the cause: a file that cannot be read, or any
    /// failure of [`Module::load_data`].
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// let device = Device::get(0)?;
    /// // Built with `hipcc --genco --offload-arch=gfx90a kernels.hip -o kernels.hsaco`.
    /// let module = Module::load_file(&device, "kernels.hsaco")?;
    /// let saxpy = module.function("saxpy")?;
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn load_file(device: &Device, path: impl AsRef<Path>) -> Result<Module> {
        let path = path.as_ref();
        let named = |source: Error| Error::ModuleFile {
            path: path.to_path_buf(),
            source: Box::new(source),
        };
        // First, on both platforms: a path holding a NUL names no file C could open.
        let c = path_cstring(path).map_err(named)?;
        if cfg!(hip_platform = "amd") {
            // HIP sizes a file's code object from its headers just as in memory (and aborts on a bundle
            // without this device's code object): read it and load it through the same checks.
            let image = std::fs::read(path).map_err(|source| {
                named(Error::Io {
                    what: "read module file",
                    path: path.to_path_buf(),
                    source,
                })
            })?;
            return Self::load_data(device, &image).map_err(named);
        }
        // The driver reads the file itself; read it here first for the signatures (none if that fails),
        // so that nothing is left to do once the module is loaded.
        let code = std::fs::read(path)
            .ok()
            .and_then(|b| CodeObject::parse(&b).ok());
        device.bind()?;
        // SAFETY: only reached on HIP's NVIDIA platform (on AMD the branch above returned), where
        // hipModuleLoad is cuModuleLoad: the driver reads the file knowing its length and checks it.
        let raw = unsafe { result::module_load(&c) }.map_err(named)?;
        Ok(Module(Arc::new(ModuleInner {
            raw,
            device: device.clone(),
            code,
        })))
    }

    /// The raw handle. It stays owned by this `Module`.
    pub fn raw(&self) -> sys::hipModule_t {
        self.0.raw
    }

    /// The device the module is loaded on.
    pub fn device(&self) -> &Device {
        &self.0.device
    }

    /// The code object's kernels and signatures, parsed when the module was loaded (`None` where the image
    /// could not be parsed for them: launches from it are then not checked).
    pub fn code_object(&self) -> Option<&CodeObject> {
        self.0.code.as_ref()
    }

    /// The kernel `name` (its symbol name: `extern "C"` or lowered). An unknown name is
    /// [`Error::UnknownName`] naming it.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownName`] for a name the module lacks (naming it, with HIP's code);
    /// [`Error::InteriorNul`] for a NUL byte in `name`; otherwise what `hipModuleGetFunction` returns.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(module: &Module) -> hip::Result<()> {
    /// let saxpy = module.function("saxpy")?; // extern "C" __global__ void saxpy(...)
    /// println!("up to {} threads per block", saxpy.max_threads_per_block());
    /// # Ok(()) }
    /// ```
    pub fn function(&self, name: &str) -> Result<Function> {
        let c = cstring("kernel name", name)?;
        self.0.device.bind()?;
        // SAFETY: the module is live while `self` is; `c` is a NUL-terminated name, borrowed for the call.
        let raw = unsafe { result::module_get_function(self.0.raw, &c) }
            .map_err(|e| unknown("kernel", name, e))?;
        // SAFETY: `raw` was just returned for this live module.
        let max_threads = unsafe {
            result::func_get_attribute(sys::HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, raw)
        }
        .unwrap_or(0);
        // SAFETY: as above.
        let static_shared =
            unsafe { result::func_get_attribute(sys::HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, raw) }
                .unwrap_or(0);
        let signature = self.signature(name);
        let from_metadata = |v: Option<u32>| v.unwrap_or(0);
        let max_threads = match u32::try_from(max_threads).unwrap_or(0) {
            0 => from_metadata(signature.as_ref().and_then(|s| s.kernel.max_workgroup_size)),
            n => n,
        };
        // The runtime's static shared size, or the code object's group segment where it said nothing.
        let group = signature.as_ref().and_then(|s| s.kernel.group_segment_size);
        let static_shared = match u32::try_from(static_shared).unwrap_or(0) {
            0 => from_metadata(group.and_then(|g| u32::try_from(g).ok())),
            n => n,
        };
        Ok(Function {
            raw,
            module: self.clone(),
            name: name.to_string(),
            max_threads,
            static_shared,
            signature,
        })
    }

    /// The signature of kernel `name` from the code object, for the device's target in a bundle; `None`
    /// where the code object has none (a cubin, no metadata note) or the device's target is unknown.
    fn signature(&self, name: &str) -> Option<Arc<Signature>> {
        let code = self.0.code.as_ref()?;
        let arch = match code.format() {
            Format::Bundle => Some(self.0.device.arch_name().ok()?),
            _ => None,
        };
        let kernel = code.kernel(name, arch.as_deref())?;
        Some(Arc::new(Signature::new(kernel.clone())))
    }

    /// The module global `name` (a `__device__` or `__constant__` variable), holding one `T`. Its size in
    /// the module must be `size_of::<T>()`.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownName`] for a name the module lacks (naming it, with HIP's code);
    /// [`Error::GlobalSize`] when its size in the module is not `size_of::<T>()`;
    /// [`Error::InteriorNul`] for a NUL byte in `name`; otherwise what `hipModuleGetGlobal` returns.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(module: &Module) -> hip::Result<()> {
    /// // __constant__ float coefficients[4];
    /// let coefficients = module.global::<[f32; 4]>("coefficients")?;
    /// coefficients.write(&[0.25, 0.5, 0.75, 1.0])?;
    /// # Ok(()) }
    /// ```
    pub fn global<T: DeviceCopy>(&self, name: &str) -> Result<Global<T>> {
        let c = cstring("global name", name)?;
        self.0.device.bind()?;
        // SAFETY: the module is live while `self` is; `c` is a NUL-terminated name, borrowed for the call.
        let (ptr, bytes) = unsafe { result::module_get_global(self.0.raw, &c) }
            .map_err(|e| unknown("global", name, e))?;
        if bytes != std::mem::size_of::<T>() {
            return Err(Error::GlobalSize {
                name: name.to_string(),
                module_bytes: bytes,
                type_bytes: std::mem::size_of::<T>(),
            });
        }
        Ok(Global {
            ptr,
            module: self.clone(),
            _elem: PhantomData,
        })
    }
}

/// A lookup that failed because the name does not exist becomes `UnknownName`; other failures stay HIP's.
fn unknown(kind: &'static str, name: &str, e: Error) -> Error {
    match e.hip_code() {
        Some(code @ HipErrorCode(13 | 98 | 500)) => Error::UnknownName {
            kind,
            name: name.to_string(),
            code,
        },
        _ => e,
    }
}

#[cfg(unix)]
fn path_cstring(path: &Path) -> Result<CString> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(path.as_os_str().as_bytes()).map_err(|_| Error::InteriorNul {
        what: "module path",
        value: path.display().to_string(),
    })
}

#[cfg(not(unix))]
fn path_cstring(path: &Path) -> Result<CString> {
    match path.to_str() {
        Some(s) => cstring("module path", s),
        None => Err(Error::InvalidArgument {
            what: "module path",
            value: path.display().to_string(),
            reason: "not valid Unicode".into(),
        }),
    }
}

pub(crate) fn cstring(what: &'static str, s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::InteriorNul {
        what,
        value: s.to_string(),
    })
}

/// A kernel of a loaded module. Keeps its module loaded.
#[derive(Clone, Debug)]
pub struct Function {
    raw: sys::hipFunction_t,
    module: Module,
    name: String,
    max_threads: u32,
    static_shared: u32,
    signature: Option<Arc<Signature>>,
}

// SAFETY: a hipFunction_t is a handle into a loaded module that nothing changes, usable from any thread;
// the Function holds its Module, so the handle stays valid. The other fields are Send + Sync.
unsafe impl Send for Function {}
// SAFETY: as for Send: `&Function` only reads the handle (attributes, launches HIP allows concurrently).
unsafe impl Sync for Function {}

impl Function {
    /// The raw handle.
    pub fn raw(&self) -> sys::hipFunction_t {
        self.raw
    }

    /// The name it was looked up by.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The module it belongs to.
    pub fn module(&self) -> &Module {
        &self.module
    }

    /// One attribute (`hipFuncGetAttribute`), e.g. `hip_sys::HIP_FUNC_ATTRIBUTE_NUM_REGS`.
    ///
    /// # Errors
    ///
    /// [`Error::Hip`] with what `hipFuncGetAttribute` returns (`hipErrorInvalidValue` for an attribute
    /// this runtime does not report).
    ///
    /// ```no_run
    /// # fn f(kernel: &hip::Function) -> hip::Result<()> {
    /// let spilled = kernel.attribute(hip::sys::HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)?;
    /// # Ok(()) }
    /// ```
    pub fn attribute(&self, attr: sys::hipFunction_attribute) -> Result<i32> {
        // SAFETY: `self.raw` is live: `self.module` keeps its module loaded.
        unsafe { result::func_get_attribute(attr, self.raw) }
    }

    /// Most threads per block this kernel can be launched with (0 if the runtime did not say).
    pub fn max_threads_per_block(&self) -> u32 {
        self.max_threads
    }

    /// Statically allocated shared memory in bytes, as read when the kernel was looked up (0 if the runtime
    /// did not say); launches check it plus the dynamic amount against the device's limit.
    pub fn static_shared_bytes(&self) -> u32 {
        self.static_shared
    }

    /// The kernel as its code object declares it (parameters, segment sizes, registers), read once when the
    /// module was loaded. `None` where the code object carries no signature (a cubin, an ELF without the
    /// `NT_AMDGPU_METADATA` note): launches of this function are then not checked against one.
    pub fn signature(&self) -> Option<&Kernel> {
        self.signature.as_deref().map(|s| &s.kernel)
    }

    pub(crate) fn checked_signature(&self) -> Option<&Signature> {
        self.signature.as_deref()
    }

    /// Registers per thread (`HIP_FUNC_ATTRIBUTE_NUM_REGS`).
    ///
    /// # Errors
    ///
    /// As [`Function::attribute`]: what `hipFuncGetAttribute` returns.
    ///
    /// ```no_run
    /// # fn f(kernel: &hip::Function) -> hip::Result<()> {
    /// println!(
    ///     "{}: {} registers, {} bytes shared, {} bytes scratch per thread",
    ///     kernel.name(),
    ///     kernel.num_regs()?,
    ///     kernel.shared_size_bytes()?,
    ///     kernel.local_size_bytes()?,
    /// );
    /// # Ok(()) }
    /// ```
    pub fn num_regs(&self) -> Result<i32> {
        self.attribute(sys::HIP_FUNC_ATTRIBUTE_NUM_REGS)
    }

    /// Statically allocated shared memory in bytes (`HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES`), asked of
    /// the runtime now (see also [`static_shared_bytes`](Self::static_shared_bytes)).
    ///
    /// # Errors
    ///
    /// As [`Function::attribute`]: what `hipFuncGetAttribute` returns.
    ///
    /// ```no_run
    /// # fn f(kernel: &hip::Function) -> hip::Result<()> {
    /// let bytes = kernel.shared_size_bytes()?;
    /// # Ok(()) }
    /// ```
    pub fn shared_size_bytes(&self) -> Result<i32> {
        self.attribute(sys::HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
    }

    /// Private (local/scratch) memory per thread in bytes (`HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES`): more
    /// than 0 often means registers spilled.
    ///
    /// # Errors
    ///
    /// As [`Function::attribute`]: what `hipFuncGetAttribute` returns.
    ///
    /// ```no_run
    /// # fn f(kernel: &hip::Function) -> hip::Result<()> {
    /// if kernel.local_size_bytes()? > 0 {
    ///     eprintln!("{} uses scratch memory", kernel.name());
    /// }
    /// # Ok(()) }
    /// ```
    pub fn local_size_bytes(&self) -> Result<i32> {
        self.attribute(sys::HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)
    }

    /// The most dynamic shared memory one launch of this kernel may ask for now, in bytes. On NVIDIA it is
    /// the kernel's setting (`HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`: the device's plain
    /// per-block limit less the static amount, 48 KiB at most, until
    /// [`set_max_dynamic_shared_bytes`](Self::set_max_dynamic_shared_bytes) raises it); on AMD, which has
    /// no opt-in, the device's per-block limit less the static amount.
    ///
    /// # Errors
    ///
    /// On NVIDIA, what `hipFuncGetAttribute` returns; on AMD none (the limit was read when the device was
    /// opened).
    ///
    /// ```no_run
    /// # fn f(kernel: &hip::Function) -> hip::Result<()> {
    /// let bytes = kernel.max_dynamic_shared_bytes()?;
    /// let config = hip::LaunchConfig {
    ///     shared_mem_bytes: bytes.min(32 << 10) as u32,
    ///     ..hip::LaunchConfig::for_num_elems(1 << 20)
    /// };
    /// # Ok(()) }
    /// ```
    pub fn max_dynamic_shared_bytes(&self) -> Result<usize> {
        if cfg!(hip_platform = "nvidia") {
            let v = self.attribute(sys::HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)?;
            return Ok(usize::try_from(v).unwrap_or(0));
        }
        let limits = self.module.device().limits();
        Ok(limits
            .max_shared_mem_per_block
            .saturating_sub(self.static_shared as usize))
    }

    /// Let launches of this kernel use up to `bytes` of dynamic shared memory per block: the opt-in a
    /// kernel needs for more than 48 KiB on NVIDIA (`cuFuncSetAttribute` with
    /// `MAX_DYNAMIC_SHARED_SIZE_BYTES`; about 227 KiB on Hopper). Launches are checked against the
    /// setting from then on, for every `Function` of this kernel. `bytes` plus the kernel's static shared
    /// memory may not exceed the device's opt-in maximum (`hipDeviceAttributeSharedMemPerBlockOptin`):
    /// [`Error::InvalidArgument`] with both numbers. On AMD a kernel needs no opt-in: the same bound is
    /// checked (the device's per-block limit) and nothing else is done.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `bytes` plus the static shared memory exceed the device's opt-in
    /// maximum; on NVIDIA, what HIP returns for making the device current and for the attribute.
    ///
    /// ```no_run
    /// # fn f(kernel: &hip::Function) -> hip::Result<()> {
    /// kernel.set_max_dynamic_shared_bytes(96 << 10)?; // 96 KiB: past the 48 KiB default on NVIDIA
    /// let config = hip::LaunchConfig {
    ///     shared_mem_bytes: 96 << 10,
    ///     ..hip::LaunchConfig::new(128u32, 256u32)
    /// };
    /// # Ok(()) }
    /// ```
    pub fn set_max_dynamic_shared_bytes(&self, bytes: usize) -> Result<()> {
        let device = self.module.device();
        let optin = device.limits().max_shared_mem_optin;
        let static_shared = self.static_shared as usize;
        let fits = bytes
            .checked_add(static_shared)
            .is_some_and(|total| total <= optin);
        let value = match i32::try_from(bytes) {
            Ok(v) if fits => v,
            _ => {
                return Err(Error::InvalidArgument {
                    what: "dynamic shared memory for kernel",
                    value: format!("{bytes} bytes (kernel `{}`)", self.name),
                    reason: format!(
                        "with the kernel's {static_shared} bytes of static shared memory it exceeds the \
                         {optin} bytes per block device {} allows a kernel that opts in",
                        device.ordinal()
                    ),
                })
            }
        };
        self.set_nvidia_attribute(sys::HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, value)
    }

    /// Prefer this share (0 to 100 percent) of the unified L1/shared storage as shared memory for this
    /// kernel, or -1 for the device's default (`PREFERRED_SHARED_MEMORY_CARVEOUT`). A hint the driver may
    /// round. Other values are [`Error::InvalidArgument`]. On AMD (no carveout) the value is checked and
    /// nothing else is done.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a value outside -1..=100; on NVIDIA, what HIP returns for making the
    /// device current and for the attribute.
    ///
    /// ```no_run
    /// # fn f(kernel: &hip::Function) -> hip::Result<()> {
    /// kernel.set_preferred_shared_carveout(100)?; // as much shared memory as the driver gives
    /// # Ok(()) }
    /// ```
    pub fn set_preferred_shared_carveout(&self, percent: i32) -> Result<()> {
        if !(-1..=100).contains(&percent) {
            return Err(Error::InvalidArgument {
                what: "shared memory carveout",
                value: percent.to_string(),
                reason: "a percentage from 0 to 100, or -1 for the device's default".into(),
            });
        }
        self.set_nvidia_attribute(
            sys::HIP_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
            percent,
        )
    }

    /// Prefer more L1 cache or more shared memory for this kernel (`cuFuncSetCacheConfig`). A hint; on AMD,
    /// where HIP documents it as having no effect, nothing is done.
    ///
    /// # Errors
    ///
    /// On NVIDIA, what HIP returns for making the device current and for `cuFuncSetCacheConfig`; on AMD
    /// none.
    ///
    /// ```no_run
    /// # fn f(kernel: &hip::Function) -> hip::Result<()> {
    /// kernel.set_cache_config(hip::FuncCache::PreferL1)?;
    /// # Ok(()) }
    /// ```
    pub fn set_cache_config(&self, config: FuncCache) -> Result<()> {
        #[cfg(hip_platform = "nvidia")]
        {
            self.module.device().bind()?;
            // SAFETY: `self.raw` is live (`self.module` keeps its module loaded), on the current device.
            unsafe { result::module_func_set_cache_config(self.raw, config as sys::hipFuncCache_t) }
        }
        #[cfg(not(hip_platform = "nvidia"))]
        {
            let _ = config;
            Ok(())
        }
    }

    /// Set `attr` on NVIDIA (`cuFuncSetAttribute`); on AMD there is nothing to set.
    fn set_nvidia_attribute(&self, attr: sys::hipFunction_attribute, value: i32) -> Result<()> {
        #[cfg(hip_platform = "nvidia")]
        {
            self.module.device().bind()?;
            // SAFETY: `self.raw` is live (`self.module` keeps its module loaded), on the current device.
            unsafe { result::module_func_set_attribute(self.raw, attr, value) }
        }
        #[cfg(not(hip_platform = "nvidia"))]
        {
            let _ = (attr, value);
            Ok(())
        }
    }
}

/// A kernel's cache preference ([`Function::set_cache_config`]): HIP's `hipFuncCache_t`, whose values
/// CUDA shares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum FuncCache {
    /// No preference.
    PreferNone = 0,
    /// More shared memory, less L1.
    PreferShared = 1,
    /// More L1, less shared memory.
    PreferL1 = 2,
    /// Equal L1 and shared memory.
    PreferEqual = 3,
}

impl FuncCache {
    /// The preference a raw `hipFuncCache_t` value names, if any.
    ///
    /// ```
    /// use hip::FuncCache;
    /// assert_eq!(FuncCache::from_raw(1), Some(FuncCache::PreferShared));
    /// assert_eq!(FuncCache::from_raw(9), None);
    /// ```
    pub fn from_raw(raw: u32) -> Option<FuncCache> {
        Some(match raw {
            0 => FuncCache::PreferNone,
            1 => FuncCache::PreferShared,
            2 => FuncCache::PreferL1,
            3 => FuncCache::PreferEqual,
            _ => return None,
        })
    }
}

/// A module global holding one `T`. Keeps its module loaded.
#[derive(Debug)]
pub struct Global<T: DeviceCopy> {
    ptr: *mut c_void,
    module: Module,
    _elem: PhantomData<T>,
}

// SAFETY: `ptr` is a device address in a module the Global keeps loaded; the host never dereferences it
// (reads and writes are HIP copies, callable from any thread), and T is DeviceCopy (Send + Sync).
unsafe impl<T: DeviceCopy> Send for Global<T> {}
// SAFETY: as for Send.
unsafe impl<T: DeviceCopy> Sync for Global<T> {}

impl<T: DeviceCopy> Global<T> {
    /// Copy the value to the host. Synchronous; it first waits for all work on the module's device:
    /// kernels reach a global by name, not through their arguments, so the memory model cannot know which
    /// work uses it.
    ///
    /// # Errors
    ///
    /// What HIP returns for the device synchronisation (an error of the work it waited for) and for the
    /// copy.
    ///
    /// ```no_run
    /// # fn f(module: &hip::Module) -> hip::Result<()> {
    /// let counter = module.global::<u32>("counter")?; // __device__ unsigned counter;
    /// println!("kernels counted {}", counter.read()?);
    /// # Ok(()) }
    /// ```
    pub fn read(&self) -> Result<T> {
        let mut v = std::mem::MaybeUninit::<T>::uninit();
        self.module.device().synchronize()?;
        // SAFETY: `self.ptr` is the global's device address, size_of::<T>() bytes (checked at lookup),
        // in a module `self.module` keeps loaded; `v` is a live local of that size. The device is current
        // (`synchronize` bound it) and hipMemcpy to the host returns once `v` is written. A kernel
        // queued on another stream after the wait may write the global meanwhile: the value is then
        // torn, but any bits are a valid T.
        unsafe {
            result::memcpy(
                v.as_mut_ptr().cast(),
                self.ptr,
                std::mem::size_of::<T>(),
                sys::hipMemcpyDeviceToHost,
            )?;
            // SAFETY: hipMemcpy returned success, so all size_of::<T>() bytes of `v` were written, and any
            // bits are a valid T (DeviceCopy).
            Ok(v.assume_init())
        }
    }

    /// Copy `value` to the device. Synchronous: waits for all work on the module's device first (as
    /// [`Global::read`]), and returns once the value is on the device.
    ///
    /// # Errors
    ///
    /// What HIP returns for the device synchronisations (an error of the work waited for) and for the
    /// copy.
    ///
    /// ```no_run
    /// # fn f(module: &hip::Module) -> hip::Result<()> {
    /// let counter = module.global::<u32>("counter")?;
    /// counter.write(&0)?; // launches queued after this see 0
    /// # Ok(()) }
    /// ```
    pub fn write(&self, value: &T) -> Result<()> {
        self.module.device().synchronize()?;
        // SAFETY: as in `read`, the other way: `value` is a live T of size_of::<T>() bytes, all
        // initialised (DeviceCopy), and hipMemcpy from the host has read it on return.
        unsafe {
            result::memcpy(
                self.ptr,
                (value as *const T).cast(),
                std::mem::size_of::<T>(),
                sys::hipMemcpyHostToDevice,
            )?
        };
        self.module.device().synchronize()
    }

    /// The device address.
    pub fn device_ptr(&self) -> DevicePtr {
        self.ptr
    }
}

/// Check that an image is complete before HIP, which is not given its length, parses it (see
/// [`crate::code_object`]), and parse its kernels' signatures. Returns the bytes HIP may read (the image
/// itself, or for PTX a NUL-terminated copy) and the signatures. `device_arch` gives the device's target,
/// asked only for a bundle.
///
/// An ELF or bundle whose signatures cannot be parsed is refused: HIP's loader reads the same metadata.
/// PTX the parser cannot read loads without signatures (the driver checks PTX itself).
fn checked_image(
    image: &[u8],
    device_arch: impl FnOnce() -> Result<String>,
) -> Result<(std::borrow::Cow<'_, [u8]>, Option<CodeObject>)> {
    use crate::code_object::{self as co, Kind, NvidiaImage};
    if cfg!(hip_platform = "nvidia") {
        return match co::check_nvidia(image)? {
            NvidiaImage::Ptx => {
                // PTX text: the driver reads up to a NUL. Kernels the parser cannot read stay
                // unchecked rather than refused (the driver is the judge of PTX).
                let mut text = image.to_vec();
                if text.last() != Some(&0) {
                    text.push(0);
                }
                let code = CodeObject::parse(&text).ok();
                Ok((text.into(), code))
            }
            NvidiaImage::Cubin => Ok((image.into(), Some(CodeObject::parse(image)?))),
            NvidiaImage::Fatbin => Ok((image.into(), None)),
        };
    }
    match co::check(image)? {
        Kind::Elf => co::expect_machine(image, co::EM_AMDGPU)?,
        Kind::Bundle { .. } => co::bundle_for_device(image, &device_arch()?)?,
    }
    let code = CodeObject::parse(image)?;
    Ok((image.into(), Some(code)))
}

#[cfg(test)]
#[path = "module_tests.rs"]
mod tests;
