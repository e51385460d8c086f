//! IPC between two processes on one GPU (issue 57, family 2), compiled only with `--features gpu`. The
//! test binary runs itself as the second process (`HIP_RS_IPC_ROLE` selects the child's part); the
//! handles travel as hex lines over the child's stdin and stdout, as any program would send them.
//! - exchange: the parent fills a buffer behind a slow kernel and records an interprocess event; the
//!   child opens both, waits on the event, checks the values, writes new ones, closes its mapping, records
//!   its own interprocess event; the parent waits on that and reads the child's values.
//! - a handle of memory the exporter freed is refused in the child (an error, not a crash);
//! - opening one's own export in the same process is refused by HIP (an error, not a crash).
//!
//! Ported from hip-tests (catch/unit/memory): hipIpcGetMemHandle/hipIpcOpenMemHandle/
//! hipIpcCloseMemHandle (the parent/child exchange of hipIpcMemAccessTest), hipIpcEventHandle (an event
//! recorded in one process waited for in another), and their negative cases (a freed allocation, the
//! exporting process itself, bytes of the wrong length, an event without hipEventInterprocess, pool memory).
#![cfg(feature = "gpu")]
mod common;

use common::device;
use common::slow::Slow;
use hip::ipc::{ForeignEvent, IpcEventHandle, IpcMemHandle};
use hip::memory::ForeignBuffer;
use hip::prelude::*;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const N: usize = 1 << 20;
const ROLE: &str = "HIP_RS_IPC_ROLE";

use common::child::{hex, unhex};

/// The child process running `child_role`, its stdin piped, its stdout lines and stderr text read by
/// threads so the parent never blocks on them without a time limit.
struct Peer {
    child: Child,
    to: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
}

impl Peer {
    fn spawn(role: &str) -> Peer {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "child_role",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(ROLE, role)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, lines) = channel();
        let out = BufReader::new(child.stdout.take().unwrap());
        std::thread::spawn(move || {
            for line in out.lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let (mut err, sink) = (child.stderr.take().unwrap(), stderr.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = std::io::Read::read(&mut err, &mut buf) {
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let to = child.stdin.take();
        Peer {
            child,
            to,
            lines,
            stderr,
        }
    }

    fn send(&mut self, line: &str) {
        let to = self.to.as_mut().expect("the child's stdin is open");
        writeln!(to, "{line}").unwrap();
        to.flush().unwrap();
    }

    /// What follows `key ` on the next line holding it, within a minute; otherwise the test fails
    /// with what the child wrote to stderr and how it ended.
    fn expect(&mut self, key: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    // The test harness starts the child's first line (`test child_role ... `), so
                    // the key may follow other text on its line.
                    let tag = format!("{key} ");
                    if let Some(at) = line.find(&tag) {
                        return line[at + tag.len()..].to_string();
                    }
                }
                Err(e) => {
                    let status = self.child.try_wait().unwrap();
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    std::thread::sleep(Duration::from_millis(100));
                    panic!(
                        "no `{key}` from the child ({e:?}; exit status {status:?}); its stderr:\n{}",
                        self.stderr.lock().unwrap()
                    );
                }
            }
        }
    }

    /// Closes the child's stdin and waits at most a minute for it to exit successfully.
    fn finish(mut self) -> String {
        drop(self.to.take());
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break Some(status);
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        // The reader thread ends at the pipe's end, which the child's exit brings.
        let mut rest = Vec::new();
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            rest.push(line);
        }
        let stderr = self.stderr.lock().unwrap().clone();
        assert!(
            status.is_some_and(|s| s.success()),
            "the child ended with {status:?}; its stderr:\n{stderr}"
        );
        rest.join("\n")
    }
}

/// The parent's part of a test, failed (not hung) when it takes more than two minutes: a GPU wait on an
/// interprocess event the child never recorded would otherwise block for good.
fn within_2min(f: impl FnOnce() + Send + 'static) {
    let (tx, rx) = channel();
    let worker = std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(()) => worker.join().unwrap(),
        Err(RecvTimeoutError::Disconnected) => {
            std::panic::resume_unwind(worker.join().unwrap_err())
        }
        Err(RecvTimeoutError::Timeout) => panic!("the parent's part did not finish in two minutes"),
    }
}

/// The next line of stdin starting with `key ` (the whole line when it is just `key`), without the key.
fn expect(input: &mut impl BufRead, key: &str) -> String {
    let mut line = String::new();
    loop {
        line.clear();
        assert_ne!(
            input.read_line(&mut line).unwrap(),
            0,
            "child: stdin ended before `{key}`"
        );
        let line = line.trim_end();
        if line == key {
            return String::new();
        }
        if let Some(rest) = line.strip_prefix(&format!("{key} ")) {
            return rest.to_string();
        }
    }
}

