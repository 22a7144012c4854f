#!/usr/bin/env bash
# halo policy check on typed graphs (lua/README.md, "fanout"): a fanout hook that returns tables
# keyed by relation passes, its spec printed; with --graph (a typed graph or partition) the spec
# is checked against the graph's relations and an unknown relation gets the trainer's one line;
# lua/README.md's typed examples pass.
cd "$(dirname "$0")/../.."
. tests/e2e/lib.sh

check "generate a small mag graph" "$HALO" gen --preset mag --scale 0.003 -o "$T/g"
check "partition it" "$HALO" partition "$T/g" --parts 2 -o "$T/p"
check "generate a homogeneous graph" "$HALO" gen --preset products --scale 0.002 -o "$T/h"

cat >"$T/good.lua" <<'EOF'
return {
    name = "typedgood",
    fanout = function(ctx)
        if ctx.graph.relations == nil then return { 10, 25 } end
        return { { cites = 10, ["*"] = 5 }, { ["*"] = 10 } }
    end,
}
EOF
sed 's/cites = 10/wrote = 10/; s/typedgood/typedbad/' "$T/good.lua" >"$T/bad.lua"
cat >"$T/tables.lua" <<'EOF'
return { name = "tables",
         fanout = function(ctx) return { { cites = 10, ["*"] = 5 }, { ["*"] = 10 } } end }
EOF

check_out "tables keyed by relation pass, their spec printed" \
    "fanout +-> \*=5,cites=10;\*=10 \(epoch 0; per relation" "$HALO" policy check "$T/tables.lua"
check_out "a good typed policy against a typed graph" \
    "fanout +-> \*=5,cites=10;\*=10 \(epoch 1, 2 layers, relations of" \
    "$HALO" policy check "$T/good.lua" --graph "$T/g"
check_out "... and against a typed partition" "typed graph: .*4 node types \(target paper\), 8 relations" \
    "$HALO" policy check "$T/good.lua" --graph "$T/p"
check_out "without --graph the same policy takes its homogeneous branch" "fanout +-> 10,25 \(epoch 0\)" \
    "$HALO" policy check "$T/good.lua"
check_fails "an unknown relation: the trainer's line" \
    "policy typedbad: hook fanout \(epoch 0\) returned \*=5,wrote=10;\*=10: no relation 'wrote' \(the graph's relations: cites, rev_cites" \
    "$HALO" policy check "$T/bad.lua" --graph "$T/p"
if [ "$(grep -c '^halo: error:' "$T/err")" = 1 ]; then ok "... in one line"; else
    not_ok "... in one line"; sed 's/^/# /' "$T/err"; fi
check_fails "the same relation table on a homogeneous --graph" "homogeneous" \
    "$HALO" policy check "$T/tables.lua" --graph "$T/h"
check_fails "a --graph that does not exist" "nope" \
    "$HALO" policy check "$T/good.lua" --graph "$T/nope"
# the hook's values are still checked in the typed form
cat >"$T/neg.lua" <<'EOF'
return { name = "neg", fanout = function(ctx) return { { cites = -2 }, 5 } end }
EOF
check_fails "a fanout below -1 in a relation table" "neg|-2" \
    "$HALO" policy check "$T/neg.lua" --graph "$T/g"

# lua/README.md's typed examples (the fanout hook and the papers-only cache_init) in one policy
awk '/^```lua$/ { inb = 1; buf = ""; next }
     /^```$/ && inb { inb = 0; if (buf ~ /ctx.graph.relations == nil/ || buf ~ /cache only the halo papers/) print buf ","; next }
     inb { buf = buf $0 "\n" }' lua/README.md >"$T/readme_body.lua"
{ echo 'return { name = "readme_typed",'; cat "$T/readme_body.lua"; echo '}'; } >"$T/readme.lua"
if [ "$(grep -c 'function(ctx)' "$T/readme.lua")" = 2 ]; then ok "lua/README.md has both typed examples"
else not_ok "lua/README.md has both typed examples"; sed 's/^/# /' "$T/readme.lua"; fi
check_out "lua/README.md's typed example passes against a typed graph" \
    "fanout +-> \*=2,cites=10,writes=5;\*=15 \(epoch 0, 2 layers" \
    "$HALO" policy check "$T/readme.lua" --graph "$T/g"
# the synthetic halo (ids 2500..9999 of 10000) is typed in proportion to the graph's type
# counts: papers hold mag's first 38% of ids, so about 350 of the 2000 halo nodes are papers
cat >"$T/papers.lua" <<'EOF'
return { name = "papers", cache_init = function(ctx)
    if ctx.halo.ntype == nil then return { capacity = 0, ids = {} } end
    return { capacity = ctx.halo.ntype:eq(0):count(), ids = {} }
end }
EOF
check_out "the synthetic halo nodes have the graph's node types" \
    "cache_init +-> capacity (2[5-9][0-9]|3[0-9][0-9]|4[0-4][0-9]) of 2000 halo nodes" \
    "$HALO" policy check "$T/papers.lua" --graph "$T/g"
check_out "lua/README.md's typed example passes on the synthetic homogeneous rank" "^ok: " \
    "$HALO" policy check "$T/readme.lua"
done_testing
