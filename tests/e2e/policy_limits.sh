#!/usr/bin/env bash
# End-to-end: no policy can hang halo or forge its output. Every policy of the hang corpus
# (tests/policy/escape_hang_*.lua: backtracking patterns, loops of plain finds, sorts with slow
# comparators, string.rep, table.move, concatenations, ...) ends with the instruction budget or
# the wall-clock limit, naming the file, the line and the hook, in `halo policy check` and in
# `halo train --policy`; text a policy produces reaches the terminal with its control characters
# escaped. Every command runs under `timeout`, so a hang fails the test instead of the suite.
source "$(dirname "$0")/lib.sh"
P="$(cd "$(dirname "$0")/../.." && pwd)"
MPIRUN="timeout -k 5 120 mpirun --oversubscribe --bind-to none"
limit_re="(instruction budget of [0-9]+|wall-clock limit of [0-9.]+ s per call) exceeded( \\(an endless loop\\?\\))?"

# --- policy check: the whole corpus
n=0
for f in "$P"/tests/policy/escape_hang_*.lua; do
    b=$(basename "$f")
    check_fails "policy check $b stops" "$b:[0-9]+: $limit_re \(hook fanout, rank 0, epoch 0\)" \
        timeout -k 5 60 "$HALO" policy check "$f" --mem 64
    n=$((n + 1))
done
if [ "$n" -ge 15 ]; then ok "the hang corpus has $n policies"; else
    not_ok "the hang corpus has only $n policies"; fi

# --- the wall-clock limit: a loop whose every instruction is slow (comparing two big strings,
# which no allocation or payment sees) ends by the clock, from --time or HALO_POLICY_SECONDS
cat >"$T/cmp.lua" <<'EOF'
local a, b = string.rep("x", 1 << 22), string.rep("x", 1 << 21) .. string.rep("x", 1 << 21)
return {
    fanout = function(ctx)
        local same = 0
        while true do
            if a == b then same = same + 1 end
        end
    end,
}
EOF
check_fails "--time 2 stops a loop the budget lets run" \
    "cmp.lua:[0-9]+: wall-clock limit of 2 s per call exceeded \(hook fanout, rank 0, epoch 0\)" \
    timeout -k 5 30 "$HALO" policy check "$T/cmp.lua" --budget 1000000000000 --time 2
check_fails "HALO_POLICY_SECONDS sets the limit" "wall-clock limit of 0.5 s per call exceeded" \
    env HALO_POLICY_SECONDS=0.5 timeout -k 5 30 "$HALO" policy check "$T/cmp.lua" \
    --budget 1000000000000
check_fails "a bad HALO_POLICY_SECONDS is refused" "HALO_POLICY_SECONDS: expected seconds" \
    env HALO_POLICY_SECONDS=soon "$HALO" policy check "$P/policies/default.lua"
check_fails "a negative --time is refused" "--time: -1 is negative" \
    "$HALO" policy check "$P/policies/default.lua" --time -1
check_out "policy doc states the wall-clock limit" "5 s of wall clock" "$HALO" policy doc
check_out "policy check --help documents --time" " --time S +wall-clock seconds per hook call" \
    "$HALO" policy check --help

# --- untrusted text: a policy that logs and errors with a forged halo line and a terminal
# escape (clear screen) shows both escaped, on one line of halo's own
cat >"$T/forge.lua" <<'EOF'
return {
    name = "forge\27[2J",
    fanout = function(ctx)
        halo.log("log\nhalo: error: rank 3: fake\27[2J")
        if ctx.epoch >= 0 then
            error("\nhalo: error: rank 3: fake\27[2J")
        end
        return { 5, 10 }
    end,
}
EOF
# forged OUT NAME: the files $T/OUT(.err) hold no escape byte and no forged line, and do hold
# the escaped text.
forged() {
    local all="$T/$1.all"
    cat "$T/$1" "$T/$1.err" >"$all" 2>/dev/null
    if ! grep -q $'\x1b' "$all" && ! grep -qE '^halo(\[[0-9]+\])?: error: rank 3: fake' "$all" &&
        grep -qF 'error: rank 3: fake\x1b[2J' "$all"; then
        ok "$2"
    else
        not_ok "$2"; sed -n 'l' "$all" | head -n 20 | sed 's/^/# /'
    fi
}
timeout -k 5 30 "$HALO" policy check "$T/forge.lua" >"$T/fc" 2>"$T/fc.err"
forged fc "policy check: a policy cannot forge a halo line or clear the terminal"
if [ "$(grep -c '^halo: error:' "$T/fc.err")" = 1 ]; then ok "policy check: one error line"
else not_ok "policy check: one error line"; sed 's/^/# /' "$T/fc.err"; fi

# --- halo train --policy: the same stops and the same cleaning
check "generate a small graph" "$HALO" gen sbm -n 1000 -F 8 -C 4 -s 3 -o "$T/g"
check "partition it into 2" "$HALO" partition "$T/g" --parts 2 -o "$T/p2"
train() { $MPIRUN -np 2 "$HALO" train "$T/p2" --epochs 1 --batch 200 --no-table --eval none "$@"; }
for c in find_backtrack gsub_backtrack plain_find_loop sort_comparator table_move \
    string_concat_loop; do
    b=escape_hang_$c.lua
    train --policy "$P/tests/policy/$b" >"$T/t" 2>"$T/t.err"
    rc=$?
    # every rank fails the same call; mpirun may end a rank before it prints, so at least one
    n=$(grep -cE "^halo(\[[0-9]+\])?: error: rank [01]: .*$b:[0-9]+: $limit_re \(hook fanout, rank [01]" \
        "$T/t.err")
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$n" -ge 1 ]; then
        ok "train --policy $b stops with the limit's message"
    else
        not_ok "train --policy $b stops with the limit's message (exit $rc)"
        sed 's/^/# /' "$T/t.err" | head
    fi
done
HALO_POLICY_SECONDS=2 $MPIRUN -np 2 -x HALO_POLICY_SECONDS "$HALO" train "$T/p2" --epochs 1 \
    --batch 200 --no-table --eval none --policy "$T/cmp.lua" >"$T/t" 2>"$T/t.err"
rc=$?
n=$(grep -cE "^halo(\[[0-9]+\])?: error: rank [01]: .*cmp.lua:[0-9]+: wall-clock limit of 2 s per call \
exceeded \(hook fanout, rank [01]" "$T/t.err")
if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$n" -ge 1 ]; then
    ok "train: HALO_POLICY_SECONDS=2 stops a slow loop"
else
    not_ok "train: HALO_POLICY_SECONDS=2 stops a slow loop (exit $rc)"
    sed 's/^/# /' "$T/t.err" | head
fi
train --policy "$T/forge.lua" >"$T/tf" 2>"$T/tf.err"
forged tf "train: a policy cannot forge a halo line or clear the terminal"
if grep -qF 'forge\x1b[2J: log\nhalo: error: rank 3: fake\x1b[2J' "$T/tf.err"; then
    ok "train: halo.log and the policy's name are logged escaped"
else
    not_ok "train: halo.log and the policy's name are logged escaped"; sed -n l "$T/tf.err" | head
fi
done_testing
