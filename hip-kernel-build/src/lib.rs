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

/// Why a kernel build could not run or failed. Each names what was missing or wrong.
#[derive(Debug)]
pub enum Error {
    /// The compiler's sysroot has no `rust-src` (needed for `-Zbuild-std=core`).
    RustSrcMissing {
        /// The `rustc` asked.
        rustc: PathBuf,
        /// Where `core`'s sources were looked for.
        looked_in: PathBuf,
    },
    /// A stable compiler without `RUSTC_BOOTSTRAP=1`: `-Zbuild-std` and `extern "gpu-kernel"` are unstable.
    NotNightly {
        /// The `rustc` asked.
        rustc: PathBuf,
        /// Its `rustc -V` line.
        version: String,
    },
    /// A program the build needs was not found.
    ToolMissing {
        /// What it is for, and its name.
        tool: String,
        /// Every place tried, in order.
        tried: Vec<String>,
        /// How to get it.
        install: &'static str,
    },
    /// A target name that is not a GPU architecture of its kind (`gfx90a`, `gfx1100:xnack-`; `sm_70`).
    BadArch {
        /// What was given.
        arch: String,
        /// What was expected.
        expected: &'static str,
    },
    /// Nothing to build: no `amdgpu` or `nvptx` target was asked for.
    NoTargets,
    /// The kernel crate has no `Cargo.toml` where it was said to be.
    NoKernelCrate(PathBuf),
    /// A command ran and failed.
    CommandFailed {
        /// What it was doing.
        what: String,
        /// The command line.
        command: String,
        /// Its exit status, and the end of what it printed.
        output: String,
    },
    /// The build ran but left no single artifact of the expected kind.
    NoArtifact {
        /// The directory searched.
        dir: PathBuf,
        /// The extension looked for.
        extension: &'static str,
        /// The candidates found (none, or more than one).
        found: Vec<PathBuf>,
    },
    /// A file operation failed.
    Io {
        /// The path involved.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::RustSrcMissing { rustc, looked_in } => write!(
                f,
                "hip-kernel-build: `{}` has no rust-src (no {}): -Zbuild-std=core needs it. Install it: \
                 `rustup component add rust-src --toolchain nightly` (rustup) or `apt install rust-src` \
                 (Debian sid, with its rustc)",
                rustc.display(),
                looked_in.display()
            ),
            Error::NotNightly { rustc, version } => write!(
                f,
                "hip-kernel-build: `{}` is `{version}`, a stable compiler: GPU kernels need -Zbuild-std and \
                 the gpu-kernel ABI. Use a nightly toolchain (`rustup toolchain install nightly`, then \
                 KernelBuilder::rustc), or set RUSTC_BOOTSTRAP=1 (KernelBuilder::rustc_bootstrap(true))",
                rustc.display()
            ),
            Error::ToolMissing {
                tool,
                tried,
                install,
            } => write!(
                f,
                "hip-kernel-build: {tool} not found (tried: {}). {install}",
                tried.join(", ")
            ),
            Error::BadArch { arch, expected } => {
                write!(f, "hip-kernel-build: `{arch}` is not {expected}")
            }
            Error::NoTargets => write!(
                f,
                "hip-kernel-build: no target: call KernelBuilder::amdgpu and/or KernelBuilder::nvptx"
            ),
            Error::NoKernelCrate(p) => {
                write!(f, "hip-kernel-build: no kernel crate at {}", p.display())
            }
            Error::CommandFailed {
                what,
                command,
                output,
            } => write!(
                f,
                "hip-kernel-build: {what} failed\n  command: {command}\n{output}"
            ),
            Error::NoArtifact {
                dir,
                extension,
                found,
            } => write!(
                f,
                "hip-kernel-build: expected one `*.{extension}` in {} (the kernel crate must be a single \
                 `cdylib`), found {found:?}",
                dir.display()
            ),
            Error::Io { path, source } => {
                write!(f, "hip-kernel-build: {}: {source}", path.display())
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Result of this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// An AMD GPU target id: a `gfx` processor and optional `:feature+` / `:feature-` settings
/// (`gfx90a:xnack-`), as HIP and clang write them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AmdArch {
    /// The processor, e.g. `gfx90a`.
    pub processor: String,
    /// Target-id features with their setting, e.g. `("xnack", false)`.
    pub features: Vec<(String, bool)>,
}

impl AmdArch {
    /// Parse `gfx90a`, `gfx1100`, `gfx90a:sramecc+:xnack-`.
    pub fn parse(s: &str) -> Result<AmdArch> {
        let bad = || Error::BadArch {
            arch: s.to_string(),
            expected: "an AMD GPU target id (gfx followed by letters and digits, e.g. gfx90a, \
                       gfx1100, gfx90a:xnack-)",
        };
        let mut parts = s.split(':');
        let processor = parts.next().unwrap_or_default();
        let digits = processor.strip_prefix("gfx").ok_or_else(bad)?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(bad());
        }
        let mut features = Vec::new();
        for p in parts {
            let (name, on) = match p.as_bytes().last() {
                Some(b'+') => (&p[..p.len() - 1], true),
                Some(b'-') => (&p[..p.len() - 1], false),
                _ => return Err(bad()),
            };
            if !matches!(name, "xnack" | "sramecc") {
                return Err(bad());
            }
            features.push((name.to_string(), on));
        }
        Ok(AmdArch {
            processor: processor.to_string(),
            features,
        })
    }

