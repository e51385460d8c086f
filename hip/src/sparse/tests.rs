//! The sparse structures' checks, without a device: what a hostile CSR or COO array set is refused for.

use super::matrix::{check_coo, check_csr};
use crate::error::Error;

fn reason(r: crate::Result<()>) -> String {
    match r {
        Err(Error::InvalidArgument {
            what,
            value,
            reason,
        }) => format!("{what}|{value}|{reason}"),
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

#[test]
fn a_valid_csr_passes_and_each_broken_invariant_is_named() {
    // [[2, 0, 1], [0, 3, 0]]
    assert!(check_csr(2, 3, &[0, 2, 3], &[0, 2, 1], 3).is_ok());
    // An empty matrix, and rows without entries.
    assert!(check_csr(0, 0, &[0], &[], 0).is_ok());
    assert!(check_csr(3, 1, &[0, 0, 0, 0], &[], 0).is_ok());
    let e = reason(check_csr(2, 3, &[0, 2, 3], &[0, 2], 3));
    assert!(
        e.contains("2 column indices") && e.contains("3 values"),
        "{e}"
    );
    let e = reason(check_csr(2, 3, &[0, 3], &[0, 2, 1], 3));
    assert!(
        e.contains("2 row offsets") && e.contains("rows + 1 = 3"),
        "{e}"
    );
    let e = reason(check_csr(2, 3, &[1, 2, 3], &[0, 2, 1], 3));
    assert!(
        e.contains("row offset 1") && e.contains("first row offset is 0"),
        "{e}"
    );
    let e = reason(check_csr(2, 3, &[0, 3, 2], &[0, 2, 1], 3));
    assert!(
        e.contains("row offsets 3 then 2") && e.contains("(row 1)"),
        "{e}"
    );
    let e = reason(check_csr(2, 3, &[0, 1, 2], &[0, 2, 1], 3));
    assert!(e.contains("last row offset 2") && e.contains("3"), "{e}");
    let e = reason(check_csr(2, 3, &[0, 2, 3], &[0, 3, 1], 3));
    assert!(
        e.contains("column index 3 (entry 1)") && e.contains("0..3"),
        "{e}"
    );
    let e = reason(check_csr(2, 3, &[0, 2, 3], &[0, -1, 1], 3));
    assert!(e.contains("column index -1"), "{e}");
}

#[test]
fn a_valid_coo_passes_and_each_broken_invariant_is_named() {
    assert!(check_coo(2, 3, &[0, 0, 1], &[0, 2, 1], 3).is_ok());
    assert!(check_coo(5, 5, &[], &[], 0).is_ok());
    let e = reason(check_coo(2, 3, &[0, 0], &[0, 2, 1], 3));
    assert!(e.contains("2 row indices"), "{e}");
    let e = reason(check_coo(2, 3, &[0, 0, 1], &[0, 2], 3));
    assert!(e.contains("2 column indices"), "{e}");
    let e = reason(check_coo(2, 3, &[0, 0, 2], &[0, 2, 1], 3));
    assert!(
        e.contains("row index 2 (entry 2)") && e.contains("0..2"),
        "{e}"
    );
    let e = reason(check_coo(2, 3, &[0, 0, 1], &[0, 5, 1], 3));
    assert!(e.contains("column index 5"), "{e}");
    let e = reason(check_coo(2, 3, &[1, 0, 1], &[0, 2, 1], 3));
    assert!(
        e.contains("row 0 after row 1 (entry 1)") && e.contains("sorted by row"),
        "{e}"
    );
}

#[test]
fn sizes_past_32_bit_indices_are_refused_before_anything_is_read() {
    let huge = i32::MAX as usize + 1;
    let e = reason(check_csr(huge, 1, &[0], &[], 0));
    assert!(e.contains("rows") && e.contains("32-bit"), "{e}");
    let e = reason(check_coo(1, huge, &[], &[], 0));
    assert!(e.contains("cols"), "{e}");
    let e = reason(check_csr(1, 1, &[0, 0], &[], huge));
    assert!(e.contains("entries"), "{e}");
}
