#!/usr/bin/env bash
# make gpu-check: everything a reviewer needs from a machine with a GPU, in one call of under
# 10 minutes: the GPU unit tests, the model step on the GPU against PyTorch and PyG's SAGEConv on
# the same block, and a 4-rank training sharing one GPU beside the same run on the CPU.
# Without a GPU it prints one SKIP line and exits 0 (the CUDA code is still compiled by `make`).
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
HALO=${HALO_BIN:-bin/halo}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    echo "gpu-check: SKIP: no GPU on this machine (nvidia-smi finds none); nothing run"
    exit 0
fi
step() { echo; echo "=== gpu-check: $* ($(date -u +%H:%M:%S))"; }
fail=0
W=$(mktemp -d /tmp/halo-gpu-check.XXXXXX)
trap 'rm -rf "$W"' EXIT

step "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
command -v nvcc >/dev/null && nvcc --version | tail -1
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())' 2>&1
python3 -c 'import torch_geometric as g; print("torch_geometric", g.__version__)' 2>&1 | tail -1

step "build"
make -j"$(nproc)" build >"$W/build.log" 2>&1 || { tail -20 "$W/build.log"; echo "gpu-check: build failed"; exit 1; }
grep -q HALO_HAVE_CUDA=1 "$W/build.log" || echo "gpu-check: note: objects were already built (or without CUDA)"

step "GPU unit tests (tests/run.sh gpu) and the copy stage's logic (tests/run.sh model_stage)"
BUILD=$BUILD HALO_BIN=$HALO HALO_TEST_GPU=1 timeout 240 bash tests/run.sh gpu || fail=1
BUILD=$BUILD HALO_BIN=$HALO timeout 120 bash tests/run.sh model_stage || fail=1

step "model step on the GPU: halo vs PyTorch vs PyG SAGEConv, same block and weights"
make "$BUILD/bench/bench_model" >/dev/null 2>&1
timeout 120 "$BUILD/bench/bench_model" --device gpu --steps 10 --keep "$W/block.bin" || fail=1
[ -s "$W/block.bin" ] && timeout 120 python3 bench/model_pyg.py "$W/block.bin" cuda || fail=1

step "4 ranks on one GPU vs 4 ranks on the CPU (products-like, scale 0.02)"
"$HALO" gen --preset products --scale 0.02 -o "$W/g" >/dev/null 2>&1 &&
    "$HALO" partition "$W/g" --parts 4 -o "$W/p" 2>&1 | tail -1 || fail=1
for dev in gpu cpu; do
    for depth in 0 2; do
        timeout 200 mpirun --timeout 180 -np 4 --bind-to none "$HALO" train "$W/p" --device $dev \
            --depth $depth --epochs 3 --batch 1000 --fanouts 10,25 --hidden 256 \
            --metrics "$W/m-$dev-$depth.jsonl" --no-table 2>&1 | grep -E 'halo train:|error' || fail=1
        python3 - "$W/m-$dev-$depth.jsonl" "$dev" "$depth" <<'PY' || fail=1
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
ep = [r for r in recs if r.get("type") == "epoch" and r["epoch"] >= 1 and r["rank"] == 0]
keys = ["time_s", "sample_s", "fetch_s", "copy_s", "compute_s", "allreduce_s", "wait_s"]
print("  %s depth %s rank 0, epochs>=1: " % (sys.argv[2], sys.argv[3]) +
      " ".join("%s %.3f" % (k, sum(r[k] for r in ep) / max(1, len(ep))) for k in keys))
last = [r for r in recs if r.get("type") == "epoch" and r["rank"] == 0][-1]
print("  %s depth %s last epoch: loss %.6f train_acc %.4f" % (sys.argv[2], sys.argv[3],
                                                              last["loss"], last["train_acc"]))
# the copy stage runs on a GPU only: its time is reported there and is 0 on the CPU
copy = sum(r["copy_s"] for r in recs if r.get("type") == "epoch")
if (sys.argv[2] == "gpu") != (copy > 0):
    print("  FAIL: copy_s is %g on the %s" % (copy, sys.argv[2]))
    sys.exit(1)
open(sys.argv[1] + ".loss", "w").write("%.9g\n" % last["loss"])
PY
    done
done

step "the GPU's last-epoch loss at depths 0 and 2 against the CPU's (3% relative: the GPU is not bitwise)"
python3 - "$W" <<'PY' || fail=1
import sys
w = sys.argv[1]
def loss(dev, d):
    return float(open("%s/m-%s-%d.jsonl.loss" % (w, dev, d)).read())
bad = 0
for d in (0, 2):
    c, g = loss("cpu", d), loss("gpu", d)
    ok = abs(c - g) <= 0.03 * abs(c)
    bad += not ok
    print("  depth %d: loss cpu %.6f gpu %.6f %s" % (d, c, g, "ok" if ok else "FAIL"))
sys.exit(1 if bad else 0)
PY

echo
[ $fail = 0 ] && echo "gpu-check: all steps passed" || echo "gpu-check: some step FAILED (see above)"
exit $fail
