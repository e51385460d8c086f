//! The shadow runtime's own symbols, found in the library `HIP_RS_AMDHIP64` names (the one the `hip`
//! crate opened): its race reports and the declaration of host accesses.
#![allow(dead_code)]

use std::sync::OnceLock;

fn lib() -> &'static libloading::Library {
    static LIB: OnceLock<libloading::Library> = OnceLock::new();
    LIB.get_or_init(|| {
        let path = std::env::var("HIP_RS_AMDHIP64")
            .expect("HIP_RS_AMDHIP64 names the shadow runtime (scripts/shadow.sh sets it)");
        // SAFETY: the shadow runtime's initialisers have no preconditions; the hip crate opened it already.
        let lib = unsafe { libloading::Library::new(&path) }.unwrap();
        // SAFETY: a symbol only the shadow exports, with this signature.
        let probe = unsafe { lib.get::<extern "C" fn() -> usize>(b"hip_rs_shadow_reports\0") };
        assert!(probe.is_ok(), "{path} is not the shadow runtime");
        lib
    })
}

/// How many races the detector reported in this process so far.
pub fn reports() -> usize {
    // SAFETY: `usize hip_rs_shadow_reports(void)`.
    unsafe {
        lib()
            .get::<extern "C" fn() -> usize>(b"hip_rs_shadow_reports\0")
            .unwrap()()
    }
}

/// The reports kept, one a line.
pub fn report_text() -> String {
    type F = unsafe extern "C" fn(*mut u8, usize) -> usize;
    // SAFETY: `usize hip_rs_shadow_report_text(char*, size_t)`; the buffer is as long as said.
    unsafe {
        let f = lib().get::<F>(b"hip_rs_shadow_report_text\0").unwrap();
        let mut buf = vec![0u8; 1 << 16];
        let n = f(buf.as_mut_ptr(), buf.len()).min(buf.len() - 1);
        String::from_utf8_lossy(&buf[..n]).into_owned()
    }
}

/// Declare a host access the test makes through `s` (a slice the crate handed out).
pub fn host_access<T>(s: &[T], write: bool) {
    type F = unsafe extern "C" fn(*const u8, usize, bool);
    // SAFETY: `void hip_rs_shadow_host_access(const void*, size_t, bool)`.
    unsafe {
        let f = lib().get::<F>(b"hip_rs_shadow_host_access\0").unwrap();
        f(s.as_ptr().cast(), std::mem::size_of_val(s), write)
    }
}

/// Declare kernel `name`'s parameters: 0 not a pointer, b'r' read, b'w' write, b'b' both.
pub fn declare_kernel(name: &str, roles: &[u8]) {
    type F = unsafe extern "C" fn(*const std::ffi::c_char, *const u8, usize);
    let c = std::ffi::CString::new(name).unwrap();
    // SAFETY: `void hip_rs_shadow_declare_kernel(const char*, const uint8_t*, size_t)`.
    unsafe {
        let f = lib().get::<F>(b"hip_rs_shadow_declare_kernel\0").unwrap();
        f(c.as_ptr(), roles.as_ptr(), roles.len())
    }
}

/// Forget every logged access and report (after a test that provokes a race on purpose).
pub fn reset() {
    // SAFETY: `void hip_rs_shadow_reset(void)`.
    unsafe {
        lib()
            .get::<extern "C" fn()>(b"hip_rs_shadow_reset\0")
            .unwrap()()
    }
}

/// No race reported so far (in this process: tests share it), else the reports.
pub fn assert_no_reports() {
    let n = reports();
    assert_eq!(
        n,
        0,
        "the shadow runtime reported {n} races:\n{}",
        report_text()
    );
}

/// How many hipStreamWaitEvent calls the shadow has seen (`HIP_RS_SHADOW_DROP_WAITS=N` drops the Nth).
pub fn waits() -> usize {
    // SAFETY: `usize hip_rs_shadow_waits(void)`.
    unsafe {
        lib()
            .get::<extern "C" fn() -> usize>(b"hip_rs_shadow_waits\0")
            .unwrap()()
    }
}

/// Declare how long kernel `name` runs (microseconds): it holds its stream that long.
pub fn declare_kernel_duration(name: &str, us: u64) {
    type F = unsafe extern "C" fn(*const std::ffi::c_char, u64);
    let c = std::ffi::CString::new(name).unwrap();
    // SAFETY: `void hip_rs_shadow_declare_kernel_duration(const char*, uint64_t)`.
    unsafe {
        let f = lib()
            .get::<F>(b"hip_rs_shadow_declare_kernel_duration\0")
            .unwrap();
        f(c.as_ptr(), us)
    }
}

/// Of those waits, how many ordered nothing new (their record was already ordered before the waiting
/// stream's next operation).
pub fn redundant_waits() -> usize {
    // SAFETY: `usize hip_rs_shadow_redundant_waits(void)`.
    unsafe {
        lib()
            .get::<extern "C" fn() -> usize>(b"hip_rs_shadow_redundant_waits\0")
            .unwrap()()
    }
}

/// The address of `name` in the shadow runtime (the library `HIP_RS_AMDHIP64` names), if it exports it.
pub fn symbol_address(name: &str) -> Option<usize> {
    let c = std::ffi::CString::new(name).unwrap();
    // SAFETY: only the symbol's address is taken; nothing is called.
    unsafe { lib().get::<unsafe extern "C" fn()>(c.as_bytes_with_nul()) }
        .ok()
        .map(|s| *s as usize)
}

/// A kernel the shadow runs: its name, its parameters' roles (as [`declare_kernel`]) and how long a
/// launch takes, in microseconds (as [`declare_kernel_duration`]).
pub struct ShadowKernel<'a>(pub &'a str, pub &'a [u8], pub u64);

/// `source` compiled by HIPRTC for device 0's target, after declaring each of `kernels` to the shadow.
pub fn compile(source: &str, kernels: &[ShadowKernel]) -> Vec<u8> {
    for ShadowKernel(name, roles, us) in kernels {
        declare_kernel(name, roles);
        declare_kernel_duration(name, *us);
    }
    let d = hip::Device::get(0).unwrap();
    let code = hip::rtc::ProgramBuilder::new(source)
        .arch(d.arch_name().unwrap())
        .compile()
        .unwrap();
    code.code().to_vec()
}

/// The `SHADOW key=value ...` line that the ignored test `test` of this test binary printed, run alone in
/// a child process (one process per side, as two programs sharing memory would be) with `env` set (a
/// `None` value removes the variable).
pub fn run_child(test: &str, env: &[(&str, Option<&str>)]) -> ChildLine {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", test, "--ignored", "--nocapture"]);
    for (k, v) in env {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "child {test} failed:\n{stdout}");
    let line = stdout
        .lines()
        .find_map(|l| l.split_once("SHADOW ").map(|(_, r)| r.to_string()))
        .unwrap_or_else(|| panic!("no SHADOW line from {test}:\n{stdout}"));
    ChildLine(line)
}

/// A child's `SHADOW key=value ...` line.
pub struct ChildLine(String);

impl ChildLine {
    /// The number after `key=`.
    pub fn field(&self, key: &str) -> usize {
        let prefix = format!("{key}=");
        self.0
            .split_whitespace()
            .find_map(|w| w.strip_prefix(&prefix))
            .unwrap_or_else(|| panic!("no {key}= in {:?}", self.0))
            .parse()
            .unwrap()
    }
}
