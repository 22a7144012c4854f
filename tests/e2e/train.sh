# halo train under mpirun: 1 rank vs 4 ranks give the same losses (global batching), the same
# run twice gives the same weights, resume continues bit for bit, the metrics file has the
# DESIGN §5 schema, full-neighbour evaluation, and bad input fails on every rank without a hang.
. "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN="timeout -k 5 120 mpirun --oversubscribe --bind-to none"
PY=$(command -v python3 || true)

check "generate an sbm graph" "$HALO" gen sbm -n 3000 -F 16 -C 8 -s 3 -o "$T/g"
check "partition into 1" "$HALO" partition "$T/g" --parts 1 -o "$T/p1"
check "partition into 4" "$HALO" partition "$T/g" --parts 4 -o "$T/p4"

# --- invariant 1 across rank counts: the same global mini-batches on 1 and 4 ranks
common="--batching global --epochs 3 --batch 256 --fanouts 5,10 --no-table --eval none"
check "1 rank, global batches" $MPIRUN -np 1 "$HALO" train "$T/p1" $common --metrics "$T/m1.jsonl"
check "4 ranks, global batches" $MPIRUN -np 4 "$HALO" train "$T/p4" $common --metrics "$T/m4.jsonl"
losses() { sed -n 's/.*"type":"summary".*"epoch_loss":\[\([^]]*\)\].*/\1/p' "$1" | tr ',' ' '; }
l1=$(losses "$T/m1.jsonl")
l4=$(losses "$T/m4.jsonl")
echo "# losses 1 rank: $l1"
echo "# losses 4 ranks: $l4"
if [ -n "$l1" ] && [ "$(echo $l1 | wc -w)" = 3 ] && awk -v a="$l1" -v b="$l4" 'BEGIN {
        n = split(a, x, " "); m = split(b, y, " "); if (n != m) exit 1;
        for (i = 1; i <= n; i++) { d = x[i] - y[i]; if (d < 0) d = -d; if (d > 1e-5) exit 1 }
        exit 0 }'; then
    ok "1 rank and 4 ranks give the same losses within 1e-5"
else
    not_ok "1 rank and 4 ranks give the same losses within 1e-5"
fi

# --- invariant 1: same configuration, same ranks -> the same weights, bit for bit
run4() { $MPIRUN -np 4 "$HALO" train "$T/p4" --epochs 3 --batch 200 --no-table "$@"; }
# same_weights NAME OUT: passes when run OUT (stdout in $T/OUT, stderr in $T/OUT.err) ended with
# the parameter checksum of the reference run $T/a.
same_weights() {
    local mine ref
    mine=$(grep -o 'params [0-9a-f]*' "$T/$2")
    ref=$(grep -o 'params [0-9a-f]*' "$T/a")
    if [ -n "$mine" ] && [ "$mine" = "$ref" ]; then ok "$1 ($mine)"; else
        not_ok "$1"; sed 's/^/# /' "$T/$2" "$T/$2.err" | tail; fi
}
run4 --check >"$T/a" 2>"$T/a.err"
run4 --check >"$T/b" 2>"$T/b.err"
same_weights "the same run twice gives the same weights" b

run4 --netem lat=200us,bw=1Gbit >"$T/c" 2>"$T/c.err"
same_weights "an emulated network changes time, not weights" c

# --- invariant 2: a cache policy changes time and remote bytes, never the weights
POL="$(dirname "$0")/../../policies"
run4 --policy "$POL/massivegnn.lua" --set delta=3 --metrics "$T/mg.jsonl" >"$T/d" 2>"$T/d.err"
same_weights "the massivegnn cache policy gives the same weights" d
if grep -q '"cache_hits":[1-9]' "$T/mg.jsonl"; then ok "... and its cache is hit"; else
    not_ok "... and its cache is hit"; fi

