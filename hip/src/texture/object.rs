//! Texture objects (`hipCreateTextureObject`, `hipDestroyTextureObject`) over an array, linear memory or
//! pitched 2-D memory, and what they share with surface objects: the runtime object kept until no queued
//! work (and no graph) can use it.

use super::{Array, ChannelFormat, MipmappedArray};
use crate::error::{Error, Result};
use crate::launch::{KeepAlive, KernelArg};
use crate::memory::tracking::Allocation;
use crate::memory::{check_plane, row_bytes, Access, DeviceMemory};
use crate::release::{now_or_later, RawHandle};
use crate::result;
use hip_sys as sys;
use std::ffi::c_void;
use std::sync::Arc;

/// What a texture fetch outside `[0, size)` reads (`hipTextureAddressMode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddressMode {
    /// Repeat: the coordinate modulo the size. Normalized coordinates only.
    Wrap,
    /// The nearest edge texel.
    Clamp,
    /// Repeat mirrored. Normalized coordinates only.
    Mirror,
    /// The border color ([`TextureDesc::border_color`]).
    Border,
}

/// How a fetch between texel centres is answered (`hipTextureFilterMode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilterMode {
    /// The nearest texel.
    Point,
    /// Linear (bilinear, trilinear) interpolation of the neighbours, with 8-bit fractional weights in
    /// hardware. Needs a texture that returns floats.
    Linear,
}

/// What a fetch returns (`hipTextureReadMode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadMode {
    /// The element as stored.
    ElementType,
    /// 8- and 16-bit integers as floats in `[0, 1]` (unsigned) or `[-1, 1]` (signed).
    NormalizedFloat,
}

/// How a texture object samples (`hipTextureDesc`, without mipmaps).
///
/// ```
/// use hip::texture::{AddressMode, FilterMode, TextureDesc};
/// let d = TextureDesc {
///     filter: FilterMode::Linear,
///     address: [AddressMode::Wrap; 3],
///     normalized_coords: true,
///     ..TextureDesc::default()
/// };
/// assert_eq!(d.read, hip::texture::ReadMode::ElementType);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TextureDesc {
    /// Per axis (x, y, z).
    pub address: [AddressMode; 3],
    /// Point or linear.
    pub filter: FilterMode,
    /// Element or normalized float.
    pub read: ReadMode,
    /// Coordinates in `[0, 1)` rather than texels.
    pub normalized_coords: bool,
    /// What [`AddressMode::Border`] reads.
    pub border_color: [f32; 4],
    /// Between mipmap levels (a texture over a [`MipmappedArray`](super::MipmappedArray)): point takes
    /// the nearest level, linear blends the two nearest. Unused by other textures.
    pub mipmap_filter: FilterMode,
    /// Added to the level of detail each fetch asks for (mipmapped textures only).
    pub mipmap_level_bias: f32,
    /// The lowest and highest level of detail a fetch is clamped to (mipmapped textures only); the
    /// highest is clamped to the last level as well, so the default (0 to infinity) allows every level.
    pub mipmap_level_clamp: [f32; 2],
}

impl Default for TextureDesc {
    /// Clamp, point, element type, unnormalized coordinates, a zero border.
    fn default() -> Self {
        TextureDesc {
            address: [AddressMode::Clamp; 3],
            filter: FilterMode::Point,
            read: ReadMode::ElementType,
            normalized_coords: false,
            border_color: [0.0; 4],
            mipmap_filter: FilterMode::Point,
            mipmap_level_bias: 0.0,
            mipmap_level_clamp: [0.0, f32::INFINITY],
        }
    }
}

