//! Block-shared memory (LDS on AMD, `.shared` on NVIDIA) for a `#[kernel]`: a handle whose type says
//! which phase the block is in, with the barrier between phases in the API.
//!
//! - [`Shared<T, K>`](Shared) is a **write phase**: each thread reaches only its own `K` slots, the
//!   slots `t, t + B, .., t + (K - 1) B` for the thread's index `t` in its block of `B` threads
//!   ([`mine`](Shared::mine), [`for_each_mine`](Shared::for_each_mine)). No two threads reach one slot.
//! - [`sync`](Shared::sync) consumes it at a block barrier and gives a [`SharedRead`]: a **read phase**,
//!   where every thread reads any slot ([`get`](SharedRead::get), `[]`, checked against `K * B`) and
//!   none writes. Its `sync` gives the next write phase.
//!
//! Why no race is reachable from a safe body: the handles are neither `Clone` nor `Copy` and `sync` takes
//! `self`, so a thread's handle is in phase `p` exactly when it has passed `p` barriers, writes in even
//! phases and only reads in odd ones; a kernel has at most one `Shared` (the macro refuses two) and no
//! other barrier (`gpu::sync_threads` is `unsafe`). The barrier ([`crate::gpu`]'s `shared_barrier`) makes
//! the n-th barrier of every thread the same event, or stops the kernel: so a thread in phase `q` runs
//! only after every other thread still alive has finished its phases before `q`, and threads running at
//! once are in the same phase, where they either each write their own slots or all only read.
//! What is assumed, not proved by Rust's types: the barrier and its fences order shared memory between
//! the threads of a block (the GPU memory model; Rust's has no block scope), and the launch gave at least
//! `K * B * size_of::<T>()` bytes of dynamic shared memory (the host's generated launcher checks it).

use crate::device::DeviceValue;
use crate::gpu;
use core::marker::PhantomData;

/// A write phase of the block's shared memory: `K * B` slots of `T` (`B` threads in the block), of which
/// this thread reaches only its own `K`. See the module documentation.
///
/// ```ignore
/// #[kernel]
/// pub fn reverse_in_block(x: In<u32>, mut y: Out<u32>, mut tile: Shared<u32>) {
///     let (t, b) = (u64::from(gpu::thread_linear_id_in_block()), u64::from(gpu::block_threads()));
///     if let Some(slot) = tile.mine(0) {
///         *slot = x.get(gpu::global_linear_id()).unwrap_or(0);
///     }
///     let tile = tile.sync(); // every thread of the block, here: the slots are read-only from now on
///     if let Some(y_i) = y.mine() {
///         *y_i = tile.get(b - 1 - t).unwrap_or(0);
///     }
/// }
/// ```
pub struct Shared<'a, T: DeviceValue, const K: usize = 1> {
    ptr: *mut T,
    me: u64,
    threads: u64,
    _data: PhantomData<&'a mut [T]>,
}

/// A read phase of the block's shared memory (after [`Shared::sync`]): every slot readable, none
/// writable, until [`sync`](SharedRead::sync) starts the next write phase.
pub struct SharedRead<'a, T: DeviceValue, const K: usize = 1> {
    ptr: *mut T,
    me: u64,
    threads: u64,
    _data: PhantomData<&'a mut [T]>,
}

/// The block's dynamic shared memory (`LaunchConfig::shared_mem_bytes`), aligned for `T`.
///
/// # Safety
/// Called once per kernel, by the `#[kernel]` entry point, to build its one [`Shared`].
#[doc(hidden)]
#[inline(always)]
pub unsafe fn launch_sized_shared<T: DeviceValue>() -> *mut T {
    #[cfg(any(target_arch = "amdgpu", target_arch = "nvptx64"))]
    return core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<T>();
    #[cfg(not(any(target_arch = "amdgpu", target_arch = "nvptx64")))]
    panic!("shared memory exists only on the GPU")
}