    /// The target id as clang and the offload bundle write it (`gfx90a:xnack-`).
    pub fn target_id(&self) -> String {
        let mut s = self.processor.clone();
        for (name, on) in &self.features {
            s.push(':');
            s.push_str(name);
            s.push(if *on { '+' } else { '-' });
        }
        s
    }
}

/// Check an NVIDIA architecture name: `sm_` followed by digits (and an optional `a`), e.g. `sm_70`.
pub fn check_sm(s: &str) -> Result<()> {
    let ok = s.strip_prefix("sm_").is_some_and(|d| {
        let d = d.strip_suffix('a').unwrap_or(d);
        !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())
    });
    if ok {
        Ok(())
    } else {
        Err(Error::BadArch {
            arch: s.to_string(),
            expected: "an NVIDIA architecture (sm_ followed by digits, e.g. sm_70)",
        })
    }
}

/// What [`KernelBuilder::build`] produced: paths in the output directory.
#[derive(Clone, Debug, Default)]
pub struct Built {
    /// One ELF code object per AMD target id, in the order asked.
    pub amdgpu: Vec<(String, PathBuf)>,
    /// The offload bundle of all of them (`<lib>.hipfb`), when AMD targets were asked for.
    pub bundle: Option<PathBuf>,
    /// The PTX, when an NVIDIA target was asked for.
    pub ptx: Option<PathBuf>,
}

/// Builds a kernel crate for the GPU targets asked for. See the [crate] documentation.
#[derive(Clone, Debug)]
pub struct KernelBuilder {
    crate_dir: PathBuf,
    amdgpu: Vec<String>,
    nvptx: Option<String>,
    out_dir: Option<PathBuf>,
    target_dir: Option<PathBuf>,
    rustc: Option<PathBuf>,
    cargo: Option<PathBuf>,
    clang: Option<PathBuf>,
    bundler: Option<PathBuf>,
    llvm_bin: Option<PathBuf>,
    bootstrap: bool,
    code_object_version: u32,
    jobs: Option<u32>,
    emit_rerun: bool,
}

impl KernelBuilder {
    /// The kernel crate in `crate_dir` (a directory with a `Cargo.toml` of one `cdylib`). A relative path is
    /// taken from `CARGO_MANIFEST_DIR` when set (as in a `build.rs`), else from the current directory.
    pub fn new(crate_dir: impl AsRef<Path>) -> KernelBuilder {
        let dir = crate_dir.as_ref();
        let crate_dir = match std::env::var_os("CARGO_MANIFEST_DIR") {
            Some(m) if dir.is_relative() => Path::new(&m).join(dir),
            _ => dir.to_path_buf(),
        };
        KernelBuilder {
            crate_dir,
            amdgpu: Vec::new(),
            nvptx: None,
            out_dir: None,
            target_dir: None,
            rustc: None,
            cargo: None,
            clang: None,
            bundler: None,
            llvm_bin: None,
            bootstrap: std::env::var_os("RUSTC_BOOTSTRAP").is_some_and(|v| v == "1"),
            code_object_version: 5,
            jobs: None,
            emit_rerun: std::env::var_os("OUT_DIR").is_some(),
        }
    }

    /// AMD GPU target ids (`gfx90a`, `gfx1100`, `gfx90a:xnack-`): one code object each, and one offload
    /// bundle of all of them.
    pub fn amdgpu<I, S>(mut self, arches: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.amdgpu
            .extend(arches.into_iter().map(|a| a.as_ref().to_string()));
        self
    }

