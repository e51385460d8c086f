use super::*;
use crate::Status;

const NVIDIA: [u8; 16] = [
    0x5a, 0x4c, 0x1a, 0x6e, 0x8a, 0x34, 0x2b, 0xd5, 0x3f, 0x2b, 0x6a, 0x1e, 0x0c, 0x9d, 0x7f, 0x10,
];
const AMD: [u8; 16] = *b"2ee3f2c5e6b0f4a2";

fn sel(s: &str) -> DeviceSelector {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn refused(s: &str) -> String {
    let e = s.parse::<DeviceSelector>().unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{s}: {e:?}");
    assert_eq!(e.status(), Status::InvalidArgument);
    e.to_string()
}

#[test]
fn uuids_show_as_each_platforms_tools_write_them() {
    assert_eq!(
        DeviceUuid(NVIDIA).to_string(),
        "GPU-5a4c1a6e-8a34-2bd5-3f2b-6a1e0c9d7f10"
    );
    assert_eq!(DeviceUuid(AMD).to_string(), "GPU-2ee3f2c5e6b0f4a2");
}

#[test]
fn a_uuid_selects_in_every_spelling_and_only_its_device() {
    let nv = DeviceUuid(NVIDIA);
    for s in [
        "GPU-5a4c1a6e-8a34-2bd5-3f2b-6a1e0c9d7f10",
        "gpu-5A4C1A6E-8A34-2BD5-3F2B-6A1E0C9D7F10",
        "GPU-5a4c1a6e8a342bd53f2b6a1e0c9d7f10",
        "  GPU-5a4c1a6e-8a34-2bd5-3f2b-6a1e0c9d7f10\n",
    ] {
        assert!(sel(s).matches(3, Some(&nv), None), "{s}");
    }
    // One digit different, or another device's UUID: no match, whatever the ordinal.
    let other = sel("GPU-5a4c1a6e-8a34-2bd5-3f2b-6a1e0c9d7f11");
    assert!(!other.matches(0, Some(&nv), None));
    assert!(
        !sel(&nv.to_string()).matches(0, None, None),
        "no UUID known"
    );
    // AMD's 16 characters, any case; the NVIDIA form of the same bytes names them too.
    let amd = DeviceUuid(AMD);
    assert!(sel("GPU-2ee3f2c5e6b0f4a2").matches(0, Some(&amd), None));
    assert!(sel("GPU-2EE3F2C5E6B0F4A2").matches(0, Some(&amd), None));
    assert!(!sel("GPU-2ee3f2c5e6b0f4a3").matches(0, Some(&amd), None));
    let amd_as_bytes: String = AMD.iter().map(|b| format!("{b:02x}")).collect();
    assert!(sel(&format!("GPU-{amd_as_bytes}")).matches(0, Some(&amd), None));
    // AMD's form never matches an NVIDIA UUID (its bytes are not ASCII digits).
    assert!(!sel("GPU-5a4c1a6e8a342bd5").matches(0, Some(&nv), None));
    // Round trip: what a device shows selects it.
    assert!(sel(&nv.to_string()).matches(0, Some(&nv), None));
    assert!(sel(&amd.to_string()).matches(0, Some(&amd), None));
}

#[test]
fn pci_bus_ids_parse_from_every_tools_spelling() {
    let want = PciBusId {
        domain: 0,
        bus: 0x3b,
        device: 0,
        function: 0,
    };
    for s in [
        "0000:3b:00.0",
        "00000000:3B:00.0",
        "3b:00.0",
        "0000:3b:00",
        "3B:0",
    ] {
        assert_eq!(s.parse::<PciBusId>().unwrap(), want, "{s}");
        assert_eq!(sel(s).pci_bus_id(), Some(want), "{s}");
        assert!(sel(s).matches(7, None, Some(&want)), "{s}");
    }
    assert_eq!(want.to_string(), "0000:3b:00.0");
    let far = "0001:c1:1f.7".parse::<PciBusId>().unwrap();
    assert_eq!(
        far,
        PciBusId {
            domain: 1,
            bus: 0xc1,
            device: 0x1f,
            function: 7
        }
    );
    assert_eq!(far.to_string(), "0001:c1:1f.7");
    assert!(!sel("0000:3b:00.1").matches(0, None, Some(&want)));
    assert!(!sel("0000:3c:00.0").matches(0, None, Some(&want)));
    assert!(
        !sel("0000:3b:00.0").matches(0, None, None),
        "no bus id known"
    );
}

#[test]
fn bad_pci_bus_ids_are_refused_naming_the_part() {
    for (s, part) in [
        ("0000:3b:20.0", "device"),
        ("0000:3b:00.8", "function"),
        ("0000:13b:00.0", "bus"),
        ("000000000:3b:00.0", "domain"),
        ("0000:3g:00.0", "bus"),
        ("0000:3b:00.", "function"),
        ("0:0:0:0.0", "parts"),
        (":", "bus"),
    ] {
        let e = s.parse::<PciBusId>().unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains(part) && text.contains("0000:3b:00.0"),
            "{s}: {text}"
        );
        assert_eq!(e.status(), Status::InvalidArgument);
    }
}

#[test]
fn ordinals_select_by_position() {
    assert_eq!(sel("0").ordinal(), Some(0));
    assert_eq!(sel(" 12 ").ordinal(), Some(12));
    assert!(sel("1").matches(1, None, None));
    assert!(!sel("1").matches(0, None, None));
    assert_eq!(sel("GPU-2ee3f2c5e6b0f4a2").ordinal(), None);
    assert!(refused("99999999999999999999999999").contains("too large"));
}

#[test]
fn anything_else_is_refused_naming_the_three_forms() {
    for s in ["", "  ", "first", "-1", "1.5", "cuda:0"] {
        if s.contains(':') {
            // A PCI bus id was meant; its own message says which part is wrong.
            assert!(refused(s).contains("PCI bus id"), "{s}");
            continue;
        }
        let text = refused(s);
        assert!(
            text.contains("ordinal") && text.contains("GPU-") && text.contains("0000:3b:00.0"),
            "{s}: {text}"
        );
    }
    for s in ["GPU-", "GPU-12345", "GPU-xyz", "GPU-2ee3-f2c5-e6b0-f4a2"] {
        let text = refused(s);
        assert!(text.contains("GPU-"), "{s}: {text}");
    }
}
