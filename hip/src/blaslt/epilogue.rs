//! Element types ([`LtElement`]) and epilogues ([`Epilogue`], [`EpilogueKind`]): what hipBLASLt does to
//! the product before it writes D, with the device buffers each one reads or writes.

use super::sys;
use crate::device::Device;
use crate::memory::{Allocation, DeviceCopy, DeviceMemory, DeviceMemoryMut, DevicePtr};
use std::marker::PhantomData;
use std::sync::Arc;

mod sealed {
    pub trait Sealed {}
}

/// An element type of A, B, C, D, the bias and the auxiliary output: `f32`, [`half::f16`],
/// [`half::bf16`]. Every product computes in `f32` (`HIPBLAS_COMPUTE_32F`) with `f32` `alpha` and `beta`.
pub trait LtElement: DeviceCopy + sealed::Sealed {
    /// The `hipDataType` value (`HIP_R_32F` 0, `HIP_R_16F` 2, `HIP_R_16BF` 14).
    const DATA_TYPE: u32;
    /// The type's name in messages and [`Algo`](super::Algo) keys (`"f32"`).
    const NAME: &'static str;
}

macro_rules! element {
    ($t:ty, $v:expr, $name:expr) => {
        impl sealed::Sealed for $t {}
        impl LtElement for $t {
            const DATA_TYPE: u32 = $v;
            const NAME: &'static str = $name;
        }
    };
}
element!(f32, sys::HIP_R_32F, "f32");
element!(half::f16, sys::HIP_R_16F, "f16");
element!(half::bf16, sys::HIP_R_16BF, "bf16");

/// What hipBLASLt applies to `alpha * op(A) op(B) + beta * C` before writing D, without its buffers: the
/// key of [`Handle::algorithms`](super::Handle::algorithms) (an algorithm is found for one kind).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum EpilogueKind {
    /// Nothing (`HIPBLASLT_EPILOGUE_DEFAULT`).
    #[default]
    Default,
    /// `max(x, 0)` (`HIPBLASLT_EPILOGUE_RELU`).
    Relu,
    /// GELU, tanh approximation (`HIPBLASLT_EPILOGUE_GELU`).
    Gelu,
    /// `x + bias` (`HIPBLASLT_EPILOGUE_BIAS`).
    Bias,
    /// `max(x + bias, 0)` (`HIPBLASLT_EPILOGUE_RELU_BIAS`).
    ReluBias,
    /// `GELU(x + bias)` (`HIPBLASLT_EPILOGUE_GELU_BIAS`).
    GeluBias,
    /// `GELU(x)`, and `x` written to the auxiliary output (`HIPBLASLT_EPILOGUE_GELU_AUX`).
    GeluAux,
    /// `GELU(x + bias)`, and `x + bias` written to the auxiliary output
    /// (`HIPBLASLT_EPILOGUE_GELU_AUX_BIAS`).
    GeluAuxBias,
}

impl EpilogueKind {
    /// Every kind, in declaration order.
    pub const ALL: [EpilogueKind; 8] = [
        EpilogueKind::Default,
        EpilogueKind::Relu,
        EpilogueKind::Gelu,
        EpilogueKind::Bias,
        EpilogueKind::ReluBias,
        EpilogueKind::GeluBias,
        EpilogueKind::GeluAux,
        EpilogueKind::GeluAuxBias,
    ];

    /// The `hipblasLtEpilogue_t` value.
    pub fn raw(self) -> u32 {
        match self {
            EpilogueKind::Default => sys::HIPBLASLT_EPILOGUE_DEFAULT,
            EpilogueKind::Relu => sys::HIPBLASLT_EPILOGUE_RELU,
            EpilogueKind::Gelu => sys::HIPBLASLT_EPILOGUE_GELU,
            EpilogueKind::Bias => sys::HIPBLASLT_EPILOGUE_BIAS,
            EpilogueKind::ReluBias => sys::HIPBLASLT_EPILOGUE_RELU_BIAS,
            EpilogueKind::GeluBias => sys::HIPBLASLT_EPILOGUE_GELU_BIAS,
            EpilogueKind::GeluAux => sys::HIPBLASLT_EPILOGUE_GELU_AUX,
            EpilogueKind::GeluAuxBias => sys::HIPBLASLT_EPILOGUE_GELU_AUX_BIAS,
        }
    }