    /// An NVIDIA architecture (`sm_70`): PTX for it.
    pub fn nvptx(mut self, sm: impl AsRef<str>) -> Self {
        self.nvptx = Some(sm.as_ref().to_string());
        self
    }

    /// Where the code objects go. Default: `OUT_DIR` (set by cargo for a `build.rs`).
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// Where the inner `cargo` builds (one `target-<arch>` directory per target, and the PTX stand-in
    /// linker). Default: `$HIP_KERNEL_TARGET_DIR`, else the output directory. Builds that share it reuse
    /// each other's `core` and kernels.
    pub fn target_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.target_dir = Some(dir.into());
        self
    }

    /// The `rustc` to build with. Default: `$HIP_KERNEL_RUSTC`, else `rustc` on `PATH`. (Not `$RUSTC`:
    /// in a `build.rs` that is the host crate's compiler, which is often stable.)
    pub fn rustc(mut self, path: impl Into<PathBuf>) -> Self {
        self.rustc = Some(path.into());
        self
    }

    /// The `cargo` to build with. Default: `$HIP_KERNEL_CARGO`, else `cargo` on `PATH`.
    pub fn cargo(mut self, path: impl Into<PathBuf>) -> Self {
        self.cargo = Some(path.into());
        self
    }

    /// The `clang` that links AMD code objects (it must find `ld.lld`). Default: `$HIP_KERNEL_CLANG`, else
    /// the first of `clang-<rustc's LLVM major>`, `clang`, ROCm's `/opt/rocm/llvm/bin/clang`.
    pub fn clang(mut self, path: impl Into<PathBuf>) -> Self {
        self.clang = Some(path.into());
        self
    }

    /// The `clang-offload-bundler`. Default: `$HIP_KERNEL_BUNDLER`, else found beside `clang` or on `PATH`.
    pub fn offload_bundler(mut self, path: impl Into<PathBuf>) -> Self {
        self.bundler = Some(path.into());
        self
    }

    /// A directory holding `llvm-link`, `opt` and `llc` for the PTX stand-in linker. Default:
    /// `$HIP_KERNEL_LLVM_BIN`, else those tools (with rustc's LLVM major as suffix, or without) on `PATH`.
    pub fn llvm_bin(mut self, dir: impl Into<PathBuf>) -> Self {
        self.llvm_bin = Some(dir.into());
        self
    }

    /// Let a stable compiler use unstable features (`RUSTC_BOOTSTRAP=1` for the kernel build only). Off by
    /// default unless `RUSTC_BOOTSTRAP=1` is already set: this is an explicit choice of the caller.
    pub fn rustc_bootstrap(mut self, yes: bool) -> Self {
        self.bootstrap = yes;
        self
    }

    /// AMD code object version (default 5: loads on HIP 5.x to 7.x; LLVM 22's own default is 6).
    pub fn code_object_version(mut self, v: u32) -> Self {
        self.code_object_version = v;
        self
    }

    /// Parallel jobs of the inner `cargo` (`-j`). Default: cargo's.
    pub fn jobs(mut self, n: u32) -> Self {
        self.jobs = Some(n);
        self
    }

    /// Whether to print `cargo:rerun-if-changed` for the kernel crate's sources (default: when `OUT_DIR`
    /// is set, i.e. in a `build.rs`).
    pub fn emit_rerun_if_changed(mut self, yes: bool) -> Self {
        self.emit_rerun = yes;
        self
    }

    /// Build every target asked for. Checks the toolchain first and names what is missing.
    pub fn build(&self) -> Result<Built> {
        if self.amdgpu.is_empty() && self.nvptx.is_none() {
            return Err(Error::NoTargets);
        }
        let arches = self
            .amdgpu
            .iter()
            .map(|a| AmdArch::parse(a))
            .collect::<Result<Vec<_>>>()?;
        if let Some(sm) = &self.nvptx {
            check_sm(sm)?;
        }
        let manifest = self.crate_dir.join("Cargo.toml");
        if !manifest.is_file() {
            return Err(Error::NoKernelCrate(self.crate_dir.clone()));
        }
        let out_dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => std::env::var_os("OUT_DIR")
                .map(PathBuf::from)
                .ok_or_else(|| Error::Io {
                    path: PathBuf::from("$OUT_DIR"),
                    source: std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        "not set: call KernelBuilder::out_dir outside a build script",
                    ),
                })?,
        };
        create_dir(&out_dir)?;
        let work = self
            .target_dir
            .clone()
            .or_else(|| std::env::var_os("HIP_KERNEL_TARGET_DIR").map(PathBuf::from))
            .unwrap_or_else(|| out_dir.clone());
        create_dir(&work)?;
        let tc = self.toolchain()?;
        if self.emit_rerun {
            println!("cargo:rerun-if-changed={}", self.crate_dir.display());
            for v in [
                "HIP_KERNEL_RUSTC",
                "HIP_KERNEL_CARGO",
                "HIP_KERNEL_CLANG",
                "HIP_KERNEL_BUNDLER",
                "HIP_KERNEL_LLVM_BIN",
                "HIP_KERNEL_TARGET_DIR",
            ] {
                println!("cargo:rerun-if-env-changed={v}");
            }
        }

        let mut built = Built::default();
        if !arches.is_empty() {
            let clang = self.find_clang(&tc)?;
            for arch in &arches {
                let id = arch.target_id();
                let mut flags = vec![
                    format!("-Ctarget-cpu={}", arch.processor),
                    format!("-Clinker={}", clang.display()),
                    "-Clinker-flavor=gcc".into(),
                    "-Clink-arg=-fuse-ld=lld".into(),
                    format!("-Clink-arg=--target={AMDGPU_TRIPLE}"),
                    format!("-Clink-arg=-mcpu={id}"),
                    // Quiet clang's note that -shared (which rustc adds) is implied for this target.
                    "-Clink-arg=-Wno-unused-command-line-argument".into(),
                    format!(
                        "-Cllvm-args=--amdhsa-code-object-version={}",
                        self.code_object_version
                    ),
                ];
                for (name, on) in &arch.features {
                    flags.push(format!(
                        "-Ctarget-feature={}{name}",
                        if *on { '+' } else { '-' }
                    ));
                }
                let dir = self.cargo_build(&tc, &work, AMDGPU_TRIPLE, &id, &flags)?;
                let elf = single_artifact(&dir, "elf")?;
                let dest = out_dir.join(format!("{}-{}.co", stem(&elf), id.replace(':', "_")));
                copy(&elf, &dest)?;
                built.amdgpu.push((id, dest));
            }
            let bundler = self.find_bundler(&clang)?;
            let first = &built.amdgpu[0].1;
            let name = stem(first)
                .rsplit_once('-')
                .map(|(s, _)| s.to_string())
                .unwrap_or_default();
            let dest = out_dir.join(format!("{name}.hipfb"));
            bundle(&bundler, &built.amdgpu, &dest)?;
            built.bundle = Some(dest);
        }
        if let Some(sm) = &self.nvptx {
            let mut flags = vec![format!("-Ctarget-cpu={sm}")];
            if tc.has_bitcode_linker {
                // rustup's llvm-bitcode-linker component, used as rustc's self-contained linker (the
                // unstable book's recipe; not tried here: Debian's toolchain has no such component).
                flags.extend([
                    "-Zunstable-options".into(),
                    "-Clinker-flavor=llbc".into(),
                    "-Clink-self-contained=+linker".into(),
                ]);
            } else {
                let linker = self.write_ptx_linker(&tc, &work)?;
                flags.push(format!("-Clinker={}", linker.display()));
            }
            let dir = self.cargo_build(&tc, &work, NVPTX_TRIPLE, sm, &flags)?;
            let ptx = single_artifact(&dir, "ptx")?;
            let dest = out_dir.join(format!("{}-{sm}.ptx", stem(&ptx)));
            copy(&ptx, &dest)?;
            built.ptx = Some(dest);
        }
        Ok(built)
    }

    fn toolchain(&self) -> Result<Toolchain> {
        let rustc = self
            .rustc
            .clone()
            .or_else(|| std::env::var_os("HIP_KERNEL_RUSTC").map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from("rustc"));
        let cargo = self
            .cargo
            .clone()
            .or_else(|| std::env::var_os("HIP_KERNEL_CARGO").map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from("cargo"));
        let vv = run_capture(
            Command::new(&rustc).arg("-vV"),
            "asking rustc for its version",
            || Error::ToolMissing {
                tool: format!("rustc ({})", rustc.display()),
                tried: vec![rustc.display().to_string()],
                install: "Install a nightly toolchain (rustup) or Debian sid's rustc, or pass \
                          KernelBuilder::rustc / HIP_KERNEL_RUSTC",
            },
        )?;
        let version = vv.lines().next().unwrap_or_default().to_string();
        let field = |k: &str| {
            vv.lines()
                .find_map(|l| l.strip_prefix(k))
                .map(|v| v.trim().to_string())
        };
        let host = field("host:").unwrap_or_default();
        let llvm_major = field("LLVM version:")
            .and_then(|v| v.split('.').next().map(str::to_string))
            .unwrap_or_default();
        let nightly = version.contains("nightly") || version.contains("-dev");
        if !nightly && !self.bootstrap {
            return Err(Error::NotNightly { rustc, version });
        }
        let sysroot = run_capture(
            Command::new(&rustc).args(["--print", "sysroot"]),
            "asking rustc for its sysroot",
            || unreachable_tool(&rustc),
        )?
        .trim()
        .to_string();
        let sysroot = PathBuf::from(sysroot);
        let library = sysroot.join("lib/rustlib/src/rust/library");
        if !library.join("core/src/lib.rs").is_file() {
            return Err(Error::RustSrcMissing {
                rustc,
                looked_in: library.join("core"),
            });
        }
        run_capture(
            Command::new(&cargo).arg("-V"),
            "asking cargo for its version",
            || Error::ToolMissing {
                tool: format!("cargo ({})", cargo.display()),
                tried: vec![cargo.display().to_string()],
                install:
                    "Install cargo with the same toolchain as rustc, or pass KernelBuilder::cargo \
                          / HIP_KERNEL_CARGO",
            },
        )?;
        let vendor = library.join("vendor");
        let has_bitcode_linker = sysroot
            .join("lib/rustlib")
            .join(&host)
            .join("bin/llvm-bitcode-linker")
            .is_file()
            || sysroot
                .join("lib/rustlib")
                .join(&host)
                .join("bin/gcc-ld/llvm-bitcode-linker")
                .is_file();
        Ok(Toolchain {
            rustc,
            cargo,
            llvm_major,
            vendor: vendor.is_dir().then_some(vendor),
            has_bitcode_linker,
        })
    }

    fn find_clang(&self, tc: &Toolchain) -> Result<PathBuf> {
        let mut cands: Vec<PathBuf> = Vec::new();
        if let Some(c) = self
            .clang
            .clone()
            .or_else(|| std::env::var_os("HIP_KERNEL_CLANG").map(PathBuf::from))
        {
            cands.push(c);
        } else {
            if !tc.llvm_major.is_empty() {
                cands.push(format!("clang-{}", tc.llvm_major).into());
                cands.push(format!("/usr/lib/llvm-{}/bin/clang", tc.llvm_major).into());
            }
            cands.push("clang".into());
            cands.push("/opt/rocm/llvm/bin/clang".into());
        }
        find_runnable(&cands, "--version").ok_or_else(|| Error::ToolMissing {
            tool: "clang, to link AMD GPU code objects (with ld.lld)".into(),
            tried: show(&cands),
            install: "Install clang and lld of rustc's LLVM version (Debian sid: `apt install \
                      rust-llvm`, or clang-22 lld-22), or pass KernelBuilder::clang / HIP_KERNEL_CLANG",
        })
    }

    fn find_bundler(&self, clang: &Path) -> Result<PathBuf> {
        let mut cands: Vec<PathBuf> = Vec::new();
        if let Some(b) = self
            .bundler
            .clone()
            .or_else(|| std::env::var_os("HIP_KERNEL_BUNDLER").map(PathBuf::from))
        {
            cands.push(b);
        } else {
            // Beside the clang in use (following its symlink: /usr/bin/clang-22 -> /usr/lib/llvm-22/bin).
            let real = which(clang).and_then(|p| std::fs::canonicalize(p).ok());
            if let Some(dir) = real.as_deref().and_then(Path::parent) {
                cands.push(dir.join("clang-offload-bundler"));
            }
            let name = clang.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if let Some(v) = name.strip_prefix("clang-") {
                cands.push(format!("clang-offload-bundler-{v}").into());
            }
            cands.push("clang-offload-bundler".into());
            cands.push("/opt/rocm/llvm/bin/clang-offload-bundler".into());
        }
        find_runnable(&cands, "--version").ok_or_else(|| Error::ToolMissing {
            tool: "clang-offload-bundler, to bundle AMD code objects".into(),
            tried: show(&cands),
            install: "Install it (Debian: `apt install clang-tools-22`; ROCm: /opt/rocm/llvm/bin), or pass \
                      KernelBuilder::offload_bundler / HIP_KERNEL_BUNDLER",
        })
    }

    /// Tools for the PTX stand-in: `llvm-link`, `opt`, `llc` of rustc's LLVM (or newer).
    fn find_llvm_tool(&self, tc: &Toolchain, tool: &str) -> Result<PathBuf> {
        let mut cands: Vec<PathBuf> = Vec::new();
        match self
            .llvm_bin
            .clone()
            .or_else(|| std::env::var_os("HIP_KERNEL_LLVM_BIN").map(PathBuf::from))
        {
            Some(dir) => cands.push(dir.join(tool)),
            None => {
                if !tc.llvm_major.is_empty() {
                    cands.push(format!("{tool}-{}", tc.llvm_major).into());
                    cands.push(format!("/usr/lib/llvm-{}/bin/{tool}", tc.llvm_major).into());
                }
                cands.push(tool.into());
            }
        }
        find_runnable(&cands, "--version").ok_or_else(|| Error::ToolMissing {
            tool: format!(
                "{tool}, for linking PTX (rustc has no llvm-bitcode-linker component here)"
            ),
            tried: show(&cands),
            install: "Install LLVM tools of rustc's LLVM version (Debian sid: `apt install rust-llvm` or \
                      llvm-22), or with rustup: `rustup component add llvm-bitcode-linker llvm-tools \
                      --toolchain nightly`",
        })
    }

    fn write_ptx_linker(&self, tc: &Toolchain, work: &Path) -> Result<PathBuf> {
        let link = self.find_llvm_tool(tc, "llvm-link")?;
        let opt = self.find_llvm_tool(tc, "opt")?;
        let llc = self.find_llvm_tool(tc, "llc")?;
        let path = work.join("ptx-linker.sh");
        let script = PTX_LINKER
            .replace("@LLVM_LINK@", &sh_quote(&which(&link).unwrap_or(link)))
            .replace("@OPT@", &sh_quote(&which(&opt).unwrap_or(opt)))
            .replace("@LLC@", &sh_quote(&which(&llc).unwrap_or(llc)));
        std::fs::write(&path, script).map_err(|source| Error::Io {
            path: path.clone(),
            source,
        })?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).map_err(
                |source| Error::Io {
                    path: path.clone(),
                    source,
                },
            )?;
        }
        Ok(path)
    }

    /// `cargo build` the kernel crate for one target; returns the directory its artifact lands in.
    fn cargo_build(
        &self,
        tc: &Toolchain,
        work: &Path,
        triple: &str,
        arch: &str,
        rustflags: &[String],
    ) -> Result<PathBuf> {
        let target_dir = work.join(format!("target-{}", arch.replace(':', "_")));
        let mut cmd = Command::new(&tc.cargo);
        cmd.arg("build")
            .arg("--release")
            .arg("--manifest-path")
            .arg(self.crate_dir.join("Cargo.toml"))
            .args(["--target", triple, "-Zbuild-std=core"])
            .arg("--target-dir")
            .arg(&target_dir);
        if let Some(j) = self.jobs {
            cmd.arg(format!("-j{j}"));
        }
        if let Some(v) = &tc.vendor {
            // Debian's rust-src vendors core's own dependencies: build offline from there.
            cmd.arg("--offline")
                .arg("--config")
                .arg("source.crates-io.replace-with=\"rust-src-vendor\"")
                .arg("--config")
                .arg(format!(
                    "source.rust-src-vendor.directory={}",
                    toml_string(&v.display().to_string())
                ));
        }
        // A build script's environment describes the host build: none of it may leak into this one.
        for (k, _) in std::env::vars_os() {
            let k = k.to_string_lossy();
            if k.starts_with("CARGO_")
                && k != "CARGO_HOME"
                && !k.starts_with("CARGO_NET")
                && !k.starts_with("CARGO_HTTP")
                || k.starts_with("RUSTC")
                || matches!(
                    &*k,
                    "RUSTFLAGS" | "RUSTDOCFLAGS" | "TARGET" | "HOST" | "OUT_DIR" | "DEBUG"
                )
            {
                cmd.env_remove(&*k);
            }
        }
        cmd.env("RUSTC", &tc.rustc);
        if self.bootstrap {
            cmd.env("RUSTC_BOOTSTRAP", "1");
        }
        cmd.env("CARGO_ENCODED_RUSTFLAGS", rustflags.join("\x1f"));
        run_capture(
            &mut cmd,
            &format!(
                "building {} for {triple} ({arch})",
                self.crate_dir.display()
            ),
            || unreachable_tool(&tc.cargo),
        )?;
        Ok(target_dir.join(triple).join("release"))
    }
}

