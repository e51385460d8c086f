//! [`CommConfig`] and [`Comm::with_config`]: communicators made with a configuration
//! (`ncclCommInitRankConfig`), blocking or not, and [`PendingComm`], one whose initialization goes on in
//! the background.

use super::poll::{poll_until, Backoff};
use super::{check_ranks, group, result, Comm, UniqueId};
use crate::device::Device;
use crate::error::{Error, Result};
use std::ffi::{c_int, CString};
use std::time::Duration;

/// How a communicator is made ([`Comm::with_config`]): `ncclConfig_t`'s fields, each left to the
/// library (its default, or its `NCCL_*` environment variable) unless set here.
///
/// A non-blocking communicator ([`blocking(false)`](Self::blocking)) returns from its creation at once
/// and finishes it in the background ([`PendingComm`]), so that one thread can set up many, or give up
/// after a timeout of its choosing on a peer that never comes. Its later calls (collectives, groups,
/// `split`) return once the library has them: the crate waits out their `ncclInProgress` itself, as the
/// memory model needs the call's memory in the library's hands before it lets the caller go on.
///
/// # Example
///
/// ```
/// use hip::rccl::CommConfig;
/// let config = CommConfig::new().blocking(false).max_ctas(16).net_name("Socket")?;
/// # Ok::<(), hip::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct CommConfig {
    blocking: bool,
    cga_cluster_size: Option<u32>,
    min_ctas: Option<u32>,
    max_ctas: Option<u32>,
    net_name: Option<CString>,
}

impl Default for CommConfig {
    fn default() -> Self {
        CommConfig::new()
    }
}

impl CommConfig {
    /// Blocking, every other field left to the library.
    pub fn new() -> CommConfig {
        CommConfig {
            blocking: true,
            cga_cluster_size: None,
            min_ctas: None,
            max_ctas: None,
            net_name: None,
        }
    }

    /// Whether creating the communicator (and its later calls) blocks until done (`blocking`, the default
    /// `true`).
    pub fn blocking(mut self, blocking: bool) -> CommConfig {
        self.blocking = blocking;
        self
    }

    /// The cluster size of the library's kernels (`cgaClusterSize`, NVIDIA Hopper and later).
    pub fn cga_cluster_size(mut self, n: u32) -> CommConfig {
        self.cga_cluster_size = Some(n);
        self
    }

    /// The fewest blocks (CTAs) a collective uses (`minCTAs`).
    pub fn min_ctas(mut self, n: u32) -> CommConfig {
        self.min_ctas = Some(n);
        self
    }

    /// The most blocks (CTAs) a collective uses (`maxCTAs`).
    pub fn max_ctas(mut self, n: u32) -> CommConfig {
        self.max_ctas = Some(n);
        self
    }

    /// The network the communicator uses (`netName`, e.g. `"Socket"` or `"IB"`), as `NCCL_NET` does.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a name with a NUL byte.
    ///
    /// ```
    /// assert!(hip::rccl::CommConfig::new().net_name("I\0B").is_err());
    /// ```
    pub fn net_name(mut self, name: &str) -> Result<CommConfig> {
        self.net_name = Some(CString::new(name).map_err(|_| Error::InvalidArgument {
            what: "CommConfig::net_name",
            value: format!("{name:?}"),
            reason: "a C string cannot hold a NUL byte".into(),
        })?);
        Ok(self)
    }

    /// The C struct, pointing into `self` (its network name).
    fn raw(&self) -> Result<result::RawConfig> {
        let int = |what: &'static str, v: Option<u32>| -> Result<c_int> {
            match v {
                None => Ok(result::CONFIG_UNDEF_INT),
                Some(n) => match c_int::try_from(n) {
                    Ok(n) if n > 0 => Ok(n),
                    _ => Err(Error::InvalidArgument {
                        what,
                        value: n.to_string(),
                        reason: "from 1 to i32::MAX".into(),
                    }),
                },
            }
        };
        if let (Some(lo), Some(hi)) = (self.min_ctas, self.max_ctas) {
            if lo > hi {
                return Err(Error::InvalidArgument {
                    what: "CommConfig::min_ctas",
                    value: lo.to_string(),
                    reason: format!("above max_ctas ({hi})"),
                });
            }
        }
        let mut raw = result::RawConfig::new(self.blocking);
        raw.cga_cluster_size = int("CommConfig::cga_cluster_size", self.cga_cluster_size)?;
        raw.min_ctas = int("CommConfig::min_ctas", self.min_ctas)?;
        raw.max_ctas = int("CommConfig::max_ctas", self.max_ctas)?;
        if let Some(name) = &self.net_name {
            raw.net_name = name.as_ptr();
        }
        Ok(raw)
    }
}

