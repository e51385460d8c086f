//! Memory pools ([`MemPool`]): the device's default pool, pools of one's own (`hipMemPoolCreate`) with
//! their attributes, access per device and allocations ([`MemPool::alloc`]), and the device's current
//! pool ([`Device::set_mem_pool`]).

use super::tracking::Keep;
use super::{byte_size, DeviceBuffer, DeviceCopy};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::event::same_device;
use crate::result;
use crate::stream::Stream;
use hip_sys as sys;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Whether `device` supports stream-ordered allocation (`hipDeviceAttributeMemoryPoolsSupported`).
pub(crate) fn pools_supported(device: &Device) -> Result<bool> {
    Ok(device.attribute(sys::hipDeviceAttributeMemoryPoolsSupported)? != 0)
}

/// The pools of one's own that are a device's current pool ([`Device::set_mem_pool`]), by ordinal: kept
/// alive while current, and by every buffer `hipMallocAsync` takes from them.
static CURRENT: Mutex<Vec<(usize, MemPool)>> = Mutex::new(Vec::new());
/// Whether [`CURRENT`] was ever given a pool: until then `alloc_async` takes no lock.
static ANY_CURRENT: AtomicBool = AtomicBool::new(false);

fn current() -> std::sync::MutexGuard<'static, Vec<(usize, MemPool)>> {
    CURRENT.lock().unwrap_or_else(|p| p.into_inner())
}

/// Run `alloc` (a `hipMallocAsync` on `device`) and answer what the allocation must keep: the device's
/// current pool when it is one of one's own. The registry stays locked across both, so that a
/// concurrent [`Device::set_mem_pool`] cannot swap (and drop) the pool between the allocation and this.
pub(crate) fn from_current_pool<P>(
    device: &Device,
    alloc: impl FnOnce() -> Result<P>,
) -> Result<(P, Option<Keep>)> {
    if !ANY_CURRENT.load(Ordering::Acquire) {
        return Ok((alloc()?, None));
    }
    let current = current();
    let p = alloc()?;
    let keep = current
        .iter()
        .find(|(ordinal, _)| *ordinal == device.ordinal())
        .and_then(|(_, pool)| pool.own.clone())
        .map(|own| own as Keep);
    Ok((p, keep))
}

/// A device memory pool: the device's default pool ([`MemPool::default_for`], where
/// [`DeviceBuffer::alloc_async`] takes memory from unless [`Device::set_mem_pool`] chose another), or a
/// pool of one's own ([`MemPool::new`], `hipMemPoolCreate`) with its own release threshold, reuse
/// policies and access per device, which [`MemPool::alloc`] takes from.
///
/// Clones share the pool. A pool of one's own is destroyed (`hipMemPoolDestroy`) when the last of its
/// clones, of the buffers allocated from it and of the devices it is the current pool of has gone: a
/// buffer keeps its pool until its free is queued.
#[derive(Debug, Clone)]
pub struct MemPool {
    pub(super) raw: sys::hipMemPool_t,
    pub(super) device: Device,
    /// `Some` for a pool of one's own: destroys it when the last clone goes.
    pub(super) own: Option<Arc<Own>>,
}

// SAFETY: a pool handle is a runtime object HIP synchronises internally (its calls lock the pool), usable
// from any thread; it lives as long as a clone (default pools: as long as the process).
unsafe impl Send for MemPool {}
// SAFETY: as for Send; `&MemPool` only passes the handle to those calls.
unsafe impl Sync for MemPool {}

/// A pool of one's own, destroyed when dropped.
#[derive(Debug)]
pub(super) struct Own {
    pub(super) raw: sys::hipMemPool_t,
    pub(super) device: Device,
}

// SAFETY: as for MemPool.
unsafe impl Send for Own {}
// SAFETY: as for MemPool.
unsafe impl Sync for Own {}

impl Drop for Own {
    fn drop(&mut self) {
        let (raw, device) = (crate::release::RawHandle(self.raw), self.device.clone());
        // Inside a host function no HIP call is allowed: on the releasing thread then.
        crate::release::now_or_later(move || {
            if device.bind().is_ok() {
                // SAFETY: a pool this crate created, destroyed once, here, after every clone, every
                // buffer from it (each queued its free first) and every device registration is gone.
                let _ = unsafe { result::pool::mem_pool_destroy(raw.get()) };
            }
        });
    }
}