struct Toolchain {
    rustc: PathBuf,
    cargo: PathBuf,
    llvm_major: String,
    vendor: Option<PathBuf>,
    has_bitcode_linker: bool,
}

/// Stand-in for rustc's `llvm-bitcode-linker` (which Debian does not ship): rustc hands it bitcode objects
/// and rlibs, `--export-symbol NAME` per kernel, `--target-cpu`, `--target-feature`, `-O<n>`, `-o OUT`.
const PTX_LINKER: &str = r#"#!/bin/sh
# Written by hip-kernel-build: rustc's llvm-bitcode-linker, for toolchains that lack it.
set -eu
out= cpu= feat= olvl=-O3 exports= inputs=
while [ $# -gt 0 ]; do
    case $1 in
        -o) out=$2; shift 2 ;;
        --target-cpu) cpu=$2; shift 2 ;;
        --target-cpu=*) cpu=${1#*=}; shift ;;
        --target-feature) feat=$2; shift 2 ;;
        --target-feature=*) feat=${1#*=}; shift ;;
        --export-symbol) exports="$exports${exports:+,}$2"; shift 2 ;;
        --target | -L) shift 2 ;;
        -O0 | -O1 | -O2 | -O3) olvl=$1; shift ;;
        --O*) olvl=-${1#--}; shift ;;
        -*) shift ;;
        *) inputs="$inputs