impl<'a, T: DeviceValue, const K: usize> Shared<'a, T, K> {
    /// The first write phase over the block's shared memory at `ptr`, this thread's slots zeroed (so a
    /// read phase never reads memory no thread wrote).
    ///
    /// # Safety
    /// `ptr` points to at least `K * B` `T` of this block's shared memory (`B` its threads), used by
    /// nothing else in the kernel; every thread of the block makes its own `Shared` of the same `ptr` and
    /// `K` once, at the kernel's start; nothing passes a block barrier other than through these handles.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw_parts(ptr: *mut T) -> Self {
        let mut s = Shared {
            ptr,
            me: u64::from(gpu::thread_linear_id_in_block()),
            threads: u64::from(gpu::block_threads()),
            _data: PhantomData,
        };
        // SAFETY: every DeviceValue is plain data for which all-zero bits is a value.
        let zero: T = unsafe { core::mem::zeroed() };
        s.for_each_mine(|_, slot| *slot = zero);
        s
    }

    /// Slots in the block (`K * B`), all threads' together.
    #[inline(always)]
    pub fn len(&self) -> u64 {
        K as u64 * self.threads
    }

    /// Whether there are none (never, in a launch: a block has threads).
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// This thread's `k`-th slot, `t + k * B` (`None` for `k >= K`). Its value is what this thread last
    /// wrote there (zero at first).
    #[inline(always)]
    pub fn mine(&mut self, k: usize) -> Option<&mut T> {
        if k < K {
            // SAFETY: k < K, so t + k B < K B: inside the block's slots (from_raw_parts' contract), and
            // this thread's own (no other thread reaches t + k B in a write phase); the &mut borrows
            // self, so this thread holds one at a time.
            Some(unsafe { &mut *self.ptr.add((self.me + k as u64 * self.threads) as usize) })
        } else {
            None
        }
    }

    /// `f(slot_index, &mut slot)` for each of this thread's `K` slots.
    #[inline(always)]
    pub fn for_each_mine(&mut self, mut f: impl FnMut(u64, &mut T)) {
        for k in 0..K {
            let index = self.me + k as u64 * self.threads;
            if let Some(slot) = self.mine(k) {
                f(index, slot);
            }
        }
    }

    /// Wait for every thread of the block, then read: the writes of this phase are visible to all.
    ///
    /// On AMD, a wavefront some of whose threads are not here (divergent code, an early return) stops
    /// the kernel; on NVIDIA, a thread waits for every other thread of its block (one that never comes
    /// is waited for, a hang, not a race).
    #[inline(always)]
    #[must_use = "the read phase is the only way to read the block's slots"]
    pub fn sync(self) -> SharedRead<'a, T, K> {
        gpu::shared_barrier();
        SharedRead {
            ptr: self.ptr,
            me: self.me,
            threads: self.threads,
            _data: PhantomData,
        }
    }
}

impl<'a, T: DeviceValue, const K: usize> SharedRead<'a, T, K> {
    /// Slots in the block (`K * B`).
    #[inline(always)]
    pub fn len(&self) -> u64 {
        K as u64 * self.threads
    }

    /// Whether there are none (never, in a launch).
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Slot `j`, or `None` when `j >= len()`.
    #[inline(always)]
    pub fn get(&self, j: u64) -> Option<T> {
        if j < self.len() {
            // SAFETY: j < K B: inside the block's slots; a read phase: no thread writes any slot until
            // every thread has passed the next barrier, which this one has not.
            Some(unsafe { self.ptr.add(j as usize).read() })
        } else {
            None
        }
    }

    /// Wait for every thread of the block (all reads of this phase done), then write this thread's slots
    /// again.
    #[inline(always)]
    #[must_use = "the next write phase is the only way to write the block's slots"]
    pub fn sync(self) -> Shared<'a, T, K> {
        gpu::shared_barrier();
        Shared {
            ptr: self.ptr,
            me: self.me,
            threads: self.threads,
            _data: PhantomData,
        }
    }
}

impl<T: DeviceValue, const K: usize> core::ops::Index<u64> for SharedRead<'_, T, K> {
    type Output = T;
    /// Slot `j`; past the end the kernel stops (a panic).
    #[inline(always)]
    fn index(&self, j: u64) -> &T {
        assert!(j < self.len(), "shared slot out of bounds");
        // SAFETY: as in `get`; the reference borrows this read phase, which `sync` consumes.
        unsafe { &*self.ptr.add(j as usize) }
    }
}
