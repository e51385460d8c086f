//! Textures that read an array's elements as another format of the same size (a resource view,
//! `hipResourceViewDesc`): a `u32` array holding `f32` bits read as floats, four bytes read as one
//! `u32`, unsigned elements read as signed. AMD's HIP applies a view's format only (its levels and
//! layers are the array's own), so the crate's views are format views over the whole array. The
//! texture description must suit both formats: CUDA checks filtering against the array's own format
//! (measured on an H100, CUDA 12.9: linear filtering of a `u32` array read as `f32` is refused with
//! `hipErrorUnknown`), so the crate refuses what either format cannot take, before HIP, everywhere.

use super::array::{Array, ArrayFlags, Extent};
use super::format::ChannelFormat;
use super::object::{TextureDesc, TextureObject};
use crate::error::{Error, Result};
use hip_sys as sys;

/// The view of a whole array of `extent` (layered or not) read as `V`, after checking `T` and `V` have
/// the same size: the view describes the same bytes, element for element.
pub(super) fn format_view<T: ChannelFormat, V: ChannelFormat>(
    extent: Extent,
    flags: ArrayFlags,
) -> Result<sys::hipResourceViewDesc> {
    if T::DESC.bytes() != V::DESC.bytes() {
        return Err(Error::InvalidArgument {
            what: "hipCreateTextureObject resource view",
            value: format!(
                "elements of {} bytes read as {} bytes",
                T::DESC.bytes(),
                V::DESC.bytes()
            ),
            reason:
                "a view reads each element of the array as one element of its format: both must \
                     be the same size"
                    .into(),
        });
    }
    let last_layer = if flags.contains(ArrayFlags::LAYERED) {
        extent.depth.saturating_sub(1) as _
    } else {
        0
    };
    Ok(sys::hipResourceViewDesc {
        format: V::DESC.view_format() as _,
        width: extent.width,
        height: extent.height,
        depth: extent.depth,
        firstMipmapLevel: 0,
        lastMipmapLevel: 0,
        firstLayer: 0,
        lastLayer: last_layer,
    })
}

impl TextureObject {
    /// A texture over `array` that reads each element as a `V` of the same size (a resource view of
    /// format `V`): the same bytes returned as `V`, e.g. `f32` bits kept in a `u32` array read as
    /// floats, or `[u8; 4]` texels read as one `u32` each.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] (before any HIP call) for a `V` of another size than `T`, and for a
    /// description that `T` or `V` cannot take (as [`from_array`](Self::from_array) checks it: CUDA
    /// checks filtering against the array's own format, so linear filtering of an integer array read
    /// as floats is refused); what HIP returns for making the device current and for
    /// `hipCreateTextureObject`.
    ///
    /// ```no_run
    /// # fn f(bits: &hip::texture::Array<u32>) -> hip::Result<()> {
    /// use hip::texture::{TextureDesc, TextureObject};
    /// let tex = TextureObject::from_array_as::<f32, _>(bits, &TextureDesc::default())?;
    /// // tex2D<float>(tex, x, y) reads the float whose bits the array holds
    /// # Ok(()) }
    /// ```
    pub fn from_array_as<V: ChannelFormat, T: ChannelFormat>(
        array: &Array<T>,
        desc: &TextureDesc,
    ) -> Result<Self> {
        let view = format_view::<T, V>(array.extent(), array.flags())?;
        desc.check::<T>(false)?;
        desc.check::<V>(false)?;
        let mut res = sys::hipResourceDesc {
            resType: sys::hipResourceTypeArray as _,
            ..Default::default()
        };
        res.res.array.array = array.raw();
        Self::create_viewed(&array.alloc, &res, &desc.raw(), Some(&view))
    }
}
