//! Devices: count, properties, attributes, memory info, peer access; finding one ([`Device::first_usable`],
//! [`Device::select`] by ordinal, UUID or PCI bus id).
//!
//! Each device is used through its primary context, the one HIP (and CUDA's runtime) keeps per device:
//! non-primary contexts (`hipCtxCreate` and the other `hipCtx*` calls) are deprecated in HIP and stay out
//! of this crate. A context pushed with raw calls is not looked after (see [`Device::bind`]).

use crate::error::{Error, NoDeviceReason, Result};
use crate::result;
use hip_sys as sys;
use std::cell::Cell;
use std::ffi::c_void;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Arc;

mod properties;
pub use properties::DeviceProperties;

/// The HIP runtime version (`hipRuntimeGetVersion`), e.g. `50221153` for 5.2.21153 on AMD.
///
/// # Errors
///
/// [`Error::Hip`] with what `hipRuntimeGetVersion` returns; with `dynamic-loading`,
/// [`Error::LibraryNotFound`] where no HIP runtime could be opened.
///
/// ```no_run
/// let v = hip::runtime_version()?;
/// println!("HIP {}.{}", v / 10_000_000, v / 100_000 % 100);
/// # Ok::<(), hip::Error>(())
/// ```
pub fn runtime_version() -> Result<i32> {
    result::runtime_version()
}

/// The driver version (`hipDriverGetVersion`).
///
/// # Errors
///
/// [`Error::Hip`] with what `hipDriverGetVersion` returns; with `dynamic-loading`,
/// [`Error::LibraryNotFound`] where no HIP runtime could be opened.
///
/// ```no_run
/// println!("driver {}, runtime {}", hip::driver_version()?, hip::runtime_version()?);
/// # Ok::<(), hip::Error>(())
/// ```
pub fn driver_version() -> Result<i32> {
    result::driver_version()
}

/// A HIP device. Cheap to clone: clones share one record of the device and its launch limits.
///
/// Buffers, streams, events and modules hold a `Device`, so the device they belong to is always known and
/// can be made current before they touch it.
#[derive(Clone, Debug)]
pub struct Device(Arc<DeviceInner>);

#[derive(Debug)]
struct DeviceInner {
    ordinal: i32,
    limits: Limits,
    /// The context (`hipCtx_t`) found current right after this device was bound on some thread; null
    /// until then. [`Device::bind`] compares the current context with it before anything else.
    context: AtomicPtr<c_void>,
    /// The process sees no other device (`hipGetDeviceCount` was 1 when this one was opened; the count is
    /// fixed for a process's life). [`Device::bind`] then has nothing to choose between.
    alone: bool,
}

/// `(accessor, owner)` ordinals: the peer access enabled through this crate in this process (HIP keeps
/// it per device for the process's life; there is no call that asks it back).
static PEER_ACCESS: std::sync::Mutex<Vec<(i32, i32)>> = std::sync::Mutex::new(Vec::new());

/// Held shared by a launch with another device's memory from its peer-access check until the kernel is
/// queued, and exclusively by `Device::disable_peer_access` while it forgets an access: a launch that
/// found the access on is queued (and then waited for) before the mapping can go.
static PEER_GATE: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// The shared side of the peer gate (a launch reaching another device's memory).
pub(crate) fn peer_gate_shared() -> std::sync::RwLockReadGuard<'static, ()> {
    PEER_GATE.read().unwrap_or_else(|p| p.into_inner())
}

/// The exclusive side of the peer gate (taking a peer access away).
pub(crate) fn peer_gate_exclusive() -> std::sync::RwLockWriteGuard<'static, ()> {
    PEER_GATE.write().unwrap_or_else(|p| p.into_inner())
}

/// What a launch may ask of this device, read once when the device is opened.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub max_threads_per_block: u32,
    pub max_block_dim: [u32; 3],
    pub max_grid_dim: [u32; 3],
    pub max_shared_mem_per_block: usize,
    /// The most a kernel may use per block once it opted in (`hipDeviceAttributeSharedMemPerBlockOptin`;
    /// the plain limit where the runtime reports none, as on AMD).
    pub max_shared_mem_optin: usize,
}

// Checked at compile time: `Device` is Send + Sync by its fields alone (an ordinal, plain limits, an
// atomic and a flag), with no `unsafe impl`.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<Device>();
};

