//! Measure what a memory pool's release threshold does: device free memory after a stream-ordered 1 GiB
//! allocation is freed and the stream synchronised, with threshold 0 and `u64::MAX`, and after
//! `MemPool::trim_to(0)`. docs/GRAPHS_POOLS.md records the figures.
use hip::prelude::*;
use hip::MemPool;

fn free_mib(d: &Device) -> hip::Result<i64> {
    Ok((d.memory_info()?.0 >> 20) as i64)
}

fn main() -> hip::Result<()> {
    let Some(d) = Device::first_usable(|why| {
        println!("{why}\nthe pool release threshold needs one to measure")
    })?
    else {
        return Ok(());
    };
    let pool = match MemPool::default_for(&d) {
        Ok(p) => p,
        Err(e) => {
            println!("no memory pools on device 0: {e}");
            return Ok(());
        }
    };
    let s = Stream::new(&d)?;
    let len = (1usize << 30) / 4;
    println!("| release threshold | free before (MiB) | while allocated | after free + sync | after trim_to(0) |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    for (label, threshold) in [("0", 0u64), ("u64::MAX", u64::MAX)] {
        pool.set_release_threshold(threshold)?;
        let before = free_mib(&d)?;
        let b = DeviceBuffer::<u32>::zeroed_async(&s, len)?;
        s.synchronize()?;
        let during = free_mib(&d)?;
        drop(b);
        s.synchronize()?;
        let after = free_mib(&d)?;
        pool.trim_to(0)?;
        let trimmed = free_mib(&d)?;
        println!("| {label} | {before} | {during} | {after} | {trimmed} |");
    }
    pool.set_release_threshold(0)?;
    Ok(())
}
