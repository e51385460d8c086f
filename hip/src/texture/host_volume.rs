//! 3-D copies with a pinned host side (`hipMemcpy3DAsync` from and to the host): the host memory seen as
//! a dense box of elements, every position plus the extent checked against it as against a device
//! side, the host memory a user of the stream for the memory model, as a pinned copy's is.

use super::copy::{params_3d, sealed, Volume, VolumeLayout};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::memory::tracking::Allocation;
use crate::memory::{Access, DeviceCopy, HostMemory, HostMemoryMut};
use crate::stream::Stream;
use hip_sys as sys;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::Arc;

impl Stream {
    /// Queue a copy of an `extent` (elements: width, height, depth) box from pinned host memory `src`,
    /// seen as a dense box of `src_dims` elements (rows of `src_dims[0]` elements, `src_dims[1]` rows a
    /// slice, `src_dims[2]` slices), at `src_at`, into the [`Array`](super::Array) or
    /// [`PitchedBuffer`](crate::memory::PitchedBuffer) `dst` at `dst_at` (`hipMemcpy3DAsync`, host to
    /// device). A read of `src` and a write of `dst` for the memory model: the host writes `src` again
    /// only once the copy is done.
    ///
    /// # Errors
    ///
    /// Before HIP is called: [`Error::InvalidArgument`] for `src_dims` holding more elements than
    /// `src` (or overflowing), for a box past either side's extent (naming the side and axis), and for a
    /// capturing stream (pinned memory is refused in graphs); [`Error::DeviceMismatch`] unless all
    /// three share a device. Then what HIP returns.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device, stream: &Stream) -> hip::Result<()> {
    /// use hip::texture::{Array, ArrayFlags, Extent};
    /// let voxels = PinnedBuffer::from_slice(device, &[1.5f32; 32 * 16 * 8])?;
    /// let mut a = Array::<f32>::zeroed(device, Extent::new(32, 16, 8), ArrayFlags::DEFAULT)?;
    /// stream.copy_3d_from_host_async(&voxels, [32, 16, 8], [0; 3], &mut a, [0; 3], [32, 16, 8])?;
    /// # Ok(()) }
    /// ```
    pub fn copy_3d_from_host_async<T: DeviceCopy>(
        &self,
        src: &impl HostMemory<T>,
        src_dims: [usize; 3],
        src_at: [usize; 3],
        dst: &mut impl Volume<T>,
        dst_at: [usize; 3],
        extent: [usize; 3],
    ) -> Result<()> {
        const SOURCE: &str = "hipMemcpy3DAsync source (host)";
        let src = HostVolume::<T>::new(
            SOURCE,
            src.host_ptr().cast_mut().cast(),
            src.len(),
            src_dims,
            src.allocation(),
            src.device(),
        )?;
        let names = ["hipMemcpy3DAsync", SOURCE, "hipMemcpy3DAsync destination"];
        let Some(mut p) = params_3d(names, self.device(), &src, src_at, &*dst, dst_at, extent)?
        else {
            return Ok(());
        };
        p.kind = sys::hipMemcpyHostToDevice as _;
        // SAFETY: `src` is pinned host memory of `src.len()` elements, at least the dense box of
        // `src_dims` (HostVolume::new) in which params_3d checked the region.
        unsafe {
            self.queue_3d(
                &p,
                (src.alloc, Access::Read),
                (dst.allocation(), Access::Write),
            )
        }
    }

