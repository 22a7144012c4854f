#!/usr/bin/env bash
# halo calibrate: a quick calibration writes a profile with every field (the GEMM table by
# shape included, the latency of oversubscribed exchanges) and says how it was measured; --graph measures the graph-dependent constants
# on a partition and halo sim says when a profile's are generic; a bad -o, --graph (or no
# mpirun) fails with one error line and writes nothing.
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

check "calibrate --quick writes a profile" "$HALO" calibrate --quick -o "$T/here.lua"
cp "$T/err" "$T/progress"
check "it reports progress on stderr" grep -q "calibrate: sampler: .* ns per edge" "$T/progress"
check "it measures MPI over shared memory and TCP" \
    bash -c "grep -q 'MPI over shared memory' '$T/progress' && grep -q 'MPI over TCP' '$T/progress'"
check "it measures the exchanges of 2 x cores ranks (oversubscribed)" \
    grep -qE "MPI with [0-9]+ ranks on [0-9]+ cores: .* us per exchange" "$T/progress"
check "... into network.oversub_lat_us, a positive latency" awk '
    /^ *oversub_lat_us = / { v = $3; sub(/,$/, "", v); good = (v + 0 > 0) } END { exit !good }' \
    "$T/here.lua"
check "it runs the runtime's fetch on 2 ranks at two row widths" \
    grep -qE "the runtime's fetch on 2 ranks: .* ns CPU per input node with 64-byte rows, .* with 512-byte rows" "$T/progress"
check "... into cpu.fetch_GBps, a positive rate, and cpu.fetch_node_ns >= 0 (absent: 0)" awk '
    BEGIN { n = 1 }
    /^ *fetch_GBps = / { v = $3; sub(/,$/, "", v); r = (v + 0 > 0) }
    /^ *fetch_node_ns = / { v = $3; sub(/,$/, "", v); n = (v + 0 >= 0) }
    END { exit !(r && n) }' "$T/here.lua"
check "it runs the fetch again on 1 MiB per rank kept in the caches" \
    grep -qE "the same fetch from 1 MiB of rows per rank kept in the caches: .* rows at [0-9.]+ GB/s" "$T/progress"
check "... into cpu.fetch_warm_GBps >= fetch_GBps, with both tables' sizes (1 MiB, 9.8 MiB)" awk '
    /^ *fetch_GBps = / { v = $3; sub(/,$/, "", v); cold = v + 0 }
    /^ *fetch_warm_GBps = / { v = $3; sub(/,$/, "", v); warm = v + 0 }
    /^ *fetch_warm_MiB = / { v = $3; sub(/,$/, "", v); wm = v + 0 }
    /^ *fetch_cold_MiB = / { v = $3; sub(/,$/, "", v); cm = v + 0 }
    END { exit !(cold > 0 && warm >= cold && wm == 1 && cm > 9 && cm < 10) }' "$T/here.lua"
check "it runs the fetch once more on the large table, batches back to back" \
    grep -qE "the fetch from 9.77 MiB of rows per rank, batches back to back: .* rows at [0-9.]+ GB/s" "$T/progress"
check "... into cpu.fetch_kept_GBps, between fetch_GBps and fetch_warm_GBps" awk '
    /^ *fetch_GBps = / { v = $3; sub(/,$/, "", v); cold = v + 0 }
    /^ *fetch_warm_GBps = / { v = $3; sub(/,$/, "", v); warm = v + 0 }
    /^ *fetch_kept_GBps = / { v = $3; sub(/,$/, "", v); kept = v + 0 }
    END { exit !(kept >= cold && kept <= warm && kept > 0) }' "$T/here.lua"
check "it measures the oversubscription penalty of each kind of work" bash -c "
    for k in sampling gathers GEMMs 'gathers from a table kept in the caches'; do
        grep -qE \"oversubscription penalty of \$k [0-9.e+-]+, the median of [0-9]+ jobs. paired probes\" '$T/progress' || exit 1
    done"
check "... into cpu.oversub_penalty, oversub_gemm, oversub_sample and oversub_warm, each >= 0" awk '
    /^ *(oversub_penalty|oversub_gemm|oversub_sample|oversub_warm) = / { v = $3; sub(/,$/, "", v); if (v + 0 >= 0) n++ }
    END { exit n != 4 }' "$T/here.lua"
