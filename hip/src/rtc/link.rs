//! The linker: link bitcode from [`ProgramBuilder::compile_bitcode`](super::ProgramBuilder) (and
//! relocatable objects) into one code object for one target.
//!
//! # How it links
//!
//! Through comgr, the code object manager HIPRTC itself compiles and links with, always (also where a GPU is
//! present). HIPRTC's own `hiprtcLinkComplete` asks the runtime for the current device to choose the target
//! (seen in an `AMD_LOG_LEVEL=4` trace on 5.7.1, 6.4.3 and 7.2.4): with no GPU it fails with
//! `HIPRTC_ERROR_LINKING`, no option or variable gives it another target, and HIPRTC has no API for the
//! linker's log. comgr runs the same steps for an explicit target: `LINK_BC_TO_BC`,
//! `CODEGEN_BC_TO_RELOCATABLE` with `-O3` (what HIPRTC passes; without it the object is 7-20x larger), then
//! `LINK_RELOCATABLE_TO_EXECUTABLE`; the result was byte-identical to HIPRTC's when HIPRTC had a device.
//! One path for both cases means one behaviour to test, and every failure carries lld's log
//! ([`Error::log`](crate::Error::log)).
//!
//! comgr does not compare the ISA it is told with the bitcode's own target, so each bitcode input's target
//! triple and `target-cpu` are read first and a mismatch is refused ([`Error::TargetMismatch`]).
//!
//! # Versions
//!
//! Bitcode comes from `hiprtcGetBitcode`, which appeared with the HIPRTC linker API in ROCm 5.3. Built
//! against older HIPRTC headers (Debian bookworm's 5.2.3), and on HIP's NVIDIA platform, the linker gives
//! [`Error::NotSupported`].

use crate::error::{Error, Result};
use std::path::Path;

/// What a piece of linker input is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkInput {
    /// LLVM bitcode (from `compile_bitcode`, or clang's `-fgpu-rdc -emit-llvm`), for this link's target.
    Bitcode,
    /// A relocatable AMDGPU ELF object, for this link's target.
    Object,
}

pub(crate) fn not_supported(what: &'static str) -> Error {
    Error::NotSupported {
        what,
        reason: "this HIPRTC has no bitcode or linker API; they appeared in ROCm 5.3 (AMD platform only)",
    }
}

/// `strings`, owned, or [`Error::InteriorNul`] naming `what` for the first holding a NUL byte.
fn nul_free<S: AsRef<str>>(
    what: &'static str,
    strings: impl IntoIterator<Item = S>,
) -> Result<Vec<String>> {
    strings
        .into_iter()
        .map(|s| {
            let s = s.as_ref();
            if s.contains('\0') {
                Err(Error::InteriorNul {
                    what,
                    value: s.to_string(),
                })
            } else {
                Ok(s.to_string())
            }
        })
        .collect()
}

/// A link in progress: inputs collected in memory, linked by [`complete`](Self::complete).
#[derive(Debug)]
pub struct Linker {
    arch: String,
    options: Vec<String>,
    inputs: Vec<(LinkInput, String, Vec<u8>)>,
}

impl Linker {
    /// A link for the current device's architecture (its full `gcnArchName`), with code-generation options
    /// (`-O3` is always passed first; yours follow and may override it). Without a usable device this is
    /// [`Error::ArchRequired`]: use [`for_arch`](Self::for_arch).
    ///
    /// # Errors
    ///
    /// [`Error::NotSupported`] without the linker (HIPRTC before 5.3, HIP's NVIDIA platform);
    /// [`Error::InteriorNul`] for a NUL byte in an option; [`Error::ArchRequired`] without a usable
    /// device; and what [`for_arch`](Self::for_arch) returns for the device's architecture.
    ///
    /// ```no_run
    /// # fn f(bitcode: &[u8]) -> hip::Result<()> {
    /// let _device = hip::Device::first()?; // current on this thread: the link targets it
    /// let mut linker = hip::rtc::Linker::new(["-O3"])?;
    /// linker.add_data(hip::rtc::LinkInput::Bitcode, bitcode, "kernels")?;
    /// let code_object = linker.complete()?;
    /// # Ok(()) }
    /// ```
    pub fn new<S: AsRef<str>>(options: impl IntoIterator<Item = S>) -> Result<Linker> {
        Self::supported()?;
        let options = nul_free("linker option", options)?;
        Self::for_arch(&super::current_device_arch()?, options)
    }

