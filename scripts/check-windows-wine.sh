#!/usr/bin/env bash
# The Windows build, run for real under Wine (run by .ci/run). No Windows machine and no Windows GPU
# exist here: what runs is the crates' x86_64-pc-windows-gnu build (mingw-w64) with `dynamic-loading`,
# under Debian's Wine, against no HIP at all and against a stub amdhip64 DLL built here.
#
#  0. installs what it needs where missing: rustup's x86_64-pc-windows-gnu target, mingw-w64's C
#     compiler (the linker) and Wine (Debian: gcc-mingw-w64-x86-64, wine64);
#  1. cross-builds two examples, device_query and loader_report (target/windows), and checks that the
#     rest of the workspace compiles for Windows without a clippy warning (all targets; not the Linux-only
#     benchmark programs);
#  2. runs the unit tests of hip-sys, hiprtc-sys and hip (the Windows build of them) under Wine;
#  3. no HIP DLL: both examples exit with the crate's error, which names every file tried, in order: the
#     override variables (HIP_RS_AMDHIP64, HIP_RS_HIPRTC), each DLL name under HIP_PATH\bin and
#     ROCM_PATH\bin, then each name through Windows' search path; HIPRTC last inside the runtime;
#  4. a stub amdhip64_6.dll under HIP_PATH\bin (tests/windows/stub_amdhip64.c, plus one export for every
#     other symbol of the loader's own tables, listed by `loader_report --names`): every symbol of both
#     tables resolves through GetProcAddress, the crate's calls reach the stub (its stderr lines), and
#     hipGetDeviceCount's hipErrorNoDevice (100) comes back as the crate's no-device error.
# Any step that cannot run fails the script: a missing Wine is a failure, never a skip.
set -euo pipefail
cd "$(dirname "$0")/.."
triple=x86_64-pc-windows-gnu
# Wine's prefix, the programs' folder and the stub live here; cargo's output goes to HIP_RS_WINDOWS_TARGET_DIR
# where set: .ci/run points it at target/dynamic, whose host-side build scripts (bindgen's) are then reused.
t=target/windows
ct=${HIP_RS_WINDOWS_TARGET_DIR:-$t}
cc=x86_64-w64-mingw32-gcc
sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
t0=$SECONDS
step() { echo "== $1 (at $((SECONDS - t0)) s)"; }

step "0. prerequisites"
rustup target list --installed | grep -qx "$triple" || rustup target add "$triple"
find_wine() {
    # Debian bookworm's wine64 package puts the 64-bit loader in /usr/lib/wine (the `wine` wrapper wants
    # the 32-bit half too); newer Wines have one `wine` for both.
    for w in wine64 /usr/lib/wine/wine64 wine; do
        if command -v "$w" >/dev/null; then command -v "$w"; return; fi
    done
}
missing=()
command -v "$cc" >/dev/null || missing+=(gcc-mingw-w64-x86-64)
[ -n "$(find_wine)" ] || missing+=(wine64)
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
wine=$(find_wine)
[ -n "$wine" ] || { echo "check-windows-wine: no Wine found after installing wine64" >&2; exit 1; }
command -v "$cc" >/dev/null || { echo "check-windows-wine: $cc not found after installing" >&2; exit 1; }
echo "$("$wine" --version), $($cc --version | head -1)"

step "1. cross-build for $triple (dynamic-loading)"
cargo build -q --target "$triple" --features dynamic-loading --example device_query --example loader_report \
    --target-dir "$ct"
# The rest of the workspace (libraries, tests, examples) must keep compiling for Windows, lint-free. Not
# hip-rs-bench: the benchmark programs are Linux tools (perf_event_open, dlopen of the C++ baselines).
cargo clippy -q --target "$triple" --features dynamic-loading --workspace --exclude hip-rs-bench --all-targets \
    --target-dir "$ct" -- -D warnings
run=$t/run
rm -rf "$run" && mkdir -p "$run"
cp "$ct/$triple/debug/examples/device_query.exe" "$ct/$triple/debug/examples/loader_report.exe" "$run/"

export WINEPREFIX=$PWD/$t/wineprefix WINEARCH=win64 WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
if [ ! -f "$WINEPREFIX/system.reg" ]; then
    echo "creating the Wine prefix $WINEPREFIX"
    "$wine" wineboot --init >/dev/null 2>&1 || true
