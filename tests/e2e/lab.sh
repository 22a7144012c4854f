#!/usr/bin/env bash
# halo lab: the starters score low, shipped strong policies score higher, broken policies
# (errors, endless loops in Lua and inside string.find, memory exhaustion, wrong return types,
# sandbox escapes) score 0 with a one-line reason and never crash or hang the grader; --json
# parses; bad arguments are one-line errors. Prints each grade's time (never asserted).
cd "$(dirname "$0")/../.."
. tests/e2e/lib.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
L=experiments/labs
S=3   # the "instructor's" seed of this test

# grade N FILE [flags]: grades with --json into $T/g.json; the score on stdout ("" on failure)
grade() {
    local n=$1 f=$2
    shift 2
    local t0=$SECONDS
    if timeout -k 5 300 "$HALO" lab grade "$n" "$f" --seed $S --json "$@" >"$T/g.json" 2>"$T/g.err"; then
        echo "# lab $n $(basename "$f"): $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["score"])' "$T/g.json") in $((SECONDS - t0)) s" >&2
        python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["score"])' "$T/g.json"
    else
        echo "# grade $n $f failed (exit $?):" >&2
        sed 's/^/# /' "$T/g.err" >&2
    fi
}
# lt A B: A < B as numbers
lt() { python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2]) else 1)' "$1" "$2"; }
# messages_clean: every criterion message of $T/g.json is one line without control characters
messages_clean() {
    python3 - "$T/g.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
bad = [c["message"] for c in r["criteria"] if not c["message"] or any(ord(ch) < 32 or ord(ch) == 127 for ch in c["message"])]
sys.exit(1 if bad else 0)
PY
}
# all_zero PATTERN: every criterion scored 0 and every message matches PATTERN (a regex)
all_zero() {
    python3 - "$T/g.json" "$1" <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1]))
ok = r["score"] == 0 and all(c["score"] == 0 and re.search(sys.argv[2], c["message"]) for c in r["criteria"])
if not ok:
    print("# " + json.dumps(r["criteria"]))
sys.exit(0 if ok else 1)
PY
}

check_out "lab list names the four labs" "lab4-adaptive" "$HALO" lab list
check_out "lab list names lab1-partition" "lab1-partition" "$HALO" lab list
for d in lab1-partition lab2-fanout lab3-cache lab4-adaptive; do
    if [ -f "$L/$d/README.md" ] && [ -f "$L/$d/starter.lua" ] && [ -x "$L/$d/check.sh" ]; then
        ok "$d has README.md, starter.lua and check.sh"
    else not_ok "$d has README.md, starter.lua and check.sh"; fi
done

# ---- the ranking: starter low, strong shipped policy higher ----
strong=("" policies/default.lua tests/lab/fanout_small.lua policies/vip.lua policies/massivegnn.lua)
starter=("" $L/lab1-partition/starter.lua $L/lab2-fanout/starter.lua $L/lab3-cache/starter.lua
         $L/lab4-adaptive/starter.lua)
for n in 1 2 3 4; do
    lo=$(grade $n "${starter[$n]}")
    if [ -n "$lo" ] && python3 -m json.tool "$T/g.json" >/dev/null && lt "$lo" 40; then
        ok "lab $n: the starter scores low ($lo < 40) and --json parses"
    else not_ok "lab $n: the starter scores low (got '$lo')"; fi
    hi=$(grade $n "${strong[$n]}")
    if [ -n "$hi" ] && [ -n "$lo" ] && lt "$lo" "$hi" && lt 50 "$hi"; then
        ok "lab $n: ${strong[$n]} ($hi) ranks above the starter ($lo)"
    else not_ok "lab $n: ${strong[$n]} ranks above the starter (got '$hi' vs '$lo')"; fi
done
python3 - "$T/g.json" <<'PY' && ok "--json: score is the sum of the criteria, each with name, value, zero, full, max, message" || not_ok "--json has the total and one entry per criterion"
import json, sys
r = json.load(open(sys.argv[1]))
cs = r["criteria"]
assert len(cs) >= 2 and abs(r["score"] - sum(c["score"] for c in cs)) < 1e-9
assert all({"name", "value", "zero", "full", "score", "max", "message"} <= set(c) for c in cs)
assert r["lab"] == 4 and r["mode"] == "grade" and r["seed"] == 3
PY

