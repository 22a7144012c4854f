#!/usr/bin/env bash
# End-to-end: `halo policy check` and `halo policy doc` through the real binary: the shipped
# policies pass, and broken policies fail within 5 seconds naming the file and line or the hook.
source "$(dirname "$0")/lib.sh"
P="$(cd "$(dirname "$0")/../.." && pwd)"

check "policy --help" "$HALO" policy --help
check "policy check --help" "$HALO" policy check --help
check_out "distdgl.lua passes and lists its hooks" "^  partition +.*distdgl.lua:[0-9]+$" \
    "$HALO" policy check "$P/policies/distdgl.lua"
check_out "distdgl.lua: METIS with nodes, train and edges balanced" \
    "partition +-> metis, 4 parts, constraints nodes,train,edges" \
    "$HALO" policy check "$P/policies/distdgl.lua"
check_out "distdgl.lua: fanouts 10,25" "fanout +-> 10,25 " "$HALO" policy check \
    "$P/policies/distdgl.lua"
check_out "distdgl.lua: no cache, depth 0" "cache_init +-> capacity 0 " \
    "$HALO" policy check "$P/policies/distdgl.lua"
check_out "default.lua passes" "^ok: " "$HALO" policy check "$P/policies/default.lua"
check_out "massivegnn.lua passes and evicts" "cache_batch +-> 80 calls, [1-9][0-9]* evicted" \
    "$HALO" policy check "$P/policies/massivegnn.lua"
check_out "the README's LRU example passes" "^ok: " "$HALO" policy check \
    "$P/tests/policy/good_lru.lua"
check_out "--set reaches the policy" "fanout +-> 15,25 " \
    "$HALO" policy check "$P/policies/default.lua" --set fanout1=15
check_out "--set shows in the params" "^  delta=5$" \
    "$HALO" policy check "$P/policies/massivegnn.lua" --set delta=5 --set alpha=0.2

# Each broken policy: exit 1 within 5 seconds, the message naming the file and line or the hook.
within5() { timeout 5 "$@"; }
check_fails "syntax error names file and line" "bad_syntax.lua:3: .*expected" \
    within5 "$HALO" policy check "$P/tests/policy/bad_syntax.lua"
check_fails "os.execute is refused" \
    "bad_os_execute.lua:4: attempt to index a nil value \(global 'os'\)" \
    within5 "$HALO" policy check "$P/tests/policy/bad_os_execute.lua"
check_fails "an endless loop is stopped" \
    "bad_infinite_loop.lua:[0-9]+: instruction budget .*hook pipeline" \
    within5 "$HALO" policy check "$P/tests/policy/bad_infinite_loop.lua"
check_fails "a fanout of \"ten\" is refused" \
    "bad_fanout_ten.lua:3: hook fanout: fanouts\[1\] is a string" \
    within5 "$HALO" policy check "$P/tests/policy/bad_fanout_ten.lua"
check_fails "a --set that is a typo of a declared name is refused" \
    "does not declare a parameter 'fanout_inn' \(did you mean fanout_in\? declared: fanout_in, fanout_out, imbalance\)" \
    "$HALO" policy check "$P/policies/distdgl.lua" --set fanout_inn=1
# every file of policies/ is a policy that passes the check (libraries live in lua/)
bad=""
for f in "$P"/policies/*.lua; do
    "$HALO" policy check "$f" >/dev/null 2>"$T/e" || bad="$bad $(basename "$f")"
done
if [ -z "$bad" ] && [ -f "$P/lua/cachelib.lua" ]; then ok "halo policy check passes on every file of policies/"
else not_ok "halo policy check passes on every file of policies/ (failed:$bad)"; fi
# another policy's parameter (one --set for a loop over policies): one warning, then ignored
"$HALO" policy check distdgl --set f=0.25 >"$T/o" 2>"$T/e"
if [ $? -eq 0 ] && [ "$(wc -l <"$T/e")" -eq 1 ] &&
    grep -q "^halo: warning: .*distdgl.lua: --set f=0.25: the policy does not declare 'f' (declared: fanout_in, fanout_out, imbalance); ignored" "$T/e"; then
    ok "another policy's --set f=0.25 on distdgl: one warning naming it, then ignored"
else not_ok "another policy's --set f=0.25 on distdgl: one warning naming it, then ignored"; sed 's/^/# /' "$T/e"; fi
"$HALO" policy check "$P/tests/policy/bad_fanout_ten.lua" >/dev/null 2>&1
if [ $? -eq 1 ]; then ok "a bad policy exits with status 1"
else not_ok "a bad policy exits with status 1"; fi
"$HALO" policy check "$P/policies/distdgl.lua" --set fanout_inn=1 >/dev/null 2>&1
if [ $? -eq 2 ]; then ok "a bad --set exits with status 2"
else not_ok "a bad --set exits with status 2"; fi
check_fails "a missing file is an error" "nope.lua: cannot read" "$HALO" policy check "$T/nope.lua"
check_fails "--budget is applied" "instruction budget of 1000 exceeded" \
    "$HALO" policy check "$P/policies/massivegnn.lua" --budget 1000
printf 'local t = {}\nfor i = 1, 1e7 do t[i] = {i} end\nreturn {}\n' >"$T/hog.lua"
check_fails "--mem is applied" "hog.lua:2: memory limit of 4 MiB exceeded \(loading the policy\)" \
    "$HALO" policy check "$T/hog.lua" --mem 4
printf 'return { fanout = function(ctx) return { #os.getenv("PATH") > 0 and 7 or 8 } end }\n' \
    >"$T/trusted.lua"
check_fails "os is absent without --unsafe" \
    "trusted.lua:1: attempt to index a nil value \(global 'os'\)" \
    "$HALO" policy check "$T/trusted.lua"
check_out "--unsafe opens the standard library" "fanout +-> 7 " \
    "$HALO" policy check "$T/trusted.lua" --unsafe
mkdir -p "$T/mod"
printf 'local M = {}\nfunction M.fanouts() return { 4, 5 } end\nreturn M\n' >"$T/mod/helper.lua"
printf 'local h = require "helper"\nreturn { fanout = function(ctx) return h.fanouts() end }\n' \
    >"$T/mod/uses.lua"
check_out "require finds modules next to the policy" "fanout +-> 4,5 " \
    "$HALO" policy check "$T/mod/uses.lua"
printf '%s\n' 'local u = require "halo_util"' \
    'return { fanout = function(ctx) return { u.clamp(40, 1, 12) } end }' >"$T/util.lua"
check_out "require finds halo's helper modules in lua/" "fanout +-> 12 " \
    "$HALO" policy check "$T/util.lua"

# halo policy doc: every function and hook.
check_out "doc lists halo.array" "halo.array\(type, n \[, value\]\)" "$HALO" policy doc
check_out "doc lists topk" "a:topk\(k \[, smallest\]\) -> values, positions" "$HALO" policy doc
check_out "doc lists cache_batch" "cache_batch\(ctx, b\)" "$HALO" policy doc
check_out "doc lists the context" "ctx.halo.score" "$HALO" policy doc
n=$("$HALO" policy doc | grep -cE '^  (halo\.|a:|m:)')
if [ "$n" -ge 45 ]; then ok "doc lists $n functions and methods"; else not_ok \
    "doc lists only $n functions"; fi
done_testing
