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