impl MemPool {
    /// The device's default pool. [`Error::NotSupported`] where the device reports no memory pools.
    ///
    /// # Errors
    ///
    /// [`Error::NotSupported`] where `hipDeviceAttributeMemoryPoolsSupported` is 0, and [`Error::Hip`]
    /// with what HIP returns for making the device current, for the attribute and for
    /// `hipDeviceGetDefaultMemPool`.
    ///
    /// ```no_run
    /// # fn f(device: &hip::Device) -> hip::Result<()> {
    /// let pool = hip::MemPool::default_for(device)?;
    /// pool.set_release_threshold(u64::MAX)?; // keep freed memory for the next alloc_async
    /// # Ok(()) }
    /// ```
    pub fn default_for(device: &Device) -> Result<MemPool> {
        device.bind()?;
        if !pools_supported(device)? {
            return Err(Error::NotSupported {
                what: "memory pools",
                reason: "the device reports hipDeviceAttributeMemoryPoolsSupported = 0",
            });
        }
        let ordinal = device.ordinal() as i32;
        Ok(MemPool {
            raw: result::pool::device_default_mem_pool(ordinal)?,
            device: device.clone(),
            own: None,
        })
    }

    /// The raw handle.
    pub fn raw(&self) -> sys::hipMemPool_t {
        self.raw
    }

    /// Bytes of freed memory the pool keeps reserved instead of releasing them at a synchronisation
    /// (`hipMemPoolAttrReleaseThreshold`).
    ///
    /// # Errors
    ///
    /// [`Error::Hip`] with what HIP returns for making the device current and for
    /// `hipMemPoolGetAttribute`.
    ///
    /// ```no_run
    /// # fn f(pool: &hip::MemPool) -> hip::Result<()> {
    /// println!("the pool keeps up to {} bytes", pool.release_threshold()?);
    /// # Ok(()) }
    /// ```
    pub fn release_threshold(&self) -> Result<u64> {
        self.device.bind()?;
        // SAFETY: `self.raw` is live while `self` is (a default pool is never destroyed); the release
        // threshold is a 64-bit attribute (uint64_t / cuuint64_t on both platforms).
        unsafe { result::pool::mem_pool_get_u64(self.raw, result::pool::RELEASE_THRESHOLD) }
    }

    /// Set the release threshold: `u64::MAX` keeps everything for reuse, 0 releases at every
    /// synchronisation. It bounds what the pool keeps after a synchronisation, not what it may hold while
    /// allocations are live.
    ///
    /// # Errors
    ///
    /// [`Error::Hip`] with what HIP returns for making the device current and for
    /// `hipMemPoolSetAttribute`.
    ///
    /// ```no_run
    /// # fn f(pool: &hip::MemPool) -> hip::Result<()> {
    /// pool.set_release_threshold(1 << 30)?; // keep up to 1 GiB of freed memory for reuse
    /// # Ok(()) }
    /// ```
    pub fn set_release_threshold(&self, bytes: u64) -> Result<()> {
        self.device.bind()?;
        // SAFETY: as in release_threshold.
        unsafe { result::pool::mem_pool_set_u64(self.raw, result::pool::RELEASE_THRESHOLD, bytes) }
    }

    /// Release unused reserved memory until at most `keep_bytes` stay reserved (`hipMemPoolTrimTo`).
    ///
    /// # Errors
    ///
    /// [`Error::Hip`] with what HIP returns for making the device current and for `hipMemPoolTrimTo`.
    ///
    /// ```no_run
    /// # fn f(pool: &hip::MemPool) -> hip::Result<()> {
    /// pool.trim_to(0)?; // give back everything not in use
    /// # Ok(()) }
    /// ```
    pub fn trim_to(&self, keep_bytes: usize) -> Result<()> {
        self.device.bind()?;
        // SAFETY: a live pool, as in release_threshold. Trimming releases only memory the pool may safely
        // give back: memory whose hipFreeAsync has been reached in stream order, never a live allocation.
        // This crate queues hipFreeAsync only on a stream that first waits (on the GPU) for every other
        // recorded user, or after the host waited for them (uses made untracked are the caller's).
        unsafe { result::pool::mem_pool_trim_to(self.raw, keep_bytes) }
    }
}

