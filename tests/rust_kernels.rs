//! The committed Rust-built code objects (kernels/prebuilt/, rebuilt by scripts/build-rust-kernels.sh and
//! checked against kernels/ in CI) hold the kernels kernels/src/lib.rs defines, with the argument layout
//! the host passes; `hip::code_object` reads them without a device and refuses damaged copies.
use hip::code_object::{Kernel, ParamKind, EM_AMDGPU};
use hip::CodeObject;

/// The `#[kernel]` functions, compiled here for the host: their handles' exported names.
#[path = "../kernels/src/typed.rs"]
mod typed;

fn kernels(image: &[u8]) -> hip::Result<Vec<Kernel>> {
    Ok(CodeObject::parse(image)?.kernels().to_vec())
}

/// `gfx90a` from `amdgcn-amd-amdhsa--gfx90a` (AMD target ids); PTX targets are plain (`sm_70`).
fn processor(target: &str) -> &str {
    let t = target.rsplit("--").next().unwrap_or(target);
    t.split(':').next().unwrap_or(t)
}

const GFX90A: &[u8] = include_bytes!("../kernels/prebuilt/hip_rs_kernels-gfx90a.co");
const GFX1100: &[u8] = include_bytes!("../kernels/prebuilt/hip_rs_kernels-gfx1100.co");
const BUNDLE: &[u8] = include_bytes!("../kernels/prebuilt/hip_rs_kernels.hipfb");
const PTX: &[u8] = include_bytes!("../kernels/prebuilt/hip_rs_kernels-sm_70.ptx");

/// Each kernel and its parameters' sizes, as kernels/src/lib.rs and kernels/src/typed.rs declare them. A
/// `#[kernel]`'s name is its host handle's: the committed code objects were built from the same
/// signatures as the launchers compiled here. A `Shared` takes no argument (it is the launch's dynamic
/// shared memory).
const EXPECTED: [(&str, &[u64]); 14] = [
    ("matmul_f32_unchecked", &[8; 6]), // *const f32 x2, *mut f32, m, n, k: u64
    ("matmul_f32_unchecked_pb", &[8; 6]), // the same, with the per-thread barrier
    ("saxpy_f32", &[4, 8, 8, 8]),      // f32, *const f32, *mut f32, u64
    ("saxpy_f64", &[8, 8, 8, 8]),      // f64, *const f64, *mut f64, u64
    ("vector_add", &[8, 8, 8, 8]),     // *const f32, *const f32, *mut f32, u64
    (typed::affine_f32::NAME, &[8; 6]), // In<Affine>, In<f32>, Out<f32>: pointer + length each
    (typed::block_sum_u32::NAME, &[8; 4]), // In<u32>, OutBlock<u32>, Shared<u32>
    (typed::count_once::NAME, &[8, 8]), // Out<u8>: *mut u8, u64
    (typed::linear_ids::NAME, &[8, 8]), // Out<u64>: *mut u64, u64
    (typed::matmul_f32::NAME, &[8; 10]), // m, n, k, In<f32> x2, Out2d<f32> (+ cols), Shared<f32, 2>
    (typed::saxpy_f32::NAME, &[4, 8, 8, 8, 8]), // f32, In<f32>, Out<f32>
    (typed::saxpy_f64::NAME, &[8, 8, 8, 8, 8]), // f64, In<f64>, Out<f64>
    (typed::scale_chunks_f32::NAME, &[4, 8, 8, 8, 8]), // f32, In<f32>, OutChunk<f32, 4>
    (typed::vector_add::NAME, &[8; 6]), // In<f32>, In<f32>, Out<f32>
];

fn check(ks: &[Kernel], target: &str) {
    let mut got: Vec<(&str, Vec<u64>)> = ks
        .iter()
        .filter(|k| processor(&k.target) == target)
        .map(|k| {
            (
                k.name.as_str(),
                k.explicit_params().map(|a| a.size).collect(),
            )
        })
        .collect();
    got.sort();
    let mut want: Vec<(&str, Vec<u64>)> = EXPECTED.iter().map(|(n, s)| (*n, s.to_vec())).collect();
    want.sort();
    assert_eq!(got, want, "kernels for {target}");
}