    /// A link for an explicit architecture (`gfx90a`, `gfx90a:sramecc+:xnack-`); needs no GPU.
    ///
    /// # Errors
    ///
    /// [`Error::NotSupported`] without the linker (HIPRTC before 5.3, HIP's NVIDIA platform);
    /// [`Error::InteriorNul`] for a NUL byte in `arch` or an option; [`Error::UnknownArch`] or
    /// [`Error::UnsupportedArchFeature`] for a target this HIPRTC does not know;
    /// [`Error::InvalidOption`] for an empty option.
    ///
    /// ```no_run
    /// use hip::rtc::{LinkInput, Linker, ProgramBuilder};
    ///
    /// let arch = "gfx90a";
    /// let kernel = ProgramBuilder::new(
    ///     r#"__device__ float twice(float);
    ///        extern "C" __global__ void k(float* x) { x[threadIdx.x] = twice(x[threadIdx.x]); }"#,
    /// )
    /// .arch(arch)
    /// .compile_bitcode()?;
    /// let helper = ProgramBuilder::new("__device__ float twice(float x) { return 2 * x; }")
    ///     .arch(arch)
    ///     .compile_bitcode()?;
    /// let mut linker = Linker::for_arch(arch, ["-O2"])?;
    /// linker.add_data(LinkInput::Bitcode, kernel.code(), "kernel")?;
    /// linker.add_data(LinkInput::Bitcode, helper.code(), "helper")?;
    /// let code_object = linker.complete()?; // load it with Module::load_data
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn for_arch<S: AsRef<str>>(
        arch: &str,
        options: impl IntoIterator<Item = S>,
    ) -> Result<Linker> {
        Self::supported()?;
        // NUL bytes first: C reads each string only up to its first one.
        nul_free("linker target architecture", [arch])?;
        let options = nul_free("linker option", options)?;
        super::arch::check(arch)?;
        if let Some(o) = options.iter().find(|o| o.is_empty()) {
            return Err(Error::InvalidOption {
                option: o.clone(),
                reason: "linker options must be non-empty",
            });
        }
        Ok(Linker {
            arch: arch.to_string(),
            options,
            inputs: Vec::new(),
        })
    }

    fn supported() -> Result<()> {
        if cfg!(all(hiprtc_linker, hip_platform = "amd")) {
            Ok(())
        } else {
            Err(not_supported("the linker"))
        }
    }

    /// The architecture this link targets.
    pub fn arch(&self) -> &str {
        &self.arch
    }

    /// Add input from memory; `name` names it in errors and in the linker's log. Bitcode built for
    /// another target is refused here.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidOption`] for an empty name, one with a NUL byte, or one another input has;
    /// [`Error::TargetMismatch`] for bitcode built for another target than the link's, and
    /// [`Error::InvalidCodeObject`] for bitcode whose target cannot be read.
    ///
    /// ```no_run
    /// use hip::rtc::{LinkInput, Linker};
    /// # fn f(linker: &mut Linker, bitcode: &[u8], object: &[u8]) -> hip::Result<()> {
    /// linker.add_data(LinkInput::Bitcode, bitcode, "kernels.bc")?;
    /// linker.add_data(LinkInput::Object, object, "helpers.o")?; // a relocatable AMDGPU ELF
    /// # Ok(()) }
    /// ```
    pub fn add_data(&mut self, kind: LinkInput, data: &[u8], name: &str) -> Result<()> {
        if name.is_empty() || name.contains('\0') {
            return Err(Error::InvalidOption {
                option: name.into(),
                reason:
                    "a link input needs a name without NUL bytes (comgr identifies inputs by name)",
            });
        }
        if self.inputs.iter().any(|(_, n, _)| n == name) {
            return Err(Error::InvalidOption {
                option: name.into(),
                reason: "two link inputs have this name",
            });
        }
        if kind == LinkInput::Bitcode {
            super::bitcode::check(name, data, &self.arch)?;
        }
        self.inputs.push((kind, name.to_string(), data.to_vec()));
        Ok(())
    }