/// The `hipMemPoolAttr` values this file reads and sets (the same numbers as CUDA's `cudaMemPoolAttr`,
/// which HIP's NVIDIA headers use without naming them).
mod attr {
    use hip_sys as sys;
    pub(super) const RESERVED_CURRENT: sys::hipMemPoolAttr = 5 as _;
    pub(super) const RESERVED_HIGH: sys::hipMemPoolAttr = 6 as _;
    pub(super) const USED_CURRENT: sys::hipMemPoolAttr = 7 as _;
    pub(super) const USED_HIGH: sys::hipMemPoolAttr = 8 as _;
}

/// When a pool may hand freed memory to a new allocation before the free is known to be done
/// (`hipMemPoolReuse*`; all three are on by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReusePolicy {
    /// Reuse memory freed on another stream once the new allocation's stream waits on an event recorded
    /// after the free (`hipMemPoolReuseFollowEventDependencies`).
    FollowEventDependencies = 1,
    /// Reuse memory whose free is already done, on any stream (`hipMemPoolReuseAllowOpportunistic`).
    AllowOpportunistic = 2,
    /// Reuse memory by making the new allocation's stream wait for the free
    /// (`hipMemPoolReuseAllowInternalDependencies`).
    AllowInternalDependencies = 3,
}

/// What a device may do with a pool's memory (`hipMemAccessFlags`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PoolAccess {
    /// No access (`hipMemAccessFlagsProtNone`).
    None,
    /// Read only (`hipMemAccessFlagsProtRead`).
    Read,
    /// Read and write (`hipMemAccessFlagsProtReadWrite`).
    ReadWrite,
}

impl PoolAccess {
    fn flags(self) -> u32 {
        match self {
            PoolAccess::None => 0,
            PoolAccess::Read => 1,
            PoolAccess::ReadWrite => 3,
        }
    }
}

impl MemPool {
    /// A pool of one's own on `device` (`hipMemPoolCreate`: pinned device memory on `device`, no
    /// shareable handle), destroyed when its last clone and the last buffer from it are gone.
    ///
    /// # Errors
    ///
    /// [`Error::NotSupported`] where the device reports no memory pools, and [`Error::Hip`] with what HIP
    /// returns for making the device current, for the attribute and for `hipMemPoolCreate`.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream) -> hip::Result<()> {
    /// let pool = hip::MemPool::new(stream.device())?;
    /// pool.set_release_threshold(64 << 20)?; // keep up to 64 MiB between synchronisations
    /// let scratch = pool.zeroed::<f32>(stream, 1 << 20)?;
    /// assert!(pool.used_bytes()? >= 4 << 20);
    /// # Ok(()) }
    /// ```
    pub fn new(device: &Device) -> Result<MemPool> {
        device.bind()?;
        if !pools_supported(device)? {
            return Err(Error::NotSupported {
                what: "hipMemPoolCreate",
                reason: "the device reports hipDeviceAttributeMemoryPoolsSupported = 0",
            });
        }
        let raw = result::pool::mem_pool_create(device.ordinal() as i32)?;
        Ok(MemPool {
            raw,
            device: device.clone(),
            own: Some(Arc::new(Own {
                raw,
                device: device.clone(),
            })),
        })
    }

    /// Whether this is a pool of one's own ([`MemPool::new`]), not a device's default pool.
    pub fn is_own(&self) -> bool {
        self.own.is_some()
    }