#[test]
fn amd_code_objects_are_amdgpu_elf_with_the_fourteen_kernels() {
    for (image, target) in [(GFX90A, "gfx90a"), (GFX1100, "gfx1100")] {
        assert_eq!(&image[..4], b"\x7fELF");
        assert_eq!(u16::from_le_bytes([image[0x12], image[0x13]]), EM_AMDGPU);
        let ks = kernels(image).unwrap();
        check(&ks, target);
        for k in &ks {
            // Offsets follow each parameter's alignment: 8-byte pointers, then the u32 count.
            let offsets: Vec<u64> = k.explicit_params().map(|a| a.offset).collect();
            let expected: Vec<u64> = (0..offsets.len() as u64).map(|i| i * 8).collect();
            assert_eq!(offsets, expected, "{}", k.name);
            let explicit: u64 = k.explicit_params().map(|a| a.size).sum();
            assert!(k.kernarg_segment_size.unwrap() >= explicit);
            assert_eq!(k.group_segment_size, Some(0), "{}: no static LDS", k.name);
        }
        // In<Affine>'s pointer is a device pointer (the struct is read from device memory), its length a
        // value.
        let affine: Vec<_> = ks
            .iter()
            .find(|k| k.name == typed::affine_f32::NAME)
            .unwrap()
            .explicit_params()
            .map(|a| (a.kind == ParamKind::Pointer, a.value_kind.as_str()))
            .collect();
        assert_eq!(affine[0], (true, "global_buffer"));
        assert_eq!(affine[1], (false, "by_value"));
    }
}

#[test]
fn the_bundle_holds_both_gfx_targets() {
    assert!(BUNDLE.starts_with(b"__CLANG_OFFLOAD_BUNDLE__"));
    let ks = kernels(BUNDLE).unwrap();
    assert_eq!(ks.len(), 2 * EXPECTED.len());
    check(&ks, "gfx90a");
    check(&ks, "gfx1100");
}

#[test]
fn the_ptx_has_the_fourteen_entries_for_sm_70() {
    let text = std::str::from_utf8(PTX).unwrap();
    assert!(text.contains(".version 7.0") && text.contains(".target sm_70"));
    check(&kernels(PTX).unwrap(), "sm_70");
    // The tiled kernels use dynamic shared memory and barriers.
    assert!(text.contains(".extern .shared") && text.contains("bar.sync"));
}

#[test]
fn typed_shared_memory_kernels_use_the_per_thread_barrier_and_no_aligned_one() {
    // `Shared::sync` is `barrier.sync 0` (each thread arrives on its own, defined in divergent code on
    // sm_70+), never `bar.sync` (= `barrier.sync.aligned`, undefined unless the whole block executes the
    // same instruction); the raw kernel keeps `bar.sync` (`gpu::sync_threads`, unsafe).
    let ptx = std::str::from_utf8(PTX).unwrap();
    for name in [typed::block_sum_u32::NAME, typed::matmul_f32::NAME] {
        let body = entry(ptx, name);
        let barriers = body
            .lines()
            .filter(|l| l.trim_start().starts_with("barrier.sync"))
            .count();
        assert!(barriers >= 2, "{name}: {barriers} barrier.sync");
        assert!(
            !body.contains("bar.sync") && !body.contains(".aligned"),
            "{name}"
        );
        assert!(
            body.contains("ld.shared") && body.contains("st.shared"),
            "{name}"
        );
    }
    assert!(entry(ptx, "matmul_f32_unchecked").contains("bar.sync"));
}

/// The body of `.entry name(...)` in `ptx`, up to its closing brace.
fn entry<'a>(ptx: &'a str, name: &str) -> &'a str {
    let start = ptx.find(&format!(".entry {name}(")).unwrap_or_else(|| {
        panic!("no entry {name} in the committed PTX: rebuild kernels/prebuilt")
    });
    let body = &ptx[start..];
    &body[..body.find("\n}").expect("an entry ends with }")]
}

/// The register `ld.param.b64 %rdN, [name_param_K]` loads parameter `k` into.
fn param_register(body: &str, name: &str, k: usize) -> String {
    let slot = format!("[{name}_param_{k}]");
    let line = body
        .lines()
        .find(|l| l.trim_start().starts_with("ld.param") && l.contains(&slot))
        .unwrap_or_else(|| panic!("{name}: parameter {k} is never loaded"));
    let reg = line
        .split_whitespace()
        .nth(1)
        .expect("ld.param REG, [SLOT]");
    reg.trim_end_matches(',').to_string()
}

