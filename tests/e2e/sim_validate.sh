#!/usr/bin/env bash
# halo sim validate: a small seeded draw (three configurations on a tiny sbm graph) run with
# mpirun halo train and halo sim: counts equal, CSV, figure and markdown written, the profile's
# validation entry recorded and shown by halo sim, a machine made "unfit" by a zero tolerance
# refused (exit 4), bad space files refused in one line. When the measured runs are fit (quiet
# machine, or runs ahead of other work under --realtime with steady epochs), the sampling
# error of this machine's profile stays within a loose bound (70%) and the same profile
# with the sampling stage's per-edge and per-node costs x8 is caught (exit 5): the bound is on
# error ratios (simulated / measured), never on absolute times. When they are unfit those two
# checks are reported as skipped, with the validator's own reason.
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
PROFILE=${SIM_VALIDATE_PROFILE:-experiments/clusters/this-machine.lua}
W=$T/work
cat >"$T/space.lua" <<'EOF'
return {
    epochs = 4,
    graphs = { { family = "sbm", nodes = { 20000 } } },
    feat_dim = { 32 },
    ranks = { 2 },
    layers = { 2 },
    fanout = { 5, 10 },
    hidden = { 16, 64 },
    batch = { 256 },
    depth = { 0, 1 },
    sampler_threads = { 1 },
    netem = { "off" },
    policies = { { file = "policies/distdgl.lua" }, { file = "policies/lru.lua", set = { f = { 0.25 } } } },
}
EOF
cp "$PROFILE" "$T/p.lua"
PNAME=$(sed -n 's/^    name = "\(.*\)",$/\1/p' "$PROFILE")
V=("$HALO" sim validate --seed 3 --configs 3 --space "$T/space.lua" --work "$W")

# 1. the draw, with --force (this test runs on shared machines too)
"${V[@]}" --profile "$T/p.lua" --out "$T/o1" --force >"$T/run1" 2>"$T/run1.err"
rc=$?
if [ $rc -eq 0 ] || [ $rc -eq 5 ]; then ok "validate --force runs three configurations (exit $rc)"; else
    not_ok "validate --force runs three configurations (exit $rc)"; sed 's/^/# /' "$T/run1" "$T/run1.err" | tail -n 20; fi
check "the counts are equal in every configuration" grep -q "^counts: equal in 3 of 3 configurations" "$T/run1"
n=$(grep -cE '^ +[1-3] sbm-20000/f32 +2 2 ' "$T/run1")
[ "$n" -eq 3 ] && ok "one row per configuration" || not_ok "one row per configuration ($n)"
check "the summary has the epoch's median and worst |error|" grep -qE "^epoch +3 +[0-9.]+% +[0-9.]+%" "$T/run1"
check "and a line per stage" grep -qE "^sample +[0-9]+ " "$T/run1"
check "it says whether the machine was fit to measure" grep -qE "^(machine: quiet enough|UNFIT: machine too loaded)" "$T/run1"
check "it probes the machine's speed before and after the runs, beside the profile's" grep -qE \
    "^machine speed: sampler [0-9.]+ ns per edge before the runs, [0-9.]+ after \(profile [0-9.]+\); GEMM [0-9.]+ GFLOP/s before, [0-9.]+ after \(profile [0-9.]+\): (within|up to) [0-9]+% of the profile" "$T/run1"
check "the CSV has a header and three rows" bash -c "[ \$(wc -l <'$T/o1/sim_vs_measured.csv') -eq 4 ] &&
    head -n 1 '$T/o1/sim_vs_measured.csv' | grep -q '^config,graph,ranks,.*,epoch_err,sample_err,'"
check "the figure, its script and meta.json are written" bash -c "
    [ -s '$T/o1/sim_vs_measured.png' ] && [ -s '$T/o1/sim_vs_measured.svg' ] &&
    grep -q 'sim_vs_measured.csv' '$T/o1/sim_vs_measured.gp' &&
    grep -q '\"caption\": \".*profile $PNAME: epoch median' '$T/o1/sim_vs_measured.meta.json'"
