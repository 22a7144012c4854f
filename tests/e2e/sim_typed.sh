#!/usr/bin/env bash
# halo sim on a typed partition (docs/sim.md, "Typed graphs"): the counts of a simulation equal
# the runtime's field by field, per rank and epoch, with the per-type fields (input and remote
# input nodes by node type, sampled edges by relation) — RGCN with per-relation fanouts from the
# flag and from the policy's fanout hook, with and without MassiveGNN's cache, at depths 0 and 2
# — and the embedding rows it gathers are the runtime's featureless input nodes.
cd "$(dirname "$0")/../.."
. tests/e2e/lib.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN="mpirun --timeout 200 --oversubscribe --bind-to none"
P=policies
F='cites=5,*=3;*=4'

check "generate a small mag graph" "$HALO" gen --preset mag --scale 0.01 -o "$T/g"
check "partition it into 4" "$HALO" partition "$T/g" --parts 4 -o "$T/p4"

# the policy of the fanout hook's form: layer 0 a table per relation, layer 1 a number
cat >"$T/tables.lua" <<'EOF'
return {
    name = "tables",
    fanout = function(ctx)
        if ctx.graph.relations == nil then return { 5, 4 } end
        return { { cites = 5, ["*"] = 3 }, 4 }
    end,
}
EOF

# embed_rows_equal NAME A B: per record, the simulator's embed_rows (embed_remote_rows) equal
# the runtime's input (remote input) nodes of the featureless types, and are not all zero.
embed_rows_equal() {
    if python3 - "$T/p4/partition.json" "$2" "$3" <<'EOF'; then ok "$1"; else not_ok "$1"; fi
import json, sys
types = json.load(open(sys.argv[1]))["node_types"]
featless = [t["name"] for t in types if t["feat_dim"] == 0]
def recs(path):
    out = {}
    for line in open(path):
        r = json.loads(line)
        if r.get("type") == "epoch":
            out[(r["epoch"], r["rank"])] = r
    return out
a, b = recs(sys.argv[2]), recs(sys.argv[3])
assert a.keys() == b.keys() and a, "different records"
total = 0
for k in a:
    rows = sum(a[k]["input_nodes_per_type"][t] for t in featless)
    remote = sum(a[k]["remote_nodes_per_type"][t] for t in featless)
    if b[k]["embed_rows"] != rows or b[k]["embed_remote_rows"] != remote:
        print("# epoch %d rank %d: runtime %d (%d remote), sim %d (%d)" %
              (k + (rows, remote, b[k]["embed_rows"], b[k]["embed_remote_rows"])))
        sys.exit(1)
    total += rows
print("# %d featureless input rows gathered in all" % total)
sys.exit(0 if total > 0 else 1)
EOF
}

# same_counts NAME FLAGS...: train on 4 ranks and simulate the same flags; every count, the 9
# fields and the 16 per-type ones (4 node types twice, 8 relations), must agree.
same_counts() {
    local name=$1
    shift
    rm -f "$T/a.jsonl" "$T/b.jsonl"
    if ! $MPIRUN -np 4 "$HALO" train "$T/p4" --model rgcn --no-table --eval none --epochs 2 \
        --batch 400 --hidden 16 --threads 1 --metrics "$T/a.jsonl" "$@" >"$T/train.out" 2>&1; then
        not_ok "$name: train ran"; sed 's/^/# /' "$T/train.out" | tail -n 10; return
    fi
    if "$HALO" sim "$T/p4" -q --model rgcn --epochs 2 --batch 400 --hidden 16 \
        --metrics "$T/b.jsonl" --against "$T/a.jsonl" "$@" >"$T/sim.out" 2>&1 &&
        grep -q "^counts: equal (8 records x 25 fields" "$T/sim.out"; then
        ok "$name: simulated counts equal the runtime's"
    else
        not_ok "$name: simulated counts equal the runtime's"; sed 's/^/# /' "$T/sim.out" | tail -n 10
    fi
    embed_rows_equal "$name: embedding rows are the runtime's featureless input nodes" \
        "$T/a.jsonl" "$T/b.jsonl"
}

same_counts "rgcn, --fanouts per relation" --fanouts "$F" --depth 0
same_counts "rgcn, plain --fanouts (each number for every relation)" --fanouts 4,3 --depth 0
same_counts "rgcn, massivegnn with evictions, depth 2" --fanouts "$F" --policy $P/massivegnn.lua \
    --set delta=2 --depth 2
same_counts "rgcn, the fanout hook's relation tables" --policy "$T/tables.lua"

# the cache really worked in the massivegnn case: rerun its simulation, hits > 0
if "$HALO" sim "$T/p4" -q --model rgcn --epochs 2 --batch 400 --fanouts "$F" \
    --policy $P/massivegnn.lua --set delta=2 >"$T/mg.out" 2>&1 &&
    grep -q 'hit rate 0\.[0-9]*[1-9]' "$T/mg.out"; then
    ok "the massivegnn case has cache hits"
