#!/usr/bin/env bash
# halo sim: the counts of a simulation equal the runtime's field by field, per rank and epoch
# (invariant 3), for several cache policies and pipeline depths; bad input gets one line.
cd "$(dirname "$0")/../.."
. tests/e2e/lib.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN="mpirun --timeout 120 --oversubscribe --bind-to none"
P=policies

"$HALO" gen --preset products --scale 0.01 --seed 5 -o "$T/g" >/dev/null 2>&1
"$HALO" partition "$T/g" --parts 4 -o "$T/p4" >/dev/null 2>&1

# same_counts NAME FLAGS...: train on 4 ranks and simulate the same flags; counts must agree.
same_counts() {
    local name=$1
    shift
    rm -f "$T/a.jsonl" "$T/b.jsonl"
    if ! $MPIRUN -np 4 "$HALO" train "$T/p4" --no-table --eval none --epochs 2 --batch 150 \
        --metrics "$T/a.jsonl" "$@" >"$T/train.out" 2>&1; then
        not_ok "$name: train ran"; sed 's/^/# /' "$T/train.out" | tail -n 10; return
    fi
    if "$HALO" sim "$T/p4" -q --epochs 2 --batch 150 --metrics "$T/b.jsonl" \
        --against "$T/a.jsonl" "$@" >"$T/sim.out" 2>&1 &&
        grep -q "^counts: equal (8 records x 9 fields" "$T/sim.out"; then
        ok "$name: simulated counts equal the runtime's"
    else
        not_ok "$name: simulated counts equal the runtime's"; sed 's/^/# /' "$T/sim.out" | tail -n 10
    fi
}

same_counts "distdgl depth 0" --policy $P/distdgl.lua --depth 0
same_counts "distdgl depth 4" --policy $P/distdgl.lua --depth 4
same_counts "massivegnn with evictions depth 0" --policy $P/massivegnn.lua --set delta=2 --depth 0
same_counts "massivegnn with evictions depth 4" --policy $P/massivegnn.lua --set delta=2 --depth 4
same_counts "lru depth 0" --policy $P/lru.lua --depth 0
same_counts "lru depth 4" --policy $P/lru.lua --depth 4
same_counts "belady depth 0" --policy $P/belady.lua --depth 0
same_counts "belady depth 4" --policy $P/belady.lua --depth 4
same_counts "vip, global batching, 3 layers" --policy $P/vip.lua --batching global --fanouts 5,5,10

# the evictions really happen in the compared runs (otherwise massivegnn equals a static cache)
if [ -s "$T/b.jsonl" ] && "$HALO" sim "$T/p4" -q --epochs 2 --batch 150 --policy $P/massivegnn.lua \
    --set delta=2 >"$T/mg.out" 2>&1 && "$HALO" sim "$T/p4" -q --epochs 2 --batch 150 \
    --policy $P/pagraph.lua >"$T/pg.out" 2>&1 && \
    [ "$(grep -o 'hit rate [0-9.]*' "$T/mg.out")" != "$(grep -o 'hit rate [0-9.]*' "$T/pg.out")" ]; then
    ok "massivegnn with delta=2 evicts (hit rate differs from a static cache)"
else
    not_ok "massivegnn with delta=2 evicts (hit rate differs from a static cache)"
fi

# a simulation that counted wrong is caught: edit one count of the measured file
sed 's/"sampled_edges":\([0-9]*\)/"sampled_edges":1\1/' "$T/a.jsonl" >"$T/bad.jsonl"
check_fails "a wrong count is reported" "counts differ" \
    "$HALO" sim "$T/p4" -q --epochs 2 --batch 150 --policy $P/vip.lua --batching global \
    --fanouts 5,5,10 --metrics "$T/c.jsonl" --against "$T/bad.jsonl"

# bad profiles and clusters: one line naming the file and the field
C=experiments/clusters/this-machine.lua
sed 's/cores = 2,/cores = 2, gpus_per_node = 4,/' $C >"$T/unknown.lua"
check_fails "a profile with an unknown field" "unknown.lua.*gpus_per_node" \
    "$HALO" sim "$T/p4" -q --cluster "$T/unknown.lua" --trainers 4
sed 's/sample_edge_ns = [0-9.]*/sample_edge_ns = 0/' $C >"$T/zero.lua"
check_fails "a profile with a zero rate" "zero.lua.*sample_edge" \
    "$HALO" sim "$T/p4" -q --cluster "$T/zero.lua" --trainers 4
check_fails "parts != machines x trainers" "1 machines x 3 trainers = 3 ranks.*4 parts" \
    "$HALO" sim "$T/p4" -q --cluster $C --trainers 3