    /// Whether the kind reads a bias vector.
    pub fn has_bias(self) -> bool {
        matches!(
            self,
            EpilogueKind::Bias
                | EpilogueKind::ReluBias
                | EpilogueKind::GeluBias
                | EpilogueKind::GeluAuxBias
        )
    }

    /// Whether the kind writes an auxiliary output.
    pub fn has_aux(self) -> bool {
        matches!(self, EpilogueKind::GeluAux | EpilogueKind::GeluAuxBias)
    }
}

/// Device memory an epilogue uses: its address, length, device and allocation, taken from a
/// [`DeviceMemory`] borrowed for `'a`.
#[derive(Clone, Copy)]
pub(super) struct Mem<'a> {
    pub ptr: DevicePtr,
    pub len: usize,
    pub device: &'a Device,
    pub allocation: &'a Arc<Allocation>,
}

impl<'a> Mem<'a> {
    pub(super) fn of<T: DeviceCopy>(m: &'a impl DeviceMemory<T>) -> Mem<'a> {
        Mem {
            ptr: m.device_ptr(),
            len: m.len(),
            device: m.device(),
            allocation: m.allocation(),
        }
    }
}

/// An epilogue with its buffers: made by [`Epilogue::none`], [`Epilogue::relu`], [`Epilogue::bias`], ...
/// The bias (read) and the auxiliary output (written) are borrowed until the call returns; the memory
/// model orders the queued call with their other users.
///
/// The bias has one element per row of D (`m`; one per column, `n`, for a [`Matmul::row_major`]
/// description) and is shared by every product of a batch. The auxiliary output has D's shape with its
/// own leading dimension `ld` (at least D's rows in the call's column-major view: `m`, or `n` for
/// row-major), one matrix per product `ld * cols` elements apart. Both have the element type of D.
///
/// [`Matmul::row_major`]: super::Matmul::row_major
pub struct Epilogue<'a, T: LtElement> {
    pub(super) kind: EpilogueKind,
    pub(super) bias: Option<Mem<'a>>,
    pub(super) aux: Option<(Mem<'a>, usize)>,
    _t: PhantomData<&'a T>,
}

impl<'a, T: LtElement> Epilogue<'a, T> {
    fn make(kind: EpilogueKind, bias: Option<Mem<'a>>, aux: Option<(Mem<'a>, usize)>) -> Self {
        Epilogue {
            kind,
            bias,
            aux,
            _t: PhantomData,
        }
    }

    /// No epilogue: `D = alpha op(A) op(B) + beta C`.
    pub fn none() -> Self {
        Self::make(EpilogueKind::Default, None, None)
    }

    /// `D = max(x, 0)`.
    pub fn relu() -> Self {
        Self::make(EpilogueKind::Relu, None, None)
    }

    /// `D = GELU(x)`.
    pub fn gelu() -> Self {
        Self::make(EpilogueKind::Gelu, None, None)
    }

    /// `D = x + bias` (the bias broadcast over D's columns).
    pub fn bias(bias: &'a impl DeviceMemory<T>) -> Self {
        Self::make(EpilogueKind::Bias, Some(Mem::of(bias)), None)
    }

    /// `D = max(x + bias, 0)`.
    pub fn relu_bias(bias: &'a impl DeviceMemory<T>) -> Self {
        Self::make(EpilogueKind::ReluBias, Some(Mem::of(bias)), None)
    }

    /// `D = GELU(x + bias)`.
    pub fn gelu_bias(bias: &'a impl DeviceMemory<T>) -> Self {
        Self::make(EpilogueKind::GeluBias, Some(Mem::of(bias)), None)
    }

    /// `D = GELU(x)`, and `aux = x` (leading dimension `ld`): the pre-activation a backward pass needs.
    pub fn gelu_aux(aux: &'a mut impl DeviceMemoryMut<T>, ld: usize) -> Self {
        Self::make(EpilogueKind::GeluAux, None, Some((Mem::of(&*aux), ld)))
    }

    /// `D = GELU(x + bias)`, and `aux = x + bias` (leading dimension `ld`).
    pub fn gelu_aux_bias(
        bias: &'a impl DeviceMemory<T>,
        aux: &'a mut impl DeviceMemoryMut<T>,
        ld: usize,
    ) -> Self {
        Self::make(
            EpilogueKind::GeluAuxBias,
            Some(Mem::of(bias)),
            Some((Mem::of(&*aux), ld)),
        )
    }

    /// The kind, for [`Handle::algorithms`](super::Handle::algorithms).
    pub fn kind(&self) -> EpilogueKind {
        self.kind
    }
}
