//! Build a `#![no_std]` Rust kernel crate for GPUs from a `build.rs`, for loading with
//! `hip::Module::load_data`.
//!
//! In the `build.rs` of a host crate whose kernels live in `../kernels` (a `cdylib` of `extern "gpu-kernel"`
//! functions):
//!
//! ```no_run
//! let built = hip_kernel_build::KernelBuilder::new("../kernels")
//!     .amdgpu(["gfx90a", "gfx1100"]) // one offload bundle that loads on either
//!     .nvptx("sm_70") // and PTX for HIP's NVIDIA platform
//!     .build()
//!     .unwrap_or_else(|e| panic!("{e}"));
//! // built.bundle and built.ptx are files in OUT_DIR; the host code includes them:
//! // include_bytes!(concat!(env!("OUT_DIR"), "/hip_rs_kernels.hipfb"))
//! # let _ = built;
//! ```
//!
//! What it runs, per target: `cargo build --release --target amdgcn-amd-amdhsa` (or
//! `nvptx64-nvidia-cuda`) `-Zbuild-std=core` on the kernel crate, in its own target directory under the
//! output directory, with:
//!
//! - **AMD** (`amdgpu`): `-Ctarget-cpu=<gfx>`, code object version 5 (`--amdhsa-code-object-version=5`:
//!   LLVM 22 defaults to 6, which HIP before 7.0 cannot load), linked by `clang --target=amdgcn-amd-amdhsa
//!   -fuse-ld=lld` (rustc 1.97's default `rust-lld` route hits an internal assertion). Each arch gives an ELF
//!   code object `<lib>-<gfx>.co`; all of them are packed by `clang-offload-bundler` into `<lib>.hipfb`, one
//!   image HIP loads on any of those GPUs.
//! - **NVIDIA** (`nvptx`): `-Ctarget-cpu=<sm>`, linked into `<lib>-<sm>.ptx`. rustc links PTX through its
//!   `llvm-bitcode-linker` component; where the toolchain lacks it (Debian's packages), a stand-in script
//!   written to the build directory runs `llvm-link`, `opt` (keeping only the exported kernels) and `llc`.
//!
//! Needs a compiler that accepts `-Z` flags and the `gpu-kernel` ABI (nightly, or a stable one with
//! `RUSTC_BOOTSTRAP=1`: see [`KernelBuilder::rustc_bootstrap`]) and the `rust-src` component. When something
//! is missing, [`KernelBuilder::build`] returns an [`Error`] that names it and how to install it; it never
//! panics. Where `rust-src` vendors core's dependencies (`library/vendor`, as Debian's `rust-src` does), the
//! build runs `--offline` from that directory.
#![warn(missing_docs)]

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The Rust target for AMD GPUs.
pub const AMDGPU_TRIPLE: &str = "amdgcn-amd-amdhsa";
/// The Rust target for NVIDIA GPUs.
pub const NVPTX_TRIPLE: &str = "nvptx64-nvidia-cuda";

mod arch;
mod builder;
mod error;
mod inspect;
mod tools;

