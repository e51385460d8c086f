//! Pinned memory reached by kernels through its device mapping: [`PinnedBuffer::mapped`] gives its
//! device address (`hipHostGetDevicePointer`) as a kernel argument ([`MappedPinned`]), ordered by the
//! memory model like any buffer's: a launch given it with `arg` reads the memory, with `arg_mut` writes
//! it, and the host's own borrows ([`PinnedBuffer::as_slice`], [`PinnedBuffer::as_mut_slice`]) wait for
//! those launches.

use super::pinned::PinnedBuffer;
use super::tracking::Allocation;
use super::{DeviceCopy, DevicePtr, HostMemory};
use crate::error::Result;
use crate::result;
use std::marker::PhantomData;
use std::sync::Arc;

/// A [`PinnedBuffer`]'s device address, to pass to a kernel ([`LaunchArgs::arg`](crate::LaunchArgs::arg)
/// to read it, [`LaunchArgs::arg_mut`](crate::LaunchArgs::arg_mut) to write it). It borrows the buffer
/// mutably: no host slice of it exists while a launch can be given the address, and the host's next
/// borrow waits for the launches that used it. Refused in captures, as pinned memory is.
#[derive(Debug)]
pub struct MappedPinned<'a, T: DeviceCopy> {
    ptr: DevicePtr,
    len: usize,
    alloc: &'a Arc<Allocation>,
    _buffer: PhantomData<&'a mut [T]>,
}

impl<T: DeviceCopy> PinnedBuffer<T> {
    /// The buffer's device address as a kernel argument (`hipHostGetDevicePointer`): for memory made
    /// with [`PinnedFlags::MAPPED`](super::PinnedFlags::MAPPED) (on AMD and on NVIDIA with unified
    /// addressing every pinned buffer is mapped, and the runtime answers for the others).
    ///
    /// # Errors
    ///
    /// What HIP returns for making the device current and for `hipHostGetDevicePointer` (memory the
    /// device has no mapping of).
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device, stream: &Stream, add_one: &Function) -> hip::Result<()> {
    /// use hip::memory::PinnedFlags;
    /// let mut host = PinnedBuffer::<u32>::zeroed_with_flags(device, 3, PinnedFlags::MAPPED)?;
    /// host.as_mut_slice()?.copy_from_slice(&[1, 2, 3]);
    /// let n = host.len() as u32;
    /// let mut mapped = host.mapped()?;
    /// let mut args = LaunchArgs::new();
    /// args.arg_mut(&mut mapped).arg(&n);
    /// // SAFETY: add_one(unsigned* x, unsigned n) adds 1 to x[0..n).
    /// unsafe { add_one.launch(stream, &LaunchConfig::for_num_elems(n), &mut args)? };
    /// assert_eq!(host.as_slice()?, [2, 3, 4]); // waits for the kernel
    /// # Ok(()) }
    /// ```
    pub fn mapped(&mut self) -> Result<MappedPinned<'_, T>> {
        let ptr = if self.is_empty() {
            std::ptr::null_mut()
        } else {
            self.device().bind()?;
            // SAFETY: the buffer's live pinned memory from hipHostMalloc; HIP only looks the address up
            // and answers an error for memory it has no device mapping of.
            unsafe {
                result::stream_memop::host_get_device_pointer(self.host_ptr().cast_mut().cast())
            }?
        };
        Ok(MappedPinned {
            ptr,
            len: self.len(),
            alloc: self.allocation(),
            _buffer: PhantomData,
        })
    }
}

impl<T: DeviceCopy> MappedPinned<'_, T> {
    /// The device address.
    pub fn device_ptr(&self) -> DevicePtr {
        self.ptr
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The `ptr` field itself, for [`KernelArg`](crate::KernelArg), whose parameter must point at memory
    /// stored in `self`.
    pub(crate) fn device_ptr_field(&self) -> &DevicePtr {
        &self.ptr
    }

    /// The pinned memory's allocation, which launches given the address are ordered by.
    pub(crate) fn alloc(&self) -> &Arc<Allocation> {
        self.alloc
    }
}

#[cfg(test)]
impl<'a, T: DeviceCopy> MappedPinned<'a, T> {
    /// A mapping record for unit tests without a GPU: `len` elements at device address `ptr` in `alloc`.
    pub(crate) fn for_unit_tests(alloc: &'a Arc<Allocation>, ptr: DevicePtr, len: usize) -> Self {
        MappedPinned {
            ptr,
            len,
            alloc,
            _buffer: PhantomData,
        }
    }
}