fi
"$(dirname "$wine")/wineserver" -w 2>/dev/null || wineserver -w 2>/dev/null || true
[ -f "$WINEPREFIX/system.reg" ] || { echo "check-windows-wine: Wine could not create its prefix" >&2; exit 1; }
# Rust's std (1.78+) imports ProcessPrng from bcryptprimitives.dll, which Wine 8 (bookworm) lacks: a
# program would not start. Where the prefix has none, one built from tests/windows/bcryptprimitives.c
# goes beside the programs (Windows loads a DLL from the program's folder first).
if [ ! -e "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" ]; then
    echo "this Wine has no bcryptprimitives.dll: ProcessPrng from tests/windows/bcryptprimitives.c beside the programs"
    $cc -O2 -Wall -Werror -shared -o "$run/bcryptprimitives.dll" tests/windows/bcryptprimitives.c -ladvapi32
fi
wrun() { "$wine" "$@" 2>&1 | tr -d '\r'; }
winpath() { echo "Z:$(realpath "$1" | tr / '\\')"; }

# The files the loader must try, in order, as its error lists them (the paths before ": LoadLibraryExW").
tried_list() {
    python3 -c '
import re, sys
text, library = sys.stdin.read(), sys.argv[1]
m = re.search(re.escape(library) + r" could not be loaded; tried: (.*?); install it", text)
if not m:
    sys.exit("no \"" + library + " could not be loaded; tried: ...\" in:\n" + text)
for entry in m.group(1).split("; "):
    print(entry.split(": LoadLibraryExW failed")[0].split(": no hiprtcCreateProgram")[0])
' "$1"
}
expect_same() { # name, expected (lines), actual (lines)
    if [ "$2" != "$3" ]; then
        echo "check-windows-wine: $1: the files tried differ from the documented order" >&2
        diff <(echo "$2") <(echo "$3") >&2 || true
        exit 1
    fi
    echo "$1: $(echo "$3" | wc -l) files tried, in the documented order"
}