# lab 4 needs both ideas: depth alone (distdglv2.lua) misses full marks on the throttled network
s=$(grade 4 policies/distdglv2.lua)
if [ -n "$s" ] && python3 - "$T/g.json" <<'PY'
import json, sys
c = {x["name"]: x for x in json.load(open(sys.argv[1]))["criteria"]}
p, a = c["time_perlmutter"], c["time_aws_1gbit"]
ok = p["score"] > 0.9 * p["max"] and a["score"] < 0.8 * a["max"] and "massivegnn" in a["message"]
if not ok:
    print("# " + json.dumps(list(c.values())))
sys.exit(0 if ok else 1)
PY
then ok "lab 4: depth alone (distdglv2.lua, $s) gets full marks only where the network is fast"
else not_ok "lab 4: depth alone is not enough on the throttled network (got '$s')"; fi

# ---- broken policies: 0 per criterion, one clean line each, no crash, no hang ----
rm -f /tmp/halo-lab-escaped
for n in 1 2 3 4; do
    s=$(grade $n tests/lab/wrong_types.lua)
    if [ "$s" = "0.0" ] || [ "$s" = "0" ]; then all_zero "expected|not|no " && messages_clean && ok "lab $n: wrong return types score 0 with a clean reason" || not_ok "lab $n: wrong types reason"
    else not_ok "lab $n: wrong return types score 0 (got '$s')"; fi
    s=$(grade $n tests/lab/escape.lua)
    if [ "$s" = "0.0" ] || [ "$s" = "0" ]; then all_zero "nil value|not found|not allowed|no |see accuracy" && ok "lab $n: sandbox escapes score 0" || not_ok "lab $n: escape reason"
    else not_ok "lab $n: sandbox escapes score 0 (got '$s')"; fi
done
if [ ! -e /tmp/halo-lab-escaped ]; then ok "no escape attempt ran a command"; else not_ok "an escape attempt ran a command"; fi
s=$(grade 1 tests/lab/endless.lua)
if [ "$s" = "0.0" ] || [ "$s" = "0" ]; then all_zero "instruction budget" && ok "lab 1: an endless Lua loop scores 0 (instruction budget)" || not_ok "lab 1: endless loop reason"
else not_ok "lab 1: endless loop scores 0 (got '$s')"; fi
s=$(grade 3 tests/lab/endless.lua)
if [ "$s" = "0.0" ] || [ "$s" = "0" ]; then all_zero "instruction budget" && ok "lab 3: an endless Lua loop in cache_init scores 0" || not_ok "lab 3: endless loop reason"
else not_ok "lab 3: endless loop scores 0 (got '$s')"; fi
s=$(grade 1 tests/lab/loop_string_find.lua --time-limit 2 --budget 1000000000000)
if [ "$s" = "0.0" ] || [ "$s" = "0" ]; then all_zero "wall-clock limit" && ok "lab 1: a loop inside string.find is killed at the wall-clock limit" || not_ok "lab 1: string.find reason"
else not_ok "lab 1: a loop inside string.find scores 0 (got '$s')"; fi
s=$(grade 2 tests/lab/loop_string_find.lua --time-limit 3 --budget 1000000000000)
if [ "$s" = "0.0" ] || [ "$s" = "0" ]; then all_zero "wall-clock limit|instruction budget|see accuracy" && ok "lab 2: a loop inside string.find in a child halo train is killed" || not_ok "lab 2: string.find reason"
else not_ok "lab 2: a loop inside string.find scores 0 (got '$s')"; fi
s=$(grade 1 tests/lab/memory_hog.lua --mem 32)
if [ "$s" = "0.0" ] || [ "$s" = "0" ]; then all_zero "memory limit" && ok "lab 1: memory exhaustion scores 0 (memory limit)" || not_ok "lab 1: memory reason"
else not_ok "lab 1: memory exhaustion scores 0 (got '$s')"; fi
s=$(grade 2 tests/lab/memory_hog.lua)
if [ "$s" = "0.0" ] || [ "$s" = "0" ]; then messages_clean && grep -qE '(\?|\\\\x1b)\[31mred' "$T/g.json" && ok "lab 2: control characters of a student's error are stripped, one line kept" || not_ok "lab 2: control characters stripped"
else not_ok "lab 2: an erroring fanout scores 0 (got '$s')"; fi

