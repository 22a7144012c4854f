#!/usr/bin/env bash
# halo train --model gat (DGL's GATConv): its forward and backward on a fixed mini-batch equal
# PyTorch autograd's (python/gat_reference.py op, within 1e-4); it learns: above features alone
# (GraphSAGE with fanouts 0,0) and, averaged over 3 seeds, within 0.01 of the same GAT trained in
# PyTorch on the same graph; it is deterministic; `halo sim --model gat` counts what it does; it
# trains on a typed graph too; bad flags get one line. The PyTorch parts are TAP skips where torch
# is not installed.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN="timeout -k 5 120 mpirun --oversubscribe --bind-to none"

# First interpreter that imports torch and numpy: $PYTHON, python3 on PATH, then Debian's own.
PY=
for c in ${PYTHON:-} python3 /usr/bin/python3; do
    if "$c" -c "import torch, numpy" >/dev/null 2>&1; then PY=$c; break; fi
done

# --- the op check: halo's logits, loss and gradients on a fixed 2-layer batch (4 heads on the
# hidden layer; 1, then 2 averaged on the output layer) against torch autograd
for oh in 1 2; do
    mkdir -p "$T/dump$oh"
    check "halo's pass on a fixed batch dumped ($oh output heads)" \
        "$BUILD/tests/unit/test_gat" --dump "$T/dump$oh" $oh
    name="forward and backward equal torch autograd's within 1e-4 ($oh output heads)"
    if [ -z "$PY" ]; then
        ok "$name # SKIP torch not installed"
    elif "$PY" "$ROOT/python/gat_reference.py" op "$T/dump$oh" --tol 1e-4 >"$T/op" 2>&1; then
        echo "# $(cat "$T/op")"
        ok "$name"
    else
        not_ok "$name"; sed 's/^/# /' "$T/op"
    fi
done

# --- accuracy: a homophilous sbm graph with weak features and 10% label noise (so that both
# reach the same plateau), 10 epochs of batch 100 at lr 0.02, full-neighbour evaluation
check "generate an sbm graph" "$HALO" gen sbm -n 3000 -F 16 -C 4 --degree-in 12 --degree-out 4 \
    --label-noise 0.1 -s 3 -o "$T/g"
check "partition it into 1 and 2 parts" sh -c "'$HALO' partition '$T/g' --parts 1 -o '$T/p1' &&
    '$HALO' partition '$T/g' --parts 2 -o '$T/p2'"
hyper="--epochs 10 --batch 100 --lr 0.02 --fanouts 10,10"
acc() { sed -n 's/.*test acc \([0-9.]*\),.*/\1/p' "$1" | tail -1; }
mean3() { awk '{ s += $1 } END { if (NR == 3) printf "%.4f", s / 3 }'; }
for s in 1 2 3; do
    "$HALO" train "$T/p1" --model gat $hyper --threads 1 --eval full --eval-every 10 --seed $s \
        --no-table >"$T/gat$s" 2>"$T/gat$s.err"
    "$HALO" train "$T/p1" --model sage $hyper --fanouts 0,0 --threads 1 --eval-every 10 \
        --seed $s --no-table >"$T/feat$s" 2>"$T/feat$s.err"
done
g=$(for s in 1 2 3; do acc "$T/gat$s"; done | mean3)
f=$(for s in 1 2 3; do acc "$T/feat$s"; done | mean3)
echo "# test accuracy over seeds 1-3: gat $(for s in 1 2 3; do acc "$T/gat$s"; done | tr '\n' ' ')" \
    "mean $g; features alone (sage, fanouts 0,0) mean $f"
if [ -n "$g" ] && [ -n "$f" ] && awk -v g="$g" -v f="$f" 'BEGIN { exit !(g > f + 0.1) }'; then
    ok "gat beats features alone by more than 0.1 ($g vs $f)"
else
    not_ok "gat beats features alone by more than 0.1 ('$g' vs '$f')"; tail -3 "$T/gat1.err"
fi
if [ -z "$PY" ]; then
    ok "gat's accuracy is within 0.01 of the PyTorch reference's # SKIP torch not installed"
elif "$PY" "$ROOT/python/gat_reference.py" train "$T/g" $hyper --seed 1,2,3 >"$T/ref" 2>&1; then
    r=$(sed -n 's/.*mean test acc \([0-9.]*\).*/\1/p' "$T/ref")
    echo "# PyTorch reference: $(sed -n 's/.*test acc \([0-9.]*\)$/\1/p' "$T/ref" | tr '\n' ' ')mean $r"
    if [ -n "$r" ] && [ -n "$g" ] && awk -v g="$g" -v r="$r" \
        'BEGIN { d = g - r; if (d < 0) d = -d; exit !(d <= 0.01) }'; then
        ok "gat's accuracy is within 0.01 of the PyTorch reference's ($g vs $r)"
    else
        not_ok "gat's accuracy is within 0.01 of the PyTorch reference's ('$g' vs '$r')"
    fi
else
    not_ok "the PyTorch reference trains"; sed 's/^/# /' "$T/ref" | tail -5
fi

# --- two ranks: deterministic, says which model, counted by the simulator
run2() { $MPIRUN -np 2 "$HALO" train "$T/p2" --epochs 2 --batch 150 --fanouts 5,5 --threads 1 \
    --no-table "$@"; }
