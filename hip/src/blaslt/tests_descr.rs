//! hipBLASLt's descriptors without a device (creating, setting and reading them are host calls): every
//! attribute [`Descriptors`] sets, read back with `hipblasLtMatmulDescGetAttribute` and
//! `hipblasLtMatrixLayoutGetAttribute`, for f16 and bf16 problems with and without an auxiliary output;
//! and the handle's descriptor cache.
//!
//! What hipBLASLt lets a program read back, measured in Debian sid (hipBLASLt 7.1.1, header 1.1.0) and
//! experimental (7.2.4, header 1.2.2), the same in both: the description's TRANSA, TRANSB, EPILOGUE,
//! BIAS_POINTER, BIAS_DATA_TYPE, A_SCALE_POINTER, B_SCALE_POINTER, POINTER_MODE, AMAX_D_POINTER and
//! EPILOGUE_AUX_DATA_TYPE, and the layouts' BATCH_COUNT and STRIDED_BATCH_OFFSET. Every other attribute
//! set here (C_SCALE_POINTER, D_SCALE_POINTER, EPILOGUE_AUX_SCALE_POINTER, EPILOGUE_AUX_POINTER,
//! EPILOGUE_AUX_LD, EPILOGUE_AUX_BATCH_STRIDE; the layouts' TYPE, ORDER, ROWS, COLS, LD) is refused
//! with HIPBLAS_STATUS_INVALID_VALUE and nothing written (a size query, `sizeInBytes` 0, is refused the
//! same way for every attribute). These tests assert exactly that on those two versions (so a version
//! that starts answering is noticed), and on others take either the value set or that refusal. What
//! cannot be read back is checked by reading the code that sets it (`Descriptors::new`, `set_buffers`).
//!
//! Where hipBLASLt is not installed (Debian bookworm, built with `dynamic-loading` from the committed
//! bindings) creating a descriptor is [`Error::LibraryNotFound`]: the tests check that, say so on
//! stderr, and check nothing else; CI runs them in the sid and experimental chroots, where the library is.

use super::descr::Key;
use super::descr::{Aux, DescriptorCache, Descriptors, DESCRIPTOR_CACHE_LIMIT, SCALE_POINTERS};
use super::shape::Call;
use super::*;
use std::ffi::c_void;
use std::fmt::Debug;
use std::mem::size_of;

const INVALID_VALUE: sys::hipblasStatus_t = sys::hipblasStatus_t::HIPBLAS_STATUS_INVALID_VALUE;

/// The versions whose get-attribute calls were measured (see the module's doc): (major, minor).
fn measured_version() -> bool {
    matches!(HEADER_VERSION, (1, 1, _) | (1, 2, _))
}

fn key(call: Call, data_type: u32, epilogue: EpilogueKind) -> Key {
    Key {
        call,
        data_type,
        epilogue,
        device: 0,
    }
}

/// The descriptors of `key`, or `None` where hipBLASLt is not installed (checked to be exactly that).
fn make(key: &Key) -> Option<Descriptors> {
    match Descriptors::new(key) {
        Ok(d) => Some(d),
        Err(Error::LibraryNotFound { library, .. }) if cfg!(feature = "dynamic-loading") => {
            assert!(library.contains("hipBLASLt"), "{library}");
            eprintln!(
                "hipBLASLt is not installed: hipblasLtMatmulDescCreate answers LibraryNotFound; the \
                 descriptor attributes are checked where it is (CI: Debian sid and experimental)"
            );
            None
        }
        Err(e) => panic!("creating the descriptors of {key:?}: {e:?}"),
    }
}

/// A description attribute read back: its value, or hipBLASLt's status.
fn desc_attr<V: Copy + Default>(
    d: &Descriptors,
    attr: sys::hipblasLtMatmulDescAttributes_t,
) -> std::result::Result<V, sys::hipblasStatus_t> {
    let mut v = V::default();
    let mut written = 0usize;
    // SAFETY: live description; `v` is valid for writing `size_of::<V>()` bytes, `written` for one usize.
    let status = unsafe {
        sys::hipblasLtMatmulDescGetAttribute(
            d.desc.0,
            attr,
            (&mut v as *mut V).cast::<c_void>(),
            size_of::<V>(),
            &mut written,
        )
    };
    match status.0 {
        0 => {
            assert_eq!(written, size_of::<V>(), "attribute {attr}: bytes written");
            Ok(v)
        }
        _ => Err(status),
    }
}

