//! Options that mean the same on both platforms compile on both: on AMD offline for an explicit target
//! (no device needed), on HIP's NVIDIA platform for the device, where the kernel also runs (`gpu`: a
//! compile there needs the device's architecture, so without it the file holds no test).
#![cfg(any(hip_platform = "amd", feature = "gpu"))]
mod common;

use hip::rtc::ProgramBuilder;
use hip::Error;

const SOURCE: &str = r#"
#ifndef VAL
#define VAL 1
#endif
extern "C" __global__ void put(unsigned int* out) {
    out[threadIdx.x] = VAL + threadIdx.x;
}
"#;

/// The portable options, each alone and all together with a definition the kernel reads.
const PORTABLE: &[&str] = &[
    "-O3",
    "-O2",
    "-g",
    "-ffast-math",
    "--use_fast_math",
    "-lineinfo",
    "-std=c++17",
    "-DVAL=7",
];

fn builder(options: &[&str]) -> ProgramBuilder {
    let b = ProgramBuilder::new(SOURCE)
        .name("put.hip")
        .options(options.iter().copied())
        .no_cache();
    if hip::PLATFORM == "amd" {
        b.arch(common::OFFLINE_ARCH)
    } else {
        b
    }
}

#[test]
#[cfg(hip_platform = "amd")]
fn portable_options_compile_on_amd_in_clangs_spelling() {
    for o in PORTABLE.iter().chain(&["-O0", "-G", "--device-debug"]) {
        let b = builder(&[o]);
        let code = b.compile().unwrap_or_else(|e| panic!("{o}: {e}"));
        assert!(!code.code().is_empty(), "{o}");
    }
    let resolved = builder(&["--use_fast_math", "-lineinfo", "-G", "-O3"])
        .resolved_options()
        .unwrap();
    assert_eq!(
        &resolved[..5],
        ["-ffast-math", "-gline-tables-only", "-g", "-O0", "-O3"]
    );
}

#[test]
#[cfg(all(hip_platform = "nvidia", feature = "gpu"))]
fn portable_options_compile_and_run_on_nvidia_in_nvrtcs_spelling() {
    use hip::prelude::*;
    let d = common::device();
    let s = Stream::new(&d).unwrap();
    let run = |options: &[&str]| -> Vec<u32> {
        let code = builder(options)
            .compile()
            .unwrap_or_else(|e| panic!("{options:?}: {e}"));
        let m = Module::load_data(&d, code.code()).unwrap();
        let f = m.function("put").unwrap();
        let mut out = DeviceBuffer::from_slice(&d, &[u32::MAX; 4]).unwrap();
        let mut args = LaunchArgs::new();
        args.arg_mut(&mut out);
        // SAFETY: put(unsigned*) writes out[threadIdx.x] for 4 threads.
        unsafe { f.launch(&s, &LaunchConfig::new(1, 4), &mut args).unwrap() };
        out.to_vec().unwrap()
    };
    for o in PORTABLE {
        let want = if *o == "-DVAL=7" { 7 } else { 1 };
        assert_eq!(run(&[o]), [want, want + 1, want + 2, want + 3], "{o}");
    }
    assert_eq!(run(PORTABLE), [7, 8, 9, 10]);
    let resolved = builder(&["-O3", "-g", "-ffast-math", "-std=c++17"])
        .resolved_options()
        .unwrap();
    assert_eq!(
        &resolved[..3],
        ["-lineinfo", "--use_fast_math", "-std=c++17"]
    );
    for o in ["-O0", "-Os"] {
        match builder(&[o]).compile() {
            Err(Error::InvalidOption { option, reason }) => {
                assert_eq!(option, o);
                assert!(reason.contains("NVIDIA platform"), "{reason}");
            }
            other => panic!("{o}: {:?}", other.map(|c| c.code().len())),
        }
    }
}

#[test]
fn an_option_neither_compiler_knows_is_the_compilers_error_with_its_log() {
    match builder(&["--no-such-option-anywhere"]).compile() {
        Err(e @ Error::Rtc { .. }) => assert!(e.log().is_some_and(|l| !l.is_empty()), "{e}"),
        other => panic!("{:?}", other.map(|c| c.code().len())),
    }
}