    /// The device the pool's memory is on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    fn get_u64(&self, attr: sys::hipMemPoolAttr) -> Result<u64> {
        self.device.bind()?;
        // SAFETY: `self.raw` is live while `self` is; attributes 4 to 8 are 64-bit values.
        unsafe { result::pool::mem_pool_get_u64(self.raw, attr) }
    }

    /// Bytes of device memory the pool holds now, in use or kept for reuse
    /// (`hipMemPoolAttrReservedMemCurrent`).
    ///
    /// # Errors
    ///
    /// [`Error::Hip`] with what HIP returns for making the device current and for
    /// `hipMemPoolGetAttribute`.
    ///
    /// ```no_run
    /// # fn f(pool: &hip::MemPool) -> hip::Result<()> {
    /// println!("{} bytes reserved, {} in use", pool.reserved_bytes()?, pool.used_bytes()?);
    /// # Ok(()) }
    /// ```
    pub fn reserved_bytes(&self) -> Result<u64> {
        self.get_u64(attr::RESERVED_CURRENT)
    }

    /// The most [`reserved_bytes`](Self::reserved_bytes) since the pool was made or
    /// [`reset_high_water`](Self::reset_high_water) (`hipMemPoolAttrReservedMemHigh`).
    ///
    /// # Errors
    ///
    /// As [`reserved_bytes`](Self::reserved_bytes).
    ///
    /// ```no_run
    /// # fn f(pool: &hip::MemPool) -> hip::Result<()> {
    /// println!("at most {} bytes reserved", pool.reserved_high_water()?);
    /// # Ok(()) }
    /// ```
    pub fn reserved_high_water(&self) -> Result<u64> {
        self.get_u64(attr::RESERVED_HIGH)
    }

    /// Bytes of the pool's memory allocated and not yet freed (`hipMemPoolAttrUsedMemCurrent`).
    ///
    /// # Errors
    ///
    /// As [`reserved_bytes`](Self::reserved_bytes).
    ///
    /// ```no_run
    /// # fn f(pool: &hip::MemPool) -> hip::Result<()> {
    /// assert_eq!(pool.used_bytes()?, 0, "every buffer from the pool was freed");
    /// # Ok(()) }
    /// ```
    pub fn used_bytes(&self) -> Result<u64> {
        self.get_u64(attr::USED_CURRENT)
    }

    /// The most [`used_bytes`](Self::used_bytes) since the pool was made or
    /// [`reset_high_water`](Self::reset_high_water) (`hipMemPoolAttrUsedMemHigh`).
    ///
    /// # Errors
    ///
    /// As [`reserved_bytes`](Self::reserved_bytes).
    ///
    /// ```no_run
    /// # fn f(pool: &hip::MemPool) -> hip::Result<()> {
    /// println!("peak use: {} bytes", pool.used_high_water()?);
    /// # Ok(()) }
    /// ```
    pub fn used_high_water(&self) -> Result<u64> {
        self.get_u64(attr::USED_HIGH)
    }

    /// Restart both high-water marks from the current values (sets `hipMemPoolAttrReservedMemHigh` and
    /// `hipMemPoolAttrUsedMemHigh` to 0, the only value HIP accepts for them).
    ///
    /// # Errors
    ///
    /// [`Error::Hip`] with what HIP returns for making the device current and for
    /// `hipMemPoolSetAttribute`.
    ///
    /// ```no_run
    /// # fn f(pool: &hip::MemPool) -> hip::Result<()> {
    /// pool.reset_high_water()?;
    /// // ... one training step ...
    /// println!("the step's peak: {} bytes", pool.used_high_water()?);
    /// # Ok(()) }
    /// ```
    pub fn reset_high_water(&self) -> Result<()> {
        self.device.bind()?;
        for a in [attr::RESERVED_HIGH, attr::USED_HIGH] {
            // SAFETY: a live pool (as in get_u64); both marks are 64-bit attributes.
            unsafe { result::pool::mem_pool_set_u64(self.raw, a, 0)? };
        }
        Ok(())
    }

    /// Whether `policy` is on (`hipMemPoolGetAttribute`).
    ///
    /// # Errors
    ///
    /// [`Error::Hip`] with what HIP returns for making the device current and for
    /// `hipMemPoolGetAttribute`.
    ///
    /// ```no_run
    /// # fn f(pool: &hip::MemPool) -> hip::Result<()> {
    /// use hip::ReusePolicy;
    /// assert!(pool.reuse(ReusePolicy::AllowOpportunistic)?); // on by default
    /// # Ok(()) }
    /// ```
    pub fn reuse(&self, policy: ReusePolicy) -> Result<bool> {
        self.device.bind()?;
        // SAFETY: a live pool; the reuse policies (1 to 3) are `int` attributes.
        let v = unsafe { result::pool::mem_pool_get_i32(self.raw, policy as i32 as _)? };
        Ok(v != 0)
    }

    /// Turn `policy` on or off. Every policy keeps the memory model exact (a reuse is ordered after the
    /// free by HIP); turning them off only makes the pool grow instead of reusing.
    ///
    /// # Errors
    ///
    /// [`Error::Hip`] with what HIP returns for making the device current and for
    /// `hipMemPoolSetAttribute`.
    ///
    /// ```no_run
    /// # fn f(pool: &hip::MemPool) -> hip::Result<()> {
    /// pool.set_reuse(hip::ReusePolicy::AllowInternalDependencies, false)?; // no hidden waits
    /// # Ok(()) }
    /// ```
    pub fn set_reuse(&self, policy: ReusePolicy, on: bool) -> Result<()> {
        self.device.bind()?;
        // SAFETY: a live pool; the reuse policies are `int` attributes.
        unsafe { result::pool::mem_pool_set_i32(self.raw, policy as i32 as _, i32::from(on)) }
    }

    /// Let `device` use (or stop using) this pool's memory (`hipMemPoolSetAccess`). The pool's own
    /// device always has read-write access; another device needs peer access to this one.
    ///
    /// # Errors
    ///
    /// [`Error::Hip`] with what HIP returns for making the device current and for
    /// `hipMemPoolSetAccess` (e.g. `hipErrorInvalidDevice` without peer access, or `hipErrorInvalidValue`
    /// for taking access from the pool's own device).
    ///
    /// ```no_run
    /// # fn f(pool: &hip::MemPool, other: &hip::Device) -> hip::Result<()> {
    /// pool.set_access(other, hip::PoolAccess::ReadWrite)?;
    /// # Ok(()) }
    /// ```
    pub fn set_access(&self, device: &Device, access: PoolAccess) -> Result<()> {
        self.device.bind()?;
        // SAFETY: a live pool; the descriptor names a device by ordinal (HIP checks it).
        unsafe {
            result::pool::mem_pool_set_access(self.raw, device.ordinal() as i32, access.flags())
        }
    }

    /// What `device` may do with this pool's memory (`hipMemPoolGetAccess`).
    ///
    /// # Errors
    ///
    /// [`Error::Hip`] with what HIP returns for making the device current and for
    /// `hipMemPoolGetAccess`, and [`Error::InvalidArgument`] for flags this crate does not know.
    ///
    /// ```no_run
    /// # fn f(pool: &hip::MemPool) -> hip::Result<()> {
    /// assert_eq!(pool.access(pool.device())?, hip::PoolAccess::ReadWrite);
    /// # Ok(()) }
    /// ```
    pub fn access(&self, device: &Device) -> Result<PoolAccess> {
        self.device.bind()?;
        // SAFETY: a live pool.
        let flags =
            unsafe { result::pool::mem_pool_get_access(self.raw, device.ordinal() as i32)? };
        match flags {
            0 => Ok(PoolAccess::None),
            1 => Ok(PoolAccess::Read),
            3 => Ok(PoolAccess::ReadWrite),
            f => Err(Error::InvalidArgument {
                what: "hipMemPoolGetAccess flags",
                value: f.to_string(),
                reason: "not a hipMemAccessFlags value (0, 1 or 3)".into(),
            }),
        }
    }

    /// `len` elements from this pool in `stream`'s order (`hipMallocFromPoolAsync`), freed on drop in
    /// stream order like [`DeviceBuffer::alloc_async`]'s, after which the pool may hand the memory out
    /// again. The buffer keeps the pool alive until its free is queued.
    ///
    /// # Errors
    ///
    /// [`Error::DeviceMismatch`] for a stream of another device than the pool's,
    /// [`Error::InvalidArgument`] on a capturing stream, [`Error::AllocationTooLarge`] when the byte size
    /// overflows, and what HIP returns (`hipErrorOutOfMemory` when the pool cannot grow).
    ///
    /// # Safety
    /// The contents are uninitialised: write them before reading ([`zeroed`](Self::zeroed) does).
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(pool: &hip::MemPool, stream: &Stream) -> hip::Result<()> {
    /// // SAFETY: filled before anything reads it.
    /// let mut x = unsafe { pool.alloc::<f32>(stream, 4096)? };
    /// stream.fill_async(&mut x, 0.5)?;
    /// # Ok(()) }
    /// ```
    pub unsafe fn alloc<T: DeviceCopy>(
        &self,
        stream: &Stream,
        len: usize,
    ) -> Result<DeviceBuffer<T>> {
        same_device("MemPool::alloc", &self.device, stream.device())?;
        let keep: Keep = match &self.own {
            Some(own) => Arc::clone(own) as Keep,
            None => Arc::new(()),
        };
        // SAFETY: the caller's contract (uninitialised contents), passed on; the pool is live (`keep`
        // owns one of one's own, a default pool lives as long as the process) and on the stream's device
        // (checked above).
        unsafe { DeviceBuffer::alloc_ordered(stream.handle(), len, Some((self.raw, keep))) }
    }

    /// `len` zeroed elements from this pool in `stream`'s order: [`alloc`](Self::alloc) and a memset
    /// queued on `stream`.
    ///
    /// # Errors
    ///
    /// What [`alloc`](Self::alloc) returns, and what HIP returns for the memset.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(pool: &hip::MemPool, stream: &Stream) -> hip::Result<()> {
    /// let counts = pool.zeroed::<u32>(stream, 256)?;
    /// # Ok(()) }
    /// ```
    pub fn zeroed<T: DeviceCopy>(&self, stream: &Stream, len: usize) -> Result<DeviceBuffer<T>> {
        byte_size::<T>(len)?;
        // SAFETY: every byte is written by the memset below, queued on `stream`, which `alloc` recorded as
        // the buffer's writer: every later use is ordered after it.
        let mut b = unsafe { self.alloc::<T>(stream, len)? };
        stream.memset_async(&mut b, 0)?;
        Ok(b)
    }
}

