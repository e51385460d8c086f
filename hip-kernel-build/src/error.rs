//! What can go wrong, each naming what was missing or wrong.

use super::*;

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