impl Device {
    /// How many HIP devices there are. Without a usable one, [`Error::NoDevice`] (status
    /// `backend_not_available`): no device, no working driver or one too old, said in words with what to
    /// check (see [`Device::first_usable`]).
    ///
    /// # Errors
    ///
    /// [`Error::NoDevice`] where this machine has no usable GPU; with `dynamic-loading`,
    /// [`Error::LibraryNotFound`] where no HIP runtime could be opened; any other failure of
    /// `hipGetDeviceCount` as [`Error::Hip`].
    ///
    /// ```no_run
    /// for ordinal in 0..hip::Device::count()? {
    ///     let device = hip::Device::get(ordinal)?;
    ///     println!("{ordinal}: {}", device.properties()?.name);
    /// }
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn count() -> Result<usize> {
        match result::device_count() {
            // A negative count would be a runtime bug; it must not become a huge usize.
            Ok(n) => Ok(usize::try_from(n).unwrap_or(0)),
            Err(e) => Err(no_usable_gpu(e)),
        }
    }

    /// Open device `ordinal`: make it current on this thread, make sure its primary context exists, and
    /// read its launch limits. The first call in a process initialises the HIP runtime (tens to hundreds
    /// of milliseconds); a `Device` is cheap to clone (an `Arc`).
    ///
    /// # Errors
    ///
    /// [`Error::NoDevice`] where this machine has no usable GPU (no device, no driver, a driver too old:
    /// said in words), [`Error::DeviceOutOfRange`] for an ordinal past the last device, and with
    /// `dynamic-loading` [`Error::LibraryNotFound`] where no HIP runtime could be opened. A program that
    /// should run either way asks [`Device::first_usable`] instead.
    ///
    /// ```no_run
    /// let device = hip::Device::get(0)?;
    /// println!("{} ({})", device.properties()?.name, device.arch_name()?);
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn get(ordinal: usize) -> Result<Device> {
        let count = Self::count()?;
        if ordinal >= count {
            return Err(Error::DeviceOutOfRange { ordinal, count });
        }
        let ordinal = ordinal as i32;
        result::set_device(ordinal)?;
        // On CUDA-backed HIP the primary context is created lazily: force it now, or a module load right
        // after set-device fails (709). hipFree(NULL) is the documented no-op that initialises it.
        // SAFETY: hipFree(NULL) frees nothing: it is defined as a no-op that returns success.
        result::check("hipFree", unsafe { sys::hipFree(std::ptr::null_mut()) })?;
        let p = result::device_properties(ordinal)?;
        let dim = |a: [i32; 3]| a.map(|v| v.max(0) as u32);
        let limits = Limits {
            max_threads_per_block: p.maxThreadsPerBlock.max(0) as u32,
            max_block_dim: dim(p.maxThreadsDim),
            max_grid_dim: dim(p.maxGridSize),
            max_shared_mem_per_block: p.sharedMemPerBlock,
            max_shared_mem_optin: result::shared_mem_per_block_optin(ordinal)
                .ok()
                .and_then(|v| usize::try_from(v).ok())
                .unwrap_or(0)
                .max(p.sharedMemPerBlock),
        };
        Ok(Device(Arc::new(DeviceInner {
            ordinal,
            limits,
            context: AtomicPtr::new(std::ptr::null_mut()),
            alone: count == 1,
        })))
    }

    /// The device's ordinal.
    pub fn ordinal(&self) -> usize {
        self.0.ordinal as usize
    }

    pub(crate) fn limits(&self) -> &Limits {
        &self.0.limits
    }