impl Device {
    /// Make `pool` this device's current pool (`hipDeviceSetMemPool`): [`DeviceBuffer::alloc_async`] and
    /// every stream-ordered allocation on the device take from it from now on. The device keeps the pool
    /// alive while it is current, and each buffer keeps it until its free is queued.
    ///
    /// # Errors
    ///
    /// [`Error::DeviceMismatch`] for a pool of another device, and what HIP returns for making the device
    /// current and for `hipDeviceSetMemPool`.
    ///
    /// ```no_run
    /// # fn f(device: &hip::Device) -> hip::Result<()> {
    /// let pool = hip::MemPool::new(device)?;
    /// device.set_mem_pool(&pool)?;
    /// assert!(device.mem_pool()?.is_own());
    /// device.reset_mem_pool()?; // back to the default pool
    /// # Ok(()) }
    /// ```
    pub fn set_mem_pool(&self, pool: &MemPool) -> Result<()> {
        same_device("Device::set_mem_pool", self, &pool.device)?;
        self.bind()?;
        let mut current = current();
        // SAFETY: `pool` is live, and stays so while current: the registry below keeps a clone until
        // another pool replaces it (under this lock, which allocations take too).
        unsafe { result::pool::device_set_mem_pool(self.ordinal() as i32, pool.raw)? };
        current.retain(|(ordinal, _)| *ordinal != self.ordinal());
        if pool.is_own() {
            current.push((self.ordinal(), pool.clone()));
            ANY_CURRENT.store(true, Ordering::Release);
        }
        Ok(())
    }

