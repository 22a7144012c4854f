# Helpers for end-to-end tests that drive the real binary. Source it; each check prints one TAP
# line ("ok N - name" / "not ok N - name"); finish with `done_testing`.
# $HALO_BIN is the binary, $T a fresh scratch directory for this script.
set -u
HALO=${HALO_BIN:-$(pwd)/bin/halo}
T=$(mktemp -d "${HALO_TEST_TMP:-/tmp}/e2e.XXXXXX")
_n=0
_failed=0

ok() { _n=$((_n + 1)); echo "ok $_n - $1"; }
not_ok() { _n=$((_n + 1)); _failed=$((_failed + 1)); echo "not ok $_n - $1"; }

# check NAME CMD...: passes when CMD exits 0.
check() {
    local name=$1
    shift
    if "$@" >"$T/out" 2>"$T/err"; then ok "$name"; else
        not_ok "$name"; echo "# command: $*"; sed 's/^/# /' "$T/err" | tail -n 20; fi
}

# check_fails NAME PATTERN CMD...: passes when CMD exits non-zero with stderr matching PATTERN
# (an extended regex) in a line starting "halo: error:" and does not crash (no signal exit).
check_fails() {
    local name=$1 pattern=$2
    shift 2
    "$@" >"$T/out" 2>"$T/err"
    local rc=$?
    if [ $rc -ne 0 ] && [ $rc -lt 128 ] && grep -E "^halo(\[[0-9]+\])?: error: .*$pattern" "$T/err" >/dev/null; then
        ok "$name"
    else
        not_ok "$name"; echo "# command: $* (exit $rc), wanted error matching: $pattern"
        sed 's/^/# /' "$T/err" | tail -n 20
    fi
}

# check_out NAME PATTERN CMD...: passes when CMD exits 0 and stdout matches PATTERN.
check_out() {
    local name=$1 pattern=$2
    shift 2
    if "$@" >"$T/out" 2>"$T/err" && grep -E "$pattern" "$T/out" >/dev/null; then ok "$name"; else
        not_ok "$name"; echo "# command: $*, wanted output matching: $pattern"
        sed 's/^/# /' "$T/out" "$T/err" | tail -n 20; fi
}

done_testing() {
    echo "1..$_n"
    rm -rf "$T"
    [ $_failed -eq 0 ]
}
