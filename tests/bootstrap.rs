//! The rendezvous (`hip::bootstrap`) between real processes on this machine, no GPU: this test binary
//! starts copies of itself as ranks (torchrun's variables in their environment), from 2 to 8 of them,
//! and checks every failure the module promises, a rank killed mid-exchange among them: the others end
//! with an error within the timeout, none hangs.
use hip::bootstrap::{Launch, Rendezvous};
use std::io::Read;
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[path = "../hip/src/bootstrap/test_port.rs"]
mod test_port;
use test_port::free_port;

/// Set in a child: it is a rank.
const CHILD: &str = "HIP_RS_BOOTSTRAP_CHILD";
/// Where a child marks (a file named by its rank) that it is about to exchange: rank 0 listens.
const READY_DIR: &str = "HIP_RS_TEST_READY_DIR";

/// A rank's part: read the environment, exchange, print the blob or the error (exit status 3).
#[test]
fn rank_in_child() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let ms = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let timeout = Duration::from_millis(ms("HIP_RS_TEST_TIMEOUT_MS", 20_000));
    let delay = Duration::from_millis(ms("HIP_RS_TEST_MAKE_DELAY_MS", 0));
    let rounds = ms("HIP_RS_TEST_ROUNDS", 1);
    let result = (|| {
        let launch = Launch::from_env()?;
        let mut got = Vec::new();
        // A fresh rendezvous and key per round, as one communicator after another would have.
        for round in 0..rounds {
            let rv = Rendezvous::new(&launch, timeout)?;
            let key = rv.next_key("test");
            if round == 0 {
                // Rank 0 listens now; another rank connects right after this.
                if let Some(dir) = std::env::var_os(READY_DIR) {
                    let mark = std::path::Path::new(&dir).join(launch.rank().to_string());
                    std::fs::write(mark, b"").expect("the ready mark");
                }
            }
            got = rv.broadcast(&key, || {
                std::thread::sleep(delay);
                Ok(format!("blob {round} of rank 0 pid {}", std::process::id()).into_bytes())
            })?;
        }
        Ok::<_, hip::Error>(got)
    })();
    match result {
        // On a line of its own: libtest has printed "test rank_in_child ... " without a newline.
        Ok(b) => println!("\nGOT {}", String::from_utf8_lossy(&b)),
        Err(e) => {
            println!("\nERROR {e}");
            std::process::exit(3);
        }
    }
}

/// Extra variables for one rank.
type Vars<'a> = &'a [(&'a str, &'a str)];