check "gat on 2 ranks" run2 --model gat --num-heads 2 --out-heads 2 --metrics "$T/a.jsonl"
cp "$T/out" "$T/gat2.out"
if grep -q '^halo\[0\]: train: .*model gat, hidden 8' "$T/err"; then
    ok "the run says it trains gat with 8 per head by default"
else
    not_ok "the run says it trains gat with 8 per head by default"; grep 'train:' "$T/err"
fi
if grep -q '"type":"summary".*"model":"gat","heads":2,"out_heads":2,"hidden":8' "$T/a.jsonl"
then
    ok "the metrics summary names the model and its heads"
else
    not_ok "the metrics summary names the model and its heads"; tail -1 "$T/a.jsonl"
fi
check "gat on 2 ranks again" run2 --model gat --heads 2 --num-out-heads 2
if [ "$(grep -o 'params [0-9a-f]*' "$T/out")" = "$(grep -o 'params [0-9a-f]*' "$T/gat2.out")" ]
then ok "the same gat run twice gives the same weights"
else not_ok "the same gat run twice gives the same weights"; fi
check "gat with 3 heads" run2 --model gat --heads 3 --out-heads 2
if [ "$(grep -o 'params [0-9a-f]*' "$T/out")" != "$(grep -o 'params [0-9a-f]*' "$T/gat2.out")" ]
then ok "--heads changes the model"
else not_ok "--heads changes the model"; fi
check "gat with 1 output head" run2 --model gat --heads 2
if [ "$(grep -o 'params [0-9a-f]*' "$T/out")" != "$(grep -o 'params [0-9a-f]*' "$T/gat2.out")" ]
then ok "--out-heads changes the model"
else not_ok "--out-heads changes the model"; fi
check_out "halo sim --model gat: counts equal the runtime's" "^counts: equal \(4 records" \
    "$HALO" sim "$T/p2" -q --model gat --heads 2 --out-heads 2 --epochs 2 --batch 150 --fanouts 5,5 \
    --cluster "$ROOT/experiments/clusters/this-machine.lua" --machines 2 --metrics "$T/b.jsonl" \
    --against "$T/a.jsonl"

# --- a typed graph: GAT attends over all sampled in-edges (relations ignored, as GraphSAGE does),
# featureless types get their learnable embeddings; the simulator counts the same
check "a small mag-like typed graph in 2 parts" sh -c "'$HALO' gen --preset mag --scale 0.002 \
    -o '$T/gm' && '$HALO' partition '$T/gm' --parts 2 -o '$T/pm'"
check_out "gat trains on it (with embeddings)" "embeddings [0-9a-f]+" \
    $MPIRUN -np 2 "$HALO" train "$T/pm" --model gat --epochs 1 --batch 250 --fanouts 5,5 \
    --threads 1 --no-table --metrics "$T/m.jsonl"
check_out "halo sim --model gat on it: counts equal" "^counts: equal \(2 records" \
    "$HALO" sim "$T/pm" -q --model gat --epochs 1 --batch 250 --fanouts 5,5 \
    --metrics "$T/m2.jsonl" --against "$T/m.jsonl"

# --- checkpoints and bad flags
check "gat checkpoint" run2 --model gat --heads 2 --checkpoint "$T/ck"
check_fails "a run with other heads does not resume it" "another configuration" \
    run2 --model gat --heads 4 --epochs 3 --checkpoint "$T/ck" --resume
check_fails "a run with other output heads does not resume it" "another configuration" \
    run2 --model gat --heads 2 --out-heads 3 --epochs 3 --checkpoint "$T/ck" --resume
check_fails "a sage run does not resume it" "another configuration" \
    run2 --model sage --epochs 3 --checkpoint "$T/ck" --resume
check "the same gat resumes it" run2 --model gat --heads 2 --epochs 3 --checkpoint "$T/ck" --resume
cp "$T/out" "$T/resumed.out"
check "gat for 3 epochs at once" run2 --model gat --heads 2 --epochs 3
if [ "$(grep -o 'params [0-9a-f]*' "$T/out")" = "$(grep -o 'params [0-9a-f]*' "$T/resumed.out")" ]
then ok "the resumed run ends with the uninterrupted run's weights"
else not_ok "the resumed run ends with the uninterrupted run's weights"; fi
check_fails "--heads 0" "--heads: must be in 1..256, got 0" run2 --model gat --heads 0
if [ "$(grep -c '^halo.*: error: ' "$T/err")" -eq 1 ]; then ok "... said once for both ranks"
else not_ok "... said once for both ranks"; sed 's/^/# /' "$T/err" | head -5; fi
check_fails "--out-heads 300" "--out-heads: must be in 1..256, got 300" \
    run2 --model gat --out-heads 300
check_fails "halo sim --heads 0" "--heads: must be in 1..256" \
    "$HALO" sim "$T/p2" -q --model gat --heads 0
check_out "halo train --help lists gat and --heads" "^ +[-]-heads H .*GAT" "$HALO" train --help
check_out "halo sim --help lists gat" "[-]-model sage[|]rgcn[|]gat" "$HALO" sim --help
done_testing
