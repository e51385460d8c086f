//! The generated code: the device entry point (GPU targets) and the host handle with its launcher.

use crate::parse::{Kernel, ParseError, Role};
use proc_macro::{TokenStream, TokenTree};

/// Arguments one launch takes (hip's `MAX_KERNEL_ARGS`).
const MAX_ARGS: usize = 32;

/// Where the device types live (both sides name them by this path).
const TYPES: &str = "::hip_rs_kernel_types::device";

/// Refuse what parses but cannot launch: too many arguments, no output, two `Shared`.
pub fn check(k: &Kernel) -> Result<(), ParseError> {
    let args: usize = k
        .params
        .iter()
        .map(|p| match p.role {
            Role::Scalar => 1,
            Role::Shared(_) => 0,
            Role::Out2d => 3,
            _ => 2,
        })
        .sum();
    if args > MAX_ARGS {
        return Err(ParseError {
            span: k.name.span(),
            message: format!(
                "kernel `{}` takes {args} arguments (each In/Out is a pointer and a length): a launch takes \
                 at most {MAX_ARGS}",
                k.name
            ),
        });
    }
    if !k.params.iter().any(|p| p.role.is_output()) {
        return Err(ParseError {
            span: k.name.span(),
            message: format!(
                "kernel `{}` has no `Out<T>` or `OutChunk<T, N>` parameter: it could write nothing",
                k.name
            ),
        });
    }
    let mut shared = k
        .params
        .iter()
        .filter(|p| matches!(p.role, Role::Shared(_)));
    if let (Some(_), Some(second)) = (shared.next(), shared.next()) {
        return Err(ParseError {
            span: second.name.span(),
            message: format!(
                "kernel `{}` takes two `Shared` parameters: a block has one barrier, which one handle's \
                 phases count; take one `Shared<T, K>` with K slots per thread (slot t + k * B is the k-th)",
                k.name
            ),
        });
    }
    Ok(())
}

/// The signature as the fingerprint hashes it: roles and types in order, not parameter names.
pub fn signature(k: &Kernel) -> String {
    let params: Vec<String> = k
        .params
        .iter()
        .map(|p| match p.role {
            Role::In => format!("In<{}>", p.elem),
            Role::Out => format!("Out<{}>", p.elem),
            Role::OutChunk(n) => format!("OutChunk<{},{n}>", p.elem),
            Role::Shared(k) => format!("Shared<{},{k}>", p.elem),
            Role::OutBlock(n) => format!("OutBlock<{},{n}>", p.elem),
            Role::Out2d => format!("Out2d<{}>", p.elem),
            Role::Scalar => p.elem.clone(),
        })
        .collect();
    format!("hiprs-kernel-abi-1;{}({})", k.name, params.join(","))
}

