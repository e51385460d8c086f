//! Just enough of LLVM's bitstream container to find a module's target triple and the `"target-cpu"`
//! attributes of its attribute groups, read the way LLVM's `BitstreamReader` reads them.
//!
//! It replaces the `llvm-bitcode` crate here, which on a 28-byte input allocated what a record's operand
//! count claimed (8 TiB: the allocation failed and the process aborted) and recursed once per nested block
//! (a 2.4 MB input of nested blocks overflowed the stack, aborting the process): neither can be caught.
//!
//! Bounded by construction, in time and memory O(input length):
//! - only the module blocks at the top level, the attribute-group blocks directly inside them, and
//!   `BLOCKINFO` blocks are parsed; every other block is skipped by its declared length, so nothing
//!   recurses more than two blocks deep;
//! - counts read from the input (operands, array elements, blob bytes) only drive loops that consume input
//!   bits: nothing is allocated up front from a count, and a count past the input is an error;
//! - an abbreviation's literal operands consume no input bits when a record uses them, so literals are
//!   charged against a budget of one per input bit.

use std::collections::{HashMap, HashSet};

const BLOCKINFO_BLOCK: u64 = 0;
const MODULE_BLOCK: u64 = 8;
const PARAMATTR_GROUP_BLOCK: u64 = 10;
const BLOCKINFO_CODE_SETBID: u64 = 1;
const MODULE_CODE_TRIPLE: u64 = 2;
const PARAMATTR_GRP_CODE_ENTRY: u64 = 3;
/// Kind of a string attribute with a value inside a group entry (3 is a string key without one).
const STRING_ATTR: u64 = 4;

const WRAPPER_MAGIC: u32 = 0x0B17_C0DE;
const MAGIC: &[u8] = b"BC\xC0\xDE";

// Abbreviation ids every block has.
const END_BLOCK: u64 = 0;
const ENTER_SUBBLOCK: u64 = 1;
const DEFINE_ABBREV: u64 = 2;
const UNABBREV_RECORD: u64 = 3;

/// What the bitcode says about its target.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Target {
    /// The module's target triple, e.g. `amdgcn-amd-amdhsa` (the last module's, if there are several).
    pub(crate) triple: Option<String>,
    /// Every distinct `"target-cpu"` its attribute groups name, e.g. `gfx90a`, in order of appearance.
    pub(crate) cpus: Vec<String>,
    /// Whether a module block was found at all (a truncated file may hold none).
    pub(crate) has_module: bool,
}

type R<T> = std::result::Result<T, String>;

fn truncated<T>() -> R<T> {
    Err("malformed LLVM bitcode (it ends inside a block or record)".into())
}

/// Read the target of bitcode `data` (raw, or in the bitcode wrapper); an error when it is not bitcode or
/// is malformed.
pub(crate) fn target(data: &[u8]) -> R<Target> {
    let stream = unwrap(data)?;
    let Some(stream) = stream.strip_prefix(MAGIC) else {
        return Err("not LLVM bitcode (no 'BC' 0xC0DE magic)".into());
    };
    let mut r = Reader {
        blockinfo: HashMap::new(),
        literal_budget: (stream.len() as u64).saturating_mul(8),
        target: Target::default(),
        seen_cpus: HashSet::new(),
    };
    let mut bits = Bits::new(stream);
    // The top level: abbreviation ids 2 bits wide, and no END_BLOCK (one ends the stream, as padding).
    let mut abbrevs = Vec::new();
    while !bits.at_end() {
        match bits.read(2)? {
            END_BLOCK => break,
            ENTER_SUBBLOCK => {
                let (id, width, mut body) = bits.enter_subblock()?;
                match id {
                    MODULE_BLOCK => {
                        r.target.has_module = true;
                        r.module(&mut body, width)?;
                    }
                    BLOCKINFO_BLOCK => r.blockinfo(&mut body, width)?,
                    _ => {} // skipped by its length
                }
            }
            DEFINE_ABBREV => abbrevs.push(define_abbrev(&mut bits)?),
            id => {
                let list = Abbrevs {
                    shared: &[],
                    local: &abbrevs,
                };
                r.record(&mut bits, id, list, |_| false, &mut |_| {})?;
            }
        }
    }
    if !r.target.has_module {
        return Err("no LLVM module in the bitcode (truncated or not bitcode)".into());
    }
    Ok(r.target)
}