/// Start one rank with these variables (on top of the child marker).
fn spawn(vars: &[(&str, String)]) -> Child {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args([
        "--exact",
        "rank_in_child",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(CHILD, "1")
    .env_remove("RANK")
    .env_remove("WORLD_SIZE")
    .env_remove("SLURM_PROCID")
    .env_remove("OMPI_COMM_WORLD_RANK")
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    for (k, v) in vars {
        c.env(k, v);
    }
    c.spawn().unwrap()
}

/// torchrun's variables for `rank` of `world` at 127.0.0.1:`port`, plus `extra`.
fn rank(rank: usize, world: usize, port: u16, extra: &[(&str, &str)]) -> Child {
    let mut v = vec![
        ("RANK", rank.to_string()),
        ("WORLD_SIZE", world.to_string()),
        ("LOCAL_RANK", rank.to_string()),
        ("MASTER_ADDR", "127.0.0.1".to_string()),
        ("MASTER_PORT", port.to_string()),
    ];
    v.extend(extra.iter().map(|(k, x)| (*k, x.to_string())));
    spawn(&v)
}

/// What a rank printed (its GOT or ERROR line) and its exit status, waiting at most `limit` (then it is
/// killed and the test fails: something hung).
fn finish(mut c: Child, limit: Duration) -> (i32, String) {
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(s) = c.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            c.kill().unwrap();
            c.wait().unwrap();
            panic!("a rank still ran after {limit:?}: it hung");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut out = String::new();
    c.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    let mut err = String::new();
    c.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    let line = out
        .lines()
        .find(|l| l.starts_with("GOT ") || l.starts_with("ERROR "))
        .unwrap_or_else(|| panic!("no result line; stdout:\n{out}\nstderr:\n{err}"))
        .to_string();
    (status.code().unwrap_or(-1), line)
}

#[test]
fn two_to_eight_processes_get_rank_0s_blob() {
    for world in [2, 5, 8] {
        let port = free_port();
        // Rank 0 last: the others wait for it to come up.
        let children: Vec<_> = (0..world)
            .rev()
            .map(|r| rank(r, world, port, &[]))
            .collect();
        let lines: Vec<_> = children
            .into_iter()
            .map(|c| finish(c, Duration::from_secs(60)))
            .collect();
        for (code, line) in &lines {
            assert_eq!(*code, 0, "{line}");
            assert_eq!(line, &lines[0].1);
            assert!(line.starts_with("GOT blob 0 of rank 0"), "{line}");
        }
    }
}

#[test]
fn communicators_one_after_another_on_one_port() {
    let port = free_port();
    let children: Vec<_> = (0..4)
        .map(|r| rank(r, 4, port, &[("HIP_RS_TEST_ROUNDS", "6")]))
        .collect();
    for c in children {
        let (code, line) = finish(c, Duration::from_secs(60));
        assert_eq!(code, 0, "{line}");
        assert!(line.starts_with("GOT blob 5 of rank 0"), "{line}");
    }
}

/// A fresh directory for the children's ready marks.
fn ready_dir() -> std::path::PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("hip-rs-bootstrap-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Start `rank` and wait (up to 30 s) until it is about to exchange (rank 0: listening) or has ended, so
/// that ranks started one after another meet however slowly the machine starts processes.
fn rank_ready(dir: &std::path::Path, r: usize, world: usize, port: u16, extra: Vars) -> Child {
    let _ = std::fs::remove_file(dir.join(r.to_string()));
    let dir_str = dir.to_str().unwrap().to_string();
    let mut vars = extra.to_vec();
    vars.push((READY_DIR, &dir_str));
    let mut c = rank(r, world, port, &vars);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !dir.join(r.to_string()).exists() {
        // Ended before its exchange (a port in use): the caller reads why.
        if c.try_wait().unwrap().is_some() {
            return c;
        }
        assert!(Instant::now() < deadline, "rank {r} did not start in 30 s");
        std::thread::sleep(Duration::from_millis(5));
    }
    c
}

/// Start `ranks` (rank, world, extra variables) on one port, each once the one before is ready, wait
/// for all, check each failed with a message holding `want`, within `limit`.
fn expect_failure(ranks: &[(usize, usize, Vars)], port: u16, want: &str, limit: Duration) {
    let t0 = Instant::now();
    let dir = ready_dir();
    let children: Vec<_> = ranks
        .iter()
        .map(|&(r, w, extra)| rank_ready(&dir, r, w, port, extra))
        .collect();
    for c in children {
        let (code, line) = finish(c, limit);
        assert_eq!(code, 3, "{line}");
        assert!(line.contains(want), "want {want:?}: {line}");
    }
    let _ = std::fs::remove_dir_all(dir);
    println!("{want}: {:?}", t0.elapsed());
}

#[test]
fn every_failure_between_processes() {
    let short: Vars = &[("HIP_RS_TEST_TIMEOUT_MS", "1500")];
    // Rank 0 waits longer than the short-lived ranks started after it: they meet it before it gives up.
    let longer: Vars = &[("HIP_RS_TEST_TIMEOUT_MS", "3000")];
    let limit = Duration::from_secs(30);
    // A rank that never arrives: rank 0 names it, rank 1 times out too.
    expect_failure(
        &[(0, 3, longer), (1, 3, short)],
        free_port(),
        "timed out",
        limit,
    );
    let t0 = Instant::now();
    let c = rank(0, 3, free_port(), short);
    let (_, line) = finish(c, limit);
    assert!(line.contains("did not arrive or confirm: [1, 2]"), "{line}");
    assert!(t0.elapsed() < Duration::from_secs(10));
    // World-size mismatch, duplicate rank.
    expect_failure(
        &[(0, 3, &[]), (1, 3, &[]), (2, 4, &[])],
        free_port(),
        "says the world has 4 ranks",
        limit,
    );
    // Rank 0 stays until every rank has been told or the timeout: rank 2 does not exist here.
    expect_failure(
        &[(0, 3, longer), (1, 3, short), (1, 3, short)],
        free_port(),
        "rank 1 arrived twice",
        limit,
    );
    // Port in use: rank 0 fails at once.
    let held = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port();
    expect_failure(
        &[(0, 2, &[])],
        port,
        "cannot listen on the port",
        Duration::from_secs(10),
    );
    drop(held);
    // Nothing listens: unreachable, after the timeout.
    expect_failure(&[(1, 2, short)], free_port(), "cannot be reached", limit);
    let c = spawn(&[
        ("RANK", "1".into()),
        ("WORLD_SIZE", "2".into()),
        ("MASTER_ADDR", "no-such-host.invalid".into()),
        ("MASTER_PORT", "1".into()),
    ]);
    let (code, line) = finish(c, limit);
    assert_eq!(code, 3);
    assert!(line.contains("cannot resolve"), "{line}");
}

/// Time for a rank that marked itself ready to connect to rank 0 (microseconds when it gets to run).
const CONNECT_MARGIN: Duration = Duration::from_millis(500);

#[test]
fn a_rank_killed_mid_exchange_fails_the_others_within_the_timeout() {
    // Rank 0 takes 3 s to make the blob; rank 2 is killed while it waits for it. Timeout 20 s: the
    // others must end long before.
    let port = free_port();
    let slow: Vars = &[("HIP_RS_TEST_MAKE_DELAY_MS", "3000")];
    let dir = ready_dir();
    let mut children: Vec<_> = (0..4).map(|r| rank_ready(&dir, r, 4, port, slow)).collect();
    std::thread::sleep(CONNECT_MARGIN);
    let mut victim = children.remove(2);
    victim.kill().unwrap();
    victim.wait().unwrap();
    let killed = Instant::now();
    for c in children {
        let (code, line) = finish(c, Duration::from_secs(30));
        assert_eq!(code, 3, "{line}");
        assert!(line.contains("rank 2 was lost mid-exchange"), "{line}");
    }
    // At most the rest of the 3 s blob, not the 20 s timeout.
    assert!(
        killed.elapsed() < Duration::from_secs(10),
        "{:?}",
        killed.elapsed()
    );

    // Rank 0 killed while the others wait: they fail within their timeout (3 s).
    let port = free_port();
    let slow: Vars = &[
        ("HIP_RS_TEST_MAKE_DELAY_MS", "60000"),
        ("HIP_RS_TEST_TIMEOUT_MS", "3000"),
    ];
    let t0 = Instant::now();
    let mut children: Vec<_> = (0..3).map(|r| rank_ready(&dir, r, 3, port, slow)).collect();
    std::thread::sleep(CONNECT_MARGIN);
    let mut victim = children.remove(0);
    victim.kill().unwrap();
    victim.wait().unwrap();
    for c in children {
        let (code, line) = finish(c, Duration::from_secs(30));
        assert_eq!(code, 3, "{line}");
        assert!(line.contains("rank 0 was lost"), "{line}");
    }
    // Their own 3 s timeouts, not rank 0's 60 s blob.
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    let _ = std::fs::remove_dir_all(dir);
}
