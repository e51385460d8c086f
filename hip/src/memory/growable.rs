//! [`GrowableBuffer`]: a device buffer that grows in place, without copying, by mapping more physical
//! memory at the end of an address range reserved once (virtual memory management, see
//! [`AddressRange`]).

use super::tracking::{Allocation, Keep, Release};
use super::virtual_mem::{
    check_supported, round_up, AddressRange, Granularity, Mapping, MemAccess, PhysicalMemory,
};
use super::{byte_size, Access, DeviceCopy, DeviceMemoryMut, DevicePtr};
use crate::device::Device;
use crate::error::{Error, Result};
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

/// What a growable buffer maps: the chunks in address order, then the reservation they lie in (fields
/// drop in this order: every chunk is unmapped and released before the range is freed). Dropped by the
/// last of the buffer and its [`Allocation`] (`Release::Unmap`), which drops it only once no stream
/// still uses the memory.
#[derive(Debug)]
struct Mapped {
    chunks: Vec<(usize, Mapping)>,
    range: Option<AddressRange>,
}

fn lock(m: &Mutex<Mapped>) -> std::sync::MutexGuard<'_, Mapped> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// `len` values of `T` at the start of a device address range reserved for up to
/// [`capacity`](Self::capacity) of them: growing ([`grow_to`](Self::grow_to),
/// [`extend_from_slice`](Self::extend_from_slice)) maps more physical memory at the end
/// (`hipMemCreate`, `hipMemMap`, `hipMemSetAccess`) and copies nothing, so it costs the same whatever the
/// length, and the address never changes.
///
/// It is device memory like a [`DeviceBuffer`](super::DeviceBuffer): copies, fills, views and kernel
/// arguments go through [`DeviceMemory`](super::DeviceMemory) and [`DeviceMemoryMut`], ordered and kept
/// alive by the memory model. Growing takes `&mut self`, so no view or launch argument borrowed before
/// it lives on; work already queued keeps the length it was given, on memory that stays mapped. The new
/// elements are zeroed on the device's null stream, ordered after the queued users of the buffer (the
/// host does not wait). Memory is unmapped only once no stream still uses it:
/// [`shrink_to_fit`](Self::shrink_to_fit) waits for them, and dropping the buffer unmaps, releases and
/// frees the range after every queued user and every graph that captured work on it is done.
///
/// Other devices reach the memory only after [`grant_access`](Self::grant_access): the mapping gives
/// access to the buffer's own device alone.
///
/// ```no_run
/// use hip::prelude::*;
/// use hip::memory::GrowableBuffer;
///
/// let device = Device::get(0)?;
/// let mut log = GrowableBuffer::<u32>::new(&device, 1 << 28)?; // room for 2^28 elements, none mapped
/// log.extend_from_slice(&[1, 2, 3])?;
/// let address = log.device_ptr();
/// log.grow_to(1 << 20)?; // maps more memory; the first three stay, the rest are zero
/// assert_eq!(log.device_ptr(), address);
/// assert_eq!(log.slice(..4)?.to_vec()?, [1, 2, 3, 0]);
/// # Ok::<(), hip::Error>(())
/// ```
#[derive(Debug)]
pub struct GrowableBuffer<T: DeviceCopy> {
    pub(super) ptr: DevicePtr,
    pub(super) len: usize,
    pub(super) alloc: Arc<Allocation>,
    mapped: Arc<Mutex<Mapped>>,
    /// Bytes reserved (a multiple of `granularity`), and bytes mapped from the start.
    reserved: usize,
    mapped_bytes: usize,
    granularity: usize,
    /// Other devices given access, which every new chunk gives them too.
    peers: Vec<Device>,
    _elem: PhantomData<T>,
}

// SAFETY: as for `DeviceBuffer`: `ptr` is a device address the host never dereferences, the allocation
// and the mapping state are Send + Sync (an `Arc<Mutex<_>>` of Send values); T is DeviceCopy (Send).
unsafe impl<T: DeviceCopy> Send for GrowableBuffer<T> {}
// SAFETY: as for `DeviceBuffer`: through `&GrowableBuffer` safe code only queues reads, every use goes
// through the allocation's thread-safe tracking, and the mapping state changes only under `&mut self`.
unsafe impl<T: DeviceCopy> Sync for GrowableBuffer<T> {}