/// The bitstream inside an optional bitcode wrapper header.
fn unwrap(data: &[u8]) -> R<&[u8]> {
    let word = |i: usize| {
        data.get(i..i + 4)
            .map(|w| u32::from_le_bytes(w.try_into().unwrap_or_default()))
    };
    if word(0) != Some(WRAPPER_MAGIC) {
        return Ok(data);
    }
    let (Some(offset), Some(size)) = (word(8), word(12)) else {
        return Err("malformed LLVM bitcode wrapper (header truncated)".into());
    };
    let (offset, size) = (offset as usize, size as usize);
    offset
        .checked_add(size)
        .and_then(|end| data.get(offset..end))
        .ok_or_else(|| "malformed LLVM bitcode wrapper (its bitcode lies past the file)".into())
}

/// One operand of an abbreviation.
#[derive(Clone, Copy, Debug)]
enum Op {
    Literal(u64),
    Fixed(u32),
    Vbr(u32),
    Array,
    Char6,
    Blob,
}

type Abbrev = Vec<Op>;

/// The abbreviations a block's records can use: those `BLOCKINFO` gave its block id (ids 4, 5, ...), then
/// those the block defines itself.
#[derive(Clone, Copy)]
struct Abbrevs<'a> {
    shared: &'a [Abbrev],
    local: &'a [Abbrev],
}

impl<'a> Abbrevs<'a> {
    fn get(self, id: u64) -> R<&'a Abbrev> {
        let i = id
            .checked_sub(4)
            .and_then(|i| usize::try_from(i).ok())
            .unwrap_or(usize::MAX);
        match i.checked_sub(self.shared.len()) {
            None => Ok(&self.shared[i]),
            Some(j) => self.local.get(j).ok_or_else(|| {
                format!("malformed LLVM bitcode (abbreviation {id} is not defined)")
            }),
        }
    }
}

/// `DEFINE_ABBREV`'s body: an operand count, then each operand.
fn define_abbrev(bits: &mut Bits<'_>) -> R<Abbrev> {
    let count = bits.vbr(5)?;
    let mut ops = Vec::new();
    // Every operand takes at least 4 bits: a count past the input fails at the input's end.
    for _ in 0..count {
        let op = if bits.read(1)? == 1 {
            Op::Literal(bits.vbr(8)?)
        } else {
            match bits.read(3)? {
                e @ (1 | 2) => match (e, bits.vbr(5)?) {
                    (_, 0) => Op::Literal(0), // fixed(0) and vbr(0) read as a literal 0, as in LLVM
                    (1, w @ 1..=64) => Op::Fixed(w as u32),
                    (2, w @ 2..=32) => Op::Vbr(w as u32),
                    _ => return Err("malformed LLVM bitcode (operand width out of range)".into()),
                },
                3 => Op::Array,
                4 => Op::Char6,
                5 => Op::Blob,
                _ => return Err("malformed LLVM bitcode (unknown operand encoding)".into()),
            }
        };
        ops.push(op);
    }
    if ops.is_empty() {
        return Err("malformed LLVM bitcode (an abbreviation without operands)".into());
    }
    Ok(ops)
}

struct Reader {
    /// Abbreviations `BLOCKINFO` blocks gave each block id.
    blockinfo: HashMap<u64, Vec<Abbrev>>,
    /// Literal operands that may still be expanded (they consume no input bits).
    literal_budget: u64,
    target: Target,
    seen_cpus: HashSet<String>,
}