#[test]
#[ignore = "the child's part, run by the tests below in a child process"]
fn child_role() {
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    let step = |s: &str| eprintln!("child: {s}");
    let d = device();
    let mut input = BufReader::new(std::io::stdin());
    let mem = IpcMemHandle::from_bytes(&unhex(&expect(&mut input, "mem"))).unwrap();
    match role.as_str() {
        "exchange" => {
            let ev = IpcEventHandle::from_bytes(&unhex(&expect(&mut input, "event"))).unwrap();
            let b = Stream::non_blocking(&d).unwrap();
            let mut theirs = ForeignBuffer::<f32>::open(&d, &mem, N).unwrap();
            step("opened the buffer");
            let ready = ForeignEvent::open(&d, &ev).unwrap();
            step("opened the event");
            b.wait_event(&ready).unwrap();
            let mut seen = DeviceBuffer::<f32>::zeroed(&d, N).unwrap();
            b.copy_device_async(&theirs, &mut seen).unwrap();
            let wrong = seen.to_vec().unwrap().iter().filter(|&&v| v != 7.0).count();
            println!("wrong {wrong}");
            std::io::stdout().flush().unwrap();
            let nines = DeviceBuffer::from_slice(&d, &vec![9.0f32; N]).unwrap();
            b.copy_device_async(&nines, &mut theirs).unwrap();
            // Closed after the copy (the memory model waits for b), before `done` is recorded.
            drop(theirs);
            step("closed the buffer");
            let done = Event::interprocess(&d).unwrap();
            done.record(&b).unwrap();
            println!("done {}", hex(done.ipc_handle().unwrap().as_bytes()));
            std::io::stdout().flush().unwrap();
            expect(&mut input, "bye"); // `done` lives until the parent opened and used it
            step("bye");
        }
        "freed" => match ForeignBuffer::<f32>::open(&d, &mem, 16) {
            Ok(_) => println!("opened a freed export"),
            Err(e) => println!("refused {e}"),
        },
        other => panic!("unknown role {other}"),
    }
}

#[test]
fn two_processes_share_a_buffer_ordered_by_interprocess_events() {
    within_2min(|| {
        let d = device();
        let slow = Slow::new(&d);
        let a = Stream::non_blocking(&d).unwrap();
        let mut x = DeviceBuffer::<f32>::zeroed(&d, N).unwrap();
        slow.fill(&a, &mut x, 7.0); // about a millisecond before it writes
        let export = x.ipc_handle().unwrap();
        let ready = Event::interprocess(&d).unwrap();
        ready.record(&a).unwrap();
        let mut child = Peer::spawn("exchange");
        child.send(&format!("mem {}", hex(export.handle().as_bytes())));
        child.send(&format!(
            "event {}",
            hex(ready.ipc_handle().unwrap().as_bytes())
        ));
        assert_eq!(child.expect("wrong"), "0", "the child read before the fill");
        let done = IpcEventHandle::from_bytes(&unhex(&child.expect("done"))).unwrap();
        let done = ForeignEvent::open(&d, &done).unwrap();
        a.wait_event(&done).unwrap();
        let mut back = DeviceBuffer::<f32>::zeroed(&d, N).unwrap();
        a.copy_device_async(&x, &mut back).unwrap();
        assert!(back.to_vec().unwrap().iter().all(|&v| v == 9.0));
        child.send("bye");
        child.finish();
        drop(done);
        // The export guard may outlive the buffer; the memory goes with the last of them.
        drop(x);
        drop(export);
    });
}

#[test]
fn a_handle_of_freed_memory_is_refused_in_the_other_process() {
    within_2min(|| {
        let d = device();
        let x = DeviceBuffer::<f32>::zeroed(&d, 1 << 16).unwrap();
        let handle = *x.ipc_handle().unwrap().handle(); // the guard goes at once
        drop(x);
        d.synchronize().unwrap();
        let mut child = Peer::spawn("freed");
        child.send(&format!("mem {}", hex(handle.as_bytes())));
        let all = child.finish();
        println!("{all}");
        assert!(all.contains("refused"), "{all}");
    });
}

#[test]
fn the_exporting_process_cannot_open_its_own_handle_and_other_refusals() {
    let d = device();
    let x = DeviceBuffer::<f32>::zeroed(&d, 256).unwrap();
    let export = x.ipc_handle().unwrap();
    match ForeignBuffer::<f32>::open(&d, export.handle(), 256) {
        Err(e) => println!("own handle refused: {e}"),
        // Some runtimes map one's own export again; then it must be a working, closable mapping.
        Ok(mine) => assert_eq!(mine.to_vec().unwrap(), vec![0.0; 256]),
    }
    let e = Event::new(&d).unwrap().ipc_handle().unwrap_err();
    assert!(e.to_string().contains("hipIpcGetEventHandle"), "{e}");
    let s = Stream::new(&d).unwrap();
    let pooled = DeviceBuffer::<f32>::zeroed_async(&s, 16).unwrap();
    assert!(pooled.ipc_handle().is_err());
    assert!(IpcMemHandle::from_bytes(&[0; 63]).is_err());
    let ready = Event::interprocess(&d).unwrap();
    assert_eq!(
        ready.ipc_handle().unwrap().as_bytes().len(),
        IpcEventHandle::LEN
    );
}
