//! Launches checked against the kernel's signature on a real device: a missing argument, a wider type and a
//! buffer where a value belongs are refused before HIP, naming the parameter, and nothing runs; the correct
//! launch runs. Compiled only with `--features gpu`.
#![cfg(feature = "gpu")]

use hip::prelude::*;

const SRC: &str = r#"
extern "C" __global__ void scale_add(float* y, const float* x, double s, unsigned int n) {
    __shared__ float tile[256];
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n) y[i] += (float)s * tile[threadIdx.x];
}
"#;

/// How the parameter at `index` is shown in the error, after "argument i of 4": AMD metadata carries the
/// source names (with `-fhip-kernel-arg-name`) and types; NVRTC's PTX only its own `<kernel>_param_<i>`
/// names, which the message leaves out for the PTX type.
fn param_name(index: usize) -> String {
    if cfg!(hip_platform = "amd") {
        format!("(`{}`: ", ["y", "x", "s", "n"][index])
    } else {
        format!("({})", [".u64", ".u64", ".f64", ".u32"][index])
    }
}

fn setup() -> (Device, Function, Stream) {
    let d = Device::get(0).expect("--features gpu needs a HIP device");
    let mut b = ProgramBuilder::new(SRC);
    if cfg!(hip_platform = "amd") {
        b = b.option("-fhip-kernel-arg-name");
    }
    let code = b.compile().unwrap();
    let m = Module::load_data(&d, code.code()).unwrap();
    let f = m.function("scale_add").unwrap();
    let s = Stream::new(&d).unwrap();
    (d, f, s)
}

#[test]
fn the_function_knows_its_signature() {
    let (_d, f, _s) = setup();
    let k = f
        .signature()
        .expect("HIPRTC output carries a signature on both platforms");
    let sizes: Vec<u64> = k.explicit_params().map(|p| p.size).collect();
    assert_eq!(sizes, [8, 8, 8, 4]);
    if cfg!(hip_platform = "amd") {
        assert_eq!(k.group_segment_size, Some(1024));
        assert_eq!(f.static_shared_bytes(), 1024);
    }
}

#[test]
fn wrong_arguments_are_refused_before_hip_and_the_right_ones_run() {
    let (d, f, s) = setup();
    let n = 1000u32;
    let x = DeviceBuffer::from_slice(&d, &vec![1.0f32; n as usize]).unwrap();
    // y += 2 * x: a refused launch leaves the sentinel, the right one makes it 3.
    let mut y = DeviceBuffer::from_slice(&d, &vec![1.0f32; n as usize]).unwrap();
    let cfg = LaunchConfig::for_num_elems(n);
    let scale = 2.0f64;
    let (n64, scale32) = (u64::from(n), 2.0f32);

    let refused = |index: usize, args: &mut LaunchArgs<'_>| {
        let err = unsafe { f.launch(&s, &cfg, args) }.unwrap_err();
        match &err {
            Error::ArgumentMismatch {
                kernel, index: i, ..
            } => {
                assert_eq!((kernel.as_str(), *i), ("scale_add", index), "{err}");
            }
            other => panic!("{other}"),
        }
        let msg = err.to_string();
        let position = format!("argument {} of 4 {}", index + 1, param_name(index));
        assert!(msg.contains(&position), "{msg}");
        assert!(!msg.contains("_param_"), "{msg}");
        assert_eq!(err.status(), hip::Status::InvalidArgument);
    };
    // A missing argument.
    refused(3, LaunchArgs::new().arg_mut(&mut y).arg(&x).arg(&scale));
    // A wider type: u64 where the kernel takes unsigned int.
    refused(
        3,
        LaunchArgs::new()
            .arg_mut(&mut y)
            .arg(&x)
            .arg(&scale)
            .arg(&n64),
    );
    // A narrower type: f32 where it takes double.
    refused(
        2,
        LaunchArgs::new()
            .arg_mut(&mut y)
            .arg(&x)
            .arg(&scale32)
            .arg(&n),
    );
    // A buffer where a value belongs (the same size as the double: refused by kind).
    refused(2, LaunchArgs::new().arg_mut(&mut y).arg(&x).arg(&x).arg(&n));
    s.synchronize().unwrap();
    assert!(y.to_vec().unwrap().iter().all(|&v| v == 1.0), "nothing ran");

    let mut args = LaunchArgs::new();
    args.arg_mut(&mut y).arg(&x).arg(&scale).arg(&n);
    unsafe { f.launch(&s, &cfg, &mut args) }.unwrap();
    s.synchronize().unwrap();
    assert!(y.to_vec().unwrap().iter().all(|&v| v == 3.0));
}

#[test]
#[cfg_attr(
    not(hip_platform = "amd"),
    ignore = "offload bundles hold AMD code objects; HIP's NVIDIA platform loads none"
)]
fn a_bundle_loaded_on_the_device_picks_its_entrys_signature() {
    let d = Device::get(0).unwrap();
    let code = ProgramBuilder::new(SRC).compile().unwrap();
    let id = format!("hipv4-amdgcn-amd-amdhsa--{}", d.arch_name().unwrap());
    let mut image = b"__CLANG_OFFLOAD_BUNDLE__".to_vec();
    image.extend(1u64.to_le_bytes());
    let offset = (image.len() + 24 + id.len()).next_multiple_of(4096);
    image.extend((offset as u64).to_le_bytes());
    image.extend((code.code().len() as u64).to_le_bytes());
    image.extend((id.len() as u64).to_le_bytes());
    image.extend(id.as_bytes());
    image.resize(offset, 0);
    image.extend_from_slice(code.code());
    let m = Module::load_data(&d, &image).unwrap();
    let f = m.function("scale_add").unwrap();
    assert_eq!(f.signature().unwrap().explicit_params().count(), 4);
    let mut args = LaunchArgs::new();
    let n = 1u32;
    args.arg(&n);
    let s = Stream::new(&d).unwrap();
    let err = unsafe { f.launch(&s, &LaunchConfig::new(1, 1), &mut args) }.unwrap_err();
    assert!(
        matches!(err, Error::ArgumentMismatch { index: 0, .. }),
        "{err}"
    );
}
