#!/usr/bin/env bash
# The one way to get a Debian suite's HIP in a chroot, and to run a command of this project inside it.
#
#   scripts/distro-chroot.sh SUITE prepare          build the chroot and install its HIP (idempotent)
#   scripts/distro-chroot.sh SUITE run CMD [ARG...]  prepare if needed, then run CMD in the project, inside
#   scripts/distro-chroot.sh SUITE path             print the chroot's directory
#
# SUITE: bookworm (HIP 5.2.3), trixie (5.7.1), sid (6.4.3), experimental (7.2.4: sid, with only the ROCm
# packages taken from experimental through apt pinning).
#
# The chroot is a debootstrap `minbase` of the suite plus a C toolchain; HIP is installed by the project's
# own scripts/install-prereqs.sh, run inside, so that script is tested on every suite. The machine's Rust
# toolchain (rustup's ~/.rustup and ~/.cargo) and the project directory are bind-mounted at the same paths,
# and cargo builds into target/chroot-SUITE so suites never share build outputs.
#
# Every mount lives in a private mount namespace (unshare -m) that ends with the command: nothing stays
# mounted after an exit, a failure or a kill. The package mirror is read from this machine's own apt
# configuration, never written here.
#
# Variables: HIP_RS_CHROOTS (where chroots live; default /var/tmp/hip-rs-chroots).
set -euo pipefail

usage() { sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 2 ] || usage
suite=$1 verb=$2
shift 2
case $suite in
    bookworm | trixie | sid | experimental) ;;
    *) echo "distro-chroot: unknown suite '$suite' (bookworm, trixie, sid, experimental)" >&2; exit 2 ;;
esac
[ "$(id -u)" -eq 0 ] || { echo "distro-chroot: needs root (debootstrap, chroot, mounts)" >&2; exit 1; }

project=$(cd "$(dirname "$0")/.." && pwd)
root_dir=${HIP_RS_CHROOTS:-/var/tmp/hip-rs-chroots}
dir=$root_dir/$suite
# Bump when the preparation below changes, so existing chroots are rebuilt.
recipe=4
stamp=$dir/.hip-rs-ready

# The Debian mirror of this machine: the URIs: line of a deb822 .sources file, else a sources.list line.
mirror() {
    local m
    m=$(grep -h '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' |
        grep -v -- '-security' | head -1 || true)
    if [ -z "$m" ]; then
        m=$(grep -hE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
            grep -v -- '-security' | sed -E 's/^deb (\[[^]]*\] )?//' | awk '{print $1}' | head -1 || true)
    fi
    [ -n "$m" ] || { echo "distro-chroot: no Debian mirror in this machine's apt configuration" >&2; exit 1; }
    echo "${m%/}"
}

# Run "$@" with the chroot's pseudo file systems mounted, in a private mount namespace.
in_chroot() {
    # CI's disk-saving cargo settings (.ci/run) reach the builds inside too.
    export HIP_RS_CHROOT_ENV CI CARGO_INCREMENTAL CARGO_PROFILE_DEV_DEBUG
    unshare -m --propagation private bash -s "$dir" "$project" "$@" <<'EOF'
set -euo pipefail
dir=$1 project=$2; shift 2
mount -t proc proc "$dir/proc"
mount --rbind /sys "$dir/sys"
mount --rbind /dev "$dir/dev"
for d in "$project" "$HOME/.rustup" "$HOME/.cargo"; do
    [ -d "$d" ] || continue
    mkdir -p "$dir$d"
    mount --bind "$d" "$dir$d"
done
cp -L /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
exec chroot "$dir" /usr/bin/env -i HOME="$HOME" TERM=dumb LANG=C.UTF-8 \
    PATH="$HOME/.cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    RUSTUP_HOME="$HOME/.rustup" CARGO_HOME="$HOME/.cargo" CI="${CI:-}" \
    ${CARGO_INCREMENTAL:+CARGO_INCREMENTAL=$CARGO_INCREMENTAL} \
    ${CARGO_PROFILE_DEV_DEBUG:+CARGO_PROFILE_DEV_DEBUG=$CARGO_PROFILE_DEV_DEBUG} \
    ${HIP_RS_CHROOT_ENV:-} "$@"
EOF
}

prepare() {
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$recipe" ]; then
        return
    fi
    if ! command -v debootstrap >/dev/null; then
        echo "distro-chroot: installing debootstrap"
        # apt takes its own lock; several suites prepared at once wait for each other here.
        flock "$root_dir.apt.lock" sh -c 'command -v debootstrap >/dev/null ||
            { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; }' ||
            { echo "distro-chroot: could not install debootstrap" >&2; exit 1; }
    fi
    local m base=$suite
    m=$(mirror)
    [ "$suite" = experimental ] && base=sid
    echo "distro-chroot: bootstrapping $suite into $dir"
    rm -rf "$dir"
    debootstrap --variant=minbase --include=ca-certificates,gcc,g++,libc6-dev,make,git,python3 \
        "$base" "$dir" "$m" >"$root_dir/$suite-debootstrap.log" 2>&1 ||
        { tail -20 "$root_dir/$suite-debootstrap.log" >&2; exit 1; }
    # sid's Release file can be past its Valid-Until date. Downloaded packages are deleted once installed,
    # as Debian's container images do: kept, they were 0.8 to 1.7 GB per suite beside the ROCm they hold.
    cat >"$dir/etc/apt/apt.conf.d/99hip-rs" <<'APT'
Acquire::Check-Valid-Until "false";
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb || true"; };
APT
    in_chroot apt-get clean # debootstrap's own packages
    echo "deb $m $base main" >"$dir/etc/apt/sources.list"
    if [ "$suite" = experimental ]; then
        echo "deb $m experimental main" >>"$dir/etc/apt/sources.list"
        # Only ROCm's own packages come from experimental; everything else stays sid's.
        cat >"$dir/etc/apt/preferences.d/rocm-experimental" <<'PIN'
Package: /^(libamdhip64|libhiprtc|hipcc|hip-|rocm|librocm|libamd-comgr|libhsa|librccl|rccl|libhip|librocprofiler|rocminfo|libroc)/
Pin: release a=experimental
Pin-Priority: 990
PIN
    fi
    in_chroot apt-get update -qq
    in_chroot "$project/scripts/install-prereqs.sh"
    echo "$recipe" >"$stamp"
    echo "distro-chroot: $suite ready ($(du -sh "$dir" 2>/dev/null | cut -f1))"
}

case $verb in
    path) echo "$dir" ;;
    prepare) mkdir -p "$root_dir"; exec 9>"$root_dir.$suite.lock"; flock 9; prepare ;;
    run)
        [ $# -ge 1 ] || usage
        mkdir -p "$root_dir"; exec 9>"$root_dir.$suite.lock"; flock 9; prepare; flock -u 9
        HIP_RS_CHROOT_ENV="CARGO_TARGET_DIR=$project/target/chroot-$suite ${HIP_RS_CHROOT_ENV:-}" \
            in_chroot /bin/sh -c 'cd "$0" && exec "$@"' "$project" "$@"
        ;;
    *) usage ;;
esac
