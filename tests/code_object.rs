//! The code-object check against real HIPRTC output: bare ELFs, offload bundles built from them, a crafted
//! image that the old check accepted, and a seeded property test that mutates real code objects and
//! asserts the check never accepts an image the runtime would read past, and never panics.
#![cfg(hip_platform = "amd")]
mod common;
use common::rng::Rng;

use common::bundle::bundle;
use common::{OFFLINE_ARCH, VECTOR_ADD};
use hip::code_object::{self, Kind};
use hip::rtc::ProgramBuilder;
use hip::Error;

/// The message of the `InvalidCodeObject` that `check` refuses `image` with.
fn refused(image: &[u8]) -> String {
    match code_object::check(image) {
        Err(Error::InvalidCodeObject(m)) => m,
        other => panic!(
            "{} bytes: expected InvalidCodeObject, got {other:?}",
            image.len()
        ),
    }
}

/// A kernel with a zero-initialised global, so the code object has a NOBITS (.bss) section.
const WITH_BSS: &str = r#"
__device__ unsigned int counters[4096];
extern "C" __global__ void count(unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&counters[i % 4096], 1u);
}
"#;

fn compiled(src: &str) -> Vec<u8> {
    ProgramBuilder::new(src)
        .arch(OFFLINE_ARCH)
        .no_cache()
        .compile()
        .unwrap()
        .into_code()
}

fn real_objects() -> Vec<Vec<u8>> {
    vec![compiled(VECTOR_ADD), compiled(WITH_BSS)]
}

// ---- an independent model of what HIP's loader reads (hipamd CodeObject::ElfSize = rocclr getElfSize) ----

fn le(b: &[u8], at: usize, n: usize) -> u128 {
    (0..n).fold(0u128, |v, k| v | (u128::from(b[at + k]) << (8 * k)))
}

/// The end of the bytes the runtime reads for a bare ELF, in exact arithmetic; `None` where the runtime's
/// own arithmetic would overflow (an image that must be refused).
fn runtime_reads_elf(b: &[u8]) -> Option<u128> {
    if b.len() < 64 {
        return Some(64);
    }
    if b[4] != 2 {
        return None;
    }
    let shoff = le(b, 0x28, 8);
    let shentsize = le(b, 0x3A, 2);
    let shnum = le(b, 0x3C, 2);
    let headers_end = shoff + 64 * shnum;
    if headers_end > b.len() as u128 {
        return Some(headers_end);
    }
    if shentsize * shnum > i32::MAX as u128 {
        return None;
    }
    let mut max_offset = shoff;
    let mut total = shoff + shentsize * shnum;
    for i in 0..shnum {
        let sh = (shoff + 64 * i) as usize;
        let (kind, off, size) = (le(b, sh + 4, 4), le(b, sh + 0x18, 8), le(b, sh + 0x20, 8));
        if max_offset < off {
            max_offset = off;
            total = off + if kind == 8 { 0 } else { size };
        }
    }
    if total >= 1u128 << 64 {
        return None;
    }
    Some(total.max(headers_end).max(64))
}

/// The same for an offload bundle: descriptors, ids, entries, and the ELF header of each entry read.
fn runtime_reads_bundle(b: &[u8]) -> Option<u128> {
    let len = b.len() as u128;
    if len < 32 {
        return Some(32);
    }
    let n = le(b, 24, 8);
    let mut at = 32u128;
    let mut end = at;
    for _ in 0..n {
        if at + 24 > len {
            return Some(at + 24);
        }
        let (off, size, id_len) = (
            le(b, at as usize, 8),
            le(b, at as usize + 8, 8),
            le(b, at as usize + 16, 8),
        );
        let id_end = at + 24 + id_len;
        if id_end > len {
            return Some(id_end);
        }
        let id = &b[(at + 24) as usize..id_end as usize];
        end = end.max(id_end).max(off + size);
        if off + size > len {
            return Some(off + size);
        }
        let kind = id.split(|&b| b == b'-').next().unwrap_or_default();
        if size > 0 || kind == b"hip" || kind == b"hcc" {
            let entry = &b[off as usize..(off + size) as usize];
            // The runtime reads the entry's ELF header (64 bytes) whatever the entry's size.
            end = end.max(off + 64);
            if off + 64 > len {
                return Some(off + 64);
            }
            match runtime_reads_elf(entry) {
                Some(r) if r <= size => {}
                Some(r) => return Some(off + r),
                None => return None,
            }
        }
        at = id_end;
    }
    Some(end)
}

