//! Which device's memory a launch may pass (issue 43): a kernel on device B given memory of device A that
//! B cannot reach faults the GPU (on AMD the process aborts), so every argument's memory is checked
//! against the stream's device before anything is queued, as every safe operation of this crate does.

use super::LaunchArgs;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::memory::{Allocation, DevicePtr};
use crate::result;

/// The shared side of the peer gate, held by a launch that reaches another device's memory.
pub(crate) type PeerGate = std::sync::RwLockReadGuard<'static, ()>;

/// Whether a kernel on device `on` may be given memory of device `owner`: its own device's; managed
/// memory of any device (every device reaches it); device memory of a peer that `on` was given access
/// to. Never memory of another device whose access is granted per allocation (`granted`): peer access
/// reaches neither memory pools (`hipMemPoolSetAccess`) nor virtual-memory mappings (`hipMemSetAccess`,
/// [`GrowableBuffer`](crate::GrowableBuffer)); even where `MemPool::set_access` or
/// `GrowableBuffer::grant_access` granted it, this check does not ask, and refuses. `peer` and `managed`
/// are asked only when the answer needs them, in that order.
pub(crate) fn reaches(
    on: usize,
    owner: usize,
    granted: bool,
    peer: impl FnOnce() -> bool,
    managed: impl FnOnce() -> bool,
) -> bool {
    on == owner || (!granted && (peer() || managed()))
}

impl LaunchArgs<'_> {
    /// Refuse an argument whose memory `device` cannot reach ([`reaches`]) with
    /// [`Error::DeviceMismatch`]. Costs one comparison per tracked argument when all are on `device`.
    /// With memory of another device the answer carries the peer gate: hold it until the kernel is
    /// queued, so that `Device::disable_peer_access` cannot take the access away in between.
    #[inline]
    pub(crate) fn check_devices(&self, device: &Device) -> Result<Option<PeerGate>> {
        let foreign = (0..self.uses)
            .any(|i| self.tracked_allocation(i).device().ordinal() != device.ordinal());
        if !foreign {
            // Every argument is the launching device's own memory: nothing to ask, no gate to hold.
            return Ok(None);
        }
        self.check_foreign_devices(device)
    }

    /// [`check_devices`](Self::check_devices) when some argument is memory of another device.
    #[cold]
    #[inline(never)]
    fn check_foreign_devices(&self, device: &Device) -> Result<Option<PeerGate>> {
        let gate = crate::device::peer_gate_shared();
        // Asked with the launching device current: the runtime looks the address up in its context.
        self.check_devices_with(device, |addr| {
            device.bind().is_ok() && result::memory::is_managed(addr)
        })?;
        Ok(Some(gate))
    }

    /// [`check_devices`](Self::check_devices), asking `is_managed` whether an address is managed
    /// memory (the runtime, outside unit tests).
    pub(crate) fn check_devices_with(
        &self,
        device: &Device,
        is_managed: impl Fn(DevicePtr) -> bool,
    ) -> Result<()> {
        for i in 0..self.uses {
            let alloc = self.tracked_allocation(i);
            let owner = alloc.device();
            if owner.ordinal() != device.ordinal() {
                other_device(device, alloc, self.tracked_address(i), &is_managed)?;
            }
        }
        Ok(())
    }
}