/// FNV-1a, 64 bits: stable across compilers and platforms (std's hashers are not).
pub fn fnv1a(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The exported name: the kernel's name and its signature's fingerprint.
pub fn export_name(k: &Kernel) -> String {
    format!("{}_hk{:016x}", k.name, fnv1a(&signature(k)))
}

fn ts(s: &str) -> TokenStream {
    s.parse().expect("generated code parses")
}

/// The body as a nested function `__hiprs_body`, under `forbid(unsafe_code)`, its parameters typed as
/// the user wrote them (so their imports are used; a type other than the device crate's `In`/`Out` fails
/// to match what the entry point passes).
fn body_fn(k: &Kernel, out: &mut TokenStream) {
    out.extend(ts(
        "#[forbid(unsafe_code)] #[inline(always)] fn __hiprs_body",
    ));
    let mut params = TokenStream::new();
    for (i, p) in k.params.iter().enumerate() {
        if i > 0 {
            params.extend(ts(","));
        }
        if p.mutable {
            params.extend(ts("mut"));
        }
        params.extend([TokenTree::Ident(p.name.clone())]);
        params.extend(ts(":"));
        params.extend(p.ty.clone());
    }
    out.extend([TokenTree::Group(proc_macro::Group::new(
        proc_macro::Delimiter::Parenthesis,
        params,
    ))]);
    out.extend([TokenTree::Group(k.body.clone())]);
}

/// Everything `#[kernel]` expands to.
///
/// Each side goes through a macro of the device-types crate (`__on_gpu!`, `__on_host!`) that keeps or drops
/// it: the `cfg` naming the GPU targets is evaluated there, not in the crate using `#[kernel]`.
pub fn kernel(k: &Kernel) -> TokenStream {
    let (mut gpu, mut cpu) = (TokenStream::new(), TokenStream::new());
    device(k, &mut gpu);
    host(k, &mut cpu);
    let mut out = TokenStream::new();
    for (side, tokens) in [("__on_gpu", gpu), ("__on_host", cpu)] {
        out.extend(ts(&format!("::hip_rs_kernel_types::{side}!")));
        out.extend([TokenTree::Group(proc_macro::Group::new(
            proc_macro::Delimiter::Brace,
            tokens,
        ))]);
    }
    out
}

/// The `extern "gpu-kernel"` entry point.
fn device(k: &Kernel, out: &mut TokenStream) {
    let name = &k.name;
    let raw: Vec<String> = k
        .params
        .iter()
        .filter_map(|p| match p.role {
            Role::In => Some(format!(
                "{0}__ptr: *const {1}, {0}__len: u64",
                p.name, p.elem_path
            )),
            Role::Out | Role::OutChunk(_) | Role::OutBlock(_) => Some(format!(
                "{0}__ptr: *mut {1}, {0}__len: u64",
                p.name, p.elem_path
            )),
            Role::Out2d => Some(format!(
                "{0}__ptr: *mut {1}, {0}__len: u64, {0}__cols: u64",
                p.name, p.elem_path
            )),
            Role::Shared(_) => None,
            Role::Scalar => Some(format!("{}: {}", p.name, p.elem)),
        })
        .collect();
    let build: Vec<String> = k
        .params
        .iter()
        .map(|p| match p.role {
            Role::In => format!("{TYPES}::In::from_raw_parts({0}__ptr, {0}__len)", p.name),
            Role::Out => format!("{TYPES}::Out::from_raw_parts({0}__ptr, {0}__len)", p.name),
            Role::OutChunk(n) => format!(
                "{TYPES}::OutChunk::<{1}, {n}>::from_raw_parts({0}__ptr, {0}__len)",
                p.name, p.elem_path
            ),
            Role::OutBlock(n) => format!(
                "{TYPES}::OutBlock::<{1}, {n}>::from_raw_parts({0}__ptr, {0}__len)",
                p.name, p.elem_path
            ),
            Role::Out2d => format!(
                "{TYPES}::Out2d::from_raw_parts({0}__ptr, {0}__len, {0}__cols)",
                p.name
            ),
            Role::Shared(k) => format!(
                "{TYPES}::Shared::<{0}, {k}>::from_raw_parts({TYPES}::launch_sized_shared::<{0}>())",
                p.elem_path
            ),
            Role::Scalar => p.name.to_string(),
        })
        .collect();
    out.extend(k.attrs.iter().cloned());
    out.extend(ts(&format!(
        "#[allow(unsafe_code, non_snake_case)] #[export_name = {:?}] pub unsafe extern \"gpu-kernel\" fn \
         __hiprs_kernel_{name}({})",
        export_name(k),
        raw.join(", ")
    )));
    let mut inner = TokenStream::new();
    body_fn(k, &mut inner);
    inner.extend(ts(&format!(
        "// SAFETY: the host's generated launcher passes each In/Out as the address and length of a \
         buffer it borrows (shared for In, exclusive for Out, so no Out aliases anything else) and orders \
         the launch after that memory's conflicting users; it launched a grid whose threads have distinct \
         64-bit linear indices (checked), so each Out element is reached by one thread; a Shared is the \
         block's dynamic shared memory, which the launcher checked holds K slots per thread, made once \
         here by every thread, and the body reaches no other barrier (sync_threads is unsafe).\n\
         unsafe {{ __hiprs_body({}) }}",
        build.join(", ")
    )));
    out.extend([TokenTree::Group(proc_macro::Group::new(
        proc_macro::Delimiter::Brace,
        inner,
    ))]);
}

/// The handle type and its launcher, and the body type-checked (never called) on the host.
fn host(k: &Kernel, out: &mut TokenStream) {
    let name = &k.name;
    let vis: TokenStream = k.vis.iter().cloned().collect();
    // The handle.
    out.extend(k.attrs.iter().cloned());
    out.extend(ts(
        "///\n/// The host side of this `#[kernel]`: [`load`](Self::load) it from a module, then \
         [`launch`](Self::launch) it.\n#[allow(non_camel_case_types)] #[derive(Clone)]",
    ));
    out.extend(vis.clone());
    out.extend(ts(&format!(
        "struct {name} {{ function: ::hip::Function }}"
    )));
    // The launcher's parameters and what it passes.
    let mut params = Vec::new();
    let mut lens = Vec::new();
    let mut args = Vec::new();
    let mut shared_per_thread = "0".to_string();
    for p in &k.params {
        // The launcher's own parameters are `stream` and `config`: a kernel parameter of either name is
        // `stream_arg` / `config_arg` there.
        let n = match p.name.to_string().as_str() {
            own @ ("stream" | "config") => format!("{own}_arg"),
            other => other.to_string(),
        };
        let e = &p.elem_path;
        match p.role {
            Role::In => {
                params.push(format!("{n}: &impl ::hip::launch::typed::KernelIn<{e}>"));
                lens.push(format!(
                    "let {n}__len: u64 = ::hip::launch::typed::KernelIn::<{e}>::kernel_len({n});"
                ));
                args.push(format!(".arg({n}).arg(&{n}__len)"));
            }
            Role::Shared(k) => {
                let size = format!("::core::mem::size_of::<{e}>() as u32");
                shared_per_thread = if k == 1 {
                    size
                } else {
                    format!("{k} * {size}")
                };
            }
            Role::Out2d => {
                params.push(format!(
                    "{n}: &mut impl ::hip::launch::typed::KernelOut<{e}>, {n}_cols: u64"
                ));
                lens.push(format!(
                    "let {n}__len: u64 = ::hip::launch::typed::KernelIn::<{e}>::kernel_len(&*{n});"
                ));
                args.push(format!(".arg_mut({n}).arg(&{n}__len).arg(&{n}_cols)"));
            }
            Role::Out | Role::OutChunk(_) | Role::OutBlock(_) => {
                params.push(format!(
                    "{n}: &mut impl ::hip::launch::typed::KernelOut<{e}>"
                ));
                lens.push(format!(
                    "let {n}__len: u64 = ::hip::launch::typed::KernelIn::<{e}>::kernel_len(&*{n});"
                ));
                args.push(format!(".arg_mut({n}).arg(&{n}__len)"));
            }
            Role::Scalar => {
                params.push(format!("{n}: {e}"));
                args.push(format!(".arg(&{n})"));
            }
        }
    }
    let export = export_name(k);
    out.extend(ts(&format!(
        r#"impl {name} {{
    /// The entry point's exported name: the kernel's name and a fingerprint of its signature.
    pub const NAME: &'static str = {export:?};

    /// This kernel in `module`, looked up by [`NAME`](Self::NAME).
    ///
    /// # Errors
    ///
    /// `hip::Error::InvalidLaunch` naming both names when the module has none by that name (a code
    /// object built from another version of the kernel), and what `Module::function` returns.
    pub fn load(module: &::hip::Module) -> ::hip::Result<Self> {{
        ::hip::launch::typed::load(module, Self::NAME, {plain:?}).map(|function| Self {{ function }})
    }}

    /// Bytes of dynamic shared memory the kernel needs per thread of a block (`K * size_of::<T>()` for
    /// its `Shared<T, K>`, 0 without): `LaunchConfig::shared_mem_bytes` must be at least this times the
    /// block's threads.
    pub const SHARED_BYTES_PER_THREAD: u32 = {shared_per_thread};

    /// `config` with the dynamic shared memory this kernel needs for its block
    /// ([`SHARED_BYTES_PER_THREAD`](Self::SHARED_BYTES_PER_THREAD) times its threads).
    ///
    /// # Errors
    ///
    /// `hip::Error::InvalidLaunch` when that does not fit a `u32`.
    pub fn with_shared(config: ::hip::LaunchConfig) -> ::hip::Result<::hip::LaunchConfig> {{
        ::hip::launch::typed::with_shared(config, Self::SHARED_BYTES_PER_THREAD)
    }}

    /// The loaded function (for occupancy queries, attributes, or an `unsafe` raw launch).
    pub fn function(&self) -> &::hip::Function {{
        &self.function
    }}

    /// Queue this kernel on `stream` over `config`'s grid: each `In` is read (the launch waits for other
    /// streams' writes to it), each `Out` written (it waits for their reads and writes), as the memory
    /// model orders every operation of hip; no `unsafe` needed, the kernel's own signature proved the
    /// arguments.
    ///
    /// # Errors
    ///
    /// `hip::Error::InvalidLaunch` for a configuration the device cannot run or whose threads a 64-bit
    /// index cannot number, with less dynamic shared memory than the kernel's `Shared` needs, or a
    /// stream of another device; `hip::Error::DeviceMismatch` for memory the device cannot reach; what
    /// the launch returns.
    #[allow(clippy::too_many_arguments)]
    pub fn launch(&self, stream: &::hip::Stream, config: &::hip::LaunchConfig, {params}) -> ::hip::Result<()> {{
        ::hip::launch::typed::check_shared(config, {plain:?}, Self::SHARED_BYTES_PER_THREAD)?;
        {lens}
        let mut __args = ::hip::LaunchArgs::new();
        __args{args};
        // SAFETY: the arguments are exactly the entry point's parameters (the macro wrote both from one
        // signature, and `load` found the entry point by that signature's fingerprint): each In/Out a
        // buffer of this crate and its length, each scalar by value. The kernel reaches only those
        // buffers, within their lengths (In::get / Out::mine check), writes only the Out ones (passed
        // with arg_mut), indexes in 64 bits (ThreadIndex::Bits64), and reaches K slots per thread of
        // shared memory, which check_shared found in the configuration.
        unsafe {{
            self.function.launch_with_index(stream, config, &mut __args, ::hip::launch::ThreadIndex::Bits64)
        }}
    }}
}}"#,
        plain = name.to_string(),
        params = params.join(", "),
        lens = lens.join("\n"),
        args = args.join(""),
    )));
    // The body, type-checked on the host (never called there).
    out.extend(ts(
        "#[allow(dead_code, non_snake_case, unused_variables, unused_mut)] const _: () =",
    ));
    let mut inner = TokenStream::new();
    body_fn(k, &mut inner);
    out.extend([TokenTree::Group(proc_macro::Group::new(
        proc_macro::Delimiter::Brace,
        inner,
    ))]);
    out.extend(ts(";"));
}

#[cfg(test)]
mod tests {
    use super::fnv1a;

    #[test]
    fn the_fingerprint_hash_is_fnv1a_64() {
        // Published FNV-1a 64 values: a launcher and a code object built by different compilers, on
        // different machines, must agree on every kernel's exported name.
        assert_eq!(fnv1a(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a("foobar"), 0x85944171f73967e8);
    }
}