    /// Add input from a file (read now; errors name the path).
    ///
    /// # Errors
    ///
    /// [`Error::Io`] naming the path when the file cannot be read; otherwise what
    /// [`add_data`](Self::add_data) returns (the input is named by the file name).
    ///
    /// ```no_run
    /// use hip::rtc::{LinkInput, Linker};
    /// use std::path::Path;
    /// # fn f(linker: &mut Linker) -> hip::Result<()> {
    /// // Built with `clang -x hip --offload-arch=gfx90a -fgpu-rdc -emit-llvm -c --offload-device-only`.
    /// linker.add_file(LinkInput::Bitcode, Path::new("math.bc"))?;
    /// # Ok(()) }
    /// ```
    pub fn add_file(&mut self, kind: LinkInput, path: &Path) -> Result<()> {
        let data = std::fs::read(path).map_err(|e| Error::Io {
            what: "read link input",
            path: path.to_path_buf(),
            source: e,
        })?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string());
        self.add_data(kind, &data, &name)
    }

    /// Link everything into one executable code object (an AMDGPU ELF for [`arch`](Self::arch)).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidOption`] without a bitcode input; [`Error::LibraryNotFound`] where comgr
    /// (`libamd_comgr`, opened at run time) could not be opened; [`Error::Comgr`] with the linker's log
    /// for a failed step (an undefined symbol, a bad option); [`Error::NotSupported`] without the
    /// linker.
    ///
    /// ```no_run
    /// # fn f(linker: hip::rtc::Linker, device: &hip::Device) -> hip::Result<()> {
    /// let code_object = linker.complete()?;
    /// let module = hip::Module::load_data(device, &code_object)?;
    /// # Ok(()) }
    /// ```
    pub fn complete(self) -> Result<Vec<u8>> {
        if !self.inputs.iter().any(|(k, _, _)| *k == LinkInput::Bitcode) {
            return Err(Error::InvalidOption {
                option: String::new(),
                reason: "nothing to link: add at least one bitcode input",
            });
        }
        imp::link(&self.arch, &self.options, &self.inputs)
    }
}

#[cfg(all(hiprtc_linker, hip_platform = "amd"))]
mod imp {
    use super::LinkInput;
    use crate::error::{Error, Result};
    use crate::rtc::comgr::{self, ActionInfo, Data, DataSet};
    use hiprtc_sys::comgr as sys;
    use std::ffi::CString;

    pub(super) fn link(
        arch: &str,
        options: &[String],
        inputs: &[(LinkInput, String, Vec<u8>)],
    ) -> Result<Vec<u8>> {
        let c = comgr::lib()?;
        // comgr runs inside HIPRTC too; keep the lock HIPRTC calls take (see rtc::hiprtc_lock).
        let _serialised = crate::rtc::hiprtc_lock();
        let info = ActionInfo::new(c, &format!("amdgcn-amd-amdhsa--{arch}"))?;
        let bitcode = DataSet::new(c)?;
        for (_, name, bytes) in inputs.iter().filter(|(k, _, _)| *k == LinkInput::Bitcode) {
            bitcode.add(&Data::new(c, sys::AMD_COMGR_DATA_KIND_BC, bytes, name)?)?;
        }
        let linked = info.run(
            "amd_comgr_do_action(LINK_BC_TO_BC)",
            sys::AMD_COMGR_ACTION_LINK_BC_TO_BC,
            &bitcode,
        )?;
        let mut codegen = vec![CString::new("-O3").expect("no NUL")];
        for o in options {
            codegen.push(CString::new(o.as_str()).map_err(|_| Error::InteriorNul {
                what: "linker option",
                value: o.clone(),
            })?);
        }
        info.set_options(&codegen)?;
        let relocatable = info.run(
            "amd_comgr_do_action(CODEGEN_BC_TO_RELOCATABLE)",
            sys::AMD_COMGR_ACTION_CODEGEN_BC_TO_RELOCATABLE,
            &linked,
        )?;
        for (_, name, bytes) in inputs.iter().filter(|(k, _, _)| *k == LinkInput::Object) {
            relocatable.add(&Data::new(
                c,
                sys::AMD_COMGR_DATA_KIND_RELOCATABLE,
                bytes,
                name,
            )?)?;
        }
        info.set_options(&[])?;
        let executable = info.run(
            "amd_comgr_do_action(LINK_RELOCATABLE_TO_EXECUTABLE)",
            sys::AMD_COMGR_ACTION_LINK_RELOCATABLE_TO_EXECUTABLE,
            &relocatable,
        )?;
        let out = executable.all(sys::AMD_COMGR_DATA_KIND_EXECUTABLE)?;
        match out.first() {
            Some(data) => data.bytes(),
            None => Err(Error::Comgr {
                call: "amd_comgr_do_action(LINK_RELOCATABLE_TO_EXECUTABLE)",
                status: 0,
                message: "the link produced no executable".into(),
                log: Some(executable.log()),
            }),
        }
    }
}

#[cfg(not(all(hiprtc_linker, hip_platform = "amd")))]
mod imp {
    use super::LinkInput;
    use crate::error::Result;

    pub(super) fn link(
        _: &str,
        _: &[String],
        _: &[(LinkInput, String, Vec<u8>)],
    ) -> Result<Vec<u8>> {
        Err(super::not_supported("the linker"))
    }
}
