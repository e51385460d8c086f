//! Collectives over several GPUs through RCCL, ROCm's collective communication library (NCCL's API), or
//! NCCL itself on HIP's NVIDIA platform. Feature `rccl`: `hip = { features = ["rccl"] }`, over
//! `rccl-sys` (bindgen over `rccl/rccl.h`, or `nccl.h` on NVIDIA).
//!
//! Two ways to make communicators:
//!
//! - one process driving several GPUs: [`Comm::init_all`] gives one communicator per device;
//! - one process (or thread) per GPU: rank 0 makes a [`UniqueId`], hands its bytes
//!   ([`UniqueId::as_bytes`]) to the others by any channel (a file, a socket, MPI), and every rank calls
//!   [`Comm::new`]`(device, id, rank, nranks)`; or let the crate do the exchange:
//!   [`Comm::from_env`] (torchrun, Slurm, Open MPI variables, through [`crate::bootstrap`]) or
//!   `Comm::from_mpi` (feature `mpi`). [`Comm::split`] makes sub-communicators.
//!
//! ```no_run
//! use hip::prelude::*;
//! use hip::rccl::{group, Comm, ReduceOp};
//!
//! let devices = [Device::get(0)?, Device::get(1)?];
//! let comms = Comm::init_all(&devices)?;
//! let mut bufs = Vec::new();
//! let mut streams = Vec::new();
//! for d in &devices {
//!     bufs.push(DeviceBuffer::from_slice(d, &[1.0f32; 1024])?);
//!     streams.push(Stream::new(d)?);
//! }
//! // One process driving several devices: the calls of one collective go in one group.
//! group(|| {
//!     for ((comm, buf), stream) in comms.iter().zip(&mut bufs).zip(&streams) {
//!         comm.all_reduce_in_place(buf, ReduceOp::Sum, stream)?;
//!     }
//!     Ok(())
//! })?;
//! for s in &streams { s.synchronize()?; }
//! assert_eq!(bufs[0].to_vec()?[0], 2.0);
//! # Ok::<(), hip::Error>(())
//! ```
//!
//! # What is checked, and what keeps it sound
//!
//! Before any call: the stream and every buffer are on the communicator's device
//! ([`Error::DeviceMismatch`]), lengths agree with the collective's shape ([`Error::LengthMismatch`]:
//! `all_gather` receives `nranks` times what it sends, `reduce_scatter` the reverse), and roots and peers
//! are ranks of the communicator ([`Error::InvalidArgument`]). Every `ncclResult_t` other than success is an
//! [`Error::Nccl`] keeping the raw code, with DTL status `nccl_error` (540).
//!
//! Collectives are queued on a [`Stream`] and return at once. They take device memory only, ordered by the
//! memory model like every other operation of this crate (see the [`memory`](crate::memory) module): the
//! stream first waits for the other streams' conflicting work on the buffers, later operations on them
//! (synchronous ones and the host included) wait for the collective, and a buffer is freed only after the
//! stream is done with it. Read results with [`Stream::synchronize`] or any later operation on the buffer.
//!
//! Inside [`group`] that ordering is recorded when each call is made, but RCCL / NCCL queue the calls
//! only when the group ends. [`group`] keeps every buffer a call in it used alive until then: one dropped
//! inside the group is freed only after the collective that uses it. Until [`group`] returns, do not use
//! such a buffer in an operation on another stream: that operation would not wait for the collective,
//! which is not queued yet (this is not enforced).
//!
//! A collective completes only when every rank has queued its part: in one process driving several
//! devices, queue the parts inside [`group`] (otherwise the first call may wait forever for the others).
//!
//! # Installing and deploying
//!
//! | platform | install | where the build looks |
//! | --- | --- | --- |
//! | AMD, Debian | `librccl-dev` (trixie: RCCL 5.4.3; experimental: 7.2.4) | `/usr/include/rccl/rccl.h` |
//! | AMD, ROCm | `rccl-dev` from AMD's repository | `RCCL_PATH`, `ROCM_PATH`, `HIP_PATH`, `/opt/rocm` |
//! | NVIDIA (`HIP_PLATFORM=nvidia`) | NCCL 2.x (e.g. PyPI's `nvidia-nccl-cu12`) | `NCCL_INCLUDE` / `NCCL_LIB`, else the CUDA tree `hip-sys` uses, `CUDA_PATH`, `/usr/local/cuda`, `/usr` |
//!
//! Without it the build stops with one message listing every place tried and what to install. RCCL
//! (NCCL) is always linked, `dynamic-loading` or not: a program built with `rccl` needs `librccl.so.1`
//! (`libnccl.so.2` on NVIDIA) where it runs, or it dies before `main` (exit status 127). Element types
//! ([`NcclType`]): `i8` ... `u64`, `f32`, `f64`, [`half::f16`] and [`half::bf16`], as in a kernel (see
//! the [`memory`](crate::memory#element-types-in-a-kernel) module).

