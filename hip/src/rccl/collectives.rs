//! The collectives and point-to-point calls of a [`Comm`]: each orders its stream by the memory model for
//! the buffers it reads and writes, checks lengths, ranks and devices, and hands NCCL the call.

use super::{group, rank_i32, result, Comm, NcclType, ReduceOp};
use crate::error::{Error, Result};
use crate::event::same_device;
use crate::memory::{check_len, Access, Allocation, DeviceCopy, DeviceMemory, DeviceMemoryMut};
use crate::stream::{Stream, StreamOp};
use std::sync::Arc;

impl Comm {
    /// The call's common arguments, after ordering `stream` by the memory model for each of `uses`.
    /// The operation in progress on `stream` comes back with them: hold it until NCCL has the call.
    fn call<'s, T: NcclType>(
        &self,
        what: &'static str,
        count: usize,
        stream: &'s Stream,
        uses: &[(&Arc<Allocation>, Access)],
    ) -> Result<(StreamOp<'s>, result::Call)> {
        same_device(what, stream.device(), &self.device)?;
        let op = stream.begin_op();
        // In address order (see memory::tracking). A call uses one or two buffers: sorted without
        // allocating (this runs per collective, whose small sizes take ~10 us in all).
        let (pair, more);
        let uses: &[(&Arc<Allocation>, Access)] = match uses {
            [a, b] if Arc::as_ptr(b.0) < Arc::as_ptr(a.0) => {
                pair = [*b, *a];
                &pair
            }
            [_, _, _, ..] => {
                let mut v = uses.to_vec();
                crate::memory::tracking::by_address(&mut v);
                more = v;
                &more
            }
            _ => uses,
        };
        // Inside `group` NCCL queues the call only at ncclGroupEnd: keep the memory until then, and record
        // the uses open (whoever waits for them waits for all the stream has queued by then).
        let in_group = group::in_group();
        for (alloc, access) in uses {
            if in_group {
                alloc.use_in_group(&op, *access)?;
                // Counted by `use_in_group` until the outermost group ends.
                group::keep(alloc);
            } else {
                alloc.use_on(&op, *access)?;
            }
        }
        // Inside a group NCCL sets each communicator's device itself (its documented way for one thread
        // to drive several devices); switching devices per call cost ~0.4 us (issue 42's paired bench).
        if !in_group {
            self.device.bind()?;
        } else if self.nonblocking {
            group::note_nonblocking(self.raw);
        }
        let call = result::Call {
            count,
            dtype: T::DATA_TYPE,
            comm: self.raw,
            stream: stream.raw(),
        };
        Ok((op, call))
    }

    fn on_device<T: DeviceCopy>(
        &self,
        what: &'static str,
        mem: &impl DeviceMemory<T>,
    ) -> Result<()> {
        if mem.device().ordinal() == self.device.ordinal() {
            Ok(())
        } else {
            Err(Error::DeviceMismatch {
                what,
                stream: self.device.ordinal(),
                other: mem.device().ordinal(),
            })
        }
    }

    fn check_rank(&self, what: &'static str, r: usize) -> Result<i32> {
        if r < self.nranks {
            rank_i32(what, r)
        } else {
            Err(Error::InvalidArgument {
                what,
                value: r.to_string(),
                reason: format!("not a rank of this communicator (0..{})", self.nranks),
            })
        }
    }

    /// Sum (or another `op`) of every rank's `send` into every rank's `recv`, of the same length
    /// (`ncclAllReduce`).
    pub fn all_reduce<T: NcclType>(
        &self,
        send: &impl DeviceMemory<T>,
        recv: &mut impl DeviceMemoryMut<T>,
        op: ReduceOp,
        stream: &Stream,
    ) -> Result<()> {
        self.on_device("all_reduce", send)?;
        self.on_device("all_reduce", recv)?;
        check_len("all_reduce", send.len(), recv.len())?;
        let (_op, c) = self.call::<T>(
            "all_reduce",
            send.len(),
            stream,
            &[
                (send.allocation(), Access::Read),
                (recv.allocation(), Access::Write),
            ],
        )?;
        // SAFETY: both buffers are device memory of `count` elements (lengths checked; sealed trait) on the
        // communicator's device (checked); `c.comm` is live until Drop (or, dropped inside a group, until
        // the group ends) and `c.stream` while borrowed, on that device (checked). Outside a group `call`
        // made that device current; inside one NCCL sets each communicator's device itself at
        // ncclGroupEnd. NCCL touches this rank's buffers only within that count. Outside a group `call`
        // made the stream wait for the buffers' conflicting users and recorded it as their user (under
        // `_op`, held through this call), so neither is freed or used in conflict before the collective is
        // done. Inside `group` NCCL queues it only at the group's end: `call` recorded the uses open and
        // put both allocations in the group's list, which `group` drops only after ncclGroupEnd queued
        // the call (a buffer dropped inside the group is freed after it), and every other use of them is
        // refused until then.
        unsafe { result::all_reduce(send.device_ptr(), recv.device_ptr(), op.raw(), c) }
    }

    /// [`all_reduce`](Self::all_reduce) with the result replacing `buf`.
    pub fn all_reduce_in_place<T: NcclType>(
        &self,
        buf: &mut impl DeviceMemoryMut<T>,
        op: ReduceOp,
        stream: &Stream,
    ) -> Result<()> {
        self.on_device("all_reduce_in_place", buf)?;
        let (_op, c) = self.call::<T>(
            "all_reduce_in_place",
            buf.len(),
            stream,
            &[(buf.allocation(), Access::Write)],
        )?;
        // SAFETY: as in all_reduce, with one buffer of `count` elements as both sides (NCCL allows
        // send == recv: in place).
        unsafe { result::all_reduce(buf.device_ptr(), buf.device_ptr(), op.raw(), c) }
    }

    /// Copy `root`'s `buf` into every other rank's `buf`, of the same length on every rank
    /// (`ncclBroadcast`, in place).
    pub fn broadcast<T: NcclType>(
        &self,
        buf: &mut impl DeviceMemoryMut<T>,
        root: usize,
        stream: &Stream,
    ) -> Result<()> {
        self.on_device("broadcast", buf)?;
        let root = self.check_rank("broadcast root", root)?;
        let (_op, c) = self.call::<T>(
            "broadcast",
            buf.len(),
            stream,
            &[(buf.allocation(), Access::Write)],
        )?;
        // SAFETY: as in all_reduce, with one buffer of `count` elements as both sides (in place); `root`
        // is a rank of the communicator (checked).
        unsafe { result::broadcast(buf.device_ptr(), buf.device_ptr(), root, c) }
    }

    /// `op` over every rank's `send` into `recv` on `root` (`ncclReduce`). Every rank passes a `recv` of
    /// `send`'s length; only the root's is written.
    pub fn reduce<T: NcclType>(
        &self,
        send: &impl DeviceMemory<T>,
        recv: &mut impl DeviceMemoryMut<T>,
        op: ReduceOp,
        root: usize,
        stream: &Stream,
    ) -> Result<()> {
        self.on_device("reduce", send)?;
        self.on_device("reduce", recv)?;
        check_len("reduce", send.len(), recv.len())?;
        let root = self.check_rank("reduce root", root)?;
        let (_op, c) = self.call::<T>(
            "reduce",
            send.len(),
            stream,
            &[
                (send.allocation(), Access::Read),
                (recv.allocation(), Access::Write),
            ],
        )?;
        // SAFETY: as in all_reduce (equal lengths checked); `root` is a rank of the communicator (checked).
        unsafe { result::reduce(send.device_ptr(), recv.device_ptr(), op.raw(), root, c) }
    }

    /// Every rank's `send` concatenated in rank order into every rank's `recv`, which holds
    /// `send.len() * size()` elements (`ncclAllGather`).
    pub fn all_gather<T: NcclType>(
        &self,
        send: &impl DeviceMemory<T>,
        recv: &mut impl DeviceMemoryMut<T>,
        stream: &Stream,
    ) -> Result<()> {
        self.on_device("all_gather", send)?;
        self.on_device("all_gather", recv)?;
        check_len(
            "all_gather (receive length = send length x ranks)",
            send.len().saturating_mul(self.nranks),
            recv.len(),
        )?;
        let (_op, c) = self.call::<T>(
            "all_gather",
            send.len(),
            stream,
            &[
                (send.allocation(), Access::Read),
                (recv.allocation(), Access::Write),
            ],
        )?;
        // SAFETY: as in all_reduce, with `send` of `count` and `recv` of `count * nranks` elements (checked
        // above: the product saturates, so an overflowing one cannot equal a real length).
        unsafe { result::all_gather(send.device_ptr(), recv.device_ptr(), c) }
    }

    /// `op` over every rank's `send` (`recv.len() * size()` elements); rank `r` receives block `r` of the
    /// result (`ncclReduceScatter`).
    pub fn reduce_scatter<T: NcclType>(
        &self,
        send: &impl DeviceMemory<T>,
        recv: &mut impl DeviceMemoryMut<T>,
        op: ReduceOp,
        stream: &Stream,
    ) -> Result<()> {
        self.on_device("reduce_scatter", send)?;
        self.on_device("reduce_scatter", recv)?;
        check_len(
            "reduce_scatter (send length = receive length x ranks)",
            recv.len().saturating_mul(self.nranks),
            send.len(),
        )?;
        let (_op, c) = self.call::<T>(
            "reduce_scatter",
            recv.len(),
            stream,
            &[
                (send.allocation(), Access::Read),
                (recv.allocation(), Access::Write),
            ],
        )?;
        // SAFETY: as in all_reduce, with `recv` of `count` and `send` of `count * nranks` elements
        // (checked above, the product saturating).
        unsafe { result::reduce_scatter(send.device_ptr(), recv.device_ptr(), op.raw(), c) }
    }

    /// Send `buf` to rank `peer`, which must [`recv`](Self::recv) as many elements (`ncclSend`). Pair it
    /// with the matching receive inside [`group`] where both would otherwise wait for each other.
    pub fn send<T: NcclType>(
        &self,
        buf: &impl DeviceMemory<T>,
        peer: usize,
        stream: &Stream,
    ) -> Result<()> {
        self.on_device("send", buf)?;
        let peer = self.check_rank("send peer", peer)?;
        let (_op, c) = self.call::<T>(
            "send",
            buf.len(),
            stream,
            &[(buf.allocation(), Access::Read)],
        )?;
        // SAFETY: as in all_reduce, for one buffer of `count` elements that NCCL only reads; `peer` is a
        // rank of the communicator (checked).
        unsafe { result::send(buf.device_ptr(), peer, c) }
    }

    /// Receive into `buf` what rank `peer` [`send`](Self::send)s (`ncclRecv`).
    pub fn recv<T: NcclType>(
        &self,
        buf: &mut impl DeviceMemoryMut<T>,
        peer: usize,
        stream: &Stream,
    ) -> Result<()> {
        self.on_device("recv", buf)?;
        let peer = self.check_rank("recv peer", peer)?;
        let (_op, c) = self.call::<T>(
            "recv",
            buf.len(),
            stream,
            &[(buf.allocation(), Access::Write)],
        )?;
        // SAFETY: as in all_reduce, for one buffer of `count` elements that NCCL writes; `peer` is a rank
        // of the communicator (checked).
        unsafe { result::recv(buf.device_ptr(), peer, c) }
    }
}
