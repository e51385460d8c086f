//! Build a kernel crate from the command line, as a `build.rs` would, and list the kernels each code object
//! holds. `scripts/build-rust-kernels.sh` runs it to regenerate the committed code objects.
//!
//! ```text
//! build_kernels --crate DIR --out DIR [--amdgpu gfx90a,gfx1100] [--nvptx sm_70] [-j N]
//! ```
use hip_kernel_build::{kernel_names, KernelBuilder};
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (mut krate, mut out, mut amd, mut ptx, mut jobs) = (None, None, Vec::new(), None, None);
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_default();
        match a.as_str() {
            "--crate" => krate = Some(value()),
            "--out" => out = Some(value()),
            "--amdgpu" => amd.extend(value().split(',').map(str::to_string)),
            "--nvptx" => ptx = Some(value()),
            "-j" => jobs = value().parse().ok(),
            _ => {
                eprintln!("build_kernels: unknown argument `{a}`");
                return ExitCode::from(2);
            }
        }
    }
    let (Some(krate), Some(out)) = (krate, out) else {
        eprintln!(
            "usage: build_kernels --crate DIR --out DIR [--amdgpu gfx..,..] [--nvptx sm_NN] [-j N]"
        );
        return ExitCode::from(2);
    };
    let mut b = KernelBuilder::new(krate).out_dir(out).amdgpu(&amd);
    if let Some(sm) = ptx {
        b = b.nvptx(sm);
    }
    if let Some(j) = jobs {
        b = b.jobs(j);
    }
    let built = match b.build() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let files = built
        .amdgpu
        .iter()
        .map(|(_, p)| p)
        .chain(&built.bundle)
        .chain(&built.ptx);
    for p in files {
        let bytes = std::fs::read(p).unwrap_or_default();
        let names = kernel_names(&bytes)
            .map(|n| n.join(" "))
            .unwrap_or_default();
        println!("{} ({} bytes) {names}", p.display(), bytes.len());
    }
    ExitCode::SUCCESS
}
