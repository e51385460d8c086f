//! [`DeviceProperties`]: what `hipGetDeviceProperties` says, copied out of `hipDeviceProp_t` (every field
//! read here exists in the 5.2, 5.7, 6.x and 7.x layouts, and on HIP's NVIDIA platform).

use hip_sys as sys;
use std::ffi::c_char;

/// A device's properties, copied out of `hipDeviceProp_t`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct DeviceProperties {
    /// Marketing name, e.g. `"AMD Instinct MI210"`.
    pub name: String,
    /// The architecture HIPRTC targets for this device (see [`Device::arch_name`](super::Device::arch_name)).
    pub arch_name: String,
    /// Global memory in bytes.
    pub total_global_mem: usize,
    /// Compute units (AMD) or streaming multiprocessors (NVIDIA).
    pub compute_units: u32,
    /// Threads per wavefront (64 or 32 on AMD) or warp (32 on NVIDIA).
    pub warp_size: u32,
    /// Most threads in one block.
    pub max_threads_per_block: u32,
    /// Most threads along each block dimension.
    pub max_block_dim: [u32; 3],
    /// Most blocks along each grid dimension.
    pub max_grid_dim: [u32; 3],
    /// Shared memory per block in bytes.
    pub shared_mem_per_block: usize,
    /// Core clock in kHz.
    pub clock_rate_khz: u32,
    /// Memory clock in kHz.
    pub memory_clock_rate_khz: u32,
    /// Memory bus width in bits.
    pub memory_bus_width: u32,
    /// L2 cache in bytes.
    pub l2_cache_size: u32,
    /// Major compute capability (NVIDIA) or GCN major (AMD).
    pub major: i32,
    /// Minor compute capability or GCN minor.
    pub minor: i32,
    /// PCI domain.
    pub pci_domain_id: u32,
    /// PCI bus.
    pub pci_bus_id: u32,
    /// PCI device.
    pub pci_device_id: u32,
    /// Whether the device supports managed memory.
    pub managed_memory: bool,
    /// Whether kernels may run concurrently.
    pub concurrent_kernels: bool,
    /// Constant memory in bytes (`totalConstMem`).
    pub total_const_mem: usize,
    /// 32-bit registers available to one block (`regsPerBlock`).
    pub regs_per_block: u32,
    /// Most resident threads per compute unit / multiprocessor (`maxThreadsPerMultiProcessor`).
    pub max_threads_per_multiprocessor: u32,
    /// Whether cooperative launches (grid-wide synchronization) are supported (`cooperativeLaunch`).
    pub cooperative_launch: bool,
    /// Whether pinned host memory can be mapped into the device's address space (`canMapHostMemory`).
    pub can_map_host_memory: bool,
    /// Largest 1-D texture, in elements (`maxTexture1D`).
    pub max_texture_1d: u32,
    /// Largest 2-D texture, width and height (`maxTexture2D`).
    pub max_texture_2d: [u32; 2],
    /// Largest 3-D texture, width, height and depth (`maxTexture3D`).
    pub max_texture_3d: [u32; 3],
}

fn c_chars(chars: &[c_char]) -> String {
    let bytes: Vec<u8> = chars
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

impl DeviceProperties {
    pub(super) fn from_raw(p: &sys::hipDeviceProp_t) -> DeviceProperties {
        let u = |v: i32| v.max(0) as u32;
        DeviceProperties {
            name: c_chars(&p.name),
            arch_name: arch_name(p),
            total_global_mem: p.totalGlobalMem,
            compute_units: u(p.multiProcessorCount),
            warp_size: u(p.warpSize),
            max_threads_per_block: u(p.maxThreadsPerBlock),
            max_block_dim: p.maxThreadsDim.map(u),
            max_grid_dim: p.maxGridSize.map(u),
            shared_mem_per_block: p.sharedMemPerBlock,
            clock_rate_khz: u(p.clockRate),
            memory_clock_rate_khz: u(p.memoryClockRate),
            memory_bus_width: u(p.memoryBusWidth),
            l2_cache_size: u(p.l2CacheSize),
            major: p.major,
            minor: p.minor,
            pci_domain_id: u(p.pciDomainID),
            pci_bus_id: u(p.pciBusID),
            pci_device_id: u(p.pciDeviceID),
            managed_memory: p.managedMemory != 0,
            concurrent_kernels: p.concurrentKernels != 0,
            total_const_mem: p.totalConstMem,
            regs_per_block: u(p.regsPerBlock),
            max_threads_per_multiprocessor: u(p.maxThreadsPerMultiProcessor),
            cooperative_launch: p.cooperativeLaunch != 0,
            can_map_host_memory: p.canMapHostMemory != 0,
            max_texture_1d: u(p.maxTexture1D),
            max_texture_2d: p.maxTexture2D.map(u),
            max_texture_3d: p.maxTexture3D.map(u),
        }
    }
}

/// AMD: the runtime's `gcnArchName`, with its feature flags, which HIPRTC accepts as is.
#[cfg(hip_platform = "amd")]
fn arch_name(p: &sys::hipDeviceProp_t) -> String {
    c_chars(&p.gcnArchName)
}

/// NVIDIA: no `gcnArchName`; HIPRTC is NVRTC there and wants a virtual architecture, `compute_XY`, so
/// that it returns PTX the driver can load.
#[cfg(hip_platform = "nvidia")]
fn arch_name(p: &sys::hipDeviceProp_t) -> String {
    format!("compute_{}{}", p.major, p.minor)
}
