#!/usr/bin/env bash
# make gpu-check: the one prepared run for a machine with a GPU (docs/model.md, "What the first
# GPU run must show"), under 10 minutes, everything written under one folder ($GPU_CHECK_OUT,
# default build/gpu-check): the GPU unit suites with HALO_TEST_GPU=1 (CPU vs CUDA op by op, model
# passes, the copy stage at depths 0 and 2, a forced cudaHostAlloc failure then a staged pass),
# compute-sanitizer (memcheck, racecheck, synccheck) on the copy stage at depth 2, halo's step
# against PyTorch and PyG on the same block, training on the GPU against the CPU per epoch
# (SAGE and typed RGCN, --check, depth 2 asserted), and the GPU calibration (halo calibrate for
# the CPU, bench_gpu for the GPU) as a simulator profile. summary.txt lists each check PASS/FAIL.
# Without a GPU: one SKIP line and exit 0, or with HALO_TEST_GPU=1 one FAIL line and exit 1.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
HALO=${HALO_BIN:-bin/halo}
OUTDIR=${GPU_CHECK_OUT:-$BUILD/gpu-check}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

# GPU_CHECK_REHEARSE=1 (no GPU needed): only the training comparison and the CPU calibration,
# with the GPU replaced by the tests' fake back end (the CPU's kernels): checks this script.
REHEARSE=${GPU_CHECK_REHEARSE:-0}
SCALE=${GPU_CHECK_SCALE:-0.02}
if [ "$REHEARSE" = 1 ]; then
    export HALO_CUDA_LIB=$PWD/$BUILD/tests/libhalo_fakegpu.so
elif ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    if [ "${HALO_TEST_GPU:-0}" = 1 ]; then
        echo "gpu-check: FAIL: HALO_TEST_GPU=1 asks for a GPU and nvidia-smi finds none; nothing run"
        exit 1
    fi
    echo "gpu-check: SKIP: no GPU on this machine (nvidia-smi finds none); nothing run"
    exit 0
fi
export HALO_TEST_GPU=1
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
SUMMARY=$OUTDIR/summary.txt
: >"$SUMMARY"
T0=$(date +%s)
step() { echo; echo "=== gpu-check: $* (+$(($(date +%s) - T0)) s)"; }
# check NAME CMD...: runs CMD (its output into NAME.log and on screen), one line into summary.txt
check() {
    local name=$1
    shift
    local t=$(date +%s)
    "$@" 2>&1 | tee "$OUTDIR/$name.log"
    local rc=${PIPESTATUS[0]}
    printf '%-28s %s (%d s)\n' "$name" "$([ "$rc" = 0 ] && echo PASS || echo "FAIL (exit $rc)")" \
        $(($(date +%s) - t)) | tee -a "$SUMMARY"
    return 0
}

if [ "$REHEARSE" = 0 ]; then
step "machine"
{
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    command -v nvcc >/dev/null && nvcc --version | tail -1
    command -v compute-sanitizer >/dev/null || echo "compute-sanitizer: not on PATH"
    python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())'
    python3 -c 'import torch_geometric as g; print("torch_geometric", g.__version__)' 2>&1 | tail -1
    nproc
} 2>&1 | tee "$OUTDIR/machine.txt"

step "build"
check build make -j"$(nproc)" build "$BUILD/bench/bench_model" "$BUILD/bench/bench_gpu"
[ -e lib/halo/libhalo_cuda.so ] || { echo "gpu-check: FAIL: lib/halo/libhalo_cuda.so was not built (nvcc?)"; exit 1; }

step "GPU unit suites (HALO_TEST_GPU=1: a skip fails) and the copy stage's logic"
check unit-gpu timeout 240 env BUILD="$BUILD" HALO_BIN="$HALO" bash tests/run.sh gpu
check unit-model-stage timeout 120 env BUILD="$BUILD" HALO_BIN="$HALO" bash tests/run.sh model_stage

step "compute-sanitizer on the copy stage at depths 0 and 2 and the pinned-failure pass"
for tool in memcheck racecheck synccheck; do
    check "sanitizer-$tool" timeout 150 env HALO_TEST_ONLY='*stage*' \
        compute-sanitizer --tool "$tool" --error-exitcode 9 "$BUILD/tests/unit/test_model_gpu"
done

step "halo's step on the GPU against PyTorch and PyG SAGEConv, same block and weights (1e-4)"
check step-torch timeout 150 "$BUILD/bench/bench_model" --device gpu --steps 10 --keep "$OUTDIR/block.bin"
check step-pyg timeout 120 python3 bench/model_pyg.py "$OUTDIR/block.bin" cuda
check step-losses python3 - "$OUTDIR" <<'PY'
import re, sys
d = sys.argv[1]
m = re.search(r"eval loss of the initial weights: halo ([-\d.]+), torch ([-\d.]+)", open(d + "/step-torch.log").read())
p = re.search(r"pyg_eval_loss ([-\d.]+)", open(d + "/step-pyg.log").read())
if not m or not p:
    sys.exit("step-losses: a loss is missing from step-torch.log / step-pyg.log")
h, t, g = float(m.group(1)), float(m.group(2)), float(p.group(1))
print("initial-weights loss: halo %.6f torch %.6f pyg %.6f" % (h, t, g))
bad = [n for n, v in (("torch", t), ("pyg", g)) if abs(h - v) > 1e-4 * max(1.0, abs(v))]
sys.exit("differs from " + ", ".join(bad) if bad else 0)
PY
fi