    /// Queue a copy of an `extent` box of the [`Array`](super::Array) or
    /// [`PitchedBuffer`](crate::memory::PitchedBuffer) `src` at `src_at` into pinned host memory `dst`,
    /// seen as a dense box of `dst_dims` elements, at `dst_at` (`hipMemcpy3DAsync`, device to host). A
    /// read of `src` and a write of `dst` for the memory model: the host reads `dst` only once the copy
    /// is done.
    ///
    /// # Errors
    ///
    /// As [`copy_3d_from_host_async`](Self::copy_3d_from_host_async), the sides swapped.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device, stream: &Stream, a: &hip::texture::Array<f32>) -> hip::Result<()> {
    /// let mut slab = PinnedBuffer::<f32>::zeroed(device, 32 * 16 * 2)?;
    /// // Slices 3 and 4 of a 32 x 16 x 8 array.
    /// stream.copy_3d_to_host_async(a, [0, 0, 3], &mut slab, [32, 16, 2], [0; 3], [32, 16, 2])?;
    /// stream.synchronize()?;
    /// # Ok(()) }
    /// ```
    pub fn copy_3d_to_host_async<T: DeviceCopy>(
        &self,
        src: &impl Volume<T>,
        src_at: [usize; 3],
        dst: &mut impl HostMemoryMut<T>,
        dst_dims: [usize; 3],
        dst_at: [usize; 3],
        extent: [usize; 3],
    ) -> Result<()> {
        const DESTINATION: &str = "hipMemcpy3DAsync destination (host)";
        let dst = HostVolume::<T>::new(
            DESTINATION,
            dst.host_mut_ptr().cast(),
            dst.len(),
            dst_dims,
            dst.allocation(),
            dst.device(),
        )?;
        let names = ["hipMemcpy3DAsync", "hipMemcpy3DAsync source", DESTINATION];
        let Some(mut p) = params_3d(names, self.device(), src, src_at, &dst, dst_at, extent)?
        else {
            return Ok(());
        };
        p.kind = sys::hipMemcpyDeviceToHost as _;
        // SAFETY: `dst` is pinned host memory of `dst.len()` elements, at least the dense box of
        // `dst_dims` (HostVolume::new) in which params_3d checked the region, borrowed mutably.
        unsafe {
            self.queue_3d(
                &p,
                (src.allocation(), Access::Read),
                (dst.alloc, Access::Write),
            )
        }
    }
}

/// `dims`' elements fit the `len` elements of the host side (and do not overflow).
fn check_dims(what: &'static str, len: usize, dims: [usize; 3]) -> Result<()> {
    let total = dims.iter().try_fold(1usize, |t, &d| t.checked_mul(d));
    match total {
        Some(t) if t <= len => Ok(()),
        _ => Err(Error::InvalidArgument {
            what,
            value: format!("a dense box of {dims:?} elements"),
            reason: format!("the host memory holds {len} elements"),
        }),
    }
}

/// Pinned host memory seen as a dense box of `dims` elements: one side of a 3-D copy.
struct HostVolume<'a, T> {
    ptr: *mut c_void,
    dims: [usize; 3],
    alloc: &'a Arc<Allocation>,
    device: &'a Device,
    elem: PhantomData<T>,
}

impl<'a, T> HostVolume<'a, T> {
    /// The `len` elements at `ptr` as a dense box of `dims`, refused (naming `what`) unless the box's
    /// elements fit them ([`check_dims`]).
    fn new(
        what: &'static str,
        ptr: *mut c_void,
        len: usize,
        dims: [usize; 3],
        alloc: &'a Arc<Allocation>,
        device: &'a Device,
    ) -> Result<Self> {
        check_dims(what, len, dims)?;
        Ok(Self {
            ptr,
            dims,
            alloc,
            device,
            elem: PhantomData,
        })
    }
}

impl<T> sealed::Sealed for HostVolume<'_, T> {}
impl<T: DeviceCopy> Volume<T> for HostVolume<'_, T> {
    fn device(&self) -> &Device {
        self.device
    }
    fn layout(&self) -> VolumeLayout {
        VolumeLayout::pitched(self.ptr, self.dims[0] * size_of::<T>(), self.dims)
    }
    fn allocation(&self) -> &Arc<Allocation> {
        self.alloc
    }
}

#[cfg(test)]
mod tests {
    use super::check_dims;

    #[test]
    fn a_host_box_must_fit_the_host_memory() {
        check_dims("w", 60, [3, 4, 5]).unwrap();
        check_dims("w", 0, [0, 4, 5]).unwrap();
        let e = check_dims("w", 59, [3, 4, 5]).unwrap_err().to_string();
        assert!(e.contains("[3, 4, 5]") && e.contains("59 elements"), "{e}");
        let e = check_dims("w", usize::MAX, [usize::MAX, 2, 1]).unwrap_err();
        assert!(e.to_string().contains("holds"), "{e}");
    }
}