$1"; shift ;;
    esac
done
[ -n "$out" ] || { echo "ptx-linker: no -o" >&2; exit 1; }
tmp=$out.linking
IFS='
'
# shellcheck disable=SC2086
@LLVM_LINK@ --ignore-non-bitcode -o "$tmp.bc" $inputs
unset IFS
@OPT@ "--internalize-public-api-list=$exports" -passes="internalize,globaldce,default<${olvl#-}>" \
    -o "$tmp.opt.bc" "$tmp.bc"
@LLC@ "$olvl" -mtriple=nvptx64-nvidia-cuda ${cpu:+-mcpu=$cpu} ${feat:+-mattr=$feat} -o "$out" "$tmp.opt.bc"
rm -f "$tmp.bc" "$tmp.opt.bc"
"#;

/// Pack code objects into one clang offload bundle (`hipv4-amdgcn-amd-amdhsa--<target id>` entries, and
/// the empty host entry clang writes).
fn bundle(bundler: &Path, objects: &[(String, PathBuf)], dest: &Path) -> Result<()> {
    let mut targets = vec!["host-x86_64-unknown-linux-gnu".to_string()];
    let mut inputs = vec![format!("-input={}", null_device())];
    for (id, path) in objects {
        targets.push(format!("hipv4-{AMDGPU_TRIPLE}--{id}"));
        inputs.push(format!("-input={}", path.display()));
    }
    let mut cmd = Command::new(bundler);
    cmd.arg("-type=o")
        .arg(format!("-targets={}", targets.join(",")))
        .args(inputs)
        .arg(format!("-output={}", dest.display()));
    run_capture(&mut cmd, "bundling the AMD code objects", || {
        unreachable_tool(bundler)
    })?;
    Ok(())
}

