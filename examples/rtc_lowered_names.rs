//! Template kernels through name expressions: compile `fill<float>` and `fill<int>`, get their lowered
//! (mangled) names, and launch each by that name.
use hip::prelude::*;
use hip::Report;

const SOURCE: &str = r#"
template <typename T>
__global__ void fill(T* out, T value, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value + (T)i;
}
"#;

fn program() -> ProgramBuilder {
    ProgramBuilder::new(SOURCE)
        .name("fill.hip")
        .name_expression("fill<float>")
        .name_expression("fill<int>")
}

fn main() -> Result<(), Report> {
    let Some(device) = Device::first_usable(|why| println!("{why}"))? else {
        // No usable GPU: compile offline for an explicit architecture; nothing to launch.
        let arch = if hip::PLATFORM == "amd" {
            "gfx90a"
        } else {
            "compute_90"
        };
        for (expr, lowered) in program().arch(arch).compile()?.lowered_names() {
            println!("{expr:>12} -> {lowered}");
        }
        return Ok(());
    };
    let compiled = program().compile()?;
    let module = Module::load_data(&device, compiled.code())?;
    let stream = Stream::new(&device)?;
    let n: u32 = 4096;

    let float_name = compiled
        .lowered_name("fill<float>")
        .expect("requested above");
    println!("fill<float> -> {float_name}");
    let mut out_f = DeviceBuffer::<f32>::zeroed(&device, n as usize)?;
    let mut args = LaunchArgs::new();
    args.arg_mut(&mut out_f).arg(&1.5f32).arg(&n);
    // SAFETY: fill<float>(float*, float, unsigned) and i < n.
    unsafe {
        module
            .function(float_name)?
            .launch(&stream, &LaunchConfig::for_num_elems(n), &mut args)?
    };

    let int_name = compiled.lowered_name("fill<int>").expect("requested above");
    println!("fill<int>   -> {int_name}");
    let mut out_i = DeviceBuffer::<i32>::zeroed(&device, n as usize)?;
    let mut args = LaunchArgs::new();
    args.arg_mut(&mut out_i).arg(&-7i32).arg(&n);
    // SAFETY: fill<int>(int*, int, unsigned) and i < n.
    unsafe {
        module
            .function(int_name)?
            .launch(&stream, &LaunchConfig::for_num_elems(n), &mut args)?
    };
    stream.synchronize()?;

    let f = out_f.to_vec()?;
    let i = out_i.to_vec()?;
    let ok = (0..n as usize).all(|k| f[k] == 1.5 + k as f32 && i[k] == -7 + k as i32);
    if !ok {
        return Err(Report::msg("template kernels wrote wrong values"));
    }
    println!("both instantiations ran and wrote the expected {n} values");
    Ok(())
}
