#!/usr/bin/env bash
# halo sweep and halo report: a seconds-long sweep through the whole pipeline (cached graphs and
# partitions, CSV rows, gnuplot script, PNG, SVG, meta.json, index.md), --dry-run, resume after a
# kill, failed points, timeouts, and bad experiment files (one line with file:line, no outputs).
cd "$(dirname "$0")/../.."
. tests/e2e/lib.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
EX=experiments/examples
O=$T/reports

# rows FILE: data rows of a CSV (lines after the header)
rows() { if [ -f "$1" ]; then echo $(($(wc -l <"$1") - 1)); else echo 0; fi; }

# --dry-run: every point and its commands, nothing run or written
"$HALO" sweep $EX/tiny.lua --out "$O" --dry-run >"$T/dry" 2>"$T/err"
if [ $? -eq 0 ] && [ "$(grep -c '^point ' "$T/dry")" -eq 4 ] && grep -q ' sim .*--policy' "$T/dry" &&
    [ ! -e "$O" ]; then ok "--dry-run lists 4 points with their commands and runs nothing"
else not_ok "--dry-run lists 4 points with their commands and runs nothing"; sed 's/^/# /' "$T/dry" "$T/err" | head; fi

# the whole pipeline on a simulated sweep
check "tiny sweep (sim mode) runs" "$HALO" sweep $EX/tiny.lua --out "$O"
if [ "$(rows "$O/tiny.csv")" -eq 4 ] && [ "$(grep -c ',ok,,' "$O/tiny.csv")" -eq 4 ] &&
    head -n 1 "$O/tiny.csv" | grep -q '^key,run.batch,run.policy,rep,epoch_s,.*,status,error,seconds$'
then ok "4 CSV rows with status ok under the header"
else not_ok "4 CSV rows with status ok under the header"; sed 's/^/# /' "$O/tiny.csv"; fi
if head -n 1 "$O/tiny.data.csv" | grep -q 'traffic_cut' &&
    awk -F, 'NR > 1 && $2 ~ /massivegnn/ && $(NF-1) + 0 > 0 { n++ } END { exit n != 2 }' "$O/tiny.data.csv"
