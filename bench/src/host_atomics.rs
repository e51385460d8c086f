//! What one uncontended locked instruction costs on this host (issue 56): the launch and event rows'
//! remaining cost over raw C++ is partly locked instructions the raw calls do not make (a stream
//! operation closes and opens its stream's gate, a buffer argument stamps its allocation, an event
//! query teaches the stream's completion), so the host's price of one is part of the answer.
//!
//! Each round times [`N`] iterations of a loop that reads a value, adds one and writes it back: with a
//! plain load and store (the baseline), with `compare_exchange` (`lock cmpxchg` on x86-64) and with a
//! SeqCst `swap` (`xchg`, what a SeqCst store compiles to), each on a value no other thread touches.
//! The difference per iteration to the baseline is the locked instruction's cost. Medians of 7 rounds.
use crate::stats::median;
use std::fmt::Write as _;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Iterations per timed loop.
const N: u64 = 2_000_000;

/// Times [`N`] iterations of `step`, each after `stores` stores to as many cache lines (0 or 8): a locked
/// instruction waits for the stores before it to drain, as it does in the crate's paths.
fn timed(stores: usize, mut step: impl FnMut()) -> f64 {
    let mut lines = [[0u64; 8]; 8];
    let t = Instant::now();
    for i in 0..N {
        let lines = black_box(&mut lines);
        for line in lines.iter_mut().take(stores) {
            line[0] = i;
        }
        step();
    }
    t.elapsed().as_nanos() as f64 / N as f64
}

fn plain(v: &mut u64, stores: usize) -> f64 {
    timed(stores, || {
        let x = black_box(&mut *v);
        *x = x.wrapping_add(1);
    })
}

fn cas(v: &AtomicU64, stores: usize) -> f64 {
    timed(stores, || {
        let a = black_box(v);
        let x = a.load(Ordering::Relaxed);
        let _ = a.compare_exchange(x, x.wrapping_add(1), Ordering::AcqRel, Ordering::Relaxed);
    })
}

fn swap(v: &AtomicU64, stores: usize) -> f64 {
    timed(stores, || {
        let a = black_box(v);
        let x = a.load(Ordering::Relaxed);
        a.swap(x.wrapping_add(1), Ordering::SeqCst);
    })
}

/// Appends the section: ns per iteration of each loop and the two locked instructions' cost over the
/// plain one.
pub fn section(out: &mut String) {
    let mut plain_v = 0u64;
    let atomic = AtomicU64::new(0);
    writeln!(out, "## One uncontended locked instruction on this host\n").unwrap();
    writeln!(
        out,
        "Loops of {N} read-add-write iterations on a value no other thread touches, each after 0 or 8 \
         stores to other cache lines; medians of 7.\n"
    )
    .unwrap();
    writeln!(
        out,
        "| loop | ns per iteration, 0 stores | over plain | ns, 8 stores | over plain |"
    )
    .unwrap();
    writeln!(out, "| --- | ---: | ---: | ---: | ---: |").unwrap();
    let mut rows = [[0.0; 2]; 3];
    for (col, stores) in [0, 8].into_iter().enumerate() {
        let (mut p, mut c, mut s) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..7 {
            p.push(plain(&mut plain_v, stores));
            c.push(cas(&atomic, stores));
            s.push(swap(&atomic, stores));
        }
        rows[0][col] = median(&p);
        rows[1][col] = median(&c);
        rows[2][col] = median(&s);
    }
    let names = [
        "plain load + store",
        "compare_exchange (lock cmpxchg)",
        "SeqCst swap (xchg)",
    ];
    for (name, r) in names.iter().zip(rows) {
        let over = |col: usize| match name.starts_with("plain") {
            true => String::new(),
            false => format!("{:+.2}", r[col] - rows[0][col]),
        };
        writeln!(
            out,
            "| {name} | {:.2} | {} | {:.2} | {} |",
            r[0],
            over(0),
            r[1],
            over(1)
        )
        .unwrap();
    }
    writeln!(out).unwrap();
}