/// A layout attribute read back: its value, or hipBLASLt's status.
fn layout_attr<V: Copy + Default>(
    l: &descr::MatrixLayout,
    attr: sys::hipblasLtMatrixLayoutAttribute_t,
) -> std::result::Result<V, sys::hipblasStatus_t> {
    let mut v = V::default();
    let mut written = 0usize;
    // SAFETY: live layout; `v` is valid for writing `size_of::<V>()` bytes, `written` for one usize.
    let status = unsafe {
        sys::hipblasLtMatrixLayoutGetAttribute(
            l.0,
            attr,
            (&mut v as *mut V).cast::<c_void>(),
            size_of::<V>(),
            &mut written,
        )
    };
    match status.0 {
        0 => {
            assert_eq!(
                written,
                size_of::<V>(),
                "layout attribute {attr}: bytes written"
            );
            Ok(v)
        }
        _ => Err(status),
    }
}

/// An attribute hipBLASLt 1.1 and 1.2 refuse to read (INVALID_VALUE, asserted there); elsewhere either
/// that refusal or `want`.
fn unreadable<V: PartialEq + Debug>(
    got: std::result::Result<V, sys::hipblasStatus_t>,
    want: V,
    what: &str,
) {
    if measured_version() {
        assert_eq!(
            got,
            Err(INVALID_VALUE),
            "{what}: hipBLASLt {HEADER_VERSION:?}"
        );
    } else if got != Err(INVALID_VALUE) {
        assert_eq!(got, Ok(want), "{what}");
    }
}

