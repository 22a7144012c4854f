# The asynchronous pipeline under mpirun -np 4 (docs/pipeline.md): the weights do not depend on
# the depth (invariant 2), with and without a cache policy; a stress run (tiny batches, queues of
# one, random delays in every stage, TCP, several sampling threads) gives the same weights and no
# hang; a Lua error on the fetch thread of one rank ends every rank with its message; the
# timeline file is drawn.
. "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN="timeout -k 5 120 mpirun --timeout 110 --oversubscribe --bind-to none"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

check "generate an sbm graph" "$HALO" gen sbm -n 3000 -F 16 -C 8 -s 5 -o "$T/g"
check "partition into 4" "$HALO" partition "$T/g" --parts 4 -o "$T/p4"

# run4 OUT ARGS...: 4 ranks, stdout in $T/OUT, stderr in $T/OUT.err
run4() {
    local out=$1
    shift
    $MPIRUN -np 4 "$HALO" train "$T/p4" --epochs 2 --batch 48 --no-table --eval none "$@" \
        >"$T/$out" 2>"$T/$out.err"
}
params() { grep -o 'params [0-9a-f]*' "$T/$1"; }
# same_weights NAME OUT REF: passes when run OUT ended with the checksum of run REF
same_weights() {
    local mine ref
    mine=$(params "$2")
    ref=$(params "$3")
    if [ -n "$mine" ] && [ "$mine" = "$ref" ]; then ok "$1 ($mine)"; else
        not_ok "$1 ($mine vs $ref)"; sed 's/^/# /' "$T/$2" "$T/$2.err" | tail; fi
}

# --- invariant 2: depth changes time, never results (bitwise on the CPU)
for pol in default massivegnn; do
    polargs=()
    [ $pol = massivegnn ] && polargs=(--policy "$ROOT/policies/massivegnn.lua" --set delta=4)
    for d in 0 1 2 4 8; do
        run4 "$pol.$d" --depth $d "${polargs[@]}" --metrics "$T/$pol.$d.jsonl"
        same_weights "$pol: depth $d trains the weights of depth 0" "$pol.$d" "$pol.0"
    done
    counts() { grep -o '"cache_hits":[0-9]*,"cache_misses":[0-9]*' "$T/$1.jsonl" | tr '\n' ' '; }
    if [ -n "$(counts $pol.0)" ] && [ "$(counts $pol.4)" = "$(counts $pol.0)" ]; then
        ok "$pol: depth 4 makes the cache hits and misses of depth 0"
    else
        not_ok "$pol: depth 4 makes the cache hits and misses of depth 0"
    fi
done
grep -q '"cache_hits":[1-9]' "$T/massivegnn.0.jsonl" && ok "massivegnn's cache is used" ||
    not_ok "massivegnn's cache is used"
check "the log names the depth" grep -q "pipeline depth 4" "$T/default.4.err"

# --- the GPU's copy stage (a third stage: rows, blocks and labels staged per slot and copied),
# forced on the CPU: the same weights at depths 0 and 2, copy_s reported; without it copy_s is 0
for d in 0 2; do
    HALO_COPY_STAGE=1 run4 "copy.$d" --depth $d --metrics "$T/copy.$d.jsonl" \
        --timeline "$T/copy.$d.tl"
    same_weights "copy stage on the CPU: depth $d trains the weights of depth 0" "copy.$d" \
        "default.0"
done
copy_s() { grep -o '"copy_s":[0-9.e+-]*' "$T/$1.jsonl" | sort -u | tr '\n' ' '; }
if grep -q '"stage":"copy"' "$T/copy.2.tl" && copy_s copy.2 | grep -q '"copy_s":[0-9.]*[1-9]'; then
    ok "copy stage: its intervals in the timeline, copy_s in the records ($(copy_s copy.2 | cut -c1-60))"
else
    not_ok "copy stage: its intervals in the timeline, copy_s in the records"
fi
if [ "$(copy_s default.2)" = '"copy_s":0 ' ]; then ok "no copy stage on the CPU: copy_s is 0"; else
    not_ok "no copy stage on the CPU: copy_s is 0 ($(copy_s default.2))"; fi

# --- stress: many tiny batches, queues of one, random delays, TCP, three sampling threads
export HALO_PIPE_JITTER_US=400 HALO_PIPE_QUEUE_LEN=1
for d in 0 1 3; do
    $MPIRUN -np 4 --mca btl tcp,self "$HALO" train "$T/p4" --epochs 1 --batch 8 --no-table \
        --eval none --depth $d --sampler-threads 3 --policy "$ROOT/policies/massivegnn.lua" \
        --set delta=4 >"$T/stress.$d" 2>"$T/stress.$d.err"
    same_weights "stress (batch 8, queue 1, delays, tcp, 3 samplers): depth $d" "stress.$d" \
        "stress.0"
done
unset HALO_PIPE_JITTER_US HALO_PIPE_QUEUE_LEN

# --- invariant 5: a Lua error on rank 2's fetch thread ends every rank with its message
cat >"$T/fail.lua" <<'EOF'
return {
    name = "failing",
    params = { fail_rank = 2, fail_batch = 5 },
    cache_init = function(ctx)
        local k = math.min(8, ctx.halo.n)
        return { capacity = k, ids = ctx.halo.ids:slice(0, k) }
    end,
    cache_batch = function(ctx, b)
        if ctx.rank == ctx.params.fail_rank and b.batch == ctx.params.fail_batch then
            error("cache policy broke on purpose")
        end
        return nil
    end,
}
EOF
for d in 0 1 4; do
    SECONDS=0
    run4 "fail.$d" --depth $d --policy "$T/fail.lua"
    rc=$?
    if [ $rc -ne 0 ] && [ $rc -lt 124 ] && [ $SECONDS -lt 60 ] &&
        grep -q "rank 2: fetch stage, batch 5: .*fail.lua:10: cache policy broke on purpose" \
            "$T/fail.$d.err" &&
        [ "$(grep -c "error:" "$T/fail.$d.err")" = 1 ]; then
        ok "depth $d: a Lua error on one rank's fetch thread ends all 4 ranks with its message, said once"
    else
        not_ok "depth $d: a Lua error on one rank's fetch thread ends all 4 ranks (exit $rc)"
        sed 's/^/# /' "$T/fail.$d.err" | tail
    fi
done

# --- the timeline: every rank, batch and stage, drawn by halo timeline
run4 tl --depth 2 --timeline "$T/tl.jsonl"
check "a timeline run trains the same weights" \
    [ -n "$(params tl)" -a "$(params tl)" = "$(params default.0)" ]
# 3000 nodes, 4 parts: 2 epochs x 4 ranks x batches x 4 stages (sample, fetch, compute, allreduce)
nb=$(grep -c '"rank":0,"epoch":0,.*"stage":"compute"' "$T/tl.jsonl")
check "the timeline has 4 stages per rank, epoch and batch" \
    [ "$(wc -l <"$T/tl.jsonl")" -eq $((2 * 4 * nb * 4)) ]
check_out "halo timeline draws it" "wrote .*tl.png" "$HALO" timeline "$T/tl.jsonl" -o "$T/tl.png"
check_fails "--depth out of range is refused" "--depth: must be in 0..64" \
    $MPIRUN -np 2 "$HALO" train "$T/p4" --depth 65
done_testing
