//! Arrays, 3-D memory, texture and surface objects: image and volume work.
//!
//! - [`Array`] (`hipMallocArray`, `hipMalloc3DArray`, `hipFreeArray`): 1-D, 2-D or 3-D, of any
//!   [`ChannelFormat`] (8-, 16- and 32-bit integers, `f32`, `half::f16`, as one, two or four channels).
//!   An allocation of the memory model like any buffer: copies into it are writes, copies out of it and
//!   texture fetches reads, surface launches (with `arg_mut`) writes, all ordered across streams.
//! - Pitched memory is [`PitchedBuffer`](crate::memory::PitchedBuffer) (`hipMallocPitch`,
//!   `hipMalloc3D`); 2-D copies between pitched memories are
//!   [`Stream::copy_2d_async`](crate::Stream::copy_2d_async) and its host forms.
//! - Copies: [`Stream::copy_2d_to_array_async`](crate::Stream::copy_2d_to_array_async),
//!   [`Stream::copy_2d_from_array_async`](crate::Stream::copy_2d_from_array_async),
//!   [`Stream::copy_3d_async`](crate::Stream::copy_3d_async) (any [`Volume`]: arrays and pitched
//!   buffers). Every pitch, width, height, depth and position is checked against both sides before HIP
//!   is called: [`Error::InvalidArgument`](crate::Error::InvalidArgument) naming the side and what is
//!   wrong (a pitch shorter than a row, a box past an extent along an axis, an overflow).
//! - [`TextureObject`] over an array, linear or pitched memory, with a [`TextureDesc`] (point or linear
//!   filtering, wrap/clamp/mirror/border per axis, normalized coordinates, element or normalized-float
//!   reads); [`SurfaceObject`] over an array made with [`ArrayFlags::SURFACE_LOAD_STORE`]. Both are
//!   kernel arguments ([`KernelArg`](crate::KernelArg)) that record the launch as a use of their memory,
//!   keep it alive, and are themselves kept by graphs that recorded a launch with them; each is
//!   destroyed only once no queued work uses its memory.
//!
//! - [`MipmappedArray`] (`hipMallocMipmappedArray`): an image and its halved levels, each an [`Array`]
//!   to copy into, sampled at any level of detail by [`TextureObject::from_mipmapped`].
//!
//! On HIP's NVIDIA platform every call maps to the CUDA runtime's (`cudaMallocArray`,
//! `cudaCreateTextureObject`, ...); the descriptors' fields used here exist in every HIP version's
//! headers (5.2.3 to 7.2.4) and in CUDA's.

mod array;
pub(crate) mod copy;
mod format;
mod host_copy;
mod host_volume;
mod mipmap;
mod object;
mod surface;
#[cfg(test)]
mod tests;
mod view;

pub use array::{Array, ArrayFlags, Extent};
pub use copy::{Volume, VolumeLayout};
pub use format::{ChannelDesc, ChannelFormat, ChannelKind, ChannelScalar};
pub use mipmap::MipmappedArray;
pub use object::{
    AddressMode, FilterMode, ReadMode, TextureDesc, TextureObject, OBJECT_IS_POINTER_PARAM,
};
pub use surface::SurfaceObject;

/// Whether this build can make surface objects: the HIP headers declare `hipCreateSurfaceObject` for C
/// (5.7 and later, and NVIDIA); on 5.2 [`SurfaceObject::new`] answers `NotSupported` naming the call.
pub const HAS_SURFACE_OBJECT: bool = cfg!(hip_surface_object);

/// Whether this build can make mipmapped arrays: the HIP headers declare `hipMallocMipmappedArray` (every
/// AMD version, and HIP's NVIDIA headers from 5.7); with HIP 5.2's NVIDIA headers
/// [`MipmappedArray::zeroed`] answers [`Error::NotSupported`](crate::Error::NotSupported) naming the call.
///
/// ```no_run
/// use hip::texture::{Extent, MipmappedArray};
/// let device = hip::Device::get(0)?;
/// if hip::texture::HAS_MIPMAPPED_ARRAY {
///     let mip = MipmappedArray::<f32>::zeroed(&device, Extent::new(64, 64, 0), 7)?;
///     assert_eq!(mip.levels(), 7);
/// }
/// # Ok::<(), hip::Error>(())
/// ```
pub const HAS_MIPMAPPED_ARRAY: bool = cfg!(hip_mipmap);
