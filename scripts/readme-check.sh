#!/usr/bin/env bash
# Runs every command of README.md's tour and checks what it prints against the README.
#
# The tour is every line starting with "$ " inside the code blocks between "## A tour" and the
# next "## " heading (a line ending in "\" continues on the next one); the lines under a command,
# up to the next command or the end of its block, are what the README says it prints ("..."
# stands for lines left out). The commands run in order in one bash, from the checkout's root
# (the tour itself puts bin/ on PATH and moves to a scratch directory, made under this script's
# own temporary directory and removed at the end), stdout and stderr together.
#
# Compared, on every line the README shows (in order; the output may have more lines): what
# does not depend on the machine. Counts, names, file lists and checksums of files exactly;
# every decimal number to 2 decimals (accuracies, rates, losses); not compared: times (a number
# followed by s, ms or us, "made in ..."), peak RSS, the epoch table's columns after its
# validation accuracy, and the trained parameters' checksum (float rounding differs between CPUs
# and BLAS kernels). A command shown printing "halo: error:" must fail; any other must succeed.
#
# usage: scripts/readme-check.sh [--show] [README]   (after make build)
#   --show  print each command and its normalised output instead of checking (to update README)
# Exits 0 when every command ran as the README says, else 1 naming the first difference.
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
show=0
if [ "${1:-}" = --show ]; then
    show=1
    shift
fi
README=${1:-README.md}
[ -x bin/halo ] || { echo "readme-check: bin/halo is missing (make build first)" >&2; exit 1; }
W=$(mktemp -d "${TMPDIR:-/tmp}/readme-check.XXXXXX")
trap 'rm -rf "$W"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 # the tour's 4 ranks on a machine of fewer cores

# cmd.N and exp.N for each command of the tour
n=$(awk -v w="$W" '
    /^## / { tour = ($0 ~ /^## A tour/) ; next }
    !tour { next }
    /^```/ { block = !block; cont = 0; next }
    !block { next }
    cont { print > (w "/cmd." n); cont = ($0 ~ /\\$/); next }
    /^\$ / { n++; print substr($0, 3) > (w "/cmd." n); printf "" > (w "/exp." n)
             cont = ($0 ~ /\\$/); next }
    n > 0 { print > (w "/exp." n) }
    END { print n + 0 }' "$README")
if [ "$n" -eq 0 ]; then
    echo "readme-check: no \$ command in the tour of $README" >&2
    exit 1
fi

# One script: each command in braces (export and cd carry on), its output and status saved.
{
    echo "export TMPDIR='$W'"
    for i in $(seq 1 "$n"); do
        echo "t0=\$(date +%s.%N)"
        echo "{"
        cat "$W/cmd.$i"
        echo "} >'$W/out.$i' 2>&1 </dev/null"
        echo "echo \$? >'$W/rc.$i'"
        echo "awk -v a=\$t0 -v b=\$(date +%s.%N) 'BEGIN { printf \"%.1f\", b - a }' >'$W/time.$i'"
    done
} >"$W/tour.sh"

# normalise FILE: the lines as compared (see the header)
normalise() {
    sed -E -e "s#$ROOT#\\\$HALO#g" \
        -e 's/(made in +).*/\1T/' \
        -e 's/^([0-9]+|total)(( +[0-9]+){5})( +[0-9.]+){3} +([0-9.]+) +[0-9.]+$/\1\2 T T T \5 M/' \
        -e 's/^([0-9.]+ +[a-z][^ ]*( +[0-9.-]+){7}) +[0-9.]+(( +[0-9]+){3})$/\1 T\3/' \
        -e 's/peak RSS [0-9.]+ [KMG]iB/peak RSS M/g' \
        -e 's/(params|embeddings) [0-9a-f]{16}/\1 H/g' \
        -e 's/^( +[0-9]+ +[0-9.-]+ +[0-9.-]+ +[0-9.-]+) +[0-9.]+ +\|.*/\1 |/' \
        -e 's/[0-9]+(\.[0-9]+)? ?(s|ms|us)\b/T/g' \
        -e 's/[[:space:]]+$//' "$1" |
        awk '{ out = ""; s = $0
               while (match(s, /[0-9]+\.[0-9][0-9][0-9]+/)) {
                   num = substr(s, RSTART, RLENGTH)
                   out = out substr(s, 1, RSTART - 1) sprintf("%.2f", num + 0)
                   s = substr(s, RSTART + RLENGTH) }
               print out s }'
}

start=$(date +%s)
bash "$W/tour.sh"
took=$(($(date +%s) - start))
fail=0
for i in $(seq 1 "$n"); do
    cmd=$(head -c 300 "$W/cmd.$i" | tr '\n' ' ')
    rc=$(cat "$W/rc.$i" 2>/dev/null || echo 255)
    if [ $show = 1 ]; then
        echo "\$ $cmd  (exit $rc, $(cat "$W/time.$i" 2>/dev/null) s)"
        cat "$W/out.$i"
        continue
    fi
    if grep -q '^halo\(\[[0-9]*\]\)\?: error:' "$W/exp.$i"; then want=fail; else want=ok; fi
    if { [ $want = ok ] && [ "$rc" != 0 ]; } || { [ $want = fail ] && [ "$rc" = 0 ]; }; then
        echo "not ok $i - \$ $cmd: exit $rc, the README shows it $([ $want = ok ] && echo succeeding || echo failing)"
        sed 's/^/#   /' "$W/out.$i" | tail -n 8
        fail=$((fail + 1))
        continue
    fi
    normalise "$W/exp.$i" | grep -vE '^ *(\.\.\.)? *$' >"$W/e"
    normalise "$W/out.$i" >"$W/o"
    # every shown line, in order, among the output's lines
    missing=$(awk 'NR == FNR { want[++k] = $0; next }
                   j < k && $0 == want[j + 1] { j++ }
                   END { if (j < k) print want[j + 1] }' "$W/e" "$W/o")
    if [ -n "$missing" ]; then
        echo "not ok $i - \$ $cmd"
        echo "#   the README shows: $missing"
        echo "#   it printed:"
        sed 's/^/#     /' "$W/o" | head -n 30
        fail=$((fail + 1))
    else
        echo "ok $i - \$ $cmd"
    fi
done
[ $show = 1 ] && exit 0
echo "# $n commands of the tour in ${took} s; $fail differ from the README"
[ $fail -eq 0 ]
