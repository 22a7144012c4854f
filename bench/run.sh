#!/usr/bin/env bash
# Runs every benchmark program (bench/bench_*.c, built into $BUILD/bench/) one after another.
# Each prints ratios against a reference measured in the same run; none asserts a time.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export HALO_BIN=${HALO_BIN:-bin/halo}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
status=0
for src in bench/bench_*.c; do
    [ -e "$src" ] || continue
    b="$BUILD/bench/$(basename "$src" .c)"
    echo "== $(basename "$b")"
    if ! "$b"; then
        echo "$(basename "$b"): failed"
        status=1
    fi
done
exit $status
