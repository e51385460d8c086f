//! Mipmapped arrays (`hipMallocMipmappedArray`, `hipGetMipmappedArrayLevel`, `hipFreeMipmappedArray`):
//! an image and its successively halved levels, filled level by level as [`Array`]s and sampled at any
//! level of detail through a [`TextureObject`](super::TextureObject)
//! ([`from_mipmapped`](super::TextureObject::from_mipmapped)).
//!
//! For the memory model the whole mipmapped array is one allocation: a level's uses are the mipmapped
//! array's, so uses of two levels on two streams are ordered as uses of one buffer (a write of one level
//! waits for another stream's read of another). A texture reads every level, so each level's writes
//! must order it anyway; building levels one from the next is ordered work as well.

use super::array::{check_extent, Array, ArrayFlags, Extent};
use super::format::ChannelFormat;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::memory::tracking::{Allocation, Release};
use crate::result;
use hip_sys as sys;
use std::marker::PhantomData;
use std::sync::Arc;

/// A mipmapped array of `T` on a device: `levels` levels, level 0 of the extent it was made with and
/// each next one half the one before along each axis (at least 1). Freed (`hipFreeMipmappedArray`) when
/// it, every level handed out and every texture over it are gone and no stream still uses it.
///
/// ```no_run
/// use hip::prelude::*;
/// use hip::texture::{Extent, MipmappedArray};
///
/// let device = Device::get(0)?;
/// let image = MipmappedArray::<f32>::zeroed(&device, Extent::new(256, 256, 0), 9)?;
/// assert_eq!(image.level_extent(8)?, Extent::new(1, 1, 0));
/// # Ok::<(), hip::Error>(())
/// ```
#[derive(Debug)]
pub struct MipmappedArray<T: ChannelFormat> {
    pub(super) alloc: Arc<Allocation>,
    extent: Extent,
    levels: u32,
    _elem: PhantomData<T>,
}

impl<T: ChannelFormat> MipmappedArray<T> {
    /// A mipmapped array of `levels` levels with every level zero-filled (copies on the device's null
    /// stream, ordered before every later use).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] (before any HIP call) for an extent an [`Array`] refuses, 0 levels, or
    /// more levels than halving the largest side down to 1 gives; [`Error::NotSupported`] naming
    /// `hipMallocMipmappedArray` where the headers lack it (HIP 5.2's NVIDIA headers); what HIP returns
    /// for making the device current, the allocation, each level and the zeroing copies.
    ///
    /// ```no_run
    /// # fn f(device: &hip::Device) -> hip::Result<()> {
    /// use hip::texture::{Extent, MipmappedArray};
    /// let volume = MipmappedArray::<u16>::zeroed(device, Extent::new(64, 32, 16), 3)?;
    /// assert_eq!(volume.levels(), 3);
    /// # Ok(()) }
    /// ```
    pub fn zeroed(device: &Device, extent: Extent, levels: u32) -> Result<Self> {
        // SAFETY: every level is written below before `uninit`'s contents can be read (each copy is
        // recorded as a write on the null stream, ordering every later use after it); on a failure the
        // array is dropped unread.
        let a = unsafe { Self::uninit(device, extent, levels)? };
        for l in 0..levels {
            a.level(l)?.write_zeros()?;
        }
        Ok(a)
    }