check "... and the sampler's slow-down with every core busy, into cpu.corun_sample >= 0" bash -c "
    grep -qE 'sampling with every core busy \(2 ranks\) runs [0-9.e+-]+ slower than alone' '$T/progress' &&
    awk '/^ *corun_sample = / { v = \$3; sub(/,\$/, \"\", v); ok = v + 0 >= 0 } END { exit !ok }' '$T/here.lua'"
check "it measures the crowding penalties on training, a rank per core against 2 x cores" bash -c "
    for k in sampling fetch compute; do
        grep -qE \"crowding penalty of the \$k [0-9.e+-]+ \(measured / modelled CPU with [0-9]+ and [0-9]+ ranks: [0-9.e+-]+/[0-9.e+-]+\)\" '$T/progress' || exit 1
    done"
check "... into cpu.crowd_sample, crowd_fetch, crowd_compute >= 0 and crowd_ranks = 2 x cores" awk '
    /^ *(crowd_sample|crowd_fetch|crowd_compute) = / { v = $3; sub(/,$/, "", v); if (v + 0 >= 0) n++ }
    /^ *cores = / { v = $3; sub(/,$/, "", v); c = v + 0 }
    /^ *crowd_ranks = / { v = $3; sub(/,$/, "", v); r = v + 0 }
    END { exit !(n == 3 && c > 0 && r == 2 * c) }' "$T/here.lua"
check "... and the jitter of a CPU step from training at depth 0, into cpu.jitter >= 0" bash -c "
    grep -qE 'jitter of a CPU step [0-9.e+-]+, the median of [0-9]+ runs? at depth 0 on [0-9]+ ranks' '$T/progress' &&
    awk '/^ *jitter = / { v = \$3; sub(/,\$/, \"\", v); ok = v + 0 >= 0 } END { exit !ok }' '$T/here.lua'"
check "--crowd --base measures only the crowding penalties (and the jitter)" \
    "$HALO" calibrate --quick --crowd --base "$T/here.lua" -o "$T/crowd.lua"
