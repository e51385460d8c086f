//! The `main` of the math benchmarks (`blas`, `rand`, `fft`): `NAME --baseline LIBRARY [flags]`, the
//! baseline shared library of raw C++ calls handed to `run`; exit 2 with the usage without it, 1 when `run`
//! fails.

/// Parse `--baseline`, run, and exit with the outcome.
pub fn main(name: &str, library: &str, run: impl FnOnce(&str) -> Result<(), String>) {
    let args: Vec<String> = std::env::args().collect();
    let Some(baseline) = args
        .iter()
        .position(|a| a == "--baseline")
        .and_then(|i| args.get(i + 1))
    else {
        eprintln!("usage: {name} --baseline {library}");
        std::process::exit(2);
    };
    if let Err(msg) = run(baseline) {
        eprintln!("{name} benchmark failed: {msg}");
        std::process::exit(1);
    }
}