then ok "data.csv carries the derived column (massivegnn cuts traffic against distdgl)"
else not_ok "data.csv carries the derived column"; sed 's/^/# /' "$O/tiny.data.csv"; fi
if [ "$(head -c 8 "$O/tiny.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
    grep -q '<svg' "$O/tiny.svg" && grep -q 'pngcairo' "$O/tiny.gp" && grep -q 'tiny.data.csv' "$O/tiny.gp"
then ok "gnuplot script, PNG (magic bytes) and SVG written"
else not_ok "gnuplot script, PNG (magic bytes) and SVG written"; fi
rm -f "$T/replot.png"
if (cd "$O" && gnuplot -e 'out="replot"' tiny.gp) >/dev/null 2>&1 && [ -s "$O/replot.png" ]; then
    ok "the script reruns standalone from the output directory"
else not_ok "the script reruns standalone from the output directory"; fi
if grep -q '"title": "Tiny sweep' "$O/tiny.meta.json" && grep -q '"ok": 4' "$O/tiny.meta.json" &&
    grep -q '"command": "halo sweep experiments/examples/tiny.lua' "$O/tiny.meta.json" &&
    grep -q '"cores": [1-9]' "$O/tiny.meta.json"
then ok "meta.json: title, points, command, provenance"
else not_ok "meta.json: title, points, command, provenance"; sed 's/^/# /' "$O/tiny.meta.json" | head -30; fi

# a rerun runs nothing; a run-mode sweep reuses the cached graph
check "a rerun finds every point done" "$HALO" sweep $EX/tiny.lua --out "$O"
if grep -q '4 done before, 0 to run' "$T/err" && [ "$(rows "$O/tiny.csv")" -eq 4 ]; then
    ok "the rerun skipped the 4 finished points"; else not_ok "the rerun skipped the 4 finished points"; sed 's/^/# /' "$T/err"; fi
check "tiny_run sweep (run mode, mpirun 2 ranks, 1 epoch)" "$HALO" sweep $EX/tiny_run.lua --out "$O"
if [ "$(grep -c ',ok,,' "$O/tiny_run.csv")" -eq 2 ] &&
    awk -F, 'NR > 1 && $9 + 0 > 0 { n++ } END { exit n != 2 }' "$O/tiny_run.csv"; then
    ok "run mode: 2 rows with a test accuracy"; else not_ok "run mode: 2 rows with a test accuracy"; sed 's/^/# /' "$O/tiny_run.csv"; fi
if [ "$(ls -d "$O"/.cache/g-* | grep -vc '\.log$')" -eq 1 ] &&
    "$HALO" sweep $EX/tiny_run.lua --out "$O" --dry-run | grep "gen sbm" | grep -q '\[cached\]'; then
    ok "both experiments share one cached graph"; else not_ok "both experiments share one cached graph"; ls "$O/.cache" | sed 's/^/# /'; fi

check_out "halo report writes index.md" "2 figures" "$HALO" report "$O"
if grep -q '^## Tiny sweep' "$O/index.md" && grep -q '(tiny.png)' "$O/index.md" &&
    grep -q '(tiny_run.png)' "$O/index.md" && grep -q 'MassiveGNN: prefetching' "$O/index.md"; then
    ok "index.md names both figures, their PNGs and the paper's claim"
else not_ok "index.md names both figures"; sed 's/^/# /' "$O/index.md" | head -30; fi

# a failing point is recorded, the others go on, exit 1; a rerun repeats only that point
cat >"$T/fail.lua" <<'EOF'
return {
    title = "with a failing point", mode = "sim",
    graph = { gen = "sbm", nodes = 3000, seed = 3 }, partition = { parts = 2 },
    run = { epochs = 1, batch = 300, fanouts = "5,10" },
    points = { { ["run.batch"] = 300 }, { ["run.batch"] = 0 }, { ["run.batch"] = 200 } },
    measures = { "sampled_edges", "remote_mb" },
    plot = { kind = "line", x = "run.batch", y = "remote_mb" },
}
EOF
"$HALO" sweep "$T/fail.lua" --out "$O" >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -eq 1 ] && grep -q 'error: sweep fail: 1 of 3 points failed' "$T/err" &&
    [ "$(grep -c ',ok,,' "$O/fail.csv")" -eq 2 ] && grep -q ',failed,"\?halo sim: exit 2.*batch' "$O/fail.csv"
then ok "a failing point: status failed with its error in the CSV, the others ok, exit 1"
else not_ok "a failing point: status failed, exit 1 (exit $rc)"; sed 's/^/# /' "$T/err" "$O/fail.csv" | tail; fi
if grep -q '"failed": 1' "$O/fail.meta.json" && grep -q '"point": "run.batch=0"' "$O/fail.meta.json" &&
    grep -q '"error": "halo sim: exit 2' "$O/fail.meta.json" && [ -s "$O/fail.png" ]; then
    ok "meta.json lists the failed point and its error; the figure has the others"
else not_ok "meta.json lists the failed point"; sed 's/^/# /' "$O/fail.meta.json" | head -40; fi
"$HALO" sweep "$T/fail.lua" --out "$O" >"$T/out" 2>"$T/err"
if [ $? -eq 1 ] && [ "$(rows "$O/fail.csv")" -eq 4 ] && grep -q '2 done before, 1 to run' "$T/err"; then
    ok "a rerun repeats only the failed point (one more row)"
else not_ok "a rerun repeats only the failed point"; sed 's/^/# /' "$T/err" "$O/fail.csv"; fi

# a sweep killed after its first point resumes without redoing it; a point past --timeout fails
cat >"$T/slow.lua" <<'EOF'
return {
    mode = "run",
    graph = { gen = "sbm", nodes = 3000, seed = 3 }, partition = { parts = 2 },
    run = { epochs = 1, batch = 300, fanouts = "5,10", threads = 1 },
    points = { { ["run.depth"] = 0 }, { ["run.depth"] = 0, ["run.netem"] = "lat=2s" } },
    measures = { "epoch_s" },
    plot = { kind = "bars", x = "run.netem", y = "epoch_s" },
}
EOF
"$HALO" sweep "$T/slow.lua" --out "$O" >"$T/slow.out" 2>&1 &
pid=$!
for _ in $(seq 1 300); do [ "$(rows "$O/slow.csv")" -ge 1 ] && break; sleep 0.1; done
sleep 0.5
kill -TERM $pid 2>/dev/null
wait $pid 2>/dev/null
for _ in $(seq 1 50); do
    left=$(ps -eo args | grep -F "$O/.cache" | grep -v grep | head -n 3)
    [ -z "$left" ] && break
    sleep 0.1
