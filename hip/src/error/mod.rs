//! Errors: every HIP and HIPRTC failure keeps its raw code, its name and the runtime's message, and also
//! answers with a DTL-style [`Status`].
//!
//! # Status table
//!
//! HIP and HIPRTC failures map to [`Status::HipError`] (520), except where DTL has a sharper code:
//!
//! | raw code | status |
//! | --- | --- |
//! | `hipErrorOutOfMemory` (2), `HIPRTC_ERROR_OUT_OF_MEMORY` (1) | `out_of_memory` (202) |
//! | `hipErrorInvalidDevicePointer` (17) | `invalid_pointer` (203) |
//! | `hipErrorInvalidValue` (1), `hipErrorInvalidConfiguration` (9), `hipErrorInvalidPitchValue` (12), `hipErrorInvalidMemcpyDirection` (21), `hipErrorInvalidDevice` (101), `HIPRTC_ERROR_INVALID_INPUT` (3), `HIPRTC_ERROR_INVALID_PROGRAM` (4), `HIPRTC_ERROR_INVALID_OPTION` (5), `HIPRTC_ERROR_COMPILATION` (6: the source did not compile; the log says why), `HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID` (10) | `invalid_argument` (410) |
//! | `hipErrorInvalidSymbol` (13), `hipErrorFileNotFound` (301), `hipErrorNotFound` (500) | `not_found` (1) |
//! | `hipErrorNoDevice` (100) | `backend_not_available` (501) (from the device count: [`Error::NoDevice`]) |
//! | `hipErrorNotInitialized` (3), `hipErrorInsufficientDriver` (35) | `backend_init_failed` (502) |
//! | `hipErrorNotSupported` (801), `hipErrorPeerAccessUnsupported` (217) | `not_supported` (420) |
//! | `hipErrorDeinitialized` (4), `hipErrorPeerAccessAlreadyEnabled` (704), `hipErrorPeerAccessNotEnabled` (705), `hipErrorContextIsDestroyed` (709), `HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION` (8), `HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION` (9) | `invalid_state` (902) |
//! | `HIPRTC_ERROR_INTERNAL_ERROR` (11) | `internal_error` (900) |
//! | `hipErrorUnknown` (999) | `unknown_error` (999) |
//! | a refused graph update ([`Error::GraphUpdate`]) | its code's status, as above |
//! | every other code, known or not | `hip_error` (520) |
//!
//! Errors the wrapper detects itself:
//!
//! | variant | status |
//! | --- | --- |
//! | [`Error::LengthMismatch`], [`Error::GlobalSize`] | `extent_mismatch` (405) |
//! | [`Error::OutOfBounds`] | `out_of_bounds` (401) |
//! | [`Error::InteriorNul`], [`Error::InvalidCodeObject`], [`Error::InvalidLaunch`], [`Error::DeviceOutOfRange`], [`Error::ArchRequired`], [`Error::UnknownArch`], [`Error::UnsupportedArchFeature`], [`Error::DeviceMismatch`], [`Error::InvalidOption`], [`Error::TimingDisabled`], [`Error::TooManyArguments`], [`Error::ArgumentMismatch`], [`Error::InvalidArgument`] | `invalid_argument` (410) |
//! | [`Error::UnknownName`], [`Error::NoMatchingDevice`] | `not_found` (1) |
//! | [`Error::AllocationTooLarge`] | `allocation_failed` (201) |
//! | [`Error::NotSupported`] | `not_supported` (420) |
//! | [`Error::UntrackedCopy`], [`Error::EventNotRecorded`] | `invalid_state` (902) |
//! | [`Error::ModuleFile`] | the status of the error it wraps |
//! | [`Error::TargetMismatch`] | `invalid_argument` (410) |
//! | [`Error::Comgr`] (comgr, HIP's code object manager) | `hip_error` (520) |
//! | [`Error::LibraryNotFound`] | `backend_not_available` (501) |
//! | [`Error::NoDevice`] (no usable GPU: no device, no driver, an old one) | `backend_not_available` (501), whatever its raw code |
//! | [`Error::Rendezvous`] (an id exchange, [`crate::bootstrap`]) | by failure: see [`RendezvousFailure::status`] |
//! | [`Error::Io`] | `not_found` (1) for a missing file, else `operation_failed` (600) |
//! | [`Error::Nccl`] (RCCL / NCCL, feature `rccl`) | `nccl_error` (540), every code |
//! | [`Error::Blas`] (hipBLAS, feature `blas`; hipBLASLt, feature `blaslt`) | by code: see [`BlasErrorCode::status`] |
//! | [`Error::Rand`] (hipRAND, feature `rand`) | by code: see [`RandErrorCode::status`] |
//! | [`Error::Fft`] (hipFFT, feature `fft`) | by code: see [`FftErrorCode::status`] |
//! | [`Error::Solver`] (hipSOLVER, feature `solver`) | by code: see [`SolverErrorCode::status`] |
//! | [`Error::NoSolution`] (a solver's `info`) | `operation_failed` (600); `invalid_argument` (410) for a refused argument |
//! | [`Error::Sparse`] (hipSPARSE, feature `sparse`) | by code: see [`SparseErrorCode::status`] |

