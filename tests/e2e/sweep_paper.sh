#!/usr/bin/env bash
# The paper's numbers on a figure: an experiment's paper.ranges become a shaded band with a
# "paper: LO-HI UNIT (SOURCE)" legend entry on the panels that plot the column (cells outlined on
# a heatmap), rows in index.md and entries in meta.json; legend titles are words, not keys;
# meta.json lists the sources the figure depends on; a wrong range is one line with its place.
cd "$(dirname "$0")/../.."
. tests/e2e/lib.sh
O=$T/reports
cat >"$T/paper.lua" <<'EOF'
return {
    name = "paper",
    title = "paper ranges",
    paper = {
        text = "DistDGLv2: 2-3x over DistDGL",
        ranges = {
            { metric = "speedup", lo = 2, hi = 3, unit = "x", source = "DistDGLv2" },
            { metric = "remote_mb", lo = 0.5, hi = 0.75, source = "nobody" },
            { metric = "epoch_s", lo = 1, hi = 2, unit = " s", source = "stacked" },
            { metric = "sample_s", lo = 1, hi = 2, source = "parts" },
        },
    },
    mode = "sim",
    graph = { gen = "sbm", nodes = 3000, seed = 3 },
    partition = { parts = 2 },
    run = { cluster = "this-machine", trainers = 2, epochs = 2, fanouts = { 5, 10 } },
    sweep = {
        ["run.policy"] = { "policies/distdgl.lua", "policies/massivegnn.lua" },
        ["run.batch"] = { 100, 300 },
    },
    measures = { "epoch_s", "sample_s", "fetch_s", "remote_mb" },
    derive = { speedup = { of = "epoch_s", baseline = { ["run.policy"] = "policies/distdgl.lua" } } },
    plots = {
        { kind = "bars", x = "run.batch", y = "speedup", series = "run.policy" },
        { kind = "heatmap", x = "run.batch", y = "run.policy", z = "remote_mb" },
        { kind = "stacked", x = "run.policy", y = { "sample_s", "fetch_s" } },
        { kind = "line", x = "run.batch", y = "epoch_s", series = "run.policy" },
    },
}
EOF
check "a sweep with paper ranges runs" "$HALO" sweep "$T/paper.lua" --out "$O"
GP=$O/paper.gp
# the band of panel 1 (speedup) spans the categories at 2..3 and has the legend entry
if grep -q '^\$p0band0 << EOD$' "$GP" && grep -A2 '^\$p0band0 << EOD$' "$GP" | grep -q '^-0.6 2 3$' &&
    grep -q '\$p0band0 using 1:2:3 with filledcurves.* title "paper: 2-3x (DistDGLv2)"' "$GP"
then ok "the speedup panel draws the paper's 2-3x as a band with its legend entry"
else not_ok "the speedup panel draws the paper's band"; grep -n 'band\|plot ' "$GP" | sed 's/^/# /'; fi
# the heatmap outlines the cells in [0.5, 0.75] and names the range in its legend
if grep -q '(\$3 >= 0.5 && \$3 <= 0.75) ? \$1 : NaN' "$GP" &&
    grep -q "keyentry .* title \"paper's range: 0.5-0.75 (nobody)\"" "$GP"
then ok "the heatmap outlines the cells in the paper's range"
else not_ok "the heatmap outlines the cells in the paper's range"; grep -n 'keyentry\|NaN' "$GP" | sed 's/^/# /'; fi
# epoch_s is drawn on the line panel (panel 4); sample_s only on the stacked one (panel 3), where
# a part is not comparable to a paper's total, so nowhere; speedup's baseline (distdgl) is one
# row per batch size, so speedup is not drawn on the epoch_s panel (no single value to draw at)
if grep -q '\$p3band0 using' "$GP" && ! grep -q '\$p2band' "$GP" && ! grep -q '\$p1band' "$GP" &&
    ! grep -q '\$p3band1' "$GP" &&
    ! grep -q '(parts)' "$GP"
then ok "a range is drawn on the panels that plot its column, not on a stacked one"
else not_ok "a range is drawn on the panels that plot its column"; grep -n 'band' "$GP" | sed 's/^/# /'; fi
# legend titles, stacked parts and the colour bar in words
if grep -q 'set key title "system"' "$GP" && ! grep -q 'set key title "run.policy"' "$GP" &&
    grep -q 'title "sample"' "$GP" && grep -q 'title "fetch"' "$GP" &&
    grep -q 'set cblabel "remote MB" offset' "$GP" && grep -q 'set xlabel "batch size"' "$GP"
then ok "legend titles, stacked parts and the colour bar label are words"
else not_ok "legend titles in words"; grep -n 'key title\|cblabel\|title "' "$GP" | sed 's/^/# /' | head; fi
if [ -s "$O/paper.png" ]; then ok "gnuplot draws the figure with its bands"
else not_ok "gnuplot draws the figure with its bands"; fi
# meta.json: the ranges (drawn or not) and the sources the figure depends on
M=$O/paper.meta.json
if grep -q '"paper": "DistDGLv2: 2-3x over DistDGL"' "$M" &&
    grep -q '"metric": "speedup"' "$M" && grep -q '"drawn": true' "$M" &&
    grep -q '"runtime/sim"' "$M" && grep -q '"policies/massivegnn.lua"' "$M" &&
    grep -q '"runtime/sweep/plot.c"' "$M" &&
    grep -q '"experiments/clusters/this-machine.lua"' "$M" && ! grep -q '"runtime/train"' "$M"