impl Reader {
    /// A module block's body: its triple record and its attribute-group blocks.
    fn module(&mut self, bits: &mut Bits<'_>, width: u32) -> R<()> {
        let mut local = Vec::new();
        loop {
            match bits.read(width)? {
                END_BLOCK => return bits.align32(),
                ENTER_SUBBLOCK => {
                    let (id, width, mut body) = bits.enter_subblock()?;
                    match id {
                        BLOCKINFO_BLOCK => self.blockinfo(&mut body, width)?,
                        PARAMATTR_GROUP_BLOCK => self.attribute_groups(&mut body, width)?,
                        _ => {}
                    }
                }
                DEFINE_ABBREV => local.push(define_abbrev(bits)?),
                id => {
                    let shared = std::mem::take(self.blockinfo.entry(MODULE_BLOCK).or_default());
                    let list = Abbrevs {
                        shared: &shared,
                        local: &local,
                    };
                    let mut triple = String::new();
                    let mut ended = false;
                    let code = self.record(
                        bits,
                        id,
                        list,
                        |code| code == MODULE_CODE_TRIPLE,
                        &mut |v| {
                            ended |= v == 0;
                            if !ended {
                                triple.push(char::from(u8::try_from(v).unwrap_or(b'?')));
                            }
                        },
                    );
                    self.blockinfo.insert(MODULE_BLOCK, shared);
                    if code? == MODULE_CODE_TRIPLE {
                        self.target.triple = Some(triple);
                    }
                }
            }
        }
    }

    /// An attribute-group block's body: each group entry's `"target-cpu"` string attribute.
    fn attribute_groups(&mut self, bits: &mut Bits<'_>, width: u32) -> R<()> {
        let mut local = Vec::new();
        loop {
            match bits.read(width)? {
                END_BLOCK => return bits.align32(),
                ENTER_SUBBLOCK => {
                    bits.enter_subblock()?; // skipped by its length
                }
                DEFINE_ABBREV => local.push(define_abbrev(bits)?),
                id => {
                    let shared =
                        std::mem::take(self.blockinfo.entry(PARAMATTR_GROUP_BLOCK).or_default());
                    let list = Abbrevs {
                        shared: &shared,
                        local: &local,
                    };
                    let mut cpu = CpuMatcher::default();
                    let code = self.record(
                        bits,
                        id,
                        list,
                        |code| code == PARAMATTR_GRP_CODE_ENTRY,
                        &mut |v| cpu.feed(v),
                    );
                    self.blockinfo.insert(PARAMATTR_GROUP_BLOCK, shared);
                    code?;
                    if let Some(cpu) = cpu.finish() {
                        if self.seen_cpus.insert(cpu.clone()) {
                            self.target.cpus.push(cpu);
                        }
                    }
                }
            }
        }
    }

    /// A `BLOCKINFO` block: `SETBID` records choose a block id, and the abbreviations defined after one
    /// belong to blocks of that id.
    fn blockinfo(&mut self, bits: &mut Bits<'_>, width: u32) -> R<()> {
        let mut current = None;
        loop {
            match bits.read(width)? {
                END_BLOCK => return bits.align32(),
                ENTER_SUBBLOCK => {
                    bits.enter_subblock()?;
                }
                DEFINE_ABBREV => {
                    let abbrev = define_abbrev(bits)?;
                    let id = current.ok_or("malformed LLVM bitcode (BLOCKINFO before SETBID)")?;
                    self.blockinfo.entry(id).or_default().push(abbrev);
                }
                UNABBREV_RECORD => {
                    let mut first = None;
                    let code = self.record(
                        bits,
                        UNABBREV_RECORD,
                        Abbrevs {
                            shared: &[],
                            local: &[],
                        },
                        |code| code == BLOCKINFO_CODE_SETBID,
                        &mut |v| {
                            first.get_or_insert(v);
                        },
                    )?;
                    if code == BLOCKINFO_CODE_SETBID {
                        current = Some(first.ok_or("malformed LLVM bitcode (empty SETBID)")?);
                    }
                }
                _ => {
                    return Err(
                        "malformed LLVM bitcode (an abbreviated record in BLOCKINFO)".into(),
                    )
                }
            }
        }
    }

