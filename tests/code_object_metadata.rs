//! `CodeObject::parse` on real HIPRTC output for two targets (gfx90a, wave64; gfx1030, wave32), checked
//! field by field against what the source declares; offload bundles with two targets; code object v5/v6
//! version words; objects without the metadata note; and malformed input (truncated, mutated), which must
//! give an error and never a panic. `LaunchArgs::check` against the parsed signatures, with no GPU.
#![cfg(hip_platform = "amd")]
mod common;
use common::rng::Rng;

use common::bundle::bundle;
use hip::code_object::{CodeObject, Format, Kernel, ParamKind, Signature};
use hip::rtc::ProgramBuilder;
use hip::{Error, LaunchArgs};

const SOURCE: &str = r#"
struct Pair { float x; double y; };
extern "C" __global__ void __launch_bounds__(128)
mixed(const float* in, double* out, unsigned int n, double scale, Pair p) {
    __shared__ double tile[128];
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? in[i] * scale : p.y;
    __syncthreads();
    if (i < n) out[i] = tile[127 - threadIdx.x] + p.x;
}
template <typename T> __global__ void fill(T* x, T value, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = value;
}
"#;

/// `-fhip-kernel-arg-name` makes clang record parameter names and types in the metadata.
fn compiled(arch: &str) -> (Vec<u8>, String, String) {
    let out = ProgramBuilder::new(SOURCE)
        .arch(arch)
        .option("-fhip-kernel-arg-name")
        .name_expression("fill<float>")
        .name_expression("fill<double>")
        .no_cache()
        .compile()
        .unwrap();
    let f = out.lowered_name("fill<float>").unwrap().to_string();
    let d = out.lowered_name("fill<double>").unwrap().to_string();
    (out.into_code(), f, d)
}

/// HIPRTC's code object version, measured: v4 with no hidden arguments from HIP 5.2.3 and 5.7.1; v5 from
/// HIP 6.4.3 and 7.2.4, whose kernels also list 13 hidden arguments (block counts, group sizes, remainders,
/// global offsets, grid dims) after the explicit ones, in a kernarg segment 256 bytes longer.
fn hiprtc_code_object_version() -> u32 {
    if common::runtime_major() >= 6 {
        5
    } else {
        4
    }
}

/// The kernarg segment size of a kernel whose explicit arguments end at `explicit_end`.
fn kernarg_size(explicit_end: u64) -> u64 {
    if hiprtc_code_object_version() >= 5 {
        explicit_end.next_multiple_of(8) + 256
    } else {
        explicit_end
    }
}

/// The hidden arguments: none on v4 here; on v5, 13, starting right after the explicit ones.
fn check_hidden(k: &Kernel, explicit_end: u64) {
    let hidden: Vec<_> = k
        .params
        .iter()
        .filter(|p| p.kind == ParamKind::Hidden)
        .collect();
    if hiprtc_code_object_version() >= 5 {
        assert_eq!(hidden.len(), 13, "{}: {hidden:?}", k.name);
        assert_eq!(
            hidden[0].offset,
            explicit_end.next_multiple_of(8),
            "{}",
            k.name
        );
        assert_eq!(hidden[0].value_kind, "hidden_block_count_x");
    } else {
        assert!(hidden.is_empty(), "{}: {hidden:?}", k.name);
    }
}

/// `(name, offset, size, kind, value_kind)` of each explicit parameter.
fn params(k: &Kernel) -> Vec<(&str, u64, u64, ParamKind, &str)> {
    k.explicit_params()
        .map(|p| {
            let name = p.name.as_deref().unwrap_or("?");
            (name, p.offset, p.size, p.kind, p.value_kind.as_str())
        })
        .collect()
}