impl<T: DeviceCopy> GrowableBuffer<T> {
    /// An empty buffer on `device` with address space reserved for `capacity` elements, rounded up to the
    /// device's minimum granularity (`hipMemAddressReserve`); no memory is mapped yet. Address space is
    /// cheap: reserve for the largest length the buffer may ever reach.
    ///
    /// # Errors
    ///
    /// [`Error::AllocationTooLarge`] when the byte size or its rounding overflows,
    /// [`Error::NotSupported`] where the headers lack the virtual memory calls or the device reports
    /// `hipDeviceAttributeVirtualMemoryManagementSupported` = 0, and what HIP returns for making the
    /// device current, `hipMemGetAllocationGranularity` and `hipMemAddressReserve`.
    ///
    /// ```no_run
    /// # fn f(device: &hip::Device) -> hip::Result<()> {
    /// let keys = hip::memory::GrowableBuffer::<u64>::new(device, 1 << 30)?;
    /// assert!(keys.is_empty() && keys.capacity() >= 1 << 30);
    /// # Ok(()) }
    /// ```
    pub fn new(device: &Device, capacity: usize) -> Result<Self> {
        let bytes = byte_size::<T>(capacity)?;
        device.bind()?;
        check_supported(device)?;
        if bytes == 0 {
            // Nothing to reserve (no room asked, or zero-sized elements): a buffer that holds `capacity`
            // elements of no bytes, never mapping anything.
            return Ok(Self::from_parts(std::ptr::null_mut(), device, None, 0, 1));
        }
        let g = device.allocation_granularity(Granularity::Minimum)?;
        let reserved = round_up(bytes, g).map_err(|_| Error::AllocationTooLarge {
            elements: capacity,
            elem_bytes: std::mem::size_of::<T>(),
        })?;
        let range = AddressRange::reserve_exact(device, reserved, g)?;
        Ok(Self::from_parts(
            range.as_ptr(),
            device,
            Some(range),
            reserved,
            g,
        ))
    }

    fn from_parts(
        ptr: DevicePtr,
        device: &Device,
        range: Option<AddressRange>,
        reserved: usize,
        granularity: usize,
    ) -> Self {
        let mapped = Arc::new(Mutex::new(Mapped {
            chunks: Vec::new(),
            range,
        }));
        let keep: Keep = mapped.clone();
        GrowableBuffer {
            ptr,
            len: 0,
            alloc: Allocation::new(ptr, device, Release::Unmap(keep)),
            mapped,
            reserved,
            mapped_bytes: 0,
            granularity,
            peers: Vec::new(),
            _elem: PhantomData,
        }
    }