mod codes;
mod graph_update;
mod loading;
mod no_device;
mod rendezvous;
mod report;
mod solver_codes;
mod status;

#[cfg_attr(
    not(any(
        feature = "blas",
        feature = "rand",
        feature = "fft",
        feature = "solver",
        feature = "sparse",
        feature = "blaslt"
    )),
    allow(unused_imports)
)]
pub(crate) use codes::{math_library, math_status, MathLibrary};
pub use codes::{
    BlasErrorCode, FftErrorCode, HipErrorCode, NcclErrorCode, RandErrorCode, RtcErrorCode,
};
pub use graph_update::{FailedGraphNode, GraphUpdateFailure};
pub use no_device::NoDeviceReason;
pub use rendezvous::RendezvousFailure;
pub use report::Report;
pub use solver_codes::{SolverErrorCode, SolverFailure, SparseErrorCode};
pub use status::Status;

use hip_sys::hipError_t;
use hiprtc_sys::hiprtcResult;
use loading::not_loaded;
use std::ffi::CStr;

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Every failure this crate reports.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A HIP runtime call failed.
    #[error("{call} failed: {code}: {message}")]
    Hip {
        /// The HIP function that failed, e.g. `"hipMalloc"`.
        call: &'static str,
        /// The raw code it returned.
        code: HipErrorCode,
        /// The runtime's `hipGetErrorString` for the code.
        message: String,
    },
    /// HIP refused to give an executable graph new parameters: a whole-graph update
    /// ([`GraphExec::update`](crate::GraphExec::update), `hipGraphExecUpdate`) or one node's
    /// (`GraphExec::set_*_node_params`). The executable graph is unchanged and still launches what it
    /// had. The details say HIP's update result and the node it failed at, as fields.
    #[error("{call} failed: {code}: {failure}")]
    GraphUpdate {
        /// The HIP function that refused, e.g. `"hipGraphExecUpdate"`.
        call: &'static str,
        /// The raw code it returned (`hipErrorGraphExecUpdateFailure` for a whole-graph update).
        code: HipErrorCode,
        /// Its message, update result and node (boxed: it keeps `Error` small).
        failure: Box<GraphUpdateFailure>,
    },
    /// This machine has no usable GPU: no device, no working driver, or a driver older than the runtime
    /// ([`NoDeviceReason`]). Every such answer of the runtime (`hipErrorNoDevice`,
    /// `hipErrorInsufficientDriver`, ...) is this one error, said in words with what to check and without
    /// naming a call the user never made; the raw code is kept in `code`. Status `backend_not_available`
    /// whatever the code. Ask for it with [`Error::is_no_device`] (or
    /// [`Device::first_usable`](crate::Device::first_usable)).
    #[error("{}", no_device::message(*.code, .platform, *.reason))]
    NoDevice {
        /// The raw code the runtime returned (`hipErrorNoDevice`, `hipErrorInsufficientDriver`, ...).
        code: HipErrorCode,
        /// The platform this build is for: `"amd"` or `"nvidia"`.
        platform: &'static str,
        /// What is wrong: no device, no driver, an old driver, a driver that failed.
        reason: NoDeviceReason,
    },
    /// A HIPRTC call failed. Compilation and link failures carry the full log.
    #[error("{call} failed: {code}{}", log_suffix(.log))]
    Rtc {
        /// The HIPRTC function that failed, e.g. `"hiprtcCompileProgram"`.
        call: &'static str,
        /// The raw code it returned.
        code: RtcErrorCode,
        /// The compiler's or linker's log, where there is one.
        log: Option<String>,
    },
    /// A kernel or module global of this name does not exist in the module.
    #[error("no {kind} named `{name}` in the module ({code})")]
    UnknownName {
        /// `"kernel"` or `"global"`.
        kind: &'static str,
        /// The name that was looked up.
        name: String,
        /// What HIP returned.
        code: HipErrorCode,
    },
    /// Two lengths that must match do not.
    #[error("length mismatch in {what}: expected {expected} elements, got {actual}")]
    LengthMismatch {
        /// The operation, e.g. `"copy_from_host"`.
        what: &'static str,
        /// The length the destination (or the first operand) has.
        expected: usize,
        /// The length that was given.
        actual: usize,
    },
    /// A range does not fit inside a buffer.
    #[error("range {start}..{end} is out of bounds for a buffer of {len} elements")]
    OutOfBounds {
        /// Start of the requested range.
        start: usize,
        /// End of the requested range.
        end: usize,
        /// Length of the buffer.
        len: usize,
    },
    /// An allocation whose size in bytes does not fit in `usize`.
    #[error("cannot allocate {elements} elements of {elem_bytes} bytes: the size overflows usize")]
    AllocationTooLarge {
        /// Elements asked for.
        elements: usize,
        /// Size of one element.
        elem_bytes: usize,
    },
    /// A string passed to HIP contains a NUL byte.
    #[error("{what} contains a NUL byte: {value:?}")]
    InteriorNul {
        /// What the string was (kernel name, option, source, ...).
        what: &'static str,
        /// The string.
        value: String,
    },
    /// Bytes given to `Module::load_data` that are not a complete code object.
    #[error("invalid code object: {0}")]
    InvalidCodeObject(String),
    /// A launch configuration the device cannot run.
    #[error("invalid launch configuration: {0}")]
    InvalidLaunch(String),
    /// No device, or more than one, is the one [`Device::select`](crate::Device::select) was asked for.
    #[error("{}", no_matching_device_message(.spec, *.matched, .present))]
    NoMatchingDevice {
        /// What the user wrote (an ordinal, `GPU-<uuid>`, a PCI bus id).
        spec: String,
        /// How many devices matched: 0, or more than one (a UUID two devices share).
        matched: usize,
        /// Each device present: `ordinal: name, GPU-<uuid>, bus id`.
        present: Vec<String>,
    },
    /// A device ordinal past the number of devices.
    #[error("device {ordinal} does not exist: {count} HIP device(s) present")]
    DeviceOutOfRange {
        /// The ordinal asked for.
        ordinal: usize,
        /// How many devices there are.
        count: usize,
    },
    /// HIPRTC needs a target architecture and none could be found.
    #[error("no target architecture: {reason}; pass one with ProgramBuilder::arch (e.g. \"gfx90a\"), which becomes --gpu-architecture=")]
    ArchRequired {
        /// Why the current device's architecture could not be used.
        reason: String,
    },
    /// A target architecture this HIPRTC does not know (checked before compiling: HIPRTC 5.2 aborts on one).
    #[error("unknown target architecture `{arch}`; this HIPRTC knows: {known}")]
    UnknownArch {
        /// The architecture asked for.
        arch: String,
        /// The processors the installed compiler supports, comma-separated.
        known: String,
    },
    /// A target id whose processor exists but lacks a feature it asks for (`gfx1030:xnack+`), or repeats
    /// one; checked against comgr's ISA metadata before compiling (HIPRTC 5.2 aborts on one).
    #[error("target `{arch}`: feature `{feature}` is not supported by this processor or repeated; it supports: {supported}")]
    UnsupportedArchFeature {
        /// The target id asked for.
        arch: String,
        /// The feature refused, as written (`xnack+`).
        feature: String,
        /// The features the processor supports, per comgr (`"none"` when it has none).
        supported: String,
    },
    /// A compiler option this crate refuses before HIPRTC sees it.
    #[error("invalid compiler option `{option}`: {reason}")]
    InvalidOption {
        /// The option.
        option: String,
        /// Why.
        reason: &'static str,
    },
    /// A stream and the memory or event it was given are on different devices.
    #[error(
        "{what}: the stream is on device {stream} but the memory or event is on device {other}"
    )]
    DeviceMismatch {
        /// The operation, e.g. `"copy_to_host_async"`.
        what: &'static str,
        /// The stream's device.
        stream: usize,
        /// The other operand's device.
        other: usize,
    },
    /// A pinned buffer with a copy queued that could not be tracked (recording its event and synchronising
    /// its stream both failed): its contents are never shown, and it is leaked rather than freed.
    #[error("a copy using this pinned buffer could not be tracked (the device failed); the buffer is unusable and will be leaked")]
    UntrackedCopy,
    /// A module global's size in the module differs from the size of the Rust type asked for.
    #[error("module global `{name}` is {module_bytes} bytes in the module, but the type asked for is {type_bytes} bytes")]
    GlobalSize {
        /// The global's name.
        name: String,
        /// Its size in the module, in bytes.
        module_bytes: usize,
        /// `size_of` the Rust type, in bytes.
        type_bytes: usize,
    },
    /// Loading a module file failed; the path and the underlying error.
    #[error("cannot load module file `{}`: {source}", path.display())]
    ModuleFile {
        /// The file.
        path: std::path::PathBuf,
        /// What went wrong (a HIP error, or a path with a NUL byte).
        source: Box<Error>,
    },
    /// An RCCL (or NCCL) call failed (the `rccl` module, feature `rccl`).
    #[error("{call} failed: {code}: {message}")]
    Nccl {
        /// The function that failed, e.g. `"ncclAllReduce"`.
        call: &'static str,
        /// The raw `ncclResult_t` it returned.
        code: NcclErrorCode,
        /// The library's `ncclGetErrorString` for the code, and its last error detail where it has one.
        message: String,
    },
    /// A hipBLAS call failed (the `blas` module, feature `blas`), or a hipBLASLt call (the `blaslt`
    /// module, feature `blaslt`: hipBLASLt returns hipBLAS's `hipblasStatus_t`).
    #[error("{call} failed: {code}")]
    Blas {
        /// The function that failed, e.g. `"hipblasSgemm"` or `"hipblasLtMatmul"`.
        call: &'static str,
        /// The raw `hipblasStatus_t` it returned.
        code: BlasErrorCode,
    },
    /// A hipRAND call failed (the `rand` module, feature `rand`).
    #[error("{call} failed: {code}")]
    Rand {
        /// The function that failed, e.g. `"hiprandGenerateNormal"`.
        call: &'static str,
        /// The raw `hiprandStatus_t` it returned.
        code: RandErrorCode,
    },
    /// A hipFFT call failed (the `fft` module, feature `fft`).
    #[error("{call} failed: {code}")]
    Fft {
        /// The function that failed, e.g. `"hipfftPlanMany"`.
        call: &'static str,
        /// The raw `hipfftResult` it returned.
        code: FftErrorCode,
    },
    /// A hipSOLVER call failed (the `solver` module, feature `solver`).
    #[error("{call} failed: {code}")]
    Solver {
        /// The function that failed, e.g. `"hipsolverDpotrf"`.
        call: &'static str,
        /// The raw `hipsolverStatus_t` it returned.
        code: SolverErrorCode,
    },
    /// A factorization or solver ran, and its `info` result says the input has no answer of the kind
    /// asked for (`solver::Info::check`): not positive definite, singular, not converged.
    #[error("{call}: {failure}{}", batch_note(*.batch))]
    NoSolution {
        /// The function whose `info` said so, e.g. `"hipsolverDpotrf"`.
        call: &'static str,
        /// Which problem of a batched call (0-based), `None` for a single one.
        batch: Option<usize>,
        /// What `info` said.
        failure: SolverFailure,
    },
    /// A hipSPARSE call failed (the `sparse` module, feature `sparse`).
    #[error("{call} failed: {code}")]
    Sparse {
        /// The function that failed, e.g. `"hipsparseSpMV"`.
        call: &'static str,
        /// The raw `hipsparseStatus_t` it returned.
        code: SparseErrorCode,
    },
    /// An argument this crate refuses before HIP or HIPRTC sees it.
    #[error("invalid {what} {value:?}: {reason}")]
    InvalidArgument {
        /// What the argument is (`"name expression"`, `"stream priority"`, ...).
        what: &'static str,
        /// The value given.
        value: String,
        /// Why it is refused, with the accepted range where there is one.
        reason: String,
    },
    /// Elapsed time was asked of an event that was never recorded.
    #[error(
        "event elapsed time: the {which} event was never recorded; record both with Event::record"
    )]
    EventNotRecorded {
        /// `"start"` or `"end"`.
        which: &'static str,
    },
    /// Elapsed time was asked of an event created without timing.
    #[error("event timing is disabled: create both events with Event::with_timing")]
    TimingDisabled,
    /// More kernel arguments than a launch can take.
    #[error("too many kernel arguments: at most {max}")]
    TooManyArguments {
        /// The limit.
        max: usize,
    },
    /// Launch arguments that do not match the kernel's signature in its code object (see
    /// [`crate::code_object`]); the launch was not sent.
    #[error("{}", argument_mismatch_message(.kernel, *.index, *.count, .parameter, .expected, .got))]
    ArgumentMismatch {
        /// The kernel's name.
        kernel: String,
        /// Index (from 0) of the first argument (or the missing one) that does not match; the message
        /// counts from 1 ("argument 3 of 4").
        index: usize,
        /// How many explicit parameters the kernel has.
        count: usize,
        /// The parameter: its source name and type where the metadata has them (`` `n`: unsigned int``),
        /// its type alone for PTX (whose names are `<kernel>_param_<i>`); empty past the last one.
        parameter: String,
        /// What the parameter takes (kind and size), or the expected count.
        expected: String,
        /// What was passed.
        got: String,
    },
    /// The installed HIP lacks something.
    #[error("not supported by this HIP: {what} ({reason})")]
    NotSupported {
        /// The missing capability.
        what: &'static str,
        /// Why, e.g. which version introduced it.
        reason: &'static str,
    },
    /// A comgr call (AMD's code object manager, which the [`Linker`](crate::rtc::Linker) links with)
    /// failed. Link failures carry the linker's log (e.g. `ld.lld: error: undefined hidden symbol: helper`).
    #[error("{call} failed: comgr status {status} ({message}){}", log_suffix(.log))]
    Comgr {
        /// The comgr call or action that failed, e.g. `"amd_comgr_do_action(LINK_RELOCATABLE_TO_EXECUTABLE)"`.
        call: &'static str,
        /// The raw `amd_comgr_status_t`.
        status: u32,
        /// comgr's text for the status.
        message: String,
        /// The action's log, where there is one.
        log: Option<String>,
    },
    /// A library the call needs could not be opened.
    #[error("{library} could not be loaded; tried: {}; install it ({install})", .tried.join("; "))]
    LibraryNotFound {
        /// The library, e.g. `"comgr (libamd_comgr)"`.
        library: &'static str,
        /// Each path or name tried, with why it failed.
        tried: Vec<String>,
        /// What to install.
        install: &'static str,
    },
    /// A file could not be read or written.
    #[error("cannot {what} {}: {source}", .path.display())]
    Io {
        /// What was being done, e.g. `"read link input"`.
        what: &'static str,
        /// The file.
        path: std::path::PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The out-of-band exchange of a communicator's id ([`crate::bootstrap`]) failed: a rank that never
    /// arrived, two ranks that disagree, a port in use, an address that cannot be reached, a peer lost
    /// mid-exchange.
    #[error("rendezvous at {addr} (key {key:?}, rank {rank} of {world_size}): {failure}")]
    Rendezvous {
        /// Rank 0's address, `host:port`.
        addr: String,
        /// The exchange's key (one per communicator).
        key: String,
        /// This process's rank.
        rank: usize,
        /// This process's world size.
        world_size: usize,
        /// What went wrong (boxed: it keeps `Error` small).
        failure: Box<RendezvousFailure>,
    },
    /// A wait the caller bounded ran out: the work was still not done after `waited` (e.g.
    /// `rccl::Comm::wait` with a peer that hangs).
    #[error("{what}: still not done after {waited:?}")]
    Timeout {
        /// What was waited for.
        what: &'static str,
        /// How long.
        waited: std::time::Duration,
    },
    /// Linker input built for another target than the link's.
    #[error("link input `{input}` targets {found}, but the link targets {expected}")]
    TargetMismatch {
        /// The input's name.
        input: String,
        /// The target the input was built for (processor or triple).
        found: String,
        /// The link's target.
        expected: String,
    },
}