fn check_kernels(co: &CodeObject, arch: &str, wave: u32, fill_f: &str, fill_d: &str) {
    use ParamKind::{Pointer as P, Value as V};
    let target = format!("amdgcn-amd-amdhsa--{arch}");
    assert_eq!(co.kernels().len(), 3, "{co:#?}");
    let mixed = co.kernel("mixed", None).unwrap();
    assert_eq!(mixed.symbol, "mixed.kd");
    assert_eq!(mixed.target, target);
    assert_eq!(
        params(mixed),
        [
            ("in", 0, 8, P, "global_buffer"),
            ("out", 8, 8, P, "global_buffer"),
            ("n", 16, 4, V, "by_value"),
            ("scale", 24, 8, V, "by_value"),
            ("p", 32, 16, V, "by_value"),
        ]
    );
    assert_eq!(mixed.params[0].address_space.as_deref(), Some("global"));
    assert_eq!(
        mixed.params[4].align, None,
        "AMD metadata gives no argument alignment"
    );
    assert_eq!(mixed.kernarg_segment_size, Some(kernarg_size(48)));
    check_hidden(mixed, 48);
    assert_eq!(
        mixed.group_segment_size,
        Some(128 * 8),
        "__shared__ double tile[128]"
    );
    assert_eq!(
        mixed.max_workgroup_size,
        Some(128),
        "__launch_bounds__(128)"
    );
    assert_eq!(mixed.wavefront_size, Some(wave));
    assert_eq!(mixed.private_segment_size, Some(0));
    assert!(mixed.sgpr_count.unwrap() > 0 && mixed.vgpr_count.unwrap() > 0);

    let f = co.kernel(fill_f, None).unwrap();
    assert_eq!(f.symbol, format!("{fill_f}.kd"));
    assert_eq!(
        params(f),
        [
            ("x", 0, 8, P, "global_buffer"),
            ("value", 8, 4, V, "by_value"),
            ("n", 12, 4, V, "by_value")
        ]
    );
    assert_eq!(f.max_workgroup_size, Some(1024));
    let d = co.kernel(&format!("{fill_d}.kd"), None).unwrap();
    assert_eq!(
        params(d),
        [
            ("x", 0, 8, P, "global_buffer"),
            ("value", 8, 8, V, "by_value"),
            ("n", 16, 4, V, "by_value")
        ]
    );
    assert_eq!(d.kernarg_segment_size, Some(kernarg_size(20)));
    check_hidden(d, 20);
    assert!(
        co.kernel("fill", None).is_none(),
        "templates are found by lowered name only"
    );
}

#[test]
fn hiprtc_kernels_for_gfx90a_and_gfx1030_are_read_field_by_field() {
    for (arch, wave) in [("gfx90a", 64), ("gfx1030", 32)] {
        let (code, f, d) = compiled(arch);
        assert_eq!(
            (f.as_str(), d.as_str()),
            ("_Z4fillIfEvPT_S0_j", "_Z4fillIdEvPT_S0_j")
        );
        let co = CodeObject::parse(&code).unwrap();
        assert_eq!(co.format(), Format::Elf);
        assert!(co.has_metadata());
        assert_eq!(co.version(), Some(hiprtc_code_object_version()));
        check_kernels(&co, arch, wave, &f, &d);
    }
}

#[test]
fn without_arg_names_the_signature_is_still_complete() {
    let code = ProgramBuilder::new(SOURCE)
        .arch("gfx90a")
        .no_cache()
        .compile()
        .unwrap();
    let co = CodeObject::parse(code.code()).unwrap();
    let mixed = co.kernel("mixed", None).unwrap();
    assert!(mixed.params.iter().all(|p| p.name.is_none()));
    let sizes: Vec<u64> = mixed.explicit_params().map(|p| p.size).collect();
    assert_eq!(sizes, [8, 8, 4, 8, 16]);
}

#[test]
fn a_bundle_with_two_targets_gives_each_entrys_kernels_with_its_target() {
    let (a, f, d) = compiled("gfx90a");
    let (b, _, _) = compiled("gfx1030");
    let image = bundle(&[
        ("host-x86_64-unknown-linux-gnu", &[]),
        ("hipv4-amdgcn-amd-amdhsa--gfx90a", &a),
        ("hipv4-amdgcn-amd-amdhsa--gfx1030", &b),
    ]);
    let co = CodeObject::parse(&image).unwrap();
    assert_eq!(co.format(), Format::Bundle);
    assert_eq!(co.kernels().len(), 6);
    let one = CodeObject::parse(&a).unwrap();
    let two = CodeObject::parse(&b).unwrap();
    assert_eq!(co.kernels()[..3], one.kernels()[..]);
    assert_eq!(co.kernels()[3..], two.kernels()[..]);
    // The device's target picks the entry, with HIP's compatibility rule.
    let on_1030 = co.kernel("mixed", Some("gfx1030")).unwrap();
    assert_eq!(on_1030.wavefront_size, Some(32));
    let on_90a = co.kernel("mixed", Some("gfx90a:sramecc+:xnack-")).unwrap();
    assert_eq!(on_90a.wavefront_size, Some(64));
    assert!(co.kernel("mixed", Some("gfx908")).is_none());
    check_kernels(&one, "gfx90a", 64, &f, &d);
}

