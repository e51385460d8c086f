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

/// Each kernel and its parameters' sizes, as kernels/src/lib.rs and kernels/src/typed.rs declare them
/// (sorted by name). A `#[kernel]`'s name is its host handle's: the committed code objects were built from
/// the same signatures as the launchers compiled here.
const EXPECTED: [(&str, &[u64]); 10] = [
    ("affine_f32", &[8, 8, 8]),         // *const Affine, *const f32, *mut f32
    ("block_sum_u32", &[8, 8, 8]),      // *const u32, *mut u32, u64
    (typed::count_once::NAME, &[8, 8]), // Out<u8>: *mut u8, u64
    (typed::linear_ids::NAME, &[8, 8]), // Out<u64>: *mut u64, u64
    ("saxpy_f32", &[4, 8, 8, 8]),       // f32, *const f32, *mut f32, u64
    (typed::saxpy_f32::NAME, &[4, 8, 8, 8, 8]), // f32, In<f32>, Out<f32>
    ("saxpy_f64", &[8, 8, 8, 8]),       // f64, *const f64, *mut f64, u64
    (typed::saxpy_f64::NAME, &[8, 8, 8, 8, 8]), // f64, In<f64>, Out<f64>
    ("vector_add", &[8, 8, 8, 8]),      // *const f32, *const f32, *mut f32, u64
    (typed::vector_add::NAME, &[8, 8, 8, 8, 8, 8]), // In<f32>, In<f32>, Out<f32>
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
    let want: Vec<(&str, Vec<u64>)> = EXPECTED.iter().map(|(n, s)| (*n, s.to_vec())).collect();
    assert_eq!(got, want, "kernels for {target}");
}

#[test]
fn amd_code_objects_are_amdgpu_elf_with_the_ten_kernels() {
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
        let pointer_kinds = ks
            .iter()
            .find(|k| k.name == "affine_f32")
            .unwrap()
            .explicit_params()
            .all(|a| a.kind == ParamKind::Pointer && a.value_kind == "global_buffer");
        assert!(pointer_kinds, "affine_f32 takes three device pointers");
    }
}

#[test]
fn the_bundle_holds_both_gfx_targets() {
    assert!(BUNDLE.starts_with(b"__CLANG_OFFLOAD_BUNDLE__"));
    let ks = kernels(BUNDLE).unwrap();
    assert_eq!(ks.len(), 20);
    check(&ks, "gfx90a");
    check(&ks, "gfx1100");
}

#[test]
fn the_ptx_has_the_ten_entries_for_sm_70() {
    let text = std::str::from_utf8(PTX).unwrap();
    assert!(text.contains(".version 7.0") && text.contains(".target sm_70"));
    check(&kernels(PTX).unwrap(), "sm_70");
    // The reduction uses dynamic shared memory and a barrier.
    assert!(text.contains(".extern .shared") && text.contains("bar.sync"));
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
    let kernels: [(&str, &[usize], usize); 5] = [
        (typed::vector_add::NAME, &[1, 3], 5),
        (typed::saxpy_f32::NAME, &[2], 4),
        (typed::saxpy_f64::NAME, &[2], 4),
        (typed::linear_ids::NAME, &[], 1),
        (typed::count_once::NAME, &[], 1),
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
    // The index the bound is compared with is 64-bit: no 32-bit compare of a thread index exists.
    if body.contains("setp.ge.u32") || body.contains("setp.lt.u32") {
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

/// The Rust-built kernels on a real device (`--features gpu`): the image for this platform (the bundle on
/// AMD, the PTX on NVIDIA), launched with block sizes other than the example's.
#[cfg(feature = "gpu")]
mod gpu {
    use hip::prelude::*;
    use hip_rs_kernel_types::Affine;

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

    #[test]
    fn block_sum_reduces_in_shared_memory_for_each_power_of_two_block() {
        let (d, m, s) = module();
        let n = 1_000_001u32;
        let n64 = u64::from(n);
        let data = input(n, 7);
        let din = DeviceBuffer::from_slice(&d, &data).unwrap();
        for block in [2u32, 64, 256, 1024] {
            let blocks = n.div_ceil(block);
            let want: Vec<u32> = data
                .chunks(block as usize)
                .map(|c| c.iter().fold(0u32, |a, &v| a.wrapping_add(v)))
                .collect();
            let not_yet: Vec<u32> = want.iter().map(|v| !v).collect();
            let mut partial = DeviceBuffer::from_slice(&d, &not_yet).unwrap();
            let mut args = LaunchArgs::new();
            args.arg(&din).arg_mut(&mut partial).arg(&n64);
            let config = LaunchConfig {
                shared_mem_bytes: block * 4,
                ..LaunchConfig::new(blocks, block)
            };
            // SAFETY: block_sum_u32(input, partial, n): one partial per block, blockDim.x * 4 bytes of
            // shared memory, blockDim.x a power of two.
            unsafe {
                m.function("block_sum_u32")
                    .unwrap()
                    .launch(&s, &config, &mut args)
            }
            .unwrap();
            s.synchronize().unwrap();
            let got = partial.to_vec().unwrap();
            assert_eq!(got, want, "block {block}");
        }
    }

    #[test]
    fn affine_reads_the_struct_the_host_wrote() {
        let (d, m, s) = module();
        let n = 4097u32;
        let params = Affine {
            scale: -2.0,
            offset: 0.25,
            len: u64::from(n - 1), // the last element must stay untouched
        };
        let dp = DeviceBuffer::from_slice(&d, &[params]).unwrap();
        let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let dx = DeviceBuffer::from_slice(&d, &x).unwrap();
        let mut dy = DeviceBuffer::from_slice(&d, &vec![7.0f32; n as usize]).unwrap();
        let mut args = LaunchArgs::new();
        args.arg(&dp).arg(&dx).arg_mut(&mut dy);
        // SAFETY: affine_f32(p, x, y): p one Affine, x and y n > p.len elements.
        unsafe {
            m.function("affine_f32")
                .unwrap()
                .launch(&s, &LaunchConfig::for_num_elems(n), &mut args)
        }
        .unwrap();
        s.synchronize().unwrap();
        let y = dy.to_vec().unwrap();
        // Written out, not `Affine::apply`: the kernel itself calls that (an oracle must not be the code
        // under test). Exact: i * -2 + 0.25 is representable for every i here.
        assert!((0..(n - 1) as usize).all(|i| y[i] == x[i] * -2.0 + 0.25));
        assert_eq!(y[(n - 1) as usize], 7.0);
    }
}
