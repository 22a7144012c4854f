# make demo: a products-like graph, verified, partitioned 4 ways with METIS, trained with
# `mpirun -np 4 halo train` under the default policy; prints the per-epoch times, the stage
# breakdown and the final test accuracy. Everything goes to demo/ (git-ignored). About a minute
# on two cores.
set -eu
cd "$(dirname "$0")/.."
HALO=${HALO_BIN:-bin/halo}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
OUT=demo
SCALE=${HALO_DEMO_SCALE:-0.15}
EPOCHS=${HALO_DEMO_EPOCHS:-8}
mkdir -p "$OUT"
rm -rf "$OUT/graph" "$OUT/part" "$OUT/checkpoint" "$OUT/metrics.jsonl"

step() { printf '\n== %s\n$ %s\n' "$1" "${*:2}"; "${@:2}"; }

step "1. a products-like graph (ogbn-products shape at scale $SCALE)" \
    "$HALO" gen --preset products --scale "$SCALE" -o "$OUT/graph"
step "2. verify every file" "$HALO" verify "$OUT/graph"
step "3. partition 4 ways (METIS, balanced nodes, training nodes and edges)" \
    "$HALO" partition "$OUT/graph" --parts 4 -o "$OUT/part"
step "4. train on 4 ranks with the default policy (fanouts 10,25; no cache; synchronous)" \
    timeout -k 10 900 mpirun --oversubscribe --bind-to none -np 4 "$HALO" train "$OUT/part" \
    --policy policies/default.lua --epochs "$EPOCHS" --batch 200 --lr 0.01 --threads 1 \
    --eval-every 4 --metrics "$OUT/metrics.jsonl" --checkpoint "$OUT/checkpoint"

# The summary from the metrics file: mean over ranks per epoch, and the last evaluation.
echo
echo "== 5. per-epoch time and stage breakdown (seconds, mean over the 4 ranks)"
echo "   from $OUT/metrics.jsonl"
awk '
function num(k,   m) { if (match($0, "\"" k "\":[-0-9.eE+]+")) { m = substr($0, RSTART, RLENGTH);
                       sub(/^"[^"]*":/, "", m); return m + 0 } return 0 }
/"type":"epoch"/ { e = num("epoch"); n[e]++; if (e > last) last = e;
    t[e] += num("time_s"); s[e] += num("sample_s"); f[e] += num("fetch_s"); c[e] += num("copy_s");
    g[e] += num("compute_s"); a[e] += num("allreduce_s"); w[e] += num("wait_s");
    r[e] += num("remote_nodes"); b[e] += num("bytes_remote"); l[e] += num("loss") }
/"type":"summary"/ { test = num("test_acc"); val = num("val_acc"); mean = num("mean_epoch_s") }
END {
    printf "%5s %8s %8s %8s %8s %9s %9s %8s %12s %10s\n", "epoch", "time_s", "sample",
        "fetch", "copy", "compute", "allreduce", "wait", "remote_rows", "remote_MB"
    for (e = 0; e <= last; e++) if (n[e] > 0)
        printf "%5d %8.3f %8.3f %8.3f %8.3f %9.3f %9.3f %8.3f %12d %10.1f\n", e, t[e] / n[e],
            s[e] / n[e], f[e] / n[e], c[e] / n[e], g[e] / n[e], a[e] / n[e], w[e] / n[e], r[e],
            b[e] / 1e6
    printf "\nmean epoch time %.3f s; final validation accuracy %.4f, final test accuracy %.4f\n",
        mean, val, test
}' "$OUT/metrics.jsonl"

# For scale: the same model on the features alone (no neighbours: fanouts 0,0).
step "6. the same model without neighbours (features only), for comparison" \
    timeout -k 10 600 mpirun --oversubscribe --bind-to none -np 4 "$HALO" train "$OUT/part" \
    --fanouts 0,0 --epochs "$EPOCHS" --batch 200 --lr 0.01 --threads 1 --eval-every "$EPOCHS" \
    --no-table
echo
echo "(metrics: $OUT/metrics.jsonl, checkpoint: $OUT/checkpoint/)"