impl TextureDesc {
    /// Refuse what the runtime would silently change or reject for elements of `T`: linear filtering of
    /// a texture that returns integers, normalized reads of a format that has none, wrap and mirror on
    /// unnormalized coordinates (CUDA falls back to clamp), and for linear memory (`linear`, fetched by
    /// index) any filtering or normalized coordinates.
    pub(crate) fn check<T: ChannelFormat>(&self, linear: bool) -> Result<()> {
        let refuse = |value: String, reason: &str| {
            Err(Error::InvalidArgument {
                what: "hipCreateTextureObject texture description",
                value,
                reason: reason.into(),
            })
        };
        let d = T::DESC;
        if self.read == ReadMode::NormalizedFloat && !d.normalizable() {
            return refuse(
                format!(
                    "ReadMode::NormalizedFloat for {:?} channels of {} bits",
                    d.kind, d.bits[0]
                ),
                "only 8- and 16-bit integer formats read as normalized floats",
            );
        }
        let returns_float =
            d.kind == super::ChannelKind::Float || self.read == ReadMode::NormalizedFloat;
        if self.filter == FilterMode::Linear && !returns_float {
            return refuse(
                format!("FilterMode::Linear for {:?} channels read as elements", d.kind),
                "linear filtering returns floats: use a float format, or ReadMode::NormalizedFloat \
                 with 8- or 16-bit integers",
            );
        }
        if linear && (self.filter == FilterMode::Linear || self.normalized_coords) {
            return refuse(
                format!(
                    "filter {:?}, normalized coordinates {} on linear memory",
                    self.filter, self.normalized_coords
                ),
                "a texture over linear memory is fetched by index (tex1Dfetch): no filtering, no \
                 normalized coordinates",
            );
        }
        let repeats = self
            .address
            .iter()
            .find(|m| matches!(m, AddressMode::Wrap | AddressMode::Mirror));
        if let (Some(m), false) = (repeats, self.normalized_coords) {
            return refuse(
                format!("AddressMode::{m:?} with unnormalized coordinates"),
                "wrap and mirror apply to normalized coordinates only (the runtime would clamp \
                 instead)",
            );
        }
        Ok(())
    }

    /// The C description.
    pub fn raw(&self) -> sys::hipTextureDesc {
        let mut t = sys::hipTextureDesc::default();
        for (raw, m) in t.addressMode.iter_mut().zip(self.address) {
            *raw = match m {
                AddressMode::Wrap => sys::hipAddressModeWrap,
                AddressMode::Clamp => sys::hipAddressModeClamp,
                AddressMode::Mirror => sys::hipAddressModeMirror,
                AddressMode::Border => sys::hipAddressModeBorder,
            } as _;
        }
        t.filterMode = match self.filter {
            FilterMode::Point => sys::hipFilterModePoint,
            FilterMode::Linear => sys::hipFilterModeLinear,
        } as _;
        t.readMode = match self.read {
            ReadMode::ElementType => sys::hipReadModeElementType,
            ReadMode::NormalizedFloat => sys::hipReadModeNormalizedFloat,
        } as _;
        t.normalizedCoords = i32::from(self.normalized_coords) as _;
        t.borderColor = self.border_color;
        t
    }

    /// Refuse mipmap settings the runtime would reject or misread, for elements of `T`: linear blending
    /// of levels of a texture that returns integers, a bias or clamp that is not a number, a negative
    /// or inverted clamp.
    pub(crate) fn check_mipmap<T: ChannelFormat>(&self) -> Result<()> {
        let refuse = |value: String, reason: &str| {
            Err(Error::InvalidArgument {
                what: "hipCreateTextureObject mipmap description",
                value,
                reason: reason.into(),
            })
        };
        let returns_float =
            T::DESC.kind == super::ChannelKind::Float || self.read == ReadMode::NormalizedFloat;
        if self.mipmap_filter == FilterMode::Linear && !returns_float {
            return refuse(
                format!("mipmap_filter Linear for {:?} channels read as elements", T::DESC.kind),
                "blending levels returns floats: use a float format, or ReadMode::NormalizedFloat with \
                 8- or 16-bit integers",
            );
        }
        let [lo, hi] = self.mipmap_level_clamp;
        if !self.mipmap_level_bias.is_finite() || lo.is_nan() || hi.is_nan() || lo < 0.0 || lo > hi
        {
            return refuse(
                format!("bias {}, clamp [{lo}, {hi}]", self.mipmap_level_bias),
                "the bias is a finite number, the clamp two levels from 0 up, the lower first",
            );
        }
        Ok(())
    }

