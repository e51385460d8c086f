//! Growing a `GrowableBuffer` against the same virtual memory calls made by hand, paired in one run
//! (issue 57, family 3): for each length already mapped (2 MiB up to MAX_MIB), the host time of one growth
//! by CHUNK_MIB (default 2 MiB):
//!
//! - `safe`: `GrowableBuffer::grow_to_uninit` (one `hipMemCreate` + `hipMemMap` + `hipMemSetAccess`
//!   through the crate, its bookkeeping included);
//! - `raw`: the same three calls on a range reserved by hand (`hip::result::vmm`, one call each, no
//!   ownership);
//! - `copy`: what growing costs without virtual memory, through the crate: `DeviceBuffer::zeroed` of the
//!   new size (`hipMalloc` + memset), a device-to-device copy of the old contents, a device
//!   synchronization and `hipFree` (5 of the rounds).
//!
//! `safe` and `raw` should stay flat as the length grows (nothing is copied); `copy` grows with it. After
//! each timed growth the chunk is unmapped again (untimed). Rounds alternate which side goes first.
//!
//! `cargo run --release -p hip-rs-bench --bin growable [-- MAX_MIB [CHUNK_MIB]]` (defaults 4096 and 2).
#[path = "../stats.rs"]
#[allow(dead_code)]
mod stats;

use hip::memory::{Granularity, GrowableBuffer};
use hip::prelude::*;
use hip::result;
use stats::{paired_ratio, Samples};
use std::process::ExitCode;
use std::time::Instant;

const ROUNDS: usize = 21;
const MIB: usize = 1 << 20;

