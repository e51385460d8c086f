//! CSR and COO matrices that own their index and value buffers, valid by construction: every index a
//! library call follows is in range, so no call can read or write outside a buffer.

use super::SparseScalar;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::event::same_device;
use crate::memory::{DeviceBuffer, DeviceMemory, DeviceMemoryMut};

/// A `rows x cols` matrix in compressed sparse row form (0-based, 32-bit indices): row `i`'s entries are
/// `values[offsets[i]..offsets[i + 1]]`, in the columns `indices[offsets[i]..offsets[i + 1]]`.
///
/// Made from host arrays ([`Csr::from_host`]) or device buffers ([`Csr::from_device`]), both checked:
/// `offsets` has `rows + 1` entries, starts at 0, never decreases and ends at the number of entries;
/// every column index is below `cols`. Duplicates and unsorted columns within a row are allowed by these
/// checks (the libraries sum duplicates in products; some algorithms expect sorted rows). The index
/// buffers are never handed out mutably, so the matrix stays valid; its values may change freely
/// ([`Csr::values_mut`]).
pub struct Csr<T: SparseScalar> {
    /// This matrix among all made in the process ([`next_id`]): what a handle's cached plans are for.
    pub(super) id: u64,
    pub(super) rows: usize,
    pub(super) cols: usize,
    pub(super) offsets: DeviceBuffer<i32>,
    pub(super) indices: DeviceBuffer<i32>,
    pub(super) values: DeviceBuffer<T>,
}

/// A `rows x cols` matrix in coordinate form (0-based, 32-bit indices, sorted by row): entry `k` is
/// `values[k]` at `(row_indices[k], col_indices[k])`.
///
/// Checked when made, as [`Csr`] is: both index arrays as long as the values, every row below `rows`,
/// every column below `cols`, and the rows in non-decreasing order (what the libraries' COO calls and
/// the conversion to CSR take).
pub struct Coo<T: SparseScalar> {
    /// As [`Csr`]'s.
    pub(super) id: u64,
    pub(super) rows: usize,
    pub(super) cols: usize,
    pub(super) row_indices: DeviceBuffer<i32>,
    pub(super) col_indices: DeviceBuffer<i32>,
    pub(super) values: DeviceBuffer<T>,
}

/// A number no other matrix of the process has: a matrix's index arrays never change after it is
/// made (checked once), so a handle may keep what it derived from them (descriptors, a library's
/// analysis) for as long as it sees the same number.
pub(super) fn next_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

fn invalid(what: &'static str, value: String, reason: String) -> Error {
    Error::InvalidArgument {
        what,
        value,
        reason,
    }
}

/// Sizes the libraries take as 32-bit indices.
fn dims(what: &'static str, rows: usize, cols: usize, nnz: usize) -> Result<()> {
    for (name, v) in [("rows", rows), ("cols", cols), ("entries", nnz)] {
        if i32::try_from(v).is_err() {
            return Err(invalid(
                what,
                format!("{v} {name}"),
                "this crate's sparse matrices use 32-bit indices (at most i32::MAX rows, columns and entries)".into(),
            ));
        }
    }
    Ok(())
}

/// The CSR arrays' invariants (see [`Csr`]).
pub(super) fn check_csr(
    rows: usize,
    cols: usize,
    offsets: &[i32],
    indices: &[i32],
    nnz: usize,
) -> Result<()> {
    const WHAT: &str = "csr matrix";
    dims(WHAT, rows, cols, nnz)?;
    if indices.len() != nnz {
        return Err(invalid(
            WHAT,
            format!("{} column indices", indices.len()),
            format!("one per entry: {nnz} values"),
        ));
    }
    if offsets.len() != rows + 1 {
        return Err(invalid(
            WHAT,
            format!("{} row offsets", offsets.len()),
            format!("rows + 1 = {} of them", rows + 1),
        ));
    }
    if offsets[0] != 0 {
        return Err(invalid(
            WHAT,
            format!("row offset {}", offsets[0]),
            "the first row offset is 0 (0-based)".into(),
        ));
    }
    if let Some(i) = offsets.windows(2).position(|w| w[1] < w[0]) {
        return Err(invalid(
            WHAT,
            format!("row offsets {} then {}", offsets[i], offsets[i + 1]),
            format!("row offsets never decrease (row {i})"),
        ));
    }
    if offsets[rows] as usize != nnz {
        return Err(invalid(
            WHAT,
            format!("last row offset {}", offsets[rows]),
            format!("the number of entries, {nnz}"),
        ));
    }
    check_indices(WHAT, "column", indices, cols)
}

