//! Print a code object's kernels and their signatures, like `llvm-readelf --notes` but readable.
//!
//! ```text
//! cargo run --example inspect_code_object -- kernel.co     # an AMD ELF, an offload bundle or PTX
//! cargo run --example inspect_code_object                  # compiles a small kernel first (gfx90a;
//!                                                          # NVIDIA: compute_52 PTX)
//! ```
//! Needs no GPU.
use hip::code_object::{CodeObject, Kernel, ParamKind};
use hip::rtc::ProgramBuilder;

const SAMPLE: &str = r#"
struct Pair { float x; double y; };
extern "C" __global__ void saxpy(float* y, const float* x, float a, unsigned int n, Pair p) {
    __shared__ float tile[256];
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n) y[i] = a * tile[threadIdx.x] + y[i] + (float)(p.x + p.y);
}
"#;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let image = match std::env::args_os().nth(1) {
        Some(path) => std::fs::read(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.to_string_lossy()))?,
        None => {
            // NVIDIA: NVRTC gives PTX text for a virtual architecture.
            let arch = if hip::PLATFORM == "amd" {
                "gfx90a"
            } else {
                "compute_52"
            };
            println!("(no file given: compiling a sample kernel for {arch} with HIPRTC)");
            ProgramBuilder::new(SAMPLE)
                .arch(arch)
                .compile()?
                .into_code()
        }
    };
    let code = CodeObject::parse(&image)?;
    print!("{:?}, {} bytes", code.format(), image.len());
    if let Some(v) = code.version() {
        print!(", code object v{v}");
    }
    println!();
    if !code.has_metadata() {
        println!("no kernel metadata (a cubin, or an object without NT_AMDGPU_METADATA): launches are not checked");
    }
    for k in code.kernels() {
        print_kernel(k);
    }
    Ok(())
}

fn print_kernel(k: &Kernel) {
    println!("\nkernel {} (symbol {}) for {}", k.name, k.symbol, k.target);
    let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    println!(
        "  kernarg {} B, static shared {} B, private {} B, wavefront {}, max work-group {}, sgpr {}, vgpr {}",
        opt(k.kernarg_segment_size),
        opt(k.group_segment_size),
        opt(k.private_segment_size),
        opt(k.wavefront_size.map(u64::from)),
        opt(k.max_workgroup_size.map(u64::from)),
        opt(k.sgpr_count.map(u64::from)),
        opt(k.vgpr_count.map(u64::from)),
    );
    for (i, p) in k.params.iter().enumerate() {
        let kind = match p.kind {
            ParamKind::Pointer => "pointer",
            ParamKind::Value => "value",
            ParamKind::Hidden => "hidden",
            ParamKind::Unknown => "value or pointer",
        };
        println!(
            "  {i:>2}: {:<24} {:<16} offset {:>3} size {:>2} align {:>2} {kind:<16} {}{}",
            p.name.as_deref().unwrap_or("-"),
            p.type_name.as_deref().unwrap_or(""),
            p.offset,
            p.size,
            p.align.map_or("-".to_string(), |a| a.to_string()),
            p.value_kind,
            p.address_space
                .as_deref()
                .map(|s| format!(" ({s})"))
                .unwrap_or_default(),
        );
    }
}
