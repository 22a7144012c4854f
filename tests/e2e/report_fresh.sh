#!/usr/bin/env bash
# halo report's freshness check: in a scratch git repository with a figure's meta.json made at
# its first commit, a later commit that touches what the figure depends on (its mode's modules,
# or the paths its meta.json lists) marks it STALE in index.md and in the count on stdout; one
# that touches anything else does not. Without git, or outside a checkout, the page and stdout
# say "freshness unknown" once; a commit the repository does not have is named per figure.
cd "$(dirname "$0")/../.."
. tests/e2e/lib.sh
R=$T/repo
mkdir -p "$R/runtime/sim" "$R/runtime/simx" "$R/runtime/train" "$R/runtime/sweep" "$R/docs" \
    "$R/experiments" "$R/reports"
g() { git -C "$R" -c user.name=t -c user.email=t@localhost -c commit.gpgsign=false "$@"; }
g init -q
echo a >"$R/runtime/sim/engine.c"
echo a >"$R/runtime/simx/other.c"
echo a >"$R/runtime/train/train.c"
echo a >"$R/docs/notes.md"
echo a >"$R/runtime/sweep/plot.c"
echo a >"$R/experiments/fig_run.lua"
g add -A
g commit -qm first
C0=$(g rev-parse --short HEAD)

