#!/usr/bin/env bash
# The at-scale experiment set (experiments/scale/, make experiments-scale): every file loads, full
# and quick, and its full variant runs at the papers' settings (graph sizes, batch sizes, GPU
# counts, partitions, MassiveGNN's parameters), read from the commands --dry-run prints. Nothing
# is run: the full set partitions a 123 M-edge graph.
cd "$(dirname "$0")/../.."
. tests/e2e/lib.sh
S=experiments/scale

for f in $S/*.lua; do
    check "$(basename "$f") loads (--dry-run)" "$HALO" sweep "$f" --out "$T/r" --dry-run
    check "$(basename "$f") --quick loads (--dry-run)" "$HALO" sweep "$f" --quick --out "$T/r" --dry-run
done

# sims FILE [--quick]: the halo sim commands of the points, one a line
sims() { "$HALO" sweep "$@" --out "$T/r" --dry-run 2>/dev/null | grep -E '^  \S*halo sim '; }
# parts_of LINES: the sorted distinct GPU counts (machines x trainers) of halo sim commands
parts_of() {
    sed -nE 's/.*--machines ([0-9]+) --trainers ([0-9]+).*/\1 \2/p' | awk '{print $1 * $2}' |
        sort -n -u | tr '\n' ' '
}

# DistDGLv2 vs DistDGL: products-like x1 (both profiles) and papers100M-like x0.02, two-level
# METIS, batch 1000, 8-64 GPUs
for n in scale_v2_speedup:products:1 scale_v2_speedup_aws:products:1 \
    scale_v2_papers:papers100M:0.02; do
    IFS=: read -r n g x <<<"$n"
    dry=$("$HALO" sweep $S/$n.lua --out "$T/r" --dry-run 2>/dev/null)
    run=$(echo "$dry" | grep -E '^  \S*halo sim ')
    if echo "$dry" | grep -q -- "gen --no-features --preset $g --scale $x " &&
        ! echo "$dry" | grep -E 'halo gen ' | grep -vq -- "--preset $g --scale $x " &&
        [ "$(echo "$dry" | grep -E 'halo partition ' | grep -c -- '--method multilevel')" = 8 ] &&
        [ "$(echo "$run" | grep -c -- '--batch 1000 ')" = 8 ] &&
        [ "$(echo "$run" | parts_of)" = "8 16 32 64 " ] &&
        [ "$(echo "$run" | grep -c 'policy policies/distdgl.lua')" = 4 ] &&
        [ "$(echo "$run" | grep -c 'policy policies/distdglv2.lua')" = 4 ]; then
        ok "$n: $g x$x, two-level METIS, batch 1000, 8-64 GPUs, both policies"
    else
        not_ok "$n: $g x$x, two-level METIS, batch 1000, 8-64 GPUs, both policies"
        echo "$dry" | sed 's/^/# /' | head -n 12
    fi
done
for n in scale_v2_speedup scale_v2_papers; do
    check "$n runs on the Perlmutter profile" \
        bash -c "[ \$(\"$HALO\" sweep $S/$n.lua --out $T/r --dry-run | grep -c 'cluster experiments/clusters/perlmutter.lua') = 8 ]"
done
check "scale_v2_speedup_aws runs on the AWS profile" \
    bash -c "[ \$(\"$HALO\" sweep $S/scale_v2_speedup_aws.lua --out $T/r --dry-run | grep -c 'cluster experiments/clusters/aws-p3dn.lua') = 8 ]"

# MassiveGNN: arxiv- and products-like x1, batch 2000, f 0.25/0.5/1.0 at alpha 0.005, delta 32
run=$(sims $S/scale_massivegnn.lua)
mg=$(echo "$run" | grep 'policy policies/massivegnn.lua')
if [ "$(echo "$run" | wc -l)" = 32 ] && [ "$(echo "$run" | grep -c -- '--batch 2000 ')" = 32 ] &&
    [ "$(echo "$run" | parts_of)" = "8 16 32 64 " ] &&
    [ "$(echo "$run" | grep -c 'policy policies/distdgl.lua')" = 8 ] &&
    [ "$(echo "$mg" | grep -c -- '--set alpha=0.005 --set delta=32 --set f=0.25 ')" = 8 ] &&
    [ "$(echo "$mg" | grep -c -- '--set alpha=0.005 --set delta=32 --set f=0.5 ')" = 8 ] &&
    [ "$(echo "$mg" | grep -c -- '--set alpha=0.005 --set delta=32 --set f=1 ')" = 8 ] &&
    [ "$("$HALO" sweep $S/scale_massivegnn.lua --out "$T/r" --dry-run 2>/dev/null |
        grep -E 'halo gen ' | sed -nE 's/.*(--preset \S+ --scale \S+).*/\1/p' | sort -u |
        tr '\n' ';')" = "--preset arxiv --scale 1;--preset products --scale 1;" ]; then
    ok "scale_massivegnn: arxiv and products x1, batch 2000, the paper's f, alpha, delta, 8-64 GPUs"
else
    not_ok "scale_massivegnn: arxiv and products x1, batch 2000, the paper's f, alpha, delta, 8-64 GPUs"
    echo "$run" | sed 's/^/# /' | head -n 8
fi

# the figures committed in reports/ are the full variants (no --quick), every point ok
for n in scale_v2_speedup:8 scale_v2_speedup_aws:8 scale_v2_papers:8 scale_massivegnn:32; do
    m=reports/${n%:*}.meta.json k=${n#*:}
    if grep -q '"command": "halo sweep experiments/scale/'"${n%:*}"'.lua"' "$m" &&
        tr -d ' \n' <"$m" | grep -q '"points":{"total":'"$k"',"ok":'"$k"',"failed":0,'; then
        ok "$m: the full variant, all $k points ok"
    else not_ok "$m: the full variant, all $k points ok"; fi
done

done_testing
