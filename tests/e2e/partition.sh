#!/usr/bin/env bash
# End-to-end: halo partition with every method, halo info on the result, and bad input.
source "$(dirname "$0")/lib.sh"

G=$T/g
if ! "$HALO" gen sbm -n 3000 -C 6 -o "$G" >/dev/null 2>&1; then
    not_ok "halo gen sbm makes the input graph"
    done_testing
    exit 1
fi

check "metis into 4 parts" "$HALO" partition "$G" --parts 4 -o "$T/metis"
check_out "info prints the partition table" "^ +3 +3 +[0-9]+" "$HALO" info "$T/metis"
check_out "info prints the balance of every constraint" \
    "balance +nodes 1\.0[0-5][0-9], train 1\.0[0-9]+, edges 1\.0[0-9]+" "$HALO" info "$T/metis"
check "partition.json records ranges, cut, balance and checksum" \
    grep -q '"edge_cut_fraction"' "$T/metis/partition.json"
P3=$T/metis/part-3
check "part-3 has every array" test -s "$P3/indices.i32" -a -s "$P3/halo.i32" \
    -a -s "$P3/train.i32" -a -s "$P3/meta.json" -a -s "$T/metis/orig_id.i64"
check "repartitioning the same graph in place works" \
    "$HALO" partition "$G" --parts 2 --constraints nodes,edges --objective vol -o "$T/metis"
check_out "the second run replaced the first" "2 \(2 machines x 1 trainer\)" \
    "$HALO" info "$T/metis"
check "random" "$HALO" partition "$G" --parts 3 --method random -o "$T/random"
check "sorted rows on request" "$HALO" partition "$G" --parts 2 --sort-rows -o "$T/sorted"
check "rows_sorted recorded" grep -q '"rows_sorted": true' "$T/sorted/partition.json"
check "stream ldg" "$HALO" partition "$G" --parts 8 --method stream -o "$T/ldg"
check "stream fennel" \
    "$HALO" partition "$G" --parts 4 --method stream --stream fennel -o "$T/fennel"
check "multilevel 2 machines x 2 trainers" \
    "$HALO" partition "$G" --method multilevel --machines 2 --trainers-per-part 2 -o "$T/ml"
check_out "multilevel records each part's machine" "^ +3 +1 " "$HALO" info "$T/ml"
check_out "multilevel borrows no seeds from the other machine" "train_borrowed_other_machine" \
    cat "$T/ml/partition.json"
check "multilevel borrowed_other_machine is all zero" \
    bash -c "tr -d ' \n' < '$T/ml/partition.json' |
             grep -q '\"train_borrowed_other_machine\":\[0,0,0,0\]'"
check "P = 1 needs no METIS" "$HALO" partition "$G" --parts 1 -o "$T/one"

# Acceptance 1 at small scale: a products-like graph, 4 parts, every balance <= 1.05 and a
# METIS cut under 40% of random's.
cut() { tr -d ' \n' <"$1/partition.json" | sed -E 's/.*"edge_cut":([0-9]+).*/\1/'; }
"$HALO" gen --preset products --scale 0.01 -o "$T/prod" >/dev/null 2>&1
check "metis on products-like" "$HALO" partition "$T/prod" --parts 4 -o "$T/m4"
check "random on products-like" "$HALO" partition "$T/prod" --parts 4 --method random -o "$T/r4"
check "metis cuts under 40% of random's edges" \
    test "$(cut "$T/m4")" -lt $(($(cut "$T/r4") * 4 / 10))
B='(1\.0[0-4][0-9]|1\.050)'
check_out "every balance constraint within 1.05" "balance +nodes $B, train $B, edges $B" \
    "$HALO" info "$T/m4"

check_fails "P < 1 is refused" "--parts must be >= 1" "$HALO" partition "$G" --parts 0 -o "$T/bad"
check_fails "P > nodes is refused" "5000 parts for a graph of 3000 nodes" \
    "$HALO" partition "$G" --parts 5000 -o "$T/bad"
check_fails "parts not M x G is refused" "--parts 4 != --machines 3" \
    "$HALO" partition "$G" --parts 4 --machines 3 -o "$T/bad"
check_fails "unknown method is refused" "'louvain' is not one of" \
    "$HALO" partition "$G" --parts 2 --method louvain -o "$T/bad"
check_fails "unknown constraint is refused" "'labels' is not one of nodes, train, edges" \
    "$HALO" partition "$G" --parts 2 --constraints nodes,labels -o "$T/bad"
check_fails "custom without a policy is refused" "custom needs a policy" \
    "$HALO" partition "$G" --parts 2 --method custom -o "$T/bad"