check "... and keeps every other field of the base profile" bash -c "
    [ \"\$(grep -E '^ *[a-z_]+ = ' '$T/crowd.lua' | grep -vE 'crowd_|jitter')\" = \
      \"\$(grep -E '^ *[a-z_]+ = ' '$T/here.lua' | grep -vE 'crowd_|jitter')\" ] &&
    grep -qE '^ *crowd_ranks = [1-9]' '$T/crowd.lua' && ! grep -q 'calibrate: sampler:' '$T/err'"
check_fails "--crowd without --base is refused" "--crowd goes with --base" \
    "$HALO" calibrate --quick --crowd -o "$T/c2.lua"
check "... and writes nothing" test ! -e "$T/c2.lua"
check "the sampler's lists taken whole and long lists get their own constants" bash -c "
    grep -qE 'ns per edge of a list taken whole, [0-9.e+-]+ ns per edge drawn from a long one' '$T/progress' &&
    awk '/^ *sample_(copy|long)_ns = / { v = \$3; sub(/,\$/, \"\", v); if (v + 0 > 0) n++ } END { exit n != 2 }' '$T/here.lua'"
check "--quick measures once" bash -c "! grep -q 'calibrate: pass ' '$T/progress'"
check_fails "--repeat 10 is refused" "--repeat 10 \(want 1\.\.9\)" "$HALO" calibrate --quick --repeat 10 -o "$T/r.lua"
check "... and writes nothing" test ! -e "$T/r.lua"
check "--repeat 2 measures twice and writes the median of the passes" bash -c "
    '$HALO' calibrate --quick --repeat 2 -o '$T/r2.lua' 2>'$T/r2.err' &&
    [ \$(grep -c 'calibrate: pass [12] of 2' '$T/r2.err') -eq 2 ] &&
    grep -q '; each figure the median of 2 passes' '$T/r2.lua'"
check "it measures the kernel's time slice, into cpu.slice_us" bash -c "
    grep -qE 'with 2 x cores busy threads a thread runs [0-9.e+-]+ ms at a time' '$T/progress' &&
    grep -qE '^ *slice_us = [0-9.e+-]+,' '$T/here.lua'"
check "it measures how late the sleep of an emulated delay wakes up, into netem.over_us" bash -c "
    grep -qE 'a 1 ms sleep to a deadline .* wakes [0-9.e+-]+ us late' '$T/progress' &&
    grep -qE '^ *over_us = [0-9.e+-]+,' '$T/here.lua'"
check "it measures a unit of step work with 2 x cores ranks against alone" \
    grep -qE "a unit of step work [0-9.e+-]+ ms of CPU against [0-9.e+-]+ ms with 2 ranks and [0-9.e+-]+ ms alone" "$T/progress"
check "it prices a policy hook's charged work, into cpu.hook_unit_ns" bash -c "
    grep -qE 'policy hook [0-9.e+-]+ us per call, [0-9.e+-]+ ns per unit of charged work' '$T/progress' &&
    awk '/^ *hook_unit_ns = / { v = \$3; sub(/,\$/, \"\", v); ok = v + 0 > 0 } END { exit !ok }' '$T/here.lua'"
check "it times the runtime's allreduce of 512 KiB, into network.allreduce_GBps" bash -c "
    grep -qE 'allreduce [0-9.e+-]+ us, of 512 KiB [0-9.e+-]+ us' '$T/progress' &&
    awk '/^ *allreduce_GBps = / { v = \$3; sub(/,\$/, \"\", v); ok = v + 0 > 0 } END { exit !ok }' '$T/here.lua'"
fields="machines trainers cores sample_edge_ns sample_node_ns block_node_ns block_edge_ns gather_GBps memcpy_GBps
lookup_node_ns hook_us shm_lat_us oversub_lat_us shm_GBps net_lat_us nics nic_GBps msg_overhead_us
allreduce_lat_us lat_us Gbit pinned_GBps pageable_GBps pinned kind gemm_TFLOPs agg_GBps
step_overhead_us adam_GBps"
missing=""
for f in $fields; do grep -qE "^ *$f = " "$T/here.lua" || missing="$missing $f"; done
[ -z "$missing" ] && ok "every field is written" || not_ok "every field is written (missing:$missing)"
# every rate (a bandwidth, a cost per item, a flop rate) is a positive number
check "rates are positive numbers" awk '
    /^ *(sample_edge_ns|sample_node_ns|block_node_ns|block_edge_ns|gather_GBps|memcpy_GBps|lookup_node_ns|shm_GBps|nic_GBps|gemm_TFLOPs|agg_GBps|adam_GBps) = / {
        v = $3; sub(/,$/, "", v); if (!(v + 0 > 0)) { print "bad: " $0; bad = 1 } n++ }
    END { exit (bad || n != 12) }' "$T/here.lua"
check "one machine, one trainer, device cpu, this machine's cores" bash -c "
    grep -qE '^ *machines = 1,' '$T/here.lua' && grep -qE '^ *trainers = 1,' '$T/here.lua' &&
    grep -qE '^ *kind = \"cpu\",' '$T/here.lua' &&
    grep -qE '^ *cores = $(getconf _NPROCESSORS_ONLN),' '$T/here.lua'"
check "the file says when and where it was measured" \
    grep -qE "^-- Measured by .halo calibrate --quick. on .* on [0-9]{4}-[0-9]{2}-[0-9]{2}" "$T/here.lua"
check "it is a Lua table named after the file" bash -c "
    grep -q '^return {' '$T/here.lua' && grep -q '^    name = \"here\",' '$T/here.lua' &&
    [ \"\$(tail -n 1 '$T/here.lua')\" = '}' ]"
check "no temporary file is left" bash -c "! ls '$T'/here.lua.tmp-* 2>/dev/null"

check_fails "an -o in a missing directory is an error" "no directory .*/nope" \
    "$HALO" calibrate --quick -o "$T/nope/x.lua"
[ "$(wc -l <"$T/err")" -eq 1 ] && ok "... of one line" || not_ok "... of one line"
check "... that writes nothing" test ! -e "$T/nope"
check_fails "an -o that is a directory is an error" "is a directory" \
    "$HALO" calibrate --quick -o "$T"
check_fails "no mpirun on PATH is an error that names --no-mpi" "mpirun not found.*--no-mpi" \
    env PATH=/nonexistent "$HALO" calibrate --quick -o "$T/nompi.lua"
check "... and writes nothing" test ! -e "$T/nompi.lua"
check "--no-mpi measures the rest" \
    env PATH=/nonexistent "$HALO" calibrate --quick --no-mpi -o "$T/nompi.lua"
check "... and marks the links as not measured" grep -q "NOT MEASURED (--no-mpi)" "$T/nompi.lua"
check "... and leaves oversub_lat_us unmeasured (0: shm_lat_us)" awk '
    /^ *oversub_lat_us = / { v = $3; sub(/,$/, "", v); if (v + 0 != 0) bad = 1 } END { exit bad }' \
    "$T/nompi.lua"
"$HALO" calibrate --quick >/dev/null 2>&1
[ $? -eq 2 ] && ok "no -o is a usage error (exit 2)" || not_ok "no -o is a usage error (exit 2)"

# the per-stage constants: GEMM rates by shape, per-row and per-edge parts, the fit section
check "the GEMM table has its 4 x 4 x 4 shapes, rows up to 32768" bash -c "
    [ \$(grep -cE '^ +\{[0-9]+, [0-9]+, [0-9]+, [0-9.e+]+\},' '$T/here.lua') -eq 64 ] &&
    [ \$(grep -cE '^ +\{32768, [0-9]+, [0-9]+, [0-9.e+]+\},' '$T/here.lua') -eq 16 ]"
check "it measures a sampling and two sizes of step back from waits of 0.25 to 16 ms" \
    grep -qE "back from a wait of 0.25/1/4/16 ms: sampling ([0-9.e+-]+/){3}[0-9.e+-]+, a training step of [0-9.e+-]+ ms ([0-9.e+-]+/){3}[0-9.e+-]+ slower, one of [0-9.e+-]+ ms ([0-9.e+-]+/){3}[0-9.e+-]+" "$T/progress"
check "... into cpu.wake_sample_*, wake_compute_*, wake_small_* (twelve figures >= 0) and the two steps' times" awk '
    /^ *wake_(sample|compute|small)_(250us|1ms|4ms|16ms) = / { v = $3; sub(/,$/, "", v); if (v + 0 >= 0) n++ }
    /^ *wake_step_us = / { v = $3; sub(/,$/, "", v); big = v + 0 }
    /^ *wake_small_us = / { v = $3; sub(/,$/, "", v); small = v + 0 }
    END { exit !(n == 12 && small > 0 && big > small) }' "$T/here.lua"
check "gathers and aggregation have a per-row and a per-edge part" bash -c "
    grep -qE '^ *gather_row_ns = ' '$T/here.lua' && grep -qE '^ *agg_edge_ns = ' '$T/here.lua' &&
    grep -qE '^ *elem_ns = ' '$T/here.lua'"
check "the fit factors start at 1" bash -c "
    grep -qE '^ *sample = 1,' '$T/here.lua' && grep -qE '^ *compute = 1,' '$T/here.lua'"
check "the sampling constants are said to be generic" grep -q "generic; --graph PDIR" "$T/here.lua"

# --graph: the graph-dependent constants measured on the user's partition
"$HALO" gen rmat --scale 11 -F 16 --seed 5 -o "$T/g" >/dev/null 2>&1
"$HALO" partition "$T/g" --parts 2 -o "$T/p" >/dev/null 2>&1
check "calibrate --graph --base measures on the partition" \
    "$HALO" calibrate --quick --graph "$T/p" --base "$T/here.lua" -o "$T/graph.lua"
cp "$T/err" "$T/graph.err"
check "... and says what it measured" grep -q "calibrate: on .*: sampler .* ns per edge" "$T/graph.err"
check "... and records the partition" grep -qE "^ *graph = \".*/p\"," "$T/graph.lua"
check "... and keeps the base profile's block constants (built from ids of its own: no graph in them)" \
    bash -c "[ \"\$(grep -E '^ *block_(node|edge)_ns = ' '$T/graph.lua')\" = \
               \"\$(grep -E '^ *block_(node|edge)_ns = ' '$T/here.lua')\" ]"
check "halo sim with the generic profile says its constants are generic" \
    "$HALO" sim "$T/p" --cluster "$T/here.lua" --trainers 2 --epochs 1 --batch 100
cp "$T/err" "$T/sim.err"
check "... in one notice line" \
    grep -q "notice: sim: profile here: sampling and gather constants are generic" "$T/sim.err"
check "halo sim with the --graph profile on that partition" \
    "$HALO" sim "$T/p" --cluster "$T/graph.lua" --trainers 2 --epochs 1 --batch 100
cp "$T/err" "$T/sim2.err"
check "... says nothing about its constants" bash -c "
    test -f '$T/sim2.err' && ! grep -q 'sampling and gather constants' '$T/sim2.err'"
# --from-metrics: bounded per-stage factors; the measured constants stay as measured
check "a measured run to fit to" mpirun --oversubscribe --timeout 120 -np 2 "$HALO" train "$T/p" \
    --epochs 2 --batch 100 --eval none --no-table --depth 0 --metrics "$T/run.jsonl"
check "calibrate --from-metrics fits the profile to it" \
    "$HALO" calibrate --from-metrics "$T/run.jsonl" --base "$T/graph.lua" --rounds 2 -o "$T/fit.lua"
cp "$T/err" "$T/fit.err"
check "... and logs its rounds" grep -q "^fit round 2 over 1 run" "$T/fit.err"
check "... fitting the stages' cost on their CPU work, which the run records" \
    grep -q "^fit round 1 over 1 run: .*ratios (sample, fetch, compute: of their CPU work)" "$T/fit.err"
check "... keeps the measured constants" bash -c "
    [ \"\$(grep -E '^ *(sample_edge_ns|gather_GBps|gemm_TFLOPs|agg_GBps) = ' '$T/graph.lua')\" = \
      \"\$(grep -E '^ *(sample_edge_ns|gather_GBps|gemm_TFLOPs|agg_GBps) = ' '$T/fit.lua')\" ]"
check "... and writes every fit factor within 0.5..2" awk '
    /^    fit = \{/ { in_fit = 1; next } in_fit && /^    \}/ { in_fit = 0 }
    in_fit && /^ *(sample|fetch|compute|allreduce) = / {
        v = $3; sub(/,$/, "", v); if (v + 0 < 0.5 || v + 0 > 2) bad = 1; n++ }
    END { exit (bad || n != 4) }' "$T/fit.lua"
# a crowded run (2 x cores ranks) fitted on a profile with penalties measured on training: the
# three crowding penalties move together, in the proportions the probe measured
NC=$(( 2 * $(nproc) ))
"$HALO" partition "$T/g" --parts "$NC" -o "$T/pc" >/dev/null 2>&1
check "a crowded run ($NC ranks on $(nproc) cores) to fit to" mpirun --oversubscribe --timeout 120 \
    -np "$NC" "$HALO" train "$T/pc" --epochs 2 --batch 100 --eval none --no-table --depth 0 \
    --metrics "$T/runc.jsonl"
check "calibrate --from-metrics fits the crowding penalties of a --crowd profile" \
    "$HALO" calibrate --from-metrics "$T/run.jsonl,$T/runc.jsonl" --base "$T/crowd.lua" \
    --rounds 1 -o "$T/fitc.lua"
cp "$T/err" "$T/fitc.err"
check "... says so" grep -qE "^fit: crowding penalties [0-9.e+-]+ \(sampling\), .* over 1 run" "$T/fitc.err"
check "... in the proportions the probe measured, oversub_penalty untouched" python3 -c "
import re, sys
def f(path):
    t = open(path).read()
    return {k: float(re.search(r'\\b%s = ([^,]+),' % k, t).group(1))
            for k in ('crowd_sample', 'crowd_fetch', 'crowd_compute', 'oversub_penalty')}
a, b = f('$T/crowd.lua'), f('$T/fitc.lua')
m = max(a[k] for k in ('crowd_sample', 'crowd_fetch', 'crowd_compute'))
r = [b[k] / a[k] for k in ('crowd_sample', 'crowd_fetch', 'crowd_compute') if a[k] > 0.02 * m]
same = len({b[k] for k in ('crowd_sample', 'crowd_fetch', 'crowd_compute')}) == 1
sys.exit(not ((r and max(r) - min(r) < 0.01 * max(r) + 1e-9 if m > 0 else same) and
              a['oversub_penalty'] == b['oversub_penalty']))"
echo "not metrics" >"$T/notes"
check_fails "a metrics file that is not one is an error" "notes" \
    "$HALO" calibrate --from-metrics "$T/notes" --base "$T/graph.lua" -o "$T/fit2.lua"
[ "$(wc -l <"$T/err")" -eq 1 ] && ok "... of one line" || not_ok "... of one line"
check_fails "--graph on a missing partition is an error" "nope" \
    "$HALO" calibrate --quick --graph "$T/nope" --base "$T/here.lua" -o "$T/g2.lua"
[ "$(wc -l <"$T/err")" -eq 1 ] && ok "... of one line" || not_ok "... of one line"
check "... that writes nothing" test ! -e "$T/g2.lua"
done_testing