    /// The C description of a texture over `levels` mipmap levels: [`raw`](Self::raw) with the mipmap
    /// fields, the highest clamp at most the last level.
    pub(crate) fn raw_mipmapped(&self, levels: u32) -> sys::hipTextureDesc {
        let mut t = self.raw();
        t.mipmapFilterMode = match self.mipmap_filter {
            FilterMode::Point => sys::hipFilterModePoint,
            FilterMode::Linear => sys::hipFilterModeLinear,
        } as _;
        t.mipmapLevelBias = self.mipmap_level_bias;
        let last = levels.saturating_sub(1) as f32;
        t.minMipmapLevelClamp = self.mipmap_level_clamp[0].min(last);
        t.maxMipmapLevelClamp = self.mipmap_level_clamp[1].min(last);
        t
    }
}

/// Which runtime object a [`Handle`] holds.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    Texture(sys::hipTextureObject_t),
    Surface(sys::hipSurfaceObject_t),
}

/// A texture or surface object of the runtime: destroyed once no queued work can use it. Every use
/// (a launch given the object) is recorded on `alloc`, the memory it reads, so waiting for every user of
/// that memory waits for every use; a graph that recorded a launch keeps this handle
/// ([`KernelArg::keep_alive`]).
pub(super) struct Handle {
    pub(super) kind: Kind,
    pub(super) alloc: Arc<Allocation>,
}

// SAFETY: the handle is an opaque runtime object (a pointer on AMD, an integer on NVIDIA) that HIP takes
// from any thread; the host never dereferences it. The allocation is Send + Sync.
unsafe impl Send for Handle {}
// SAFETY: as for Send: shared access only reads the handle's value.
unsafe impl Sync for Handle {}

impl Drop for Handle {
    /// Wait (host) for every stream still using the memory, then destroy the object; on the releasing
    /// thread inside a host function. If the wait fails the object is leaked, never destroyed under work.
    fn drop(&mut self) {
        let (kind, alloc) = (RawHandle(self.kind), self.alloc.clone());
        now_or_later(move || {
            if alloc.host_wait(Access::Write).is_err() || alloc.device().bind().is_err() {
                return;
            }
            // SAFETY: the object was made by create_texture_object / create_surface_object (the only
            // `Handle`s) and is destroyed once, here. Every launch given it recorded a use of `alloc`,
            // and the host just waited for every such use; graphs that recorded one keep this handle, so
            // the last owner is gone only after them.
            let _ = unsafe {
                match kind.get() {
                    Kind::Texture(t) => result::texture::destroy_texture_object(t),
                    Kind::Surface(s) => result::texture::destroy_surface_object(s),
                }
            };
        });
    }
}

