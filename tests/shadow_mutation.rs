//! The detector's self-test: with `HIP_RS_SHADOW_DROP_WAITS=N` the shadow runtime turns the Nth
//! hipStreamWaitEvent into a no-op, as if the `hip` crate had never queued it. The pattern below (a fill
//! on stream A, a copy of it on stream B, read back) is run in a child process once as it is (no report
//! allowed) and once per wait it queued with that wait dropped: dropping the wait that orders B's copy
//! after A's fill must be reported, and so must dropping any wait that ordered something new.
#![cfg(feature = "shadow")]

mod shadow;

use hip::prelude::*;
use std::process::Command;

const N: usize = 4096;
const CHILD: &str = "HIP_RS_SHADOW_MUTATION_CHILD";

/// The child's part: the pattern, then one line with the reports, the waits queued and wrong values.
#[test]
#[ignore = "the child part of a_dropped_wait_is_reported, which runs it with --ignored"]
fn pattern_in_child() {
    assert!(
        std::env::var(CHILD).is_ok(),
        "run by a_dropped_wait_is_reported"
    );
    let d = Device::get(0).unwrap();
    let a = Stream::non_blocking(&d).unwrap();
    let b = Stream::non_blocking(&d).unwrap();
    let mut x = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let mut y = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    a.fill_async(&mut x, 77).unwrap();
    b.copy_device_async(&x, &mut y).unwrap();
    let wrong = y.to_vec().unwrap().iter().filter(|&&v| v != 77).count();
    println!(
        "SHADOW reports={} waits={} redundant={} wrong={wrong}",
        shadow::reports(),
        shadow::waits(),
        shadow::redundant_waits()
    );
    if shadow::reports() > 0 {
        println!("{}", shadow::report_text());
    }
}

struct Run {
    reports: usize,
    waits: usize,
    redundant: usize,
    wrong: usize,
}

fn run_child(drop_wait: Option<usize>) -> Run {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        "pattern_in_child",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(CHILD, "1")
    .env_remove("HIP_RS_SHADOW_DROP_WAITS");
    if let Some(n) = drop_wait {
        cmd.env("HIP_RS_SHADOW_DROP_WAITS", n.to_string());
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find_map(|l| l.split_once("SHADOW ").map(|(_, rest)| rest))
        .unwrap_or_else(|| panic!("no result line from the child:\n{stdout}"));
    let field = |k: &str| -> usize {
        let v = line
            .split_whitespace()
            .find_map(|w| w.strip_prefix(k))
            .unwrap();
        v.parse().unwrap()
    };
    Run {
        reports: field("reports="),
        waits: field("waits="),
        redundant: field("redundant="),
        wrong: field("wrong="),
    }
}

#[test]
fn a_dropped_wait_is_reported() {
    let control = run_child(None);
    assert_eq!(control.reports, 0, "the unmutated pattern must be clean");
    assert_eq!(control.wrong, 0);
    assert!(control.waits >= 1, "the crate orders B after A with a wait");
    println!(
        "unmutated: {} waits, {} of them ordered nothing new",
        control.waits, control.redundant
    );
    let mut caught = Vec::new();
    for n in 1..=control.waits {
        let r = run_child(Some(n));
        println!(
            "wait {n} of {} dropped: {} reports, {} wrong values",
            control.waits, r.reports, r.wrong
        );
        // A dropped wait that let the copy read stale values must have been reported.
        assert!(
            r.wrong == 0 || r.reports > 0,
            "wrong values without a report (wait {n})"
        );
        if r.reports > 0 {
            caught.push(n);
        }
    }
    assert!(
        !caught.is_empty(),
        "no dropped wait was reported: the detector misses a missing wait"
    );
}