    /// One record (abbreviation id `id`, already read); its code is returned, and when `wanted(code)` its
    /// values (operands after the code, array elements and blob bytes in place) go to `sink`.
    fn record(
        &mut self,
        bits: &mut Bits<'_>,
        id: u64,
        abbrevs: Abbrevs<'_>,
        wanted: impl Fn(u64) -> bool,
        sink: &mut dyn FnMut(u64),
    ) -> R<u64> {
        if id == UNABBREV_RECORD {
            let code = bits.vbr(6)?;
            let want = wanted(code);
            let count = bits.vbr(6)?;
            for _ in 0..count {
                let v = bits.vbr(6)?; // 6 bits at least each: a count past the input fails in time
                if want {
                    sink(v);
                }
            }
            return Ok(code);
        }
        let ops = abbrevs.get(id)?;
        let code = match ops[0] {
            Op::Literal(v) => self.literal(v)?,
            Op::Array | Op::Blob => {
                return Err("malformed LLVM bitcode (an abbreviation starts with an array)".into())
            }
            op => bits.scalar(op)?,
        };
        let want = wanted(code);
        let mut i = 1;
        while i < ops.len() {
            match ops[i] {
                Op::Literal(v) => {
                    let v = self.literal(v)?;
                    if want {
                        sink(v);
                    }
                }
                Op::Array => {
                    i += 1;
                    let element = match ops.get(i) {
                        Some(op @ (Op::Fixed(_) | Op::Vbr(_) | Op::Char6)) => *op,
                        _ => return Err("malformed LLVM bitcode (bad array element type)".into()),
                    };
                    let count = bits.vbr(6)?;
                    // Each element takes at least one bit: a count past the input fails in time.
                    for _ in 0..count {
                        let v = bits.scalar(element)?;
                        if want {
                            sink(v);
                        }
                    }
                }
                Op::Blob => {
                    let len = bits.vbr(6)?;
                    bits.align32()?;
                    for b in bits.bytes(len)? {
                        if want {
                            sink(u64::from(*b));
                        }
                    }
                    bits.align32()?;
                }
                op => {
                    let v = bits.scalar(op)?;
                    if want {
                        sink(v);
                    }
                }
            }
            i += 1;
        }
        Ok(code)
    }

    fn literal(&mut self, v: u64) -> R<u64> {
        self.literal_budget = self.literal_budget.checked_sub(1).ok_or(
            "malformed LLVM bitcode (its abbreviations expand to more literals than it has bits)",
        )?;
        Ok(v)
    }
}

/// Finds `4, "target-cpu", 0, value.., 0` among a group entry's values (other attribute kinds vary in
/// length between LLVM versions, so the entry is searched for the key rather than walked) and keeps the
/// first value.
#[derive(Default)]
pub(super) struct CpuMatcher {
    /// Values of the key matched so far.
    matched: usize,
    value: Option<String>,
    done: bool,
}

const KEY: &[u8] = b"target-cpu";

impl CpuMatcher {
    pub(super) fn feed(&mut self, v: u64) {
        if self.done {
            return;
        }
        if let Some(value) = &mut self.value {
            if v == 0 {
                self.done = true;
            } else {
                value.push(char::from(u8::try_from(v).unwrap_or(b'?')));
            }
            return;
        }
        // The pattern: STRING_ATTR, the key's bytes, then 0. STRING_ATTR occurs only at its start, so a
        // mismatch restarts the match at this value or not at all.
        let expected = match self.matched {
            0 => STRING_ATTR,
            n if n <= KEY.len() => u64::from(KEY[n - 1]),
            _ => 0,
        };
        if v == expected {
            self.matched += 1;
            if self.matched == KEY.len() + 2 {
                self.value = Some(String::new());
            }
        } else {
            self.matched = usize::from(v == STRING_ATTR);
        }
    }

    pub(super) fn finish(self) -> Option<String> {
        self.value
    }
}