# the bias table: one row per group drawn, its n the configurations of that group in the CSV
# (ranks against this machine's cores, depth 0 or pipelined, netem or not)
cores=$(nproc)
want=$(awk -F, -v c="$cores" 'NR > 1 {
        g = sprintf("ranks %s cores, %s, %s", $3 > c ? ">" : "<=", $9 > 0 ? "pipelined" : "depth 0",
                    $11 == "off" ? "no netem" : "netem"); n[g]++ }
    END { for (g in n) printf "%s=%d\n", g, n[g] }' "$T/o1/sim_vs_measured.csv" | sort)
got=$(awk '/^bias by group/ { on = 1; next } on && /^ranks / {
        n = split($0, f, /  +/); split(f[2], a, " "); printf "%s=%s\n", f[1], a[1] }
    on && /^files:/ { on = 0 }' "$T/run1" | sort)
if [ -n "$want" ] && [ "$want" = "$got" ]; then ok "the bias table has a row per group drawn, with its configurations"; else
    not_ok "the bias table has a row per group drawn, with its configurations"; printf '# want %s\n# got %s\n' "$want" "$got"; fi
check "... each with the epoch's signed median" grep -qE "^ranks (<=|>) cores, (depth 0|pipelined), (no netem|netem) +[1-3] +[-+][0-9.]+%" "$T/run1"

# 2. the same seed draws the same configurations; the measured runs are reused from the work dir
"${V[@]}" --profile "$T/p.lua" --out "$T/o2" --force --markdown >"$T/run2" 2>&1
check "the same seed gives the same table" bash -c "
    diff <(cut -d, -f1-13 '$T/o1/sim_vs_measured.csv') <(cut -d, -f1-13 '$T/o2/sim_vs_measured.csv')"
n=$(grep -cE '^\| [1-3] \| sbm-20000/f32 \| 2 \| 2 \|' "$T/run2")
[ "$n" -eq 3 ] && ok "--markdown prints the table as markdown" || not_ok "--markdown prints the table as markdown ($n rows)"
check "... and the summary" grep -qE '^\| epoch \| 3 \| [0-9.]+% \| [0-9.]+% \(#[1-3]\) \|$' "$T/run2"
check "... and the bias table" grep -qE '^\| ranks (<=|>) cores, (depth 0|pipelined), (no netem|netem) \| [1-3] \| [-+][0-9.]+ \|' "$T/run2"

# a build of halo in another directory takes the same runs from the work directory (the key
# leaves the binary out): nothing is measured again
mkdir -p "$T/elsewhere" && cp "$HALO" "$T/elsewhere/halo"
before=$(ls "$W/runs" | grep -c '\.run\.jsonl$')
"$T/elsewhere/halo" sim validate --seed 3 --configs 3 --space "$T/space.lua" --work "$W" \
    --profile "$T/p.lua" --out "$T/o2c" --force >"$T/run2c" 2>&1
after=$(ls "$W/runs" | grep -c '\.run\.jsonl$')
check "another build takes the measured runs from the work directory ($before runs, then $after)" \
    bash -c "[ '$before' -gt 0 ] && [ '$before' -eq '$after' ] &&
        diff <(cut -d, -f1-13 '$T/o1/sim_vs_measured.csv') <(cut -d, -f1-13 '$T/o2c/sim_vs_measured.csv')"

# the cached measured runs are what the comparison reads: a count changed in one of them is
# caught (exit 3), the row names the field
key=$(awk -F, '$1 == 2 { print $NF }' "$T/o1/sim_vs_measured.csv")
same=$(awk -F, -v k="$key" 'NR > 1 && $NF == k' "$T/o1/sim_vs_measured.csv" | wc -l)
run=$W/runs/$key.run.jsonl
cp "$run" "$T/run.bak"
sed -i '0,/"sampled_edges":\([0-9]*\)/s//"sampled_edges":1\1/' "$run"
"${V[@]}" --profile "$T/p.lua" --out "$T/o2b" --force >"$T/run2b" 2>&1
rc=$?
[ $rc -eq 3 ] && ok "a count that differs exits 3" || not_ok "a count that differs exits 3 (exit $rc)"
check "... the row says DIFFER and which field" grep -qE "DIFFER: epoch 0 rank 0 sampled_edges: measured 1[0-9]+, simulated [0-9]+" "$T/run2b"
check "... and the summary counts it" grep -q "^counts: equal in $((3 - same)) of 3 configurations" "$T/run2b"
cp "$T/run.bak" "$run"