    /// Make this device current on the calling thread. Every launch and synchronous copy binds its device,
    /// so the usual case costs little:
    ///
    /// - When the process sees this device only, a thread binds it once, on its first call (the full
    ///   check below); after that there is no other device its current one could be, and nothing is
    ///   called. A context the caller changes with raw calls (popped, or one of its own pushed) is not
    ///   looked at again; the checked path below would not replace it either, since it only compares
    ///   device ordinals: HIP then works in whatever context the caller left, as it would after that path.
    /// - Otherwise, when the thread's current context (`hipCtxGetCurrent`; on NVIDIA `cuCtxGetCurrent`)
    ///   is the one seen right after this device was last bound, the device is current. Else (another
    ///   device, no context yet, a context the caller pushed) `hipGetDevice`, and `hipSetDevice` when
    ///   that says another device.
    ///
    /// Measured per launch on an H200 through HIP's NVIDIA platform: `hipCtxGetCurrent` about 30 ns,
    /// `hipGetDevice` 30-100 ns, `hipSetDevice` about 100 ns even when nothing changes.
    ///
    /// The check relies on a device's context living as long as the process, as primary contexts do: a
    /// context destroyed behind the crate's back (raw `hipDeviceReset`, `hipCtxDestroy`) invalidates every
    /// object of that device anyway.
    ///
    /// # Errors
    ///
    /// [`Error::Hip`] with what `hipGetDevice` or `hipSetDevice` returns.
    ///
    /// ```no_run
    /// # fn f(device: &hip::Device) -> hip::Result<()> {
    /// device.bind()?;
    /// // Raw hip-sys calls on this thread now go to `device`.
    /// let mut ordinal = -1;
    /// // SAFETY: an out-pointer to a live local.
    /// let code = unsafe { hip::sys::hipGetDevice(&mut ordinal) };
    /// assert!(code == hip::sys::hipSuccess && ordinal as usize == device.ordinal());
    /// # Ok(()) }
    /// ```
    #[inline]
    pub fn bind(&self) -> Result<()> {
        if self.0.alone {
            return self.bind_alone();
        }
        self.bind_among_others()
    }

    /// [`bind`](Self::bind) when the process has other devices: a look at the current context. Out of
    /// line, so that the one-device path inlined in every operation stays a few instructions.
    #[inline(never)]
    fn bind_among_others(&self) -> Result<()> {
        let known = self.0.context.load(Ordering::Relaxed);
        if !known.is_null() && result::ctx_get_current().ok() == Some(known as sys::hipCtx_t) {
            return Ok(());
        }
        self.bind_checked()
    }

    /// [`bind`](Self::bind) when the process has this device only: the full check once per thread.
    #[inline]
    fn bind_alone(&self) -> Result<()> {
        thread_local! {
            // No destructor and a constant start: reading it is one thread-local load.
            static BOUND: Cell<bool> = const { Cell::new(false) };
        }
        if BOUND.get() {
            return Ok(());
        }
        self.bind_checked()?;
        BOUND.set(true);
        Ok(())
    }

    #[cold]
    fn bind_checked(&self) -> Result<()> {
        let ordinal = self.0.ordinal;
        if result::get_device()? != ordinal {
            result::set_device(ordinal)?;
        }
        if let Ok(ctx) = result::ctx_get_current() {
            if !ctx.is_null() {
                self.0.context.store(ctx.cast(), Ordering::Relaxed);
            }
        }
        Ok(())
    }

    /// The device's properties (`hipGetDeviceProperties`), copied out.
    ///
    /// # Errors
    ///
    /// [`Error::Hip`] with what `hipGetDeviceProperties` returns (and, on NVIDIA, `hipDeviceGetAttribute`
    /// for the managed-memory flag).
    ///
    /// ```no_run
    /// let device = hip::Device::get(0)?;
    /// let p = device.properties()?;
    /// println!("{}: {} CUs, {} GiB", p.name, p.compute_units, p.total_global_mem >> 30);
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn properties(&self) -> Result<DeviceProperties> {
        #[allow(unused_mut)] // changed on NVIDIA only
        let mut p = DeviceProperties::from_raw(&result::device_properties(self.0.ordinal)?);
        // HIP's NVIDIA hipGetDeviceProperties copies most fields from cudaGetDeviceProperties but never
        // fills managedMemory (5.2.3, 5.7.1): it read false on an H100. The attribute maps to
        // cudaDevAttrManagedMemory.
        #[cfg(hip_platform = "nvidia")]
        {
            p.managed_memory = self.attribute(sys::hipDeviceAttributeManagedMemory)? != 0;
        }
        Ok(p)
    }

    /// The full architecture name HIPRTC targets: `gcnArchName` on AMD (e.g. `gfx90a:sramecc+:xnack-`),
    /// `compute_XY` from the compute capability on NVIDIA.
    ///
    /// # Errors
    ///
    /// As [`Device::properties`]: [`Error::Hip`] with what HIP returns.
    ///
    /// ```no_run
    /// # fn f(device: &hip::Device) -> hip::Result<()> {
    /// let arch = device.arch_name()?;
    /// let base = arch.split(':').next().unwrap_or(&arch); // "gfx90a" of "gfx90a:sramecc+:xnack-"
    /// # Ok(()) }
    /// ```
    pub fn arch_name(&self) -> Result<String> {
        Ok(self.properties()?.arch_name)
    }