pub use arch::*;
pub use builder::*;
pub use error::*;
pub use inspect::*;
use tools::*;

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Mutex, MutexGuard};

    /// Held by every test that runs a program (they all spawn rustc, cargo or a stand-in script): a test
    /// thread forking while another writes its stand-in `rustc` leaves the child holding the script open
    /// for writing, and running the script then fails with ETXTBSY ("Text file busy"; seen under load,
    /// 5 in 300 runs of this binary).
    fn programs() -> MutexGuard<'static, ()> {
        static PROGRAMS: Mutex<()> = Mutex::new(());
        PROGRAMS.lock().unwrap_or_else(|e| e.into_inner())
    }

    #[test]
    fn amd_target_ids_parse_and_print_back() {
        let a = AmdArch::parse("gfx90a:sramecc+:xnack-").unwrap();
        assert_eq!(a.processor, "gfx90a");
        assert_eq!(
            a.features,
            [("sramecc".to_string(), true), ("xnack".to_string(), false)]
        );
        assert_eq!(a.target_id(), "gfx90a:sramecc+:xnack-");
        assert_eq!(AmdArch::parse("gfx1100").unwrap().target_id(), "gfx1100");
    }

    #[test]
    fn bad_arches_are_named_in_the_error() {
        for bad in [
            "sm_70",
            "gfx",
            "gfx90a:",
            "gfx90a:xnack",
            "gfx90a:fast+",
            "gfx9 0a",
            "",
        ] {
            let e = AmdArch::parse(bad).unwrap_err();
            assert!(
                matches!(&e, Error::BadArch { arch, .. } if arch == bad),
                "{bad}: {e}"
            );
            assert!(e.to_string().contains(&format!("`{bad}`")));
        }
        assert!(check_sm("sm_70").is_ok() && check_sm("sm_90a").is_ok());
        for bad in ["gfx90a", "sm_", "sm_7x", "compute_70"] {
            assert!(matches!(check_sm(bad), Err(Error::BadArch { .. })), "{bad}");
        }
    }

    #[test]
    fn build_checks_its_input_before_running_anything() {
        let _programs = programs();
        let dir = std::env::temp_dir().join("hip-kernel-build-test-none");
        let b = KernelBuilder::new(&dir).out_dir(&dir);
        assert!(matches!(b.build(), Err(Error::NoTargets)));
        let e = b.clone().amdgpu(["gfx90a", "mi300"]).build().unwrap_err();
        assert!(e.to_string().contains("`mi300`"), "{e}");
        let e = b.clone().nvptx("sm_70").build().unwrap_err();
        assert!(matches!(e, Error::NoKernelCrate(ref p) if *p == dir), "{e}");
    }

    #[test]
    fn a_missing_rustc_is_named() {
        let _programs = programs();
        let dir = std::env::temp_dir().join("hip-kernel-build-test-rustc");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("Cargo.toml"), "[package]\nname = \"k\"\n").unwrap();
        let e = KernelBuilder::new(&dir)
            .out_dir(dir.join("out"))
            .rustc("/nonexistent/rustc")
            .nvptx("sm_70")
            .build()
            .unwrap_err();
        assert!(matches!(e, Error::ToolMissing { .. }), "{e}");
        assert!(e.to_string().contains("/nonexistent/rustc"), "{e}");
    }

    /// A stand-in `rustc` that answers `-vV` with `version` and `--print sysroot` with `sysroot`.
    #[cfg(unix)]
    fn fake_rustc(dir: &Path, version: &str, sysroot: &Path) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(dir).unwrap();
        let p = dir.join("rustc");
        let script = format!(
            "#!/bin/sh\ncase $1 in -vV) printf '{version}\\nhost: x86_64-unknown-linux-gnu\\nLLVM version: 22.1.8\\n' ;;\n\
             --print) echo '{}' ;; esac\n",
            sysroot.display()
        );
        std::fs::write(&p, script).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    #[cfg(unix)]
    #[test]
    fn a_stable_compiler_needs_nightly_or_rustc_bootstrap() {
        let _programs = programs();
        let dir = std::env::temp_dir().join(format!("hkb-stable-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("Cargo.toml"), "[package]\nname = \"k\"\n").unwrap();
        let rustc = fake_rustc(
            &dir.join("bin"),
            "rustc 1.95.0 (59807616e 2026-04-14)",
            &dir,
        );
        let b = KernelBuilder::new(&dir)
            .out_dir(dir.join("out"))
            .rustc(&rustc)
            .nvptx("sm_70");
        let e = b.clone().rustc_bootstrap(false).build().unwrap_err();
        assert!(matches!(e, Error::NotNightly { .. }), "{e}");
        assert!(e.to_string().contains("RUSTC_BOOTSTRAP=1"), "{e}");
        // Allowed to bootstrap, the next thing missing is rust-src in the (empty) sysroot.
        let e = b.rustc_bootstrap(true).build().unwrap_err();
        assert!(matches!(e, Error::RustSrcMissing { .. }), "{e}");
        assert!(e.to_string().contains("rust-src"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_nightly_compiler_without_rust_src_is_named() {
        let _programs = programs();
        let dir = std::env::temp_dir().join(format!("hkb-nightly-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("Cargo.toml"), "[package]\nname = \"k\"\n").unwrap();
        let rustc = fake_rustc(
            &dir.join("bin"),
            "rustc 1.98.0-nightly (abc 2026-11-01)",
            &dir,
        );
        let e = KernelBuilder::new(&dir)
            .out_dir(dir.join("out"))
            .rustc(&rustc)
            .rustc_bootstrap(false)
            .amdgpu(["gfx90a"])
            .build()
            .unwrap_err();
        let looked = dir.join("lib/rustlib/src/rust/library/core");
        assert!(
            matches!(&e, Error::RustSrcMissing { looked_in, .. } if *looked_in == looked),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn missing_cargo_clang_and_llvm_tools_are_named() {
        let _programs = programs();
        let dir = std::env::temp_dir().join(format!("hkb-tools-{}", std::process::id()));
        let core = dir.join("lib/rustlib/src/rust/library/core/src");
        std::fs::create_dir_all(&core).unwrap();
        std::fs::write(core.join("lib.rs"), "").unwrap();
        std::fs::write(dir.join("Cargo.toml"), "[package]\nname = \"k\"\n").unwrap();
        let rustc = fake_rustc(
            &dir.join("bin"),
            "rustc 1.98.0-nightly (abc 2026-11-01)",
            &dir,
        );
        let b = KernelBuilder::new(&dir)
            .out_dir(dir.join("out"))
            .rustc(&rustc);

        let e = b
            .clone()
            .cargo("/nonexistent/cargo")
            .nvptx("sm_70")
            .build()
            .unwrap_err();
        assert!(
            matches!(e, Error::ToolMissing { .. }) && e.to_string().contains("/nonexistent/cargo"),
            "{e}"
        );

        // `true` stands in for a cargo that answers; the linker for AMD is the next thing missing.
        let b = b.cargo("true");
        let e = b
            .clone()
            .clang("/nonexistent/clang")
            .amdgpu(["gfx90a"])
            .build()
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("clang, to link AMD GPU code objects"),
            "{e}"
        );
        assert!(e.to_string().contains("/nonexistent/clang"), "{e}");

        // No llvm-bitcode-linker in this sysroot: PTX needs llvm-link from the given directory.
        let e = b
            .llvm_bin("/nonexistent/llvm/bin")
            .nvptx("sm_70")
            .build()
            .unwrap_err();
        assert!(
            e.to_string().contains("/nonexistent/llvm/bin/llvm-link"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn ptx_entries_are_listed() {
        let ptx =
            b".version 7.0\n.target sm_70\n.visible .entry vector_add(\n\t.param .u64 a\n)\n{\n}\n";
        assert_eq!(kernel_names(ptx).unwrap(), ["vector_add"]);
        assert_eq!(kernel_names(b"\x7fELF"), None);
    }
}
