//! What the device and the compiler say about themselves, checked against a second source: each
//! `DeviceProperties` field against `hipDeviceGetAttribute` (and, on NVIDIA, `nvidia-smi`); targets the
//! compiler does not know refused before it runs, naming the value and what it accepts; images the driver
//! cannot load refused naming what they are. Compiled only with `--features gpu`.
#![cfg(feature = "gpu")]
mod common;

use common::{device, VECTOR_ADD};
use hip::prelude::*;
use hip::sys;
use hip::Error;

#[test]
fn every_property_shown_agrees_with_the_attribute_query() {
    let d = device();
    let p = d.properties().unwrap();
    let a = |attr| d.attribute(attr).unwrap();
    let u = |attr| a(attr) as u32;
    assert_eq!(
        p.compute_units,
        u(sys::hipDeviceAttributeMultiprocessorCount)
    );
    assert_eq!(p.warp_size, u(sys::hipDeviceAttributeWarpSize));
    assert_eq!(
        p.max_threads_per_block,
        u(sys::hipDeviceAttributeMaxThreadsPerBlock)
    );
    assert_eq!(
        p.max_block_dim,
        [
            u(sys::hipDeviceAttributeMaxBlockDimX),
            u(sys::hipDeviceAttributeMaxBlockDimY),
            u(sys::hipDeviceAttributeMaxBlockDimZ)
        ]
    );
    assert_eq!(
        p.max_grid_dim,
        [
            u(sys::hipDeviceAttributeMaxGridDimX),
            u(sys::hipDeviceAttributeMaxGridDimY),
            u(sys::hipDeviceAttributeMaxGridDimZ)
        ]
    );
    assert_eq!(
        p.shared_mem_per_block,
        a(sys::hipDeviceAttributeMaxSharedMemoryPerBlock) as usize
    );
    assert_eq!(p.clock_rate_khz, u(sys::hipDeviceAttributeClockRate));
    assert_eq!(
        p.memory_clock_rate_khz,
        u(sys::hipDeviceAttributeMemoryClockRate)
    );
    assert_eq!(p.memory_bus_width, u(sys::hipDeviceAttributeMemoryBusWidth));
    assert_eq!(p.l2_cache_size, u(sys::hipDeviceAttributeL2CacheSize));
    assert_eq!(p.major, a(sys::hipDeviceAttributeComputeCapabilityMajor));
    assert_eq!(p.minor, a(sys::hipDeviceAttributeComputeCapabilityMinor));
    assert_eq!(p.pci_bus_id, u(sys::hipDeviceAttributePciBusId));
    assert_eq!(p.pci_device_id, u(sys::hipDeviceAttributePciDeviceId));
    // HIP 5.2.3's and 5.7.1's NVIDIA hipGetDeviceProperties leave managedMemory unset: it read false on
    // an H100 before the crate asked the attribute.
    assert_eq!(
        p.managed_memory,
        a(sys::hipDeviceAttributeManagedMemory) != 0
    );
    assert_eq!(
        p.concurrent_kernels,
        a(sys::hipDeviceAttributeConcurrentKernels) != 0
    );
    assert_eq!(p.total_global_mem, d.memory_info().unwrap().1);
    // Every GPU these tests run on (H100, H200, MI-series) has managed memory and concurrent kernels.
    assert!(p.managed_memory && p.concurrent_kernels, "{p:?}");
}

/// `nvidia-smi`'s answer for the GPU at `bus` (PCI bus number), fields in the order asked.
#[cfg(hip_platform = "nvidia")]
fn nvidia_smi(domain: u32, bus: u32, device: u32) -> Vec<String> {
    let out = std::process::Command::new("nvidia-smi")
        .args([
            "--query-gpu=pci.bus_id,name,memory.total,clocks.max.sm,clocks.max.mem,compute_cap,memory.reserved",
            "--format=csv,noheader,nounits",
        ])
        .output()
        .expect("nvidia-smi runs on an NVIDIA GPU machine (the driver installs it)");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let ours = format!("{domain:08x}:{bus:02x}:{device:02x}.0");
    text.lines()
        .map(|l| {
            l.split(',')
                .map(|f| f.trim().to_string())
                .collect::<Vec<_>>()
        })
        .find(|f| f[0].eq_ignore_ascii_case(&ours))
        .unwrap_or_else(|| panic!("no GPU at {ours} in nvidia-smi's list:\n{text}"))
}

