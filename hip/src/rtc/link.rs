//! The HIPRTC linker: link bitcode from [`ProgramBuilder::compile_bitcode`](super::ProgramBuilder) (and
//! files) into one code object.
//!
//! The linker API (`hiprtcLinkCreate` and friends) appeared in ROCm 5.3. Built against older HIPRTC headers
//! (Debian bookworm's 5.2.3) every call here returns [`Error::NotSupported`], never a link failure.

use crate::error::{Error, Result};

/// What a piece of linker input is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkInput {
    /// LLVM bitcode (from `compile_bitcode`).
    Bitcode,
    /// An archive of bitcode files.
    Archive,
    /// A relocatable object.
    Object,
}

pub(crate) fn not_supported(what: &'static str) -> Error {
    Error::NotSupported {
        what,
        reason: "this HIPRTC has no linker API; it appeared in ROCm 5.3",
    }
}

#[cfg(not(hiprtc_linker))]
mod imp {
    use super::*;

    /// A HIPRTC link in progress. On this HIPRTC (before 5.3) it cannot be created.
    #[derive(Debug)]
    pub struct Linker {
        _private: (),
    }

    impl Linker {
        /// Start a link with linker options (e.g. `-O3`). Not supported by this HIPRTC.
        pub fn new<S: AsRef<str>>(_options: impl IntoIterator<Item = S>) -> Result<Linker> {
            Err(not_supported("hiprtcLinkCreate"))
        }

        /// Add input from memory.
        pub fn add_data(&mut self, _kind: LinkInput, _data: &[u8], _name: &str) -> Result<()> {
            Err(not_supported("hiprtcLinkAddData"))
        }

        /// Add input from a file.
        pub fn add_file(&mut self, _kind: LinkInput, _path: &std::path::Path) -> Result<()> {
            Err(not_supported("hiprtcLinkAddFile"))
        }

        /// Finish the link and return the code object.
        pub fn complete(self) -> Result<Vec<u8>> {
            Err(not_supported("hiprtcLinkComplete"))
        }
    }
}

#[cfg(hiprtc_linker)]
mod imp {
    use super::*;
    use crate::module::cstring;
    use crate::rtc::result::check;
    use hiprtc_sys as sys;
    use std::ffi::c_void;

    /// A HIPRTC link in progress (`hiprtcLinkState`), destroyed on drop.
    #[derive(Debug)]
    pub struct Linker {
        state: sys::hiprtcLinkState,
    }

    // SAFETY: the link state is owned; HIPRTC does not tie it to a thread.
    unsafe impl Send for Linker {}

    fn input_type(kind: LinkInput) -> sys::hiprtcJITInputType {
        match kind {
            LinkInput::Bitcode => sys::HIPRTC_JIT_INPUT_LLVM_BITCODE,
            LinkInput::Archive => sys::HIPRTC_JIT_INPUT_LLVM_ARCHIVES_OF_BUNDLED_BITCODE,
            LinkInput::Object => sys::HIPRTC_JIT_INPUT_OBJECT,
        }
    }

    impl Linker {
        /// Start a link with linker options (e.g. `-O3`), passed as `HIPRTC_JIT_IR_TO_ISA_OPT_EXT`.
        pub fn new<S: AsRef<str>>(options: impl IntoIterator<Item = S>) -> Result<Linker> {
            let opts = options
                .into_iter()
                .map(|o| cstring("linker option", o.as_ref()))
                .collect::<Result<Vec<_>>>()?;
            let ptrs: Vec<*const std::ffi::c_char> = opts.iter().map(|o| o.as_ptr()).collect();
            let mut keys = Vec::new();
            let mut values: Vec<*mut c_void> = Vec::new();
            if !ptrs.is_empty() {
                keys.push(sys::HIPRTC_JIT_IR_TO_ISA_OPT_EXT);
                values.push(ptrs.as_ptr() as *mut c_void);
                keys.push(sys::HIPRTC_JIT_IR_TO_ISA_OPT_COUNT_EXT);
                values.push(ptrs.len() as *mut c_void);
            }
            let mut state = std::ptr::null_mut();
            check("hiprtcLinkCreate", unsafe {
                sys::hiprtcLinkCreate(
                    keys.len() as u32,
                    keys.as_mut_ptr(),
                    values.as_mut_ptr(),
                    &mut state,
                )
            })?;
            Ok(Linker { state })
        }

        /// Add input from memory.
        pub fn add_data(&mut self, kind: LinkInput, data: &[u8], name: &str) -> Result<()> {
            let name = cstring("link input name", name)?;
            check("hiprtcLinkAddData", unsafe {
                sys::hiprtcLinkAddData(
                    self.state,
                    input_type(kind),
                    data.as_ptr() as *mut c_void,
                    data.len(),
                    name.as_ptr(),
                    0,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                )
            })
        }

        /// Add input from a file.
        pub fn add_file(&mut self, kind: LinkInput, path: &std::path::Path) -> Result<()> {
            let path = cstring("link input path", &path.to_string_lossy())?;
            check("hiprtcLinkAddFile", unsafe {
                sys::hiprtcLinkAddFile(
                    self.state,
                    input_type(kind),
                    path.as_ptr(),
                    0,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                )
            })
        }

        /// Finish the link and return the code object, copied out before the link state is destroyed.
        pub fn complete(self) -> Result<Vec<u8>> {
            let (mut bin, mut size) = (std::ptr::null_mut(), 0usize);
            let rc = unsafe { sys::hiprtcLinkComplete(self.state, &mut bin, &mut size) };
            if rc != sys::HIPRTC_SUCCESS {
                return Err(Error::from_rtc("hiprtcLinkComplete", rc, None));
            }
            Ok(unsafe { std::slice::from_raw_parts(bin as *const u8, size) }.to_vec())
        }
    }

    impl Drop for Linker {
        fn drop(&mut self) {
            let _ = unsafe { sys::hiprtcLinkDestroy(self.state) };
        }
    }
}

pub use imp::Linker;