impl Comm {
    /// Rank `rank` of `nranks` on `device`, joining the clique of `id`, made with `config`
    /// (`ncclCommInitRankConfig`). A blocking configuration returns once every rank has joined (the
    /// [`PendingComm`] is ready); a non-blocking one returns at once, and [`PendingComm::wait`] gives the
    /// communicator when the clique is complete, or an error when the time given runs out.
    ///
    /// # Errors
    ///
    /// [`Error::NotSupported`] naming `ncclCommInitRankConfig` where the loaded library lacks it (NCCL
    /// and RCCL before 2.14; looked up at run time); [`Error::InvalidArgument`] for `rank >= nranks`, a
    /// field of `config` out of range, or a call inside [`group`](fn@super::group) (a non-blocking
    /// initialization already runs in the background); [`Error::Nccl`] from the library.
    ///
    /// ```no_run
    /// use hip::rccl::{Comm, CommConfig, UniqueId};
    /// use std::time::Duration;
    /// # let (id, rank, nranks): (UniqueId, usize, usize) = unimplemented!();
    /// let device = hip::Device::get(0)?;
    /// let pending = Comm::with_config(&device, &id, rank, nranks, &CommConfig::new().blocking(false))?;
    /// // ... other set-up while the clique forms ...
    /// let comm = pending.wait(Duration::from_secs(60))?; // every rank joined within a minute
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn with_config(
        device: &Device,
        id: &UniqueId,
        rank: usize,
        nranks: usize,
        config: &CommConfig,
    ) -> Result<PendingComm> {
        let (r, n) = check_ranks(rank, nranks)?;
        if group::in_group() {
            return Err(Error::InvalidArgument {
                what: "Comm::with_config",
                value: "inside rccl::group".into(),
                reason:
                    "make configured communicators outside a group (a non-blocking one already \
                         forms in the background)"
                        .into(),
            });
        }
        let mut raw_config = config.raw()?;
        device.bind()?;
        let Some((raw, _in_progress)) = result::comm_init_rank_config(n, id.0, r, &mut raw_config)?
        else {
            return Err(Error::NotSupported {
                what: "ncclCommInitRankConfig",
                reason: "the loaded RCCL / NCCL lacks it (NCCL and RCCL 2.14 have it)",
            });
        };
        Ok(PendingComm {
            comm: Some(Comm {
                raw,
                device: device.clone(),
                rank,
                nranks,
                nonblocking: !config.blocking,
            }),
        })
    }
}

/// A communicator whose initialization may still go on in the background ([`Comm::with_config`] with a
/// non-blocking [`CommConfig`]). Dropping it, or [`abort`](Self::abort), stops the initialization and
/// frees the communicator (`ncclCommAbort`).
#[derive(Debug)]
pub struct PendingComm {
    /// Always `Some` until `wait` or `abort` takes it.
    comm: Option<Comm>,
}

impl PendingComm {
    fn comm(&self) -> &Comm {
        self.comm
            .as_ref()
            .expect("PendingComm holds its communicator until consumed")
    }

    /// Whether the clique is complete (`ncclCommGetAsyncError` no longer answers `ncclInProgress`).
    ///
    /// # Errors
    ///
    /// The initialization's error ([`Error::Nccl`]), e.g. a peer that failed.
    ///
    /// ```no_run
    /// # let pending: hip::rccl::PendingComm = unimplemented!();
    /// while !pending.is_ready()? {
    ///     std::thread::sleep(std::time::Duration::from_millis(1));
    /// }
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn is_ready(&self) -> Result<bool> {
        let comm = self.comm();
        // SAFETY: the communicator is live while `self` holds it.
        let state = unsafe { result::comm_get_async_error(comm.raw)? };
        if state == rccl_sys::ncclResult_t::ncclSuccess {
            Ok(true)
        } else if state == rccl_sys::ncclResult_t::ncclInProgress {
            Ok(false)
        } else {
            Err(result::error(
                "ncclCommInitRankConfig (background initialization)",
                state,
                comm.raw,
            ))
        }
    }

    /// The communicator, once its clique is complete: waits at most `timeout`, looking every 20 us to
    /// 1 ms (growing). On any error, or when the time runs out, the communicator is aborted.
    ///
    /// # Errors
    ///
    /// [`Error::Timeout`] when the clique is not complete within `timeout` (a rank that never joined);
    /// the initialization's error ([`Error::Nccl`]).
    ///
    /// ```no_run
    /// # let pending: hip::rccl::PendingComm = unimplemented!();
    /// let comm = pending.wait(std::time::Duration::from_secs(30))?;
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn wait(mut self, timeout: Duration) -> Result<Comm> {
        let backoff = Backoff {
            first: Duration::from_micros(20),
            cap: Duration::from_millis(1),
            limit: Some((
                timeout,
                "the RCCL communicator's initialization (ranks that never joined)",
            )),
        };
        // On an error or the timeout `self` drops, aborting the communicator.
        poll_until(backoff, || self.is_ready())?;
        Ok(self.comm.take().expect("held until consumed"))
    }

    /// Stop the initialization and free the communicator (`ncclCommAbort`).
    ///
    /// # Errors
    ///
    /// [`Error::Nccl`] from the library.
    ///
    /// ```no_run
    /// # let pending: hip::rccl::PendingComm = unimplemented!();
    /// pending.abort()?;
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn abort(mut self) -> Result<()> {
        self.comm.take().expect("held until consumed").abort()
    }

    /// The rank this communicator will have.
    pub fn rank(&self) -> usize {
        self.comm().rank
    }

    /// The number of ranks of its clique.
    pub fn size(&self) -> usize {
        self.comm().nranks
    }
}

impl Drop for PendingComm {
    fn drop(&mut self) {
        if let Some(comm) = self.comm.take() {
            let _ = comm.abort();
        }
    }
}