# --- resume after a stop at epoch 2 reaches the uninterrupted run's weights bit for bit
check "uninterrupted 4 epochs" run4 --epochs 4 --checkpoint "$T/ckA" --metrics "$T/mA.jsonl"
check "stop after 2 epochs" run4 --epochs 2 --checkpoint "$T/ckB"
check "resume to 4 epochs" run4 --epochs 4 --checkpoint "$T/ckB" --resume --metrics "$T/mB.jsonl"
# only the remaining epochs ran: the resumed run's epoch records are epochs 2 and 3 (none of 0
# and 1), it says it started at epoch 2, and its batches are those of the uninterrupted run's
# epochs 2 and 3 (a resume that silently restarts from epoch 0 trains equal weights, since
# training is deterministic, but fails here)
# epochs_of FILE: the epoch numbers of rank 0's epoch records, one line
epochs_of() { grep '"type":"epoch"' "$1" | grep '"rank":0,' | grep -o '"epoch":[0-9]*' |
    cut -d: -f2 | tr '\n' ' '; }
# batches_of FILE FROM: batches of rank 0's epoch records of epochs >= FROM, summed
batches_of() { grep '"type":"epoch"' "$1" | grep '"rank":0,' |
    sed 's/.*"epoch":\([0-9]*\),.*"batches":\([0-9]*\),.*/\1 \2/' |
    awk -v from="$2" '$1 >= from { s += $2 } END { print s + 0 }'; }
eB=$(epochs_of "$T/mB.jsonl")
echo "# resumed run's epochs: $eB; uninterrupted: $(epochs_of "$T/mA.jsonl")"
check "the resumed run trained epochs 2 and 3 only" test "$eB" = "2 3 "
check "its summary starts at epoch 2" grep -q '"type":"summary".*"start_epoch":2,' "$T/mB.jsonl"
bA=$(batches_of "$T/mA.jsonl" 2)
bB=$(batches_of "$T/mB.jsonl" 0)
echo "# batches of epochs 2..3: uninterrupted $bA, resumed $bB"
check "its batches are the remaining epochs' ($bA)" test "$bA" -gt 0 -a "$bB" = "$bA"
stepsA=$(grep -o '"type":"summary".*"steps":[0-9]*' "$T/mA.jsonl" | grep -o '"steps":[0-9]*$')
stepsB=$(grep -o '"type":"summary".*"steps":[0-9]*' "$T/mB.jsonl" | grep -o '"steps":[0-9]*$')
check "it ends at the uninterrupted run's step ($stepsA)" test -n "$stepsA" -a "$stepsA" = "$stepsB"
if cmp -s "$T/ckA/params.f32" "$T/ckB/params.f32" && \
    cmp -s "$T/ckA/adam_m.f32" "$T/ckB/adam_m.f32" && cmp -s "$T/ckA/adam_v.f32" "$T/ckB/adam_v.f32"
then
    ok "resumed weights and Adam state equal the uninterrupted run's bit for bit"
else
    not_ok "resumed weights and Adam state equal the uninterrupted run's bit for bit"
fi

# --- the metrics file: DESIGN §5 schema (one epoch record per rank per epoch, eval, summary)
check "train with --metrics and --eval full" run4 --epochs 2 --eval full --metrics "$T/m.jsonl"
if [ -z "$PY" ]; then
    ok "metrics schema # SKIP no python3"
else
    check "metrics file has the DESIGN §5 schema" "$PY" - "$T/m.jsonl" <<'EOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
ep = [r for r in recs if r["type"] == "epoch"]
ev = [r for r in recs if r["type"] == "eval"]
sm = [r for r in recs if r["type"] == "summary"]
need = ["mode", "epoch", "rank", "ranks", "policy", "time_s", "sample_s", "fetch_s", "copy_s",
        "compute_s", "allreduce_s", "wait_s", "batches", "sampled_edges", "input_nodes",
        "remote_nodes", "cache_hits", "cache_misses", "bytes_remote", "loss"]