fn null_device() -> &'static str {
    if cfg!(windows) {
        "NUL"
    } else {
        "/dev/null"
    }
}

fn unreachable_tool(p: &Path) -> Error {
    Error::ToolMissing {
        tool: p.display().to_string(),
        tried: vec![p.display().to_string()],
        install: "It was found a moment ago; check that it is still installed",
    }
}

/// Run, and return stdout; a spawn failure becomes `missing()`, a non-zero exit `CommandFailed` with the
/// end of its output.
fn run_capture(cmd: &mut Command, what: &str, missing: impl FnOnce() -> Error) -> Result<String> {
    let line = command_line(cmd);
    let out = match cmd.output() {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(missing()),
        Err(e) => {
            return Err(Error::CommandFailed {
                what: what.to_string(),
                command: line,
                output: e.to_string(),
            })
        }
    };
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = stderr.lines().collect();
        let tail = lines[lines.len().saturating_sub(40)..].join("\n");
        return Err(Error::CommandFailed {
            what: what.to_string(),
            command: line,
            output: format!("  {}\n{tail}", out.status),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn command_line(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// The first candidate that runs with `arg` and exits 0, resolved to a path where it came from `PATH`.
fn find_runnable(cands: &[PathBuf], arg: &str) -> Option<PathBuf> {
    cands.iter().find_map(|c| {
        let ok = Command::new(c)
            .arg(arg)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| which(c).unwrap_or_else(|| c.clone()))
    })
}

/// A program name resolved through `PATH` (a path with a separator is returned as is, if it exists).
fn which(p: &Path) -> Option<PathBuf> {
    if p.components().count() > 1 {
        return p.exists().then(|| p.to_path_buf());
    }
    let path: OsString = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(p))
        .find(|c| c.is_file())
}

fn show(cands: &[PathBuf]) -> Vec<String> {
    cands.iter().map(|c| c.display().to_string()).collect()
}

fn single_artifact(dir: &Path, extension: &'static str) -> Result<PathBuf> {
    let entries = std::fs::read_dir(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let found: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == extension))
        .collect();
    match found.as_slice() {
        [one] => Ok(one.clone()),
        _ => Err(Error::NoArtifact {
            dir: dir.to_path_buf(),
            extension,
            found,
        }),
    }
}

fn stem(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn create_dir(d: &Path) -> Result<()> {
    std::fs::create_dir_all(d).map_err(|source| Error::Io {
        path: d.to_path_buf(),
        source,
    })
}

fn copy(from: &Path, to: &Path) -> Result<()> {
    std::fs::copy(from, to)
        .map(drop)
        .map_err(|source| Error::Io {
            path: from.to_path_buf(),
            source,
        })
}

fn sh_quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', r"'\''"))
}

fn toml_string(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// Names of the kernels (`.kd` symbols) in an AMD code object, or the `.entry` names of PTX text: a quick
/// check that a build produced what a crate exports. `None` if `image` is neither.
pub fn kernel_names(image: &[u8]) -> Option<Vec<String>> {
    if image.starts_with(b"\x7fELF") {
        return elf_kd_symbols(image);
    }
    let text = std::str::from_utf8(image).ok()?;
    let names: Vec<String> = text
        .lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let rest = l
                .strip_prefix(".visible .entry ")
                .or_else(|| l.strip_prefix(".entry "))?;
            Some(rest.split('(').next()?.trim().to_string())
        })
        .collect();
    Some(names)
}

