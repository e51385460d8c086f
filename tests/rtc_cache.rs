//! The persistent HIPRTC compile cache against the real HIPRTC, compiling for an explicit AMD target: no GPU
//! needed. Child processes (this binary again, running one ignored test) cover the environment variables
//! and several processes sharing a directory.
#![cfg(hip_platform = "amd")]
mod common;

use common::tempdir::TempDir;
use common::OFFLINE_ARCH;
use hip::rtc::{CacheOutcome, CompileCache, CompiledProgram, ProgramBuilder};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::Duration;

/// A program with every key part in use and a non-empty log (the `#warning`).
const SOURCE: &str = r#"
#include "scale.h"
#warning "cached program"
template <typename T>
__global__ void fill(T* out, T value, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value * (T)SCALE + (T)RS_V;
}
"#;

const HEADERS: [(&str, &str); 2] = [
    ("scale.h", "#define SCALE 2\n"),
    ("unused.h", "#define UNUSED 1\n"),
];
const OPTIONS: [&str; 2] = ["-DRS_V=1", "-DRS_W=2"];

/// The program every test compiles, or a variant of it.
fn program_from(source: &str, headers: [(&str, &str); 2], options: [&str; 2]) -> ProgramBuilder {
    ProgramBuilder::new(source)
        .name("cached.hip")
        .header(headers[0].0, headers[0].1)
        .header(headers[1].0, headers[1].1)
        .options(options)
        .arch(OFFLINE_ARCH)
        .name_expression("fill<float>")
        .name_expression("fill<int>")
}

fn program() -> ProgramBuilder {
    program_from(SOURCE, HEADERS, OPTIONS)
}

/// The same program: the same lowered names, and the same code object.
///
/// HIPRTC 5.x output is byte-reproducible. HIPRTC >= 6 (Debian sid 6.4.3, experimental 7.2.4) is not: two
/// cold compiles of this program in one process gave two different code objects of the same length (the
/// statics it adds for name expressions swap order; seen 4 of 6 compiles differ from the first on 6.4.3). There
/// the code objects must have the same length and the same symbols. A cache hit is always compared byte
/// for byte with the compile that stored it (`assert_eq!` on the programs). Logs name comgr's temporary
/// directory, so two compiles of one program differ there on every version.
fn same_output(a: &CompiledProgram, b: &CompiledProgram) -> bool {
    a.lowered_names() == b.lowered_names() && same_code(a.code(), b.code())
}

fn same_code(a: &[u8], b: &[u8]) -> bool {
    if common::runtime_major() < 6 {
        return a == b;
    }
    let sorted = |code: &[u8]| {
        let mut s = common::elf::symbols(code);
        s.sort();
        s
    };
    a.len() == b.len() && sorted(a) == sorted(b)
}

fn compile(builder: ProgramBuilder, cache: &CompileCache) -> CompiledProgram {
    builder.cache(cache.clone()).compile().expect("compiles")
}