/// A bit cursor over `data[.., end / 8]`, reading fields least significant bit first, as LLVM does.
struct Bits<'a> {
    data: &'a [u8],
    /// Position and end, in bits.
    pos: usize,
    end: usize,
}

impl<'a> Bits<'a> {
    fn new(data: &'a [u8]) -> Self {
        Bits {
            data,
            pos: 0,
            end: data.len().saturating_mul(8),
        }
    }

    fn at_end(&self) -> bool {
        self.pos >= self.end
    }

    /// A fixed-width field of up to 64 bits.
    fn read(&mut self, width: u32) -> R<u64> {
        let width = width as usize;
        if width > 64 || self.end - self.pos < width {
            return truncated();
        }
        let mut v = 0u64;
        let mut got = 0;
        while got < width {
            let byte = self.data[self.pos / 8];
            let offset = self.pos % 8;
            let take = (8 - offset).min(width - got);
            let piece = (u64::from(byte) >> offset) & ((1u64 << take) - 1);
            v |= piece << got;
            got += take;
            self.pos += take;
        }
        Ok(v)
    }

    /// A variable-width field in `width`-bit chunks (the top bit of each says another follows).
    fn vbr(&mut self, width: u32) -> R<u64> {
        let data_bits = width - 1;
        let (more, mask) = (1u64 << data_bits, (1u64 << data_bits) - 1);
        let (mut v, mut shift) = (0u64, 0u32);
        loop {
            let chunk = self.read(width)?;
            let piece = chunk & mask;
            // Bits that would land past bit 63 must be zero.
            if piece != 0 && (shift >= 64 || (piece << shift) >> shift != piece) {
                return Err("malformed LLVM bitcode (a value wider than 64 bits)".into());
            }
            if shift < 64 {
                v |= piece << shift;
            }
            if chunk & more == 0 {
                return Ok(v);
            }
            shift = shift.saturating_add(data_bits);
        }
    }

    /// One scalar operand (fixed, VBR or a 6-bit character).
    fn scalar(&mut self, op: Op) -> R<u64> {
        match op {
            Op::Fixed(w) => self.read(w),
            Op::Vbr(w) => self.vbr(w),
            Op::Char6 => {
                let c = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._";
                Ok(u64::from(c[self.read(6)? as usize]))
            }
            Op::Literal(v) => Ok(v),
            Op::Array | Op::Blob => Err("malformed LLVM bitcode (an array inside an array)".into()),
        }
    }

    fn align32(&mut self) -> R<()> {
        let aligned = self.pos.next_multiple_of(32);
        if aligned > self.end {
            return truncated();
        }
        self.pos = aligned;
        Ok(())
    }

    /// `len` bytes at the (byte-aligned) position.
    fn bytes(&mut self, len: u64) -> R<&'a [u8]> {
        let bits = usize::try_from(len)
            .ok()
            .and_then(|l| l.checked_mul(8))
            .filter(|&b| b <= self.end - self.pos);
        let Some(bits) = bits else {
            return truncated();
        };
        let out = &self.data[self.pos / 8..(self.pos + bits) / 8];
        self.pos += bits;
        Ok(out)
    }

    /// `ENTER_SUBBLOCK`'s body (its abbreviation id already read): the block's id, its abbreviation id
    /// width, and a cursor over its contents, which this cursor steps over.
    fn enter_subblock(&mut self) -> R<(u64, u32, Bits<'a>)> {
        let id = self.vbr(8)?;
        let width = self.vbr(4)?;
        let width = u32::try_from(width)
            .ok()
            .filter(|w| (1..=32).contains(w))
            .ok_or("malformed LLVM bitcode (abbreviation width out of range)")?;
        self.align32()?;
        let words = self.read(32)?;
        let bits = usize::try_from(words)
            .ok()
            .and_then(|w| w.checked_mul(32))
            .filter(|&b| b <= self.end - self.pos);
        let Some(bits) = bits else {
            return truncated();
        };
        let body = Bits {
            data: self.data,
            pos: self.pos,
            end: self.pos + bits,
        };
        self.pos += bits;
        Ok((id, width, body))
    }
}