fn main() -> ExitCode {
    let arg = |i: usize, default: usize| match std::env::args().nth(i).map(|a| a.parse::<usize>()) {
        None => Some(default),
        Some(Ok(v)) if v > 0 => Some(v),
        Some(_) => None,
    };
    let (Some(max_mib), Some(chunk_mib)) = (arg(1, 4096), arg(2, 2)) else {
        eprintln!("usage: growable [MAX_MIB > 0 [CHUNK_MIB > 0]]");
        return ExitCode::from(2);
    };
    match run(max_mib * MIB, chunk_mib * MIB) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("growable: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Raw side: a reservation of `capacity` bytes with `base` bytes mapped (one chunk), by hand.
struct Raw {
    ptr: *mut std::ffi::c_void,
    capacity: usize,
    base: usize,
    handle: Option<result::vmm::RawPhysical>,
    ordinal: i32,
}

impl Raw {
    fn new(device: &Device, capacity: usize, base: usize, g: usize) -> hip::Result<Raw> {
        let ordinal = device.ordinal() as i32;
        let ptr = result::vmm::address_reserve(capacity, g)?;
        let handle = result::vmm::create(ordinal, base)?;
        // SAFETY: the first `base` bytes of the fresh reservation, mapped once to a live handle.
        unsafe {
            result::vmm::map(ptr, base, handle)?;
            result::vmm::set_access(ptr, base, ordinal, result::vmm::ACCESS_READ_WRITE)?;
        }
        Ok(Raw {
            ptr,
            capacity,
            base,
            handle: Some(handle),
            ordinal,
        })
    }

    /// The timed part: map `chunk` more bytes after `base`. Returns the new handle.
    fn grow(&self, chunk: usize) -> hip::Result<result::vmm::RawPhysical> {
        let at = self.ptr.cast::<u8>().wrapping_add(self.base).cast();
        let h = result::vmm::create(self.ordinal, chunk)?;
        // SAFETY: `[at, at + chunk)` lies in the reservation past the mapped part, unmapped.
        unsafe {
            result::vmm::map(at, chunk, h)?;
            result::vmm::set_access(at, chunk, self.ordinal, result::vmm::ACCESS_READ_WRITE)?;
        }
        Ok(h)
    }

    /// Untimed: unmap and release what `grow` mapped (nothing queued uses it).
    fn undo(&self, chunk: usize, h: result::vmm::RawPhysical) -> hip::Result<()> {
        let at = self.ptr.cast::<u8>().wrapping_add(self.base).cast();
        // SAFETY: exactly what `grow` mapped; no work was queued on it.
        unsafe {
            result::vmm::unmap(at, chunk)?;
            result::vmm::release(h)
        }
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        // SAFETY: the mapped base, then its handle, then the whole reservation; nothing queued uses them.
        unsafe {
            let _ = result::vmm::unmap(self.ptr, self.base);
            if let Some(h) = self.handle.take() {
                let _ = result::vmm::release(h);
            }
            let _ = result::vmm::address_free(self.ptr, self.capacity);
        }
    }
}

fn run(max: usize, chunk: usize) -> hip::Result<()> {
    let Some(device) = Device::first_usable(|why| println!("{why}\nnothing to time"))? else {
        return Ok(());
    };
    println!("device: {}", device.properties()?.name);
    match device.supports_virtual_memory() {
        Ok(false) => {
            println!("the device reports no virtual memory management: nothing to time");
            return Ok(());
        }
        Ok(true) => {}
        Err(e) => println!("({e}: timing anyway)"),
    }
    let g = device.allocation_granularity(Granularity::Minimum)?;
    let chunk = chunk.next_multiple_of(g);
    println!(
        "granularity {g} B; growth by {} MiB; {ROUNDS} rounds; host microseconds, median [min, max]",
        chunk / MIB
    );
    println!(
        "{:>10} {:>26} {:>26} {:>22} {:>26}",
        "mapped", "safe grow", "raw grow", "safe/raw (paired)", "copy grow (hipMalloc+copy)"
    );
    let mut size = 2 * MIB.next_multiple_of(g);
    while size <= max {
        let capacity = size + chunk;
        let mut safe_buf = GrowableBuffer::<u8>::new(&device, capacity)?;
        // SAFETY: never read: the benchmark times the mapping only.
        unsafe { safe_buf.grow_to_uninit(size)? };
        let raw = Raw::new(&device, capacity, size, g)?;
        let old = DeviceBuffer::<u8>::zeroed(&device, size)?;
        let mut safe_us = Vec::new();
        let mut raw_us = Vec::new();
        let mut copy_us = Vec::new();
        let safe_side = |b: &mut GrowableBuffer<u8>| -> hip::Result<f64> {
            let t = Instant::now();
            // SAFETY: as above.
            unsafe { b.grow_to_uninit(size + chunk)? };
            let us = t.elapsed().as_secs_f64() * 1e6;
            b.truncate(size);
            b.shrink_to_fit()?;
            Ok(us)
        };
        let raw_side = |r: &Raw| -> hip::Result<f64> {
            let t = Instant::now();
            let h = r.grow(chunk)?;
            let us = t.elapsed().as_secs_f64() * 1e6;
            r.undo(chunk, h)?;
            Ok(us)
        };
        // Warm-up, then paired rounds.
        safe_side(&mut safe_buf)?;
        raw_side(&raw)?;
        for round in 0..ROUNDS {
            if round % 2 == 0 {
                safe_us.push(safe_side(&mut safe_buf)?);
                raw_us.push(raw_side(&raw)?);
            } else {
                raw_us.push(raw_side(&raw)?);
                safe_us.push(safe_side(&mut safe_buf)?);
            }
            if round < 5 {
                // Growth by copy: a new allocation, the old contents copied, the old freed.
                let t = Instant::now();
                let mut grown = DeviceBuffer::<u8>::zeroed(&device, size + chunk)?;
                grown.slice_mut(..size)?.copy_from_device(&old)?;
                device.synchronize()?;
                drop(grown);
                copy_us.push(t.elapsed().as_secs_f64() * 1e6);
            }
        }
        let (s, r, c) = (
            Samples::new(safe_us.clone()),
            Samples::new(raw_us.clone()),
            Samples::new(copy_us),
        );
        println!(
            "{:>6} MiB {:>26} {:>26} {:>22} {:>26}",
            size / MIB,
            s.show(1),
            r.show(1),
            paired_ratio(&safe_us, &raw_us),
            c.show(0)
        );
        size *= 2;
    }
    Ok(())
}
