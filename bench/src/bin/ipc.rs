//! Opening and closing another process's device memory, the safe API against the same HIP calls made by
//! hand, paired in one run (issue 57, family 2). The program exports a device buffer
//! (`DeviceBuffer::ipc_handle`), then runs itself as a second process that times, ROUNDS times each:
//!
//! - `safe`: `ForeignBuffer::open` (`hipIpcOpenMemHandle` + `hipMemGetAddressRange`, the length check, the
//!   memory model's allocation) and its drop (`hipIpcCloseMemHandle` after the buffer's users: none);
//! - `raw`: `hipIpcOpenMemHandle` and `hipIpcCloseMemHandle` through `hip::result::ipc`, one call each.
//!
//! A process may not open its own export (HIP and CUDA refuse it), hence the second process. Rounds
//! alternate which side goes first; the opener's first open (the runtime's IPC setup) is untimed.
//!
//! `cargo run --release -p hip-rs-bench --bin ipc [-- MIB [ROUNDS]]` (defaults 64 and 201).

#[path = "../stats.rs"]
#[allow(dead_code)]
mod stats;

use hip::ipc::IpcMemHandle;
use hip::memory::ForeignBuffer;
use hip::prelude::*;
use hip::result;
use stats::{paired_ratio, Samples};
use std::process::{Command, ExitCode};
use std::time::Instant;

const MIB: usize = 1 << 20;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = if args.first().map(String::as_str) == Some("--open") {
        opener(&args[1..])
    } else {
        exporter(&args)
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ipc: {e}");
            ExitCode::FAILURE
        }
    }
}

fn number(args: &[String], i: usize, default: usize) -> Result<usize, String> {
    match args.get(i).map(|a| a.parse::<usize>()) {
        None => Ok(default),
        Some(Ok(v)) if v > 0 => Ok(v),
        Some(_) => Err(format!(
            "usage: ipc [MIB > 0 [ROUNDS > 0]] (argument {} is {:?})",
            i + 1,
            args[i]
        )),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Result<Vec<u8>, String> {
    if s.len() % 2 != 0 {
        return Err(format!("an odd number of hex digits: {}", s.len()));
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(|e| format!("{e} at {i}")))
        .collect()
}

/// The first process: export a buffer, run the opener, pass on what it printed.
fn exporter(args: &[String]) -> Result<(), String> {
    let (mib, rounds) = (number(args, 0, 64)?, number(args, 1, 201)?);
    let Some(device) = Device::first_usable(|why| println!("{why}\nnothing to time"))
        .map_err(|e| e.to_string())?
    else {
        return Ok(());
    };
    let e = |e: hip::Error| e.to_string();
    println!("device: {}", device.properties().map_err(e)?.name);
    let buffer = DeviceBuffer::<u8>::zeroed(&device, mib * MIB).map_err(e)?;
    let export = buffer.ipc_handle().map_err(e)?;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = Command::new(exe)
        .args(["--open", &hex(export.handle().as_bytes())])
        .args([(mib * MIB).to_string(), rounds.to_string()])
        .arg(device.ordinal().to_string())
        .output()
        .map_err(|e| format!("starting the opener: {e}"))?;
    print!("{}", String::from_utf8_lossy(&out.stdout));
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    if !out.status.success() {
        return Err(format!("the opener failed ({})", out.status));
    }
    drop(export);
    Ok(())
}

/// The second process: time the opens and closes.
fn opener(args: &[String]) -> Result<(), String> {
    let [handle, bytes, rounds, ordinal] = args else {
        return Err("usage: ipc --open HANDLE_HEX BYTES ROUNDS DEVICE".into());
    };
    let parse = |s: &String| s.parse::<usize>().map_err(|e| format!("{s:?}: {e}"));
    let (bytes, rounds) = (parse(bytes)?, parse(rounds)?);
    let e = |e: hip::Error| e.to_string();
    let handle = IpcMemHandle::from_bytes(&unhex(handle)?).map_err(e)?;
    let device = Device::get(parse(ordinal)?).map_err(e)?;
    // The runtime's IPC setup, untimed.
    drop(ForeignBuffer::<u8>::open(&device, &handle, bytes).map_err(e)?);
    let safe = || -> Result<f64, String> {
        let t = Instant::now();
        let b = ForeignBuffer::<u8>::open(&device, &handle, bytes).map_err(e)?;
        drop(b);
        Ok(t.elapsed().as_secs_f64() * 1e6)
    };
    let raw = || -> Result<f64, String> {
        let t = Instant::now();
        let p = result::ipc::open_mem_handle(handle.raw()).map_err(e)?;
        // SAFETY: `p` was just opened in this process, is closed once, and nothing used it.
        unsafe { result::ipc::close_mem_handle(p) }.map_err(e)?;
        Ok(t.elapsed().as_secs_f64() * 1e6)
    };
    let (mut s, mut r) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
    for round in 0..rounds {
        if round % 2 == 0 {
            s.push(safe()?);
            r.push(raw()?);
        } else {
            r.push(raw()?);
            s.push(safe()?);
        }
    }
    println!(
        "open + close of {} MiB exported by another process, {rounds} rounds, host microseconds, median (min-max)",
        bytes / MIB
    );
    println!("| side | open + close |\n|---|---:|");
    println!(
        "| safe (`ForeignBuffer::open` + drop) | {} |",
        Samples::new(s.clone()).show(2)
    );
    println!(
        "| raw (`hipIpcOpenMemHandle` + `hipIpcCloseMemHandle`) | {} |",
        Samples::new(r.clone()).show(2)
    );
    println!("safe / raw (paired): {}", paired_ratio(&s, &r));
    Ok(())
}