else
    not_ok "the massivegnn case has cache hits"; sed 's/^/# /' "$T/mg.out" | tail -n 5
fi

# the hook's tables and the same --fanouts sample the same (the hook's form is replayed)
"$HALO" sim "$T/p4" -q --epochs 1 --batch 400 --policy "$T/tables.lua" >"$T/h.out" 2>&1
"$HALO" sim "$T/p4" -q --epochs 1 --batch 400 --fanouts "$F" >"$T/f.out" 2>&1
if [ -n "$(grep -o 'sampled edges [0-9]*' "$T/h.out")" ] &&
    [ "$(grep -o 'sampled edges [0-9]*' "$T/h.out")" = "$(grep -o 'sampled edges [0-9]*' "$T/f.out")" ]; then
    ok "the hook's relation tables sample what the same --fanouts does"
else
    not_ok "the hook's relation tables sample what the same --fanouts does"
fi

# a simulation that counted one relation wrong is caught
sed 's/"rev_cites":\([0-9]*\)/"rev_cites":1\1/' "$T/a.jsonl" >"$T/bad.jsonl"
check_fails "a wrong per-relation count is reported" \
    "counts differ.*sampled_edges_per_relation.rev_cites" \
    "$HALO" sim "$T/p4" -q --model rgcn --epochs 2 --batch 400 --policy "$T/tables.lua" \
    --metrics "$T/c.jsonl" --against "$T/bad.jsonl"

# bad relation names: the trainer's line
check_fails "--fanouts naming no relation" "--fanouts: no relation 'wrote'" \
    "$HALO" sim "$T/p4" -q --fanouts 'wrote=5;*=4'
sed 's/cites = 5/wrote = 5/' "$T/tables.lua" >"$T/badrel.lua"
check_fails "the hook naming no relation" "hook fanout \(epoch 0\) returned .*no relation 'wrote'" \
    "$HALO" sim "$T/p4" -q --policy "$T/badrel.lua"
check_fails "--model neither sage, rgcn nor gat" "--model" "$HALO" sim "$T/p4" -q --model gcn

# with a profile the embedding exchange is timed (the run ends, the epoch has a time)
check_out "a typed simulation with a profile is timed" "mean epoch [0-9.]+ s" \
    "$HALO" sim "$T/p4" -q --model rgcn --fanouts "$F" --epochs 1 --batch 400 \
    --cluster experiments/clusters/perlmutter.lua --machines 2 --trainers 2 --depth 2

# a default simulated RGCN run replays a default trained one: both take the model's defaults
# (batch 500, hidden 64 for RGCN) from one rule, so the counts are equal without --batch
check "generate a tiny mag graph" "$HALO" gen --preset mag --scale 0.005 -o "$T/g2"
check "partition it into 2" "$HALO" partition "$T/g2" --parts 2 -o "$T/p2"
rm -f "$T/a.jsonl" "$T/b.jsonl"
if $MPIRUN -np 2 "$HALO" train "$T/p2" --model rgcn --no-table --eval none --epochs 1 \
    --threads 1 --metrics "$T/a.jsonl" >"$T/train.out" 2>&1; then
    check_out "default rgcn: simulated counts equal the runtime's" "^counts: equal" \
        "$HALO" sim "$T/p2" -q --model rgcn --epochs 1 --metrics "$T/b.jsonl" --against "$T/a.jsonl"
else
    not_ok "default rgcn: train ran"; sed 's/^/# /' "$T/train.out" | tail -n 10
fi
# and the compute model takes the model's hidden width: the default times are those of
# --hidden 64 --batch 500, not of GraphSAGE's 16 and 2000
C="--cluster experiments/clusters/perlmutter.lua --machines 1 --trainers 2 --epochs 1 -q"
# shellcheck disable=SC2086
"$HALO" sim "$T/p2" --model rgcn $C >"$T/d.out" 2>&1
# shellcheck disable=SC2086
"$HALO" sim "$T/p2" --model rgcn $C --hidden 64 --batch 500 >"$T/e.out" 2>&1
# shellcheck disable=SC2086
"$HALO" sim "$T/p2" --model rgcn $C --hidden 16 --batch 500 >"$T/s.out" 2>&1
d=$(grep -o 'mean epoch [0-9.]* s.*' "$T/d.out")
if [ -n "$d" ] && [ "$d" = "$(grep -o 'mean epoch [0-9.]* s.*' "$T/e.out")" ] &&
    [ "$d" != "$(grep -o 'mean epoch [0-9.]* s.*' "$T/s.out")" ]; then
    ok "default rgcn: the simulated times are those of hidden 64, batch 500"
else
    not_ok "default rgcn: the simulated times are those of hidden 64, batch 500"
    sed 's/^/# /' "$T/d.out" "$T/e.out" "$T/s.out" | tail -n 9
fi
done_testing
