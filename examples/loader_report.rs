//! What the `dynamic-loading` loader did: the file the HIP runtime and HIPRTC were opened from, every
//! symbol of their tables and whether it resolved (`dlsym`; `GetProcAddress` on Windows: all of them are
//! looked up when the library opens), then calls through the crate. Where nothing opened, the crate's
//! error, naming every file tried.
//!
//! `--names` prints only the two tables' symbol names, one a line (`hip <name>`, `hiprtc <name>`):
//! scripts/check-windows-wine.sh makes its stub `amdhip64` DLL export exactly these.
//!
//! ```text
//! cargo run --example loader_report --features dynamic-loading
//! ```
//! The report covers the AMD platform's loader (`amdhip64`, `hiprtc`); built for HIP's NVIDIA platform,
//! whose dynamic loading opens CUDA's libraries instead, it says so and exits.

#[cfg(hip_platform = "nvidia")]
fn main() {
    println!(
        "loader_report describes the AMD platform's loader (amdhip64, hiprtc); this build is for HIP's \
         NVIDIA platform, whose dynamic loading opens CUDA's libraries"
    );
}

#[cfg(not(hip_platform = "nvidia"))]
fn main() -> Result<(), hip::Report> {
    amd::main()
}

#[cfg(not(hip_platform = "nvidia"))]
mod amd {
    use hip::{Device, Report};
    use hip_sys::loader as hip_loader;
    use hiprtc_sys::loader as rtc_loader;

    pub fn main() -> Result<(), Report> {
        if std::env::args().any(|a| a == "--names") {
            for name in hip_loader::symbol_names() {
                println!("hip {name}");
            }
            for name in rtc_loader::symbol_names() {
                println!("hiprtc {name}");
            }
            return Ok(());
        }
        println!(
            "HIP runtime candidates, in order: {}",
            hip_loader::hip_candidates(hip_loader::Os::CURRENT, &hip_loader::env_var).join("; ")
        );
        let Some(opened) = hip_loader::library() else {
            // No runtime: the crate's own errors, as every call answers them (HIPRTC's first).
            if let Err(e) = hip::rtc::version() {
                println!("HIPRTC: {e}");
            }
            return Err(Device::count().unwrap_err().into());
        };
        let symbols = hip_loader::symbols().expect("the runtime is open");
        report("HIP runtime", &opened.path, &symbols);
        match (rtc_loader::loaded_from(), rtc_loader::symbols()) {
            (Some(path), Some(symbols)) => report("HIPRTC", path, &symbols),
            _ => println!(
                "HIPRTC not opened; tried: {}",
                rtc_loader::failure().unwrap_or_default().join("; ")
            ),
        }
        println!("runtime version: {}", hip::runtime_version()?);
        println!("driver version: {}", hip::driver_version()?);
        match hip::rtc::version() {
            Ok((major, minor)) => println!("HIPRTC version: {major}.{minor}"),
            Err(e) => println!("HIPRTC version: {e}"),
        }
        if let Some(device) = Device::first_usable(|why| println!("Device::first_usable: {why}"))? {
            println!("device 0: {}", device.properties()?.name);
        }
        // The same answer from the call a user makes directly, as the crate's error and its status.
        match Device::count() {
            Ok(n) => println!("Device::count(): {n}"),
            Err(e) => println!(
                "Device::count(): Err({e}) [no device: {}, status {:?}]",
                e.is_no_device(),
                e.status()
            ),
        }
        Ok(())
    }

    fn report(what: &str, path: &str, symbols: &[(&str, bool)]) {
        let resolved = symbols.iter().filter(|(_, ok)| *ok).count();
        println!("{what} opened from {path}");
        println!(
            "{what}: {resolved} of {} symbols resolved{}",
            symbols.len(),
            if cfg!(windows) {
                " through GetProcAddress"
            } else {
                " through dlsym"
            }
        );
        let missing: Vec<&str> = symbols
            .iter()
            .filter(|(_, ok)| !ok)
            .map(|(n, _)| *n)
            .collect();
        if !missing.is_empty() {
            println!("{what}: not exported: {}", missing.join(" "));
        }
    }
}
