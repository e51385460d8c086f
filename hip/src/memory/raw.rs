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
    /// [`into_raw`](Self::into_raw)): the buffer frees it with `hipFree` when dropped, and the memory model
    /// orders its uses from now on. A null `ptr` holding bytes, or a size that overflows, is
    /// [`Error::InvalidArgument`] / [`Error::AllocationTooLarge`].
    ///
    /// # Safety
    /// `ptr` came from `hipMalloc` on `device` (not a pool, not `hipMallocManaged`, not an offset into
    /// an allocation), holds at least `len * size_of::<T>()` bytes, and nothing else frees it or uses it
    /// from now on; work queued on it before this call (by another library) is complete, or the caller
    /// orders the buffer's first uses after it. `T`'s every bit pattern is a value (as `DeviceCopy`
    /// promises), so whatever the memory holds may be read.
    pub unsafe fn from_raw(device: &Device, ptr: DevicePtr, len: usize) -> Result<Self> {
        let bytes = byte_size::<T>(len)?;
        if ptr.is_null() && bytes > 0 {
            return Err(Error::InvalidArgument {
                what: "raw device allocation",
                value: format!("null, for {len} elements ({bytes} bytes)"),
                reason: "a null address holds no memory".into(),
            });
        }
        let release = if bytes == 0 {
            Release::Nothing
        } else {
            Release::Free
        };
        Ok(Self::from_parts(ptr, len, device, release))
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