# --repeats: a second pass measures each configuration again (runs of their own in the work
# directory), the table and summary give the repeats' spread, and the run compared is the
# one of the median epoch (of two, the faster): a repeat made 100x slower is never the
# reference, and it shows as the spread
ls "$W"/runs/*.run.jsonl | sort >"$T/runs.before"
"${V[@]}" --profile "$T/p.lua" --out "$T/or" --force --repeats 2 >"$T/runr" 2>&1
ls "$W"/runs/*.run.jsonl | sort >"$T/runs.after"
newruns=$(comm -13 "$T/runs.before" "$T/runs.after")
distinct=$(awk -F, 'NR > 1 { print $NF }' "$T/o1/sim_vs_measured.csv" | sort -u | wc -l)
check "--repeats 2 measures each configuration once more" bash -c "[ \$(echo '$newruns' | grep -c run.jsonl) -eq $distinct ]"
check "... prints the repeats' spread per configuration" bash -c "
    [ \$(grep -cE '^ +[1-3] sbm-20000/f32 .* [0-9.]+%  equal' '$T/runr') -eq 3 ]"
check "... and in the summary" grep -qE "^repeats: 3 configurations measured more than once; .* [0-9.]+% median, [0-9.]+% worst" "$T/runr"
check "... and in the CSV" bash -c "
    head -n 1 '$T/or/sim_vs_measured.csv' | grep -q ',repeats,repeat_spread,key$' &&
    [ \$(awk -F, 'NR > 1 && \$(NF - 2) == 2' '$T/or/sim_vs_measured.csv' | wc -l) -eq 3 ]"
# a draw whose configurations land far from themselves when measured again cannot validate a
# model: with a limit under their spread it is refused, one line naming the spread, exit 4 (the
# other two judges of the machine out of reach, so that a noisy machine's own spread of epochs
# or other work does not name itself first in that line)
"${V[@]}" --profile "$T/p.lua" --out "$T/orq" --repeats 2 --max-repeat-spread 0.00001 \
    --max-spread 1000 --max-busy 1000 >"$T/runrq" 2>&1
rc=$?
[ $rc -eq 4 ] && ok "--max-repeat-spread under the repeats' spread: unfit (exit 4)" ||
    not_ok "--max-repeat-spread under the repeats' spread: unfit (exit 4, got $rc)"
check "... saying how far the repeats spread in the median" grep -qE \
    "^UNFIT: machine too loaded to measure: a configuration's 2 repeated runs spread [0-9.]+% in the median \(limit [0-9.e-]+%\)" "$T/runrq"
check_fails "--max-repeat-spread 11 is refused" "--max-repeat-spread 0\.\.10" \
    "${V[@]}" --profile "$T/p.lua" --out "$T/orq2" --max-repeat-spread 11
first=$(awk -F, '$1 == 1 { print $NF }' "$T/o1/sim_vs_measured.csv")
slow=""
for f in $newruns; do
    k=$(basename "$f" .run.jsonl)
    grep -q -- "--batch 256 " "$W/runs/$k.log" || continue
    # the repeat of configuration 1: the same command line as its first run
    if [ "$(sed -n 1p "$W/runs/$k.log" | sed 's/--metrics .*//')" = "$(sed -n 1p "$W/runs/$first.log" | sed 's/--metrics .*//')" ]; then slow=$k; fi
done
if [ -n "$slow" ]; then
    cp "$W/runs/$slow.run.jsonl" "$T/slow.bak"
    sed -i -E 's/"time_s":([0-9.e-]+)/"time_s":\1e2/' "$W/runs/$slow.run.jsonl"
    "${V[@]}" --profile "$T/p.lua" --out "$T/or2" --force --repeats 2 >"$T/runr2" 2>&1
    check "... the slower repeat is not the one compared" bash -c "
        [ \"\$(awk -F, '\$1 == 1 { print \$NF }' '$T/or2/sim_vs_measured.csv')\" = '$first' ]"
    check "... and its spread shows (over 1000%)" bash -c "
        awk -F, '\$1 == 1 { exit !(\$(NF - 1) > 10) }' '$T/or2/sim_vs_measured.csv'"
    # the summary counts the configurations whose |epoch error| exceeds their repeats' spread,
    # as the CSV's own columns say (epoch_err in %, repeat_spread as a fraction)
    want=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "epoch_err") c = i }
        NR > 1 { e = $c < 0 ? -$c : $c; if (e > 100 * $(NF - 1)) n++ } END { print n + 0 }' "$T/or2/sim_vs_measured.csv")
    check "... and the summary counts the errors beyond the spread ($want)" \
        grep -qE "exceeds that spread in $want of them\$" "$T/runr2"
    cp "$T/slow.bak" "$W/runs/$slow.run.jsonl"