fn elf_kd_symbols(b: &[u8]) -> Option<Vec<String>> {
    let u16_at = |o: usize| b.get(o..o + 2).map(|s| u16::from_le_bytes([s[0], s[1]]));
    let u32_at = |o: usize| {
        b.get(o..o + 4)
            .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    };
    let u64_at = |o: usize| {
        b.get(o..o + 8)
            .map(|s| u64::from_le_bytes(s.try_into().unwrap_or([0; 8])))
    };
    let shoff = usize::try_from(u64_at(0x28)?).ok()?;
    let (shent, shnum) = (u16_at(0x3A)? as usize, u16_at(0x3C)? as usize);
    let section = |i: usize| {
        let h = shoff.checked_add(i.checked_mul(shent)?)?;
        Some((
            u32_at(h + 4)?,
            usize::try_from(u64_at(h + 0x18)?).ok()?,
            usize::try_from(u64_at(h + 0x20)?).ok()?,
            u32_at(h + 0x28)? as usize,
        ))
    };
    let mut names = BTreeMap::new();
    for i in 0..shnum {
        let (kind, off, size, link) = section(i)?;
        if kind != 2 {
            continue; // SHT_SYMTAB
        }
        let (_, stroff, strsize, _) = section(link)?;
        let strtab = b.get(stroff..stroff.checked_add(strsize)?)?;
        for s in (0..size / 24).map(|k| off + k * 24) {
            let name_off = u32_at(s)? as usize;
            let name = strtab.get(name_off..)?;
            let end = name.iter().position(|&c| c == 0)?;
            let name = std::str::from_utf8(&name[..end]).ok()?;
            if let Some(k) = name.strip_suffix(".kd") {
                names.insert(k.to_string(), ());
            }
        }
    }
    Some(names.into_keys().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

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
