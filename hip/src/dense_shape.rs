//! Operands of the math libraries' calls (hipSOLVER, hipSPARSE): how a call uses each buffer, and the
//! checks that a buffer holds every element a vector or a column-major `rows x cols` matrix with leading
//! dimension `ld` reaches.

use crate::device::Device;
use crate::error::{Error, Result};
use crate::memory::{Access, Allocation, DeviceCopy, DeviceMemory};
use std::os::raw::c_int;
use std::sync::Arc;

/// One operand of a call: its device, allocation and how the call uses it.
pub(crate) type Operand<'a> = (&'a Device, &'a Arc<Allocation>, Access);

/// `m` as an operand the call reads.
pub(crate) fn read<T: DeviceCopy>(m: &impl DeviceMemory<T>) -> Operand<'_> {
    (m.device(), m.allocation(), Access::Read)
}

/// `m` as an operand the call writes.
pub(crate) fn write<T: DeviceCopy>(m: &impl DeviceMemory<T>) -> Operand<'_> {
    (m.device(), m.allocation(), Access::Write)
}

/// A vector operand of at least `need` elements.
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
    if ld < rows.max(1) {
        return Err(Error::InvalidArgument {
            what,
            value: format!("leading dimension {ld}"),
            reason: format!(
                "a {rows} x {cols} matrix needs a leading dimension of at least {}",
                rows.max(1)
            ),
        });
    }
    let need = if rows == 0 || cols == 0 {
        Some(0)
    } else {
        ld.checked_mul(cols - 1).and_then(|x| x.checked_add(rows))
    };
    match need {
        Some(need) if len >= need => Ok(ld_int),
        need => Err(Error::InvalidArgument {
            what,
            value: format!("a buffer of {len} elements"),
            reason: match need {
                Some(need) => format!(
                    "a {rows} x {cols} matrix with leading dimension {ld} spans {need} elements"
                ),
                None => "the elements its shape spans overflow usize".into(),
            },
        }),
    }
}
