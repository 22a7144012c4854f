#!/usr/bin/env bash
# Runs every test tier and ends with one line "N passed, N failed, N skipped" (a skipped test,
# TAP "ok ... # SKIP", is never counted as passed).
#   unit/  cmocka binaries (TAP output)        build/tests/unit/test_*
#   mpi/   MPI programs under mpirun --timeout  build/tests/mpi/test_*  (runs from "// halo-mpi:" lines)
#   e2e/   shell scripts that drive bin/halo    tests/e2e/*.sh
# Usage: tests/run.sh [gpu] [FILTER]   (FILTER: a substring of the suite name)
# HALO_TEST_GPU=1: a GPU test that skips (no GPU, no CUDA back end) counts as failed, not skipped.
set -u
case "${1:-}" in
-h | --help)
    cat <<'USAGE'
usage: tests/run.sh [gpu] [FILTER]

Runs the test tiers against a built tree (make build first, or use `make test`):
  unit/  cmocka binaries in $BUILD/tests/unit (default BUILD=build)
  mpi/   MPI programs under mpirun --timeout, once per "// halo-mpi: ARGS" line of their source
  e2e/   shell scripts in tests/e2e that drive $HALO_BIN (default bin/halo)
FILTER runs only the suites whose name contains it (e.g. tests/run.sh sim); `gpu` runs the GPU
suite. Ends with "N passed, N failed, N skipped"; exits 1 when a test failed or none ran (a run of
only skipped tests exits 0 and says so). HALO_TEST_GPU=1 (set by make test-gpu and gpu-check):
every GPU skip (a suite named *gpu*, or a skip that names a GPU or CUDA) is a failure.
USAGE
    exit 0
    ;;
esac
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export HALO_BIN=${HALO_BIN:-bin/halo}
export HALO_BIN=$(cd "$(dirname "$HALO_BIN")" && pwd)/$(basename "$HALO_BIN")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=0}
export CMOCKA_MESSAGE_OUTPUT=TAP
mode=all
if [ "${1:-}" = gpu ]; then mode=gpu; shift; fi
filter=${1:-}
export HALO_TEST_TMP=$(mktemp -d /tmp/halo-test.XXXXXX)
trap 'rm -rf "$HALO_TEST_TMP"' EXIT

pass=0
fail=0
skip=0
failed_names=()

# run_suite NAME TIMEOUT CMD...: runs CMD, counts its TAP lines, prints them prefixed with NAME.
run_suite() {
    local name=$1 limit=$2
    shift 2
    if [ -n "$filter" ] && [[ "$name" != *"$filter"* ]]; then return; fi
    local log="$HALO_TEST_TMP/log.$$.txt"
    timeout -k 10 "$limit" "$@" </dev/null >"$log" 2>&1
    local rc=$?
    local p f k
    if [ "${HALO_TEST_GPU:-0}" = 1 ]; then
        # a GPU test asked for must run: its skip becomes a failure
        local gpu_suite=0
        [[ "$name" == *gpu* ]] && gpu_suite=1
        awk -v all=$gpu_suite '{ l = tolower($0) }
            l ~ /^ok .*# skip/ && (all || l ~ /gpu|cuda/) {
                sub(/^ok /, "not ok "); sub(/# [sS][kK][iI][pP]/, "(HALO_TEST_GPU=1: skipped)") }
            { print }' "$log" >"$log.gpu" && mv "$log.gpu" "$log"
    fi
    k=$(grep -ciE '^ok .*# skip' "$log")
    p=$(($(grep -cE '^ok ' "$log") - k))
    f=$(grep -cE '^not ok ' "$log")
    awk -v n="$name" '/^(ok|not ok) / { s = $0; sub(/^(not )?ok ([0-9]+ )?(- )?/, "", s);
        print (($1 == "ok") ? "ok " : "not ok ") n ": " s }' "$log"
    if [ "$f" -gt 0 ] || [ "$rc" -ne 0 ]; then
        echo "---- $name (exit $rc) ----"
        grep -vE '^ok ' "$log" | tail -n 40 | sed 's/^/# /' 
        echo "----"
        if [ "$f" -eq 0 ]; then
            f=1
            echo "not ok $name: exited with status $rc"
        fi
        failed_names+=("$name")
    fi
    if [ "$p" -eq 0 ] && [ "$f" -eq 0 ] && [ "$k" -eq 0 ]; then
        echo "not ok $name: ran no test"
        f=1
        failed_names+=("$name")
    fi
    pass=$((pass + p))
    fail=$((fail + f))
    skip=$((skip + k))
}

if [ "$mode" = gpu ]; then
    for t in "$BUILD"/tests/unit/test_*gpu* ; do
        [ -x "$t" ] && run_suite "unit/$(basename "$t")" 600 "$t"
    done
else
    for t in "$BUILD"/tests/unit/test_*; do
        case "$t" in *.o|*.d) continue ;; esac
        [ -x "$t" ] && run_suite "unit/$(basename "$t")" 600 "$t"
    done
    for src in tests/mpi/test_*.c; do
        [ -e "$src" ] || continue
        bin="$BUILD/tests/mpi/$(basename "$src" .c)"
        while IFS= read -r args; do
            # shellcheck disable=SC2086
            run_suite "mpi/$(basename "$bin") $args" 300 \
                mpirun --timeout 240 --oversubscribe --bind-to none $args "$bin"
        done < <(sed -nE 's|^// halo-mpi: (.*)$|\1|p' "$src")
    done
    for t in tests/e2e/*.sh; do
        [ -e "$t" ] || continue
        case "$t" in */lib.sh) continue ;; esac
        run_suite "e2e/$(basename "$t" .sh)" 900 bash "$t"
    done
fi

if [ ${#failed_names[@]} -gt 0 ]; then
    echo "failed suites: ${failed_names[*]}"
fi
if [ $((pass + fail + skip)) -eq 0 ]; then echo "no test ran"; fail=1; fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