# ---- the rules each lab enforces ----
s=$(grade 1 policies/lru.lua)
if [ "$s" = "0.0" ] || [ "$s" = "0" ]; then all_zero "no partition" && ok "lab 1: a policy without partition(g) scores 0 (the default METIS is not the student's)" || not_ok "lab 1: no hook reason"
else not_ok "lab 1: a policy without partition(g) scores 0 (got '$s')"; fi
s=$(grade 1 tests/lab/unbalanced.lua)
if [ "$s" = "0.0" ] || [ "$s" = "0" ]; then all_zero "balance nodes (3\.9|4\.0)[0-9]*" && ok "lab 1: a zero cut with balance 4 scores 0" || not_ok "lab 1: balance reason"
else not_ok "lab 1: an unbalanced partition scores 0 (got '$s')"; fi
s=$(grade 2 policies/lru.lua)
if [ "$s" = "0.0" ] || [ "$s" = "0" ]; then all_zero "no fanout|see accuracy" && ok "lab 2: a policy without fanout(ctx) scores 0" || not_ok "lab 2: no hook reason"
else not_ok "lab 2: a policy without fanout(ctx) scores 0 (got '$s')"; fi
s=$(grade 3 policies/belady.lua)
if [ "$s" = "0.0" ] || [ "$s" = "0" ]; then all_zero "next_use.*not allowed" && ok "lab 3: Belady's look-ahead (hint=next_use) is refused" || not_ok "lab 3: next_use reason"
else not_ok "lab 3: Belady's look-ahead is refused (got '$s')"; fi
s=$(grade 3 tests/lab/cache_too_big.lua)
if [ "$s" = "0.0" ] || [ "$s" = "0" ]; then all_zero "over the 10% budget" && ok "lab 3: a cache over 10% of the halo set scores 0" || not_ok "lab 3: capacity reason"
else not_ok "lab 3: a cache over 10% scores 0 (got '$s')"; fi
s=$(grade 4 tests/lab/cache_too_big.lua)
if [ "$s" = "0.0" ] || [ "$s" = "0" ]; then all_zero "over the 25% budget" && ok "lab 4: a cache over 25% of the halo set scores 0" || not_ok "lab 4: capacity reason"
else not_ok "lab 4: a cache over 25% scores 0 (got '$s')"; fi
s=$(grade 4 tests/lab/load_loop.lua)
if [ "$s" = "0.0" ] || [ "$s" = "0" ]; then all_zero "instruction budget|wall-clock" && ok "lab 4: a policy that loops while loading scores 0" || not_ok "lab 4: load loop reason"
else not_ok "lab 4: a policy that loops while loading scores 0 (got '$s')"; fi

# ---- the public check and the table ----
check_out "lab check prints a table with the total" "^total .* / +100" "$HALO" lab check 3 $L/lab3-cache/starter.lua
check_out "lab check uses the public seed" "public check\), seed 2024" "$HALO" lab check 1 $L/lab1-partition/starter.lua
check_out "the starter's check.sh runs the public check" "^total" env HALO="$HALO" $L/lab4-adaptive/check.sh

# ---- bad arguments ----
check_fails "no lab 9" "no lab '9'" "$HALO" lab grade 9 policies/default.lua
check_fails "a missing policy file" "no such policy file" "$HALO" lab grade 1 "$T/nope.lua"
check_fails "grade without a file" "expected N FILE" "$HALO" lab grade 1
check_fails "a zero time limit" "time-limit" "$HALO" lab grade 1 policies/default.lua --time-limit 0
check_fails "an unknown subcommand" "unknown subcommand" "$HALO" lab frobnicate
done_testing
