//! Arrays (`hipMallocArray`, `hipMalloc3DArray`, `hipFreeArray`): opaque device memory laid out for the
//! texture units, an allocation of the memory model like any buffer.

use super::ChannelFormat;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::memory::tracking::{Allocation, Release};
use crate::memory::{DeviceBuffer, PitchedBuffer};
use crate::result;
use hip_sys as sys;
use std::marker::PhantomData;
use std::sync::Arc;

/// An array's extent in elements. `height` 0 makes a 1-D array, `depth` 0 a 1-D or 2-D one (HIP's
/// convention).
///
/// ```
/// use hip::texture::Extent;
/// let e = Extent::new(64, 32, 0);
/// assert_eq!((e.rows(), e.slices()), (32, 1));
/// assert_eq!(Extent::new(8, 0, 0).rows(), 1);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    /// Elements in a row.
    pub width: usize,
    /// Rows (0: a 1-D array).
    pub height: usize,
    /// Slices (0: a 1-D or 2-D array).
    pub depth: usize,
}

impl Extent {
    /// An extent of `width` x `height` x `depth` elements.
    pub fn new(width: usize, height: usize, depth: usize) -> Extent {
        Extent {
            width,
            height,
            depth,
        }
    }

    /// Rows a copy may address: `height`, at least 1.
    pub fn rows(&self) -> usize {
        self.height.max(1)
    }

    /// Slices a copy may address: `depth`, at least 1.
    pub fn slices(&self) -> usize {
        self.depth.max(1)
    }

    /// Every element, or `None` when the count overflows.
    fn elements(&self) -> Option<usize> {
        self.width
            .checked_mul(self.rows())?
            .checked_mul(self.slices())
    }
}

/// How an array may be used (`hipArrayDefault`, `hipArraySurfaceLoadStore`, `hipArrayLayered`); combine
/// with `|`.
///
/// ```
/// use hip::texture::ArrayFlags;
/// let f = ArrayFlags::LAYERED | ArrayFlags::SURFACE_LOAD_STORE;
/// assert!(f.contains(ArrayFlags::LAYERED) && !ArrayFlags::DEFAULT.contains(ArrayFlags::LAYERED));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ArrayFlags(u32);

impl ArrayFlags {
    /// Read through texture objects and copies only.
    pub const DEFAULT: ArrayFlags = ArrayFlags(0);
    /// Also read and written by kernels through surface objects ([`super::SurfaceObject`]).
    pub const SURFACE_LOAD_STORE: ArrayFlags = ArrayFlags(sys::hipArraySurfaceLoadStore);
    /// A layered array: `extent.depth` layers of a 1-D (`height` 0) or 2-D array, read by kernels one
    /// layer at a time (`tex1DLayered`, `tex2DLayered`); filled and read by
    /// [`Stream::copy_3d_async`](crate::Stream::copy_3d_async), the layers as its slices.
    pub const LAYERED: ArrayFlags = ArrayFlags(sys::hipArrayLayered);

    /// The flags as HIP takes them.
    pub fn bits(self) -> u32 {
        self.0
    }

