//! The bitcode target reader on real bitcode (`testdata/*.bc`, assembled by LLVM 14's `llvm-as` from the
//! `.ll` files beside them) and on hostile bitstreams built bit by bit: errors, never a panic or an abort,
//! in time linear in the input.

use super::reader::{CpuMatcher, Target};
use super::*;

const GFX90A: &[u8] = include_bytes!("testdata/gfx90a.bc");
const GFX1100: &[u8] = include_bytes!("testdata/gfx1100.bc");
const X86_64: &[u8] = include_bytes!("testdata/x86_64.bc");

fn target_of(data: &[u8]) -> Target {
    target(data).unwrap()
}

#[test]
fn real_bitcode_gives_its_triple_and_target_cpus() {
    for (data, triple, cpu) in [
        (GFX90A, "amdgcn-amd-amdhsa", "gfx90a"),
        (GFX1100, "amdgcn-amd-amdhsa", "gfx1100"),
        (X86_64, "x86_64-pc-linux-gnu", "x86-64"),
    ] {
        let t = target_of(data);
        assert_eq!(t.triple.as_deref(), Some(triple));
        assert_eq!(t.cpus, [cpu]);
        assert!(t.has_module);
    }
    check("k.bc", GFX90A, "gfx90a:sramecc+:xnack+").unwrap();
    for (data, arch, found) in [
        (GFX1100, "gfx90a", "gfx1100"),
        (GFX90A, "gfx1100", "gfx90a"),
        (X86_64, "gfx90a", "x86_64-pc-linux-gnu"),
    ] {
        match check("k.bc", data, arch) {
            Err(Error::TargetMismatch { found: f, .. }) => assert_eq!(f, found),
            other => panic!("{arch}: {other:?}"),
        }
    }
}

#[test]
fn the_bitcode_wrapper_is_read_through() {
    let mut wrapped = Vec::new();
    for word in [0x0B17_C0DE_u32, 0, 20, GFX90A.len() as u32, 0] {
        wrapped.extend_from_slice(&word.to_le_bytes());
    }
    wrapped.extend_from_slice(GFX90A);
    wrapped.extend_from_slice(b"trailing");
    assert_eq!(target_of(&wrapped), target_of(GFX90A));
    wrapped[12..16].copy_from_slice(&u32::MAX.to_le_bytes()); // size past the file
    assert!(target(&wrapped).unwrap_err().contains("wrapper"));
}

#[test]
fn string_attributes_are_found_among_others() {
    let cpu = |values: &[u64]| {
        let mut m = CpuMatcher::default();
        values.iter().for_each(|&v| m.feed(v));
        m.finish()
    };
    let mut v = vec![7, 0xffff_ffff, 0, 3];
    v.extend("uniform-work-group-size".bytes().map(u64::from));
    v.extend([0, 4, 4]);
    v.extend("target-cpu".bytes().map(u64::from));
    v.push(0);
    v.extend("gfx90a".bytes().map(u64::from));
    v.extend([0, 1, 2, 4]);
    v.extend("target-cpu".bytes().map(u64::from));
    v.extend([0, 7, 0]);
    assert_eq!(cpu(&v).as_deref(), Some("gfx90a"), "the first one counts");
    let mut other = vec![4];
    other.extend("target-features".bytes().map(u64::from));
    other.extend([0, 43, 0]);
    assert_eq!(cpu(&other), None);
    let mut cut = vec![4];
    cut.extend("target-cpu".bytes().map(u64::from));
    cut.extend([0, 103]);
    assert_eq!(cpu(&cut).as_deref(), Some("g"), "a value cut short is kept");
}

#[test]
fn non_bitcode_is_an_error_not_a_panic() {
    for data in [
        &b""[..],
        b"BC",
        b"BC\xc0\xde",
        b"\x7fELF\x02\x01\x01",
        &[0xde, 0xc0, 0x17, 0x0b, 0, 0],
    ] {
        let e = check("x.bc", data, "gfx90a").unwrap_err();
        assert!(e.to_string().contains("link input `x.bc`"), "{e}");
    }
}