/// What `Error::NoMatchingDevice` says: what was asked, and every device present to pick from.
fn no_matching_device_message(spec: &str, matched: usize, present: &[String]) -> String {
    let what = if matched == 0 {
        format!("no device matches `{spec}`")
    } else {
        format!("{matched} devices match `{spec}`: name one by its PCI bus id")
    };
    format!(
        "{what}; the devices present (ordinal: name, UUID, PCI bus id): {}",
        present.join("; ")
    )
}

/// What `Error::ArgumentMismatch` says, counting arguments from 1.
fn argument_mismatch_message(
    kernel: &str,
    index: usize,
    count: usize,
    parameter: &str,
    expected: &str,
    got: &str,
) -> String {
    if index >= count {
        return format!("kernel `{kernel}` takes {expected}, got {got}");
    }
    let parameter = if parameter.is_empty() {
        String::new()
    } else {
        format!(" ({parameter})")
    };
    format!(
        "kernel `{kernel}` argument {} of {count}{parameter}: expected {expected}, got {got}",
        index + 1
    )
}

fn log_suffix(log: &Option<String>) -> String {
    match log {
        Some(l) if !l.trim().is_empty() => format!("\n{}", l.trim_end()),
        _ => String::new(),
    }
}

/// [`Error::Hip`]'s message for a code the headers name when the runtime gives no text for it: its
/// `hipGetErrorString` answers null (with `dynamic-loading`, when no runtime could be loaded).
const NO_RUNTIME_MESSAGE: &str = "the runtime gives no message for it (is a HIP runtime loaded?)";

