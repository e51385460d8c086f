//! Finding a device: the one way to ask "is there a usable GPU" ([`Device::first_usable`]), a device's
//! stable names ([`Device::uuid`], [`Device::pci_bus_id`]) and picking one by a user's string
//! ([`Device::select`]).

mod parse;

pub use parse::{DeviceSelector, DeviceUuid, PciBusId};

use crate::device::Device;
use crate::error::{Error, Result};
use crate::result;

impl Device {
    /// Device 0, the one a program with no choice to make uses: [`Device::get`]`(0)`. Where this
    /// machine has no usable GPU the error is [`Error::NoDevice`], whatever the cause (no device, no
    /// working driver, a driver older than the runtime), saying which ([`Error::is_no_device`]).
    ///
    /// # Errors
    ///
    /// As [`Device::get`]: [`Error::NoDevice`] where there is no usable GPU, with `dynamic-loading`
    /// [`Error::LibraryNotFound`] where no HIP runtime could be opened, and what HIP returns for opening
    /// the device.
    ///
    /// ```no_run
    /// let device = hip::Device::first()?;
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn first() -> Result<Device> {
        Device::get(0)
    }

    /// The one way to ask "is there a usable GPU": device 0 when there is one; otherwise `no_gpu` is
    /// called with the [`Error::NoDevice`] that says why (no device, no driver, an old driver, with what
    /// to check), and the answer is `Ok(None)`. Every other failure (a library that could not be loaded,
    /// a device that fails to open) is `Err`.
    ///
    /// # Errors
    ///
    /// Every failure of [`Device::first`] but [`Error::NoDevice`]: with `dynamic-loading`
    /// [`Error::LibraryNotFound`] where no HIP runtime could be opened, and what HIP returns for opening
    /// device 0.
    ///
    /// ```no_run
    /// # fn main() -> hip::Result<()> {
    /// let Some(device) = hip::Device::first_usable(|why| println!("{why}"))? else {
    ///     return Ok(()); // no GPU here: the reason was printed
    /// };
    /// println!("running on {}", device.properties()?.name);
    /// # Ok(())
    /// # }
    /// ```
    pub fn first_usable(no_gpu: impl FnOnce(&Error)) -> Result<Option<Device>> {
        match Device::first() {
            Ok(d) => Ok(Some(d)),
            Err(e) if e.is_no_device() => {
                no_gpu(&e);
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// The device's UUID (`hipDeviceGetUuid`), as `nvidia-smi -L` or `rocminfo` show it (see
    /// [`DeviceUuid`]). Stable across processes, reboots and `*_VISIBLE_DEVICES` orderings, unlike the
    /// ordinal.
    ///
    /// HIP 5.2.3's NVIDIA headers copy CUDA's UUID with `strncpy`: bytes after a zero byte come back as
    /// zeros there (about 6% of UUIDs have a zero byte). Such a UUID still shows and selects the same
    /// device every time, but differs from `nvidia-smi`'s.
    ///
    /// # Errors
    ///
    /// [`Error::Hip`] with what `hipDeviceGetUuid` returns.
    ///
    /// ```no_run
    /// let device = hip::Device::first()?;
    /// let uuid = device.uuid()?;
    /// println!("{uuid}"); // GPU-...; `Device::select` takes it back
    /// assert_eq!(hip::Device::select(&uuid.to_string())?.ordinal(), device.ordinal());
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn uuid(&self) -> Result<DeviceUuid> {
        result::device::uuid(self.ordinal() as i32).map(DeviceUuid)
    }

    /// The device's PCI address (`hipDeviceGetPCIBusId`), e.g. `0000:3b:00.0`.
    ///
    /// # Errors
    ///
    /// [`Error::Hip`] with what `hipDeviceGetPCIBusId` returns; [`Error::InvalidArgument`] if the
    /// runtime's answer is not a PCI address.
    ///
    /// ```no_run
    /// let device = hip::Device::first()?;
    /// println!("device {} is at {}", device.ordinal(), device.pci_bus_id()?);
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn pci_bus_id(&self) -> Result<PciBusId> {
        result::device::pci_bus_id(self.ordinal() as i32)?.parse()
    }

    /// The ordinal of the device at PCI address `bus_id`, as the runtime finds it
    /// (`hipDeviceGetByPCIBusId`; the spellings it accepts differ by platform:
    /// [`select`](Self::select) accepts every spelling of [`PciBusId`] on both).
    ///
    /// # Errors
    ///
    /// [`Error::InteriorNul`] for a NUL byte in `bus_id`; [`Error::Hip`] with what
    /// `hipDeviceGetByPCIBusId` returns (no such device, a spelling it does not take);
    /// [`Error::InvalidArgument`] if the runtime answers a negative ordinal.
    ///
    /// ```no_run
    /// let ordinal = hip::Device::ordinal_by_pci_bus_id("0000:3b:00.0")?;
    /// let device = hip::Device::get(ordinal)?;
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn ordinal_by_pci_bus_id(bus_id: &str) -> Result<usize> {
        let ordinal = result::device::device_by_pci_bus_id(bus_id)?;
        usize::try_from(ordinal).map_err(|_| Error::InvalidArgument {
            what: "PCI bus id",
            value: bus_id.to_string(),
            reason: format!("the runtime answered ordinal {ordinal}"),
        })
    }

    /// Open the device a user named (a command-line argument, a configuration value): its ordinal (`1`),
    /// its UUID (`GPU-5a4c1a6e-8a34-2bd5-3f2b-6a1e0c9d7f10`, or AMD's `GPU-2ee3f2c5e6b0f4a2`) or its PCI
    /// bus id (`0000:3b:00.0`); see [`DeviceSelector`] for every spelling. UUIDs and bus ids name the
    /// same GPU whatever `HIP_VISIBLE_DEVICES` / `CUDA_VISIBLE_DEVICES` hide or reorder; ordinals count
    /// the devices this process sees.
    ///
    /// - A string in none of the forms: [`Error::InvalidArgument`] naming them, before any HIP call.
    /// - No usable GPU at all: [`Error::NoDevice`].
    /// - No device matches: [`Error::NoMatchingDevice`], listing each device present with its ordinal,
    ///   name, UUID and bus id, so the right string can be copied from the message.
    /// - A UUID two devices share (AMD devices without a unique id report the same one): refused the
    ///   same way, rather than picking one.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a string in none of the forms, [`Error::NoDevice`] where there is
    /// no usable GPU, [`Error::NoMatchingDevice`] when no device or more than one matches, and what
    /// [`Device::get`] returns for the one that matches.
    ///
    /// ```no_run
    /// // e.g. `--device 0000:3b:00.0`, `--device GPU-5a4c1a6e-...` or `--device 1`
    /// let spec = std::env::args().nth(1).unwrap_or_else(|| "0".into());
    /// let device = hip::Device::select(&spec)?; // the error lists every device present
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn select(spec: &str) -> Result<Device> {
        let selector: DeviceSelector = spec.parse()?;
        let count = Device::count()?;
        let mut found = Vec::new();
        for ordinal in 0..count {
            // A device whose UUID or bus id the runtime cannot give is matched by what it can give.
            let (uuid, bus) = identity(ordinal);
            if selector.matches(ordinal, uuid.as_ref(), bus.as_ref()) {
                found.push(ordinal);
            }
        }
        match found.as_slice() {
            [ordinal] => Device::get(*ordinal),
            _ => Err(Error::NoMatchingDevice {
                spec: spec.to_string(),
                matched: found.len(),
                present: present(count),
            }),
        }
    }
}

/// What the runtime says device `ordinal`'s UUID and PCI bus id are (`None` for what it could not say).
fn identity(ordinal: usize) -> (Option<DeviceUuid>, Option<PciBusId>) {
    let raw = ordinal as i32;
    let uuid = result::device::uuid(raw).ok().map(DeviceUuid);
    let bus = result::device::pci_bus_id(raw)
        .ok()
        .and_then(|s| s.parse().ok());
    (uuid, bus)
}

/// One line per device present: `0: <name>, GPU-<uuid>, <bus id>`, for [`Error::NoMatchingDevice`].
fn present(count: usize) -> Vec<String> {
    (0..count)
        .map(|ordinal| {
            let (uuid, bus) = identity(ordinal);
            let name = result::device_properties(ordinal as i32)
                .map(|p| {
                    let bytes: Vec<u8> = p
                        .name
                        .iter()
                        .take_while(|&&c| c != 0)
                        .map(|&c| c as u8)
                        .collect();
                    String::from_utf8_lossy(&bytes).into_owned()
                })
                .unwrap_or_else(|e| format!("(no name: {e})"));
            let show = |v: Option<String>| v.unwrap_or_else(|| "unknown".into());
            format!(
                "{ordinal}: {name}, {}, {}",
                show(uuid.map(|u| u.to_string())),
                show(bus.map(|b| b.to_string()))
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::no_usable_gpu;
    use crate::error::NoDeviceReason;
    use crate::{HipErrorCode, Status};
    use hip_sys::hipError_t;

    #[test]
    fn every_no_usable_gpu_answer_of_the_count_is_one_error_naming_no_call() {
        for (code, nvidia_only) in [
            (100, false),
            (35, false),
            (3, false),
            (34, true),
            (999, true),
        ] {
            let raw = Error::from_hip("hipGetDeviceCount", hipError_t(code));
            let mapped = no_usable_gpu(raw);
            if nvidia_only && crate::PLATFORM != "nvidia" {
                assert!(matches!(mapped, Error::Hip { .. }), "{code}: {mapped:?}");
                continue;
            }
            assert!(mapped.is_no_device(), "{code}: {mapped:?}");
            assert_eq!(mapped.status(), Status::BackendNotAvailable, "{code}");
            assert_eq!(
                mapped.hip_code(),
                Some(HipErrorCode(code)),
                "the raw code is kept"
            );
            let text = mapped.to_string();
            assert!(!text.contains("hipGetDeviceCount"), "{text}");
            let Error::NoDevice { reason, .. } = mapped else {
                unreachable!()
            };
            match code {
                100 => assert!(text.starts_with("no HIP device was found"), "{text}"),
                // No driver, or an old one: which depends on the versions this machine's runtime answers.
                35 => assert!(
                    matches!(
                        reason,
                        NoDeviceReason::NoDriver | NoDeviceReason::DriverTooOld { .. }
                    ) && text.starts_with("no usable GPU: ")
                        && text.contains("driver"),
                    "{text}"
                ),
                _ => assert!(text.starts_with("no usable GPU: "), "{text}"),
            }
        }
    }

    #[test]
    fn other_failures_of_the_count_stay_as_they_are() {
        let raw = Error::from_hip("hipGetDeviceCount", hipError_t(1));
        let mapped = no_usable_gpu(raw);
        assert!(
            matches!(
                &mapped,
                Error::Hip {
                    call: "hipGetDeviceCount",
                    ..
                }
            ),
            "{mapped:?}"
        );
        assert!(!mapped.is_no_device());
        // A library that could not be opened is a deployment error, not "no GPU".
        let missing = Error::LibraryNotFound {
            library: "the HIP runtime (libamdhip64)",
            tried: vec!["/nonexistent/libamdhip64.so: no such file".into()],
            install: "libamdhip64-5",
        };
        assert!(!no_usable_gpu(missing).is_no_device());
    }

    #[test]
    fn no_matching_device_lists_what_was_asked_and_every_device_present() {
        let present = vec![
            "0: NVIDIA H200, GPU-5a4c1a6e-8a34-2bd5-3f2b-6a1e0c9d7f10, 0000:3b:00.0".to_string(),
            "1: NVIDIA H200, GPU-0b1c2d3e-8a34-2bd5-3f2b-6a1e0c9d7f10, 0000:5c:00.0".to_string(),
        ];
        let none = Error::NoMatchingDevice {
            spec: "0000:3c:00.0".into(),
            matched: 0,
            present: present.clone(),
        }
        .to_string();
        assert_eq!(
            none,
            format!(
                "no device matches `0000:3c:00.0`; the devices present (ordinal: name, UUID, PCI bus id): {}; {}",
                present[0], present[1]
            )
        );
        let two = Error::NoMatchingDevice {
            spec: "GPU-5858585858585858".into(),
            matched: 2,
            present,
        }
        .to_string();
        assert!(
            two.starts_with(
                "2 devices match `GPU-5858585858585858`: name one by its PCI bus id; the devices"
            ),
            "{two}"
        );
    }
}