/// The first line of `body` that compares (`setp`) against the register `reg` (as a whole operand).
fn compare_of(body: &str, reg: &str) -> Option<usize> {
    body.lines().position(|l| {
        l.trim_start().starts_with("setp.")
            && l.split(|c: char| c == ',' || c.is_whitespace() || c == ';')
                .any(|op| op == reg)
    })
}

#[test]
fn typed_kernels_ptx_compares_each_length_and_checks_the_output_bound_before_the_first_store() {
    // The checks `In::get` and `Out::mine` promise, as the backend emitted them (a backend can drop a
    // bounds check: cuda-oxide #396): for each `#[kernel]`, every length parameter is compared (`setp`)
    // and, for each output, that comparison comes before the first store, behind a predicated branch.
    let ptx = std::str::from_utf8(PTX).unwrap();
    // (kernel, length parameters of its In<T>, length parameter of its Out<T>)
    let kernels: [(&str, &[usize], usize); 9] = [
        (typed::vector_add::NAME, &[1, 3], 5),
        (typed::saxpy_f32::NAME, &[2], 4),
        (typed::saxpy_f64::NAME, &[2], 4),
        (typed::linear_ids::NAME, &[], 1),
        (typed::count_once::NAME, &[], 1),
        (typed::scale_chunks_f32::NAME, &[2], 4),
        (typed::affine_f32::NAME, &[1, 3], 5),
        (typed::block_sum_u32::NAME, &[1], 3),
        (typed::matmul_f32::NAME, &[4, 6], 8),
    ];
    for (name, inputs, output) in kernels {
        let body = entry(ptx, name);
        for &k in inputs {
            let reg = param_register(body, name, k);
            assert!(
                compare_of(body, &reg).is_some(),
                "{name}: input length {reg} never compared"
            );
        }
        if let Err(e) = output_checked_before_store(body, name, output) {
            panic!("{e}");
        }
    }
}

/// Whether `body` (the entry `name`) compares its output length (parameter `output`) before its first
/// store, behind a predicated branch, with no 32-bit compare anywhere.
fn output_checked_before_store(body: &str, name: &str, output: usize) -> Result<(), String> {
    let reg = param_register(body, name, output);
    let lines: Vec<&str> = body.lines().collect();
    let check =
        compare_of(body, &reg).ok_or(format!("{name}: output length {reg} never compared"))?;
    let store = lines
        .iter()
        .position(|l| l.trim_start().starts_with("st.global"))
        .ok_or(format!("{name}: no store"))?;
    if check > store {
        return Err(format!(
            "{name}: the first store (line {store}) comes before the bound check (line {check})"
        ));
    }
    if !lines[check..store]
        .iter()
        .any(|l| l.trim_start().starts_with("@%p") && l.contains("bra"))
    {
        return Err(format!(
            "{name}: no branch on the bound check before the store"
        ));
    }
    // The index the bound is compared with is 64-bit.
    if !lines[check].contains("64") {
        return Err(format!(
            "{name}: a bound compare narrower than 64 bits: {}",
            lines[check]
        ));
    }
    // And, in a kernel without shared memory (whose tree compares the block's thread count, a 32-bit
    // number), no 32-bit compare of a thread index exists at all.
    if !body.contains("barrier.sync")
        && (body.contains("setp.ge.u32") || body.contains("setp.lt.u32"))
    {
        return Err(format!("{name}: a 32-bit compare"));
    }
    Ok(())
}

#[test]
fn the_ptx_inspection_catches_a_dropped_or_late_bound_check() {
    // Negative controls on doctored copies of vector_add's entry: the check above must fail them.
    let ptx = std::str::from_utf8(PTX).unwrap();
    let name = typed::vector_add::NAME;
    let body = entry(ptx, name);
    output_checked_before_store(body, name, 5).unwrap();
    let reg = param_register(body, name, 5);
    // The compare against the output length dropped:
    let dropped: String = body
        .lines()
        .filter(|l| !(l.trim_start().starts_with("setp.") && l.contains(&format!("{reg};"))))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(output_checked_before_store(&dropped, name, 5).is_err());
    // A store moved above it:
    let mut lines: Vec<&str> = body.lines().collect();
    let store = lines
        .iter()
        .position(|l| l.trim_start().starts_with("st.global"))
        .unwrap();
    let moved = lines.remove(store);
    let at = lines
        .iter()
        .position(|l| l.trim_start().starts_with("ld.param"))
        .unwrap();
    lines.insert(at, moved);
    assert!(output_checked_before_store(&lines.join("\n"), name, 5).is_err());
}