fn runtime_reads(b: &[u8]) -> Option<u128> {
    if b.starts_with(b"\x7fELF") {
        runtime_reads_elf(b)
    } else if b.starts_with(b"__CLANG_OFFLOAD_BUNDLE__") {
        runtime_reads_bundle(b)
    } else {
        None
    }
}

#[test]
fn real_code_objects_pass_and_the_runtime_size_fits() {
    for code in real_objects() {
        assert_eq!(code_object::check(&code).unwrap(), Kind::Elf);
        let size = code_object::elf_size(&code).unwrap();
        assert!(
            size <= code.len() as u64 && size > 64,
            "{size} of {}",
            code.len()
        );
        assert_eq!(Some(u128::from(size)), runtime_reads_elf(&code));
    }
}

#[test]
fn the_crafted_128_byte_image_is_refused() {
    // e_shentsize 0 and a NOBITS section: the old check walked headers by e_shentsize and skipped NOBITS;
    // the runtime reads 64-byte headers and counts the NOBITS *offset*, so it would read 16 MiB.
    let mut image = vec![0u8; 128];
    image[..4].copy_from_slice(b"\x7fELF");
    image[4] = 2; // ELFCLASS64
    image[5] = 1; // little endian
    image[0x28..0x30].copy_from_slice(&64u64.to_le_bytes()); // e_shoff
    image[0x3A..0x3C].copy_from_slice(&0u16.to_le_bytes()); // e_shentsize
    image[0x3C..0x3E].copy_from_slice(&1u16.to_le_bytes()); // e_shnum
    image[64 + 4..64 + 8].copy_from_slice(&8u32.to_le_bytes()); // SHT_NOBITS
    image[64 + 0x18..64 + 0x20].copy_from_slice(&(16u64 << 20).to_le_bytes()); // sh_offset
    assert_eq!(runtime_reads(&image), Some(16 << 20));
    let err = code_object::check(&image).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidCodeObject(m) if m.contains("16777216") && m.contains("128")),
        "{err}"
    );
}

#[test]
fn section_headers_are_read_with_a_64_byte_stride_whatever_e_shentsize_says() {
    let mut code = compiled(VECTOR_ADD);
    // Claim tiny entries: the runtime still reads 64-byte ones.
    code[0x3A..0x3C].copy_from_slice(&1u16.to_le_bytes());
    let shoff = u64::from_le_bytes(code[0x28..0x30].try_into().unwrap()) as usize;
    let shnum = u16::from_le_bytes(code[0x3C..0x3E].try_into().unwrap()) as usize;
    let cut = &code[..shoff + 64 * shnum - 1];
    assert_eq!(
        refused(cut),
        format!(
            "section headers ({shnum} of 64 bytes at offset {shoff}) lie past the image's {} bytes",
            cut.len()
        )
    );
}