/// Every attribute `Descriptors::new` and `set_buffers` set, read back (or refused, as measured).
fn check_attributes(k: &Key, d: &Descriptors, bias: Option<usize>, aux: Option<Aux>) {
    let kind = k.epilogue;
    let ops = k.call.ops.map(descr::raw_op);
    let what = format!("{} {kind:?}", calls::type_name(k.data_type));
    let get_i32 = |attr| desc_attr::<i32>(d, attr);
    let get_ptr = |attr| desc_attr::<usize>(d, attr);
    assert_eq!(
        get_i32(sys::HIPBLASLT_MATMUL_DESC_TRANSA),
        Ok(ops[0]),
        "{what}"
    );
    assert_eq!(
        get_i32(sys::HIPBLASLT_MATMUL_DESC_TRANSB),
        Ok(ops[1]),
        "{what}"
    );
    assert_eq!(
        desc_attr::<u32>(d, sys::HIPBLASLT_MATMUL_DESC_EPILOGUE),
        Ok(kind.raw()),
        "{what}"
    );
    assert_eq!(
        get_i32(sys::HIPBLASLT_MATMUL_DESC_POINTER_MODE),
        Ok(sys::HIPBLASLT_POINTER_MODE_HOST as i32),
        "{what}"
    );
    // No scaling: every scale pointer null (A and B readable; C, D and the auxiliary output's not).
    for attr in SCALE_POINTERS {
        let got = get_ptr(attr);
        match attr {
            sys::HIPBLASLT_MATMUL_DESC_A_SCALE_POINTER
            | sys::HIPBLASLT_MATMUL_DESC_B_SCALE_POINTER => {
                assert_eq!(got, Ok(0), "{what}: scale pointer {attr}")
            }
            _ => unreadable(got, 0, &format!("{what}: scale pointer {attr}")),
        }
    }
    #[cfg(hipblaslt_amax_d)]
    assert_eq!(
        get_ptr(sys::HIPBLASLT_MATMUL_DESC_AMAX_D_POINTER),
        Ok(0),
        "{what}"
    );
    // The bias: its pointer (the call's, or null for kinds without one) and, where used, its type.
    assert_eq!(
        get_ptr(sys::HIPBLASLT_MATMUL_DESC_BIAS_POINTER),
        Ok(bias.unwrap_or(0)),
        "{what}"
    );
    if kind.has_bias() {
        assert_eq!(
            get_i32(sys::HIPBLASLT_MATMUL_DESC_BIAS_DATA_TYPE),
            Ok(k.data_type as i32),
            "{what}"
        );
    }
    // The auxiliary output: its type (D's) where the header has the attribute; its pointer (null for
    // kinds without one), leading dimension and stride, which hipBLASLt 1.1 and 1.2 do not read back.
    #[cfg(hipblaslt_aux_data_type)]
    if kind.has_aux() {
        assert_eq!(
            get_i32(sys::HIPBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE),
            Ok(k.data_type as i32),
            "{what}: the auxiliary output's type"
        );
    }
    let aux_ptr = aux.map_or(0, |a| a.ptr as usize);
    unreadable(
        get_ptr(sys::HIPBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER),
        aux_ptr,
        &format!("{what}: aux pointer"),
    );
    if let Some(aux) = aux {
        let get_i64 = |attr| desc_attr::<i64>(d, attr);
        unreadable(
            get_i64(sys::HIPBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD),
            aux.ld,
            &format!("{what}: aux ld"),
        );
        unreadable(
            get_i64(sys::HIPBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE),
            aux.stride,
            &format!("{what}: aux stride"),
        );
    }
    // The layouts: the batch (readable), and type, order, rows, columns, leading dimension (not).
    let c = &k.call;
    for (name, l, shape) in [
        ("a", &d.a, &c.first),
        ("b", &d.b, &c.second),
        ("c", &d.c, &c.c),
        ("d", &d.d, &c.c),
    ] {
        let what = format!("{what}: layout {name}");
        assert_eq!(
            layout_attr::<i32>(l, sys::HIPBLASLT_MATRIX_LAYOUT_BATCH_COUNT),
            Ok(c.count as i32),
            "{what}"
        );
        let stride = if c.count > 1 { shape.stride as i64 } else { 0 };
        assert_eq!(
            layout_attr::<i64>(l, sys::HIPBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET),
            Ok(stride),
            "{what}"
        );
        unreadable(
            layout_attr::<u32>(l, sys::HIPBLASLT_MATRIX_LAYOUT_TYPE),
            k.data_type,
            &what,
        );
        unreadable(
            layout_attr::<i32>(l, sys::HIPBLASLT_MATRIX_LAYOUT_ORDER),
            sys::HIPBLASLT_ORDER_COL as i32,
            &what,
        );
        for (attr, want) in [
            (sys::HIPBLASLT_MATRIX_LAYOUT_ROWS, shape.rows as u64),
            (sys::HIPBLASLT_MATRIX_LAYOUT_COLS, shape.cols as u64),
        ] {
            unreadable(layout_attr::<u64>(l, attr), want, &what);
        }
        unreadable(
            layout_attr::<i64>(l, sys::HIPBLASLT_MATRIX_LAYOUT_LD),
            shape.ld as i64,
            &what,
        );
    }
}

/// An address for a buffer: never read (setting and reading attributes are host calls).
fn fake(addr: usize) -> crate::memory::DevicePtr {
    addr as crate::memory::DevicePtr
}

