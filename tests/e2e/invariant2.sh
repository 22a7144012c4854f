# Invariant 2 (docs/design.md): neither the pipeline depth nor the cache changes what is trained.
# Every shipped cache policy (and distdgl, which has none) at depths 0, 2 and 4 on a tiny graph,
# 2 ranks, 1 epoch, trains the weights of the run without any policy at depth 0, bit for bit;
# each policy makes the same cache hits, misses and evictions at every depth; its cache is used
# on every rank (massivegnn and the demand policies also evict there, so replacement is
# exercised, not only lookups).
. "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN="timeout -k 5 60 mpirun --timeout 50 --oversubscribe --bind-to none"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

check "generate a tiny sbm graph" "$HALO" gen sbm -n 800 -F 8 -C 4 -s 7 -o "$T/g"
check "partition into 2" "$HALO" partition "$T/g" --parts 2 -o "$T/p"

# run OUT ARGS...: 2 ranks, 1 epoch of 6 batches; stdout in $T/OUT, metrics in $T/OUT.jsonl
run() {
    local out=$1
    shift
    $MPIRUN -np 2 "$HALO" train "$T/p" --epochs 1 --batch 40 --fanouts 3,5 --no-table \
        --eval none --metrics "$T/$out.jsonl" "$@" >"$T/$out" 2>"$T/$out.err"
}
params() { grep -o 'params [0-9a-f]*' "$T/$1"; }
# the cache counters of every epoch record (rank order), one line
counts() {
    grep -o '"cache_hits":[0-9]*,"cache_misses":[0-9]*,"cache_evicted":[0-9]*' "$T/$1.jsonl" |
        tr '\n' ' '
}
# least / most RUN KEY: the smallest / largest value of KEY over the run's epoch records (ranks)
least() { grep -o "\"$2\":[0-9]*" "$T/$1.jsonl" | awk -F: 'NR == 1 || $2 < m { m = $2 } END { print m + 0 }'; }
most() { grep -o "\"$2\":[0-9]*" "$T/$1.jsonl" | awk -F: '$2 > m { m = $2 } END { print m + 0 }'; }

run ref --depth 0
ref=$(params ref)
if [ -n "$ref" ]; then ok "reference run without a policy ($ref)"; else
    not_ok "reference run without a policy"; sed 's/^/# /' "$T/ref.err" | tail; fi

for pol in distdgl pagraph massivegnn lru fifo lfu vip belady; do
    args=(--policy "$ROOT/policies/$pol.lua")
    # massivegnn: a short eviction period and a fast decay, so slots are replaced in one epoch
    [ $pol = massivegnn ] && args+=(--set delta=2 --set alpha=0.3)
    for d in 0 2 4; do
        run "$pol.$d" --depth $d "${args[@]}"
        mine=$(params "$pol.$d")
        if [ -n "$ref" ] && [ "$mine" = "$ref" ]; then ok "$pol, depth $d: the reference weights"
        else
            not_ok "$pol, depth $d: the reference weights ($mine vs $ref)"
            sed 's/^/# /' "$T/$pol.$d.err" | tail -n 5
        fi
    done
    c0=$(counts "$pol.0")
    if [ -n "$c0" ] && [ "$(counts "$pol.2")" = "$c0" ] && [ "$(counts "$pol.4")" = "$c0" ]; then
        ok "$pol: depths 2 and 4 make the cache hits, misses and evictions of depth 0"
    else
        not_ok "$pol: depths 2 and 4 make the cache counts of depth 0"
        echo "# depth 0: $c0"; echo "# depth 2: $(counts "$pol.2")"; echo "# depth 4: $(counts "$pol.4")"
    fi
    # per rank (each record is one rank's epoch): a policy that skipped one rank's admissions,
    # or its whole cache, is seen here, though the weights stay those of the reference
    hits=$(least "$pol.0" cache_hits)
    evicted=$(least "$pol.0" cache_evicted)
    echo "# $pol: at least $hits hits and $evicted evictions on every rank"
    case $pol in
    distdgl)
        check "distdgl has no cache (no hits on any rank)" test "$(most distdgl.0 cache_hits)" -eq 0 ;;
    *)
        check "$pol: its cache is hit on every rank" test "$hits" -gt 0 ;;
    esac
    case $pol in
    massivegnn | lru | fifo | lfu | belady)
        check "$pol: slots are replaced on every rank" test "$evicted" -gt 0 ;;
    esac
done
done_testing
