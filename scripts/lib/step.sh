# Sourced by the CI scripts (ci-suite.sh, ci-nvidia.sh, ci-math.sh): `step NAME COMMAND...` runs COMMAND
# between a line naming it and one with the seconds it took.
step() {
    local name=$1 t0=$SECONDS
    shift
    echo "-- $name"
    "$@"
    echo "-- $name: $((SECONDS - t0)) s"
}
