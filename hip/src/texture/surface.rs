//! Surface objects (`hipCreateSurfaceObject`, `hipDestroySurfaceObject`): kernels read and write an
//! array through them (`surf2Dread`, `surf2Dwrite`, ...).

use super::object::{Handle, Kind, OBJECT_IS_POINTER_PARAM};
use super::{Array, ArrayFlags, ChannelFormat};
use crate::error::{Error, Result};
use crate::launch::{KeepAlive, KernelArg};
use crate::memory::tracking::Allocation;
use crate::result;
use hip_sys as sys;
use std::ffi::c_void;
use std::sync::Arc;

/// A surface object over an [`Array`] made with [`ArrayFlags::SURFACE_LOAD_STORE`]: kernels read and
/// write the array through it (`hipSurfaceObject_t` parameter). Pass it with
/// [`LaunchArgs::arg_mut`](crate::LaunchArgs::arg_mut) for a kernel that writes it (a write of the
/// array for the memory model: ordered after every other use), or with
/// [`LaunchArgs::arg`](crate::LaunchArgs::arg) for one that only reads it. It keeps the array alive,
/// and a graph that recorded a launch with it keeps it, as a [`TextureObject`](super::TextureObject)
/// does.
///
/// ```no_run
/// use hip::prelude::*;
/// use hip::texture::{Array, ArrayFlags, Extent, SurfaceObject};
///
/// # fn f(device: &Device, stream: &Stream, kernel: &Function) -> hip::Result<()> {
/// let a = Array::<f32>::zeroed(device, Extent::new(32, 32, 0), ArrayFlags::SURFACE_LOAD_STORE)?;
/// let mut surface = SurfaceObject::new(&a)?;
/// let mut args = LaunchArgs::new();
/// args.arg_mut(&mut surface);
/// // SAFETY: `paint(hipSurfaceObject_t)` writes the 32 x 32 array through the surface only.
/// unsafe { kernel.launch(stream, &LaunchConfig::new((1, 32), (32, 1)), &mut args)? };
/// let mut out = DeviceBuffer::<f32>::zeroed(device, 32 * 32)?;
/// stream.copy_2d_from_array_async(&a, (0, 0), &mut out, 32 * 4, 32, 32)?; // after the kernel
/// # Ok(()) }
/// ```
pub struct SurfaceObject {
    raw: sys::hipSurfaceObject_t,
    alloc: Arc<Allocation>,
    keep: KeepAlive,
}

// SAFETY: `raw` is an opaque runtime handle (a pointer on AMD, an integer on NVIDIA) the host never
// dereferences; HIP takes it from any thread. The allocation and the keep are Send + Sync.
unsafe impl Send for SurfaceObject {}
// SAFETY: as for Send: shared access only reads the handle's value.
unsafe impl Sync for SurfaceObject {}

impl std::fmt::Debug for SurfaceObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SurfaceObject")
            .field("raw", &self.raw)
            .finish()
    }
}

impl SurfaceObject {
    /// A surface over `array` (`hipCreateSurfaceObject`, `hipResourceTypeArray`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] (before any HIP call) for an array made without
    /// [`ArrayFlags::SURFACE_LOAD_STORE`]; what HIP returns for making the device current and
    /// `hipCreateSurfaceObject`.
    ///
    /// ```no_run
    /// # fn f(a: &hip::texture::Array<[u8; 4]>) -> hip::Result<()> {
    /// let s = hip::texture::SurfaceObject::new(a)?;
    /// # Ok(()) }
    /// ```
    pub fn new<T: ChannelFormat>(array: &Array<T>) -> Result<Self> {
        if array.flags().bits() & ArrayFlags::SURFACE_LOAD_STORE.bits() == 0 {
            return Err(Error::InvalidArgument {
                what: "hipCreateSurfaceObject array",
                value: format!(
                    "an array of extent {:?} made with {:?}",
                    array.extent(),
                    array.flags()
                ),
                reason: "a surface needs an array made with ArrayFlags::SURFACE_LOAD_STORE".into(),
            });
        }
        let mut res = sys::hipResourceDesc {
            resType: sys::hipResourceTypeArray as _,
            ..Default::default()
        };
        res.res.array.array = array.raw();
        array.device().bind()?;
        // SAFETY: `res` names the live array, kept (its allocation) by the handle made at once below,
        // which destroys the object only after every use of the array (Handle's drop).
        let raw = unsafe { result::texture::create_surface_object(&res)? };
        let handle = Arc::new(Handle {
            kind: Kind::Surface(raw),
            alloc: array.alloc.clone(),
        });
        Ok(SurfaceObject {
            raw,
            alloc: array.alloc.clone(),
            keep: handle,
        })
    }

    /// The raw `hipSurfaceObject_t`, for calls this crate does not wrap (ordered by the caller).
    pub fn raw(&self) -> sys::hipSurfaceObject_t {
        self.raw
    }
}

// SAFETY: as for TextureObject: `as_kernel_param` points at the handle stored in `self`, of
// `kernel_param_size()` bytes; the pointer-ness is the metadata's; `allocation` is the array the kernel
// reads or writes through it (as `arg` or `arg_mut` says), `keep_alive` the runtime object.
unsafe impl KernelArg for SurfaceObject {
    fn as_kernel_param(&self) -> *mut c_void {
        &self.raw as *const sys::hipSurfaceObject_t as *mut c_void
    }
    fn kernel_param_size(&self) -> usize {
        size_of::<sys::hipSurfaceObject_t>()
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
