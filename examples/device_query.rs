//! Like rocminfo / deviceQuery: versions and every device's properties, with the names that pick a device
//! stably (`Device::select`): its UUID and PCI bus id.
use hip::{Device, Report};

const GIB: f64 = (1u64 << 30) as f64;

fn main() -> Result<(), Report> {
    println!("platform:        {}", hip::PLATFORM);
    println!("HIP headers:     {:?}", hip::sys::HIP_SYS_VERSION);
    println!("runtime version: {}", hip::runtime_version()?);
    println!("driver version:  {}", hip::driver_version()?);
    let (major, minor) = hip::rtc::version()?;
    println!("HIPRTC version:  {major}.{minor}");
    if Device::first_usable(|why| println!("{why}"))?.is_none() {
        return Ok(());
    }
    let count = Device::count()?;
    println!("devices:         {count}");
    for i in 0..count {
        let d = Device::get(i)?;
        let p = d.properties()?;
        let (free, total) = d.memory_info()?;
        println!("\ndevice {i}: {}", p.name);
        println!("  architecture:          {}", p.arch_name);
        println!("  compute capability:    {}.{}", p.major, p.minor);
        println!(
            "  global memory:         {:.1} GiB ({:.1} GiB free)",
            total as f64 / GIB,
            free as f64 / GIB
        );
        println!("  compute units:         {}", p.compute_units);
        println!("  warp size:             {}", p.warp_size);
        println!("  max threads per block: {}", p.max_threads_per_block);
        println!("  max block dims:        {:?}", p.max_block_dim);
        println!("  max grid dims:         {:?}", p.max_grid_dim);
        println!(
            "  shared mem per block:  {} KiB",
            p.shared_mem_per_block / 1024
        );
        println!(
            "  clock:                 {} MHz (memory {} MHz, {}-bit bus)",
            p.clock_rate_khz / 1000,
            p.memory_clock_rate_khz / 1000,
            p.memory_bus_width
        );
        println!("  L2 cache:              {} KiB", p.l2_cache_size / 1024);
        println!("  UUID:                  {}", d.uuid()?);
        println!("  PCI bus id:            {}", d.pci_bus_id()?);
        println!("  managed memory:        {}", p.managed_memory);
        println!("  concurrent kernels:    {}", p.concurrent_kernels);
        println!(
            "  stream priorities:     {:?}",
            hip::Stream::priority_range(&d)?
        );
    }
    Ok(())
}