#[test]
fn every_truncation_and_mutation_of_real_bitcode_is_an_answer_not_a_panic() {
    // Under Miri (about a second a parse) a sample of the cuts and mutations.
    let step = if cfg!(miri) { 97 } else { 1 };
    for len in (0..GFX90A.len()).step_by(step) {
        let _ = target(&GFX90A[..len]);
    }
    let mut state = 0x5eed_u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as usize
    };
    let cases = if cfg!(miri) { 20 } else { 3000 };
    let mut errors = 0;
    for _ in 0..cases {
        let mut m = GFX90A.to_vec();
        for _ in 0..1 + next() % 4 {
            let at = 4 + next() % (m.len() - 4);
            match next() % 3 {
                0 => m[at] ^= 1 << (next() % 8),
                1 => m[at] = 0xff,
                _ => m[at] = next() as u8,
            }
        }
        errors += usize::from(target(&m).is_err());
    }
    assert!(errors > cases / 10, "{errors} of {cases}");
}

// ---- hostile bitstreams, built bit by bit ----

/// Writes a bitstream, fields least significant bit first.
#[derive(Default)]
struct W {
    bits: Vec<bool>,
}

impl W {
    fn bitcode() -> W {
        let mut w = W::default();
        for b in b"BC\xC0\xDE" {
            w.fixed(u64::from(*b), 8);
        }
        w
    }
    fn fixed(&mut self, v: u64, width: u32) {
        self.bits.extend((0..width).map(|i| v >> i & 1 == 1));
    }
    fn vbr(&mut self, mut v: u64, width: u32) {
        let data = width - 1;
        loop {
            let piece = v & ((1 << data) - 1);
            v >>= data;
            self.fixed(piece | if v > 0 { 1 << data } else { 0 }, width);
            if v == 0 {
                return;
            }
        }
    }
    fn align32(&mut self) {
        while self.bits.len() % 32 != 0 {
            self.bits.push(false);
        }
    }
    /// `ENTER_SUBBLOCK` in a block of abbreviation width `outer`; returns where its length goes.
    fn enter(&mut self, outer: u32, id: u64, width: u32) -> usize {
        self.fixed(1, outer);
        self.vbr(id, 8);
        self.vbr(u64::from(width), 4);
        self.align32();
        self.fixed(0, 32);
        self.bits.len()
    }
    /// `END_BLOCK` of a block of abbreviation width `width` entered at `start`.
    fn end(&mut self, width: u32, start: usize) {
        self.fixed(0, width);
        self.align32();
        let words = ((self.bits.len() - start) / 32) as u64;
        for i in 0..32 {
            self.bits[start - 32 + i] = words >> i & 1 == 1;
        }
    }
    /// An unabbreviated record.
    fn record(&mut self, width: u32, code: u64, ops: &[u64]) {
        self.fixed(3, width);
        self.vbr(code, 6);
        self.vbr(ops.len() as u64, 6);
        for &op in ops {
            self.vbr(op, 6);
        }
    }
    fn bytes(mut self) -> Vec<u8> {
        self.align32();
        self.bits
            .chunks(8)
            .map(|c| c.iter().rev().fold(0u8, |b, &bit| b << 1 | u8::from(bit)))
            .collect()
    }
}

/// `f`'s answer, after asserting it used under a second of this thread's CPU time.
fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    crate::test_time::within_a_cpu_second(what, f)
}

#[test]
fn an_operand_count_of_2_to_the_40_is_an_error_not_an_8_tib_allocation() {
    // 28 bytes: a module block whose one record claims 2^40 operands. The llvm-bitcode crate allocated
    // room for all of them up front; the allocation failed and the process aborted.
    let mut w = W::bitcode();
    let module = w.enter(2, 8, 3);
    w.fixed(3, 3);
    w.vbr(2, 6);
    w.vbr(1 << 40, 6);
    w.vbr(97, 6);
    w.end(3, module);
    let data = w.bytes();
    assert!(data.len() <= 32, "{}", data.len());
    assert!(target(&data).unwrap_err().contains("malformed"));
}