#[cfg(hip_platform = "nvidia")]
#[test]
fn the_properties_agree_with_nvidia_smi() {
    let d = device();
    let p = d.properties().unwrap();
    let smi = nvidia_smi(p.pci_domain_id, p.pci_bus_id, p.pci_device_id);
    assert_eq!(p.name, smi[1]);
    let mib = |s: &str| s.parse::<u64>().unwrap();
    // CUDA's total leaves out what the driver reserves; nvidia-smi's includes it (H100 80GB HBM3,
    // driver 580: 81079 MiB against 81559 MiB, 480 reserved).
    let total = p.total_global_mem as u64 >> 20;
    let (smi_total, reserved) = (mib(&smi[2]), mib(&smi[6]));
    assert!(
        smi_total - reserved <= total + 1 && total <= smi_total,
        "CUDA says {total} MiB; nvidia-smi {smi:?}"
    );
    assert_eq!(p.clock_rate_khz / 1000, mib(&smi[3]) as u32, "{smi:?}");
    assert_eq!(
        p.memory_clock_rate_khz / 1000,
        mib(&smi[4]) as u32,
        "{smi:?}"
    );
    assert_eq!(format!("{}.{}", p.major, p.minor), smi[5]);
    assert_eq!(p.arch_name, format!("compute_{}{}", p.major, p.minor));
}

fn refused_target(arch: &str) -> String {
    match ProgramBuilder::new(VECTOR_ADD)
        .arch(arch)
        .no_cache()
        .compile()
    {
        Err(e @ Error::UnknownArch { .. }) => e.to_string(),
        other => panic!("{arch}: expected UnknownArch, got {other:?}"),
    }
}

#[test]
fn targets_the_compiler_does_not_know_are_refused_naming_the_value_and_the_list() {
    let d = device();
    let own = d.arch_name().unwrap();
    // The device's own target compiles and runs (the list is not too strict).
    let code = ProgramBuilder::new(VECTOR_ADD)
        .arch(&own)
        .no_cache()
        .compile()
        .unwrap();
    Module::load_data(&d, code.code()).unwrap();
    let foreign: &[&str] = if cfg!(hip_platform = "nvidia") {
        &[
            "gfx90a",
            "GFX90A",
            "gfx90a:xnack+",
            "compute_91",
            "sm_91",
            "compute_",
            "compute_80a",
        ]
    } else {
        &["compute_90", "sm_90", "GFX90A", "gfx9999"]
    };
    for arch in foreign {
        let m = refused_target(arch);
        assert!(m.contains(&format!("`{arch}`")), "{m}");
        if cfg!(hip_platform = "nvidia") {
            // NVRTC's own list, with the device's number in it.
            let number = own.trim_start_matches("compute_");
            assert!(
                m.contains("compute_XY (PTX) or sm_XY (a cubin) for XY in"),
                "{m}"
            );
            assert!(m.contains(&format!(" {number}")), "{m}");
            assert_eq!(
                m.contains("need HIP's AMD platform"),
                arch.to_lowercase().starts_with("gfx"),
                "{m}"
            );
        } else {
            assert!(m.contains("gfx90a"), "comgr's list: {m}");
        }
    }
    // NVRTC 12.9 added family-specific targets (`f`, from 100): taken, and compiled to PTX for them.
    if cfg!(hip_platform = "nvidia") && hip::rtc::version().unwrap() >= (12, 9) {
        for arch in ["compute_100f", "compute_120f"] {
            let ptx = ProgramBuilder::new(VECTOR_ADD)
                .arch(arch)
                .no_cache()
                .compile()
                .unwrap_or_else(|e| panic!("{arch}: {e}"));
            let text = String::from_utf8_lossy(ptx.code()).into_owned();
            let target = arch.replace("compute", "sm");
            assert!(
                text.contains(&format!(".target {target}")),
                "{arch}: {text}"
            );
        }
        assert!(refused_target("compute_90f").contains("`f` suffix from 100"));
    }
}

#[test]
fn images_the_driver_cannot_load_are_refused_naming_what_they_are() {
    let d = device();
    for (image, what) in [
        (
            b"hello world".as_slice(),
            "first directive is not PTX's `.version`",
        ),
        (b"\x00\x01garbage\x00", "binary data"),
    ] {
        match Module::load_data(&d, image) {
            Err(Error::InvalidCodeObject(m)) if cfg!(hip_platform = "nvidia") => {
                assert!(m.contains(what), "{m}");
                assert!(m.contains("takes PTX text"), "{m}");
            }
            Err(Error::InvalidCodeObject(m)) => {
                assert!(m.contains("not a code object"), "{m}")
            }
            other => panic!("{image:?}: {other:?}"),
        }
    }
    // The compiler's own output still loads, with or without its trailing NUL.
    let code = ProgramBuilder::new(VECTOR_ADD).compile().unwrap();
    let bytes = code.code();
    Module::load_data(&d, bytes).unwrap();
    if cfg!(hip_platform = "nvidia") {
        Module::load_data(&d, bytes.strip_suffix(b"\0").unwrap_or(bytes)).unwrap();
    }
}
