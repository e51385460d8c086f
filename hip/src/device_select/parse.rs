//! What names a device stably, and how a user writes it: [`DeviceUuid`], [`PciBusId`], and
//! [`DeviceSelector`] (an ordinal, `GPU-<uuid>` or a PCI bus id), parsed with no HIP call.

use crate::error::{Error, Result};
use std::fmt;
use std::str::FromStr;

/// A device's UUID, the 16 bytes `hipDeviceGetUuid` gives ([`Device::uuid`](crate::Device::uuid)).
///
/// Shown as the platform's own tools write it:
/// - NVIDIA: `GPU-` and the bytes in the 8-4-4-4-12 form, as `nvidia-smi -L` and `CUDA_VISIBLE_DEVICES`
///   write them (`GPU-5a4c1a6e-8a34-2bd5-3f2b-6a1e0c9d7f10`);
/// - AMD: the runtime's 16 bytes are ASCII, the unique id in hexadecimal; shown as `rocminfo` and
///   `ROCR_VISIBLE_DEVICES` write it, `GPU-` and those 16 characters (`GPU-2ee3f2c5e6b0f4a2`).
///
/// Which form is chosen by the bytes: 16 ASCII hexadecimal digits are AMD's form (an NVIDIA UUID made
/// of such bytes has a chance of about 1 in 2^56).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DeviceUuid(pub [u8; 16]);

impl DeviceUuid {
    /// The 16 bytes.
    pub fn bytes(&self) -> [u8; 16] {
        self.0
    }

    /// AMD's form: the 16 bytes as hexadecimal characters, where they all are.
    fn ascii_hex(&self) -> Option<&str> {
        if self.0.iter().all(u8::is_ascii_hexdigit) {
            std::str::from_utf8(&self.0).ok()
        } else {
            None
        }
    }

    /// Whether `spec` (the part after `GPU-`, as parsed) names this UUID.
    fn matches(&self, spec: &UuidSpec) -> bool {
        match spec {
            UuidSpec::Bytes(b) => *b == self.0,
            UuidSpec::Ascii(s) => self
                .ascii_hex()
                .is_some_and(|mine| mine.eq_ignore_ascii_case(s)),
        }
    }
}

impl fmt::Display for DeviceUuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(ascii) = self.ascii_hex() {
            return write!(f, "GPU-{ascii}");
        }
        f.write_str("GPU")?;
        for (i, b) in self.0.iter().enumerate() {
            if matches!(i, 0 | 4 | 6 | 8 | 10) {
                f.write_str("-")?;
            }
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

/// A device's PCI address, `domain:bus:device.function` ([`Device::pci_bus_id`](crate::Device::pci_bus_id)).
///
/// Parsed from any form the tools write (hexadecimal, either case): `0000:3b:00.0` (HIP, CUDA, `lspci
/// -D`), `00000000:3B:00.0` (`nvidia-smi`), `3b:00.0` (`lspci`: domain 0), `0000:3b:00` (function 0).
/// Shown as `0000:3b:00.0`. Two ids are equal when their numbers are, whatever the spelling.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PciBusId {
    /// PCI domain (segment).
    pub domain: u32,
    /// Bus number.
    pub bus: u8,
    /// Device number (0 to 31).
    pub device: u8,
    /// Function number (0 to 7).
    pub function: u8,
}

impl fmt::Display for PciBusId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:04x}:{:02x}:{:02x}.{:x}",
            self.domain, self.bus, self.device, self.function
        )
    }
}

impl FromStr for PciBusId {
    type Err = Error;

    fn from_str(s: &str) -> Result<PciBusId> {
        let refuse = |reason: &str| {
            Error::InvalidArgument {
            what: "PCI bus id",
            value: s.to_string(),
            reason: format!(
                "{reason}; write domain:bus:device.function in hexadecimal, e.g. 0000:3b:00.0 (the domain \
                 and the function may be left out)"
            ),
        }
        };
        let hex = |part: &str, what: &str, digits: usize, max: u32| -> Result<u32> {
            if part.is_empty()
                || part.len() > digits
                || !part.bytes().all(|b| b.is_ascii_hexdigit())
            {
                return Err(refuse(&format!(
                    "the {what} `{part}` is not 1 to {digits} hexadecimal digits"
                )));
            }
            let v = u32::from_str_radix(part, 16).map_err(|_| refuse("not hexadecimal"))?;
            if v > max {
                return Err(refuse(&format!(
                    "the {what} {v:#x} is past its largest value {max:#x}"
                )));
            }
            Ok(v)
        };
        let (rest, function) = match s.rsplit_once('.') {
            Some((rest, f)) => (rest, hex(f, "function", 1, 7)?),
            None => (s, 0),
        };
        let parts: Vec<&str> = rest.split(':').collect();
        let (domain, bus, device) = match parts.as_slice() {
            [d, b, dev] => (hex(d, "domain", 8, u32::MAX)?, *b, *dev),
            [b, dev] => (0, *b, *dev),
            _ => return Err(refuse("expected two or three parts separated by `:`")),
        };
        Ok(PciBusId {
            domain,
            bus: hex(bus, "bus", 2, 0xff)? as u8,
            device: hex(device, "device", 2, 0x1f)? as u8,
            function: function as u8,
        })
    }
}