/// The directory's file names, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|it| {
            it.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The one entry of the cache in `dir` (entries live in the cache's own subfolder).
fn only_entry(dir: &Path) -> PathBuf {
    let dir = CompileCache::new(dir).entries_dir();
    let names = listing(&dir);
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(names[0].ends_with(".hipc"), "{names:?}");
    dir.join(&names[0])
}

#[test]
fn a_hit_returns_exactly_what_the_compile_returned() {
    let dir = TempDir::new("cache-hit");
    let cache = CompileCache::new(dir.path());
    let cold = compile(program(), &cache);
    assert_eq!(cold.cache_outcome(), &CacheOutcome::Stored);
    let warm = compile(program(), &cache);
    assert_eq!(warm.cache_outcome(), &CacheOutcome::Hit);

    assert_eq!(warm.code(), cold.code());
    assert_eq!(warm.log(), cold.log());
    assert_eq!(warm.lowered_names(), cold.lowered_names());
    assert!(cold.log().contains("cached program"), "{}", cold.log());
    assert!(warm
        .lowered_name("fill<int>")
        .unwrap()
        .starts_with("_Z4fillIiEvPT_S0_j"));

    // And it is what compiling without the cache gives.
    let uncached = program().no_cache().compile().unwrap();
    assert_eq!(uncached.cache_outcome(), &CacheOutcome::Off);
    assert!(same_output(&uncached, &warm));
    assert_eq!(cache.usage().unwrap().entries, 1);
}

#[test]
fn each_key_part_changed_alone_is_a_miss() {
    let dir = TempDir::new("cache-key");
    let cache = CompileCache::new(dir.path());
    assert_eq!(
        compile(program(), &cache).cache_outcome(),
        &CacheOutcome::Stored
    );

    let source = SOURCE.replace("cached program", "cached program!");
    let variants = [
        ("source", program_from(&source, HEADERS, OPTIONS)),
        ("program name", program().name("renamed.hip")),
        (
            "header name",
            program_from(SOURCE, [HEADERS[0], ("other.h", HEADERS[1].1)], OPTIONS),
        ),
        (
            "header contents",
            program_from(
                SOURCE,
                [("scale.h", "#define SCALE 3\n"), HEADERS[1]],
                OPTIONS,
            ),
        ),
        (
            "option order",
            program_from(SOURCE, HEADERS, ["-DRS_W=2", "-DRS_V=1"]),
        ),
        (
            "option value",
            program_from(SOURCE, HEADERS, ["-DRS_V=1", "-DRS_W=3"]),
        ),
        ("arch", program().arch("gfx908")),
        ("arch features", program().arch("gfx90a:xnack-")),
        (
            "name expressions",
            program().name_expression("fill<double>"),
        ),
    ];
    let n = variants.len();
    for (part, builder) in variants {
        let out = compile(builder, &cache);
        assert_eq!(
            out.cache_outcome(),
            &CacheOutcome::Stored,
            "changing the {part} must miss"
        );
    }
    assert_eq!(
        compile(program(), &cache).cache_outcome(),
        &CacheOutcome::Hit
    );
    assert_eq!(cache.usage().unwrap().entries, 1 + n);
}

#[test]
fn a_damaged_entry_is_dropped_and_recompiled() {
    let dir = TempDir::new("cache-damage");
    let cache = CompileCache::new(dir.path());
    let cold = compile(program(), &cache);
    let entry = only_entry(dir.path());
    let good = std::fs::read(&entry).unwrap();

    let mut flipped = good.clone();
    flipped[good.len() / 2] ^= 0x01;
    let damages: [(&str, Vec<u8>); 5] = [
        ("truncated to half", good[..good.len() / 2].to_vec()),
        ("one byte short", good[..good.len() - 1].to_vec()),
        ("one bit flipped", flipped),
        ("empty", Vec::new()),
        ("foreign", b"not a cache entry".to_vec()),
    ];
    for (damage, bytes) in damages {
        std::fs::write(&entry, bytes).unwrap();
        let out = compile(program(), &cache);
        assert_eq!(
            out.cache_outcome(),
            &CacheOutcome::Stored,
            "{damage}: recompiled and stored"
        );
        assert!(same_output(&out, &cold), "{damage}");
        let again = compile(program(), &cache);
        assert_eq!(
            again.cache_outcome(),
            &CacheOutcome::Hit,
            "{damage}: whole again"
        );
        assert_eq!(again, out, "{damage}");
    }
}

#[test]
fn an_unusable_directory_still_compiles() {
    let dir = TempDir::new("cache-unusable");
    // Root can write anywhere, so make the directory impossible instead: its parent is a regular file.
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"").unwrap();
    let cache = CompileCache::new(file.join("cache"));
    for _ in 0..2 {
        let out = compile(program(), &cache);
        match out.cache_outcome() {
            CacheOutcome::NotStored(reason) => {
                assert!(
                    reason.contains("a-file/cache"),
                    "the reason names the directory: {reason}"
                )
            }
            other => panic!("expected NotStored, got {other:?}"),
        }
        assert!(same_output(&out, &program().no_cache().compile().unwrap()));
    }
}

#[test]
fn failed_compiles_are_not_stored() {
    let dir = TempDir::new("cache-failed");
    let cache = CompileCache::new(dir.path());
    for _ in 0..2 {
        let err = program_from("__global__ void k() { undefined_name; }", HEADERS, OPTIONS)
            .cache(cache.clone())
            .compile()
            .unwrap_err();
        assert!(
            err.log().unwrap_or_default().contains("undefined_name"),
            "{err}"
        );
    }
    assert_eq!(listing(dir.path()), Vec::<String>::new());
}