then ok "meta.json lists the paper's ranges and the sim figure's sources (not run mode's)"
else not_ok "meta.json lists the paper's ranges and the sources"; sed 's/^/# /' "$M" | head -40; fi
"$HALO" report "$O" >/dev/null 2>&1
if grep -q "^| paper's range | \`speedup\` 2-3x (DistDGLv2), drawn on the figure |$" "$O/index.md"
then ok "index.md has a row per paper range"
else not_ok "index.md has a row per paper range"; grep -n 'paper' "$O/index.md" | sed 's/^/# /'; fi

# a range not plotted anywhere is said so
sed 's/{ kind = "line", x = "run.batch", y = "epoch_s", series = "run.policy" },//' "$T/paper.lua" >"$T/paper2.lua"
sed -i 's/name = "paper"/name = "paper2"/' "$T/paper2.lua"
"$HALO" sweep "$T/paper2.lua" --out "$O" >/dev/null 2>&1
"$HALO" report "$O" >/dev/null 2>&1
if [ "$(grep -c '"drawn": false' "$O/paper2.meta.json")" -eq 2 ] &&
    grep -q "\`epoch_s\` 1-2 s (stacked), not drawn: no panel plots this column" "$O/index.md"
then ok "a range no panel plots is listed as not drawn"
else not_ok "a range no panel plots is listed as not drawn"; grep -n 'epoch_s' "$O/index.md" | sed 's/^/# /'; fi

# a range of a derived column no panel plots is drawn on the panel of the measure it is derived
# from, at its one baseline row's value: speedup 2-3x over distdgl is epoch_s in
# [distdgl's / 3, distdgl's / 2]
cat >"$T/inv.lua" <<'EOF'
return {
    name = "inv", mode = "sim",
    paper = { ranges = { { metric = "speedup", lo = 2, hi = 3, unit = "x", source = "DistDGLv2" } } },
    graph = { gen = "sbm", nodes = 3000, seed = 3 },
    partition = { parts = 2 },
    run = { cluster = "this-machine", trainers = 2, epochs = 2, batch = 300, fanouts = { 5, 10 } },
    sweep = { ["run.policy"] = { "policies/distdgl.lua", "policies/massivegnn.lua" } },
    measures = { "epoch_s" },
    derive = { speedup = { of = "epoch_s", baseline = { ["run.policy"] = "policies/distdgl.lua" } } },
    plot = { kind = "bars", x = "run.policy", y = "epoch_s" },
}
EOF
"$HALO" sweep "$T/inv.lua" --out "$O" >/dev/null 2>&1
base=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "epoch_s") c = i; next }
    $1 ~ /distdgl.lua/ { print $c }' "$O/inv.data.csv")
if [ -n "$base" ] && grep -A2 '^\$p0band0 << EOD$' "$O/inv.gp" | tail -2 |
    awk -v b="$base" '{ d1 = $2 - b / 3; d2 = $3 - b / 2; if (d1 < 0) d1 = -d1; if (d2 < 0) d2 = -d2
                        if (d1 > 1e-9 * b || d2 > 1e-9 * b) bad = 1 } END { exit bad || NR != 2 }' &&
    grep -q 'title "paper: 2-3x over distdgl (DistDGLv2)"' "$O/inv.gp" && grep -q '"drawn": true' "$O/inv.meta.json"
then ok "a speedup range is drawn on the epoch time panel at distdgl's epoch / 3 to / 2"
else not_ok "a speedup range is drawn on the epoch time panel (distdgl's epoch $base)"
    grep -A3 'band0 << EOD' "$O/inv.gp" | sed 's/^/# /'; fi

# bad ranges: one line with the file, line and field; nothing written
B=$T/bad
mkdir -p "$B"
bad() {
    local name=$1 pattern=$2 from=$3 to=$4
    rm -rf "$B/out"
    sed "s|$from|$to|" "$T/paper.lua" | sed 's/name = "paper"/name = "bad"/' >"$B/x.lua"
    check_fails "$name" "$pattern" "$HALO" sweep "$B/x.lua" --out "$B/out"
    if [ -e "$B/out/bad.csv" ]; then not_ok "$name: nothing written"; fi
}
bad "a range of an unknown column" 'x.lua:7: field paper.ranges\[1\].metric: "speedupp" is not a measure or a derived column' \
    'metric = "speedup"' 'metric = "speedupp"'
bad "a range of an axis" 'field paper.ranges\[1\].metric: "run.batch" is not a measure' \
    'metric = "speedup"' 'metric = "run.batch"'
bad "hi below lo" 'x.lua:7: field paper.ranges\[1\].hi: below lo' 'lo = 2, hi = 3' 'lo = 3, hi = 2'
bad "a range without source" 'field paper.ranges\[1\].source: missing, expected a non-empty string' \
    ', source = "DistDGLv2"' ''
bad "a range whose lo is a string" 'field paper.ranges\[1\].lo: a string, expected a number' \
    'lo = 2,' 'lo = "2",'
bad "an unknown field of paper" 'field paper.txt: unknown field \(paper takes: text, ranges\)' \
    'text = "DistDGLv2' 'txt = "DistDGLv2'
bad "depends with .." 'field depends\[1\]: expected a path relative to the repository' \
    'mode = "sim",' 'mode = "sim", depends = { "../x" },'
done_testing
