#!/usr/bin/env bash
# End-to-end: bad policies, one case per class. Each fails with exactly one line on stderr,
# `halo: error: FILE:LINE: ...` naming the policy file (and the line where one is known), exits
# 1, and writes nothing (a training run given --metrics leaves no metrics file).
source "$(dirname "$0")/lib.sh"
P="$(cd "$(dirname "$0")/../.." && pwd)"

# one_line NAME PATTERN FILE_BODY: writes the policy, checks it; one error line matching PATTERN.
one_line() {
    local name=$1 pattern=$2 body=$3
    printf '%s\n' "$body" >"$T/p.lua"
    timeout 20 "$HALO" policy check "$T/p.lua" >"$T/out" 2>"$T/err"
    local rc=$?
    local lines
    lines=$(wc -l <"$T/err")
    if [ $rc -eq 1 ] && [ "$lines" -eq 1 ] && grep -qE "^halo: error: $T/p.lua:$pattern" "$T/err"
    then ok "$name"; else
        not_ok "$name"; echo "# exit $rc, $lines lines, wanted: $T/p.lua:$pattern"
        sed 's/^/# /' "$T/err" | head -n 5
    fi
}

"$HALO" gen sbm --nodes 300 --seed 3 -o "$T/g" >/dev/null 2>&1
"$HALO" partition "$T/g" --parts 1 -o "$T/p1" >/dev/null 2>&1

# ---- error values that are not strings, or odd ----
one_line "error(nil) names the file and line" \
    "2: error object is a nil value, not a string \(hook fanout" \
    $'return { fanout = function(ctx)\n  error(nil) end }'
one_line "error({}) names the file and line" \
    "2: error object is a table value, not a string \(hook fanout" \
    $'return { fanout = function(ctx)\n  error({}) end }'
one_line "an error object whose __tostring loops" "3: error object is a table value" \
    $'local mt = { __tostring = function(o) while true do end end }\nreturn { fanout = function(ctx)\n  error(setmetatable({}, mt)) end }'
one_line "an error object whose __tostring recurses" "3: error object is a table value" \
    $'local mt = {}\nmt.__tostring = function(o) return tostring(o) end\nreturn { fanout = function(ctx) error(setmetatable({}, mt)) end }'
one_line "a multi-line message stays on one line" "1: one\\\\ntwo\\\\nthree \(hook fanout" \
    $'return { fanout = function(ctx) error("one\\ntwo\\nthree") end }'
one_line "an error while closing a to-be-closed variable during another error" \
    "2: error object is a table value" \
    $'return { fanout = function(ctx)\n  local x <close> = setmetatable({}, {__close = function() error({}) end})\n  error("first")\nend }'
one_line "recursion through __index: one line, no stack dump" "2: C stack overflow" \
    $'local t = setmetatable({}, {})\ngetmetatable(t).__index = function(s, k) return s[k] end\nreturn { fanout = function(ctx) return { t.x } end }'
one_line "recursion through __concat: one line, no stack dump" "2: C stack overflow" \
    $'local t = setmetatable({}, {})\ngetmetatable(t).__concat = function(a, b) return a .. b end\nreturn { fanout = function(ctx) return { t .. "x" } end }'
one_line "error(nil) while loading" "1: error object is a nil value, not a string \(loading" \
    'error(nil)'

# ---- accepted silently before ----
one_line "a fanout table mixing integer and string keys" \
    "1: hook fanout: fanouts has a key \"x\" besides its 2 list entries" \
    'return { fanout = function(ctx) return { 10, 25, x = 5 } end }'
one_line "params given as a function" " 'params' is a function, not a table of defaults" \
    'return { params = function() return {} end, fanout = function(ctx) return {5} end }'
one_line "a parameter default given as a function" " params.f is a function, expected a number" \
    'return { params = { f = function() end }, fanout = function(ctx) return {5} end }'
one_line "a metatable loop on the policy table" " the returned table has a metatable" \
    $'local a, b = {}, {}\nsetmetatable(a, {__index = b}); setmetatable(b, {__index = a})\nreturn a'
one_line "a ctx view written after its hook returned" \
    "4: ctx.halo.score was used after its hook call returned" \
    $'local kept\nreturn {\n  cache_init = function(ctx) kept = ctx.halo.score; return {capacity = 1} end,\n  fanout = function(ctx) if kept then kept:fill(7) end return {5} end }'
one_line "a ctx view written through set_at after its hook returned" \
    "4: ctx.halo.score was used after its hook call returned" \
    $'local kept\nreturn {\n  cache_init = function(ctx) kept = ctx.halo.score; return {capacity = 1} end,\n  fanout = function(ctx) if kept then halo.range(1):astype("float64"):copy():set_at(halo.range(1), kept) end return {5} end }'

printf '%s\n' 'return { partition = function(g)' \
    '  return { method = "custom", parts = 2, assign = halo.array("int32", g.nodes) } end }' \
    >"$T/assign.lua"
timeout 60 "$HALO" partition "$T/g" --policy "$T/assign.lua" -o "$T/pa" >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -eq 1 ] && [ "$(grep -c . "$T/err")" -eq 1 ] && [ ! -e "$T/pa" ] &&
    grep -qE "^halo: error: $T/assign.lua:1: hook partition: assign leaves part 1 of 2 without a node" \
        "$T/err"; then ok "a custom assign leaving a part empty"
else not_ok "a custom assign leaving a part empty"; echo "# exit $rc"; sed 's/^/# /' "$T/err"; fi

# Documented acceptances: a bare number from pipeline is the depth; topk's k beyond the length
# gives every element. Both are in `halo policy doc`, and behave as it says.
check_out "doc: pipeline's bare number is the depth" "pipeline\(ctx\) -> .*\| depth" \
    "$HALO" policy doc
check_out "doc: topk with k beyond the length gives all" "k beyond the length gives all" \
    "$HALO" policy doc
printf '%s\n' 'return { pipeline = function(ctx) return 3 end }' >"$T/pipe.lua"
check_out "a bare number from pipeline is the depth" "pipeline +-> depth 3, 1 sampler thread" \
    "$HALO" policy check "$T/pipe.lua"
printf '%s\n' 'return { fanout = function(ctx)' \
    '  local _, p = halo.array("float64", 10):topk(1 << 40); return { p:len() } end }' \
    >"$T/topk.lua"
check_out "topk with k far beyond the array gives all n" "fanout +-> 10 " \
    "$HALO" policy check "$T/topk.lua"

# ---- the same error in a training run: one line per rank, no metrics file written ----
printf '%s\n' 'return { fanout = function(ctx)' '  error({}) end }' >"$T/bad.lua"
timeout 120 "$HALO" train "$T/p1" --policy "$T/bad.lua" --epochs 1 --metrics "$T/m.jsonl" \
    >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -eq 1 ] && [ "$(grep -c . "$T/err")" -eq 1 ] &&
    grep -qE "^halo: error: .*bad.lua:2: error object is a table value" "$T/err" &&
    [ ! -e "$T/m.jsonl" ]; then ok "train: a bad error value is one line, no metrics written"
else not_ok "train: a bad error value is one line, no metrics written"
    echo "# exit $rc"; sed 's/^/# /' "$T/err" | head -n 5; fi
done_testing
