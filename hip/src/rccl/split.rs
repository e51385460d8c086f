//! [`Comm::split`]: sub-communicators by color and key (`ncclCommSplit`).

use super::{group, result, Comm};
use crate::error::{Error, Result};

impl Comm {
    /// Split this communicator (`ncclCommSplit`): the ranks passing the same `color` form a new
    /// communicator, ordered by `key` (then by their rank here); a rank passing `None`
    /// (`NCCL_SPLIT_NOCOLOR`) joins none and gets `Ok(None)`. Collective: every rank of this communicator
    /// calls it. The new communicator is on the same device and takes this one's configuration.
    ///
    /// # Errors
    ///
    /// [`Error::NotSupported`] naming `ncclCommSplit` where the loaded library lacks it (NCCL before
    /// 2.18, RCCL before 5.7; looked up at run time, so a build against older headers still works);
    /// [`Error::InvalidArgument`] for a color above `i32::MAX` or a call inside [`group`];
    /// [`Error::Nccl`] from the library.
    ///
    /// ```no_run
    /// # let comm: hip::rccl::Comm = unimplemented!();
    /// // Even and odd ranks, each set in its own communicator.
    /// let half = comm.split(Some((comm.rank() % 2) as u32), comm.rank() as i32)?.unwrap();
    /// assert_eq!(half.size(), comm.size() / 2);
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn split(&self, color: Option<u32>, key: i32) -> Result<Option<Comm>> {
        let color = match color {
            None => -1, // NCCL_SPLIT_NOCOLOR
            Some(c) => i32::try_from(c).map_err(|_| Error::InvalidArgument {
                what: "split color",
                value: c.to_string(),
                reason: "at most i32::MAX".into(),
            })?,
        };
        if group::in_group() {
            return Err(Error::InvalidArgument {
                what: "Comm::split",
                value: "inside rccl::group".into(),
                reason: "the new handle is written when the group ends; split outside a group"
                    .into(),
            });
        }
        self.device.bind()?;
        // SAFETY: `self.raw` is live while `self` is, and its device is bound (above).
        let new = unsafe { result::comm_split(self.raw, color, key)? };
        let Some(raw) = new else {
            return Err(Error::NotSupported {
                what: "ncclCommSplit",
                reason: "the loaded RCCL / NCCL lacks it (NCCL 2.18 and RCCL 5.7 have it)",
            });
        };
        if raw.is_null() {
            return Ok(None);
        }
        // From here the handle is owned: a failure below still destroys it (Drop).
        let mut comm = Comm {
            raw,
            device: self.device.clone(),
            rank: 0,
            nranks: 1,
            nonblocking: self.nonblocking,
        };
        if self.nonblocking {
            // SAFETY: `raw` is the live communicator just made, which a non-blocking parent's split may
            // still be setting up.
            unsafe { result::settle("ncclCommSplit", raw)? };
        }
        // SAFETY: `raw` is the live communicator just made.
        let (rank, nranks) = unsafe { (result::comm_user_rank(raw)?, result::comm_count(raw)?) };
        comm.rank = rank as usize;
        comm.nranks = nranks as usize;
        Ok(Some(comm))
    }
}