#[test]
fn eviction_keeps_the_limit_and_drops_the_least_recently_used() {
    let variant = |v: &str| program_from(SOURCE, HEADERS, [v, "-DRS_W=2"]);
    let probe = TempDir::new("cache-probe");
    compile(variant("-DRS_V=1"), &CompileCache::new(probe.path()));
    let entry_size = CompileCache::new(probe.path()).usage().unwrap().bytes;

    let dir = TempDir::new("cache-evict");
    let limit = entry_size * 2 + entry_size / 2; // room for two entries, not three
    let cache = CompileCache::new(dir.path()).with_max_bytes(limit);
    let step = || std::thread::sleep(Duration::from_millis(30)); // distinct modification times
    assert_eq!(
        compile(variant("-DRS_V=1"), &cache).cache_outcome(),
        &CacheOutcome::Stored
    );
    step();
    assert_eq!(
        compile(variant("-DRS_V=2"), &cache).cache_outcome(),
        &CacheOutcome::Stored
    );
    step();
    assert_eq!(
        compile(variant("-DRS_V=1"), &cache).cache_outcome(),
        &CacheOutcome::Hit
    );
    step();
    assert_eq!(
        compile(variant("-DRS_V=3"), &cache).cache_outcome(),
        &CacheOutcome::Stored
    );

    let usage = cache.usage().unwrap();
    assert_eq!(usage.entries, 2);
    assert!(usage.bytes <= limit, "{} > {limit}", usage.bytes);
    // V=2 was the least recently used: evicted. V=1 (used after V=2) and V=3 stay.
    assert_eq!(
        compile(variant("-DRS_V=1"), &cache).cache_outcome(),
        &CacheOutcome::Hit
    );
    assert_eq!(
        compile(variant("-DRS_V=3"), &cache).cache_outcome(),
        &CacheOutcome::Hit
    );
    assert_eq!(
        compile(variant("-DRS_V=2"), &cache).cache_outcome(),
        &CacheOutcome::Stored
    );
    assert!(cache.usage().unwrap().bytes <= limit);

    // An entry larger than the whole limit is not stored at all.
    let tiny = CompileCache::new(dir.path()).with_max_bytes(100);
    match compile(variant("-DRS_V=4"), &tiny).cache_outcome() {
        CacheOutcome::NotStored(reason) => {
            assert!(reason.contains("larger than the cache limit"), "{reason}")
        }
        other => panic!("expected NotStored, got {other:?}"),
    }
}

/// Run `child_compiles_with_the_environments_cache` in a new process of this test binary, with `env`
/// set (and the cache variables cleared first); it writes its code object to `out` and its cache outcome
/// next to it.
fn child(env: &[(&str, &Path)], out: &Path) -> Command {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--ignored",
        "--exact",
        "child_compiles_with_the_environments_cache",
        "--test-threads=1",
    ]);
    for var in [
        "HIP_RS_CACHE_DIR",
        "HIP_RS_CACHE_DISABLE",
        "HIP_RS_CACHE_MAX_BYTES",
        "XDG_CACHE_HOME",
    ] {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.env("HIP_RS_TEST_OUT", out);
    cmd
}

fn child_result(out: &Path) -> (Vec<u8>, String) {
    let code = std::fs::read(out).expect("the child wrote its code object");
    let outcome = std::fs::read_to_string(out.with_extension("outcome")).unwrap();
    (code, outcome)
}

fn run_child(env: &[(&str, &Path)], out: &Path) -> (Vec<u8>, String) {
    let status = child(env, out).output().unwrap();
    assert!(
        status.status.success(),
        "child failed: {}",
        String::from_utf8_lossy(&status.stdout)
    );
    child_result(out)
}

#[test]
#[ignore = "a child process of the multi-process tests; runs standalone against the default cache"]
fn child_compiles_with_the_environments_cache() {
    let out = program()
        .compile()
        .expect("compiles whatever the cache does");
    if let Some(path) = std::env::var_os("HIP_RS_TEST_OUT") {
        let path = PathBuf::from(path);
        std::fs::write(
            path.with_extension("outcome"),
            format!("{:?}", out.cache_outcome()),
        )
        .unwrap();
        std::fs::write(path.with_extension("log"), out.log()).unwrap();
        std::fs::write(&path, out.code()).unwrap();
    } else {
        assert!(
            matches!(
                out.cache_outcome(),
                CacheOutcome::Hit | CacheOutcome::Stored
            ),
            "{:?}",
            out.cache_outcome()
        );
    }
}