/// The COO arrays' invariants (see [`Coo`]).
pub(super) fn check_coo(
    rows: usize,
    cols: usize,
    row_indices: &[i32],
    col_indices: &[i32],
    nnz: usize,
) -> Result<()> {
    const WHAT: &str = "coo matrix";
    dims(WHAT, rows, cols, nnz)?;
    for (name, len) in [
        ("row indices", row_indices.len()),
        ("column indices", col_indices.len()),
    ] {
        if len != nnz {
            return Err(invalid(
                WHAT,
                format!("{len} {name}"),
                format!("one per entry: {nnz} values"),
            ));
        }
    }
    check_indices(WHAT, "row", row_indices, rows)?;
    check_indices(WHAT, "column", col_indices, cols)?;
    if let Some(k) = row_indices.windows(2).position(|w| w[1] < w[0]) {
        return Err(invalid(
            WHAT,
            format!(
                "row {} after row {} (entry {})",
                row_indices[k + 1],
                row_indices[k],
                k + 1
            ),
            "entries are sorted by row".into(),
        ));
    }
    Ok(())
}

fn check_indices(what: &'static str, kind: &str, indices: &[i32], bound: usize) -> Result<()> {
    match indices.iter().position(|&c| c < 0 || c as usize >= bound) {
        None => Ok(()),
        Some(k) => Err(invalid(
            what,
            format!("{kind} index {} (entry {k})", indices[k]),
            format!("{kind} indices are in 0..{bound}"),
        )),
    }
}

/// A copy of `src` in a new allocation that only the matrix being made will hold: no graph captured
/// it and nothing else can name it, so no later writer exists but the matrix's own (it has none: index
/// buffers are never handed out mutably). Copied on the null stream after `src`'s writers; every later
/// use (the read-back for the check first) is ordered after the copy.
fn private_copy(src: &DeviceBuffer<i32>) -> Result<DeviceBuffer<i32>> {
    // SAFETY: `uninit` asks that the contents be written before they are read: the copy below writes
    // every element (recorded as the buffer's writer, so every later use is ordered after it); on its
    // failure the buffer is dropped unread.
    let mut copy = unsafe { DeviceBuffer::<i32>::uninit(src.device(), src.len())? };
    copy.copy_from_device(src)?;
    Ok(copy)
}

/// Buffers of one device.
fn one_device(what: &'static str, device: &Device, others: &[&Device]) -> Result<()> {
    others.iter().try_for_each(|d| same_device(what, device, d))
}

impl<T: SparseScalar> Csr<T> {
    /// Upload a CSR matrix from host arrays, checked first (see [`Csr`]).
    pub fn from_host(
        device: &Device,
        rows: usize,
        cols: usize,
        offsets: &[i32],
        indices: &[i32],
        values: &[T],
    ) -> Result<Self> {
        check_csr(rows, cols, offsets, indices, values.len())?;
        Ok(Csr {
            id: next_id(),
            rows,
            cols,
            offsets: DeviceBuffer::from_slice(device, offsets)?,
            indices: DeviceBuffer::from_slice(device, indices)?,
            values: DeviceBuffer::from_slice(device, values)?,
        })
    }

