//! The calls: [`Handle::algorithms`] (the heuristic) and [`Handle::matmul`] / [`Handle::matmul_into`].

use super::descr::{Aux, Descriptors, Key, Preference};
use super::epilogue::Mem;
use super::shape::{holds, Call};
use super::{check, sys, Epilogue, EpilogueKind, Handle, LtElement, Matmul, Operand, CACHE_LIMIT};
use crate::error::{Error, Result};
use crate::memory::{Access, DeviceMemory, DeviceMemoryMut};
use std::ffi::c_void;

/// An algorithm hipBLASLt's heuristic chose for one problem (`hipblasLtMatmulAlgo_t`), with the workspace
/// it needs. Plain data: clone it, keep it, send it to other threads, and give it to
/// [`Matmul::algo`] for later calls of the same problem (same description, element type, epilogue kind
/// and device; another problem is refused).
#[derive(Clone, Copy, Debug)]
pub struct Algo {
    raw: sys::hipblasLtMatmulAlgo_t,
    workspace: usize,
    waves: f32,
    pub(super) key: Key,
}

impl Algo {
    /// Bytes of workspace the algorithm needs.
    pub fn workspace_size(&self) -> usize {
        self.workspace
    }

    /// hipBLASLt's device-utilisation estimate (`wavesCount`: 1.0 fills the GPU once).
    pub fn waves(&self) -> f32 {
        self.waves
    }

    /// The raw algorithm, for `hipblaslt-sys` calls.
    pub fn raw(&self) -> &sys::hipblasLtMatmulAlgo_t {
        &self.raw
    }
}

impl PartialEq for Algo {
    fn eq(&self, other: &Algo) -> bool {
        self.raw.data == other.raw.data
            && self.raw.max_workspace_bytes == other.raw.max_workspace_bytes
            && self.workspace == other.workspace
            && self.key == other.key
    }
}

impl Eq for Algo {}

impl Handle {
    /// Up to `max` algorithms hipBLASLt's heuristic proposes for `desc` with elements `T` and epilogue
    /// `epilogue`, best first, each needing at most [`workspace_limit`](Self::workspace_limit) bytes
    /// (`hipblasLtMatmulAlgoGetHeuristic`). Host work only: nothing is queued. An algorithm already set
    /// in `desc` is ignored here.
    ///
    /// Errors: the shape's [`Error::InvalidArgument`]; [`Error::NotSupported`] when hipBLASLt has no
    /// algorithm for the problem on this device; [`Error::Blas`] from the library.
    pub fn algorithms<T: LtElement>(
        &self,
        desc: &Matmul,
        epilogue: EpilogueKind,
        max: usize,
    ) -> Result<Vec<Algo>> {
        let call = desc.resolve()?;
        let key = self.key::<T>(call, epilogue);
        let d = Descriptors::new(&key)?;
        d.set_placeholders(&call)?;
        self.heuristic(&d, key, max)
    }

    /// `D = epilogue(alpha op(A) op(B) + beta D)`: C is D, read then written in place (`beta = 0.0`
    /// ignores what D held). Returns once the call is queued on the handle's stream.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # use hip::blaslt::{Epilogue, Handle, Matmul};
    /// # fn f(lt: &mut Handle, x: &DeviceBuffer<f32>, w: &DeviceBuffer<f32>, b: &DeviceBuffer<f32>,
    /// #      y: &mut DeviceBuffer<f32>) -> hip::Result<()> {
    /// // y (batch x out) = GELU(x (batch x in) * w^T + b), row-major, w stored out x in.
    /// let (batch, inp, out) = (64, 512, 256);
    /// let desc = Matmul::row_major(batch, out, inp).op_b(hip::blaslt::Op::T);
    /// lt.matmul(&desc, 1.0, x, w, 0.0, y, Epilogue::gelu_bias(b))?;
    /// # Ok(()) }
    /// ```
    ///
    /// Errors: [`Error::InvalidArgument`] naming the operand whose buffer, leading dimension or stride
    /// does not fit (nothing queued, nothing written), or an algorithm found for another problem;
    /// [`Error::DeviceMismatch`]; [`Error::NotSupported`] when hipBLASLt has no algorithm for the
    /// problem; [`Error::Blas`] from the library.
    #[allow(clippy::too_many_arguments)]
    pub fn matmul<T: LtElement>(
        &mut self,
        desc: &Matmul,
        alpha: f32,
        a: &impl DeviceMemory<T>,
        b: &impl DeviceMemory<T>,
        beta: f32,
        d: &mut impl DeviceMemoryMut<T>,
        epilogue: Epilogue<'_, T>,
    ) -> Result<()> {
        let d = Mem::of(&*d);
        self.run(
            desc,
            alpha,
            Mem::of(a),
            Mem::of(b),
            beta,
            None,
            d,
            &epilogue,
        )
    }