check_fails "a missing profile" "nope.lua" "$HALO" sim "$T/p4" -q --cluster "$T/nope.lua"
check_out "a profile with times: the epoch is timed" "mean epoch [0-9.]+ s" \
    "$HALO" sim "$T/p4" -q --cluster $C --trainers 4 --epochs 1 --batch 150 --policy $P/distdglv2.lua
check_out "the timeline of a simulation" "" \
    "$HALO" sim "$T/p4" -q --cluster $C --trainers 4 --epochs 1 --batch 150 --timeline "$T/tl.jsonl"
if [ -s "$T/tl.jsonl" ] && grep -q '"stage":"compute"' "$T/tl.jsonl"; then ok "timeline has compute events"
else not_ok "timeline has compute events"; fi

# a cache policy's hooks are priced by the work their budget is charged (cpu.hook_unit_ns):
# a dear unit makes lru's fetch slower; distdgl (no cache, no hook) does not move
fetch_of() { sed -n 's/.*"fetch_s":\([0-9.e+-]*\).*/\1/p' "$1" | head -n 1; }
grep -v "^ *hook_unit_ns = " $C >"$T/h0.lua"
sed 's/^\( *hook_us = .*\)$/\1\n        hook_unit_ns = 1000,/' "$T/h0.lua" >"$T/h1.lua"
for pol in lru distdgl; do
    set_=""; [ $pol = lru ] && set_="--set f=0.25"
    for h in h0 h1; do
        "$HALO" sim "$T/p4" -q --cluster "$T/$h.lua" --trainers 4 --epochs 1 --batch 150 \
            --policy $P/$pol.lua $set_ --metrics "$T/$pol-$h.jsonl" >/dev/null 2>&1
    done
done
check "a cache policy's hook work is priced (lru: the fetch grows with cpu.hook_unit_ns)" awk \
    -v a="$(fetch_of "$T/lru-h0.jsonl")" -v b="$(fetch_of "$T/lru-h1.jsonl")" 'BEGIN { exit !(a > 0 && b > 1.2 * a) }'
check "... and a policy without cache hooks does not move (distdgl)" awk \
    -v a="$(fetch_of "$T/distdgl-h0.jsonl")" -v b="$(fetch_of "$T/distdgl-h1.jsonl")" 'BEGIN { exit !(a > 0 && a == b) }'

# the sampler's edges by the list they come from: drawn from a long list (in-degree > 64, the
# products-like graph's hubs) at cpu.sample_long_ns, taken whole at cpu.sample_copy_ns; a dear
# constant of either makes the simulated sampling slower than the profile without it
sample_of() { sed -n 's/.*"sample_cpu_s":\([0-9.e+-]*\).*/\1/p' "$1" | head -n 1; }
grep -vE "^ *sample_(long|copy)_ns = " $C >"$T/s0.lua"
sed 's/^\( *sample_node_ns = .*\)$/\1\n        sample_long_ns = 1000,/' "$T/s0.lua" >"$T/sl.lua"
sed 's/^\( *sample_node_ns = .*\)$/\1\n        sample_copy_ns = 1000,/' "$T/s0.lua" >"$T/sc.lua"
# (every in-degree of this graph is above 10: at fanouts 5,10 no list is taken whole, at 40,40
# many are)
for s in s0:5,10 sl:5,10 sc:5,10 s0:40,40 sc:40,40; do
    "$HALO" sim "$T/p4" -q --cluster "$T/${s%%:*}.lua" --trainers 4 --epochs 1 --batch 150 \
        --policy $P/distdgl.lua --fanouts "${s#*:}" --metrics "$T/${s/:/-}.jsonl" >/dev/null 2>&1
done
check "edges drawn from long lists are priced at cpu.sample_long_ns" awk \
    -v a="$(sample_of "$T/s0-5,10.jsonl")" -v b="$(sample_of "$T/sl-5,10.jsonl")" 'BEGIN { exit !(a > 0 && b > 1.2 * a) }'
check "edges of lists taken whole are priced at cpu.sample_copy_ns" awk \
    -v a="$(sample_of "$T/s0-40,40.jsonl")" -v b="$(sample_of "$T/sc-40,40.jsonl")" 'BEGIN { exit !(a > 0 && b > 1.2 * a) }'
check "... and none is at fanouts below every in-degree" awk \
    -v a="$(sample_of "$T/s0-5,10.jsonl")" -v b="$(sample_of "$T/sc-5,10.jsonl")" 'BEGIN { exit !(a > 0 && a == b) }'

check_fails "a missing partition" "part|partition" "$HALO" sim "$T/nope" -q
check_fails "--set without --policy" "--set needs --policy" "$HALO" sim "$T/p4" -q --set f=1
check_fails "--netem without --cluster" "need --cluster" "$HALO" sim "$T/p4" -q --netem lat=1ms
done_testing
