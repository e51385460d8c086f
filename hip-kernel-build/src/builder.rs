//! The builder a `build.rs` drives, and what it returns.

use super::*;

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