else
    not_ok "... the repeat of configuration 1 is found among the new runs"
fi
check_fails "--repeats 0 is refused" "--repeats 1..9" "${V[@]}" --profile "$T/p.lua" --out "$T/or3" --repeats 0

# the draw: --dry-run runs nothing; another seed draws other configurations; the default space
# has every shipped policy
"${V[@]}" --profile "$T/p.lua" --out "$T/o0" --dry-run --configs 8 >"$T/dry3" 2>&1
"${V[@]}" --profile "$T/p.lua" --out "$T/o0" --dry-run --configs 8 --seed 4 >"$T/dry4" 2>&1
check "--dry-run prints the configurations and writes nothing" bash -c "
    [ \$(grep -c 'mpirun .*halo train ' '$T/dry3') -eq 8 ] && [ ! -e '$T/o0' ]"
check "another seed draws other configurations" bash -c "
    ! diff -q <(tail -n +2 '$T/dry3') <(tail -n +2 '$T/dry4') >/dev/null"
# the profile's origin: measured on another CPU, years ago, a notice each; this host's CPU a
# minute ago, neither
sed '1s|.*|-- Measured by `halo calibrate` on elsewhere (Imaginary CPU 9000, 2 cores online) on 2020-01-01 00:00 UTC.|' \
    "$T/p.lua" >"$T/old.lua"
"${V[@]}" --profile "$T/old.lua" --out "$T/o0" --dry-run --configs 1 >"$T/dry_old" 2>&1
check "a profile measured on another CPU gets a notice naming both" \
    grep -q "was measured on Imaginary CPU 9000, this host is " "$T/dry_old"
check "... and one calibrated days ago another" grep -qE "calibrated [0-9]+ days ago" "$T/dry_old"
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
sed "1s|.*|-- Measured by \`halo calibrate\` on here ($cpu, 2 cores online) on $(date -u '+%Y-%m-%d %H:%M') UTC.|" \
    "$T/p.lua" >"$T/new.lua"
"${V[@]}" --profile "$T/new.lua" --out "$T/o0" --dry-run --configs 1 >"$T/dry_new" 2>&1
check "this host's profile of a minute ago gets neither" \
    bash -c "! grep -qE 'was measured on|(hours|days) ago' '$T/dry_new' && grep -q 'mpirun .*halo train ' '$T/dry_new'"
