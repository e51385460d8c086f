//! Unit tests of the cache's key, entries and hash.

use super::*;

fn toolchain() -> Toolchain {
    Toolchain {
        platform: "amd",
        hiprtc_version: (9, 0),
        runtime_version: 50221153,
        compiler: "comgr 2.4 /usr/lib/x86_64-linux-gnu/libamd_comgr.so.2.4.0 63032592 1".into(),
    }
}

/// A compile request's owned parts.
struct Parts {
    source: String,
    headers: Vec<(String, String)>,
    options: Vec<String>,
    exprs: Vec<String>,
}

impl Parts {
    fn new() -> Parts {
        Parts {
            source: "__global__ void k() {}".into(),
            headers: vec![("a.h".into(), "#define A 1".into())],
            options: vec!["-O3".into(), "--gpu-architecture=gfx90a".into()],
            exprs: vec!["k".into()],
        }
    }

    fn request(&self) -> Request<'_> {
        Request {
            output: "code",
            source: &self.source,
            name: "p.hip",
            headers: &self.headers,
            options: &self.options,
            name_expressions: &self.exprs,
        }
    }
}

fn key_of(t: &Toolchain, r: &Request<'_>) -> Key {
    Key::new(t, r)
}

#[test]
fn every_toolchain_part_changes_the_key() {
    let parts = Parts::new();
    let r = parts.request();
    let base = key_of(&toolchain(), &r);
    let variants = [
        Toolchain {
            platform: "nvidia",
            ..toolchain()
        },
        Toolchain {
            hiprtc_version: (9, 1),
            ..toolchain()
        },
        Toolchain {
            runtime_version: 50221154,
            ..toolchain()
        },
        Toolchain {
            compiler: "comgr 3.0 /usr/lib/x86_64-linux-gnu/libamd_comgr.so.3.0.0 61148768 1".into(),
            ..toolchain()
        },
    ];
    for t in &variants {
        let k = key_of(t, &r);
        assert_ne!(k, base, "{t:?}");
        assert_ne!(k.file_stem(), base.file_stem(), "{t:?}");
    }
    let bitcode = Request {
        output: "bitcode",
        ..r
    };
    assert_ne!(key_of(&toolchain(), &bitcode), base);
}

#[test]
fn fields_cannot_run_into_each_other() {
    // Without length prefixes, ("ab", "c") and ("a", "bc") would serialise the same.
    let h1 = [("ab".to_string(), "c".to_string())];
    let h2 = [("a".to_string(), "bc".to_string())];
    let r1 = Request {
        output: "code",
        source: "",
        name: "",
        headers: &h1,
        options: &[],
        name_expressions: &[],
    };
    let r2 = Request { headers: &h2, ..r1 };
    assert_ne!(key_of(&toolchain(), &r1), key_of(&toolchain(), &r2));
}