#[test]
fn bundles_of_real_code_objects_pass_and_every_entry_is_checked() {
    let code = compiled(VECTOR_ADD);
    let good = bundle(&[
        ("host-x86_64-unknown-linux", &[]),
        ("hipv4-amdgcn-amd-amdhsa--gfx90a", &code),
    ]);
    assert_eq!(
        code_object::check(&good).unwrap(),
        Kind::Bundle { entries: 2 }
    );
    assert!(runtime_reads(&good).unwrap() <= good.len() as u128);

    // An entry whose ELF claims more than the entry holds.
    let mut inner = code.clone();
    inner.truncate(code.len() - 1);
    let bad = bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx90a", &inner)]);
    let err = code_object::check(&bad).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidCodeObject(m) if m.contains("entry 0") && m.contains("gfx90a")),
        "{err}"
    );
    // A non-ELF entry, a pre-v4 entry of 0 bytes (the runtime still reads its ELF header), an entry past
    // the end, and more entries than the image has descriptors.
    let short = good.len() - 1;
    for (bad, says) in [
        (
            bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx90a", b"not an elf at all")]),
            "offload bundle entry 0 (hipv4-amdgcn-amd-amdhsa--gfx90a) is not an ELF code object"
                .to_string(),
        ),
        (
            bundle(&[("hip-amdgcn-amd-amdhsa-gfx90a", &[])]),
            "offload bundle entry 0 (hip-amdgcn-amd-amdhsa-gfx90a) is not an ELF code object"
                .into(),
        ),
        (
            good[..short].to_vec(),
            format!(
                "offload bundle entry 1 ends at byte {}, past the image's {short} bytes",
                good.len()
            ),
        ),
        (
            {
                let mut b = good.clone();
                b[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
                b
            },
            // The zero padding up to the first code object (at 4096) reads as 165 empty descriptors
            // (entries 2 to 166); entry 167 is the code object's ELF header, whose e_type, e_machine and
            // e_version (3, 224, 1) make an id length that runs past the image.
            "offload bundle entry 167's id lies past the image".into(),
        ),
    ] {
        assert_eq!(refused(&bad), says);
    }
}

#[test]
fn truncating_a_real_code_object_anywhere_is_refused() {
    for code in real_objects() {
        let size = code_object::elf_size(&code).unwrap() as usize;
        for cut in (0..code.len()).filter(|c| *c < size) {
            let m = refused(&code[..cut]);
            // Short of the ELF header, of the section headers, or of what they say the runtime reads.
            assert!(
                m.starts_with("not a code object")
                    || m.starts_with("ELF header truncated")
                    || m.starts_with("section headers (")
                    || m.starts_with("the runtime would read "),
                "cut at {cut}: {m}"
            );
        }
    }
}

#[test]
fn compressed_bundles_and_other_formats_are_refused() {
    for image in [
        &b"CCOB\x01\x00\x02\x00"[..],
        b"",
        b"\x7fEL",
        b"\x50\xed\x55\xba", // NVIDIA fatbinary magic
        b"__CLANG_OFFLOAD_BUNDLE_",
    ] {
        assert_eq!(
            refused(image),
            "not a code object: expected an ELF file or an (uncompressed) clang offload bundle",
            "{image:?}"
        );
    }
    let mut elf32 = compiled(VECTOR_ADD);
    elf32[4] = 1;
    assert_eq!(
        refused(&elf32),
        "not a 64-bit ELF (class 1): the runtime would size it as ELF32"
    );
}

// ---- the seeded property test ----

trait Interesting {
    fn interesting(&mut self, len: usize) -> u64;
}

impl Interesting for Rng {
    /// A value near an interesting boundary of an image of `len` bytes.
    fn interesting(&mut self, len: usize) -> u64 {
        let len = len as u64;
        let base = [
            0,
            1,
            63,
            64,
            len,
            len.wrapping_sub(64),
            len / 2,
            u64::MAX,
            u64::MAX - len,
            1 << 32,
            i32::MAX as u64,
            self.next(),
        ][self.below(12)];
        base.wrapping_add(self.next() % 130).wrapping_sub(65)
    }
}

fn put(b: &mut [u8], at: usize, v: u64, n: usize) {
    if at + n <= b.len() {
        b[at..at + n].copy_from_slice(&v.to_le_bytes()[..n]);
    }
}