mod bootstrap;
mod collectives;
mod config;
mod group;
mod poll;
mod result;
mod split;
mod types;
mod wait;

pub use self::config::{CommConfig, PendingComm};
pub use self::group::group;
pub use self::result::version as raw_version;
pub use self::types::{NcclType, ReduceOp, UniqueId};

use crate::device::Device;
use crate::error::{Error, Result};
#[cfg(doc)]
use crate::stream::Stream;
use rccl_sys as sys;

/// The `half` crate, whose [`half::f16`] and [`half::bf16`] are the 16-bit float element types.
pub use half;
/// The raw bindings (`rccl-sys`).
pub use rccl_sys;

/// `"rccl"` on AMD, `"nccl"` on HIP's NVIDIA platform: the library this crate was built against.
pub const LIBRARY: &str = sys::LIBRARY;

/// The library's version as `(major, minor, patch)` (`ncclGetVersion`).
pub fn version() -> Result<(u32, u32, u32)> {
    let v = result::version()? as u32;
    // From 2.9 NCCL encodes major * 10000 + minor * 100 + patch.
    Ok((v / 10000, (v % 10000) / 100, v % 100))
}

/// A communicator: one rank of a clique, bound to one device (`ncclComm_t`). Dropping it destroys it
/// (`ncclCommDestroy`); [`Comm::abort`] stops queued work instead.
///
/// `Send` but not `Sync`: NCCL does not allow concurrent calls on one communicator.
#[derive(Debug)]
pub struct Comm {
    raw: sys::ncclComm_t,
    device: Device,
    rank: usize,
    nranks: usize,
    /// Made with a non-blocking [`CommConfig`] (or split from such a one): its calls may answer
    /// `ncclInProgress`, which `result` waits out.
    nonblocking: bool,
}

// SAFETY: NCCL lets a communicator be used from any thread as long as calls on it do not overlap; Comm is
// not Sync, so all calls on one go through its single owner's thread. `Device` is Send.
unsafe impl Send for Comm {}

/// Creating a communicator inside [`group`] with a library older than 2.14 is refused: those write the new
/// handle when the group ends, into memory that no longer exists by then.
fn refuse_init_in_old_group(what: &'static str) -> Result<()> {
    if !group::in_group() {
        return Ok(());
    }
    let v = version()?;
    if v >= (2, 14, 0) {
        return Ok(());
    }
    Err(Error::InvalidArgument {
        what: "communicator creation inside rccl::group",
        value: format!("{what} with {LIBRARY} {}.{}.{}", v.0, v.1, v.2),
        reason:
            "libraries older than 2.14 write the new communicator only when the group ends, after \
                 this call returned; create each rank on its own thread instead"
                .into(),
    })
}

/// `rank` of `nranks` as the C calls take them, refused unless `rank < nranks`.
fn check_ranks(rank: usize, nranks: usize) -> Result<(i32, i32)> {
    if nranks == 0 || rank >= nranks {
        return Err(Error::InvalidArgument {
            what: "rank",
            value: rank.to_string(),
            reason: format!(
                "must be below the number of ranks ({nranks}), which must be at least 1"
            ),
        });
    }
    Ok((
        rank_i32("rank", rank)?,
        rank_i32("number of ranks", nranks)?,
    ))
}

fn rank_i32(what: &'static str, v: usize) -> Result<i32> {
    i32::try_from(v).map_err(|_| Error::InvalidArgument {
        what,
        value: v.to_string(),
        reason: "does not fit an int".into(),
    })
}

