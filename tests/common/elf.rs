//! Just enough of ELF64 (little endian) to check a GPU code object: its machine and its symbol names.

/// `e_machine` of an AMD GPU code object.
pub const EM_AMDGPU: u16 = 224;

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(b[at..at + 2].try_into().unwrap())
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}
fn u64_at(b: &[u8], at: usize) -> usize {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap()) as usize
}

/// `e_machine`, after checking the magic, class (64-bit) and data (little endian).
pub fn machine(b: &[u8]) -> u16 {
    assert!(
        b.len() >= 64,
        "code object of {} bytes is too short for an ELF header",
        b.len()
    );
    assert_eq!(&b[..4], b"\x7fELF", "not an ELF file");
    assert_eq!(b[4], 2, "not ELF64");
    assert_eq!(b[5], 1, "not little endian");
    u16_at(b, 18)
}

/// Names of every symbol in `.symtab` and `.dynsym`.
pub fn symbols(b: &[u8]) -> Vec<String> {
    machine(b);
    let (shoff, shentsize, shnum) = (
        u64_at(b, 0x28),
        u16_at(b, 0x3A) as usize,
        u16_at(b, 0x3C) as usize,
    );
    let section = |i: usize| shoff + i * shentsize;
    let mut names = Vec::new();
    for i in 0..shnum {
        let sh = section(i);
        let kind = u32_at(b, sh + 4);
        if kind != 2 && kind != 11 {
            continue; // SHT_SYMTAB, SHT_DYNSYM
        }
        let (off, size, link, entsize) = (
            u64_at(b, sh + 0x18),
            u64_at(b, sh + 0x20),
            u32_at(b, sh + 0x28) as usize,
            u64_at(b, sh + 0x38),
        );
        let strtab = u64_at(b, section(link) + 0x18);
        for s in (off..off + size).step_by(entsize.max(24)) {
            let name_at = strtab + u32_at(b, s) as usize;
            let end = b[name_at..].iter().position(|&c| c == 0).unwrap();
            names.push(String::from_utf8_lossy(&b[name_at..name_at + end]).into_owned());
        }
    }
    names
}

/// The `DT_NEEDED` libraries of an ELF64 executable (from its `.dynamic` section and `.dynstr`).
pub fn needed(b: &[u8]) -> Vec<String> {
    let (shoff, shentsize, shnum) = (
        u64_at(b, 0x28),
        u16_at(b, 0x3A) as usize,
        u16_at(b, 0x3C) as usize,
    );
    let section = |i: usize| shoff + i * shentsize;
    let mut out = Vec::new();
    for i in 0..shnum {
        let sh = section(i);
        if u32_at(b, sh + 4) != 6 {
            continue; // SHT_DYNAMIC
        }
        let (off, size, link) = (
            u64_at(b, sh + 0x18),
            u64_at(b, sh + 0x20),
            u32_at(b, sh + 0x28) as usize,
        );
        let strtab = u64_at(b, section(link) + 0x18);
        for entry in (off..off + size).step_by(16) {
            if u64_at(b, entry) == 1 {
                // DT_NEEDED
                let at = strtab + u64_at(b, entry + 8);
                let end = b[at..].iter().position(|&c| c == 0).unwrap();
                out.push(String::from_utf8_lossy(&b[at..at + end]).into_owned());
            }
        }
    }
    out
}

/// Check that this test binary is dynamically linked (libc among its `NEEDED` entries) and that no entry
/// names any of `libraries`: the loader must find none of them before `main` (`dynamic-loading`).
pub fn assert_this_binary_needs_none_of(libraries: &[&str]) {
    let exe = std::fs::read(std::env::current_exe().unwrap()).unwrap();
    let needed = needed(&exe);
    assert!(
        needed.iter().any(|n| n.starts_with("libc.so")),
        "{needed:?}"
    );
    assert!(
        !needed
            .iter()
            .any(|n| libraries.iter().any(|l| n.contains(l))),
        "{needed:?}"
    );
}
