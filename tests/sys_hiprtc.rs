//! hiprtc-sys against the real HIPRTC: offline compiles for an explicit AMD target, no GPU needed.
//!
//! These compile AMD code objects, so they exist only for the AMD platform build.
#![cfg(hip_platform = "amd")]
mod common;

use common::elf;
use hiprtc_sys::*;
use std::ffi::{c_char, CStr, CString};
use std::ptr;

/// HIPRTC 5.2.3 is not thread-safe: these tests, run in parallel at the raw level, crashed (SIGSEGV in
/// hiprtcCompileProgram while another thread compiled) in 5 of 5 runs of the dynamic-loading build. A raw
/// caller must serialise HIPRTC itself, as the safe crate does; each test holds this lock throughout.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// A created program, destroyed on drop.
struct Prog(hiprtcProgram);
impl Drop for Prog {
    fn drop(&mut self) {
        unsafe { hiprtcDestroyProgram(&mut self.0) };
    }
}

fn create(src: &str) -> Prog {
    let src = CString::new(src).unwrap();
    let mut p = ptr::null_mut();
    let rc = unsafe {
        hiprtcCreateProgram(
            &mut p,
            src.as_ptr(),
            c"test.hip".as_ptr(),
            0,
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    assert_eq!(rc, HIPRTC_SUCCESS);
    Prog(p)
}

fn compile(p: &Prog, opts: &[&str]) -> hiprtcResult {
    let owned: Vec<CString> = opts.iter().map(|o| CString::new(*o).unwrap()).collect();
    let mut ptrs: Vec<*const c_char> = owned.iter().map(|o| o.as_ptr()).collect();
    unsafe { hiprtcCompileProgram(p.0, ptrs.len() as i32, ptrs.as_mut_ptr()) }
}

fn log(p: &Prog) -> String {
    let mut n = 0;
    assert_eq!(
        unsafe { hiprtcGetProgramLogSize(p.0, &mut n) },
        HIPRTC_SUCCESS
    );
    let mut buf = vec![0u8; n.max(1)];
    assert_eq!(
        unsafe { hiprtcGetProgramLog(p.0, buf.as_mut_ptr().cast()) },
        HIPRTC_SUCCESS
    );
    String::from_utf8_lossy(&buf)
        .trim_end_matches('\0')
        .to_string()
}

fn arch_option() -> String {
    format!("--gpu-architecture={}", common::OFFLINE_ARCH)
}

#[test]
fn vector_add_compiles_to_an_amdgpu_elf_holding_the_kernel() {
    let _serial = serial();
    let p = create(common::VECTOR_ADD);
    assert_eq!(
        compile(&p, &[&arch_option()]),
        HIPRTC_SUCCESS,
        "log: {}",
        log(&p)
    );
    let mut size = 0;
    assert_eq!(unsafe { hiprtcGetCodeSize(p.0, &mut size) }, HIPRTC_SUCCESS);
    let mut code = vec![0u8; size];
    assert_eq!(
        unsafe { hiprtcGetCode(p.0, code.as_mut_ptr().cast()) },
        HIPRTC_SUCCESS
    );
    assert_eq!(elf::machine(&code), elf::EM_AMDGPU);
    let syms = elf::symbols(&code);
    assert!(syms.iter().any(|s| s == "vector_add"), "symbols: {syms:?}");
}

#[test]
fn a_syntax_error_fails_compilation_with_a_log_naming_the_line() {
    let _serial = serial();
    let p = create("extern \"C\" __global__ void k(int* x) {\n  x[0] = 1\n}\n");
    assert_eq!(compile(&p, &[&arch_option()]), HIPRTC_ERROR_COMPILATION);
    let log = log(&p);
    assert!(
        log.contains(":2:11: error: expected ';'"),
        "log does not name line 2: {log}"
    );
}

#[test]
fn template_kernels_come_back_under_their_lowered_names() {
    let _serial = serial();
    let p =
        create("template <typename T> __global__ void fill(T* x, T v) { x[threadIdx.x] = v; }\n");
    for expr in [c"fill<float>", c"fill<int>"] {
        assert_eq!(
            unsafe { hiprtcAddNameExpression(p.0, expr.as_ptr()) },
            HIPRTC_SUCCESS
        );
    }
    assert_eq!(
        compile(&p, &[&arch_option()]),
        HIPRTC_SUCCESS,
        "log: {}",
        log(&p)
    );
    let lowered = |expr: &CStr| {
        let mut out = ptr::null();
        assert_eq!(
            unsafe { hiprtcGetLoweredName(p.0, expr.as_ptr(), &mut out) },
            HIPRTC_SUCCESS
        );
        unsafe { CStr::from_ptr(out) }.to_str().unwrap().to_string()
    };
    assert_eq!(lowered(c"fill<float>"), "_Z4fillIfEvPT_S0_");
    assert_eq!(lowered(c"fill<int>"), "_Z4fillIiEvPT_S0_");
}

#[test]
fn error_strings_and_version() {
    let _serial = serial();
    let s = unsafe { CStr::from_ptr(hiprtcGetErrorString(HIPRTC_ERROR_COMPILATION)) };
    assert_eq!(s.to_str().unwrap(), "HIPRTC_ERROR_COMPILATION");
    let (mut major, mut minor) = (-1, -1);
    assert_eq!(
        unsafe { hiprtcVersion(&mut major, &mut minor) },
        HIPRTC_SUCCESS
    );
    // Every AMD HIPRTC from 5.2.3 to 7.2.4 answers 9.0 (measured), whatever HIP's own version.
    assert_eq!((major, minor), (9, 0));
}
