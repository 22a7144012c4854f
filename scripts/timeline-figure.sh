#!/usr/bin/env bash
# Figure "timeline": one measured epoch at pipeline depth 0 and at depth 4 (4 ranks on this
# machine, products-like graph, --netem lat=2ms,bw=1Gbit so the network has latency to hide),
# and the same two epochs simulated. Writes REPORTS/timeline_{run,sim}_d{0,4}.png and
# REPORTS/timeline.meta.json (listed by halo report, with the four timelines the charts are drawn
# from, REPORTS/timeline_{run,sim}_d{0,4}.jsonl, and the sources halo report checks it against).
# Usage: scripts/timeline-figure.sh [REPORTS] [WORKDIR]   (env: HALO_BIN)
set -euo pipefail
cd "$(dirname "$0")/.."
HALO=${HALO_BIN:-$(pwd)/bin/halo}
R=${1:-reports}
W=${2:-$(mktemp -d /tmp/halo-timeline.XXXXXX)}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
NETEM=lat=2ms,bw=1Gbit
mkdir -p "$R" "$W"
[ -d "$W/g" ] || "$HALO" gen --preset products --scale 0.02 --seed 7 -o "$W/g" >/dev/null
[ -d "$W/p4" ] || "$HALO" partition "$W/g" --parts 4 -o "$W/p4" >/dev/null 2>&1
PROFILE=experiments/clusters/this-machine-fitted.lua
for d in 0 4; do
    mpirun --timeout 300 --oversubscribe --bind-to none -np 4 "$HALO" train "$W/p4" --no-table \
        --eval none --epochs 2 --batch 100 --policy policies/distdgl.lua --depth $d \
        --netem $NETEM --timeline "$W/run_d$d.jsonl" >"$W/run_d$d.log" 2>&1
    "$HALO" timeline "$W/run_d$d.jsonl" --epoch 1 -o "$R/timeline_run_d$d.png" \
        --title "measured: 4 ranks, depth $d, netem $NETEM (epoch 1)" >"$W/run_d$d.txt"
    "$HALO" sim "$W/p4" -q --cluster $PROFILE --machines 1 --trainers 4 --epochs 2 --batch 100 \
        --policy policies/distdgl.lua --depth $d --netem $NETEM --timeline "$W/sim_d$d.jsonl" \
        >"$W/sim_d$d.log"
    "$HALO" timeline "$W/sim_d$d.jsonl" --epoch 1 -o "$R/timeline_sim_d$d.png" \
        --title "simulated: 4 ranks, depth $d, netem $NETEM (epoch 1)" >"$W/sim_d$d.txt"
    # the timelines the charts are drawn from, beside them (index.md links them)
    cp "$W/run_d$d.jsonl" "$R/timeline_run_d$d.jsonl"
    cp "$W/sim_d$d.jsonl" "$R/timeline_sim_d$d.jsonl"
done
commit=$(git rev-parse --short HEAD 2>/dev/null || echo "")
cat >"$R/timeline.meta.json.tmp" <<JSON
{"format":1,"name":"timeline","title":"One epoch at pipeline depth 0 and 4, measured and simulated",
 "caption":"Gantt charts of one epoch of 4 ranks (distdgl, products-like graph, --netem $NETEM): at depth 0 every batch samples, fetches, computes and reduces in turn; at depth 4 sampling and fetching run ahead of the compute (the staircase), hiding the network's latency. The simulated charts (halo sim on this machine's fitted profile) show the same schedule. More charts: timeline_run_d0.png, timeline_run_d4.png, timeline_sim_d0.png, timeline_sim_d4.png.",
 "paper":"DistDGLv2: the asynchronous pipeline overlaps sampling, feature movement and compute",
 "mode":"run+sim","command":"scripts/timeline-figure.sh reports","replot":"scripts/timeline-figure.sh reports",
 "files":{"csv":"","data":["timeline_run_d0.jsonl","timeline_run_d4.jsonl","timeline_sim_d0.jsonl","timeline_sim_d4.jsonl"],"script":"","png":"timeline_run_d4.png","svg":""},
 "depends":["runtime/graph","runtime/part","runtime/train","runtime/model","runtime/store","runtime/comm","runtime/pipe","runtime/plan","runtime/sample","runtime/order","runtime/cache","runtime/policy","runtime/sim","runtime/cli/cmd_timeline.c","scripts/timeline-figure.sh","policies/distdgl.lua","$PROFILE"],
 "provenance":{"commit":"$commit","host":"$(hostname)","cpu":"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')","cores":$(nproc),"date":"$(date -u +'%Y-%m-%d %H:%M UTC')","points_s":0,"duration_s":0}}
JSON
mv "$R/timeline.meta.json.tmp" "$R/timeline.meta.json"
grep -h "mean epoch" "$W"/run_d*.log "$W"/sim_d*.log || true
echo "figures: $R/timeline_{run,sim}_d{0,4}.png"