    /// `D = epilogue(alpha op(A) op(B) + beta C)` with C and D distinct buffers of one layout (the
    /// description's `ldc`). Otherwise as [`matmul`](Self::matmul).
    #[allow(clippy::too_many_arguments)]
    pub fn matmul_into<T: LtElement>(
        &mut self,
        desc: &Matmul,
        alpha: f32,
        a: &impl DeviceMemory<T>,
        b: &impl DeviceMemory<T>,
        beta: f32,
        c: &impl DeviceMemory<T>,
        d: &mut impl DeviceMemoryMut<T>,
        epilogue: Epilogue<'_, T>,
    ) -> Result<()> {
        let d = Mem::of(&*d);
        let c = Some(Mem::of(c));
        self.run(desc, alpha, Mem::of(a), Mem::of(b), beta, c, d, &epilogue)
    }

    fn key<T: LtElement>(&self, call: Call, epilogue: EpilogueKind) -> Key {
        Key {
            call,
            data_type: T::DATA_TYPE,
            epilogue,
            device: self.device.ordinal(),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn run<T: LtElement>(
        &mut self,
        desc: &Matmul,
        alpha: f32,
        a: Mem<'_>,
        b: Mem<'_>,
        beta: f32,
        c: Option<Mem<'_>>,
        d: Mem<'_>,
        epilogue: &Epilogue<'_, T>,
    ) -> Result<()> {
        // Every check first: nothing is allocated, queued or written before they pass.
        let call = desc.resolve()?;
        let (first, second) = call.ordered(a, b);
        let (first_name, second_name) = call.names();
        holds(first_name, first.len, call.first.need)?;
        holds(second_name, second.len, call.second.need)?;
        if let Some(c) = c {
            holds("matmul operand c", c.len, call.c.need)?;
        }
        holds("matmul operand d", d.len, call.c.need)?;
        let kind = epilogue.kind;
        let mut operands: Vec<Operand<'_>> = vec![
            (first.device, first.allocation, Access::Read),
            (second.device, second.allocation, Access::Read),
            (d.device, d.allocation, Access::Write),
        ];
        if let Some(c) = c {
            operands.push((c.device, c.allocation, Access::Read));
        }
        if let Some(bias) = epilogue.bias {
            holds("matmul epilogue bias", bias.len, call.bias_len())?;
            operands.push((bias.device, bias.allocation, Access::Read));
        }
        let aux = match epilogue.aux {
            Some((aux, ld)) => {
                let (need, stride) = call.aux_need(ld)?;
                holds("matmul epilogue aux", aux.len, need)?;
                operands.push((aux.device, aux.allocation, Access::Write));
                Some(Aux {
                    ptr: aux.ptr,
                    ld: ld as i64,
                    stride: stride as i64,
                })
            }
            None => None,
        };
        self.same_devices(&operands)?;
        let key = self.key::<T>(call, kind);
        // The problem's descriptors, kept from an earlier call or made now, with this call's buffers:
        // set before the heuristic, which checks them. A call that fails from here drops them.
        let descs = match self.descriptors.take(&key) {
            Some(descs) => descs,
            None => Descriptors::new(&key)?,
        };
        descs.set_buffers(epilogue.bias.map(|b| b.ptr), aux)?;
        let algo = self.choose(desc, key, &descs)?;
        if algo.workspace > self.workspace_limit {
            return Err(Error::InvalidArgument {
                what: "matmul algo",
                value: format!("an algorithm needing {} bytes of workspace", algo.workspace),
                reason: format!(
                    "the handle's workspace limit is {} bytes: raise it with set_workspace_limit",
                    self.workspace_limit
                ),
            });
        }
        let (workspace, workspace_len) = self.workspace(algo.workspace)?;
        let c_ptr = c.map_or(d.ptr, |c| c.ptr);
        let op = self.begin(&operands)?;
        // SAFETY: live handle and descriptors (made for `key`, this call's problem, with this call's
        // bias and auxiliary pointers, leading dimension and stride just set); A, B, C, D, the bias and
        // the auxiliary output hold every element the layouts and the epilogue reach (checked above, with
        // the leading dimensions, strides and element types the descriptors carry: see
        // `Descriptors::new` for every attribute set, scaling off), are on the handle's device and
        // ordered on its stream by the memory model (`begin`), as is the workspace of `workspace_len`
        // bytes (at least the algorithm's need). `alpha` and `beta` are host f32 values (the
        // description's scale type, pointer mode host) read before the call returns. `algo` was found for
        // this problem (its key was checked by `choose`). The stream is live (kept by `self.stream`).
        check("hipblasLtMatmul", unsafe {
            sys::hipblasLtMatmul(
                self.raw,
                descs.desc.0,
                (&alpha as *const f32).cast::<c_void>(),
                first.ptr.cast_const(),
                descs.a.0,
                second.ptr.cast_const(),
                descs.b.0,
                (&beta as *const f32).cast::<c_void>(),
                c_ptr.cast_const(),
                descs.c.0,
                d.ptr,
                descs.d.0,
                &algo.raw,
                workspace,
                workspace_len,
                self.stream_raw,
            )
        })?;
        drop(op);
        // Queued: hipBLASLt copied what the kernels need; the descriptors are kept for the next call.
        self.descriptors.put(key, descs);
        Ok(())
    }

    /// The description's algorithm (checked to be for `key`), or the heuristic's first answer for `key`
    /// (asked with `descs`, this call's), remembered.
    fn choose(&mut self, desc: &Matmul, key: Key, descs: &Descriptors) -> Result<Algo> {
        if let Some(algo) = &desc.algo {
            if algo.key != key {
                return Err(Error::InvalidArgument {
                    what: "matmul algo",
                    value: format!(
                        "an algorithm for {} x {} x {} {:?} ({}, {:?}, device {})",
                        algo.key.call.m,
                        algo.key.call.n,
                        algo.key.call.k,
                        algo.key.call.ops,
                        type_name(algo.key.data_type),
                        algo.key.epilogue,
                        algo.key.device
                    ),
                    reason: "an algorithm runs the problem it was found for: ask algorithms() for \
                             this description, element type and epilogue"
                        .into(),
                });
            }
            return Ok(*algo);
        }
        if let Some(algo) = self.cache.get(&key) {
            return Ok(*algo);
        }
        let algo = self.heuristic(descs, key, 1)?[0];
        if self.cache.len() >= CACHE_LIMIT {
            self.cache.clear();
        }
        self.cache.insert(key, algo);
        Ok(algo)
    }

    /// `hipblasLtMatmulAlgoGetHeuristic` for `d`: up to `max` algorithms (at least one, else
    /// [`Error::NotSupported`]).
    fn heuristic(&self, d: &Descriptors, key: Key, max: usize) -> Result<Vec<Algo>> {
        let requested = max.clamp(1, 64);
        let pref = Preference::new(self.workspace_limit)?;
        let mut results = vec![sys::hipblasLtMatmulHeuristicResult_t::default(); requested];
        let mut returned: i32 = 0;
        self.device.bind()?;
        // SAFETY: live handle, descriptors and preference; `results` holds `requested` elements (at most
        // 64, so the count fits an int) and `returned` is a valid out-pointer. Host work only.
        check("hipblasLtMatmulAlgoGetHeuristic", unsafe {
            sys::hipblasLtMatmulAlgoGetHeuristic(
                self.raw,
                d.desc.0,
                d.a.0,
                d.b.0,
                d.c.0,
                d.d.0,
                pref.0,
                requested as i32,
                results.as_mut_ptr(),
                &mut returned,
            )
        })?;
        let returned = usize::try_from(returned).unwrap_or(0).min(requested);
        let algos: Vec<Algo> = results[..returned]
            .iter()
            .filter(|r| r.state.0 == 0 && r.workspaceSize <= self.workspace_limit)
            .map(|r| Algo {
                raw: r.algo,
                workspace: r.workspaceSize,
                waves: r.wavesCount,
                key,
            })
            .collect();
        if algos.is_empty() {
            return Err(Error::NotSupported {
                what: "hipblasLtMatmulAlgoGetHeuristic",
                reason:
                    "hipBLASLt has no algorithm for this problem on this device (element type, \
                         epilogue, shape and workspace limit): try another epilogue or layout, or \
                         hip::blas",
            });
        }
        Ok(algos)
    }
}

/// The element type's name for a `hipDataType` value.
pub(super) fn type_name(data_type: u32) -> &'static str {
    match data_type {
        sys::HIP_R_32F => "f32",
        sys::HIP_R_16F => "f16",
        sys::HIP_R_16BF => "bf16",
        _ => "an unknown type",
    }
}