#[test]
#[cfg_attr(miri, ignore = "megabyte inputs")]
fn deeply_nested_blocks_do_not_overflow_the_stack() {
    // 200,000 blocks, each inside the last, in the module: the llvm-bitcode crate recursed once per block
    // and overflowed the stack (an abort). Blocks other than the module's attribute groups are skipped by
    // their length here.
    let depth = 200_000;
    let mut w = W::bitcode();
    let module = w.enter(2, 8, 3);
    w.record(
        3,
        2,
        &"amdgcn-amd-amdhsa"
            .bytes()
            .map(u64::from)
            .collect::<Vec<_>>(),
    );
    let mut starts = vec![w.enter(3, 17, 2)];
    for _ in 1..depth {
        starts.push(w.enter(2, 17, 2));
    }
    while let Some(start) = starts.pop() {
        w.end(2, start);
    }
    w.end(3, module);
    let data = w.bytes();
    let t = timed("nested blocks", || target(&data)).unwrap();
    assert_eq!(t.triple.as_deref(), Some("amdgcn-amd-amdhsa"));
}

#[test]
#[cfg_attr(miri, ignore = "megabyte inputs")]
fn many_distinct_target_cpus_are_collected_in_linear_time() {
    // 50,000 attribute groups, each naming another target-cpu: collecting the distinct ones in a Vec
    // (`contains` for each) was quadratic.
    let n = 50_000u64;
    let mut w = W::bitcode();
    let module = w.enter(2, 8, 3);
    let groups = w.enter(3, 10, 3);
    for i in 0..n {
        let mut ops = vec![i, u64::MAX >> 32, 4];
        ops.extend("target-cpu".bytes().map(u64::from));
        ops.push(0);
        ops.extend(format!("gfx{i}").bytes().map(u64::from));
        ops.push(0);
        w.record(3, 3, &ops);
    }
    w.end(3, groups);
    w.end(3, module);
    let data = w.bytes();
    let t = timed("50,000 target-cpus", || target(&data)).unwrap();
    assert_eq!(t.cpus.len(), n as usize);
    assert_eq!(t.cpus[49_999], "gfx49999");
}

#[test]
#[cfg_attr(miri, ignore = "megabyte inputs")]
fn abbreviation_literals_cannot_expand_past_the_input() {
    // An abbreviation of 100,000 literal operands (112 KB), then 300,000 records of 3 bits that use it:
    // 30 billion operands from 224 KB. Literals are charged one per input bit.
    let mut w = W::bitcode();
    let module = w.enter(2, 8, 3);
    w.fixed(2, 3); // DEFINE_ABBREV
    w.vbr(100_000, 5);
    for _ in 0..100_000 {
        w.fixed(1, 1);
        w.vbr(7, 8);
    }
    for _ in 0..300_000 {
        w.fixed(4, 3);
    }
    w.end(3, module);
    let data = w.bytes();
    let e = timed("literal expansion", || target(&data)).unwrap_err();
    assert!(e.contains("literals"), "{e}");
}

