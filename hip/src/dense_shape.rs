//! Shapes of the math libraries' operands: the elements a column-major `rows x cols` matrix with leading
//! dimension `ld` spans (every library and `hip::elementwise`), and for hipSOLVER and hipSPARSE how a call
//! uses each buffer and the checks that a buffer holds every element a vector or a matrix reaches.

#[cfg(any(feature = "solver", feature = "sparse"))]
use crate::device::Device;
use crate::error::{Error, Result};
#[cfg(any(feature = "solver", feature = "sparse"))]
use crate::memory::{Access, Allocation, DeviceCopy, DeviceMemory};
#[cfg(any(feature = "solver", feature = "sparse"))]
use std::os::raw::c_int;
#[cfg(any(feature = "solver", feature = "sparse"))]
use std::sync::Arc;

/// One operand of a call: its device, allocation and how the call uses it.
#[cfg(any(feature = "solver", feature = "sparse"))]
pub(crate) type Operand<'a> = (&'a Device, &'a Arc<Allocation>, Access);

/// `m` as an operand the call reads.
#[cfg(any(feature = "solver", feature = "sparse"))]
pub(crate) fn read<T: DeviceCopy>(m: &impl DeviceMemory<T>) -> Operand<'_> {
    (m.device(), m.allocation(), Access::Read)
}

/// `m` as an operand the call writes.
#[cfg(any(feature = "solver", feature = "sparse"))]
pub(crate) fn write<T: DeviceCopy>(m: &impl DeviceMemory<T>) -> Operand<'_> {
    (m.device(), m.allocation(), Access::Write)
}

/// A vector operand of at least `need` elements.
#[cfg(any(feature = "solver", feature = "sparse"))]
pub(crate) fn vector(what: &'static str, len: usize, need: usize) -> Result<()> {
    if len >= need {
        Ok(())
    } else {
        Err(Error::InvalidArgument {
            what,
            value: format!("a buffer of {len} elements"),
            reason: format!("the call reaches {need} elements"),
        })
    }
}

/// `v` as the libraries' C `int`.
#[cfg(any(feature = "solver", feature = "sparse"))]
#[inline]
pub(crate) fn int(what: &'static str, v: usize) -> Result<c_int> {
    c_int::try_from(v).map_err(|_| Error::InvalidArgument {
        what,
        value: v.to_string(),
        reason: format!(
            "the library takes sizes as a C int (at most {})",
            c_int::MAX
        ),
    })
}

/// A `rows x cols` column-major matrix with leading dimension `ld` in a buffer of `len` elements: `ld`
/// at least `max(1, rows)`, every value a C `int`, and the buffer holding `ld * (cols - 1) + rows`
/// elements (none for an empty matrix). Returns `ld` as an `int`.
#[cfg(any(feature = "solver", feature = "sparse"))]
pub(crate) fn matrix(
    what: &'static str,
    len: usize,
    rows: usize,
    cols: usize,
    ld: usize,
) -> Result<c_int> {
    int(what, rows)?;
    int(what, cols)?;
    let ld_int = int(what, ld)?;
    let need = matrix_len(what, rows, cols, ld)?;
    if len >= need {
        Ok(ld_int)
    } else {
        Err(Error::InvalidArgument {
            what,
            value: format!("a buffer of {len} elements"),
            reason: format!(
                "a {rows} x {cols} matrix with leading dimension {ld} spans {need} elements"
            ),
        })
    }
}

/// Elements a column-major `rows x cols` matrix with leading dimension `ld` spans:
/// `ld * (cols - 1) + rows` (0 when it has no elements). `ld` must be at least `max(1, rows)`; a size past
/// `usize` is an error too, naming `what`.
#[inline]
pub(crate) fn matrix_len(what: &'static str, rows: usize, cols: usize, ld: usize) -> Result<usize> {
    if ld < rows.max(1) {
        return Err(short_ld(what, rows, ld));
    }
    if rows == 0 || cols == 0 {
        return Ok(0);
    }
    ld.checked_mul(cols - 1)
        .and_then(|v| v.checked_add(rows))
        .ok_or_else(|| overflow(what))
}

#[cold]
#[inline(never)]
fn short_ld(what: &'static str, rows: usize, ld: usize) -> Error {
    Error::InvalidArgument {
        what,
        value: format!("leading dimension {ld}"),
        reason: format!(
            "a column-major matrix of {rows} rows needs a leading dimension of at least {}",
            rows.max(1)
        ),
    }
}

/// The error for a shape whose elements overflow `usize`.
#[cold]
#[inline(never)]
pub(crate) fn overflow(what: &'static str) -> Error {
    Error::InvalidArgument {
        what,
        value: "its shape".into(),
        reason: "the elements it spans overflow usize".into(),
    }
}