"$HALO" sim validate --dry-run --configs 300 --profile "$T/p.lua" --out "$T/o0" >"$T/dry" 2>&1
missing=""
for f in policies/*.lua; do
    n=$(basename "$f" .lua)
    [ "$n" = cachelib ] && continue # a library of the cache policies, not a policy
    grep -q -- "--policy $f " "$T/dry" || missing="$missing $n"
done
[ -z "$missing" ] && ok "the default space draws every shipped policy" || not_ok "the default space draws every shipped policy (missing:$missing)"
check "... ranks 2 up to twice the cores" bash -c "
    [ \$(grep -oE ' -np [0-9]+ ' '$T/dry' | sort -u | wc -l) -eq $((2 * $(nproc) - 1)) ]"
check "... 2 and 3 layers, netem on and off" bash -c "
    grep -qE -- '--fanouts [0-9]+,[0-9]+ ' '$T/dry' && grep -qE -- '--fanouts [0-9]+,[0-9]+,[0-9]+ ' '$T/dry' &&
    grep -q -- '--netem ' '$T/dry' && grep -c -- '--netem ' '$T/dry' | grep -qv '^300$'"

# an edge list of the user's: imported, given features, labels and a split, measured and
# simulated with equal counts (the space file's graphs replaced by it)
awk 'BEGIN { srand(5); for (i = 0; i < 1200; i++) for (j = 0; j < 5; j++) print i, int(rand() * 1200) }' >"$T/el.txt"
"${V[@]}" --profile "$T/p.lua" --out "$T/oe" --edges "$T/el.txt" --dry-run --configs 30 \
    >"$T/dry_el" 2>&1
check "--edges adds the edge list to the graphs drawn" grep -qE '^ +[0-9]+ edges:el.txt/f32, 2 ranks' "$T/dry_el"
sed 's/graphs = .*/graphs = { { edges = "'"${T//\//\\/}"'\/el.txt" } },/' "$T/space.lua" >"$T/el.lua"
"${V[@]}" --profile "$T/p.lua" --out "$T/oe" --force --configs 1 --space "$T/el.lua" >"$T/rune" 2>&1
check "an edge-list graph is measured and simulated with equal counts" bash -c "
    grep -q '^counts: equal in 1 of 1 configurations' '$T/rune' && grep -qE '^ +1 edges:el.txt/f32 ' '$T/rune'"

# 3. load detection: a zero tolerance for the spread of epochs makes any machine unfit
"${V[@]}" --profile "$T/p.lua" --out "$T/o3" --max-spread 1e-9 --max-busy 100 --max-load 1000 >"$T/run3" 2>&1
rc=$?
[ $rc -eq 4 ] && ok "an unfit measurement exits 4" || not_ok "an unfit measurement exits 4 (exit $rc)"
check "... with one line saying why" grep -qE "^UNFIT: machine too loaded to measure: .*epoch times spread [0-9]+% in configuration [1-3] \(limit 0%\)" "$T/run3"
# other work that this test starts itself (a spinning shell for up to 60 s) keeps about one core
# busy: the check before the first run sees it (limit 0.25 of a core on 2 cores: 0.5) and
# refuses before measuring; an idle machine cannot make this pass or fail by chance
timeout 60 sh -c 'while :; do :; done' &
spin=$!
sleep 1
"${V[@]}" --profile "$T/p.lua" --out "$T/o3" --max-busy 0.25 --max-load 1000 --max-spread 1000 \
    --configs 1 --work "$T/work-busy" >"$T/run3b" 2>&1
rc=$?
kill $spin 2>/dev/null; wait $spin 2>/dev/null
if [ $rc -eq 4 ] && grep -qE "^halo sim validate: machine too loaded to measure: .*other work using [0-9.]+ cores .*; nothing more measured" "$T/run3b" &&
    ! ls "$T"/work-busy/runs/*.run.jsonl >/dev/null 2>&1; then
    ok "a busy machine is refused before measuring"
else not_ok "a busy machine is refused before measuring (exit $rc)"; sed 's/^/# /' "$T/run3b" | tail -n 5; fi

# --per-graph: each configuration simulated on its own partition's graph constants, measured
# once per partition into the work directory, the same measured runs compared
"${V[@]}" --profile "$T/p.lua" --out "$T/opg" --force --per-graph >"$T/runpg" 2>&1
check "--per-graph measures the graph constants on each drawn partition" bash -c "
    n=\$(ls '$W'/profiles/*.lua 2>/dev/null | wc -l); [ \$n -ge 1 ] &&
    grep -l '^    graph = \"' '$W'/profiles/*.lua | wc -l | grep -qx \$n"
check "... and compares them with the same measured runs" grep -q '^counts: equal in 3 of 3 configurations' "$T/runpg"
check "... on those profiles (a simulation per configuration)" bash -c "
    [ \$(ls '$W'/runs/*.graph.sim.jsonl | wc -l) -ge 1 ] &&
    [ -z \"\$(grep -L -- '--cluster $W/profiles/' '$W'/runs/*.graph.sim.log)\" ]"

# 4. --record writes the validation into the profile; halo sim shows it
"$HALO" gen sbm --nodes 1500 --feat-dim 32 --seed 1 -o "$T/g" >/dev/null 2>&1
"$HALO" partition "$T/g" --parts 2 -o "$T/pp" >/dev/null 2>&1
check_out "a profile without a validation says so" "profile $PNAME not validated" \
    "$HALO" sim "$T/pp" -q --cluster "$T/p.lua" --epochs 2 --batch 64 --machines 1 --trainers 2
"${V[@]}" --profile "$T/p.lua" --out "$T/o4" --force --record >"$T/run4" 2>&1
check "--record writes one validation line into the profile" bash -c "
    [ \$(grep -c '^    validation = { seed = 3, configs = 3, median_pct = ' '$T/p.lua') -eq 1 ]"
"${V[@]}" --profile "$T/p.lua" --out "$T/o4" --force --record >"$T/run4" 2>&1
check "... and replaces it when recorded again" bash -c "[ \$(grep -c 'validation = ' '$T/p.lua') -eq 1 ]"
check "... keeping the rest of the file" bash -c "diff <(grep -v 'validation = ' '$T/p.lua') '$PROFILE'"
check_out "halo sim prints the profile's validated error" \
    "profile $PNAME validated: epoch median \|error\| [0-9.]+%, worst [0-9.]+%.*seed 3, 3 configurations" \
    "$HALO" sim "$T/pp" -q --cluster "$T/p.lua" --epochs 2 --batch 64 --machines 1 --trainers 2 \
    --metrics "$T/s.jsonl"
check "... and writes it into the metrics" grep -qE '^\{"type":"validation","mode":"sim","profile":"'"$PNAME"'","validated":true,"seed":3,"configs":3,' "$T/s.jsonl"

# 5. bad input: one line, exit 1, nothing run
printf 'return { ranks = { 0 } }\n' >"$T/bad1.lua"
check_fails "a bad value in the space file" "bad1.lua: field ranks: values must be whole numbers" \
    "${V[@]}" --profile "$T/p.lua" --out "$T/o5" --space "$T/bad1.lua"
printf 'return { graphs = { { family = "er", nodes = { 100 } } } }\n' >"$T/bad2.lua"
check_fails "an unknown graph family" 'graphs\[1\]: give family = "sbm" or "rmat"' \
    "${V[@]}" --profile "$T/p.lua" --out "$T/o5" --space "$T/bad2.lua"
printf 'return { colour = 3 }\n' >"$T/bad3.lua"
check_fails "an unknown field" "bad3.lua: field colour: unknown" \
    "${V[@]}" --profile "$T/p.lua" --out "$T/o5" --space "$T/bad3.lua"
printf 'return { policies = { { file = "nope.lua" } } }\n' >"$T/bad4.lua"
check_fails "a missing policy file" "policy file nope.lua not found" \
    "${V[@]}" --profile "$T/p.lua" --out "$T/o5" --space "$T/bad4.lua"
check "... and nothing is written for them" test ! -e "$T/o5/sim_vs_measured.csv"

check_fails "--cluster-hosts that is not a cluster" "--cluster-hosts $T: no env file" \
    "${V[@]}" --profile "$T/p.lua" --out "$T/o5" --cluster-hosts "$T"

# the namespace cluster of scripts/cluster.sh (root and ip netns; else skipped): 2 hosts on
# shaped links, one configuration, the measured ranks on both hosts, the counts equal
trap '[ -f "$T/cluster/env" ] && scripts/cluster.sh down --dir "$T/cluster" >/dev/null 2>&1' EXIT
C=$(scripts/cluster.sh up 2 --rate 1gbit --prefix hsv$$ --subnet 10.253.$(($$ % 200)) --dir "$T/cluster" 2>"$T/up.err")
rc=$?
if [ $rc -eq 0 ]; then
    "${V[@]}" --profile "$T/p.lua" --out "$T/oc" --force --configs 1 --cluster-hosts "$C" \
        --work "$T/workc" >"$T/runc" 2>&1
    rc=$?
    scripts/cluster.sh down --dir "$C" >/dev/null 2>&1
    [ $rc -eq 0 ] || [ $rc -eq 5 ] && ok "validate on a 2-host namespace cluster (exit $rc)" ||
        { not_ok "validate on a 2-host namespace cluster (exit $rc)"; sed 's/^/# /' "$T/runc" | tail -n 8; }
    check "... runs mpirun through the cluster's wrapper, one rank per host" \
        grep -q "$C/mpirun .* -np 2 --map-by ppr:1:node " "$T"/workc/runs/*.log
    check "... simulates 2 machines at the links' rate" bash -c "
        grep -q -- '--machines 2 --trainers 1' '$T'/workc/runs/*.sim.log &&
        grep -qE '^ *nic_GBps = 0.125,' '$T/workc/cluster-profile.lua'"
    check "... with equal counts" grep -q "^counts: equal in 1 of 1 configurations" "$T/runc"
else
    why=$(head -n 1 "$T/up.err")
    [ $rc -eq 77 ] && ok "validate on a namespace cluster # SKIP $why" ||
        not_ok "scripts/cluster.sh up 2 (exit $rc: $why)"
fi

# 6. the errors: within a loose bound with this machine's profile; the sampler's costs x8
#    is caught. The measured runs go ahead of other work (--realtime: SCHED_RR, root) where
#    chrt allows it; they are then judged by the spread of their epochs alone. The bound is on
#    the sampling stage (70%). The wrong profile multiplies every per-edge and per-node cost of
#    the sampler (short, long and whole lists) by 8: doubling them moved the stage's error by
#    only about +47 points on these graphs (the stage also holds its exchanges), too close to
#    the noise of a shared machine; with the sixth pass's generic sampler constants this
#    machine's own profile puts the stage 50-61% under here (it measured -4% to +37% before),
#    so x4 (about +140 points) could land inside the bound on the other side; x8 cannot.
#    The block's two constants (block_node_ns, block_edge_ns) are multiplied too: since the
#    seventh pass the block is priced per hash operation and is up to half the stage's work.
#    With only the draws' four constants x8 this check once exited 0 (a run beside other work,
#    its quick profile not kept, the cause not found); with every constant of the stage's work
#    x8, a profile within 70% lands at +140% or more.
#    Skipped when the machine is unfit to measure.
# The profile is this machine's own, calibrated here (machines of one kind differ by up to 2.6x
# in absolute speed, so a profile shipped from another machine says nothing of this one's
# model), unless SIM_VALIDATE_PROFILE names one.
if [ -n "${SIM_VALIDATE_PROFILE:-}" ]; then
    cp "$PROFILE" "$T/good.lua"
else
    cal=("$HALO" calibrate --quick -o "$T/good.lua")
    chrt -r 1 true 2>/dev/null && cal=(chrt -r 1 "${cal[@]}")
    "${cal[@]}" >"$T/cal.log" 2>&1 ||
        { not_ok "halo calibrate --quick for this machine's profile"; sed 's/^/# /' "$T/cal.log" | tail -n 5; }
fi
awk '/(sample_(edge|node|copy|long)|block_(node|edge))_ns =/ { match($0, /= [0-9.e+-]+/); v = substr($0, RSTART + 2, RLENGTH - 2);
     sub(/= [0-9.e+-]+/, "= " v * 8) } { print }' "$T/good.lua" >"$T/wrong.lua"
check "the wrong profile (sampler costs x8) differs in the six sampling constants" bash -c "
    [ \$(diff '$T/good.lua' '$T/wrong.lua' | grep -c '^>') -eq 6 ]"
rt=()
chrt -r 1 true 2>/dev/null && rt=(--realtime)
B=(--max-stage 70 --stages sample --remeasure "${rt[@]}")
"${V[@]}" --profile "$T/good.lua" --out "$T/o6" "${B[@]}" >"$T/run6" 2>&1
rc=$?
if [ $rc -eq 4 ]; then
    why=$(grep -oE 'machine too loaded to measure: [^;]*' "$T/run6" | head -n 1 | cut -c 1-200)
    ok "this machine's profile: sampling median |error| <= 70% # SKIP ${why:-unfit}"
    ok "the sampler's cost x8 fails the validation # SKIP ${why:-unfit}"
else
    [ $rc -eq 0 ] && ok "this machine's profile: sampling median |error| <= 70% ${rt[*]}" ||
        { not_ok "this machine's profile: sampling median |error| <= 70% (exit $rc)"; sed 's/^/# /' "$T/run6" | tail -n 12; }
    # the same measured runs (from the work directory), the wrong profile
    "${V[@]}" --profile "$T/wrong.lua" --out "$T/o7" --max-stage 70 --stages sample \
        "${rt[@]}" >"$T/run7" 2>&1
    rc=$?
    [ $rc -eq 5 ] && ok "the sampler's cost x8 fails the validation" ||
        { not_ok "the sampler's cost x8 fails the validation (exit $rc)"; sed 's/^/# /' "$T/run7" | tail -n 12; }
fi
done_testing
