#!/usr/bin/env bash
# End-to-end: halo gen / verify / info through the real binary, including corrupted directories.
source "$(dirname "$0")/lib.sh"

check "gen --help" "$HALO" gen --help
check_out "gen --help lists the presets" "papers100M" "$HALO" gen --help
check "verify --help" "$HALO" verify --help
check "info --help" "$HALO" info --help

# Determinism: the same flags give byte-identical files.
check "gen sbm" "$HALO" gen sbm --nodes 3000 --classes 5 -o "$T/a"
check "gen sbm again" "$HALO" gen sbm --nodes 3000 --classes 5 -o "$T/b"
same=1
for f in meta.json indptr.i64 indices.i32 feat.f32 label.i32 split.u8; do
    cmp -s "$T/a/$f" "$T/b/$f" || same=0
done
if [ $same = 1 ]; then ok "same flags give identical files"; else not_ok "same flags give identical files"; fi
check "gen sbm with another seed" "$HALO" gen sbm --nodes 3000 --classes 5 --seed 9 -o "$T/c"
if cmp -s "$T/a/indices.i32" "$T/c/indices.i32"; then not_ok "another seed changes the graph"
else ok "another seed changes the graph"; fi
check_out "verify passes" "ok \(3000 nodes" "$HALO" verify "$T/a"
check_out "info counts nodes" "^nodes +3000$" "$HALO" info "$T/a"
check_out "info shows classes" "^classes +5 \(3000 nodes labelled\)" "$HALO" info "$T/a"
check_out "info shows the split" "^split +train 1800, valid 600, test 600, none 0" "$HALO" info "$T/a"
check_out "info shows degree statistics" "^in-degree +min [0-9]+, median [0-9]+, max [0-9]+" \
    "$HALO" info "$T/a"
check_out "info shows bytes on disk" "^on disk .*indices.i32" "$HALO" info "$T/a"
if compgen -G "$T/*.tmp-*" >/dev/null; then not_ok "no temporary directory is left behind"
else ok "no temporary directory is left behind"; fi

# One byte of indices.i32 changed to an out-of-range id (the high byte of entry 0 -> 0x7f).
cp -r "$T/a" "$T/bad-index"
printf '\x7f' | dd of="$T/bad-index/indices.i32" bs=1 seek=3 conv=notrunc status=none
check_fails "verify names indices.i32 with a bad id" "indices.i32: entry 0 .* not a node id" \
    "$HALO" verify "$T/bad-index"
check_fails "info names indices.i32 with a bad id" "indices.i32: entry 0" "$HALO" info "$T/bad-index"

# feat.f32 truncated.
cp -r "$T/a" "$T/short-feat"
truncate -s -4 "$T/short-feat/feat.f32"
check_fails "verify names a truncated feat.f32" "feat.f32: size is" "$HALO" verify "$T/short-feat"
check_fails "info names a truncated feat.f32" "feat.f32: size is" "$HALO" info "$T/short-feat"

# A changed feature value breaks only the checksum.
cp -r "$T/a" "$T/flip"
printf '\x42' | dd of="$T/flip/feat.f32" bs=1 seek=100 conv=notrunc status=none
check_fails "verify sees a changed feature byte" "feat.f32: checksum" "$HALO" verify "$T/flip"
check_fails "verify names a missing file" "label.i32" bash -c "rm '$T/flip/label.i32'; '$HALO' verify '$T/flip'"
check_fails "verify of a directory that is not a graph" "meta.json" "$HALO" verify "$T"

# R-MAT and presets.
check_out "gen rmat --scale" "1024 nodes" "$HALO" gen rmat --scale 10 --edge-factor 8 -o "$T/r"
check "verify rmat" "$HALO" verify "$T/r"
check_out "gen rmat --directed keeps one direction" "^edges .*\(directed\)" \
    bash -c "'$HALO' gen rmat --nodes 1000 --directed -o '$T/rd' >/dev/null && '$HALO' info '$T/rd'"
check_out "info of a directed graph shows out-degrees" "^out-degree" "$HALO" info "$T/rd"
check_out "gen --preset products --scale 0.001" "2449 nodes, [0-9]+ edges, 100 features, 47 classes" \
    "$HALO" gen --preset products --scale 0.001 -o "$T/p"
check_out "preset split sizes" "^split +train 197, valid 39, test 2213, none 0" "$HALO" info "$T/p"
check "verify preset" "$HALO" verify "$T/p"
check_out "preset records its heterogeneity" "homophily_sd=0.3 affinity=0.8 .*twin_corr=0.9 label_noise=0.14" \
    "$HALO" info "$T/p"
# Heterogeneous model: same flags, same files; the knobs change the graph.
check "gen preset again" "$HALO" gen --preset products --scale 0.001 -o "$T/p2"
same=1
for f in meta.json indptr.i64 indices.i32 feat.f32 label.i32 split.u8; do
    cmp -s "$T/p/$f" "$T/p2/$f" || same=0
done
if [ $same = 1 ]; then ok "a preset is byte-identical when made twice"
else not_ok "a preset is byte-identical when made twice"; fi
check "gen preset without heterogeneity" "$HALO" gen --preset products --scale 0.001 \
    --homophily-sd 0 --affinity 0 -o "$T/p0"
if cmp -s "$T/p/indices.i32" "$T/p0/indices.i32"; then not_ok "--homophily-sd/--affinity change the edges"
else ok "--homophily-sd/--affinity change the edges"; fi
if cmp -s "$T/p/feat.f32" "$T/p0/feat.f32"; then ok "edge knobs leave the features alone"
else not_ok "edge knobs leave the features alone"; fi
check "gen preset without label noise" "$HALO" gen --preset products --scale 0.001 --label-noise 0 -o "$T/pl"
if cmp -s "$T/p/label.i32" "$T/pl/label.i32"; then not_ok "--label-noise changes labels"
else ok "--label-noise changes labels"; fi
if cmp -s "$T/p/indices.i32" "$T/pl/indices.i32"; then ok "--label-noise leaves the edges alone"
else not_ok "--label-noise leaves the edges alone"; fi

# Bad usage: exit 2, one line, no output directory.
for args in "gen" "gen sbm" "gen mesh -o $T/x" "gen rmat --scale 2.5 -o $T/x" \
    "gen sbm --nodes 1 -o $T/x" "gen rmat --a 0.9 --b 0.2 -o $T/x" "gen --preset cora -o $T/x" \
    "gen sbm --edge-factor 3 -o $T/x" "gen sbm --train 0.9 --valid 0.3 -o $T/x" \
    "gen sbm --nodes ten -o $T/x" "gen sbm --homophily-sd 0.5 -o $T/x" \
    "gen sbm --label-noise 1.5 -o $T/x" "gen sbm --affinity -0.1 -o $T/x" \
    "gen rmat --homophily-sd 0.1 -o $T/x" "gen sbm --twin-corr 2 -o $T/x" "verify" "info"; do
    # shellcheck disable=SC2086
    "$HALO" $args >"$T/out" 2>"$T/err"
    rc=$?
    if [ $rc = 2 ] && [ "$(wc -l <"$T/err")" = 1 ] && grep -q "^halo: error: " "$T/err" && [ ! -e "$T/x" ]
    then ok "bad usage: halo $args"
    else not_ok "bad usage: halo $args (exit $rc)"; sed 's/^/# /' "$T/err"; fi
done

# An unwritable destination fails cleanly without leaving a temporary directory.
check_fails "gen into a missing parent" "no/such/dir.tmp-[0-9]+: No such file" \
    "$HALO" gen sbm --nodes 100 -o "$T/no/such/dir"
done_testing