/// What follows `GPU-` in a selector: the 16 bytes (32 hexadecimal digits, NVIDIA's form), or AMD's 16
/// characters.
#[derive(Clone, Debug, PartialEq, Eq)]
enum UuidSpec {
    Bytes([u8; 16]),
    Ascii(String),
}

/// How a user names one device: its ordinal, its UUID or its PCI bus id
/// ([`Device::select`](crate::Device::select)).
///
/// Parsed from a string ([`FromStr`]; no HIP call):
/// - an ordinal, `0`, `1`, ...: the n-th device this process sees (after `HIP_VISIBLE_DEVICES`,
///   `CUDA_VISIBLE_DEVICES` or `ROCR_VISIBLE_DEVICES` chose and ordered them), so not stable across
///   machines or settings;
/// - `GPU-` and a UUID as [`DeviceUuid`] shows it: NVIDIA's 32 hexadecimal digits (dashes anywhere, as
///   `nvidia-smi -L` prints them, or none), or AMD's 16 characters (`rocminfo`'s `Uuid`); any case;
/// - a PCI bus id as [`PciBusId`] parses it (`0000:3b:00.0`, `00000000:3B:00.0`, `3b:00.0`).
///
/// Spaces around it are ignored. Anything else is [`Error::InvalidArgument`] naming the three forms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceSelector(Selector);

#[derive(Clone, Debug, PartialEq, Eq)]
enum Selector {
    Ordinal(usize),
    Uuid(UuidSpec),
    PciBusId(PciBusId),
}

impl DeviceSelector {
    /// The ordinal, for a selector that is one.
    pub fn ordinal(&self) -> Option<usize> {
        match self.0 {
            Selector::Ordinal(n) => Some(n),
            _ => None,
        }
    }

    /// The PCI bus id, for a selector that is one.
    pub fn pci_bus_id(&self) -> Option<PciBusId> {
        match self.0 {
            Selector::PciBusId(id) => Some(id),
            _ => None,
        }
    }

    /// Whether the device of `ordinal`, with this UUID and PCI bus id (`None` where the runtime could not
    /// say), is the one selected.
    pub fn matches(
        &self,
        ordinal: usize,
        uuid: Option<&DeviceUuid>,
        bus: Option<&PciBusId>,
    ) -> bool {
        match &self.0 {
            Selector::Ordinal(n) => *n == ordinal,
            Selector::Uuid(spec) => uuid.is_some_and(|u| u.matches(spec)),
            Selector::PciBusId(id) => bus == Some(id),
        }
    }
}

impl FromStr for DeviceSelector {
    type Err = Error;

    fn from_str(s: &str) -> Result<DeviceSelector> {
        let t = s.trim();
        let refuse = |reason: String| Error::InvalidArgument {
            what: "device",
            value: s.to_string(),
            reason,
        };
        if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
            return t
                .parse()
                .map(|n| DeviceSelector(Selector::Ordinal(n)))
                .map_err(|_| refuse("the ordinal is too large".into()));
        }
        if t.len() >= 4 && t[..4].eq_ignore_ascii_case("GPU-") {
            return parse_uuid(&t[4..])
                .map(|u| DeviceSelector(Selector::Uuid(u)))
                .map_err(refuse);
        }
        if t.contains(':') {
            return t.parse().map(|id| DeviceSelector(Selector::PciBusId(id)));
        }
        Err(refuse(
            "name a device by its ordinal (`0`), its UUID (`GPU-` and the UUID, as `nvidia-smi -L` or \
             `rocminfo` print it) or its PCI bus id (`0000:3b:00.0`)"
                .into(),
        ))
    }
}

fn parse_uuid(s: &str) -> std::result::Result<UuidSpec, String> {
    let digits: String = s.chars().filter(|c| *c != '-').collect();
    if !digits.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(format!(
            "`{s}` after `GPU-` is not hexadecimal digits and dashes"
        ));
    }
    match digits.len() {
        32 => {
            let mut bytes = [0u8; 16];
            for (i, b) in bytes.iter_mut().enumerate() {
                *b = u8::from_str_radix(&digits[2 * i..2 * i + 2], 16)
                    .map_err(|e| format!("`{s}`: {e}"))?;
            }
            Ok(UuidSpec::Bytes(bytes))
        }
        // AMD's unique id: 16 characters, written without dashes.
        16 if !s.contains('-') => Ok(UuidSpec::Ascii(digits)),
        n => Err(format!(
            "a UUID after `GPU-` has 32 hexadecimal digits (NVIDIA; dashes allowed) or 16 (AMD's unique \
             id); `{s}` has {n}"
        )),
    }
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
