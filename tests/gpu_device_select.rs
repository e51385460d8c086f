//! A device's stable names (UUID, PCI bus id) read back and used to find it again, checked against the
//! device's properties and, on NVIDIA, against `nvidia-smi`. Compiled only with `--features gpu`; the
//! two-device case is in tests/gpu_multi.rs.
#![cfg(feature = "gpu")]
mod common;

use common::device;
use hip::{Device, Error, Status};

#[test]
fn the_bus_id_is_the_one_the_properties_give() {
    let d = device();
    let bus = d.pci_bus_id().unwrap();
    let p = d.properties().unwrap();
    assert_eq!(
        (bus.domain, bus.bus as u32, bus.device as u32),
        (p.pci_domain_id, p.pci_bus_id, p.pci_device_id),
        "{bus}"
    );
    // The runtime's reverse lookup takes its own spelling back to this device.
    assert_eq!(Device::ordinal_by_pci_bus_id(&bus.to_string()).unwrap(), 0);
}

#[test]
fn device_0_is_found_by_each_of_its_names_in_each_spelling() {
    let d = device();
    let (uuid, bus) = (d.uuid().unwrap(), d.pci_bus_id().unwrap());
    let nvidia_smi_bus = format!(
        "{:08X}:{:02X}:{:02X}.{}",
        bus.domain, bus.bus, bus.device, bus.function
    );
    for spec in [
        "0".to_string(),
        uuid.to_string(),
        uuid.to_string().to_uppercase(),
        bus.to_string(),
        nvidia_smi_bus,
    ] {
        let found = Device::select(&spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert_eq!(found.ordinal(), 0, "{spec}");
    }
}

#[test]
fn a_name_no_device_has_is_refused_listing_the_devices_present() {
    let d = device();
    let (uuid, bus) = (d.uuid().unwrap(), d.pci_bus_id().unwrap());
    let mut other = uuid.bytes();
    other[15] ^= 0xff;
    let other = hip::DeviceUuid(other).to_string();
    let count = Device::count().unwrap();
    for spec in [other.as_str(), "ffff:ff:1f.7", &count.to_string()] {
        let e = Device::select(spec).unwrap_err();
        assert!(
            matches!(&e, Error::NoMatchingDevice { matched: 0, present, .. } if present.len() == count),
            "{spec}: {e:?}"
        );
        assert_eq!(e.status(), Status::NotFound);
        let text = e.to_string();
        assert!(
            text.contains(&format!("no device matches `{spec}`"))
                && text.contains(&uuid.to_string())
                && text.contains(&bus.to_string())
                && text.contains(&d.properties().unwrap().name),
            "{text}"
        );
    }
}

/// `nvidia-smi`'s UUID for the GPU at `bus`.
#[cfg(hip_platform = "nvidia")]
fn nvidia_smi_uuid(bus: &hip::PciBusId) -> String {
    let out = std::process::Command::new("nvidia-smi")
        .args(["--query-gpu=pci.bus_id,uuid", "--format=csv,noheader"])
        .output()
        .expect("nvidia-smi runs on an NVIDIA GPU machine (the driver installs it)");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.lines()
        .filter_map(|l| l.split_once(','))
        .find(|(b, _)| b.trim().parse::<hip::PciBusId>().ok() == Some(*bus))
        .map(|(_, u)| u.trim().to_string())
        .unwrap_or_else(|| panic!("no GPU at {bus} in nvidia-smi's list:\n{text}"))
}

#[cfg(hip_platform = "nvidia")]
#[test]
fn the_uuid_is_the_one_nvidia_smi_shows() {
    let d = device();
    let (uuid, bus) = (d.uuid().unwrap(), d.pci_bus_id().unwrap());
    let smi = nvidia_smi_uuid(&bus);
    let smi_bytes: Vec<u8> = smi["GPU-".len()..]
        .replace('-', "")
        .as_bytes()
        .chunks(2)
        .map(|h| u8::from_str_radix(std::str::from_utf8(h).unwrap(), 16).unwrap())
        .collect();
    // HIP 5.2.3's NVIDIA hipDeviceGetUuid copies with strncpy: after a zero byte, zeros (headers that
    // copy all 16 bytes give nvidia-smi's UUID whole).
    let cut = smi_bytes.iter().position(|b| *b == 0).unwrap_or(16);
    let mut truncated = [0u8; 16];
    truncated[..cut].copy_from_slice(&smi_bytes[..cut]);
    assert!(
        uuid.bytes()[..] == smi_bytes[..] || uuid.bytes() == truncated,
        "ours {uuid}, nvidia-smi {smi}"
    );
    if uuid.bytes()[..] == smi_bytes[..] {
        assert_eq!(uuid.to_string(), smi);
        assert_eq!(Device::select(&smi).unwrap().ordinal(), 0);
    }
}