/// A texture object: read-only, filtered access to an [`Array`] or device memory from kernels
/// (`tex1D`, `tex2D`, `tex3D`, `tex1Dfetch` with a `hipTextureObject_t` parameter). Pass it to a launch
/// with [`LaunchArgs::arg`](crate::LaunchArgs::arg): the launch is then a read of the memory for the
/// memory model, ordered after the copies that write it, and the memory (and this object) stay until
/// the kernel is done, or, captured or added to a built graph, until the graph is gone. It keeps its
/// memory alive itself.
///
/// On AMD a `hipTextureObject_t` parameter is a pointer in the kernel's metadata (`global_buffer`), on
/// NVIDIA a 64-bit value: the argument says so to the signature check. A texture object is for kernels
/// of its memory's device.
///
/// ```no_run
/// use hip::prelude::*;
/// use hip::texture::{Array, ArrayFlags, Extent, FilterMode, TextureDesc, TextureObject};
///
/// # fn f(device: &Device, stream: &Stream, kernel: &Function) -> hip::Result<()> {
/// let mut image = Array::<f32>::zeroed(device, Extent::new(64, 64, 0), ArrayFlags::DEFAULT)?;
/// let texels = DeviceBuffer::from_slice(device, &vec![1.0f32; 64 * 64])?;
/// stream.copy_2d_to_array_async(&texels, 64 * 4, &mut image, (0, 0), 64, 64)?;
/// let desc = TextureDesc { filter: FilterMode::Linear, ..TextureDesc::default() };
/// let tex = TextureObject::from_array(&image, &desc)?;
/// let mut out = DeviceBuffer::<f32>::zeroed(device, 64 * 64)?;
/// let mut args = LaunchArgs::new();
/// args.arg(&tex).arg_mut(&mut out);
/// // SAFETY: `sample(hipTextureObject_t, float*)` reads the texture and writes out[0..4096).
/// unsafe { kernel.launch(stream, &LaunchConfig::for_num_elems(64 * 64), &mut args)? };
/// # Ok(()) }
/// ```
pub struct TextureObject {
    /// The handle's value, stored here for the kernel parameter to point at.
    raw: sys::hipTextureObject_t,
    alloc: Arc<Allocation>,
    keep: KeepAlive,
}

// SAFETY: as for Handle: `raw` is an opaque runtime handle the host never dereferences.
unsafe impl Send for TextureObject {}
// SAFETY: as for Send.
unsafe impl Sync for TextureObject {}

impl std::fmt::Debug for TextureObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TextureObject")
            .field("raw", &self.raw)
            .finish()
    }
}

impl TextureObject {
    /// A texture over `array` (`hipResourceTypeArray`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] (before any HIP call) for a description the format cannot take (see
    /// [`TextureDesc`]: linear filtering of integers read as elements, normalized reads of 32-bit or
    /// float formats, wrap or mirror on unnormalized coordinates); what HIP returns for making the
    /// device current and `hipCreateTextureObject`.
    ///
    /// ```no_run
    /// # fn f(a: &hip::texture::Array<[u8; 4]>) -> hip::Result<()> {
    /// use hip::texture::{ReadMode, TextureDesc, TextureObject};
    /// let desc = TextureDesc { read: ReadMode::NormalizedFloat, ..TextureDesc::default() };
    /// let tex = TextureObject::from_array(a, &desc)?; // float4 in [0, 1] in the kernel
    /// # Ok(()) }
    /// ```
    pub fn from_array<T: ChannelFormat>(array: &Array<T>, desc: &TextureDesc) -> Result<Self> {
        desc.check::<T>(false)?;
        let mut res = sys::hipResourceDesc {
            resType: sys::hipResourceTypeArray as _,
            ..Default::default()
        };
        res.res.array.array = array.raw();
        // SAFETY: `res` names the live array, which the object's handle keeps (its allocation) until
        // the object is destroyed, and that only once no queued work uses it (Handle's drop).
        Self::create(&array.alloc, &res, &desc.raw())
    }

