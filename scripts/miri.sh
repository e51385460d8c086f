#!/usr/bin/env bash
# Miri over the hip crate's pure unit tests: the code-object, PTX and metadata parsers, the bitcode target
# reader, the compile cache's key and entry encoding, module image checks and launch-configuration checks.
# Tests that call HIP or HIPRTC cannot run under Miri (foreign functions), so they are left out by name;
# tests over megabyte inputs are #[cfg_attr(miri, ignore)] in the source (they would take hours here).
#
# Needs a nightly toolchain with Miri: rustup component add --toolchain nightly miri rust-src
# Usage: scripts/miri.sh [extra test-name filters...]
set -euo pipefail
cd "$(dirname "$0")/.."
if ! cargo +nightly miri --version >/dev/null 2>&1; then
    rustup component add --toolchain nightly miri rust-src >/dev/null 2>&1 || true
fi
if ! cargo +nightly miri --version >/dev/null 2>&1; then
    echo "miri: no Miri for the nightly toolchain and 'rustup component add --toolchain nightly miri rust-src' failed" >&2
    exit 1
fi
# Strict provenance: none of these tests turns an integer into a pointer.
export MIRIFLAGS="${MIRIFLAGS:--Zmiri-strict-provenance}"
# memory::ops: fill values read as bits (unaligned reads of 1-, 2-, 4-byte types); memory::tracking: the
# memory model's bookkeeping; memory::host_lease: the host borrows graph launches check (threads);
# memory::copy_threads: the staging ring's copy threads (raw pointers handed between threads, an atomic latch);
# stream::tests: a stream's gate and queued label in one word (threads waiting for it, operations inside others).
filters=(code_object:: rtc::bitcode:: rtc::cache:: rtc::result:: module::tests launch::tests
    memory::ops::tests memory::tracking::tests memory::host_lease::tests memory::copy_threads::tests
    future::tests stream::tests "$@")
# The cache hash's spread test hashes thousands of inputs (80 s under Miri) through safe code only.
# future::tests: the waking contract and the release of a dropped future's memory (two tests turn an
# error status into an Error, which asks the HIP runtime for its message: FFI, not under Miri; four hand
# a dropped future's payload to the process-wide releasing thread, which never ends, and Miri refuses to
# exit while a thread runs). memory::ops' prefetch refusal test wraps a null stream of a unit-test device, whose drop asks
# the HIP runtime for the current device: FFI.
cargo +nightly miri test -p hiprs --lib -- "${filters[@]}" \
    --skip rtc::cache::tests::the_hash_spreads_single_changes \
    --skip future::tests::an_error_status_is_the_output_with_its_raw_code \
    --skip future::tests::ten_thousand_fired_from_another_thread_all_complete_on_one_thread \
    --skip future::tests::inside_a_host_function_the_payload_goes_to_the_releasing_thread \
    --skip future::tests::a_dropped_future_keeps_its_payload_until_the_work_is_done \
    --skip future::tests::a_dropped_future_settles_its_work_before_releasing_it_and_only_on_success \
    --skip future::tests::the_waiting_thread_never_waits_for_a_dropped_futures_release \
    --skip memory::ops::tests::a_prefetch_to_a_device_on_another_devices_stream_is_refused_first
