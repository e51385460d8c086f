//! Handing device memory to another library and taking it from one: [`DeviceBuffer::into_raw`] and
//! [`DeviceBuffer::from_raw`].

use super::tracking::Release;
use super::{byte_size, DeviceBuffer, DeviceCopy, DevicePtr};
use crate::device::Device;
use crate::error::{Error, Result};
use std::sync::Arc;

impl<T: DeviceCopy> DeviceBuffer<T> {
    /// Give the memory up: its device address and element count, which the caller now owns and frees
    /// with `hipFree`. Waits (on the host) until every stream that still uses the buffer is done, so the
    /// memory is idle when handed over.
    ///
    /// Refused with [`Error::InvalidArgument`] (and the buffer dropped as usual) when something else
    /// still keeps the memory alive, or when it is stream-ordered pool memory
    /// ([`DeviceBuffer::alloc_async`]). What can keep it, each because work it holds may still use the
    /// memory: a [`Graph`](crate::Graph) or [`GraphExec`](crate::GraphExec) with a captured operation on
    /// it, a stream capture still in progress that used it, and (feature `rccl`) a collective group that
    /// has not ended. Dropping those graphs, ending the capture or the group first makes this work.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when a graph, a capture or a group still keeps the memory, or for
    /// stream-ordered memory; an error of the work it waited for (what HIP returns for the wait).
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device) -> hip::Result<()> {
    /// let x = DeviceBuffer::from_slice(device, &[1.0f32, 2.0, 3.0])?;
    /// let (ptr, len) = x.into_raw()?; // idle: no stream still uses it
    /// // ... hand `ptr` to another library, which frees it with hipFree, or take it back:
    /// // SAFETY: `ptr` is the hipMalloc memory `into_raw` gave up, `len` f32 long, owned by nothing else.
    /// let x = unsafe { DeviceBuffer::<f32>::from_raw(device, ptr, len)? };
    /// # Ok(()) }
    /// ```
    pub fn into_raw(mut self) -> Result<(DevicePtr, usize)> {
        let others = Arc::strong_count(&self.alloc) - 1;
        let Some(alloc) = Arc::get_mut(&mut self.alloc) else {
            return Err(Error::InvalidArgument {
                what: "buffer to release as a raw allocation",
                value: format!("{} elements at {:p}", self.len, self.ptr),
                reason: kept_elsewhere(others),
            });
        };
        alloc.release_to_caller()?;
        Ok((self.ptr, self.len))
    }

    /// Take ownership of `len` elements of device memory at `ptr` (from another library, or from
    /// [`into_raw`](Self::into_raw)): the buffer frees it with `hipFree` when dropped (any non-null `ptr`,
    /// also one holding no elements: `len` 0 or a zero-sized `T`), and the memory model orders its uses
    /// from now on. A null `ptr` holding bytes, or a size that overflows, is
    /// [`Error::InvalidArgument`] / [`Error::AllocationTooLarge`].
    ///
    /// # Errors
    ///
    /// [`Error::AllocationTooLarge`] when `len * size_of::<T>()` overflows, [`Error::InvalidArgument`]
    /// for a null `ptr` holding bytes. Nothing is asked of HIP.
    ///
    /// # Safety
    /// `ptr` came from `hipMalloc` on `device` (not a pool, not `hipMallocManaged`, not an offset into
    /// an allocation), holds at least `len * size_of::<T>()` bytes, and nothing else frees it or uses it
    /// from now on; work queued on it before this call (by another library) is complete, or the caller
    /// orders the buffer's first uses after it. `T`'s every bit pattern is a value (as `DeviceCopy`
    /// promises), so whatever the memory holds may be read.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device, n: usize) -> hip::Result<()> {
    /// // Memory another library allocated with hipMalloc and hands over.
    /// device.bind()?;
    /// let mut ptr = std::ptr::null_mut();
    /// // SAFETY: an out-pointer to a live local.
    /// let code = unsafe { hip::sys::hipMalloc(&mut ptr, n * 4) };
    /// assert_eq!(code, hip::sys::hipSuccess);
    /// // SAFETY: `ptr` is hipMalloc memory of `device`, n f32 long, used and freed by nothing else now.
    /// let x = unsafe { DeviceBuffer::<f32>::from_raw(device, ptr, n)? }; // freed with hipFree on drop
    /// # Ok(()) }
    /// ```
    pub unsafe fn from_raw(device: &Device, ptr: DevicePtr, len: usize) -> Result<Self> {
        let bytes = byte_size::<T>(len)?;
        if ptr.is_null() && bytes > 0 {
            return Err(Error::InvalidArgument {
                what: "raw device allocation",
                value: format!("null, for {len} elements ({bytes} bytes)"),
                reason: "a null address holds no memory".into(),
            });
        }
        Ok(Self::from_parts(ptr, len, device, adopted_release(ptr)))
    }
}