#[test]
fn damaged_code_objects_are_errors_not_panics() {
    for image in [GFX90A, BUNDLE] {
        // Section headers (ELF) and entries (bundle) lie at the end or point there: every cut is caught.
        for len in (0..image.len()).step_by(7) {
            assert!(
                matches!(
                    kernels(&image[..len]),
                    Err(hip::Error::InvalidCodeObject(_))
                ),
                "{len} of {} bytes",
                image.len()
            );
        }
    }
    let mut other_machine = GFX90A.to_vec();
    other_machine[0x12] = 62; // EM_X86_64
                              // Another machine's ELF carries no AMDGPU metadata: no kernels (so no signature check); loading it as
                              // a module is refused by its machine, before HIP.
    assert!(kernels(&other_machine).unwrap().is_empty());
    let e = hip::code_object::expect_machine(&other_machine, EM_AMDGPU).unwrap_err();
    assert!(e.to_string().contains("62"), "{e}");
}

/// The raw Rust-built kernels on a real device (`--features gpu`): the image for this platform (the bundle
/// on AMD, the PTX on NVIDIA), launched with block sizes other than the example's. The `#[kernel]` ones:
/// tests/gpu_typed_kernels.rs.
#[cfg(feature = "gpu")]
mod gpu {
    use hip::prelude::*;

    fn module() -> (Device, Module, Stream) {
        let d = Device::get(0).expect("--features gpu needs a HIP device");
        let image = if hip::PLATFORM == "amd" {
            super::BUNDLE
        } else {
            super::PTX
        };
        let m = Module::load_data(&d, image).unwrap();
        let s = Stream::new(&d).unwrap();
        (d, m, s)
    }

    fn input(n: u32, seed: u32) -> Vec<u32> {
        (0..n)
            .map(|i| (i ^ seed).wrapping_mul(2_654_435_761) >> 12)
            .collect()
    }

    #[test]
    fn vector_add_and_saxpy_match_the_host_for_any_block_size() {
        let (d, m, s) = module();
        let n = 100_003u32;
        let n64 = u64::from(n);
        let a: Vec<f32> = input(n, 1).iter().map(|&v| v as f32 * 0.125).collect();
        let b: Vec<f32> = input(n, 2).iter().map(|&v| v as f32 * -0.5).collect();
        let (da, db) = (
            DeviceBuffer::from_slice(&d, &a).unwrap(),
            DeviceBuffer::from_slice(&d, &b).unwrap(),
        );
        for block in [32u32, 64, 128, 1024] {
            let config = LaunchConfig::new(n.div_ceil(block), block);
            // NaN: equal to no sum, so an element the kernel missed fails the comparison.
            let mut dc = DeviceBuffer::from_slice(&d, &vec![f32::NAN; n as usize]).unwrap();
            let mut args = LaunchArgs::new();
            args.arg(&da).arg(&db).arg_mut(&mut dc).arg(&n64);
            // SAFETY: vector_add(a, b, c, n) over buffers of n elements.
            unsafe {
                m.function("vector_add")
                    .unwrap()
                    .launch(&s, &config, &mut args)
            }
            .unwrap();
            s.synchronize().unwrap();
            let c = dc.to_vec().unwrap();
            assert!(
                (0..n as usize).all(|i| c[i] == a[i] + b[i]),
                "vector_add, block {block}"
            );

            let mut dy = DeviceBuffer::from_slice(&d, &b).unwrap();
            let alpha = 3.0f32;
            let mut args = LaunchArgs::new();
            args.arg(&alpha).arg(&da).arg_mut(&mut dy).arg(&n64);
            // SAFETY: saxpy_f32(a, x, y, n) over buffers of n elements.
            unsafe {
                m.function("saxpy_f32")
                    .unwrap()
                    .launch(&s, &config, &mut args)
            }
            .unwrap();
            s.synchronize().unwrap();
            let y = dy.to_vec().unwrap();
            assert!(
                (0..n as usize).all(|i| y[i] == alpha * a[i] + b[i]),
                "saxpy_f32, block {block}"
            );
        }
    }
}