    /// One attribute (`hipDeviceGetAttribute`), e.g. `hip_sys::hipDeviceAttributeWarpSize`.
    ///
    /// # Errors
    ///
    /// [`Error::Hip`] with what `hipDeviceGetAttribute` returns (`hipErrorInvalidValue` for an attribute
    /// this runtime does not know).
    ///
    /// ```no_run
    /// # fn f(device: &hip::Device) -> hip::Result<()> {
    /// let warp = device.attribute(hip::sys::hipDeviceAttributeWarpSize)?; // 64 or 32
    /// # Ok(()) }
    /// ```
    pub fn attribute(&self, attr: sys::hipDeviceAttribute_t) -> Result<i32> {
        result::device_attribute(attr, self.0.ordinal)
    }

    /// Shared memory per block a kernel may use without opting in (`sharedMemPerBlock`), in bytes.
    pub fn max_shared_mem_per_block(&self) -> usize {
        self.0.limits.max_shared_mem_per_block
    }

    /// Shared memory per block a kernel may use once it opted in with
    /// [`Function::set_max_dynamic_shared_bytes`](crate::Function::set_max_dynamic_shared_bytes)
    /// (`hipDeviceAttributeSharedMemPerBlockOptin`; on AMD, which has no opt-in, the plain limit).
    pub fn max_shared_mem_per_block_optin(&self) -> usize {
        self.0.limits.max_shared_mem_optin
    }

    /// `(free, total)` device memory in bytes (`hipMemGetInfo`).
    ///
    /// # Errors
    ///
    /// [`Error::Hip`] with what HIP returns for making the device current and for `hipMemGetInfo`.
    ///
    /// ```no_run
    /// # fn f(device: &hip::Device) -> hip::Result<()> {
    /// let (free, total) = device.memory_info()?;
    /// println!("{} of {} MiB free", free >> 20, total >> 20);
    /// # Ok(()) }
    /// ```
    pub fn memory_info(&self) -> Result<(usize, usize)> {
        self.bind()?;
        result::mem_get_info()
    }

    /// Whether this device can map `peer`'s memory (`hipDeviceCanAccessPeer`).
    ///
    /// # Errors
    ///
    /// [`Error::Hip`] with what `hipDeviceCanAccessPeer` returns.
    ///
    /// ```no_run
    /// let (d0, d1) = (hip::Device::get(0)?, hip::Device::get(1)?);
    /// if d0.can_access_peer(&d1)? {
    ///     d0.ensure_peer_access(&d1)?;
    /// }
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn can_access_peer(&self, peer: &Device) -> Result<bool> {
        result::can_access_peer(self.0.ordinal, peer.0.ordinal)
    }

    /// Let this device access `peer`'s memory. Enabling it twice is `hipErrorPeerAccessAlreadyEnabled`
    /// ([`ensure_peer_access`](Self::ensure_peer_access) accepts that). A device is not its own peer
    /// ([`Error::InvalidArgument`]), and a pair the hardware cannot map is
    /// [`Error::NotSupported`], both before HIP is asked to enable anything.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for the device itself, [`Error::NotSupported`] for a pair the hardware
    /// cannot map, and [`Error::Hip`] with what HIP returns (`hipErrorPeerAccessAlreadyEnabled`, status
    /// `invalid_state`, when it is on already).
    ///
    /// ```no_run
    /// let (d0, d1) = (hip::Device::get(0)?, hip::Device::get(1)?);
    /// d0.enable_peer_access(&d1)?; // kernels on d0 may now read and write d1's buffers
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn enable_peer_access(&self, peer: &Device) -> Result<()> {
        if peer.0.ordinal == self.0.ordinal {
            return Err(Error::InvalidArgument {
                what: "peer device",
                value: peer.0.ordinal.to_string(),
                reason: "a device is not its own peer; give another device".into(),
            });
        }
        if !self.can_access_peer(peer)? {
            return Err(Error::NotSupported {
                what: "peer access",
                reason: "hipDeviceCanAccessPeer says this device cannot map the peer's memory \
                         (peer copies still work, staged through the host)",
            });
        }
        self.bind()?;
        result::enable_peer_access(peer.0.ordinal)?;
        self.note_peer_access(peer);
        Ok(())
    }

