#!/usr/bin/env bash
# End-to-end: halo trace record / replay over a partition, the hit-rate table of every policy
# against Belady's bound, a training run's trace (when halo train has --trace), and bad input.
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN="timeout -k 5 120 mpirun --oversubscribe --bind-to none"

G=$T/g
P=$T/p
if ! "$HALO" gen sbm -n 4000 -C 4 -o "$G" >/dev/null 2>&1 ||
    ! "$HALO" partition "$G" --parts 3 -o "$P" >/dev/null 2>&1; then
    not_ok "halo gen + partition make the input"
    done_testing
    exit 1
fi

check_out "record writes a trace of every rank" "recorded .*3 ranks, 2 epochs" \
    "$HALO" trace record "$P" -o "$T/t.trc" --fanouts 5,10 --batch 300 --epochs 2
check "the trace starts with its magic" grep -q '^HALOTRC1' <(head -c 8 "$T/t.trc")

"$HALO" trace replay "$T/t.trc" --policies all --capacities 0.1,0.5 >"$T/table" 2>"$T/err"
check "replay --policies all runs" test -s "$T/table"
for p in belady pagraph vip fifo lru lfu massivegnn; do
    check "the table has $p at both capacities" \
        test "$(grep -cE "^0\.[15] +$p " "$T/table")" -eq 2
done
check "belady is 1.000 of itself" test "$(grep -cE ' belady .* 1\.000 ' "$T/table")" -eq 2
# no demand policy beats Belady's hit rate at the same capacity (massivegnn may prefetch)
check "belady bounds every demand policy" awk '
    $2 == "belady" { b[$1] = $4 }
    $2 ~ /^(pagraph|vip|fifo|lru|lfu)$/ && $4 > b[$1] + 1e-9 { bad = 1 }
    END { exit bad }' "$T/table"
check "a cache pulls fewer bytes than none" awk '
    $2 == "pagraph" && $1 == "0.5" { found = 1; if ($7 >= 1) { exit 1 } }
    END { exit !found }' "$T/table"
check_out "one policy with --set" "^- +massivegnn " \
    "$HALO" trace replay "$T/t.trc" --policy policies/massivegnn.lua --set f=0.3 \
    --set delta=2
# row CAP POLICY < TABLE: the row's slots, hit rate and remote MB (by column name: the timing
# column differs between runs), empty when the table has no such row
row() { awk -v cap="$1" -v pol="$2" '$1 == "capacity" { for (i = 1; i <= NF; i++) c[$i] = i }
    $1 == cap && $2 == pol { print $c["slots"], $c["hit_rate"], $c["remote_MB"] }'; }
want=$(row 0.1 lru <"$T/table")
"$HALO" trace replay "$T/t.trc" --policy lru --capacities 0.1 >"$T/again" 2>&1
got=$(row 0.1 lru <"$T/again")
check "replay is deterministic ($want)" test -n "$want" -a "$got" = "$want"

# a training run's trace replays to the hit counts the run reported
if "$HALO" train --help 2>/dev/null | grep -q -- '--trace'; then
    check "train --trace under mpirun" $MPIRUN -np 3 "$HALO" train "$P" --epochs 1 --batch 400 \
        --eval none --no-table --policy policies/massivegnn.lua --set delta=3 \
        --metrics "$T/m.jsonl" --trace "$T/run"
    hits=$(grep '"type": *"epoch"' "$T/m.jsonl" | grep -o '"cache_hits": *[0-9]*' |
        awk -F: '{s += $2} END {print s}')
    check "the run's trace has one file per rank" test -s "$T/run.r0" -a -s "$T/run.r1" -a -s "$T/run.r2"
    "$HALO" trace replay "$T/run" --policy policies/massivegnn.lua --set delta=3 >"$T/rt" 2>&1
    rate=$(awk '$2 == "massivegnn" {print $4}' "$T/rt")
    misses=$(grep '"type": *"epoch"' "$T/m.jsonl" | grep -o '"cache_misses": *[0-9]*' |
        awk -F: '{s += $2} END {print s}')
    want=$(awk -v h="$hits" -v m="$misses" 'BEGIN { printf "%.4f", h / (h + m) }')
    check "replay reproduces the run's hit rate ($want)" test "$rate" = "$want"
    # trace record draws the trainer's batches (its epoch order and sampling keys): the same
    # lookups, so any policy replays both traces to the same hits and misses
    "$HALO" trace record "$P" -o "$T/rec.trc" --batch 400 --epochs 1 >/dev/null 2>&1
    hm() { "$HALO" trace replay "$1" --policy lru --capacities 0.1 2>&1 |
        awk '$1 == "capacity" { for (i = 1; i <= NF; i++) c[$i] = i }
             $2 == "lru" { print $c["hits"], $c["misses"] }'; }
    a=$(hm "$T/run") b=$(hm "$T/rec.trc")
    check "trace record's batches are the run's (lru hits, misses: $b)" test -n "$a" -a "$a" = "$b"
else
    ok "# SKIP halo train has no --trace yet (docs/cache.md has the patch)"
fi

# bad input
check_fails "missing trace" "no such trace" "$HALO" trace replay "$T/none" --policy lru
head -c 100 "$T/t.trc" >"$T/short.trc"
check_fails "truncated trace" "truncated" "$HALO" trace replay "$T/short.trc" --policy lru
printf 'not a trace at all, just some text here.....' >"$T/text.trc"
check_fails "not a trace" "bad magic" "$HALO" trace replay "$T/text.trc" --policy lru
check_fails "unknown policy" "nosuch" "$HALO" trace replay "$T/t.trc" --policy nosuch
check_fails "capacity out of range" "capacity 2 is not a fraction" \
    "$HALO" trace replay "$T/t.trc" --policy lru --capacities 2
check_fails "record needs -o" "usage" "$HALO" trace record "$P"
check_fails "record of a missing partition" "partition" "$HALO" trace record "$T/nope" -o "$T/x"
check "a failed record leaves no file" test ! -e "$T/x"
cat >"$T/bad.lua" <<'EOF'
return {
    params = { f = 0.25 },
    cache_init = function(ctx) return { capacity = 10 } end,
    cache_batch = function(ctx, b) return { admit = ctx.halo.ids:slice(0, 20) } end,
}
EOF
check_fails "a policy that overfills the cache" "bad.lua:4: .*admit has 20 entries, at most 10" \
    "$HALO" trace replay "$T/t.trc" --policy "$T/bad.lua"
done_testing
