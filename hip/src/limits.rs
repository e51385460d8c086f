//! Device limits (`hipDeviceGetLimit`, `hipDeviceSetLimit`) as a typed [`Limit`], the device-wide cache
//! preference (`hipDeviceSetCacheConfig`, `hipDeviceGetCacheConfig`), and turning peer access off
//! (`hipDeviceDisablePeerAccess`): beside [`Device`], so that `device.rs` stays small.

use crate::device::Device;
use crate::error::{Error, Result};
use crate::module::FuncCache;
use crate::result;
use hip_sys as sys;

/// A per-device resource limit, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Limit {
    /// Stack size per device thread (`hipLimitStackSize`, CUDA's `cudaLimitStackSize`; HIP 5.2's headers
    /// do not name it and its runtime refuses it).
    StackSize,
    /// The FIFO device-side `printf` writes into (`hipLimitPrintfFifoSize`; AMD's runtime answers but
    /// documents it as not supported).
    PrintfFifoSize,
    /// The heap of device-side `malloc`/`free` (`hipLimitMallocHeapSize`).
    MallocHeapSize,
}

impl Limit {
    /// The `hipLimit_t` value: 0, 1, 2 on every HIP and on CUDA (`cudaLimit`), whether or not the headers
    /// name it.
    pub fn raw(self) -> sys::hipLimit_t {
        (match self {
            Limit::StackSize => 0u32,
            Limit::PrintfFifoSize => 1,
            Limit::MallocHeapSize => 2,
        }) as sys::hipLimit_t
    }

    /// Every limit, for listing.
    pub const ALL: [Limit; 3] = [
        Limit::StackSize,
        Limit::PrintfFifoSize,
        Limit::MallocHeapSize,
    ];
}

/// Whether the HIP headers this crate was built with declare `hipDeviceSetLimit` (HIP >= 5.7, and HIP's
/// NVIDIA platform): without it [`Device::set_limit`] is [`Error::NotSupported`].
pub const HAS_SET_LIMIT: bool = cfg!(hip_device_set_limit);

impl Device {
    /// The current value of `limit` on this device (`hipDeviceGetLimit`, with the device made current).
    ///
    /// # Errors
    ///
    /// What HIP returns for making the device current and for `hipDeviceGetLimit`, naming it
    /// (`hipErrorUnsupportedLimit` for a limit this runtime does not keep).
    ///
    /// ```no_run
    /// use hip::limits::Limit;
    /// let device = hip::Device::get(0)?;
    /// println!("malloc heap: {} bytes", device.limit(Limit::MallocHeapSize)?);
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn limit(&self, limit: Limit) -> Result<usize> {
        self.bind()?;
        result::device::get_limit(limit.raw())
    }

    /// Set `limit` on this device to `bytes` (`hipDeviceSetLimit`, with the device made current). The
    /// runtime may round the value: read it back with [`limit`](Self::limit).
    ///
    /// # Errors
    ///
    /// [`Error::NotSupported`] naming `hipDeviceSetLimit` where the HIP headers lack it (5.2); what HIP
    /// returns for making the device current and for `hipDeviceSetLimit` (`hipErrorUnsupportedLimit`,
    /// `hipErrorInvalidValue` for a value out of range).
    ///
    /// ```no_run
    /// use hip::limits::Limit;
    /// let device = hip::Device::get(0)?;
    /// device.set_limit(Limit::MallocHeapSize, 64 << 20)?;
    /// assert!(device.limit(Limit::MallocHeapSize)? >= 64 << 20);
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn set_limit(&self, limit: Limit, bytes: usize) -> Result<()> {
        #[cfg(not(hip_device_set_limit))]
        return result::device::set_limit(limit.raw(), bytes);
        #[cfg(hip_device_set_limit)]
        {
            self.bind()?;
            result::device::set_limit(limit.raw(), bytes)
        }
    }

    /// Prefer more L1 cache or more shared memory for this device's kernels that set no preference of
    /// their own ([`Function::set_cache_config`](crate::Function::set_cache_config))
    /// (`hipDeviceSetCacheConfig`, with the device made current). A hint: AMD's runtime accepts it and
    /// keeps [`FuncCache::PreferNone`] (its L1 and LDS are not shared, so there is nothing to split);
    /// CUDA keeps what was set.
    ///
    /// # Errors
    ///
    /// What HIP returns for making the device current and for `hipDeviceSetCacheConfig`.
    ///
    /// ```no_run
    /// let device = hip::Device::get(0)?;
    /// device.set_cache_config(hip::FuncCache::PreferShared)?;
    /// println!("now {:?}", device.cache_config()?);
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn set_cache_config(&self, config: FuncCache) -> Result<()> {
        self.bind()?;
        result::device::set_cache_config(config as sys::hipFuncCache_t)
    }

    /// This device's cache preference (`hipDeviceGetCacheConfig`, with the device made current).
    ///
    /// # Errors
    ///
    /// What HIP returns for making the device current and for `hipDeviceGetCacheConfig`;
    /// [`Error::InvalidArgument`] naming the value if the runtime answers one outside `hipFuncCache_t`.
    ///
    /// ```no_run
    /// let device = hip::Device::get(0)?;
    /// assert_eq!(device.cache_config()?, hip::FuncCache::PreferNone); // until set
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn cache_config(&self) -> Result<FuncCache> {
        self.bind()?;
        let raw = result::device::get_cache_config()?;
        FuncCache::from_raw(raw as u32).ok_or_else(|| Error::InvalidArgument {
            what: "hipDeviceGetCacheConfig's answer",
            value: (raw as u32).to_string(),
            reason: "not a hipFuncCache_t value (0 to 3)".into(),
        })
    }

    /// Stop this device's access to `peer`'s memory (`hipDeviceDisablePeerAccess`), after the work queued
    /// on this device so far is done (a device-wide synchronization: queued kernels may use the peer's
    /// memory). Launches checked by this crate refuse `peer`'s buffers on this device from then on, until
    /// [`enable_peer_access`](Self::enable_peer_access) again.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for the device itself; what HIP returns for making the device current,
    /// for `hipDeviceSynchronize` and for `hipDeviceDisablePeerAccess` (`hipErrorPeerAccessNotEnabled`,
    /// status `invalid_state`, where access was not on).
    ///
    /// ```no_run
    /// let (d0, d1) = (hip::Device::get(0)?, hip::Device::get(1)?);
    /// d0.enable_peer_access(&d1)?;
    /// // ... kernels on d0 use d1's buffers ...
    /// d0.disable_peer_access(&d1)?;
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn disable_peer_access(&self, peer: &Device) -> Result<()> {
        if peer.ordinal() == self.ordinal() {
            return Err(Error::InvalidArgument {
                what: "peer device",
                value: peer.ordinal().to_string(),
                reason: "a device is not its own peer; give another device".into(),
            });
        }
        // New launches are refused first (a launch that already found the access on holds the gate
        // until it is queued), then the queued ones finish, then the mapping goes.
        {
            let _gate = crate::device::peer_gate_exclusive();
            self.forget_peer_access(peer);
        }
        self.bind()?;
        result::device_synchronize()?;
        result::device::disable_peer_access(peer.ordinal() as i32)
    }
}