assert len(ep) == 2 * 4, len(ep)
for r in ep:
    missing = [k for k in need if k not in r]
    assert not missing, missing
    assert r["mode"] == "run" and r["ranks"] == 4 and r["batches"] > 0 and r["sampled_edges"] > 0
    # the stages' CPU work (polling excluded): positive, at most the stage's wall time
    for st in ("sample", "fetch", "compute"):
        assert 0 < r[st + "_cpu_s"] <= r[st + "_s"] * 1.02 + 1e-4, (st, r)
assert sorted((r["epoch"], r["rank"]) for r in ep) == [(e, k) for e in range(2) for k in range(4)]
assert len(ev) == 2 and all(0 <= r["val_acc"] <= 1 and 0 <= r["test_acc"] <= 1 for r in ev)
assert len(sm) == 1 and recs[-1]["type"] == "summary"
s = sm[0]
for k in ["epochs", "mean_epoch_s", "val_acc", "test_acc", "ranks", "device", "policy", "params"]:
    assert k in s, k
assert s["epochs"] == 2 and s["ranks"] == 4
EOF
fi

# --- bad input: a clear error said once for every rank, non-zero exit, no hang
# said_once PATTERN: passes when $T/err has exactly one line "halo: error: ...PATTERN" (every
# rank fails; the first says it, the others print nothing of the same error).
said_once() {
    if [ "$(grep -cE "^halo: error: .*$1" "$T/err")" -eq 1 ]; then
        ok "... said once for every rank"
    else
        not_ok "... said once for every rank"; sed 's/^/# /' "$T/err" | head -8
    fi
}
check_fails "a checkpoint of another configuration is refused" "another configuration" \
    run4 --epochs 4 --batch 100 --checkpoint "$T/ckB" --resume
said_once "another configuration"
check "generate another graph" "$HALO" gen sbm -n 2000 -F 16 -C 8 -s 9 -o "$T/g2"
check "partition it into 4" "$HALO" partition "$T/g2" --parts 4 -o "$T/q4"
check_fails "a checkpoint of another graph is refused" "another configuration" \
    $MPIRUN -np 4 "$HALO" train "$T/q4" --epochs 4 --batch 200 --checkpoint "$T/ckB" --resume
cp -r "$T/p4" "$T/mix"
rm -rf "$T/mix/part-1"
cp -r "$T/q4/part-1" "$T/mix/part-1"
check_fails "a part of another graph is named" "rank 1: .*part-1" \
    $MPIRUN -np 4 "$HALO" train "$T/mix" --epochs 1
check_fails "wrong rank count" "4 parts but 2 ranks" $MPIRUN -np 2 "$HALO" train "$T/p4"
said_once "4 parts but 2 ranks"
check_fails "--batch 0" "--batch" $MPIRUN -np 4 "$HALO" train "$T/p4" --batch 0
said_once "--batch: must be"
# a negative count is refused where flags are parsed, before MPI starts (the launcher's rank 0
# says it, once)
check_fails "--epochs -1" "--epochs: -1 is negative" $MPIRUN -np 4 "$HALO" train "$T/p4" --epochs -1
said_once "--epochs: -1 is negative"
# ... even when rank 0 comes last: mpirun ends the job at the first non-zero exit, so the other
# ranks must wait for rank 0 to say it (a slow rank 0 made by mpirun's MPMD form)
check_fails "a bad flag is said when rank 0 starts last" "--epochs: -1 is negative" \
    $MPIRUN -np 1 sh -c "sleep 2; exec '$HALO' train '$T/p4' --epochs -1" : \
    -np 3 "$HALO" train "$T/p4" --epochs -1
said_once "--epochs: -1 is negative"
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
    ok "--device gpu with no GPU # SKIP a GPU is present"
else
    check_fails "--device gpu with no GPU" "no GPU" $MPIRUN -np 4 "$HALO" train "$T/p4" --device gpu
    said_once "no GPU"
fi

done_testing