#[test]
fn every_attribute_the_checks_rely_on_is_set_for_f16_and_bf16() {
    let batch = StridedBatch {
        count: 3,
        stride_a: 64,
        stride_b: 0,
        stride_c: 80,
    };
    let cases = [
        // f16, row-major, a strided batch, GELU with a bias and an auxiliary output (ld padded).
        (
            Matmul::row_major(4, 6, 5).op_b(Op::T).batch(batch),
            <half::f16 as LtElement>::DATA_TYPE,
            EpilogueKind::GeluAuxBias,
            Some(9),
        ),
        // bf16, column-major, GELU with an auxiliary output and no bias.
        (
            Matmul::new(4, 6, 5).op_a(Op::T),
            <half::bf16 as LtElement>::DATA_TYPE,
            EpilogueKind::GeluAux,
            Some(4),
        ),
        // Without an auxiliary output: f16 ReLU, bf16 GELU with a bias.
        (
            Matmul::new(4, 6, 5),
            <half::f16 as LtElement>::DATA_TYPE,
            EpilogueKind::Relu,
            None,
        ),
        (
            Matmul::row_major(4, 6, 5),
            <half::bf16 as LtElement>::DATA_TYPE,
            EpilogueKind::GeluBias,
            None,
        ),
    ];
    for (desc, data_type, kind, aux_ld) in cases {
        let call = desc.resolve().unwrap();
        let k = key(call, data_type, kind);
        let Some(d) = make(&k) else { return };
        let bias = kind.has_bias().then_some(0x1000usize);
        let aux = aux_ld.map(|ld| {
            let (_, stride) = call.aux_need(ld).unwrap();
            Aux {
                ptr: fake(0x2000),
                ld: ld as i64,
                stride: stride as i64,
            }
        });
        d.set_buffers(bias.map(fake), aux).unwrap();
        check_attributes(&k, &d, bias, aux);
        // The next call's buffers replace this call's.
        let bias = kind.has_bias().then_some(0x3000usize);
        let aux = aux.map(|a| Aux {
            ptr: fake(0x4000),
            ..a
        });
        d.set_buffers(bias.map(fake), aux).unwrap();
        check_attributes(&k, &d, bias, aux);
    }
}

#[test]
fn the_heuristic_without_buffers_sees_placeholders_and_a_tight_aux_output() {
    let call = Matmul::new(4, 6, 5).resolve().unwrap();
    let k = key(
        call,
        <half::f16 as LtElement>::DATA_TYPE,
        EpilogueKind::GeluAuxBias,
    );
    let Some(d) = make(&k) else { return };
    d.set_placeholders(&call).unwrap();
    let bias = desc_attr::<usize>(&d, sys::HIPBLASLT_MATMUL_DESC_BIAS_POINTER).unwrap();
    assert_ne!(bias, 0);
    assert_eq!(bias % 256, 0);
    let aux = Aux {
        ptr: fake(bias),
        ld: 4,
        stride: 24,
    };
    check_attributes(&k, &d, Some(bias), Some(aux));
}

#[test]
fn the_descriptor_cache_reuses_a_problem_and_forgets_the_least_recent() {
    let keys: Vec<Key> = (1..=DESCRIPTOR_CACHE_LIMIT + 1)
        .map(|m| {
            let call = Matmul::new(m, 3, 2).resolve().unwrap();
            key(
                call,
                <half::f16 as LtElement>::DATA_TYPE,
                EpilogueKind::Bias,
            )
        })
        .collect();
    let mut cache = DescriptorCache::new();
    let mut raw = Vec::new();
    for k in &keys {
        assert!(cache.take(k).is_none());
        let Some(d) = make(k) else { return };
        raw.push(d.desc.0);
        cache.put(*k, d);
    }
    // The first problem was forgotten; the others are held, most recent first.
    let mut held: Vec<Key> = keys[1..].to_vec();
    held.reverse();
    assert_eq!(cache.keys(), held);
    assert!(cache.take(&keys[0]).is_none());
    // Taking gives the same descriptors back (not new ones) and leaves the key out until put back.
    let d = cache.take(&keys[3]).unwrap();
    assert_eq!(d.desc.0, raw[3]);
    assert!(cache.take(&keys[3]).is_none());
    cache.put(keys[3], d);
    assert_eq!(cache.keys()[0], keys[3]);
    assert_eq!(cache.keys().len(), DESCRIPTOR_CACHE_LIMIT);
    // A reused description takes the next call's bias.
    let d = cache.take(&keys[3]).unwrap();
    d.set_buffers(Some(fake(0x5000)), None).unwrap();
    assert_eq!(
        desc_attr::<usize>(&d, sys::HIPBLASLT_MATMUL_DESC_BIAS_POINTER),
        Ok(0x5000)
    );
}