/// Offsets of the `AMDGPU` metadata note's descriptor in a real object, found independently of the crate:
/// the byte string `amdhsa.version` (a msgpack fixstr) followed by `[1, minor]`.
fn version_word(code: &[u8]) -> usize {
    let key = b"\xaeamdhsa.version\x92\x01";
    code.windows(key.len())
        .position(|w| w == key)
        .expect("amdhsa.version in the note")
        + key.len()
}

#[test]
fn code_object_v5_and_v6_version_words_are_read() {
    let (code, f, d) = compiled("gfx90a");
    for (minor, version) in [(1u8, 4), (2, 5), (3, 6)] {
        let mut patched = code.clone();
        patched[version_word(&code)] = minor;
        patched[8] = version as u8 - 2; // EI_ABIVERSION: 2 = v4, 3 = v5, 4 = v6
        let co = CodeObject::parse(&patched).unwrap();
        assert_eq!(co.version(), Some(version));
        check_kernels(&co, "gfx90a", 64, &f, &d);
    }
}

#[test]
fn an_object_without_the_metadata_note_has_no_signatures() {
    let (code, _, _) = compiled("gfx90a");
    // Rename the note's owner ("AMDGPU" -> "AMDGPX"): still a valid ELF note, no longer the metadata.
    let at = code.windows(7).position(|w| w == b"AMDGPU\0").unwrap();
    let mut other = code.clone();
    other[at + 5] = b'X';
    let co = CodeObject::parse(&other).unwrap();
    assert!(!co.has_metadata());
    assert!(co.kernels().is_empty());
    assert!(co.kernel("mixed", None).is_none());
}

#[test]
fn launch_args_are_checked_against_a_parsed_signature() {
    let (code, _, _) = compiled("gfx90a");
    let co = CodeObject::parse(&code).unwrap();
    let sig = Signature::new(co.kernel("mixed", None).unwrap().clone());
    let (a, b) = (FakeBuffer(0x1000), FakeBuffer(0x2000));
    let (n, scale, p) = (4u32, 2.0f64, [0u64; 2]);
    let mut ok = LaunchArgs::new();
    ok.arg(&a).arg(&b).arg(&n).arg(&scale).arg(&p);
    ok.check(&sig).unwrap();

    let refused = |args: &LaunchArgs, index: usize, says: &str| match args.check(&sig) {
        Err(e @ Error::ArgumentMismatch { index: i, .. }) => {
            assert_eq!(i, index, "{e}");
            assert!(e.to_string().contains(says), "{e}");
            assert!(e.to_string().contains("kernel `mixed`"), "{e}");
        }
        other => panic!("{other:?}"),
    };
    let mut missing = LaunchArgs::new();
    missing.arg(&a).arg(&b).arg(&n).arg(&scale);
    refused(&missing, 4, "argument 5 of 5 (`p`");
    let n64 = 4u64;
    let mut wide = LaunchArgs::new();
    wide.arg(&a).arg(&b).arg(&n64).arg(&scale).arg(&p);
    refused(&wide, 2, "argument 3 of 5 (`n`");
    let mut buffer_for_value = LaunchArgs::new();
    buffer_for_value.arg(&a).arg(&b).arg(&n).arg(&a).arg(&p);
    refused(&buffer_for_value, 3, "argument 4 of 5 (`scale`");
    let addr = 0x1000u64;
    let mut value_for_buffer = LaunchArgs::new();
    value_for_buffer
        .arg(&addr)
        .arg(&b)
        .arg(&n)
        .arg(&scale)
        .arg(&p);
    refused(&value_for_buffer, 0, "argument 1 of 5 (`in`");
    let mut extra = LaunchArgs::new();
    extra.arg(&a).arg(&b).arg(&n).arg(&scale).arg(&p).arg(&n);
    refused(&extra, 5, "takes 5 argument(s), got 6 argument(s)");
}