    /// [`enable_peer_access`](Self::enable_peer_access), where access already enabled is success.
    ///
    /// # Errors
    ///
    /// As [`enable_peer_access`](Self::enable_peer_access), except `hipErrorPeerAccessAlreadyEnabled`:
    /// [`Error::InvalidArgument`] for the device itself, [`Error::NotSupported`] for a pair the hardware
    /// cannot map, and [`Error::Hip`] with any other answer of HIP.
    ///
    /// ```no_run
    /// let devices = (0..hip::Device::count()?).map(hip::Device::get).collect::<hip::Result<Vec<_>>>()?;
    /// for a in &devices {
    ///     for b in devices.iter().filter(|b| b.ordinal() != a.ordinal()) {
    ///         if a.can_access_peer(b)? {
    ///             a.ensure_peer_access(b)?; // twice is fine
    ///         }
    ///     }
    /// }
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn ensure_peer_access(&self, peer: &Device) -> Result<()> {
        match self.enable_peer_access(peer) {
            Err(e) if e.hip_code().map(|c| c.0) == Some(704) => {
                // Enabled before (by raw calls, or in another `Device` of these ordinals): it is on now.
                self.note_peer_access(peer);
                Ok(())
            }
            r => r,
        }
    }

    /// Whether this device was given access to `owner`'s memory through
    /// [`enable_peer_access`](Self::enable_peer_access) or [`ensure_peer_access`](Self::ensure_peer_access)
    /// in this process: kernel launches on this device may then pass `owner`'s device memory. Access
    /// enabled only by raw calls is not known here; `hipDeviceDisablePeerAccess` or `hipDeviceReset`
    /// called raw does not clear it (see [`Function::launch`](crate::Function::launch)'s safety contract).
    pub(crate) fn has_peer_access(&self, owner: &Device) -> bool {
        lock(&PEER_ACCESS).contains(&(self.0.ordinal, owner.0.ordinal))
    }

    pub(crate) fn forget_peer_access(&self, owner: &Device) {
        lock(&PEER_ACCESS).retain(|p| *p != (self.0.ordinal, owner.0.ordinal));
    }

    pub(crate) fn note_peer_access(&self, owner: &Device) {
        let mut pairs = lock(&PEER_ACCESS);
        let pair = (self.0.ordinal, owner.0.ordinal);
        if !pairs.contains(&pair) {
            pairs.push(pair);
        }
    }
}

#[cfg(test)]
impl Device {
    /// A device record for unit tests that need one on a machine without a GPU (an allocation's owner,
    /// a launch argument's memory): never bound, and never handed to a HIP call by those tests.
    pub(crate) fn for_unit_tests(ordinal: i32) -> Device {
        Device(Arc::new(DeviceInner {
            ordinal,
            limits: Limits {
                max_threads_per_block: 1024,
                max_block_dim: [1024, 1024, 1024],
                max_grid_dim: [i32::MAX as u32, 65535, 65535],
                max_shared_mem_per_block: 65536,
                max_shared_mem_optin: 65536,
            },
            context: AtomicPtr::new(std::ptr::null_mut()),
            alone: false,
        }))
    }
}

/// Lock a mutex, taking the data even if a thread panicked while holding it (the data here stays valid).
fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A failed device count as the crate reports it: every answer that means "no usable GPU" (no device, no
/// driver, a driver too old or failing) becomes [`Error::NoDevice`] with its reason; anything else stays.
pub(crate) fn no_usable_gpu(e: Error) -> Error {
    let Error::Hip { code, .. } = e else {
        return e;
    };
    let versions = || {
        (
            result::driver_version().ok(),
            result::runtime_version().ok(),
        )
    };
    // Only a driver answer (35) needs the versions to tell a missing driver from an old one.
    let (driver, runtime) = if code.0 == 35 {
        versions()
    } else {
        (None, None)
    };
    match NoDeviceReason::from_device_count(code, crate::PLATFORM, driver, runtime) {
        Some(reason) => Error::NoDevice {
            code,
            platform: crate::PLATFORM,
            reason,
        },
        None => e,
    }
}
