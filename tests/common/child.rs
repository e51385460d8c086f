//! Running one test of this test binary in a child process: for what would poison or end the parent
//! (a device fault, a process exit with GPU work pending).
use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// What a child run of a test left: its exit status (`None`: still running at the time limit, then
/// killed), its standard output and its standard error.
pub struct ChildRun {
    pub status: Option<ExitStatus>,
    pub stdout: String,
    pub stderr: String,
}

/// Run the test `name` of this binary alone in a child process with the environment variable `marker`
/// set to 1 (the test does its child's part when it sees it), for at most `limit`. Prints what the child
/// wrote.
pub fn run_test_in_child(name: &str, marker: &str, limit: Duration) -> ChildRun {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(marker, "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let read = |r: Option<&mut dyn Read>| {
        let mut s = String::new();
        if let Some(r) = r {
            r.read_to_string(&mut s).unwrap();
        }
        s
    };
    let stdout = read(child.stdout.as_mut().map(|r| r as &mut dyn Read));
    let stderr = read(child.stderr.as_mut().map(|r| r as &mut dyn Read));
    println!("child stdout:\n{stdout}\nchild stderr:\n{stderr}");
    ChildRun {
        status,
        stdout,
        stderr,
    }
}

/// Bytes as lowercase hex digits, for handing a handle to another process on a line of text.
pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The bytes of `hex`'s digits (a test's own line: a malformed one panics).
pub fn unhex(s: &str) -> Vec<u8> {
    assert_eq!(s.len() & 1, 0, "an odd number of hex digits: {s:?}");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}