/// A stand-in for a device buffer, as a user's own `KernelArg` for an address would be.
struct FakeBuffer(u64);
// SAFETY: points at its own 8 bytes, valid while borrowed.
unsafe impl hip::KernelArg for FakeBuffer {
    fn as_kernel_param(&self) -> *mut std::ffi::c_void {
        &self.0 as *const u64 as *mut std::ffi::c_void
    }
    fn kernel_param_size(&self) -> usize {
        8
    }
    fn is_device_pointer(&self) -> bool {
        true
    }
}

// ---- malformed input: errors, never panics ----

#[test]
fn truncated_objects_and_bundles_are_errors() {
    let (code, _, _) = compiled("gfx90a");
    let image = bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx90a", &code)]);
    for whole in [&code, &image] {
        for len in 0..whole.len() {
            match CodeObject::parse(&whole[..len]) {
                Err(Error::InvalidCodeObject(m)) => assert!(!m.is_empty()),
                other => panic!("{len} of {} bytes: {other:?}", whole.len()),
            }
        }
    }
}

#[test]
fn mutated_metadata_notes_never_panic_and_broken_ones_are_named() {
    let (code, _, _) = compiled("gfx90a");
    // The note header (namesz, descsz, type) sits 12 bytes before its name.
    let note = code.windows(7).position(|w| w == b"AMDGPU\0").unwrap() - 12;
    let desc_len = u32::from_le_bytes(code[note + 4..note + 8].try_into().unwrap()) as usize;
    let region = note..note + 20 + desc_len;
    let mut rng = Rng(16);
    let (mut errors, mut msgpack_errors, mut accepted) = (0, 0, 0);
    for case in 0..3000 {
        let mut m = code.clone();
        for _ in 0..1 + rng.below(4) {
            let at = region.start + rng.below(region.len());
            match rng.below(4) {
                0 => m[at] = rng.next() as u8,
                1 => m[at] ^= 1 << rng.below(8),
                // A header field or msgpack length set to an extreme.
                2 => m[at..at + 4].copy_from_slice(&[0xff, 0xff, 0xff, 0x7f]),
                _ => m[note + 4 * rng.below(3)..][..4]
                    .copy_from_slice(&(rng.next() as u32 >> rng.below(32)).to_le_bytes()),
            }
        }
        match CodeObject::parse(&m) {
            Ok(co) => {
                accepted += 1;
                // Whatever it reads stays inside what the note could describe.
                for k in co.kernels() {
                    assert!(k.params.len() <= desc_len, "case {case}");
                }
            }
            Err(Error::InvalidCodeObject(msg)) => {
                errors += 1;
                msgpack_errors += usize::from(msg.contains("MessagePack"));
            }
            Err(other) => panic!("case {case}: {other:?}"),
        }
    }
    assert!(
        errors > 300 && msgpack_errors > 20,
        "{errors} errors, {msgpack_errors} msgpack"
    );
    assert!(
        accepted > 100,
        "{accepted} accepted: mutations of values only should still parse"
    );
}

#[test]
fn metadata_with_the_wrong_shapes_is_a_clear_error() {
    let (code, _, _) = compiled("gfx90a");
    let key = b"\xaeamdhsa.kernels";
    let at = code.windows(key.len()).position(|w| w == key).unwrap();
    let mut renamed = code.clone();
    renamed[at + key.len() - 1] = b'X'; // `amdhsa.kernelX`: the kernel list is gone
    let err = CodeObject::parse(&renamed).unwrap_err().to_string();
    assert!(err.contains("no amdhsa.kernels"), "{err}");
    let mut not_array = code.clone();
    not_array[at + key.len()] = 0xc0; // nil where the array starts: the rest no longer parses
    match CodeObject::parse(&not_array) {
        Err(Error::InvalidCodeObject(m)) => {
            assert_eq!(m, "AMDGPU metadata: amdhsa.kernels is not an array")
        }
        other => panic!("{other:?}"),
    }
}