# meta NAME MODE COMMIT [DEPENDS-JSON]: a figure's meta.json as halo sweep writes it (the fields
# halo report reads)
meta() {
    local dep=""
    [ $# -ge 4 ] && dep="\"depends\": $4,"
    cat >"$R/reports/$1.meta.json" <<EOF
{"format": 1, "name": "$1", "title": "Figure $1", "caption": "", "paper": "", "mode": "$2",
 "experiment": "experiments/$1.lua", "command": "halo sweep experiments/$1.lua",
 "replot": "gnuplot $1.gp", $dep
 "files": {"csv": "$1.csv", "data": "$1.data.csv", "script": "", "png": "$1.png", "svg": ""},
 "provenance": {"commit": "$3", "host": "h", "cpu": "c", "cores": 1, "date": "d",
                "duration_s": 0, "points_s": 0}}
EOF
}
meta fig_sim sim "$C0"
# a sim figure whose meta.json lists its own paths: those replace its mode's
meta fig_run sim "$C0" '["runtime/train", "experiments/fig_run.lua"]'

# report: halo report on the repository's reports/ (stdout in $T/out)
report() { "$HALO" report "$R/reports" >"$T/out" 2>"$T/err"; }

report
if grep -q '(2 figures; 0 stale)' "$T/out" && ! grep -q 'STALE' "$R/reports/index.md" &&
    grep -q 'No figure is older than the code it depends on (2 checked' "$R/reports/index.md"
then ok "figures made at HEAD: 0 stale"
else not_ok "figures made at HEAD: 0 stale"; sed 's/^/# /' "$T/out" "$T/err" "$R/reports/index.md" | head -30; fi

# commits that touch no dependency: a document, a folder whose name only starts like one, and
# the sweep's drawing code (a meta.json without depends comes from a script, not from it)
echo b >"$R/docs/notes.md"
echo b >"$R/runtime/simx/other.c"
echo b >"$R/runtime/sweep/plot.c"
g commit -qam "docs, a look-alike folder, the sweep's plotting"
report
if grep -q '(2 figures; 0 stale)' "$T/out" && ! grep -q 'STALE' "$R/reports/index.md"; then
    ok "a commit touching docs/, runtime/simx/ and runtime/sweep/plot.c leaves both figures fresh"
else not_ok "a commit touching docs/, runtime/simx/, runtime/sweep/plot.c leaves both figures fresh"
    sed 's/^/# /' "$T/out" "$R/reports/index.md" | head -30; fi

# a commit to the simulator: fig_sim is stale, fig_run (its depends leave runtime/sim out) is not
echo b >"$R/runtime/sim/engine.c"
g commit -qam "sim change"
C2=$(g rev-parse --short HEAD)
report
if grep -q '(2 figures; 1 stale)' "$T/out" &&
    grep -q "^\*\*STALE: made at \`$C0\`; runtime/sim changed since (\`$C2\`)\*\*: 1 commit since touches" "$R/reports/index.md" &&
    [ "$(grep -c '^\*\*STALE' "$R/reports/index.md")" -eq 1 ] &&
    grep -q '^- \[Figure fig_sim\](#figure-fig_sim) (STALE)$' "$R/reports/index.md" &&
    grep -q '^- \[Figure fig_run\](#figure-fig_run)$' "$R/reports/index.md"
then ok "a commit touching runtime/sim marks the sim figure STALE (and only it), count 1"
else not_ok "a commit touching runtime/sim marks the sim figure STALE"
    sed 's/^/# /' "$T/out" "$R/reports/index.md" | head -40; fi

# the run figure's own listed paths: its experiment file
echo b >"$R/experiments/fig_run.lua"
g commit -qam "experiment change"
C3=$(g rev-parse --short HEAD)
report
if grep -q '(2 figures; 2 stale)' "$T/out" &&
    grep -q "made at \`$C0\`; experiments/fig_run.lua changed since (\`$C3\`)" "$R/reports/index.md" &&
    grep -q "made at \`$C0\`; runtime/sim changed since (\`$C2\`)" "$R/reports/index.md"
then ok "a change to a path listed in meta.json's depends marks that figure STALE too"
else not_ok "a change to a listed path marks that figure STALE"
    sed 's/^/# /' "$T/out" "$R/reports/index.md" | head -40; fi

# a figure remade at HEAD is fresh again
meta fig_sim sim "$C3"
report
if grep -q '(2 figures; 1 stale)' "$T/out" && ! grep -q 'runtime/sim changed' "$R/reports/index.md"
then ok "the figure remade at HEAD is fresh again"
else not_ok "the figure remade at HEAD is fresh again"; sed 's/^/# /' "$T/out"; fi

# a commit the repository does not have, and none recorded: unknown for that figure alone
meta fig_sim sim "deadbeef"
meta fig_run sim ""
report
if grep -q '(2 figures; 0 stale, some of unknown freshness)' "$T/out" &&
    grep -q '^\*Freshness unknown: commit deadbeef is not in this repository\.\*$' "$R/reports/index.md" &&
    grep -q '^\*Freshness unknown: no commit recorded\.\*$' "$R/reports/index.md"
then ok "an unknown commit and a missing one are named per figure"
else not_ok "an unknown commit and a missing one are named per figure"
    sed 's/^/# /' "$T/out" "$R/reports/index.md" | head -30; fi

# a commit that is not a hash never reaches git as an option
meta fig_sim sim "--output=$T/pwned"
report
if [ ! -e "$T/pwned" ] && grep -q 'Freshness unknown: its commit is not a hash' "$R/reports/index.md"
then ok "a commit field that is not a hash is refused, not passed to git"
else not_ok "a commit field that is not a hash is refused"; fi

# outside a checkout, and without git: "freshness unknown" once
mkdir -p "$T/plain"
meta fig_sim sim "$C0"
cp "$R/reports/"*.meta.json "$T/plain/"
"$HALO" report "$T/plain" >"$T/out" 2>"$T/err"
if grep -q "(2 figures; freshness unknown: $T/plain is not in a git checkout)" "$T/out" &&
    [ "$(grep -c -i 'freshness unknown' "$T/plain/index.md")" -eq 1 ] &&
    ! grep -q STALE "$T/plain/index.md"; then
    ok "outside a git checkout: freshness unknown, said once"
else not_ok "outside a git checkout: freshness unknown, said once"
    sed 's/^/# /' "$T/out" "$T/plain/index.md" | head -20; fi
env PATH=/nonexistent "$HALO" report "$R/reports" >"$T/out" 2>"$T/err"
if [ $? -eq 0 ] && grep -q '(2 figures; freshness unknown: git is not installed)' "$T/out" &&
    [ "$(grep -c -i 'freshness unknown' "$R/reports/index.md")" -eq 1 ]; then
    ok "without git: freshness unknown, said once, exit 0"
else not_ok "without git: freshness unknown, said once"; sed 's/^/# /' "$T/out" "$T/err"; fi

# the data row lists each file once and leaves empty names out
cat >"$R/reports/dup.meta.json" <<EOF
{"format": 1, "name": "dup", "title": "Dup", "mode": "run+sim",
 "files": {"csv": "dup.csv", "data": "dup.csv", "png": "dup.png"},
 "provenance": {"commit": "$C0"}}
EOF
cat >"$R/reports/tl.meta.json" <<EOF
{"format": 1, "name": "tl", "title": "Tl", "mode": "run+sim",
 "files": {"csv": "", "data": ["tl_a.jsonl", "tl_b.jsonl"], "png": "tl.png"},
 "provenance": {"commit": "$C0"}}
EOF
report
if grep -q '^| data | \[dup.csv\](dup.csv) |$' "$R/reports/index.md" &&
    grep -q '^| data | \[tl_a.jsonl\](tl_a.jsonl), \[tl_b.jsonl\](tl_b.jsonl) |$' "$R/reports/index.md" &&
    ! grep -q '\[\](' "$R/reports/index.md"; then
    ok "data links: each file once, a list of data files, no empty links"
else not_ok "data links: each file once, no empty links"; grep '^| data' "$R/reports/index.md" | sed 's/^/# /'; fi
# a run+sim figure without depends is checked against both modes' modules
echo c >"$R/runtime/train/train.c"
g commit -qam "train change"
report
if grep -A2 '^## Tl' "$R/reports/index.md" | grep -q "runtime/train, runtime/sim changed since"
then ok "a run+sim figure depends on both modes' modules"
else not_ok "a run+sim figure depends on both modes' modules"; grep -A2 '^## Tl' "$R/reports/index.md" | sed 's/^/# /'; fi

# a sweep that keeps earlier points redraws the figure over them: meta.json's points_commit stays
# the commit they were run at, so the figure stays STALE until its points run again
mkdir -p "$R/policies" "$R/experiments/clusters"
cp policies/distdgl.lua policies/massivegnn.lua "$R/policies/"
cp experiments/clusters/this-machine.lua "$R/experiments/clusters/"
cat >"$R/experiments/fr.lua" <<'EOF'
return {
    name = "fr", title = "Freshness", mode = "sim",
    graph = { gen = "sbm", nodes = 2000, seed = 3 },
    partition = { parts = 2 },
    run = { cluster = "this-machine", trainers = 2, epochs = 1, batch = 300, fanouts = { 5, 10 } },
    sweep = { ["run.policy"] = { "policies/distdgl.lua", "policies/massivegnn.lua" } },
    measures = { "epoch_s" },
    plot = { kind = "bars", x = "run.policy", y = "epoch_s" },
}
EOF
rm -f "$R/reports/"*.meta.json
g add -A
g commit -qm "an experiment"
CA=$(g rev-parse --short HEAD)
sweep() { (cd "$R" && "$HALO" sweep experiments/fr.lua -o reports) >"$T/out" 2>"$T/err"; }
sweep
if grep -q "\"points_commit\": \"$CA\"" "$R/reports/fr.meta.json" &&
    grep -q '"experiments/fr.lua"' "$R/reports/fr.meta.json" &&
    grep -q '"policies/massivegnn.lua"' "$R/reports/fr.meta.json" &&
    grep -q '"experiments/clusters/this-machine.lua"' "$R/reports/fr.meta.json"
then ok "a sweep in a checkout records its commit and its repository-relative sources"
else not_ok "a sweep records its commit and sources"; sed 's/^/# /' "$T/err" "$R/reports/fr.meta.json" | head -40; fi
echo c >"$R/policies/massivegnn.lua"
g commit -qam "a policy change"
CB=$(g rev-parse --short HEAD)
sweep
report
if grep -q '(1 figure; 1 stale)' "$T/out" &&
    grep -q "made at \`$CA\`; policies/massivegnn.lua changed since (\`$CB\`)" "$R/reports/index.md" &&
    grep -q "commit \`$CB\`, points run at \`$CA\`" "$R/reports/index.md"
then ok "redrawn over points of an earlier commit: still STALE, made at the points' commit"
else not_ok "redrawn over earlier points: still STALE"; sed 's/^/# /' "$T/out" "$R/reports/index.md" | head -30; fi
rm "$R/reports/fr.csv"
sweep
report
if grep -q '(1 figure; 0 stale)' "$T/out" && grep -q "\"points_commit\": \"$CB\"" "$R/reports/fr.meta.json"
then ok "its points run again at HEAD: fresh"
else not_ok "its points run again at HEAD: fresh"; sed 's/^/# /' "$T/out" "$T/err" | head; fi

done_testing