    /// Whether every flag of `other` is set here.
    pub fn contains(self, other: ArrayFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for ArrayFlags {
    type Output = ArrayFlags;
    fn bitor(self, other: ArrayFlags) -> ArrayFlags {
        ArrayFlags(self.0 | other.0)
    }
}

/// A 1-D, 2-D or 3-D array of `T` on a device, freed (`hipFreeArray`) when it and every texture or
/// surface object over it are gone and no stream still uses it. Filled and read by copies
/// ([`Stream::copy_2d_to_array_async`](crate::Stream::copy_2d_to_array_async),
/// [`Stream::copy_2d_from_array_async`](crate::Stream::copy_2d_from_array_async),
/// [`Stream::copy_3d_async`](crate::Stream::copy_3d_async)) and by kernels through texture and
/// surface objects, all ordered by the memory model like any buffer's uses.
///
/// ```no_run
/// use hip::prelude::*;
/// use hip::texture::{Array, ArrayFlags, Extent};
///
/// let device = Device::get(0)?;
/// let image = Array::<[u8; 4]>::zeroed(&device, Extent::new(640, 480, 0), ArrayFlags::DEFAULT)?;
/// assert_eq!(image.extent().width, 640);
/// # Ok::<(), hip::Error>(())
/// ```
#[derive(Debug)]
pub struct Array<T: ChannelFormat> {
    pub(super) alloc: Arc<Allocation>,
    /// The `hipArray_t`: the allocation's own handle, or one level of a mipmapped array (whose
    /// allocation it shares), as an integer so the array stays `Send` and `Sync`.
    handle: usize,
    extent: Extent,
    flags: ArrayFlags,
    _elem: PhantomData<T>,
}

impl<T: ChannelFormat> Array<T> {
    /// A zero-filled array: allocated, then a copy from a zeroed device buffer on the device's null
    /// stream (ordered before every later use). `extent.depth` 0 allocates with `hipMallocArray`,
    /// otherwise (and for a layered array) with `hipMalloc3DArray`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] (before any HIP call) for a zero width, a depth without a height (unless
    /// layered), a layered array without a depth, or a size that overflows; what HIP returns for making the device current, the allocation and the
    /// zeroing copy.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device) -> hip::Result<()> {
    /// use hip::texture::{Array, ArrayFlags, Extent};
    /// let volume = Array::<f32>::zeroed(device, Extent::new(32, 32, 32), ArrayFlags::SURFACE_LOAD_STORE)?;
    /// # Ok(()) }
    /// ```
    pub fn zeroed(device: &Device, extent: Extent, flags: ArrayFlags) -> Result<Self> {
        // SAFETY: `uninit` asks that the contents be written before they are read: the copy below
        // writes every element (recorded as the array's writer on the null stream, so every later use
        // is ordered after it); on its failure the array is dropped unread.
        let mut a = unsafe { Self::uninit(device, extent, flags)? };
        a.write_zeros()?;
        Ok(a)
    }

    /// Queue a copy of zeros over every element on the device's null stream (recorded as the array's
    /// writer there, so every later use is ordered after it): a 2-D copy for a 1-D or 2-D array, a 3-D
    /// one for a 3-D or layered array.
    pub(super) fn write_zeros(&mut self) -> Result<()> {
        let layered = self.flags.contains(ArrayFlags::LAYERED);
        let (extent, device) = (self.extent(), self.device().clone());
        let null = device.default_stream();
        let (w, h, d) = (extent.width, extent.rows(), extent.slices());
        if extent.depth == 0 && !layered {
            let zeros = DeviceBuffer::<T>::zeroed(&device, w * h)?;
            null.copy_2d_to_array_async(&zeros, w * size_of::<T>(), self, (0, 0), w, h)
        } else {
            let zeros = PitchedBuffer::<T>::zeroed_3d(&device, w, h, d)?;
            null.copy_3d_async(&zeros, [0; 3], self, [0; 3], [w, h, d])
        }
    }

    /// An array with whatever the memory held.
    ///
    /// # Errors
    ///
    /// As [`zeroed`](Self::zeroed), without the copy.
    ///
    /// # Safety
    /// The contents are unspecified: write them (a copy, a surface write) before reading them.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device) -> hip::Result<()> {
    /// use hip::texture::{Array, ArrayFlags, Extent};
    /// // SAFETY: a copy fills the array before any read.
    /// let a = unsafe { Array::<u16>::uninit(device, Extent::new(100, 0, 0), ArrayFlags::DEFAULT)? };
    /// # Ok(()) }
    /// ```
    pub unsafe fn uninit(device: &Device, extent: Extent, flags: ArrayFlags) -> Result<Self> {
        check_extent::<T>(extent, flags)?;
        let desc = T::DESC.raw();
        device.bind()?;
        let raw = if extent.depth == 0 && !flags.contains(ArrayFlags::LAYERED) {
            result::texture::malloc_array(&desc, extent.width, extent.height, flags.bits())?
        } else {
            let e = sys::hipExtent {
                width: extent.width,
                height: extent.height,
                depth: extent.depth,
            };
            result::texture::malloc_3d_array(&desc, e, flags.bits())?
        };
        Ok(Array {
            alloc: Allocation::new(raw.cast(), device, Release::FreeArray),
            handle: raw as usize,
            extent,
            flags,
            _elem: PhantomData,
        })
    }

    /// The extent it was made with.
    pub fn extent(&self) -> Extent {
        self.extent
    }

    /// The flags it was made with.
    pub fn flags(&self) -> ArrayFlags {
        self.flags
    }

    /// The device it lives on.
    pub fn device(&self) -> &Device {
        self.alloc.device()
    }

    /// The `hipArray_t` handle, for raw calls: order each with [`track_use`](Self::track_use) first.
    pub fn raw(&self) -> sys::hipArray_t {
        self.handle as sys::hipArray_t
    }

    /// Order work about to be queued on `stream` outside this crate (a raw call on [`raw`](Self::raw))
    /// that makes `access` to the array, as [`DeviceMemory::track_use`](crate::DeviceMemory::track_use)
    /// does for buffers: `stream` waits for the conflicting work of other streams, and later operations
    /// of this crate are ordered after it.
    ///
    /// # Errors
    ///
    /// What HIP returns for the wait queued on `stream`.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, a: &hip::texture::Array<f32>) -> hip::Result<()> {
    /// a.track_use(stream, Access::Read)?; // a raw hipMemcpy2DFromArrayAsync on `stream` follows
    /// # Ok(()) }
    /// ```
    pub fn track_use(&self, stream: &crate::Stream, access: crate::Access) -> Result<()> {
        self.alloc.use_on_open(&stream.begin_op(), access)
    }
}

impl<T: ChannelFormat> Array<T> {
    /// Level `handle` of a mipmapped array whose allocation is `alloc`: its uses are the mipmapped
    /// array's, and it keeps it (mipmap.rs).
    pub(super) fn level_of(
        alloc: &Arc<Allocation>,
        handle: sys::hipArray_t,
        extent: Extent,
    ) -> Self {
        Array {
            alloc: alloc.clone(),
            handle: handle as usize,
            extent,
            flags: ArrayFlags::DEFAULT,
            _elem: PhantomData,
        }
    }
}

#[cfg(test)]
impl<T: ChannelFormat> Array<T> {
    /// An array record for unit tests without a GPU: a fake handle, never freed; only for checks made
    /// before any HIP call.
    pub(crate) fn for_unit_tests(device: &Device, extent: Extent, flags: ArrayFlags) -> Self {
        Array {
            alloc: Allocation::new(0x1000 as *mut _, device, Release::Nothing),
            handle: 0x1000,
            extent,
            flags,
            _elem: PhantomData,
        }
    }
}

/// Refuse an extent HIP cannot hold, before any call: [`Error::InvalidArgument`] naming what is wrong.
pub(crate) fn check_extent<T>(e: Extent, flags: ArrayFlags) -> Result<()> {
    let refuse = |reason: &str| Error::InvalidArgument {
        what: "array extent",
        value: format!(
            "width {}, height {}, depth {} (elements of {} bytes)",
            e.width,
            e.height,
            e.depth,
            size_of::<T>()
        ),
        reason: reason.into(),
    };
    if e.width == 0 {
        return Err(refuse("an array needs a width of at least 1"));
    }
    if flags.contains(ArrayFlags::LAYERED) {
        if e.depth == 0 {
            return Err(refuse(
                "a layered array needs a depth of at least 1 (its number of layers)",
            ));
        }
    } else if e.height == 0 && e.depth != 0 {
        return Err(refuse(
            "a 3-D array needs a height (height 0 means a 1-D array; a 1-D layered array takes \
             ArrayFlags::LAYERED)",
        ));
    }
    e.elements()
        .and_then(|n| n.checked_mul(size_of::<T>()))
        .ok_or_else(|| refuse("the array's bytes overflow usize"))?;
    Ok(())
}