#[test]
fn entries_round_trip_and_reject_damage() {
    let parts = Parts::new();
    let r = parts.request();
    let key = key_of(&toolchain(), &r);
    let program = CompiledProgram {
        code: (0..=255u8).cycle().take(5000).collect(),
        log: "warning: something".into(),
        lowered_names: vec![("k".into(), "_Z1kv".into())],
        cache_outcome: CacheOutcome::Stored,
    };
    let bytes = encode(&key, &program);
    let Decoded::Entry(back) = decode(&bytes, &key) else {
        panic!("a fresh entry decodes")
    };
    assert_eq!(back, program);
    assert_eq!(back.cache_outcome, CacheOutcome::Hit);

    let other = key_of(
        &Toolchain {
            runtime_version: 1,
            ..toolchain()
        },
        &r,
    );
    assert!(matches!(decode(&bytes, &other), Decoded::OtherKey));
    for cut in [0, 7, HEADER_LEN, bytes.len() / 2, bytes.len() - 1] {
        assert!(
            matches!(decode(&bytes[..cut], &key), Decoded::Damaged),
            "cut at {cut}"
        );
    }
    for i in [0, 9, 17, HEADER_LEN + 3, bytes.len() / 2, bytes.len() - 1] {
        let mut flipped = bytes.clone();
        flipped[i] ^= 0x10;
        assert!(
            matches!(decode(&flipped, &key), Decoded::Damaged),
            "bit flipped at {i}"
        );
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(matches!(decode(&longer, &key), Decoded::Damaged));
}

#[test]
fn the_hash_spreads_single_changes() {
    let data: Vec<u8> = (0..1000u32).map(|i| (i * 7) as u8).collect();
    let base = hash64(&data, 1);
    for i in 0..data.len() {
        let mut d = data.clone();
        d[i] ^= 1;
        assert_ne!(hash64(&d, 1), base, "byte {i}");
    }
    assert_ne!(hash64(&data[..999], 1), base);
    assert_ne!(hash64(&data, 2), base);
    assert_ne!(hash64(b"", 1), hash64(&[0], 1));
}

#[test]
fn entry_sizes_from_the_file_system_are_summed_without_overflow() {
    let entry = |len| EntryFile {
        path: PathBuf::new(),
        len,
        modified: SystemTime::UNIX_EPOCH,
    };
    let huge = [entry(u64::MAX), entry(u64::MAX), entry(2)];
    assert_eq!(total_len(&huge), 2 * u128::from(u64::MAX) + 2);
    assert_eq!(total_len(&[]), 0);
}

#[test]
fn every_part_of_the_key_changes_it_and_nothing_else_does() {
    let base_parts = Parts::new();
    let base = key_of(&toolchain(), &base_parts.request());
    // The same inputs, built again: the same key and file name.
    let again = Parts::new();
    assert_eq!(key_of(&toolchain(), &again.request()), base);
    assert_eq!(
        key_of(&toolchain(), &again.request()).file_stem(),
        base.file_stem()
    );
    let stem = base.file_stem();
    assert_eq!(stem.len(), 32, "{stem}");
    assert!(is_stem(&stem), "{stem}");
    assert_eq!(entry_name(&base), format!("{stem}.hipc"));

    // Each toolchain part alone, the HIPRTC major version included.
    let toolchains = [
        (
            "platform",
            Toolchain {
                platform: "nvidia",
                ..toolchain()
            },
        ),
        (
            "HIPRTC major",
            Toolchain {
                hiprtc_version: (10, 0),
                ..toolchain()
            },
        ),
        (
            "HIPRTC minor",
            Toolchain {
                hiprtc_version: (9, 1),
                ..toolchain()
            },
        ),
        (
            "HIPRTC major and minor swapped",
            Toolchain {
                hiprtc_version: (0, 9),
                ..toolchain()
            },
        ),
        (
            "runtime",
            Toolchain {
                runtime_version: 50221154,
                ..toolchain()
            },
        ),
        (
            "compiler",
            Toolchain {
                compiler: String::new(),
                ..toolchain()
            },
        ),
    ];
    let mut keys = vec![("base", base.clone())];
    for (part, t) in &toolchains {
        keys.push((part, key_of(t, &base_parts.request())));
    }
    // Each request part alone.
    let changed = |f: &dyn Fn(&mut Parts)| {
        let mut p = Parts::new();
        f(&mut p);
        key_of(&toolchain(), &p.request())
    };
    let requests: Vec<(&str, Key)> = vec![
        ("source", changed(&|p| p.source.push(' '))),
        ("header name", changed(&|p| p.headers[0].0 = "b.h".into())),
        (
            "header contents",
            changed(&|p| p.headers[0].1 = "#define A 2".into()),
        ),
        (
            "one header more",
            changed(&|p| p.headers.push(("b.h".into(), String::new()))),
        ),
        ("no header", changed(&|p| p.headers.clear())),
        ("option order", changed(&|p| p.options.reverse())),
        ("option value", changed(&|p| p.options[0] = "-O2".into())),
        ("one option more", changed(&|p| p.options.push("-g".into()))),
        ("name expression", changed(&|p| p.exprs[0] = "k2".into())),
        (
            "one name expression more",
            changed(&|p| p.exprs.push("k".into())),
        ),
        ("no name expression", changed(&|p| p.exprs.clear())),
        (
            "program name",
            key_of(
                &toolchain(),
                &Request {
                    name: "q.hip",
                    ..base_parts.request()
                },
            ),
        ),
        (
            "output kind",
            key_of(
                &toolchain(),
                &Request {
                    output: "bitcode",
                    ..base_parts.request()
                },
            ),
        ),
    ];
    keys.extend(requests);
    // Every key differs from every other, and so does every file name.
    for (i, (a, ka)) in keys.iter().enumerate() {
        for (b, kb) in &keys[i + 1..] {
            assert_ne!(ka, kb, "{a} and {b}");
            assert_ne!(ka.file_stem(), kb.file_stem(), "{a} and {b}");
        }
    }
}

#[test]
fn an_entry_stores_the_whole_key_and_every_field_of_the_program() {
    let parts = Parts::new();
    let key = key_of(&toolchain(), &parts.request());
    let program = CompiledProgram {
        code: vec![1, 2, 3],
        log: "log".into(),
        lowered_names: vec![("a".into(), "_Z1a".into()), ("b".into(), "_Z1b".into())],
        cache_outcome: CacheOutcome::Stored,
    };
    let bytes = encode(&key, &program);
    // Magic, payload length, checksum, then the payload: the key, code, log and names, each prefixed.
    assert_eq!(&bytes[..8], MAGIC);
    let payload = &bytes[HEADER_LEN..];
    assert_eq!(
        u64::from_le_bytes(bytes[8..16].try_into().unwrap()),
        payload.len() as u64
    );
    assert_eq!(
        u64::from_le_bytes(bytes[16..24].try_into().unwrap()),
        hash64(payload, 0x2545_f491_4f6c_dd1d)
    );
    let mut expected = Writer(Vec::new());
    expected.bytes(&key.bytes);
    expected.bytes(&[1, 2, 3]);
    expected.str("log");
    expected.u64(2);
    for s in ["a", "_Z1a", "b", "_Z1b"] {
        expected.str(s);
    }
    assert_eq!(payload, expected.0.as_slice());
    // Written out: a u64 length, little-endian, before each field.
    let mut w = Writer(Vec::new());
    w.str("ab");
    assert_eq!(w.0, [2, 0, 0, 0, 0, 0, 0, 0, b'a', b'b']);
    w.u64(0x0102);
    assert_eq!(&w.0[10..], [2, 1, 0, 0, 0, 0, 0, 0]);

    // Each program field survives the round trip, and empty ones too.
    for p in [
        program.clone(),
        CompiledProgram {
            code: Vec::new(),
            log: String::new(),
            lowered_names: Vec::new(),
            cache_outcome: CacheOutcome::Stored,
        },
    ] {
        let Decoded::Entry(back) = decode(&encode(&key, &p), &key) else {
            panic!("decodes")
        };
        assert_eq!(
            (back.code, back.log, back.lowered_names, back.cache_outcome),
            (p.code, p.log, p.lowered_names, CacheOutcome::Hit)
        );
    }
}

#[test]
fn a_payload_with_a_valid_header_but_a_bad_body_is_damaged() {
    let parts = Parts::new();
    let key = key_of(&toolchain(), &parts.request());
    // Re-seal a payload behind a correct header, so only the body's own structure can refuse it.
    let seal = |payload: &[u8]| {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        out.extend_from_slice(&hash64(payload, 0x2545_f491_4f6c_dd1d).to_le_bytes());
        out.extend_from_slice(payload);
        out
    };
    let body = |f: &dyn Fn(&mut Writer)| {
        let mut w = Writer(Vec::new());
        w.bytes(&key.bytes);
        f(&mut w);
        seal(&w.0)
    };
    let good = body(&|w| {
        w.bytes(b"code");
        w.str("log");
        w.u64(1);
        w.str("k");
        w.str("_Z1kv");
    });
    assert!(matches!(decode(&good, &key), Decoded::Entry(_)));
    let damaged = [
        ("no code", body(&|_| {})),
        (
            "a name count larger than the names",
            body(&|w| {
                w.bytes(b"code");
                w.str("log");
                w.u64(2);
                w.str("k");
                w.str("_Z1kv");
            }),
        ),
        (
            "a lowered name missing",
            body(&|w| {
                w.bytes(b"code");
                w.str("log");
                w.u64(1);
                w.str("k");
            }),
        ),
        (
            "bytes after the last name",
            body(&|w| {
                w.bytes(b"code");
                w.str("log");
                w.u64(0);
                w.u64(7);
            }),
        ),
        (
            "a log that is not UTF-8",
            body(&|w| {
                w.bytes(b"code");
                w.bytes(&[0xff, 0xfe]);
                w.u64(0);
            }),
        ),
        (
            "a code length past the end",
            body(&|w| {
                w.u64(1 << 40);
            }),
        ),
        (
            "a code length of u64::MAX",
            body(&|w| {
                w.u64(u64::MAX);
            }),
        ),
        ("a wrong magic", {
            let mut b = good.clone();
            b[7] = b'2';
            b
        }),
    ];
    for (what, bytes) in damaged {
        assert!(matches!(decode(&bytes, &key), Decoded::Damaged), "{what}");
    }
    // The same body under another key is another key's entry, not damage.
    let other = key_of(
        &Toolchain {
            platform: "nvidia",
            ..toolchain()
        },
        &parts.request(),
    );
    assert!(matches!(decode(&good, &other), Decoded::OtherKey));
}

#[test]
fn the_hash_is_fixed_so_entries_stay_found_across_builds() {
    // File names and checksums are on disk: the hash must not change between versions of this crate.
    // Values computed by an independent (Python) implementation of the algorithm `hash64` documents.
    let data: Vec<u8> = (0..23u8).collect();
    let values = [
        hash64(b"", 1),
        hash64(b"a", 0),
        hash64(&data, 0x2545_f491_4f6c_dd1d),
    ];
    assert_eq!(values, PINNED);
    // Every byte of the tail and of each whole word counts.
    for i in 0..data.len() {
        let mut d = data.clone();
        d[i] ^= 0x80;
        assert_ne!(hash64(&d, 7), hash64(&data, 7), "byte {i}");
    }
}

#[test]
fn only_the_caches_own_names_are_entries_or_temporary_files() {
    assert!(is_stem("0123456789abcdef0123456789abcdef"));
    for s in [
        "",
        "0123456789abcdef0123456789abcde",
        "0123456789abcdef0123456789abcdef0",
        "0123456789ABCDEF0123456789abcdef",
        "0123456789abcdeg0123456789abcdef",
        "0123456789abcdef0123456789abcde/",
        "0123456789abcdef0123456789abcd`f",
    ] {
        assert!(!is_stem(s), "{s:?}");
    }
    assert!(is_number("0") && is_number("1234567890"));
    for s in ["", "-1", "1a", " 1", "١"] {
        assert!(!is_number(s), "{s:?}");
    }
}

/// [`hash64`] of the inputs in `the_hash_is_fixed_so_entries_stay_found_across_builds`.
const PINNED: [u64; 3] = [
    4_447_254_574_860_534_718,
    0xe5bb_356e_1992_fcdf,
    0xb3df_12ea_14df_7b10,
];

#[test]
fn the_default_limit_is_one_gib() {
    // docs/COMPILE_CACHE.md and the module docs promise 1 GiB.
    assert_eq!(CompileCache::DEFAULT_MAX_BYTES, 1_073_741_824);
}

#[test]
fn the_key_holds_the_include_scan_rules_version() {
    // A lookup skips the include scan (its answer follows from the texts the key holds), so an entry
    // stored under other scan rules must never match: the rules' version is part of every key.
    let parts = Parts::new();
    let t = toolchain();
    let key = key_of(&t, &parts.request());
    let mut prefix = Writer(Vec::new());
    prefix.str(t.platform);
    prefix.u64(9);
    prefix.u64(0);
    prefix.u64(t.runtime_version as u64);
    prefix.str(&t.compiler);
    prefix.u64(inputs::RULES);
    prefix.str("code");
    assert!(key.bytes.starts_with(&prefix.0));
}