/// One to four mutations of a copy of `image`.
fn mutate(rng: &mut Rng, image: &[u8], is_bundle: bool) -> Vec<u8> {
    let mut b = image.to_vec();
    for _ in 0..1 + rng.below(4) {
        let len = b.len();
        match rng.below(9) {
            0 => {
                let at = rng.below(len);
                if let Some(x) = b.get_mut(at) {
                    *x ^= 1 << rng.below(8);
                }
            }
            1 => b.truncate(rng.below(len + 1)),
            2 => b.extend((0..rng.below(256)).map(|_| rng.next() as u8)),
            3 if !is_bundle => {
                let v = rng.interesting(len);
                put(&mut b, 0x28, v, 8) // e_shoff
            }
            4 if !is_bundle => {
                let v = rng.interesting(len);
                put(&mut b, [0x3A, 0x3C][rng.below(2)], v, 2) // e_shentsize / e_shnum
            }
            5 | 6 if !is_bundle && len >= 64 => {
                // One section header's type, offset or size.
                let shoff = u64::from_le_bytes(b[0x28..0x30].try_into().unwrap()) as usize;
                let shnum = u16::from_le_bytes(b[0x3C..0x3E].try_into().unwrap()) as usize;
                let sh = shoff.wrapping_add(64 * rng.below(shnum.max(1)));
                let (field, n) = [(4, 4), (0x18, 8), (0x20, 8)][rng.below(3)];
                let v = if field == 4 {
                    [8, 1, 0][rng.below(3)]
                } else {
                    rng.interesting(len)
                };
                if sh < len {
                    put(&mut b, sh + field, v, n);
                }
            }
            7 if is_bundle => {
                // A descriptor field: count, offset, size or id length.
                let at = [24, 32, 40, 48, 32 + 24 + 25, 32 + 24 + 25 + 8][rng.below(6)];
                let v = rng.interesting(len);
                put(&mut b, at, v, 8);
            }
            _ => {
                let at = rng.below(len.min(256));
                let v = rng.interesting(len);
                put(&mut b, at, v, 8);
            }
        }
    }
    b
}

#[test]
fn mutated_real_code_objects_are_never_accepted_when_the_runtime_would_read_past_them() {
    const CASES: usize = 6000;
    let mut seeds: Vec<(Vec<u8>, bool)> = real_objects().into_iter().map(|c| (c, false)).collect();
    let code = seeds[0].0.clone();
    seeds.push((
        bundle(&[
            ("host-x86_64-unknown-linux", &[]),
            ("hipv4-amdgcn-amd-amdhsa--gfx90a", &code),
        ]),
        true,
    ));
    let mut rng = Rng(0x5eed_0011);
    let (mut accepted, mut refused) = (0, 0);
    for case in 0..CASES {
        let (seed, is_bundle) = &seeds[case % seeds.len()];
        let image = mutate(&mut rng, seed, *is_bundle);
        let verdict = std::panic::catch_unwind(|| code_object::check(&image).is_ok())
            .unwrap_or_else(|_| panic!("case {case}: the check panicked"));
        if verdict {
            accepted += 1;
            let reads = runtime_reads(&image);
            assert!(
                matches!(reads, Some(r) if r <= image.len() as u128),
                "case {case}: accepted an image of {} bytes the runtime reads {reads:?} of",
                image.len()
            );
        } else {
            refused += 1;
        }
    }
    println!("{CASES} mutated images: {accepted} accepted (all inside), {refused} refused");
    // The mutations must exercise both outcomes, or the test proves nothing.
    assert!(
        accepted > CASES / 20 && refused > CASES / 20,
        "{accepted} / {refused}"
    );
}

// ---- which bundle entry HIP would pick (HIP 5 aborts the process when none fits the device) ----