    /// A mipmapped array with whatever the memory held.
    ///
    /// # Errors
    ///
    /// As [`zeroed`](Self::zeroed), without the copies.
    ///
    /// # Safety
    /// The contents are unspecified: write every level a texture will read before reading it.
    ///
    /// ```no_run
    /// # fn f(device: &hip::Device) -> hip::Result<()> {
    /// use hip::texture::{Extent, MipmappedArray};
    /// // SAFETY: copies fill every level before a texture reads them.
    /// let a = unsafe { MipmappedArray::<f32>::uninit(device, Extent::new(64, 64, 0), 7)? };
    /// # Ok(()) }
    /// ```
    pub unsafe fn uninit(device: &Device, extent: Extent, levels: u32) -> Result<Self> {
        check_extent::<T>(extent, ArrayFlags::DEFAULT)?;
        let most = max_levels(extent);
        if levels == 0 || levels > most {
            return Err(Error::InvalidArgument {
                what: "number of mipmap levels",
                value: levels.to_string(),
                reason: format!(
                    "an extent of {}x{}x{} has 1 to {most} levels (halving its largest side to 1)",
                    extent.width, extent.height, extent.depth
                ),
            });
        }
        device.bind()?;
        let e = sys::hipExtent {
            width: extent.width,
            height: extent.height,
            depth: extent.depth,
        };
        let raw = result::texture::malloc_mipmapped_array(&T::DESC.raw(), e, levels, 0)?;
        Ok(MipmappedArray {
            alloc: Allocation::new(raw.cast(), device, Release::FreeMipmappedArray),
            extent,
            levels,
            _elem: PhantomData,
        })
    }

    /// Level `level` as an [`Array`] (`hipGetMipmappedArrayLevel`), to copy into or out of, or to make
    /// a texture or surface of: its uses are this mipmapped array's, and it keeps it alive.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a level past the last; what HIP returns for making the device
    /// current and `hipGetMipmappedArrayLevel`.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, m: &hip::texture::MipmappedArray<f32>, x: &DeviceBuffer<f32>) -> hip::Result<()> {
    /// let mut level1 = m.level(1)?;
    /// let e = level1.extent();
    /// stream.copy_2d_to_array_async(x, e.width * 4, &mut level1, (0, 0), e.width, e.rows())?;
    /// # Ok(()) }
    /// ```
    pub fn level(&self, level: u32) -> Result<Array<T>> {
        let extent = self.level_extent(level)?;
        self.alloc.device().bind()?;
        // SAFETY: the mipmapped array is live while `self` is; the level's array is owned by it, and the
        // `Array` made here holds its allocation, so it is never freed under the level.
        let raw = unsafe { result::texture::mipmapped_array_level(self.raw(), level)? };
        Ok(Array::level_of(&self.alloc, raw, extent))
    }

    /// The extent of level `level`: each side of level 0 halved `level` times, at least 1 (a side of
    /// 0, fewer dimensions, stays 0).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a level past the last.
    ///
    /// ```no_run
    /// # fn f(m: &hip::texture::MipmappedArray<f32>) -> hip::Result<()> {
    /// let top = m.level_extent(0)?;
    /// assert_eq!(top, m.extent());
    /// # Ok(()) }
    /// ```
    pub fn level_extent(&self, level: u32) -> Result<Extent> {
        if level >= self.levels {
            return Err(Error::InvalidArgument {
                what: "mipmap level",
                value: level.to_string(),
                reason: format!("the mipmapped array has {} levels", self.levels),
            });
        }
        Ok(level_extent(self.extent, level))
    }

    /// The extent of level 0.
    pub fn extent(&self) -> Extent {
        self.extent
    }

    /// The number of levels.
    pub fn levels(&self) -> u32 {
        self.levels
    }

    /// The device it lives on.
    pub fn device(&self) -> &Device {
        self.alloc.device()
    }

    /// The `hipMipmappedArray_t` handle, for raw calls (ordered by the caller).
    pub fn raw(&self) -> sys::hipMipmappedArray_t {
        self.alloc.raw_ptr().cast()
    }
}

/// Level `level` of `e`: each non-zero side halved `level` times, at least 1.
pub(crate) fn level_extent(e: Extent, level: u32) -> Extent {
    let half = |n: usize| {
        if n == 0 {
            0
        } else {
            n.checked_shr(level).unwrap_or(0).max(1)
        }
    };
    Extent::new(half(e.width), half(e.height), half(e.depth))
}

/// The most levels `e` has: 1 + floor(log2 of its largest side).
pub(crate) fn max_levels(e: Extent) -> u32 {
    let largest = e.width.max(e.height).max(e.depth).max(1);
    usize::BITS - largest.leading_zeros()
}
