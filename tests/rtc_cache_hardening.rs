//! The compile cache under hostile conditions: programs that read files from disk, a shared or foreign
//! directory, files the cache did not write, symlinks planted where it writes. Real HIPRTC, no GPU.
//! Unix only: elsewhere (Windows) the cache trusts no directory and is never used (hip/src/rtc/cache/fs.rs).
#![cfg(all(hip_platform = "amd", unix))]
mod common;

use common::tempdir::TempDir;
use common::OFFLINE_ARCH;
use hip::rtc::{CacheOutcome, CompileCache, ProgramBuilder};
use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
use std::path::Path;

const KERNEL: &str = "extern \"C\" __global__ void k(int* out) { out[0] = VALUE; }\n";

fn not_stored(outcome: &CacheOutcome) -> &str {
    match outcome {
        CacheOutcome::NotStored(reason) => reason,
        other => panic!("expected NotStored, got {other:?}"),
    }
}

fn plain(cache: &CompileCache) -> hip::rtc::CompiledProgram {
    ProgramBuilder::new(KERNEL)
        .option("-DVALUE=7")
        .arch(OFFLINE_ARCH)
        .cache(cache.clone())
        .compile()
        .unwrap()
}

#[test]
fn a_header_read_from_disk_is_never_served_stale() {
    let root = TempDir::new("cache-include");
    let cache = CompileCache::new(root.path().join("cache"));
    let inc = root.path().join("inc");
    std::fs::create_dir(&inc).unwrap();
    let header = inc.join("value.h");
    let src =
        "#include \"value.h\"\nextern \"C\" __global__ void k(int* out) { out[0] = VALUE; }\n";
    let build = || {
        ProgramBuilder::new(src)
            .option(format!("-I{}", inc.display()))
            .arch(OFFLINE_ARCH)
            .cache(cache.clone())
            .compile()
            .unwrap()
    };
    std::fs::write(&header, "#define VALUE 1\n").unwrap();
    let first = build();
    assert!(
        not_stored(first.cache_outcome()).contains("-I"),
        "{:?}",
        first.cache_outcome()
    );
    std::fs::write(&header, "#define VALUE 2\n").unwrap();
    let second = build();
    // Not served from the cache, and not stored either: the same reason as the first time.
    assert!(
        not_stored(second.cache_outcome()).contains("-I"),
        "{:?}",
        second.cache_outcome()
    );
    assert_ne!(
        first.code(),
        second.code(),
        "the edited header must change the code"
    );
    let fresh = ProgramBuilder::new(src)
        .option(format!("-I{}", inc.display()))
        .arch(OFFLINE_ARCH)
        .no_cache()
        .compile()
        .unwrap();
    assert_eq!(second.code(), fresh.code());
}

#[test]
fn absolute_includes_and_include_options_are_not_cached() {
    let root = TempDir::new("cache-abs");
    let cache = CompileCache::new(root.path().join("cache"));
    let header = root.path().join("abs.h");
    std::fs::write(&header, "#define VALUE 3\n").unwrap();
    let absolute = format!("#include \"{}\"\n{KERNEL}", header.display());
    let out = ProgramBuilder::new(absolute)
        .arch(OFFLINE_ARCH)
        .cache(cache.clone())
        .compile()
        .unwrap();
    assert!(not_stored(out.cache_outcome()).contains("abs.h"));
    let out = ProgramBuilder::new(KERNEL)
        .options(["-include", header.to_str().unwrap()])
        .arch(OFFLINE_ARCH)
        .cache(cache.clone())
        .compile()
        .unwrap();
    assert!(not_stored(out.cache_outcome()).contains("-include"));
    // Given headers are keyed on their contents and stay cached.
    let given = |v: &str| {
        ProgramBuilder::new(format!("#include \"v.h\"\n{KERNEL}"))
            .header("v.h", format!("#define VALUE {v}\n"))
            .arch(OFFLINE_ARCH)
            .cache(cache.clone())
            .compile()
            .unwrap()
    };
    assert_eq!(given("4").cache_outcome(), &CacheOutcome::Stored);
    assert_eq!(given("4").cache_outcome(), &CacheOutcome::Hit);
    assert_eq!(given("5").cache_outcome(), &CacheOutcome::Stored);
    assert_eq!(cache.usage().unwrap().entries, 2);
}

