//! Pinned host memory that graph nodes copy to and from, borrowed by the host at run time.

use super::host_lease::HostLease;
use super::pinned::PinnedBuffer;
use super::tracking::{Access, Allocation};
use super::{DeviceCopy, HostMemory};
use crate::device::Device;
use crate::error::Result;
use std::sync::Arc;

/// Pinned host memory (`hipHostMalloc`) that a graph's nodes copy from and into
/// ([`GraphBuilder::copy_from_host`](crate::GraphBuilder::copy_from_host),
/// [`GraphBuilder::copy_to_host`](crate::GraphBuilder::copy_to_host)): the host fills a graph's input and
/// reads its output between launches.
///
/// A [`PinnedBuffer`] is kept out of graphs because a launch needs no borrow of it, so the borrow
/// checker cannot keep a replay from writing memory the host holds a slice of. This buffer checks its
/// borrows at run time instead, as a `RefCell` does: [`borrow`](Self::borrow) and
/// [`borrow_mut`](Self::borrow_mut) return guards, and while one lives a
/// [`GraphExec::launch`](crate::GraphExec::launch) whose graph conflicts with it (writes the buffer, or
/// reads it while the guard is mutable) is refused with [`Error::InvalidArgument`](crate::Error::InvalidArgument).
/// A borrow waits, like [`PinnedBuffer::as_slice`], for the launches queued before it that conflict.
///
/// Clones share the memory (an `Arc`); the memory lives until the last clone and every graph using it
/// are gone, and is freed after the last launch that uses it is done.
///
/// ```no_run
/// use hip::prelude::*;
/// use hip::{GraphBuilder, GraphPinnedBuffer};
///
/// # fn f(device: &Device, stream: &Stream) -> hip::Result<()> {
/// let input = GraphPinnedBuffer::<f32>::zeroed(device, 1024)?;
/// let output = GraphPinnedBuffer::<f32>::zeroed(device, 1024)?;
/// let mut x = DeviceBuffer::<f32>::zeroed(device, 1024)?;
/// let mut b = GraphBuilder::new(device)?;
/// let up = b.copy_from_host(&[], &mut x, &input)?;
/// // ... kernels on `x` after `up` ...
/// b.copy_to_host(&[up], &output, &x)?;
/// let mut exec = b.build()?.instantiate()?;
/// for step in 0..10 {
///     input.borrow_mut()?.fill(step as f32); // waits for the last launch to read it
///     exec.launch(stream)?;
///     let sum: f32 = output.borrow()?.iter().sum(); // waits for this launch to write it
///     # let _ = sum;
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct GraphPinnedBuffer<T: DeviceCopy> {
    buf: Arc<PinnedBuffer<T>>,
    /// The lease its allocation carries (graph launches reach it from there).
    lease: Arc<HostLease>,
}

impl<T: DeviceCopy> Clone for GraphPinnedBuffer<T> {
    fn clone(&self) -> Self {
        GraphPinnedBuffer {
            buf: self.buf.clone(),
            lease: self.lease.clone(),
        }
    }
}

impl<T: DeviceCopy> From<PinnedBuffer<T>> for GraphPinnedBuffer<T> {
    /// The buffer's memory, from now on borrowed through the guards (the `PinnedBuffer` is consumed: no
    /// slice or view of it is left).
    fn from(buf: PinnedBuffer<T>) -> Self {
        let lease = buf.allocation().start_lease();
        GraphPinnedBuffer {
            buf: Arc::new(buf),
            lease,
        }
    }
}

impl<T: DeviceCopy> GraphPinnedBuffer<T> {
    /// `len` zeroed elements (as [`PinnedBuffer::zeroed`]).
    ///
    /// # Errors
    ///
    /// As [`PinnedBuffer::zeroed`]: [`Error::AllocationTooLarge`](crate::Error::AllocationTooLarge) when
    /// the byte size overflows, and what HIP returns for `hipHostMalloc`.
    ///
    /// ```no_run
    /// # fn f(device: &hip::Device) -> hip::Result<()> {
    /// let out = hip::GraphPinnedBuffer::<u32>::zeroed(device, 256)?;
    /// assert!(out.borrow()?.iter().all(|&v| v == 0));
    /// # Ok(()) }
    /// ```
    pub fn zeroed(device: &Device, len: usize) -> Result<Self> {
        Ok(PinnedBuffer::zeroed(device, len)?.into())
    }