impl Comm {
    /// One communicator per device, for one process driving all of them (`ncclCommInitAll`). Rank `i` is
    /// `devices[i]`. Blocks while RCCL / NCCL sets up the clique (it may start threads and open
    /// connections between the devices).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for an empty list or a device given twice; [`Error::Nccl`] with the
    /// library's result.
    ///
    /// ```no_run
    /// let devices = [hip::Device::get(0)?, hip::Device::get(1)?];
    /// let comms = hip::rccl::Comm::init_all(&devices)?;
    /// assert_eq!(comms.len(), 2);
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn init_all(devices: &[Device]) -> Result<Vec<Comm>> {
        if devices.is_empty() {
            return Err(Error::InvalidArgument {
                what: "device list",
                value: "[]".into(),
                reason: "a communicator needs at least one device".into(),
            });
        }
        let mut ordinals = Vec::with_capacity(devices.len());
        for d in devices {
            let o = rank_i32("device ordinal", d.ordinal())?;
            if ordinals.contains(&o) {
                return Err(Error::InvalidArgument {
                    what: "device list",
                    value: format!(
                        "{:?}",
                        devices.iter().map(Device::ordinal).collect::<Vec<_>>()
                    ),
                    reason: format!("device {o} appears twice; each rank needs its own device"),
                });
            }
            ordinals.push(o);
        }
        refuse_init_in_old_group("Comm::init_all")?;
        for d in devices {
            d.bind()?; // creates the device's context (CUDA 11 makes it lazily)
        }
        let raws = result::comm_init_all(&ordinals)?;
        let n = devices.len();
        Ok(raws
            .into_iter()
            .zip(devices)
            .enumerate()
            .map(|(rank, (raw, d))| Comm {
                raw,
                device: d.clone(),
                rank,
                nranks: n,
                nonblocking: false,
            })
            .collect())
    }

    /// One communicator for every visible device: [`Comm::init_all`] over `Device::get(0..count)`. With no
    /// device this is the runtime's `hipErrorNoDevice` or an [`Error::InvalidArgument`] for zero devices.
    pub fn init_all_visible() -> Result<Vec<Comm>> {
        let n = Device::count()?;
        let devices = (0..n).map(Device::get).collect::<Result<Vec<_>>>()?;
        Comm::init_all(&devices)
    }

    /// Rank `rank` of `nranks` on `device`, joining the clique of `id` (`ncclCommInitRank`). Blocks until
    /// every rank has joined: in one process creating several ranks, call it inside [`group`] (NCCL and
    /// RCCL from 2.14 only: older ones write the new handle when the group ends, after this returned, so
    /// with them create each rank on its own thread instead).
    pub fn new(device: &Device, id: &UniqueId, rank: usize, nranks: usize) -> Result<Comm> {
        let (r, n) = check_ranks(rank, nranks)?;
        refuse_init_in_old_group("Comm::new")?;
        device.bind()?;
        let raw = result::comm_init_rank(n, id.0, r)?;
        Ok(Comm {
            raw,
            device: device.clone(),
            rank,
            nranks,
            nonblocking: false,
        })
    }

    /// This communicator's rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of ranks in the clique.
    pub fn size(&self) -> usize {
        self.nranks
    }

    /// The device this rank runs on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The raw `ncclComm_t`, still owned by this value.
    pub fn raw(&self) -> sys::ncclComm_t {
        self.raw
    }

    /// The communicator's asynchronous error state (`ncclCommGetAsyncError`): `Ok(())` while none has
    /// happened (or an operation is still in progress), else the error, e.g. a peer that went away. After an
    /// error, [`Comm::abort`] the communicator.
    pub fn async_error(&self) -> Result<()> {
        // SAFETY: `self.raw` is live until Drop or `abort` (which consumes `self`).
        let state = unsafe { result::comm_get_async_error(self.raw)? };
        if state == sys::ncclResult_t::ncclSuccess || state == sys::ncclResult_t::ncclInProgress {
            Ok(())
        } else {
            Err(result::error(
                "ncclCommGetAsyncError (asynchronous error)",
                state,
                self.raw,
            ))
        }
    }

    /// Stop the communicator's queued and running operations and free it (`ncclCommAbort`), e.g. after an
    /// [`async_error`](Self::async_error) or when a peer hangs.
    pub fn abort(self) -> Result<()> {
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: the communicator is live (`self` owned it) and, with Drop suppressed, never used again.
        let r = unsafe { result::comm_abort(this.raw) };
        // SAFETY: `this.device` is initialised and read out exactly once; `this` is ManuallyDrop and not
        // used again, so the Device is dropped once, here (the other fields need no drop).
        drop(unsafe { std::ptr::read(&this.device) });
        r
    }
}

impl Drop for Comm {
    fn drop(&mut self) {
        // Inside a group, calls on this communicator may not be queued yet: destroy it when the outermost
        // group has ended.
        if group::defer_destroy(self.raw, &self.device) {
            return;
        }
        let (raw, device) = (crate::release::RawHandle(self.raw), self.device.clone());
        // Inside a host function (no HIP or NCCL call allowed there) on the releasing thread.
        crate::release::now_or_later(move || {
            let _ = device.bind();
            // SAFETY: `raw` is live (`abort` consumes `self` without running this) and is destroyed only
            // here, once.
            let _ = unsafe { result::comm_destroy(raw.get()) };
        });
    }
}