#[test]
fn compatibility_follows_hips_rule() {
    let t = |s: &str| format!("amdgcn-amd-amdhsa--{s}");
    for (co, agent, ok) in [
        ("gfx90a", "gfx90a:sramecc+:xnack-", true),
        ("gfx90a:xnack-", "gfx90a:sramecc+:xnack-", true),
        ("gfx90a:sramecc+", "gfx90a:sramecc+:xnack-", true),
        ("gfx90a:sramecc+:xnack-", "gfx90a:sramecc+:xnack-", true),
        ("gfx90a:xnack+", "gfx90a:sramecc+:xnack-", false),
        ("gfx90a:sramecc-", "gfx90a:sramecc+:xnack-", false),
        ("gfx908", "gfx90a:sramecc+:xnack-", false),
        ("gfx90a:xnack-:sramecc+", "gfx90a:sramecc+:xnack-", false), // HIP wants sramecc first
        ("gfx90a:bogus+", "gfx90a", false),
        ("gfx90a:", "gfx90a:xnack-", false),
        ("gfx1030", "gfx1030", true),
    ] {
        assert_eq!(
            code_object::compatible(&t(co), &t(agent)),
            ok,
            "{co} on {agent}"
        );
    }
    assert!(!code_object::compatible(
        "gfx90a",
        "amdgcn-amd-amdhsa--gfx90a"
    ));
}

#[test]
fn a_bundle_without_the_devices_code_object_is_refused_before_hip_aborts() {
    let code = compiled(VECTOR_ADD);
    let device = "gfx90a:sramecc+:xnack-";
    let good = bundle(&[
        ("host-x86_64-unknown-linux", &[]),
        ("hipv4-amdgcn-amd-amdhsa--gfx90a", &code),
    ]);
    code_object::bundle_for_device(&good, device).unwrap();
    assert_eq!(
        code_object::bundle_ids(&good).unwrap(),
        [
            "host-x86_64-unknown-linux",
            "hipv4-amdgcn-amd-amdhsa--gfx90a"
        ]
    );
    // For another device, or with features the device does not have: a clear error listing the entries.
    for (image, dev) in [
        (&good, "gfx1030"),
        (
            &bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+", &code)]),
            device,
        ),
        (&bundle(&[("host-x86_64-unknown-linux", &[])]), device),
    ] {
        let err = code_object::bundle_for_device(image, dev).unwrap_err();
        assert!(
            matches!(&err, Error::InvalidCodeObject(m) if m.contains("no code object for this device") && m.contains(dev)),
            "{err}"
        );
    }
    // A feature without a value before the matching entry: HIP's parser throws and the process aborts.
    let throws = bundle(&[
        ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack", &code),
        ("hipv4-amdgcn-amd-amdhsa--gfx90a", &code),
    ]);
    code_object::check(&throws).unwrap();
    let err = code_object::bundle_for_device(&throws, device).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidCodeObject(m) if m.contains("aborts")),
        "{err}"
    );
    // After the matching entry HIP stops looking: accepted.
    let after = bundle(&[
        ("hipv4-amdgcn-amd-amdhsa--gfx90a", &code),
        ("hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc", &code),
    ]);
    code_object::bundle_for_device(&after, device).unwrap();
    // Only pre-v4 entries, whose target lives in ELF flags: refused, saying why.
    let old = bundle(&[("hip-amdgcn-amd-amdhsa-gfx90a", &code)]);
    let err = code_object::bundle_for_device(&old, device).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidCodeObject(m) if m.contains("pre-v4")),
        "{err}"
    );
    // An id that is only the kind ("hip", no '-') still has its ELF header read by HIP: checked.
    let bare_kind = bundle(&[("hip", &[])]);
    assert_eq!(
        refused(&bare_kind),
        "offload bundle entry 0 (hip) is not an ELF code object"
    );
}

#[test]
fn an_elf_for_another_machine_is_named_as_such() {
    let code = compiled(VECTOR_ADD);
    code_object::expect_machine(&code, code_object::EM_AMDGPU).unwrap();
    let mut x86 = code.clone();
    x86[0x12..0x14].copy_from_slice(&62u16.to_le_bytes()); // EM_X86_64
    code_object::check(&x86).unwrap(); // well-formed, so only the machine check catches it
    let err = code_object::expect_machine(&x86, code_object::EM_AMDGPU).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidCodeObject(m) if m.contains("machine 62")),
        "{err}"
    );
}
