#!/usr/bin/env bash
# The command line a DGL user meets first: one flag vocabulary (-o/--output, DGL's spellings as
# aliases listed in --help, one default batch and epoch count), "did you mean" for flags and
# commands, halo's own flags, errors without doubled prefixes, `sim --against` without a
# profile, and --policy NAME found in an installed share/halo from any directory.
cd "$(dirname "$0")/../.."
. tests/e2e/lib.sh
ROOT=$(pwd)

"$HALO" gen sbm --nodes 2000 --seed 3 -o "$T/g" >/dev/null 2>&1
"$HALO" partition "$T/g" --parts 2 -o "$T/p" >/dev/null 2>&1 ||
    { not_ok "fixture (gen, partition)"; done_testing; exit 1; }

# ---- one vocabulary
check "gen takes --out (the other spelling of --output)" \
    "$HALO" gen sbm --nodes 500 --out "$T/g-out"
check "partition takes DGL's --num_parts and --output" \
    "$HALO" partition "$T/g-out" --num_parts 2 --output "$T/p-out"
check_out "... and wrote 2 parts" "^parts +2 " "$HALO" info "$T/p-out"
"$HALO" sim "$T/p" -q --batch 100 --epochs 1 --fanouts 5,5 --hidden 8 >"$T/halo.txt" 2>&1
"$HALO" sim "$T/p" -q --batch-size 100 --num-epochs 1 --fan-out 5,5 --num_hidden 8 \
    >"$T/dgl.txt" 2>&1
if grep -q 'sampled edges' "$T/halo.txt" && [ "$(head -1 "$T/halo.txt")" = "$(head -1 "$T/dgl.txt")" ]
then ok "sim with DGL's --batch-size --num-epochs --fan-out --num_hidden counts as halo's flags"
else not_ok "sim with DGL's spellings counts as halo's flags"; sed 's/^/# /' "$T/halo.txt" "$T/dgl.txt"; fi

# every subcommand that writes a file calls it -o/--output and lists --out
for cmd in gen import partition calibrate sweep timeline "trace record"; do
    # shellcheck disable=SC2086
    check_out "$cmd --help: -o, --output, also --out" '^  -o, --output .*\[also --out\]' \
        "$HALO" $cmd --help
done
# every subcommand of a training run lists DGL's spellings and has the same defaults
defaults=""
for cmd in train sim sample "trace record"; do
    # shellcheck disable=SC2086
    "$HALO" $cmd --help >"$T/help" 2>&1
    if grep -qE -- '--batch B .*\[also --batch-size\]' "$T/help" &&
        grep -qE -- '--epochs E .*\[also --num-epochs' "$T/help" &&
        grep -qE -- '--fanouts LIST .*\[also --fan-out' "$T/help"; then
        ok "$cmd --help lists --batch-size, --num-epochs and --fan-out"
    else not_ok "$cmd --help lists --batch-size, --num-epochs and --fan-out"; sed 's/^/# /' "$T/help"; fi
    d=$(grep -E -- '-(-batch|-epochs) ' "$T/help" | grep -oE 'default [0-9]+' | sort | tr '\n' ' ')
    defaults="$defaults|$d"
done
if [ "$(echo "$defaults" | tr '|' '\n' | sed '/^$/d' | sort -u | wc -l)" = 1 ] &&
    [[ "$defaults" == "|default 2000 default 3 "* ]]
then ok "train, sim, sample and trace record share batch 2000 and 3 epochs"
else not_ok "train, sim, sample and trace record share the default batch and epochs ($defaults)"; fi
check_out "partition --help: --trainers is per machine, also --trainers-per-part" \
    'trainers G +trainers per machine.*\[also .*--trainers-per-part' "$HALO" partition --help
check_out "1 trainer, not 1 trainers" '^parts +2 \(2 machines x 1 trainer\)$' "$HALO" info "$T/p"

# ---- did you mean, and halo's own flags
check_fails "a misspelt flag gets did you mean" "sim: unknown option '--epoch' \(did you mean --epochs\?" \
    "$HALO" sim "$T/p" --epoch 2
check_fails "a swapped-letter flag" "unknown option '--nodse' \(did you mean --nodes\?" \
    "$HALO" gen sbm --nodse 10 -o "$T/x"
check_fails "a misspelt command gets did you mean" "unknown command 'trian' \(did you mean 'train'\?" \
    "$HALO" trian "$T/p"
check_fails "an unknown flag of halo itself is named" "unknown option '--frobnicate' before the command" \
    "$HALO" --frobnicate gen
check_fails "... with did you mean" "unknown option '--verison' before the command \(did you mean --version\?" \
    "$HALO" --verison
check_fails "halo's -v after the command is explained" "'-v' is a flag of halo itself: put it before" \
    "$HALO" gen -v sbm -o "$T/x"