/// [`Error::Hip`]'s message: the runtime's text for a code (`runtime`, empty where it gave none), for a
/// code the headers list or not (`listed`).
fn hip_message(listed: bool, runtime: String) -> String {
    // The runtime describes any code it does not know as "hipErrorUnknown" or "unknown error", which
    // reads as code 999: say plainly that this code is not one the headers list.
    let generic = runtime.is_empty()
        || runtime == "hipErrorUnknown"
        || runtime.eq_ignore_ascii_case("unknown error");
    match (listed, generic) {
        (true, _) if runtime.is_empty() => NO_RUNTIME_MESSAGE.to_string(),
        (true, _) => runtime,
        (false, true) => "a code this HIP's headers do not list".to_string(),
        (false, false) => {
            format!("a code this HIP's headers do not list; the runtime says: {runtime}")
        }
    }
}

impl Error {
    /// The DTL-style status of this error (see the [module table](self)).
    pub fn status(&self) -> Status {
        match self {
            Error::Hip { code, .. } | Error::GraphUpdate { code, .. } => code.status(),
            Error::NoDevice { .. } => Status::BackendNotAvailable,
            Error::Rtc { code, .. } => code.status(),
            Error::UnknownName { .. } | Error::NoMatchingDevice { .. } => Status::NotFound,
            Error::LengthMismatch { .. } => Status::ExtentMismatch,
            Error::OutOfBounds { .. } => Status::OutOfBounds,
            Error::AllocationTooLarge { .. } => Status::AllocationFailed,
            Error::InteriorNul { .. }
            | Error::InvalidLaunch(_)
            | Error::InvalidCodeObject(_)
            | Error::DeviceOutOfRange { .. }
            | Error::ArchRequired { .. }
            | Error::UnknownArch { .. }
            | Error::UnsupportedArchFeature { .. }
            | Error::DeviceMismatch { .. }
            | Error::InvalidOption { .. }
            | Error::TimingDisabled
            | Error::InvalidArgument { .. }
            | Error::TooManyArguments { .. }
            | Error::ArgumentMismatch { .. }
            | Error::TargetMismatch { .. } => Status::InvalidArgument,
            Error::GlobalSize { .. } => Status::ExtentMismatch,
            Error::EventNotRecorded { .. } => Status::InvalidState,
            Error::ModuleFile { source, .. } => source.status(),
            Error::NotSupported { .. } => Status::NotSupported,
            Error::UntrackedCopy => Status::InvalidState,
            Error::Comgr { .. } => Status::HipError,
            Error::LibraryNotFound { .. } => Status::BackendNotAvailable,
            Error::Nccl { code, .. } => code.status(),
            Error::Blas { code, .. } => code.status(),
            Error::Rand { code, .. } => code.status(),
            Error::Fft { code, .. } => code.status(),
            Error::Solver { code, .. } => code.status(),
            Error::NoSolution { failure, .. } => failure.status(),
            Error::Sparse { code, .. } => code.status(),
            Error::Rendezvous { failure, .. } => failure.status(),
            Error::Timeout { .. } => Status::OperationFailed,
            Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                Status::NotFound
            }
            Error::Io { .. } => Status::OperationFailed,
        }
    }

    /// Whether this error means "this machine has no usable GPU" ([`Error::NoDevice`]: no device, no
    /// working driver, or one too old), the answer a program that can do without a GPU carries on
    /// after. A library that could not be loaded at all ([`Error::LibraryNotFound`], `dynamic-loading`)
    /// is not: the program's deployment lacks something it needs.
    pub fn is_no_device(&self) -> bool {
        matches!(self, Error::NoDevice { .. })
    }

    /// The raw `hipError_t`, for a HIP failure.
    pub fn hip_code(&self) -> Option<HipErrorCode> {
        match self {
            Error::Hip { code, .. }
            | Error::GraphUpdate { code, .. }
            | Error::UnknownName { code, .. }
            | Error::NoDevice { code, .. } => Some(*code),
            Error::ModuleFile { source, .. } => source.hip_code(),
            _ => None,
        }
    }

    /// The raw `hiprtcResult`, for a HIPRTC failure.
    pub fn rtc_code(&self) -> Option<RtcErrorCode> {
        match self {
            Error::Rtc { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// The raw `ncclResult_t`, for an RCCL / NCCL failure.
    pub fn nccl_code(&self) -> Option<NcclErrorCode> {
        match self {
            Error::Nccl { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// The raw `hipblasStatus_t`, for a hipBLAS failure.
    pub fn blas_code(&self) -> Option<BlasErrorCode> {
        match self {
            Error::Blas { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// The raw `hiprandStatus_t`, for a hipRAND failure.
    pub fn rand_code(&self) -> Option<RandErrorCode> {
        match self {
            Error::Rand { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// The raw `hipfftResult`, for a hipFFT failure.
    pub fn fft_code(&self) -> Option<FftErrorCode> {
        match self {
            Error::Fft { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// The raw `hipsolverStatus_t`, for a hipSOLVER failure.
    pub fn solver_code(&self) -> Option<SolverErrorCode> {
        match self {
            Error::Solver { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// The raw `hipsparseStatus_t`, for a hipSPARSE failure.
    pub fn sparse_code(&self) -> Option<SparseErrorCode> {
        match self {
            Error::Sparse { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// The compile or link log, for a HIPRTC or comgr failure that has one.
    pub fn log(&self) -> Option<&str> {
        match self {
            Error::Rtc { log, .. } | Error::Comgr { log, .. } => log.as_deref(),
            _ => None,
        }
    }

    /// The error for a raw `hipError_t` returned by `call`, with the runtime's message.
    pub fn from_hip(call: &'static str, code: hipError_t) -> Error {
        if let Some(e) = not_loaded(call, code.0) {
            return e;
        }
        // SAFETY: hipGetErrorString takes any value and returns a static C string, or null (an unknown
        // code on some runtimes, and with `dynamic-loading` when no runtime could be loaded).
        let ptr = unsafe { hip_sys::hipGetErrorString(code) };
        let runtime = if ptr.is_null() {
            String::new()
        } else {
            // SAFETY: non-null (checked), and a NUL-terminated string the runtime keeps for the life of
            // the process; it is copied out at once.
            unsafe { CStr::from_ptr(ptr) }
                .to_string_lossy()
                .into_owned()
        };
        Error::Hip {
            call,
            code: HipErrorCode(code.0),
            message: hip_message(HipErrorCode(code.0).name().is_some(), runtime),
        }
    }

    /// The error for a raw `hiprtcResult` returned by `call`.
    pub fn from_rtc(call: &'static str, code: hiprtcResult, log: Option<String>) -> Error {
        if let Some(e) = not_loaded(call, code.0) {
            return e;
        }
        Error::Rtc {
            call,
            code: RtcErrorCode(code.0),
            log,
        }
    }
}

/// ` (problem 3 of the batch)` for a batched call's failure.
fn batch_note(batch: Option<usize>) -> String {
    batch.map_or(String::new(), |b| format!(" (problem {b} of the batch)"))
}

#[cfg(test)]
mod tests;