    /// A texture over `memory` as a 1-D run of elements (`hipResourceTypeLinear`), fetched by index
    /// (`tex1Dfetch`).
    ///
    /// # Errors
    ///
    /// As [`from_array`](Self::from_array); [`Error::InvalidArgument`] also for empty memory, and for
    /// linear filtering or normalized coordinates (not applied to linear memory).
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(x: &DeviceBuffer<f32>) -> hip::Result<()> {
    /// let tex = hip::texture::TextureObject::from_linear(x, &Default::default())?;
    /// # Ok(()) }
    /// ```
    pub fn from_linear<T: ChannelFormat>(
        memory: &impl DeviceMemory<T>,
        desc: &TextureDesc,
    ) -> Result<Self> {
        desc.check::<T>(true)?;
        if memory.is_empty() {
            return Err(Error::InvalidArgument {
                what: "hipCreateTextureObject linear memory",
                value: "0 elements".into(),
                reason: "a texture needs at least one element".into(),
            });
        }
        let mut res = sys::hipResourceDesc {
            resType: sys::hipResourceTypeLinear as _,
            ..Default::default()
        };
        res.res.linear.devPtr = memory.device_ptr();
        res.res.linear.desc = T::DESC.raw();
        res.res.linear.sizeInBytes = memory.byte_len();
        // SAFETY: `res` names `byte_len()` bytes of the memory's live allocation, kept by the handle
        // until destroyed after every use (Handle's drop).
        Self::create(memory.allocation(), &res, &desc.raw())
    }

    /// A texture over `height` rows of `width` elements of `memory`, rows `pitch` bytes apart
    /// (`hipResourceTypePitch2D`): a [`PitchedBuffer`](crate::memory::PitchedBuffer) with its
    /// `pitch_bytes()`, whose pitch meets the device's texture pitch alignment.
    ///
    /// # Errors
    ///
    /// As [`from_array`](Self::from_array); [`Error::InvalidArgument`] also for a zero width or height,
    /// a pitch shorter than a row, or rows past the end of `memory`; the runtime refuses a pitch or
    /// address its texture units cannot take.
    ///
    /// ```no_run
    /// # fn f(b: &hip::memory::PitchedBuffer<f32>) -> hip::Result<()> {
    /// use hip::texture::TextureObject;
    /// let tex = TextureObject::from_pitched_2d(b, b.pitch_bytes(), b.width(), b.height(), &Default::default())?;
    /// # Ok(()) }
    /// ```
    pub fn from_pitched_2d<T: ChannelFormat>(
        memory: &impl DeviceMemory<T>,
        pitch: usize,
        width: usize,
        height: usize,
        desc: &TextureDesc,
    ) -> Result<Self> {
        const WHAT: &str = "hipCreateTextureObject pitched memory";
        desc.check::<T>(false)?;
        let row = row_bytes::<T>(WHAT, width)?;
        if row == 0 || height == 0 {
            return Err(Error::InvalidArgument {
                what: WHAT,
                value: format!("width {width}, height {height}"),
                reason: "a texture needs at least one element".into(),
            });
        }
        check_plane(WHAT, memory.byte_len(), 0, pitch, row, height)?;
        let mut res = sys::hipResourceDesc {
            resType: sys::hipResourceTypePitch2D as _,
            ..Default::default()
        };
        res.res.pitch2D.devPtr = memory.device_ptr();
        res.res.pitch2D.desc = T::DESC.raw();
        res.res.pitch2D.width = width;
        res.res.pitch2D.height = height;
        res.res.pitch2D.pitchInBytes = pitch;
        // SAFETY: `res` names `(height - 1) * pitch + row` bytes of the live allocation (check_plane),
        // kept by the handle until destroyed after every use (Handle's drop).
        Self::create(memory.allocation(), &res, &desc.raw())
    }

    /// A texture over every level of `array` (`hipResourceTypeMipmappedArray`), sampled at a level of
    /// detail (`tex2DLod`, `tex2DGrad`, ...) with `desc`'s mipmap settings: `mipmap_filter` between
    /// levels, `mipmap_level_bias`, `mipmap_level_clamp` (its upper end clamped to the last level).
    ///
    /// # Errors
    ///
    /// As [`from_array`](Self::from_array); [`Error::InvalidArgument`] also for mipmap settings the
    /// format cannot take (linear blending of integers read as elements) or that are not numbers.
    ///
    /// ```no_run
    /// # fn f(m: &hip::texture::MipmappedArray<f32>) -> hip::Result<()> {
    /// use hip::texture::{FilterMode, TextureDesc, TextureObject};
    /// let desc = TextureDesc {
    ///     filter: FilterMode::Linear,
    ///     mipmap_filter: FilterMode::Linear, // trilinear
    ///     normalized_coords: true,
    ///     ..TextureDesc::default()
    /// };
    /// let tex = TextureObject::from_mipmapped(m, &desc)?;
    /// # Ok(()) }
    /// ```
    pub fn from_mipmapped<T: ChannelFormat>(
        array: &MipmappedArray<T>,
        desc: &TextureDesc,
    ) -> Result<Self> {
        desc.check::<T>(false)?;
        desc.check_mipmap::<T>()?;
        let mut res = sys::hipResourceDesc {
            resType: sys::hipResourceTypeMipmappedArray as _,
            ..Default::default()
        };
        // NVIDIA with HIP 5.2's headers: the field is the CUDA runtime's type, the handle the driver's.
        res.res.mipmap.mipmap = array.raw().cast();
        // SAFETY: `res` names the live mipmapped array, kept by the object's handle (its allocation)
        // until the object is destroyed after every use of it or of its levels (Handle's drop).
        Self::create(&array.alloc, &res, &desc.raw_mipmapped(array.levels()))
    }

    /// Create the object over memory `res` names, which each caller checked belongs to `alloc`.
    fn create(
        alloc: &Arc<Allocation>,
        res: &sys::hipResourceDesc,
        desc: &sys::hipTextureDesc,
    ) -> Result<Self> {
        Self::create_viewed(alloc, res, desc, None)
    }

    /// [`create`](Self::create) with a resource view (`view`), which its caller checked fits the
    /// array `res` names.
    pub(super) fn create_viewed(
        alloc: &Arc<Allocation>,
        res: &sys::hipResourceDesc,
        desc: &sys::hipTextureDesc,
        view: Option<&sys::hipResourceViewDesc>,
    ) -> Result<Self> {
        alloc.device().bind()?;
        // SAFETY: the memory `res` names is `alloc`'s (each caller checked its extent), kept by the
        // handle made at once below, which destroys the object only after every use of `alloc`.
        let raw = unsafe { result::texture::create_texture_object_viewed(res, desc, view)? };
        let handle = Arc::new(Handle {
            kind: Kind::Texture(raw),
            alloc: alloc.clone(),
        });
        Ok(TextureObject {
            raw,
            alloc: alloc.clone(),
            keep: handle,
        })
    }

    /// The raw `hipTextureObject_t`, for calls this crate does not wrap (ordered by the caller).
    pub fn raw(&self) -> sys::hipTextureObject_t {
        self.raw
    }

    /// An object record for unit tests without a GPU: a null handle over `alloc`, `keep` standing for
    /// the runtime object (nothing is destroyed).
    #[cfg(test)]
    pub(crate) fn for_unit_tests(alloc: &Arc<Allocation>, keep: KeepAlive) -> Self {
        TextureObject {
            // SAFETY: all-zero bits are a value of the handle type (a pointer or an integer).
            raw: unsafe { std::mem::zeroed() },
            alloc: alloc.clone(),
            keep,
        }
    }
}

/// Whether a texture or surface object is a pointer parameter in the kernel's metadata: on AMD
/// (`__hip_texture*`, `global_buffer`), not on NVIDIA (a 64-bit value).
pub const OBJECT_IS_POINTER_PARAM: bool = cfg!(hip_platform = "amd");

// SAFETY: `as_kernel_param` points at `raw`, the object's handle stored in `self` (the value a
// `hipTextureObject_t` parameter takes), of `kernel_param_size()` = its size, valid while `self` is
// borrowed. `is_device_pointer` says what the kernel's metadata says the parameter is; `allocation` is
// the memory the object reads (so a launch is ordered and recorded by it), and `keep_alive` the runtime
// object, which a graph must keep.
unsafe impl KernelArg for TextureObject {
    fn as_kernel_param(&self) -> *mut c_void {
        &self.raw as *const sys::hipTextureObject_t as *mut c_void
    }
    fn kernel_param_size(&self) -> usize {
        size_of::<sys::hipTextureObject_t>()
    }
    fn is_device_pointer(&self) -> bool {
        OBJECT_IS_POINTER_PARAM
    }
    fn allocation(&self) -> Option<&Arc<Allocation>> {
        Some(&self.alloc)
    }
    fn keep_alive(&self) -> Option<&KeepAlive> {
        Some(&self.keep)
    }
}