#[test]
fn the_environment_chooses_the_directory_or_turns_the_cache_off() {
    let root = TempDir::new("cache-env");
    let p = |name: &str| root.path().join(name);
    let reference = program().no_cache().compile().unwrap();

    // HOME alone: ~/.cache/hip-rs.
    let (code, outcome) = run_child(&[("HOME", &p("home"))], &p("out1"));
    assert!(same_code(&code, reference.code()));
    assert_eq!(outcome, "Stored");
    assert_eq!(
        CompileCache::new(p("home/.cache/hip-rs"))
            .usage()
            .unwrap()
            .entries,
        1
    );
    // The next process hits.
    assert_eq!(run_child(&[("HOME", &p("home"))], &p("out2")).1, "Hit");

    // XDG_CACHE_HOME wins over HOME.
    let (_, outcome) = run_child(
        &[("HOME", &p("home2")), ("XDG_CACHE_HOME", &p("xdg"))],
        &p("out3"),
    );
    assert_eq!(outcome, "Stored");
    assert_eq!(
        CompileCache::new(p("xdg/hip-rs")).usage().unwrap().entries,
        1
    );
    assert!(!p("home2").exists());

    // HIP_RS_CACHE_DIR wins over both.
    let env = [
        ("HOME", p("home3")),
        ("XDG_CACHE_HOME", p("xdg3")),
        ("HIP_RS_CACHE_DIR", p("dir")),
    ];
    let env: Vec<(&str, &Path)> = env.iter().map(|(k, v)| (*k, v.as_path())).collect();
    assert_eq!(run_child(&env, &p("out4")).1, "Stored");
    assert_eq!(CompileCache::new(p("dir")).usage().unwrap().entries, 1);
    assert!(!p("xdg3/hip-rs").exists() && !p("home3").exists());
    // comgr >= 3.0 (HIP 6.4.3, 7.2.4) keeps a cache of its own under $XDG_CACHE_HOME/comgr, on by default;
    // comgr 2.x (HIP 5.2.3, 5.7.1) has none. HIP_RS_CACHE_* do not govern it (see hip::rtc::cache).
    assert_eq!(
        p("xdg3/comgr").exists(),
        common::runtime_major() >= 6,
        "comgr's own cache"
    );

    // HIP_RS_CACHE_DISABLE turns it off: nothing read, nothing written.
    let (code, outcome) = run_child(
        &[
            ("HIP_RS_CACHE_DIR", &p("dir")),
            ("HIP_RS_CACHE_DISABLE", Path::new("1")),
        ],
        &p("out5"),
    );
    assert!(same_code(&code, reference.code()));
    assert_eq!(outcome, "Off");
    // With comgr's own cache off as well, a compile writes nothing at all (comgr >= 3.0 writes under
    // $XDG_CACHE_HOME/comgr by default, above).
    let (code, outcome) = run_child(
        &[
            ("HOME", &p("home4")),
            ("XDG_CACHE_HOME", &p("xdg4")),
            ("HIP_RS_CACHE_DISABLE", Path::new("1")),
            ("AMD_COMGR_CACHE", Path::new("0")),
        ],
        &p("out5b"),
    );
    assert!(same_code(&code, reference.code()));
    assert_eq!(outcome, "Off");
    assert!(!p("xdg4").exists() && !p("home4").exists());

    // "0" means not disabled.
    let (_, outcome) = run_child(
        &[
            ("HIP_RS_CACHE_DIR", &p("dir")),
            ("HIP_RS_CACHE_DISABLE", Path::new("0")),
        ],
        &p("out6"),
    );
    assert_eq!(outcome, "Hit");

    // HIP_RS_CACHE_MAX_BYTES is the limit.
    let (_, outcome) = run_child(
        &[
            ("HIP_RS_CACHE_DIR", &p("small")),
            ("HIP_RS_CACHE_MAX_BYTES", Path::new("1000")),
        ],
        &p("out7"),
    );
    assert!(outcome.contains("larger than the cache limit"), "{outcome}");
}

#[test]
fn threads_and_processes_compiling_at_once_share_one_good_entry() {
    let root = TempDir::new("cache-race");
    let dir = root.path().join("cache");
    let children: Vec<_> = (0..4)
        .map(|i| {
            let out = root.path().join(format!("child{i}"));
            let spawned = child(&[("HIP_RS_CACHE_DIR", &dir)], &out)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            (spawned, out)
        })
        .collect();
    let barrier = Arc::new(Barrier::new(8));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let barrier = barrier.clone();
            let cache = CompileCache::new(&dir);
            std::thread::spawn(move || {
                barrier.wait();
                compile(program(), &cache)
            })
        })
        .collect();
    let results: Vec<CompiledProgram> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let reference = program().no_cache().compile().unwrap();
    for r in &results {
        assert!(same_output(r, &reference));
        assert!(
            matches!(r.cache_outcome(), CacheOutcome::Stored | CacheOutcome::Hit),
            "{:?}",
            r.cache_outcome()
        );
    }
    let mut child_logs = Vec::new();
    for (c, out) in children {
        let output = c.wait_with_output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stdout)
        );
        let (code, outcome) = child_result(&out);
        assert!(same_code(&code, reference.code()));
        assert!(outcome == "Stored" || outcome == "Hit", "{outcome}");
        child_logs.push((
            code,
            std::fs::read_to_string(out.with_extension("log")).unwrap(),
        ));
    }
    let entry = only_entry(&dir);
    assert!(std::fs::metadata(&entry).unwrap().len() > reference.code().len() as u64);
    let hit = compile(program(), &CompileCache::new(&dir));
    assert_eq!(hit.cache_outcome(), &CacheOutcome::Hit);
    // The last rename wins, and a child process may have written last: the entry is then that child's
    // whole result (its code and log, which names the child's comgr temporary directory).
    assert!(
        results.contains(&hit)
            || child_logs
                .iter()
                .any(|(code, log)| (code.as_slice(), log.as_str()) == (hit.code(), hit.log())),
        "the entry is one writer's whole result"
    );
}