#[test]
fn counts_and_values_past_the_input_or_64_bits_are_errors() {
    let module = |body: &dyn Fn(&mut W)| {
        let mut w = W::bitcode();
        let start = w.enter(2, 8, 3);
        body(&mut w);
        w.end(3, start);
        target(&w.bytes())
    };
    // A value of 70 bits.
    let wide = module(&|w| {
        w.fixed(3, 3);
        w.vbr(2, 6);
        w.vbr(1, 6);
        for _ in 0..14 {
            w.fixed(0b111111, 6);
        }
        w.fixed(1, 6);
    });
    assert!(wide.unwrap_err().contains("64 bits"));
    // An array of 2^50 elements and a blob of 2^50 bytes (abbreviation: literal code, then the payload).
    for payload in [3u64, 5] {
        let e = module(&|w| {
            w.fixed(2, 3);
            w.vbr(if payload == 3 { 3 } else { 2 }, 5);
            w.fixed(1, 1);
            w.vbr(2, 8);
            w.fixed(0, 1);
            w.fixed(payload, 3);
            if payload == 3 {
                w.fixed(0, 1);
                w.fixed(1, 3);
                w.vbr(8, 5);
            }
            w.fixed(4, 3);
            w.vbr(1 << 50, 6);
        })
        .unwrap_err();
        assert!(e.contains("malformed"), "{e}");
    }
    // A block longer than the input, and an abbreviation id never defined.
    let mut w = W::bitcode();
    w.enter(2, 8, 3);
    w.fixed(0, 3);
    let mut long = w.bytes();
    long[8..12].copy_from_slice(&1000u32.to_le_bytes());
    assert!(target(&long).unwrap_err().contains("malformed"));
    let undefined = module(&|w| w.fixed(5, 3));
    assert!(undefined.unwrap_err().contains("abbreviation 5"));
}

// ---- the same answers as the llvm-bitcode crate gave on real bitcode ----

/// The target as the check read it before, through the llvm-bitcode crate; `None` where that crate
/// refuses the bitcode.
fn llvm_bitcode_target(data: &[u8]) -> Option<Target> {
    use llvm_bitcode::bitcode::{BitcodeElement, Payload};
    fn visit(element: BitcodeElement, t: &mut Target) {
        let BitcodeElement::Block(block) = element else {
            return;
        };
        t.has_module |= block.id == 8;
        for child in block.elements {
            match child {
                BitcodeElement::Record(mut record) => {
                    let mut values = record.fields().to_vec();
                    match record.take_payload() {
                        Some(Payload::Array(a)) => values.extend(a),
                        Some(Payload::Char6String(s)) => values.extend(s.bytes().map(u64::from)),
                        Some(Payload::Blob(b)) => values.extend(b.into_iter().map(u64::from)),
                        None => {}
                    }
                    let text = |v: &[u64]| -> String {
                        v.iter()
                            .take_while(|&&v| v != 0)
                            .map(|&v| char::from(u8::try_from(v).unwrap_or(b'?')))
                            .collect()
                    };
                    if block.id == 8 && record.id == 2 {
                        t.triple = Some(text(&values));
                    } else if block.id == 10 && record.id == 3 {
                        let mut m = CpuMatcher::default();
                        values.iter().for_each(|&v| m.feed(v));
                        if let Some(cpu) = m.finish() {
                            if !t.cpus.contains(&cpu) {
                                t.cpus.push(cpu);
                            }
                        }
                    }
                }
                block @ BitcodeElement::Block(_) => visit(block, t),
            }
        }
    }
    let mut t = Target::default();
    for element in llvm_bitcode::Bitcode::new(data).ok()?.elements {
        visit(element, &mut t);
    }
    Some(t)
}

#[test]
#[cfg_attr(miri, ignore = "reads the system's device libraries")]
fn real_bitcode_reads_as_the_llvm_bitcode_crate_read_it() {
    // That crate refuses an abbreviation operand of fixed(0) or vbr(0), which LLVM writes (and reads as a
    // literal 0) when a field needs no bits, as in these small modules: the old check refused them.
    for data in [GFX90A, GFX1100, X86_64] {
        assert_eq!(llvm_bitcode_target(data), None);
    }
    // The ROCm device libraries, where installed (Debian: rocm-device-libs).
    let mut read = 0;
    for dir in [
        "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode",
        "/opt/rocm/amdgcn/bitcode",
    ] {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.extension().is_none_or(|e| e != "bc") {
                continue;
            }
            let data = std::fs::read(&path).unwrap();
            let ours = target(&data).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(ours.triple.is_some(), "{}", path.display());
            assert_eq!(Some(ours), llvm_bitcode_target(&data), "{}", path.display());
            read += 1;
        }
    }
    println!("{read} device libraries read alike");
}
