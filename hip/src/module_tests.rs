//! Unit tests of `module.rs`: code object images checked before HIP sees them (no device needed).

use super::checked_image;
use crate::code_object::tests::{amd_object, bundle, one_kernel};
use crate::Error;

fn no_device() -> crate::Result<String> {
    panic!("the device's target is asked for only for a bundle")
}

// The AMD platform's images: checked, parsed, the bundle's entry for the device picked.
#[cfg(hip_platform = "amd")]
#[test]
fn an_image_whose_metadata_does_not_parse_is_refused_before_hip_sees_it() {
    // Passes the image checks; only the metadata parser finds the version word out of range (it
    // used to be parsed after hipModuleLoadData, and its panic leaked the loaded module).
    use crate::code_object::tests::map;
    use rmpv::Value;
    let hostile = amd_object(&map(vec![
        (
            "amdhsa.version",
            Value::Array(vec![1.into(), 0xFFFF_FFFFu32.into()]),
        ),
        ("amdhsa.kernels", Value::Array(vec![])),
    ]));
    crate::code_object::check(&hostile).unwrap();
    match checked_image(&hostile, no_device) {
        Err(Error::InvalidCodeObject(m)) => assert!(m.contains("amdhsa.version"), "{m}"),
        other => panic!("{other:?}"),
    }
    let in_bundle = bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx90a", &hostile)]);
    match checked_image(&in_bundle, || Ok("gfx90a".into())) {
        Err(Error::InvalidCodeObject(m)) => assert!(m.contains("amdhsa.version"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[cfg(hip_platform = "amd")]
#[test]
fn a_good_image_comes_back_with_its_signatures() {
    let image = amd_object(&one_kernel("amdgcn-amd-amdhsa--gfx90a"));
    let (bytes, code) = checked_image(&image, no_device).unwrap();
    assert_eq!(&bytes[..], &image[..]);
    let code = code.unwrap();
    assert_eq!(code.kernel("k", None).unwrap().params.len(), 1);
    let image = bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx90a", &image)]);
    let (_, code) = checked_image(&image, || Ok("gfx90a:xnack-".into())).unwrap();
    assert!(code.unwrap().kernel("k", Some("gfx90a:xnack-")).is_some());
}

/// HIP's NVIDIA platform: an AMD code object or bundle is refused, naming what it is and what this
/// platform takes, before the driver sees it; PTX text comes back NUL-terminated (the driver reads
/// to a NUL), exactly once.
#[cfg(hip_platform = "nvidia")]
#[test]
fn nvidia_refuses_amd_images_and_terminates_ptx() {
    let image = amd_object(&one_kernel("amdgcn-amd-amdhsa--gfx90a"));
    let in_bundle = bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx90a", &image)]);
    for amd in [&image[..], &in_bundle[..]] {
        match checked_image(amd, no_device) {
            Err(Error::InvalidCodeObject(m)) => assert!(m.contains("NVIDIA platform"), "{m}"),
            other => panic!("{other:?}"),
        }
    }
    let ptx = b".version 7.8\n.target sm_90\n.address_size 64\n";
    let (text, _) = checked_image(ptx, no_device).unwrap();
    assert_eq!(&text[..ptx.len()], &ptx[..]);
    assert_eq!(&text[ptx.len()..], b"\0");
    let mut terminated = ptx.to_vec();
    terminated.push(0);
    let (text, _) = checked_image(&terminated, no_device).unwrap();
    assert_eq!(&text[..], &terminated[..]);
}

#[test]
fn a_module_path_holding_a_nul_is_refused_for_its_nul_before_anything_reads_it() {
    // On AMD the file was read first, and the read failed with an I/O error about the name.
    let device = crate::Device::for_unit_tests(0);
    match crate::Module::load_file(&device, "kernels\0.hsaco") {
        Err(Error::ModuleFile { path, source }) => {
            assert_eq!(path, std::path::Path::new("kernels\0.hsaco"));
            assert!(
                matches!(
                    *source,
                    Error::InteriorNul {
                        what: "module path",
                        ..
                    }
                ),
                "{source:?}"
            );
        }
        other => panic!("{other:?}"),
    }
}