check_fails "missing -o is refused" "-o PDIR is required" "$HALO" partition "$G" --parts 2
check_fails "metis beyond the memory it may use is refused before it starts" \
    "METIS would need about .* more than the .* available \(use --method stream\)" \
    env HALO_METIS_MAX_BYTES=1000000 "$HALO" partition "$G" --parts 4 -o "$T/bad"
check "no output was left behind by refused runs" test ! -e "$T/bad"

"$HALO" gen sbm -n 2000 -C 6 -s 9 -o "$T/g2" >/dev/null 2>&1
check_fails "a directory holding another graph's partition is refused" "another graph" \
    "$HALO" partition "$T/g2" --parts 2 -o "$T/random"
check_out "the refused directory still holds the first graph's partition" "3 \(3 machines" \
    "$HALO" info "$T/random"
check "--force replaces it" "$HALO" partition "$T/g2" --parts 2 --force -o "$T/random"

# The partition(g) hook of a policy makes the same choice the flags make.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
check "policies/distdgl.lua partitions with METIS" \
    "$HALO" partition "$G" --parts 3 --policy "$ROOT/policies/distdgl.lua" -o "$T/pol"
check "partition.json records the policy and its method" \
    grep -q '"policy": ".*distdgl.lua"' "$T/pol/partition.json"
check_out "distdglv2.lua partitions in two levels" "multilevel" \
    bash -c "'$HALO' partition '$G' --parts 4 --policy '$ROOT/policies/distdglv2.lua' \
             --set trainers_per_machine=2 -o '$T/pol2' 2>&1 && grep '\"machines\": 2' '$T/pol2/partition.json' && grep -o multilevel '$T/pol2/partition.json'"
cat >"$T/custom.lua" <<'EOF2'
return {
    partition = function(g)
        local a = halo.array("int32", g.nodes, 0)
        a:set_at(halo.range(g.nodes // 2), 1)   -- first half on part 1, the rest on part 0
        return { method = "custom", parts = 2, assign = a }
    end,
}
EOF2
check "a custom assignment from a policy" "$HALO" partition "$G" --parts 2 --policy "$T/custom.lua" -o "$T/cust"
check "the custom assignment puts the first half of the input nodes on part 1" python3 -c "
import struct, sys
d = open('$T/cust/orig_id.i64', 'rb').read()
ids = struct.unpack('<%dq' % (len(d) // 8), d)
sys.exit(0 if list(ids[1500:]) == list(range(1500)) and sorted(ids[:1500]) == list(range(1500, 3000)) else 1)"
cat >"$T/short.lua" <<'EOF2'
return { partition = function(g) return { method = "custom", assign = halo.array("int32", g.nodes - 1, 0) } end }
EOF2
check_fails "an assignment of the wrong length is refused" "short.lua:1: hook partition: assign has 2999 entries" \
    "$HALO" partition "$G" --parts 2 --policy "$T/short.lua" -o "$T/short"
cat >"$T/range.lua" <<'EOF2'
return { partition = function(g) return { method = "custom", parts = 2, assign = halo.array("int32", g.nodes, 2) } end }
EOF2
check_fails "a part id out of range is refused" "range.lua:1: hook partition: assign\[0\] is 2, expected an integer in \[0, 1\]" \
    "$HALO" partition "$G" --parts 2 --policy "$T/range.lua" -o "$T/range"
cat >"$T/empty.lua" <<'EOF2'
return { partition = function(g) return { method = "custom", parts = 3, assign = halo.array("int32", g.nodes, 0):set_at(halo.range(g.nodes // 2), 2) } end }
EOF2
check_fails "an assignment that leaves a part empty is refused" "empty.lua:1: hook partition: assign leaves part 1 of 3 without a node" \
    "$HALO" partition "$G" --parts 3 --policy "$T/empty.lua" -o "$T/empty"
check "refused policies leave no output" test ! -e "$T/short" -a ! -e "$T/range" -a ! -e "$T/empty"

cp -r "$G" "$T/corrupt"
truncate -s 100 "$T/corrupt/indices.i32"
check_fails "a corrupt graph is refused" "indices.i32" \
    "$HALO" partition "$T/corrupt" --parts 2 -o "$T/bad"
check_fails "a missing graph is refused" "meta.json" \
    "$HALO" partition "$T/nothing" --parts 2 -o "$T/bad"
check "no temporary directories are left" bash -c "! ls -d '$T'/*.tmp-* 2>/dev/null | grep -q ."
check_out "--help lists the flags" "trainers G .*also.*--trainers-per-part" "$HALO" partition --help

done_testing