/// How memory handed over to [`DeviceBuffer::from_raw`] is released: any address with `hipFree`, even
/// one holding no elements (it was handed over all the same); null has nothing to free.
fn adopted_release(ptr: DevicePtr) -> Release {
    if ptr.is_null() {
        Release::Nothing
    } else {
        Release::Free
    }
}

/// Why [`DeviceBuffer::into_raw`] refuses memory `others` holders besides the buffer keep alive: every
/// kind of holder there is, since the allocation does not record which one it is.
fn kept_elsewhere(others: usize) -> String {
    format!(
        "{others} other holder(s) keep this memory alive for work that may still use it: a graph or \
         executable graph with a captured operation on it, a stream capture in progress that used it, or \
         an RCCL group not yet ended; drop the graphs, end the capture or the group first"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::DeviceMemory;

    #[test]
    fn from_raw_refuses_a_null_address_holding_bytes_before_anything_else() {
        let d = Device::for_unit_tests(0);
        // SAFETY: null holds nothing: refused, or adopted as an empty buffer that frees nothing.
        let refused = unsafe { DeviceBuffer::<u32>::from_raw(&d, std::ptr::null_mut(), 4) };
        match refused {
            Err(Error::InvalidArgument { value, .. }) => {
                assert_eq!(value, "null, for 4 elements (16 bytes)")
            }
            other => panic!("{other:?}"),
        }
        // SAFETY: as above.
        let empty = unsafe { DeviceBuffer::<u32>::from_raw(&d, std::ptr::null_mut(), 0) }.unwrap();
        assert_eq!((empty.len(), empty.device_ptr()), (0, std::ptr::null_mut()));
        // Handed back as it came, with nothing to wait for.
        assert_eq!(empty.into_raw().unwrap(), (std::ptr::null_mut(), 0));
        // SAFETY: as above; zero-sized elements hold no bytes.
        let none = unsafe { DeviceBuffer::<[u32; 0]>::from_raw(&d, std::ptr::null_mut(), 9) };
        assert_eq!(none.unwrap().len(), 9);
        // A size that overflows.
        // SAFETY: refused before the address is looked at.
        let huge = unsafe { DeviceBuffer::<u64>::from_raw(&d, std::ptr::null_mut(), usize::MAX) };
        assert!(
            matches!(huge, Err(Error::AllocationTooLarge { .. })),
            "{huge:?}"
        );
    }

    #[test]
    fn adopted_memory_is_freed_whatever_its_length() {
        let p = 0x7f00_0000_1000usize as DevicePtr;
        // Freed whatever the length: no elements (len 0, or a zero-sized T) included, as the address was
        // handed over all the same.
        assert!(matches!(adopted_release(p), Release::Free));
        // Null: nothing to free.
        assert!(matches!(
            adopted_release(std::ptr::null_mut()),
            Release::Nothing
        ));
    }

    /// A buffer record of no memory HIP knows (`Release::Nothing`): handing it over calls no HIP function.
    fn buffer() -> DeviceBuffer<u32> {
        DeviceBuffer::from_parts(
            0x1000 as DevicePtr,
            4,
            &Device::for_unit_tests(0),
            Release::Nothing,
        )
    }

    #[test]
    fn memory_another_holder_keeps_is_refused_naming_the_holders_until_it_lets_go() {
        let b = buffer();
        // What a graph's capture log does with an allocation it used: keep a clone of the Arc.
        let (graph, capture) = (b.alloc.clone(), b.alloc.clone());
        let err = b.into_raw().unwrap_err();
        let text = err.to_string();
        assert!(text.contains("2 other holder(s)"), "{text}");
        for holder in [
            "executable graph",
            "stream capture in progress",
            "RCCL group",
        ] {
            assert!(text.contains(holder), "{holder}: {text}");
        }
        assert!(!text.contains("a graph still keeps"), "{text}");
        drop((graph, capture));
        // Alone again: handed over, address and length as allocated.
        assert_eq!(buffer().into_raw().unwrap(), (0x1000 as DevicePtr, 4));
    }
}