step "2. the unit tests of hip-sys, hiprtc-sys and hip, under Wine (no HIP DLL: they need none)"
tests=$(cargo test -q --target "$triple" --features dynamic-loading -p hiprs-sys -p hiprs-rtc-sys -p hiprs --lib --no-run \
    --target-dir "$ct" --message-format=json | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable"):
        print(m["target"]["name"], m["executable"])')
[ "$(echo "$tests" | wc -l)" -eq 3 ] || { echo "$tests" >&2; echo "check-windows-wine: expected 3 unit-test programs" >&2; exit 1; }
while read -r name exe; do
    cp "$exe" "$run/unit_$name.exe"
    log=$("$wine" "$run/unit_$name.exe" -q 2>&1 | tr -d '\r') || { echo "$log" >&2; echo "check-windows-wine: $name's unit tests failed under Wine" >&2; exit 1; }
    echo "$name: $(echo "$log" | grep '^test result')"
done <<<"$tests"

step "3. no HIP DLL: the crate's error names every file tried"
hip_names=(amdhip64_7.dll amdhip64_6.dll amdhip64.dll)
rtc_names=()
for major in 07 06 05; do for minor in 09 08 07 06 05 04 03 02 01 00; do rtc_names+=("hiprtc$major$minor.dll"); done; done
roots=('C:\hip sdk' 'C:\rocm')
in_roots() { for r in "${roots[@]}"; do for n in "$@"; do echo "$r\\bin\\$n"; done; done; }
expected_hip=$(echo 'C:\override\my_amdhip64.dll'; in_roots "${hip_names[@]}"; printf '%s\n' "${hip_names[@]}")
expected_rtc=$(echo 'C:\override\my_hiprtc.dll'; in_roots "${rtc_names[@]}"; printf '%s\n' "${rtc_names[@]}";
    echo "inside the HIP runtime: no HIP runtime could be opened")
for ex in device_query loader_report; do
    set +e
    out=$(HIP_PATH="${roots[0]}" ROCM_PATH="${roots[1]}" HIP_RS_AMDHIP64='C:\override\my_amdhip64.dll' \
        HIP_RS_HIPRTC='C:\override\my_hiprtc.dll' wrun "$run/$ex.exe")
    rc=$?
    set -e
    echo "$ex.exe (exit $rc): $(echo "$out" | grep -m1 'could not be loaded' | cut -c1-240)..."
    [ "$rc" -eq 1 ] || { echo "$out" >&2; echo "check-windows-wine: $ex.exe exited $rc without HIP, not 1" >&2; exit 1; }
    echo "$out" | grep -q "HIP SDK for Windows" || { echo "$out" >&2; echo "no Windows install advice" >&2; exit 1; }
    echo "$out" | grep -q "status backend_not_available (501)" || { echo "$out" >&2; exit 1; }
    expect_same "$ex.exe, the HIP runtime" "$expected_hip" "$(echo "$out" | tried_list "the HIP runtime (amdhip64_N.dll)")"
done
# HIPRTC's list: loader_report prints HIPRTC's error before the runtime's.
expect_same "loader_report.exe, HIPRTC" "$expected_rtc" "$(echo "$out" | tried_list "HIPRTC (hiprtcMMmm.dll, or amdhip64 on ROCm 5)")"

step "4. a stub amdhip64_6.dll in HIP_PATH\\bin: every symbol through GetProcAddress, calls reach it"
stub=$t/stub
rm -rf "$stub" && mkdir -p "$stub/sdk/bin"
names=$(wrun "$run/loader_report.exe" --names)
n_hip=$(echo "$names" | grep -c '^hip ')
n_rtc=$(echo "$names" | grep -c '^hiprtc ')
[ "$n_hip" -gt 100 ] && [ "$n_rtc" -gt 5 ] || { echo "$names" >&2; echo "check-windows-wine: implausible tables" >&2; exit 1; }
$cc -O2 -Wall -Werror -c tests/windows/stub_amdhip64.c -o "$stub/stub_amdhip64.o"
written=$(x86_64-w64-mingw32-nm --defined-only -g "$stub/stub_amdhip64.o" | awk '$2 == "T" { print $3 }')
{
    echo "/* Generated by scripts/check-windows-wine.sh from loader_report --names: every other symbol. */"
    echo "int hip_rs_stub_unexpected(const char *name);"
    echo "$names" | awk '{ print $2 }' | sort -u | grep -vxF "$written" |
        awk '{ printf "__declspec(dllexport) int %s(void) { return hip_rs_stub_unexpected(\"%s\"); }\n", $1, $1 }'
} >"$stub/generated_exports.c"
$cc -O2 -Wall -Werror -shared -o "$stub/sdk/bin/amdhip64_6.dll" "$stub/stub_amdhip64.o" "$stub/generated_exports.c"
dll=$(winpath "$stub/sdk/bin/amdhip64_6.dll")
echo "stub: $(echo "$written" | wc -l) functions written by hand, $(grep -c dllexport "$stub/generated_exports.c") generated; tables: $n_hip HIP, $n_rtc HIPRTC symbols"

set +e
sdk=$(winpath "$stub/sdk")
# Only HIP_PATH: the stub is found as HIP_PATH\bin\amdhip64_6.dll, after amdhip64_7.dll is not there.
unset ROCM_PATH HIP_RS_AMDHIP64 HIP_RS_HIPRTC
out=$(HIP_PATH="$sdk" wrun "$run/loader_report.exe")
rc=$?
set -e
echo "$out" | sed 's/^/    /'
fail() { echo "check-windows-wine: $1" >&2; exit 1; }
[ "$rc" -eq 0 ] || fail "loader_report.exe against the stub exited $rc"
for line in \
    "HIP runtime opened from $dll" \
    "HIP runtime: $n_hip of $n_hip symbols resolved through GetProcAddress" \
    "HIPRTC opened from $dll" \
    "HIPRTC: $n_rtc of $n_rtc symbols resolved through GetProcAddress" \
    "HIPRTC version: 5.2" \
    "stub_amdhip64: hipRuntimeGetVersion -> 50221153" \
    "stub_amdhip64: hipDriverGetVersion -> 50221153" \
    "stub_amdhip64: hiprtcVersion -> 5.2" \
    "stub_amdhip64: hipGetDeviceCount -> 0 devices, hipErrorNoDevice (100)"; do
    echo "$out" | grep -qxF "$line" || fail "missing: $line"
done
echo "$out" | grep -qF "Device::first_usable: no HIP device was found (hipErrorNoDevice (100))" || fail "Device::first_usable did not report no device"
echo "$out" | grep -q "^Device::count(): Err(no HIP device was found (hipErrorNoDevice (100)).*) \[no device: true, status BackendNotAvailable\]$" ||
    fail "Device::count() did not give the crate's no-device error"
echo "$out" | grep "^Device::count()" | grep -q "Windows driver (Adrenalin or PRO edition)" ||
    fail "the no-device advice is not Windows'"
! echo "$out" | grep -q "/dev/kfd" || fail "the no-device advice names Linux's /dev/kfd on Windows"
! echo "$out" | grep -q "unexpected call" || fail "the crate called a function the stub does not answer"

out=$(HIP_PATH="$sdk" wrun "$run/device_query.exe") ||
    { echo "$out" >&2; fail "device_query.exe against the stub failed"; }
echo "$out" | grep -q "^runtime version: " && echo "$out" | grep -q "stub_amdhip64: hipGetDeviceCount" ||
    { echo "$out" >&2; fail "device_query.exe did not reach the stub"; }
echo "device_query.exe against the stub: exit 0, $(echo "$out" | grep -vc '^stub_amdhip64') lines, no device reported"
echo "Windows build under $("$wine" --version): no HIP DLL -> LibraryNotFound naming every file; stub -> every symbol resolved, no device"
echo "check-windows-wine: $((SECONDS - t0)) s"