/// An argument of `device`'s launch whose memory (`alloc`, the kernel given `addr`) is another device's.
#[cold]
#[inline(never)]
fn other_device(
    device: &Device,
    alloc: &Allocation,
    addr: Option<DevicePtr>,
    is_managed: &dyn Fn(DevicePtr) -> bool,
) -> Result<()> {
    let owner = alloc.device();
    let ok = reaches(
        device.ordinal(),
        owner.ordinal(),
        alloc.access_is_granted_per_allocation() || alloc.is_array(),
        || device.has_peer_access(owner),
        || addr.is_some_and(is_managed),
    );
    if ok {
        Ok(())
    } else {
        Err(Error::DeviceMismatch {
            what:
                "kernel launch argument (memory of another device: not managed, and either without \
                   peer access from the stream's device (Device::enable_peer_access) or pool or \
                   virtual memory, which peer access does not reach)",
            stream: device.ordinal(),
            other: owner.ordinal(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::KernelArg;
    use crate::memory::tracking::Release;
    use std::ffi::c_void;
    use std::sync::Arc;

    /// A buffer of device `ordinal` as a launch argument: the address `address` in a tracked allocation.
    struct Mem {
        alloc: Arc<Allocation>,
        address: usize,
    }

    fn mem(ordinal: i32, address: usize) -> Mem {
        Mem {
            alloc: Allocation::new(
                std::ptr::null_mut(),
                &Device::for_unit_tests(ordinal),
                Release::Nothing,
            ),
            address,
        }
    }

    // SAFETY: points at the address it holds, as this crate's buffers do.
    unsafe impl KernelArg for Mem {
        fn as_kernel_param(&self) -> *mut c_void {
            std::ptr::addr_of!(self.address) as *mut c_void
        }
        fn kernel_param_size(&self) -> usize {
            std::mem::size_of::<DevicePtr>()
        }
        fn is_device_pointer(&self) -> bool {
            true
        }
        fn allocation(&self) -> Option<&Arc<Allocation>> {
            Some(&self.alloc)
        }
    }

    fn mismatch(r: Result<()>) -> (usize, usize) {
        match r {
            Err(Error::DeviceMismatch {
                what,
                stream,
                other,
            }) => {
                assert!(what.starts_with("kernel launch argument"), "{what}");
                (stream, other)
            }
            other => panic!("expected DeviceMismatch, got {other:?}"),
        }
    }

    #[test]
    fn another_devices_memory_passes_only_where_the_device_reaches_it() {
        let never = || panic!("not asked");
        // The stream's own device: nothing is asked.
        assert!(reaches(2, 2, false, never, never));
        assert!(reaches(2, 2, true, never, never));
        // Another device's: peer access, else managed memory.
        assert!(reaches(0, 1, false, || true, never));
        assert!(reaches(0, 1, false, || false, || true));
        assert!(!reaches(0, 1, false, || false, || false));
        // Pool memory of another device: never, whatever the peer access.
        assert!(!reaches(0, 1, true, never, never));
    }

    #[test]
    fn a_launch_refuses_arguments_its_device_cannot_reach() {
        let (d0, d1) = (Device::for_unit_tests(10), Device::for_unit_tests(11));
        let (own, other) = (mem(10, 0x1000), mem(11, 0x2000));
        let n = 7u32;
        // All on the stream's device: one comparison each, nothing asked.
        let mut args = LaunchArgs::new();
        args.arg(&own).arg(&n).arg(&own);
        args.check_devices_with(&d0, |_| panic!("not asked"))
            .unwrap();
        // Device 11's buffer on device 10's stream, read or written: refused, naming both devices.
        for write in [false, true] {
            let mut other = mem(11, 0x2000);
            let mut args = LaunchArgs::new();
            args.arg(&own).arg(&n);
            if write {
                args.arg_mut(&mut other);
            } else {
                args.arg(&other);
            }
            let asked = std::cell::Cell::new(None);
            let r = args.check_devices_with(&d0, |a| {
                asked.set(Some(a as usize));
                false
            });
            assert_eq!(mismatch(r), (10, 11), "write {write}");
            // The runtime was asked about the address the kernel would get.
            assert_eq!(asked.get(), Some(0x2000));
        }
        // Managed memory of device 11 passes.
        let mut args = LaunchArgs::new();
        args.arg(&own).arg(&other);
        args.check_devices_with(&d0, |a| a as usize == 0x2000)
            .unwrap();
        // As untracked memory, the caller's to check.
        let mut args = LaunchArgs::new();
        // SAFETY: never launched.
        unsafe { args.arg_untracked(&other) };
        args.check_devices_with(&d0, |_| panic!("not asked"))
            .unwrap();
        // Peer access from device 10 to device 11 lets device 11's memory pass there, not the reverse.
        d0.note_peer_access(&d1);
        let mut args = LaunchArgs::new();
        args.arg(&other);
        args.check_devices_with(&d0, |_| panic!("not asked"))
            .unwrap();
        let mut args = LaunchArgs::new();
        args.arg(&own);
        assert_eq!(mismatch(args.check_devices_with(&d1, |_| false)), (11, 10));
    }

    /// An array of another device is reached by no kernel of the stream's device, even with peer
    /// access (which does reach plain memory of that device).
    #[test]
    fn another_devices_array_is_refused_even_with_peer_access() {
        let (d12, d13) = (Device::for_unit_tests(12), Device::for_unit_tests(13));
        d12.note_peer_access(&d13); // ordinals no other test uses
                                    // A stand-in handle (a null one would be no allocation): never freed, the Arc is leaked below.
        let handle = std::ptr::without_provenance_mut(0x3000);
        let array = Allocation::new(handle, &d13, Release::FreeArray);
        assert!(array.is_array() && !array.access_is_granted_per_allocation());
        let r = other_device(&d12, &array, Some(0x3000 as DevicePtr), &|_| true);
        assert_eq!(mismatch(r), (12, 13));
        std::mem::forget(array);
        let plain = mem(13, 0x4000);
        other_device(&d12, &plain.alloc, Some(0x4000 as DevicePtr), &|_| false).unwrap();
    }

    /// The runtime's path (`check_foreign_devices`, which asks HIP whether an address is managed, with
    /// the launching device current) refuses another device's memory too: here no device can be made
    /// current, so nothing is taken for managed memory.
    #[test]
    fn the_runtime_path_refuses_another_devices_memory() {
        let d = Device::for_unit_tests(14);
        let other = mem(15, 0x5000);
        let mut args = LaunchArgs::new();
        args.arg(&other);
        assert_eq!(mismatch(args.check_foreign_devices(&d).map(drop)), (14, 15));
    }

    #[test]
    fn an_argument_that_is_no_device_pointer_is_not_taken_for_managed_memory() {
        /// A wrapper of another device's memory passed by value (not as a device pointer).
        struct ByValue(Mem);
        // SAFETY: points at the 8 bytes of the address, a value to the kernel.
        unsafe impl KernelArg for ByValue {
            fn as_kernel_param(&self) -> *mut c_void {
                std::ptr::addr_of!(self.0.address) as *mut c_void
            }
            fn kernel_param_size(&self) -> usize {
                8
            }
            fn allocation(&self) -> Option<&Arc<Allocation>> {
                Some(&self.0.alloc)
            }
        }
        let v = ByValue(mem(13, 0x3000));
        let mut args = LaunchArgs::new();
        args.arg(&v);
        let r = args.check_devices_with(&Device::for_unit_tests(12), |_| panic!("not asked"));
        assert_eq!(mismatch(r), (12, 13));
    }
}