#[test]
fn clear_and_eviction_touch_only_the_caches_own_files() {
    let root = TempDir::new("cache-foreign");
    let dir = root.path().join("shared");
    let cache = CompileCache::new(&dir);
    std::fs::create_dir(&dir).unwrap();
    // Files the cache did not write: in the directory, and inside its subfolder.
    let stem = "0123456789abcdef0123456789abcdef";
    let foreign_top = [
        dir.join("notes.hipc"),
        dir.join(format!("{stem}.hipc")),
        dir.join(".tmp-old"),
    ];
    for f in &foreign_top {
        std::fs::write(f, b"someone else's file").unwrap();
    }
    plain(&CompileCache::new(&dir)); // creates the subfolder
    let sub = cache.entries_dir();
    let foreign_sub = [
        sub.join(format!("{stem}.hipc")),     // our name, not our header
        sub.join(format!(".tmp-{stem}-1-2")), // our temp name, not our header
        sub.join("HIPRSC01-but-not-our-name"),
    ];
    for f in &foreign_sub[..2] {
        std::fs::write(f, b"someone else's file").unwrap();
    }
    std::fs::write(
        &foreign_sub[2],
        b"HIPRSC01 with our magic but a foreign name",
    )
    .unwrap();
    // Make the temporary look stale (older than ten minutes).
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .append(true)
        .open(&foreign_sub[1])
        .unwrap()
        .set_modified(old)
        .unwrap();
    let roomy = CompileCache::new(&dir).with_max_bytes(1 << 20);
    let out = ProgramBuilder::new(KERNEL)
        .option("-DVALUE=9")
        .arch(OFFLINE_ARCH)
        .cache(roomy.clone())
        .compile()
        .unwrap();
    assert_eq!(out.cache_outcome(), &CacheOutcome::Stored);
    assert_eq!(
        roomy.usage().unwrap().entries,
        2,
        "foreign files are not counted"
    );
    // A third store under a limit that fits two entries evicts the oldest of ours, nothing else.
    let biggest = std::fs::read_dir(&sub)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.ends_with(".hipc") && !n.starts_with(stem)
        })
        .map(|e| e.metadata().unwrap().len())
        .max()
        .unwrap();
    let out = ProgramBuilder::new(KERNEL)
        .option("-DVALUE=10")
        .arch(OFFLINE_ARCH)
        .cache(CompileCache::new(&dir).with_max_bytes(2 * biggest + 64))
        .compile()
        .unwrap();
    assert_eq!(out.cache_outcome(), &CacheOutcome::Stored);
    assert_eq!(roomy.usage().unwrap().entries, 2, "one of ours evicted");
    roomy.clear().unwrap();
    assert_eq!(roomy.usage().unwrap().entries, 0);
    for f in foreign_top.iter().chain(&foreign_sub) {
        assert!(f.exists(), "{} was deleted", f.display());
    }
}

#[test]
fn temporary_files_never_follow_a_planted_symlink() {
    let root = TempDir::new("cache-symlink");
    let cache = CompileCache::new(root.path().join("cache"));
    let first = plain(&cache);
    assert_eq!(first.cache_outcome(), &CacheOutcome::Stored);
    let sub = cache.entries_dir();
    let entry = std::fs::read_dir(&sub)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let stem = entry.file_stem().unwrap().to_string_lossy().into_owned();
    cache.clear().unwrap();
    // Symlinks at every temporary name this process will try next, pointing at a victim file.
    let victim = root.path().join("victim");
    std::fs::write(&victim, b"precious").unwrap();
    for n in 0..2000 {
        symlink(
            &victim,
            sub.join(format!(".tmp-{stem}-{}-{n}", std::process::id())),
        )
        .unwrap();
    }
    let out = plain(&cache);
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    assert!(
        not_stored(out.cache_outcome()).contains("exists"),
        "{:?}",
        out.cache_outcome()
    );
    // A symlink planted at the entry's own name is not read through either.
    let planted = root.path().join("planted");
    std::fs::write(&planted, b"HIPRSC01 forged").unwrap();
    symlink(&planted, &entry).unwrap();
    let again = plain(&cache);
    // Compiled again (stored, or not stored where a planted temporary name is still in the way), never
    // the forged bytes.
    assert!(
        matches!(again.cache_outcome(), CacheOutcome::Stored)
            || not_stored(again.cache_outcome()).contains("exists"),
        "{:?}",
        again.cache_outcome()
    );
    assert_eq!(again.code(), first.code());
    assert_eq!(std::fs::read(&planted).unwrap(), b"HIPRSC01 forged");
}

#[test]
fn a_directory_writable_by_others_is_not_used() {
    let root = TempDir::new("cache-shared-dir");
    let dir = root.path().join("cache");
    let cache = CompileCache::new(&dir);
    assert_eq!(plain(&cache).cache_outcome(), &CacheOutcome::Stored);
    assert_eq!(plain(&cache).cache_outcome(), &CacheOutcome::Hit);
    for (path, mode) in [
        (dir.clone(), 0o777),
        (dir.clone(), 0o720),
        (cache.entries_dir(), 0o702),
    ] {
        let before = std::fs::metadata(&path).unwrap().permissions();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        let out = plain(&cache);
        let reason = not_stored(out.cache_outcome());
        assert!(reason.contains("writable by group or others"), "{reason}");
        std::fs::set_permissions(&path, before).unwrap();
    }
    assert_eq!(plain(&cache).cache_outcome(), &CacheOutcome::Hit);
}

#[test]
fn a_directory_owned_by_another_user_or_a_symlinked_subfolder_is_not_used() {
    let root = TempDir::new("cache-owner");
    let probe = root.path().join("probe");
    std::fs::write(&probe, b"").unwrap();
    let me = std::fs::metadata(&probe).unwrap().uid();
    let other_dir = if me == 0 {
        let d = root.path().join("theirs");
        std::fs::create_dir(&d).unwrap();
        std::os::unix::fs::chown(&d, Some(65534), Some(65534)).unwrap();
        d
    } else {
        Path::new("/").to_path_buf() // owned by root, not by this user
    };
    let out = plain(&CompileCache::new(&other_dir));
    assert!(
        not_stored(out.cache_outcome()).contains("owned by uid"),
        "{:?}",
        out.cache_outcome()
    );

    // The subfolder replaced by a symlink to a directory of ours: still refused.
    let dir = root.path().join("mine");
    let cache = CompileCache::new(&dir);
    plain(&cache);
    let elsewhere = root.path().join("elsewhere");
    std::fs::rename(cache.entries_dir(), &elsewhere).unwrap();
    symlink(&elsewhere, cache.entries_dir()).unwrap();
    let out = plain(&cache);
    assert!(
        not_stored(out.cache_outcome()).contains("symbolic link"),
        "{:?}",
        out.cache_outcome()
    );
}