    /// Make the device's default pool current again ([`MemPool::default_for`]), releasing the pool of
    /// one's own [`set_mem_pool`](Self::set_mem_pool) made current (destroyed once its buffers are gone).
    ///
    /// # Errors
    ///
    /// As [`set_mem_pool`](Self::set_mem_pool), and [`Error::NotSupported`] without memory pools.
    ///
    /// ```no_run
    /// # fn f(device: &hip::Device) -> hip::Result<()> {
    /// device.reset_mem_pool()?;
    /// assert!(!device.mem_pool()?.is_own());
    /// # Ok(()) }
    /// ```
    pub fn reset_mem_pool(&self) -> Result<()> {
        self.set_mem_pool(&MemPool::default_for(self)?)
    }

    /// The device's current pool (`hipDeviceGetMemPool`): the one [`set_mem_pool`](Self::set_mem_pool)
    /// made current, or the default pool.
    ///
    /// # Errors
    ///
    /// [`Error::NotSupported`] without memory pools, and what HIP returns for making the device current
    /// and for `hipDeviceGetMemPool`.
    ///
    /// ```no_run
    /// # fn f(device: &hip::Device) -> hip::Result<()> {
    /// device.mem_pool()?.set_release_threshold(u64::MAX)?;
    /// # Ok(()) }
    /// ```
    pub fn mem_pool(&self) -> Result<MemPool> {
        let default = MemPool::default_for(self)?;
        let current = current();
        let raw = result::pool::device_get_mem_pool(self.ordinal() as i32)?;
        if let Some((_, pool)) = current
            .iter()
            .find(|(ordinal, pool)| *ordinal == self.ordinal() && pool.raw == raw)
        {
            return Ok(pool.clone());
        }
        // The default pool, or one made current by a raw hipDeviceSetMemPool: not owned here.
        Ok(MemPool { raw, ..default })
    }
}