    /// A new buffer holding a copy of `src` (as [`PinnedBuffer::from_slice`]).
    ///
    /// # Errors
    ///
    /// As [`zeroed`](Self::zeroed).
    ///
    /// ```no_run
    /// # fn f(device: &hip::Device) -> hip::Result<()> {
    /// let input = hip::GraphPinnedBuffer::from_slice(device, &[1u32, 2, 3])?;
    /// assert_eq!(input.len(), 3);
    /// # Ok(()) }
    /// ```
    pub fn from_slice(device: &Device, src: &[T]) -> Result<Self> {
        Ok(PinnedBuffer::from_slice(device, src)?.into())
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The device the memory was pinned for (graphs of this device may use it).
    pub fn device(&self) -> &Device {
        self.buf.device()
    }

    /// The contents for reading, once every launch queued before that writes the buffer is done. While
    /// the guard lives, launches of graphs that write the buffer are refused (those that only read it
    /// may go) and so is [`borrow_mut`](Self::borrow_mut).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) while a mutable borrow lives, or inside a
    /// host function while a launch still writes the buffer; an error of the work it waited for (what
    /// HIP returns for the wait).
    ///
    /// ```no_run
    /// # fn f(out: &hip::GraphPinnedBuffer<f32>) -> hip::Result<()> {
    /// let first = out.borrow()?[0];
    /// # Ok(()) }
    /// ```
    pub fn borrow(&self) -> Result<GraphPinnedRef<'_, T>> {
        self.begin(Access::Read)?;
        Ok(GraphPinnedRef { buf: self })
    }

    /// The contents for writing, once every launch queued before that uses the buffer is done. While
    /// the guard lives, launches of graphs that use the buffer are refused, and so are other borrows.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) while another borrow lives, or inside a
    /// host function while a launch still uses the buffer; an error of the work it waited for.
    ///
    /// ```no_run
    /// # fn f(input: &hip::GraphPinnedBuffer<f32>) -> hip::Result<()> {
    /// input.borrow_mut()?.copy_from_slice(&[1.0, 2.0]);
    /// # Ok(()) }
    /// ```
    pub fn borrow_mut(&self) -> Result<GraphPinnedRefMut<'_, T>> {
        self.begin(Access::Write)?;
        Ok(GraphPinnedRefMut { buf: self })
    }

    /// Count the borrow, then wait for the launches queued before it that conflict (a launch after it
    /// is refused by the lease).
    fn begin(&self, access: Access) -> Result<()> {
        self.lease.begin(access)?;
        if let Err(e) = self.allocation().host_wait(access) {
            self.lease.end(access);
            return Err(e);
        }
        Ok(())
    }

    pub(crate) fn allocation(&self) -> &Arc<Allocation> {
        self.buf.allocation()
    }

    pub(crate) fn host_ptr(&self) -> *mut T {
        self.buf.host_ptr().cast_mut()
    }
}

/// A shared borrow of a [`GraphPinnedBuffer`]'s contents ([`GraphPinnedBuffer::borrow`]): dereferences
/// to `[T]`.
#[derive(Debug)]
pub struct GraphPinnedRef<'a, T: DeviceCopy> {
    buf: &'a GraphPinnedBuffer<T>,
}

impl<T: DeviceCopy> std::ops::Deref for GraphPinnedRef<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: pinned memory of `len` initialised T (zeroed at allocation), or dangling and non-null
        // with none, alive while `buf` is borrowed. The lease counts this guard as a reader: the launches
        // that write it and were queued before were waited for (`begin`), later ones are refused, and no
        // mutable borrow can begin, until the guard drops.
        unsafe { std::slice::from_raw_parts(self.buf.host_ptr(), self.buf.len()) }
    }
}

impl<T: DeviceCopy> Drop for GraphPinnedRef<'_, T> {
    fn drop(&mut self) {
        self.buf.lease.end(Access::Read);
    }
}

/// A mutable borrow of a [`GraphPinnedBuffer`]'s contents ([`GraphPinnedBuffer::borrow_mut`]):
/// dereferences to `[T]`.
#[derive(Debug)]
pub struct GraphPinnedRefMut<'a, T: DeviceCopy> {
    buf: &'a GraphPinnedBuffer<T>,
}

impl<T: DeviceCopy> std::ops::Deref for GraphPinnedRefMut<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: as in GraphPinnedRef, with this guard the only borrow (the lease counts it as the writer).
        unsafe { std::slice::from_raw_parts(self.buf.host_ptr(), self.buf.len()) }
    }
}

impl<T: DeviceCopy> std::ops::DerefMut for GraphPinnedRefMut<'_, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in deref, for writing: the lease excludes every other host borrow and every graph
        // launch that uses the buffer until the guard drops, and the launches queued before it were
        // waited for; `&mut self` makes this the only slice the guard hands out at a time.
        unsafe { std::slice::from_raw_parts_mut(self.buf.host_ptr(), self.buf.len()) }
    }
}

impl<T: DeviceCopy> Drop for GraphPinnedRefMut<'_, T> {
    fn drop(&mut self) {
        self.buf.lease.end(Access::Write);
    }
}