    /// A buffer of `capacity` reserved elements holding a copy of `data`.
    ///
    /// # Errors
    ///
    /// What [`new`](Self::new) and [`extend_from_slice`](Self::extend_from_slice) return.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device) -> hip::Result<()> {
    /// let x = hip::memory::GrowableBuffer::from_slice(device, 1 << 20, &[1.0f32, 2.0])?;
    /// assert_eq!(x.to_vec()?, [1.0, 2.0]);
    /// # Ok(()) }
    /// ```
    pub fn from_slice(device: &Device, capacity: usize, data: &[T]) -> Result<Self> {
        let mut b = Self::new(device, capacity)?;
        b.extend_from_slice(data)?;
        Ok(b)
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The most elements the reserved range holds (`usize::MAX` for zero-sized `T`).
    pub fn capacity(&self) -> usize {
        match std::mem::size_of::<T>() {
            0 => usize::MAX,
            n => self.reserved / n,
        }
    }

    /// Bytes of physical memory mapped now, from the start (a multiple of [`granularity`](Self::granularity)).
    pub fn mapped_bytes(&self) -> usize {
        self.mapped_bytes
    }

    /// The granularity growth maps in (the device's minimum), in bytes.
    pub fn granularity(&self) -> usize {
        self.granularity
    }

    /// Grow to `new_len` elements, the new ones zeroed: maps physical memory for them where the mapped
    /// part is too short (one `hipMemCreate` + `hipMemMap` + `hipMemSetAccess`, whatever the length so
    /// far), then queues a memset of the new elements on the device's null stream, ordered after the
    /// buffer's queued users. Nothing is copied and the address stays. A `new_len` not above the length
    /// changes nothing.
    ///
    /// # Errors
    ///
    /// [`Error::OutOfBounds`] when `new_len` is past [`capacity`](Self::capacity),
    /// [`Error::AllocationTooLarge`] when its byte size overflows, and what HIP returns for
    /// `hipMemCreate` (`hipErrorOutOfMemory`), `hipMemMap`, `hipMemSetAccess` and the memset. On error the
    /// length is unchanged.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(x: &mut hip::memory::GrowableBuffer<f32>) -> hip::Result<()> {
    /// x.grow_to(x.len() + 4096)?;
    /// # Ok(()) }
    /// ```
    pub fn grow_to(&mut self, new_len: usize) -> Result<()> {
        let old = self.len;
        // SAFETY: the new elements are zeroed just below before anything can read them (the memset is
        // the writer every later use is ordered after); on failure the length goes back.
        unsafe { self.grow_to_uninit(new_len) }?;
        if self.len > old {
            if let Err(e) = self.slice_mut(old..)?.zero() {
                self.len = old;
                return Err(e);
            }
        }
        Ok(())
    }

    /// [`grow_to`](Self::grow_to) without zeroing the new elements: only the mapping, on the host.
    ///
    /// # Errors
    ///
    /// As [`grow_to`](Self::grow_to), without the memset.
    ///
    /// # Safety
    ///
    /// The new elements hold whatever the physical memory held: write them before anything reads them.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(x: &mut hip::memory::GrowableBuffer<u8>) -> hip::Result<()> {
    /// let old = x.len();
    /// // SAFETY: the new bytes are written before anything reads them.
    /// unsafe { x.grow_to_uninit(old + 4096)? };
    /// x.slice_mut(old..)?.copy_from_host(&[0xff; 4096])?;
    /// # Ok(()) }
    /// ```
    pub unsafe fn grow_to_uninit(&mut self, new_len: usize) -> Result<()> {
        if new_len <= self.len {
            return Ok(());
        }
        if new_len > self.capacity() {
            return Err(Error::OutOfBounds {
                start: self.len,
                end: new_len,
                len: self.capacity(),
            });
        }
        let bytes = byte_size::<T>(new_len)?;
        if bytes > self.mapped_bytes {
            self.map_to(bytes)?;
        }
        self.len = new_len;
        Ok(())
    }

    /// Map one more chunk so that at least `bytes` (within the reservation) are mapped.
    fn map_to(&mut self, bytes: usize) -> Result<()> {
        // `bytes` <= `reserved`, a multiple of the granularity: the rounding cannot pass it.
        let target = round_up(bytes, self.granularity)?.min(self.reserved);
        let size = target - self.mapped_bytes;
        let device = self.alloc.device().clone();
        device.bind()?;
        let memory = PhysicalMemory::create_exact(&device, size)?;
        let mut mapped = lock(&self.mapped);
        let Some(range) = mapped.range.as_ref() else {
            return Err(Error::OutOfBounds {
                start: 0,
                end: bytes,
                len: 0,
            });
        };
        // SAFETY: the chunk lies in the reservation past every mapped chunk (`mapped_bytes` is their
        // end); the memory model tracks it as part of this buffer's allocation from now on; it is
        // unmapped only by `shrink_to_fit` (after waiting for every user) or when `Mapped` drops (after
        // the allocation waited for every user), before the range (field order).
        let chunk = unsafe { range.map(self.mapped_bytes, memory) }?;
        for peer in &self.peers {
            // On failure `chunk` drops: unmapped and released, nothing used it yet.
            chunk.grant_access(peer)?;
        }
        mapped.chunks.push((self.mapped_bytes, chunk));
        self.mapped_bytes = target;
        Ok(())
    }

    /// Append a copy of `data` (a blocking copy, as [`copy_from_host`](DeviceMemoryMut::copy_from_host)),
    /// growing as [`grow_to`](Self::grow_to) does.
    ///
    /// # Errors
    ///
    /// As [`grow_to`](Self::grow_to) (past the capacity: [`Error::OutOfBounds`]), and what HIP returns for
    /// the copy. On error the length is unchanged.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(x: &mut hip::memory::GrowableBuffer<u32>) -> hip::Result<()> {
    /// x.extend_from_slice(&[4, 5, 6])?;
    /// # Ok(()) }
    /// ```
    pub fn extend_from_slice(&mut self, data: &[T]) -> Result<()> {
        let old = self.len;
        let new_len = old.checked_add(data.len()).ok_or(Error::OutOfBounds {
            start: old,
            end: usize::MAX,
            len: self.capacity(),
        })?;
        // SAFETY: every new element is written by the copy below before anything reads it; on failure the
        // length goes back.
        unsafe { self.grow_to_uninit(new_len) }?;
        let copied = self
            .slice_mut(old..)
            .and_then(|mut tail| tail.copy_from_host(data));
        if copied.is_err() {
            self.len = old;
        }
        copied
    }

    /// Shorten to `new_len` elements (nothing if it is not shorter), keeping the memory mapped: growing
    /// back maps nothing and zeroes the elements again.
    ///
    /// ```no_run
    /// # fn f(x: &mut hip::memory::GrowableBuffer<u32>) {
    /// x.truncate(0);
    /// # }
    /// ```
    pub fn truncate(&mut self, new_len: usize) {
        self.len = self.len.min(new_len);
    }

    /// Unmap and release the chunks that lie wholly past the length, after every queued use of the
    /// buffer is done (the host waits).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] while a graph that captured work on the buffer (or another holder of
    /// its allocation) lives: a replay may touch the memory; what waiting for the buffer's users returns
    /// (inside a host function it is refused); and what HIP returns for `hipMemUnmap`.
    ///
    /// ```no_run
    /// # fn f(x: &mut hip::memory::GrowableBuffer<u32>) -> hip::Result<()> {
    /// x.truncate(16);
    /// x.shrink_to_fit()?;
    /// assert!(x.mapped_bytes() <= x.granularity().max(64));
    /// # Ok(()) }
    /// ```
    pub fn shrink_to_fit(&mut self) -> Result<()> {
        let keep = byte_size::<T>(self.len)?;
        let mut mapped = lock(&self.mapped);
        let first_gone = mapped.chunks.partition_point(|(at, _)| *at < keep);
        if first_gone == mapped.chunks.len() {
            return Ok(());
        }
        if Arc::strong_count(&self.alloc) > 1 {
            return Err(Error::InvalidArgument {
                what: "growable buffer to shrink",
                value: format!("a buffer held by {} owners", Arc::strong_count(&self.alloc)),
                reason:
                    "a graph that captured work on it (or another holder of its memory) lives, and \
                         may still touch the memory past the length; drop it first"
                        .into(),
            });
        }
        // Every stream that may still use the memory is done once the host waited as for a write.
        self.alloc.host_wait(Access::Write)?;
        let new_end = first_gone
            .checked_sub(1)
            .map_or(0, |i| mapped.chunks[i].0 + mapped.chunks[i].1.size());
        // Dropping each chunk unmaps it (nothing queued uses it any more) and releases its memory.
        mapped.chunks.truncate(first_gone);
        self.mapped_bytes = new_end;
        Ok(())
    }

    /// Let `peer` read and write the buffer, now and after every later growth (`hipMemSetAccess` on each
    /// mapped chunk). Access only grows, so no queued work loses it. A checked kernel launch on `peer`
    /// given this buffer is still refused: the launch check does not ask a mapping's access (nor a
    /// pool's), and refuses memory of another device whose access is granted per allocation, so a
    /// kernel of `peer` never faults on a range it was not granted.
    ///
    /// # Errors
    ///
    /// What HIP returns for `hipMemSetAccess` (a device that cannot reach this one's memory).
    ///
    /// ```no_run
    /// # fn f(x: &mut hip::memory::GrowableBuffer<u32>, peer: &hip::Device) -> hip::Result<()> {
    /// x.grant_access(peer)?;
    /// # Ok(()) }
    /// ```
    pub fn grant_access(&mut self, peer: &Device) -> Result<()> {
        if self.peers.iter().any(|p| p.ordinal() == peer.ordinal()) {
            return Ok(());
        }
        for (_, chunk) in &lock(&self.mapped).chunks {
            chunk.grant_access(peer)?;
        }
        self.peers.push(peer.clone());
        Ok(())
    }

    /// What `device` may do with the buffer's mapped memory (`hipMemGetAccess` of its first chunk);
    /// [`MemAccess::None`] while nothing is mapped.
    ///
    /// # Errors
    ///
    /// What HIP returns for `hipMemGetAccess`.
    ///
    /// ```no_run
    /// # fn f(x: &hip::memory::GrowableBuffer<u32>) -> hip::Result<()> {
    /// use hip::prelude::*;
    /// assert_eq!(x.access(x.device())?, hip::memory::MemAccess::ReadWrite);
    /// # Ok(()) }
    /// ```
    pub fn access(&self, device: &Device) -> Result<MemAccess> {
        match lock(&self.mapped).chunks.first() {
            Some((_, chunk)) => chunk.access(device),
            None => Ok(MemAccess::None),
        }
    }
}

device_memory!(GrowableBuffer);

impl<T: DeviceCopy> DeviceMemoryMut<T> for GrowableBuffer<T> {}