    /// A CSR matrix from device buffers (all of one device), checked: the index buffers are copied into
    /// two new buffers only the matrix holds, and those copies are read back to the host and checked as
    /// [`Csr::from_host`] checks them.
    ///
    /// Why copies: a buffer handed over here may still have a writer that needs no borrow of it. A
    /// graph that captured a write to it (a copy, a fill, a kernel) rewrites it at every
    /// [`GraphExec::launch`](crate::graph::GraphExec::launch), which the memory model orders but does
    /// not refuse: checked in place, the indices could be replaced after the check, with no `unsafe`,
    /// and the libraries would follow them out of bounds. The copies are new allocations no graph,
    /// kernel or handle has seen, so what was checked is what every later call reads. (Marking the
    /// given allocation immutable instead would have to be enforced at every writer, graph launches
    /// included; a copy needs nothing of them.)
    ///
    /// Cost, besides the read-back the check always needed (`(rows + 1 + nnz) * 4` bytes to the host):
    /// two `hipMalloc`s and two device-to-device copies of those bytes, queued on the null stream after
    /// the buffers' writers. The given index buffers are dropped (freed after their users, and after
    /// every graph that holds them). The values are kept as given: no value can lead a call out of
    /// bounds, and they may change freely ([`Csr::values_mut`]).
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`] for buffers of several devices; [`Error::InvalidArgument`] naming the
    /// broken invariant (see [`Csr`]); an allocation or copy error.
    pub fn from_device(
        rows: usize,
        cols: usize,
        offsets: DeviceBuffer<i32>,
        indices: DeviceBuffer<i32>,
        values: DeviceBuffer<T>,
    ) -> Result<Self> {
        one_device(
            "csr matrix",
            values.device(),
            &[offsets.device(), indices.device()],
        )?;
        let (offsets, indices) = (private_copy(&offsets)?, private_copy(&indices)?);
        check_csr(
            rows,
            cols,
            &offsets.to_vec()?,
            &indices.to_vec()?,
            values.len(),
        )?;
        Ok(Csr {
            id: next_id(),
            rows,
            cols,
            offsets,
            indices,
            values,
        })
    }

    /// A CSR matrix from device buffers whose lengths and devices are checked, but not their indices.
    ///
    /// # Safety
    /// `offsets` and `indices` hold a valid CSR structure for `rows x cols` (see [`Csr`]) by the time any
    /// call that uses the matrix runs: the libraries follow them into other buffers unchecked.
    pub unsafe fn from_device_unchecked(
        rows: usize,
        cols: usize,
        offsets: DeviceBuffer<i32>,
        indices: DeviceBuffer<i32>,
        values: DeviceBuffer<T>,
    ) -> Result<Self> {
        one_device(
            "csr matrix",
            values.device(),
            &[offsets.device(), indices.device()],
        )?;
        dims("csr matrix", rows, cols, values.len())?;
        if offsets.len() != rows + 1 || indices.len() != values.len() {
            return Err(invalid(
                "csr matrix",
                format!(
                    "{} row offsets, {} column indices, {} values",
                    offsets.len(),
                    indices.len(),
                    values.len()
                ),
                format!("rows + 1 = {} offsets and one index per value", rows + 1),
            ));
        }
        Ok(Csr {
            id: next_id(),
            rows,
            cols,
            offsets,
            indices,
            values,
        })
    }

    /// Rows.
    pub fn rows(&self) -> usize {
        self.rows
    }
    /// Columns.
    pub fn cols(&self) -> usize {
        self.cols
    }
    /// Stored entries.
    pub fn nnz(&self) -> usize {
        self.values.len()
    }
    /// The device the buffers are on.
    pub fn device(&self) -> &Device {
        self.values.device()
    }
    /// The row offsets (`rows + 1`).
    pub fn offsets(&self) -> &DeviceBuffer<i32> {
        &self.offsets
    }
    /// The column indices (one per entry).
    pub fn indices(&self) -> &DeviceBuffer<i32> {
        &self.indices
    }
    /// The values (one per entry).
    pub fn values(&self) -> &DeviceBuffer<T> {
        &self.values
    }
    /// The values, to change in place: the structure stays as checked.
    pub fn values_mut(&mut self) -> &mut DeviceBuffer<T> {
        &mut self.values
    }
    /// The three buffers: offsets, indices, values.
    pub fn into_parts(self) -> (DeviceBuffer<i32>, DeviceBuffer<i32>, DeviceBuffer<T>) {
        (self.offsets, self.indices, self.values)
    }
    /// The three arrays on the host (waiting for their writers).
    pub fn to_host(&self) -> Result<(Vec<i32>, Vec<i32>, Vec<T>)> {
        Ok((
            self.offsets.to_vec()?,
            self.indices.to_vec()?,
            self.values.to_vec()?,
        ))
    }
}

impl<T: SparseScalar> Coo<T> {
    /// Upload a COO matrix from host arrays, checked first (see [`Coo`]).
    pub fn from_host(
        device: &Device,
        rows: usize,
        cols: usize,
        row_indices: &[i32],
        col_indices: &[i32],
        values: &[T],
    ) -> Result<Self> {
        check_coo(rows, cols, row_indices, col_indices, values.len())?;
        Ok(Coo {
            id: next_id(),
            rows,
            cols,
            row_indices: DeviceBuffer::from_slice(device, row_indices)?,
            col_indices: DeviceBuffer::from_slice(device, col_indices)?,
            values: DeviceBuffer::from_slice(device, values)?,
        })
    }

    /// A COO matrix from device buffers (all of one device), checked: the index buffers are copied into
    /// new buffers only the matrix holds, and the copies are read back and checked (why, and what it
    /// costs: [`Csr::from_device`]; here `2 * nnz * 4` bytes).
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`] for buffers of several devices; [`Error::InvalidArgument`] naming the
    /// broken invariant (see [`Coo`]); an allocation or copy error.
    pub fn from_device(
        rows: usize,
        cols: usize,
        row_indices: DeviceBuffer<i32>,
        col_indices: DeviceBuffer<i32>,
        values: DeviceBuffer<T>,
    ) -> Result<Self> {
        one_device(
            "coo matrix",
            values.device(),
            &[row_indices.device(), col_indices.device()],
        )?;
        let (row_indices, col_indices) = (private_copy(&row_indices)?, private_copy(&col_indices)?);
        check_coo(
            rows,
            cols,
            &row_indices.to_vec()?,
            &col_indices.to_vec()?,
            values.len(),
        )?;
        Ok(Coo {
            id: next_id(),
            rows,
            cols,
            row_indices,
            col_indices,
            values,
        })
    }

    /// Rows.
    pub fn rows(&self) -> usize {
        self.rows
    }
    /// Columns.
    pub fn cols(&self) -> usize {
        self.cols
    }
    /// Stored entries.
    pub fn nnz(&self) -> usize {
        self.values.len()
    }
    /// The device the buffers are on.
    pub fn device(&self) -> &Device {
        self.values.device()
    }
    /// The row indices (one per entry, non-decreasing).
    pub fn row_indices(&self) -> &DeviceBuffer<i32> {
        &self.row_indices
    }
    /// The column indices (one per entry).
    pub fn col_indices(&self) -> &DeviceBuffer<i32> {
        &self.col_indices
    }
    /// The values (one per entry).
    pub fn values(&self) -> &DeviceBuffer<T> {
        &self.values
    }
    /// The values, to change in place: the structure stays as checked.
    pub fn values_mut(&mut self) -> &mut DeviceBuffer<T> {
        &mut self.values
    }
    /// The three arrays on the host (waiting for their writers).
    pub fn to_host(&self) -> Result<(Vec<i32>, Vec<i32>, Vec<T>)> {
        Ok((
            self.row_indices.to_vec()?,
            self.col_indices.to_vec()?,
            self.values.to_vec()?,
        ))
    }
}