step "training: GPU against CPU per epoch (2 ranks on one GPU, depth 2, --check)"
W=$OUTDIR/work
mkdir -p "$W"
"$HALO" gen --preset products --scale "$SCALE" -o "$W/g" >"$OUTDIR/gen.log" 2>&1 &&
    "$HALO" partition "$W/g" --parts 2 -o "$W/p" >>"$OUTDIR/gen.log" 2>&1 &&
    "$HALO" gen --preset mag --scale "$SCALE" -o "$W/gm" >>"$OUTDIR/gen.log" 2>&1 &&
    "$HALO" partition "$W/gm" --parts 2 -o "$W/pm" >>"$OUTDIR/gen.log" 2>&1 ||
    echo "gen/partition: FAIL (see gen.log)" | tee -a "$SUMMARY"
for model in sage rgcn; do
    part=$W/p
    [ $model = rgcn ] && part=$W/pm
    for dev in gpu cpu; do
        check "train-$model-$dev" timeout 150 mpirun --timeout 140 -np 2 --bind-to none "$HALO" -v \
            train "$part" --model $model --device $dev --depth 2 --epochs 3 --batch 1000 \
            --fanouts 10,25 --hidden 128 --check --metrics "$OUTDIR/train-$model-$dev.jsonl" --no-table
        check "params-$model-$dev" timeout 100 mpirun --timeout 90 -np 2 --bind-to none "$HALO" \
            train "$part" --model $model --device $dev --depth 2 --epochs 1 --batch 1000 \
            --fanouts 10,25 --hidden 128 --checkpoint "$W/ck-$model-$dev" --no-table
    done
    check "compare-$model" python3 - "$OUTDIR" "$W" "$model" <<'PY'
import json, re, sys
out, w, model = sys.argv[1:4]
bad = 0
for dev in ("gpu", "cpu"):
    log = open("%s/train-%s-%s.log" % (out, model, dev)).read()
    depths = set(int(d) for d in re.findall(r"pipeline depth (\d+)", log))
    if depths != {2} or "MPI_THREAD_MULTIPLE" in log:
        print("FAIL: %s %s: effective pipeline depth %s, asked 2" % (model, dev, sorted(depths)))
        bad += 1
ep = {}
for dev in ("gpu", "cpu"):
    recs = [json.loads(l) for l in open("%s/train-%s-%s.jsonl" % (out, model, dev))]
    ep[dev] = {r["epoch"]: r for r in recs if r.get("type") == "epoch" and r["rank"] == 0}
with open("%s/epochs-%s.csv" % (out, model), "w") as f:
    f.write("epoch,loss_cpu,loss_gpu,train_acc_cpu,train_acc_gpu,time_cpu_s,time_gpu_s\n")
    for e in sorted(ep["cpu"]):
        c, g = ep["cpu"][e], ep["gpu"].get(e)
        if g is None:
            print("FAIL: epoch %d missing on the GPU" % e); bad += 1; continue
        f.write("%d,%.6f,%.6f,%.5f,%.5f,%.3f,%.3f\n" % (e, c["loss"], g["loss"], c["train_acc"],
                g["train_acc"], c["time_s"], g["time_s"]))
        for k in ("loss", "train_acc"):
            ok = abs(c[k] - g[k]) <= 0.005 * abs(c[k])
            bad += not ok
            print("%s epoch %d %s: cpu %.6f gpu %.6f %s" % (model, e, k, c[k], g[k], "ok" if ok else "FAIL (> 0.5%)"))
import array
def load(dev):
    a = array.array("f"); a.frombytes(open("%s/ck-%s-%s/params.f32" % (w, model, dev), "rb").read()); return a
pc, pg = load("cpu"), load("gpu")
den = max(1e-30, sum(x * x for x in pc) ** 0.5)
rel = sum((x - y) ** 2 for x, y in zip(pc, pg)) ** 0.5 / den
print("%s parameters after epoch 1: relative difference (L2) GPU vs CPU %.3g" % (model, rel))
sys.exit(1 if bad else 0)
PY
done

step "GPU calibration: halo calibrate (CPU) + bench_gpu (GPU) -> a device-gpu profile"
check calibrate-cpu timeout 120 "$HALO" calibrate --quick -o "$OUTDIR/profile-cpu.lua"
if [ "$REHEARSE" = 0 ]; then
    check calibrate-gpu timeout 120 "$BUILD/bench/bench_gpu" --require \
        --json "$OUTDIR/gpu-calibration.json" --base "$OUTDIR/profile-cpu.lua" \
        -o "$OUTDIR/profile-gpu.lua"
    # the simulator with that profile (2 machines of one GPU) beside the measured run: a figure,
    # not a check (the measured ranks share one GPU)
    timeout 60 "$HALO" sim "$W/p" --cluster "$OUTDIR/profile-gpu.lua" --machines 2 --depth 2 \
        --epochs 3 --batch 1000 --fanouts 10,25 --against "$OUTDIR/train-sage-gpu.jsonl" \
        >"$OUTDIR/sim-vs-measured.log" 2>&1 || echo "sim-vs-measured: see its log" >>"$SUMMARY"
fi

echo
echo "=== gpu-check: summary ($OUTDIR, $(($(date +%s) - T0)) s)"
cat "$SUMMARY"
if grep -q FAIL "$SUMMARY"; then
    echo "gpu-check: some check FAILED (logs in $OUTDIR)"
    exit 1
fi
echo "gpu-check: all checks passed"
