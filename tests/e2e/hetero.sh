#!/usr/bin/env bash
# End-to-end tests of heterogeneous graphs: `halo gen --preset mag`, info and verify of the typed
# format, typed partitions (METIS, two-level, stream) and their info, `halo sample` with
# per-relation fanouts on ranks, homogeneous graphs unchanged, and `halo import ogb` of the
# hand-written ogbn-mag-like fixture (tests/data/import/ogb_mag) with every array compared with
# values worked out by hand and every kind of bad input failing with FILE:LINE and no output.
source "$(dirname "$0")/lib.sh"
DATA=$(cd "$(dirname "$0")/../data/import" && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN="timeout -k 5 60 mpirun --oversubscribe --bind-to none --timeout 60"

arr() {
    python3 -c 'import struct, sys
f, t = sys.argv[1], sys.argv[2]
d = open(f, "rb").read()
n = len(d) // struct.calcsize(t)
v = struct.unpack("<%d%s" % (n, t), d)
print(" ".join(("%g" % x) if t == "f" else str(x) for x in v))' "$1" "$2"
}
check_arr() {
    local got
    got=$(arr "$2" "$3" 2>&1)
    if [ "$got" = "$4" ]; then ok "$1"; else
        not_ok "$1"; echo "# $2: got      '$got'"; echo "#   expected '$4'"; fi
}
no_output() { [ ! -e "$1" ] && ! compgen -G "$1.*" >/dev/null; }
fails_clean() {
    local name=$1 pattern=$2
    shift 2
    rm -rf "$T/bad"
    check_fails "$name" "$pattern" "$@"
    check "$name: no output left" no_output "$T/bad"
}

# ---- the mag preset ------------------------------------------------------------------------
check "gen --preset mag" "$HALO" gen --preset mag --scale 0.004 -o "$T/mag"
check_out "info prints the node types" '^  author +4539 nodes, ids \[2946, 7485\), 0 features \(no feature file\)' \
    "$HALO" info "$T/mag"
check_out "info names each featured type's file" '^  paper +2946 nodes, ids \[0, 2946\), 128 features \(feat\.paper\.f32, ' \
    "$HALO" info "$T/mag"
# features: one file per featured type (papers only), none for the featureless ones, no feat.f32
got=$(cd "$T/mag" && ls feat* | tr '\n' ' ')
if [ "$got" = "feat.paper.f32 " ] && [ "$(stat -c %s "$T/mag/feat.paper.f32")" = $((2946 * 128 * 4)) ]; then
    ok "a typed graph has one feature file per featured type, nodes_t x w_t x 4 bytes"
else not_ok "a typed graph has one feature file per featured type, nodes_t x w_t x 4 bytes"
    echo "# feature files: $got"; fi
check_out "info prints the relations with degrees" \
    '^  author writes paper +[0-9]+ edges; in-degree mean [0-9.]+ max [0-9]+' "$HALO" info "$T/mag"
check_out "verify checks the typed graph" 'ok \(7760 nodes, [0-9]+ edges; .* 7 files\)' \
    "$HALO" verify "$T/mag"
check "gen --preset mag is byte-identical when made twice" \
    "$HALO" gen --preset mag --scale 0.004 -o "$T/mag2"
same=1
for f in meta.json indptr.i64 indices.i32 etype.u8 ntype.u8 feat.paper.f32 label.i32 split.u8; do
    cmp -s "$T/mag/$f" "$T/mag2/$f" || same=0
done
if [ $same = 1 ]; then ok "the same flags give the same files"; else not_ok "the same flags give the same files"; fi
check_fails "a heterogeneous preset refuses sbm flags" "takes --scale, --classes" \
    "$HALO" gen --preset mag --degree-in 3 -o "$T/x"
check_out "mag240m is usable topology-only" '"features": false' sh -c \
    "'$HALO' -q gen --preset mag240m --scale 0.00002 --no-features -o '$T/m240' && cat '$T/m240/meta.json'"
check "a topology-only typed graph partitions" "$HALO" -q partition "$T/m240" --parts 2 -o "$T/p240"
if ! compgen -G "$T/m240/feat*" >/dev/null && ! compgen -G "$T/p240/part-*/feat*" >/dev/null; then
    ok "a topology-only typed graph and its parts have no feature file"
else not_ok "a topology-only typed graph and its parts have no feature file"; ls "$T/m240" | sed 's/^/# /'; fi

# a relation that does not fit its endpoints, and a changed etype.u8, are found by verify
cp -r "$T/mag" "$T/bad1"
python3 -c 'import sys; f = open(sys.argv[1], "r+b"); f.seek(0); b = f.read(1); f.seek(0); f.write(bytes([b[0] ^ 1])); f.close()' "$T/bad1/etype.u8"
check_fails "verify names etype.u8 when it was changed" "bad1/etype.u8: " "$HALO" verify "$T/bad1"
# bad per-type feature files: cut, one for a featureless type, a padded feat.f32 of an older halo
cp -r "$T/mag" "$T/bad2"
truncate -s -4 "$T/bad2/feat.paper.f32"
check_fails "verify names a cut per-type feature file" "bad2/feat.paper.f32: size is" \
    "$HALO" verify "$T/bad2"
cp -r "$T/mag" "$T/bad3"
: >"$T/bad3/feat.author.f32"
check_fails "verify refuses a feature file for a featureless type" \
    "bad3/feat.author.f32: node type author has 0 features" "$HALO" verify "$T/bad3"
cp -r "$T/mag" "$T/bad4"
: >"$T/bad4/feat.f32"
check_fails "a typed graph with a padded feat.f32 gets one line" \
    "bad4/feat.f32: a typed graph from an older halo \(one padded feature file\); regenerate or re-import it" \
    "$HALO" verify "$T/bad4"
check_fails "... also where a command loads it" "bad4/feat.f32: a typed graph from an older halo" \
    "$HALO" partition "$T/bad4" --parts 2 -o "$T/pbad4"

# ---- homogeneous graphs keep their format ---------------------------------------------------
check "gen sbm" "$HALO" gen sbm -n 500 -o "$T/sbm"
if ! grep -q '"relations"\|"node_types"' "$T/sbm/meta.json" && [ ! -e "$T/sbm/etype.u8" ]; then
    ok "a homogeneous graph has no typed files or keys"
else not_ok "a homogeneous graph has no typed files or keys"; fi

# ---- typed partitions ------------------------------------------------------------------------
check "partition the mag graph into 2" "$HALO" partition "$T/mag" --parts 2 -o "$T/p2"
check_out "info PDIR prints per-type balance" '^author +1\.[0-9]{3}  [0-9]+ \[[0-9]+,[0-9]+\)' \
    "$HALO" info "$T/p2"
if python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
b = j["balance_per_type"]
sys.exit(0 if set(b) == {"paper", "author", "institution", "field_of_study"} and max(b.values()) < 1.2 else 1)' "$T/p2/partition.json"; then
    ok "every node type is balanced within 1.2"
else not_ok "every node type is balanced within 1.2"; fi
for f in ntype.u8 etype.u8 halo_ntype.u8; do
    if [ -s "$T/p2/part-1/$f" ]; then ok "part files carry $f"; else not_ok "part files carry $f"; fi
done
# each part keeps feat.paper.f32 over its paper range, equal to the graph's rows of those nodes
if python3 -c 'import json, struct, sys
g, p = sys.argv[1], sys.argv[2]
gf = open(g + "/feat.paper.f32", "rb").read()
orig = struct.unpack("<%dq" % 7760, open(p + "/orig_id.i64", "rb").read())
j = json.load(open(p + "/partition.json"))
for k in range(2):
    d = p + "/part-%d" % k
    import os
    assert sorted(f for f in os.listdir(d) if f.startswith("feat")) == ["feat.paper.f32"], k
    s, e = j["type_ranges"][k][0]
    pf = open(d + "/feat.paper.f32", "rb").read()
    assert len(pf) == (e - s) * 512, k
    for i in range(s, e):
        o = orig[i]
        assert pf[(i - s) * 512:(i - s + 1) * 512] == gf[o * 512:(o + 1) * 512], (k, i)
' "$T/mag" "$T/p2"; then
    ok "each part's feat.paper.f32 holds the graph's rows of its papers, nothing else"
else not_ok "each part's feat.paper.f32 holds the graph's rows of its papers, nothing else"; fi
# a bad per-type part file: one line naming it
cp -r "$T/p2" "$T/p2bad"
truncate -s -4 "$T/p2bad/part-1/feat.paper.f32"
out=$($MPIRUN -np 2 "$HALO" train "$T/p2bad" --model rgcn --epochs 1 --no-table 2>&1)
# (rank 1 names the file; rank 0, which did not fail itself, says nothing: as for every part file)
if printf '%s\n' "$out" | grep -q '^halo: error: rank 1: .*p2bad/part-1/feat.paper.f32: size is' &&
    [ "$(printf '%s\n' "$out" | grep -c 'error:')" = 1 ]; then
    ok "a cut per-type part file gets one line, from the rank that read it, naming it"; else
    not_ok "a cut per-type part file gets one line, from the rank that read it, naming it"
    printf '%s\n' "$out" | sed 's/^/# /' | tail -5; fi
cp -r "$T/p2" "$T/p2old"
: >"$T/p2old/part-0/feat.f32"
check_fails "a typed partition with a padded feat.f32 gets one line" \
    "p2old/part-0/feat.f32: a typed partition from an older halo" \
    $MPIRUN -np 2 "$HALO" train "$T/p2old" --model rgcn --epochs 1 --no-table
check "two-level partition of a typed graph" \
    "$HALO" partition "$T/mag" --method multilevel --machines 2 --trainers-per-part 2 -o "$T/pml"
check "stream partition of a typed graph" "$HALO" partition "$T/mag" --parts 2 --method stream -o "$T/pst"
check "sorted rows stay grouped by relation" "$HALO" partition "$T/mag" --parts 2 --sort-rows -o "$T/psr"

# ---- sampling per relation on ranks ----------------------------------------------------------
check_out "sample with per-relation fanouts on 2 ranks" '^total +[0-9]+ +[1-9][0-9]* +[1-9]' \
    $MPIRUN -np 2 "$HALO" sample "$T/p2" --fanouts "cites=5,writes=3,*=2;cites=10,*=5" --batch 100 --batches 2
check_out "a plain fanout applies to every relation" '^total +[0-9]+ +[1-9][0-9]* +[1-9]' \
    $MPIRUN -np 2 "$HALO" sample "$T/psr" --fanouts 3,4 --batch 100 --batches 2
check_fails "an unknown relation gets one clear line" "no relation 'wrote' \(the graph's relations: cites" \
    $MPIRUN -np 2 "$HALO" sample "$T/p2" --fanouts "cites=5,wrote=3"
check_fails "a malformed per-relation spec gets one clear line" "is not REL=N" \
    "$HALO" sample "$T/p2" --fanouts "cites=5,writes"

# ---- import of OGB's heterogeneous layout ----------------------------------------------------
fresh_mag() {
    rm -rf "$1"
    cp -r "$DATA/ogb_mag" "$1"
    find "$1" -name '*.csv' -exec gzip -n {} +
}
fresh_mag "$T/om"
check "ogb hetero import succeeds" "$HALO" import ogb "$T/om" -o "$T/gm"
check "the imported graph verifies" "$HALO" verify "$T/gm"
# types in num-node-dict order: author [0,4) field_of_study [4,7) institution [7,9) paper [9,15);
# relations sorted by directory, each followed by its reverse: affiliated_with 0, rev 1,
# writes 2, rev 3, cites 4, rev 5, has_topic 6, rev 7; rows grouped by relation, sources ascending.
check_arr "ogb hetero ntype" "$T/gm/ntype.u8" B "0 0 0 0 1 1 1 2 2 3 3 3 3 3 3"
check_arr "ogb hetero indptr" "$T/gm/indptr.i64" q "0 3 5 7 10 12 13 15 17 19 23 27 31 33 35 38"
check_arr "ogb hetero indices" "$T/gm/indices.i32" i \
    "7 9 10 7 11 8 12 8 13 14 9 10 11 12 14 0 1 2 3 0 11 10 4 0 9 11 4 1 10 9 5 2 6 3 14 3 13 6"
check_arr "ogb hetero etype" "$T/gm/etype.u8" B \
    "1 3 3 1 3 1 3 1 3 3 6 6 6 6 6 0 0 0 0 2 4 5 7 2 4 5 7 2 4 5 7 2 7 2 5 2 4 7"
check_arr "ogb hetero field_of_study features in their own file, 1 wide" \
    "$T/gm/feat.field_of_study.f32" f "10 11 12"
check_arr "ogb hetero paper features in their own file, 2 wide" "$T/gm/feat.paper.f32" f \
    "0.5 1 1.5 2 2.5 3 3.5 4 4.5 5 5.5 6"
if [ ! -e "$T/gm/feat.f32" ] && [ ! -e "$T/gm/feat.author.f32" ] && [ ! -e "$T/gm/feat.institution.f32" ]; then
    ok "ogb hetero: no feat.f32 and no file for the featureless types"
else not_ok "ogb hetero: no feat.f32 and no file for the featureless types"; ls "$T/gm" | sed 's/^/# /'; fi
check_arr "ogb hetero labels on the target type" "$T/gm/label.i32" i "-1 -1 -1 -1 -1 -1 -1 -1 -1 1 0 2 1 0 2"
check_arr "ogb hetero split on the target type" "$T/gm/split.u8" B "0 0 0 0 0 0 0 0 0 1 1 1 2 3 3"
check_out "ogb hetero meta names the target type" '"target_type": "paper"' cat "$T/gm/meta.json"
check_out "ogb hetero meta gives each type's width" '"feat_dim": 1' cat "$T/gm/meta.json"
PY=
for c in ${PYTHON:-} python3 /usr/bin/python3; do
    if "$c" -c 'import numpy' >/dev/null 2>&1; then PY=$c; break; fi
done
if [ -n "$PY" ]; then
    check_out "python/halo_io.py reads etype and ntype" '^38 15 7$' "$PY" -c 'import sys
sys.path.insert(0, sys.argv[1])
import halo_io
g = halo_io.load_graph(sys.argv[2])
print(len(g.etype), len(g.ntype), int(g.etype[g.indptr[9]:g.indptr[10]].max()))' \
        "$(cd "$(dirname "$0")/../../python" && pwd)" "$T/gm"
    check_out "python/halo_io.py reads the per-type features and pads them as halo trains" \
        '^fos \(3, 1\) paper \(6, 2\) 11 0 5.5 6$' "$PY" -c 'import sys
sys.path.insert(0, sys.argv[1])
import halo_io
g = halo_io.load_graph(sys.argv[2])
x = g.padded_features()
print("fos", g.tfeat["field_of_study"].shape, "paper", g.tfeat["paper"].shape, "%g %g %g %g" % (x[5][0], x[5][1], x[14][0], x[14][1]))' \
        "$(cd "$(dirname "$0")/../../python" && pwd)" "$T/gm"
else
    ok "python/halo_io.py reads etype and ntype # SKIP numpy not installed"
    ok "python/halo_io.py reads the per-type features # SKIP numpy not installed"
fi
check "ogb hetero --directed keeps the given directions" "$HALO" -q import ogb "$T/om" -o "$T/gmd" --directed
check_out "ogb hetero --directed has no reverse relations" '"edges": 19,' cat "$T/gmd/meta.json"

R=raw/relations
bad_case() { # NAME PATTERN FILE CONTENT: FILE (relative to the fixture) gets CONTENT, gzipped
    fresh_mag "$T/o"
    printf "$4" | gzip >"$T/o/$3"
    fails_clean "$1" "$2" "$HALO" import ogb "$T/o" -o "$T/bad"
}
bad_case "counts do not match the types" "o/raw/num-node-dict.csv.gz:2: 3 node counts for 4 node types" \
    raw/num-node-dict.csv.gz 'author,field_of_study,institution,paper\n4,3,2\n'
bad_case "a non-numeric node count" "o/raw/num-node-dict.csv.gz:2: node count 'x'" \
    raw/num-node-dict.csv.gz 'author,field_of_study,institution,paper\n4,x,2,6\n'
bad_case "a type named twice" "o/raw/num-node-dict.csv.gz:1: node type 'paper' named twice" \
    raw/num-node-dict.csv.gz 'author,paper,institution,paper\n4,3,2,6\n'
bad_case "a third line in num-node-dict" "o/raw/num-node-dict.csv.gz:3: a third line" \
    raw/num-node-dict.csv.gz 'author,field_of_study,institution,paper\n4,3,2,6\n1\n'
bad_case "an empty num-node-dict" "o/raw/num-node-dict.csv.gz:[01]: no node type names" \
    raw/num-node-dict.csv.gz ''
bad_case "an edge source out of its type's range" \
    "author___writes___paper/edge.csv.gz:3: source id 4 is out of range \(author has 4 nodes\)" \
    $R/author___writes___paper/edge.csv.gz '0,0\n0,1\n4,2\n'
bad_case "an edge destination out of its type's range" \
    "paper___cites___paper/edge.csv.gz:2: destination id 6 is out of range \(paper has 6 nodes\)" \
    $R/paper___cites___paper/edge.csv.gz '0,1\n1,6\n'
bad_case "a non-numeric edge id" "paper___cites___paper/edge.csv.gz:1: source id 'p'" \
    $R/paper___cites___paper/edge.csv.gz 'p,1\n'
bad_case "an edge line with three fields" "paper___cites___paper/edge.csv.gz:2: 3 fields" \
    $R/paper___cites___paper/edge.csv.gz '0,1\n1,2,3\n'
bad_case "num-edge-list disagrees with edge.csv" \
    "paper___cites___paper/num-edge-list.csv.gz:1: says 5 edges" \
    $R/paper___cites___paper/num-edge-list.csv.gz '5\n'
bad_case "a feature row of the wrong width" "node-feat/paper/node-feat.csv.gz:2: 1 values, expected 2" \
    raw/node-feat/paper/node-feat.csv.gz '1,2\n3\n'
bad_case "too few feature rows" "node-feat/field_of_study/node-feat.csv.gz:2: 2 rows, expected one per node \(3\)" \
    raw/node-feat/field_of_study/node-feat.csv.gz '1\n2\n'
bad_case "a non-numeric label" "node-label/paper/node-label.csv.gz:2: label 'x'" \
    raw/node-label/paper/node-label.csv.gz '1\nx\n'
bad_case "more label rows than papers" "node-label/paper/node-label.csv.gz:7: more rows than the 6 nodes" \
    raw/node-label/paper/node-label.csv.gz '1\n1\n1\n1\n1\n1\n1\n'
bad_case "a split id out of the target type's range" "time/paper/train.csv.gz:2: node id 6 is out of range" \
    split/time/paper/train.csv.gz '0\n6\n'
bad_case "a paper in two splits" "time/paper/test.csv.gz:1: node 3 is already in valid" \
    split/time/paper/test.csv.gz '3\n'

fresh_mag "$T/o"
mkdir -p "$T/o/$R/author___writes___book"
fails_clean "a relation over an unknown type" "author___writes___book: destination type 'book' is not in num-node-dict" \
    "$HALO" import ogb "$T/o" -o "$T/bad"
fresh_mag "$T/o"
mkdir -p "$T/o/$R/writes"
fails_clean "a directory that is not SRC___REL___DST" "relations/writes: not a relation directory" \
    "$HALO" import ogb "$T/o" -o "$T/bad"
fresh_mag "$T/o"
rm "$T/o/split/time/paper/valid.csv.gz"
fails_clean "a missing split file" "time/paper/valid.csv.gz: cannot open" "$HALO" import ogb "$T/o" -o "$T/bad"
fresh_mag "$T/o"
mkdir -p "$T/o/raw/node-label/author" && printf '1\n1\n1\n1\n' | gzip >"$T/o/raw/node-label/author/node-label.csv.gz"
fails_clean "labels on two types" "labels for a second node type" "$HALO" import ogb "$T/o" -o "$T/bad"
fresh_mag "$T/o"
printf '0,1\n1,2\n2,0\n4,5\n' | gzip | head -c 20 >"$T/o/$R/paper___cites___paper/edge.csv.gz"
fails_clean "a truncated gzip stream" "paper___cites___paper/edge.csv.gz:[0-9]+: truncated gzip stream" \
    "$HALO" import ogb "$T/o" -o "$T/bad"

done_testing