done
if [ "$(rows "$O/slow.csv")" -eq 1 ] && grep -q ',ok,,' "$O/slow.csv" && [ -z "$left" ] &&
    [ "$(tail -c 1 "$O/slow.csv" | od -An -c | tr -d ' ')" = '\n' ]; then
    ok "a killed sweep leaves whole lines (1 finished point) and no child processes"
else
    not_ok "a killed sweep leaves whole lines and no child processes"; sed 's/^/# /' "$O/slow.csv" "$T/slow.out"; echo "# left: $left"
    # stop what this script's sweep left behind (its processes name this script's directory)
    for p in $(ps -eo pid,args | grep -F "$O/.cache" | grep -v grep | awk '$2 == "mpirun" { print $1 }'); do kill "$p"; done
fi
first=$(sed -n 2p "$O/slow.csv" | cut -d, -f1)
if "$HALO" sweep "$T/slow.lua" --out "$O" --dry-run | grep -q "^point 1/2 $first .*\[done\]"; then
    ok "--dry-run after the kill marks the finished point done"; else not_ok "--dry-run after the kill marks the finished point done"; fi
"$HALO" sweep "$T/slow.lua" --out "$O" --timeout 2 >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -eq 1 ] && [ "$(grep -c "^$first," "$O/slow.csv")" -eq 1 ] && [ "$(rows "$O/slow.csv")" -eq 2 ] &&
    grep -q ',failed,"\?mpirun train: timed out after 2 s' "$O/slow.csv"; then
    ok "the resumed sweep ran only the unfinished point, which timed out"
else not_ok "the resumed sweep ran only the unfinished point (exit $rc)"; sed 's/^/# /' "$O/slow.csv" "$T/err"; fi

# bad experiment files: one line naming file:line, exit 1, nothing written
B=$T/bad
mkdir -p "$B"
bad() {
    local name=$1 pattern=$2 file=$3
    check_fails "$name" "$pattern" "$HALO" sweep "$file" --out "$B/out"
    if [ -e "$B/out" ]; then not_ok "$name: no outputs"; rm -rf "$B/out"; fi
}
sed 's/mode = "sim",/mode = "sim"/' $EX/tiny.lua >"$B/syntax.lua"
bad "a Lua syntax error" "syntax.lua:9: .*expected" "$B/syntax.lua"
sed 's/caption = /captoin = /' $EX/tiny.lua >"$B/unknown.lua"
bad "an unknown field" "unknown.lua:6: field captoin: unknown field" "$B/unknown.lua"
sed 's/kind = "bars"/kind = "pie"/' $EX/tiny.lua >"$B/kind.lua"
bad "a bad plot kind" 'kind.lua:23: field plots\[1\].kind: "pie" is not one of line, bars, stacked, heatmap, scatter' "$B/kind.lua"
sed 's/"hit_rate", "remote_mb"/"hit_rate", "remote_gb"/' $EX/tiny.lua >"$B/measure.lua"
bad "an unknown measure" 'measure.lua:17: field measures\[5\]: unknown measure "remote_gb"' "$B/measure.lua"
sed 's|policies/massivegnn.lua" }|policies/nope.lua" }|' $EX/tiny.lua >"$B/policy.lua"
bad "a missing policy file is named" "policy.lua:13: field run.policy: policy file policies/nope.lua: no such file" "$B/policy.lua"
sed 's|cluster = "this-machine"|cluster = "nowhere"|' $EX/tiny.lua >"$B/cluster.lua"
bad "a missing cluster profile is named" 'cluster.lua:11: field run.cluster: cluster profile "nowhere"' "$B/cluster.lua"
sed 's|\["run.batch"\] = { 100, 300 }|["run.bacth"] = { 100, 300 }|' $EX/tiny.lua >"$B/axis.lua"
bad "an unknown sweep axis" 'axis.lua:14: field sweep\["run.bacth"\]' "$B/axis.lua"
done_testing