check "--verbose and --quiet are halo's flags" "$HALO" --quiet --verbose --version
"$HALO" sim "$T/p" -q --fanouts '10;25' >/dev/null 2>"$T/e"
if [ "$(wc -l <"$T/e")" = 1 ] && [ "$(grep -o -- '--fanouts:' "$T/e" | wc -l)" = 1 ]; then
    ok "a bad --fanouts names the flag once"
else not_ok "a bad --fanouts names the flag once"; sed 's/^/# /' "$T/e"; fi

# ---- sim --against without --cluster: counts compared, no times invented
"$HALO" sim "$T/p" -q --epochs 2 --batch 100 --cluster experiments/clusters/this-machine.lua \
    --machines 1 --trainers 2 --metrics "$T/a.jsonl" >/dev/null 2>&1
"$HALO" sim "$T/p" -q --epochs 2 --batch 100 --metrics "$T/b.jsonl" --against "$T/a.jsonl" \
    >"$T/o" 2>&1
rc=$?
if [ $rc = 0 ] && grep -q '^counts: equal' "$T/o" && grep -q '^times: not compared' "$T/o" &&
    ! grep -q '%' "$T/o"; then ok "sim --against without --cluster compares counts, no -100% times"
else not_ok "sim --against without --cluster (exit $rc)"; sed 's/^/# /' "$T/o"; fi

# ---- an installed halo finds its policies by name from any directory
if make -s install PREFIX="$T/inst" >"$T/inst.log" 2>&1; then
    mkdir -p "$T/elsewhere"
    (cd "$T/elsewhere" && "$T/inst/bin/halo" policy check massivegnn) >"$T/o" 2>&1
    if grep -q "^policy massivegnn (.*$T/inst/bin/../share/halo/policies/massivegnn.lua)" "$T/o"
    then ok "installed halo policy check massivegnn finds share/halo/policies"
    else not_ok "installed halo policy check massivegnn finds share/halo/policies"; sed 's/^/# /' "$T/o"; fi
    (cd "$T/elsewhere" && "$T/inst/bin/halo" sim "$T/p" -q --epochs 1 --batch 100 \
        --policy massivegnn --set f=0.1) >"$T/o" 2>&1
    check_out_file() { grep -q "$2" "$T/o" && ok "$1" || { not_ok "$1"; sed 's/^/# /' "$T/o"; }; }
    check_out_file "installed halo sim --policy massivegnn from another directory" "policy massivegnn"
    if [ -f "$T/inst/share/halo/lua/cachelib.lua" ] && [ ! -e "$T/inst/share/halo/policies/cachelib.lua" ]
    then ok "cachelib.lua is installed with the Lua library, not among the policies"
    else not_ok "cachelib.lua is installed with the Lua library, not among the policies"; fi
else
    not_ok "make install PREFIX=..."; sed 's/^/# /' "$T/inst.log" | tail -5
fi
check_fails "a policy name that is nowhere is named" "nopolicy: cannot read" \
    "$HALO" sim "$T/p" -q --epochs 1 --policy nopolicy
cd "$ROOT" || exit 1

# ---- errors under mpirun: one line per distinct error, no abort banner
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN="mpirun -q --timeout 120 --oversubscribe --bind-to none"
# one_line NAME PATTERN CMD...: CMD fails (not by a signal) and stderr is exactly one line, a
# "halo: error:" matching PATTERN (mpirun -q: Open MPI adds nothing when no rank aborts)
one_line() {
    local name=$1 pattern=$2
    shift 2
    "$@" >"$T/out" 2>"$T/err"
    local rc=$?
    if [ $rc -ne 0 ] && [ $rc -lt 128 ] && [ "$(wc -l <"$T/err")" = 1 ] &&
        grep -qE "^halo: error: $pattern" "$T/err"; then ok "$name"
    else not_ok "$name (exit $rc)"; sed 's/^/# /' "$T/err" | head -20; fi
}
one_line "mpirun: a bad flag is said once" "train: unknown option '--bogus'" \
    $MPIRUN -np 2 "$HALO" train "$T/p" --bogus
one_line "mpirun: a bad --fanouts is said once, the flag named once" "--fanouts: bad list" \
    $MPIRUN -np 2 "$HALO" train "$T/p" --fanouts '10;25'
cp -r "$T/p" "$T/bad"
truncate -s 100 "$T/bad/part-1/feat.f32"
one_line "mpirun: rank 1's own error is said by rank 1 alone" "rank 1: .*part-1/feat.f32: size" \
    $MPIRUN -np 2 "$HALO" train "$T/bad" --epochs 1 --batch 100
$MPIRUN -np 2 "$HALO" train "$T/p" --epochs 1 --batch 100 --checkpoint "$T/ck" >/dev/null 2>&1
one_line "mpirun: a refused --resume names the setting that differs" \
    "--resume: .*another configuration: batch=100 in the checkpoint, batch=200 in this run" \
    $MPIRUN -np 2 "$HALO" train "$T/p" --epochs 2 --batch 200 --checkpoint "$T/ck" --resume

done_testing
