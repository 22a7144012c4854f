#!/usr/bin/env bash
# End-to-end tests of `halo import ogb|edgelist`: small hand-written inputs (tests/data/import)
# imported and every array compared with values worked out by hand; each kind of bad input fails
# with FILE:LINE and leaves no output directory.
source "$(dirname "$0")/lib.sh"
DATA=$(cd "$(dirname "$0")/../data/import" && pwd)

# arr FILE FMT: the little-endian array in FILE as space-separated values (FMT: struct code).
arr() {
    python3 -c 'import struct, sys
f, t = sys.argv[1], sys.argv[2]
d = open(f, "rb").read()
n = len(d) // struct.calcsize(t)
v = struct.unpack("<%d%s" % (n, t), d)
print(" ".join(("%g" % x) if t == "f" else str(x) for x in v))' "$1" "$2"
}

# check_arr NAME FILE FMT EXPECTED: passes when FILE holds exactly EXPECTED.
check_arr() {
    local got
    got=$(arr "$2" "$3" 2>&1)
    if [ "$got" = "$4" ]; then ok "$1"; else
        not_ok "$1"; echo "# $2: got      '$got'"; echo "#   expected '$4'"; fi
}

# no_output DIR: neither DIR nor a temporary sibling of it (DIR.tmp-*, DIR.old-*) exists.
no_output() {
    [ ! -e "$1" ] && ! compgen -G "$1.*" >/dev/null
}

# fails_clean NAME PATTERN CMD...: CMD fails with a matching error and leaves $T/bad absent.
fails_clean() {
    local name=$1 pattern=$2
    shift 2
    rm -rf "$T/bad"
    check_fails "$name" "$pattern" "$@"
    check "$name: no output left" no_output "$T/bad"
}

# fresh_ogb DIR: a gzipped copy of the hand-written OGB dataset.
fresh_ogb() {
    rm -rf "$1"
    cp -r "$DATA/ogb" "$1"
    find "$1" -name '*.csv' -exec gzip -n {} +
}

# ---- OGB layout --------------------------------------------------------------------------
# edge.csv: 0->1 1->2 2->0 3->4 4->3 2->2 1->2 0->3 over 6 nodes (node 5 isolated).
fresh_ogb "$T/ogb"
check "ogb import succeeds" "$HALO" import ogb "$T/ogb" -o "$T/g"
# Symmetrised: pairs {0,1} {1,2} {0,2} {3,4} {0,3}; the self loop and two repeats dropped.
check_arr "ogb symmetrised indptr" "$T/g/indptr.i64" q "0 3 5 7 9 10 10"
check_arr "ogb symmetrised indices sorted per row" "$T/g/indices.i32" i "1 2 3 0 2 0 1 0 4 3"
check_arr "ogb features row-major" "$T/g/feat.f32" f \
    "0.5 1 -1 2 3 4 0.001 0 0 -7.25 8 9 10 11 12 0 0 0"
check_arr "ogb labels with nan and empty as -1" "$T/g/label.i32" i "3 0 -1 1 -1 2"
check_arr "ogb split from split/time" "$T/g/split.u8" B "1 1 3 1 2 3"
check_out "ogb meta: 6 nodes, 10 edges, undirected" '"edges": 10' cat "$T/g/meta.json"
check_out "ogb meta: classes = max label + 1" '"classes": 4' cat "$T/g/meta.json"
check_out "ogb meta: feat_dim 3" '"feat_dim": 3' cat "$T/g/meta.json"
check_out "ogb meta: source names importer, path and split" \
    '"importer":"ogb","src":"[^"]*/ogb","split":"time","directed":false,"symmetrised":true' \
    cat "$T/g/meta.json"
check_out "ogb meta: source counts input edges, self loops and duplicates" \
    '"input_edges":8,"self_loops_removed":1,"duplicates_removed":2' cat "$T/g/meta.json"
check_out "ogb meta: default name is the directory's" '"name": "ogb"' cat "$T/g/meta.json"

check "ogb --directed succeeds" "$HALO" -q import ogb "$T/ogb" -o "$T/gd" --directed --name arx
# Row v lists the sources of edges into v, duplicates and self loops kept.
check_arr "ogb directed indptr" "$T/gd/indptr.i64" q "0 1 2 5 7 8 8"
check_arr "ogb directed indices" "$T/gd/indices.i32" i "2 0 1 1 2 0 4 3"
check_out "ogb directed meta" '"directed": true' cat "$T/gd/meta.json"
check_out "ogb --name" '"name": "arx"' cat "$T/gd/meta.json"

# A second split: without --split the choice is ambiguous; with it, that split is used.
mkdir -p "$T/ogb/split/random"
printf '5\n' | gzip >"$T/ogb/split/random/train.csv.gz"
printf '' | gzip >"$T/ogb/split/random/valid.csv.gz"
printf '0\n' | gzip >"$T/ogb/split/random/test.csv.gz"
fails_clean "ogb several splits need --split" \
    "split: several splits \(random, time\); choose one with --split" \
    "$HALO" import ogb "$T/ogb" -o "$T/bad"
fails_clean "ogb unknown --split lists the splits" \
    "split/nope: no such split \(present: random, time\)" \
    "$HALO" import ogb "$T/ogb" -o "$T/bad" --split nope
check "ogb --split random succeeds" "$HALO" -q import ogb "$T/ogb" -o "$T/gr" --split random
check_arr "ogb split from split/random" "$T/gr/split.u8" B "3 0 0 0 0 1"

# ---- OGB bad input -------------------------------------------------------------------------
fresh_ogb "$T/o"
rm "$T/o/raw/node-label.csv.gz"
fails_clean "ogb missing file" "o/raw/node-label.csv.gz: cannot open: No such file" \
    "$HALO" import ogb "$T/o" -o "$T/bad"

fresh_ogb "$T/o"
seq 0 3000 | awk '{ print $1 % 6 "," ($1 + 1) % 6 }' | gzip -n >"$T/edges.gz"
head -c $(($(stat -c %s "$T/edges.gz") / 2)) "$T/edges.gz" >"$T/o/raw/edge.csv.gz"
fails_clean "ogb truncated gzip stream" "o/raw/edge.csv.gz:[0-9]+: truncated gzip stream" \
    "$HALO" import ogb "$T/o" -o "$T/bad"
head -c $(($(stat -c %s "$T/edges.gz") - 1)) "$T/edges.gz" >"$T/o/raw/edge.csv.gz"
fails_clean "ogb gzip stream missing its last byte" \
    "o/raw/edge.csv.gz:3002: truncated gzip stream" \
    "$HALO" import ogb "$T/o" -o "$T/bad"

fresh_ogb "$T/o"
printf '0,1\n1,2\n2,x\n' | gzip >"$T/o/raw/edge.csv.gz"
fails_clean "ogb non-numeric field" \
    "o/raw/edge.csv.gz:3: destination id 'x' is not a non-negative integer" \
    "$HALO" import ogb "$T/o" -o "$T/bad"

fresh_ogb "$T/o"
printf '0,1\n6,2\n' | gzip >"$T/o/raw/edge.csv.gz"
fails_clean "ogb edge id out of range" \
    "o/raw/edge.csv.gz:2: source id 6 is out of range \(num-node-list says 6 nodes\)" \
    "$HALO" import ogb "$T/o" -o "$T/bad"

fresh_ogb "$T/o"
printf '0\n1\n9\n' | gzip >"$T/o/split/time/train.csv.gz"
fails_clean "ogb split id out of range" "time/train.csv.gz:3: node id 9 is out of range" \
    "$HALO" import ogb "$T/o" -o "$T/bad"

fresh_ogb "$T/o"
printf '4\n0\n' | gzip >"$T/o/split/time/valid.csv.gz"
fails_clean "ogb node in two splits" "time/valid.csv.gz:2: node 0 is already in train" \
    "$HALO" import ogb "$T/o" -o "$T/bad"

fresh_ogb "$T/o"
printf '1,2,3\n4,5,6\n7,8\n1,1,1\n1,1,1\n1,1,1\n' | gzip >"$T/o/raw/node-feat.csv.gz"
fails_clean "ogb feature row of the wrong width" "o/raw/node-feat.csv.gz:3: 2 values, expected 3" \
    "$HALO" import ogb "$T/o" -o "$T/bad"

fresh_ogb "$T/o"
printf '1,2,3\n4,5,6\n' | gzip >"$T/o/raw/node-feat.csv.gz"
fails_clean "ogb too few feature rows" \
    "o/raw/node-feat.csv.gz:2: 2 rows, expected one per node \(6\)" \
    "$HALO" import ogb "$T/o" -o "$T/bad"

fresh_ogb "$T/o"
printf '3\n0\ncat\n1\n\n2\n' | gzip >"$T/o/raw/node-label.csv.gz"
fails_clean "ogb non-numeric label" "o/raw/node-label.csv.gz:3: label 'cat'" \
    "$HALO" import ogb "$T/o" -o "$T/bad"

fresh_ogb "$T/o"
printf '0\n' | gzip >"$T/o/raw/num-node-list.csv.gz"
printf '' | gzip >"$T/o/raw/edge.csv.gz"
fails_clean "ogb empty graph" "o/raw/num-node-list.csv.gz:1: 0 nodes: the graph is empty" \
    "$HALO" import ogb "$T/o" -o "$T/bad"

# A failed import leaves an existing graph directory as it was.
fresh_ogb "$T/o"
printf '0,1\n1,z\n' | gzip >"$T/o/raw/edge.csv.gz"
cp -r "$T/g" "$T/keep"
check_fails "ogb failure over an existing directory" "edge.csv.gz:2: destination id 'z'" \
    "$HALO" import ogb "$T/o" -o "$T/keep"
check "ogb failure keeps the existing directory intact" diff -r "$T/g" "$T/keep"

# ---- Edge list -----------------------------------------------------------------------------
# edges.txt: 1000->20, 20->5000000000, 5000000000->1000, 7->7, 20->1000, (2^63-1)->7.
# New ids by first appearance: 1000:0 20:1 5000000000:2 7:3 (2^63-1):4.
gzip -nc "$DATA/labels.txt" >"$T/labels.txt.gz"
check "edgelist import with labels (gzip), features and split" \
    "$HALO" import edgelist "$DATA/edges.txt" -o "$T/e" --labels "$T/labels.txt.gz" \
    --feat "$DATA/feat.txt" --split "$DATA/split.txt"
check_arr "edgelist orig_id maps new id to input id" "$T/e/orig_id.i64" q \
    "1000 20 5000000000 7 9223372036854775807"
# Symmetrised: {0,1} (given twice), {1,2}, {0,2}, {3,4}; 7's self loop dropped.
check_arr "edgelist symmetrised indptr" "$T/e/indptr.i64" q "0 2 4 6 7 8"
check_arr "edgelist symmetrised indices" "$T/e/indices.i32" i "1 2 0 2 0 1 4 3"
check_arr "edgelist labels by original id" "$T/e/label.i32" i "0 1 -1 -1 2"
check_arr "edgelist features by original id" "$T/e/feat.f32" f "1 2 3 4 5 6 0.25 -1 7 8"
check_arr "edgelist split by original id" "$T/e/split.u8" B "1 1 2 3 0"
check_out "edgelist meta: source records the id map" \
    '"orig_id":\{"file":"orig_id.i64".*"bytes":40' cat "$T/e/meta.json"
check_out "edgelist meta: name from the file" '"name": "edges"' cat "$T/e/meta.json"
check_out "edgelist meta: classes 3" '"classes": 3' cat "$T/e/meta.json"

gzip -nc "$DATA/edges.txt" >"$T/edges.gz"
check "edgelist --directed from gzip" "$HALO" -q import edgelist "$T/edges.gz" -o "$T/ed" --directed
check_arr "edgelist directed indptr" "$T/ed/indptr.i64" q "0 2 3 4 6 6"
check_arr "edgelist directed indices" "$T/ed/indices.i32" i "1 2 0 1 3 4"
check_arr "edgelist without labels: all -1" "$T/ed/label.i32" i "-1 -1 -1 -1 -1"
check_out "edgelist without features: feat_dim 0" '"feat_dim": 0' cat "$T/ed/meta.json"

# ---- Edge list bad input -------------------------------------------------------------------
fails_clean "edgelist missing file" "nothere.txt: cannot open: No such file" \
    "$HALO" import edgelist "$T/nothere.txt" -o "$T/bad"
fails_clean "edgelist missing label file" "nolabels.txt: cannot open" \
    "$HALO" import edgelist "$DATA/edges.txt" -o "$T/bad" --labels "$T/nolabels.txt"

seq 0 3000 | awk '{ print $1, $1 + 1 }' | gzip -n >"$T/big.gz"
head -c $(($(stat -c %s "$T/big.gz") * 2 / 3)) "$T/big.gz" >"$T/cut.gz"
fails_clean "edgelist truncated gzip stream" "cut.gz:[0-9]+: truncated gzip stream" \
    "$HALO" import edgelist "$T/cut.gz" -o "$T/bad"

printf '1 2\n# c\n3 four\n' >"$T/nan.txt"
fails_clean "edgelist non-numeric field" \
    "nan.txt:3: destination id 'four' is not a non-negative integer" \
    "$HALO" import edgelist "$T/nan.txt" -o "$T/bad"

printf '1 2\n-3 4\n' >"$T/neg.txt"
fails_clean "edgelist negative id" "neg.txt:2: source id '-3' is not a non-negative integer" \
    "$HALO" import edgelist "$T/neg.txt" -o "$T/bad"

printf '1 2\n2 3 0.5\n' >"$T/three.txt"
fails_clean "edgelist line with three fields" "three.txt:2: 3 fields, expected 'src dst'" \
    "$HALO" import edgelist "$T/three.txt" -o "$T/bad"

printf '1000 0\n20 1\n42 1\n' >"$T/unknown.txt"
fails_clean "edgelist label id not in the graph" \
    "unknown.txt:3: node id 42 does not appear in the edge list" \
    "$HALO" import edgelist "$DATA/edges.txt" -o "$T/bad" --labels "$T/unknown.txt"

printf '7 1 2\n1000 1 2\n20 1 2 3\n' >"$T/wide.txt"
fails_clean "edgelist feature row of the wrong width" "wide.txt:3: 3 values, expected 2" \
    "$HALO" import edgelist "$DATA/edges.txt" -o "$T/bad" --feat "$T/wide.txt"

head -n 4 "$DATA/feat.txt" >"$T/short.txt"
fails_clean "edgelist node without a feature row" \
    "short.txt:4: end of file, but node id 5000000000 has no feature row" \
    "$HALO" import edgelist "$DATA/edges.txt" -o "$T/bad" --feat "$T/short.txt"

printf '1000 train\n20 holdout\n' >"$T/badsplit.txt"
fails_clean "edgelist unknown split name" \
    "badsplit.txt:2: split 'holdout' is not train, valid or test" \
    "$HALO" import edgelist "$DATA/edges.txt" -o "$T/bad" --split "$T/badsplit.txt"

printf '# only comments\n\n' >"$T/empty.txt"
fails_clean "edgelist empty graph" "empty.txt:2: no edges: the graph is empty" \
    "$HALO" import edgelist "$T/empty.txt" -o "$T/bad"

# halo verify (another module) when it is built: every import passes its invariant checks.
if "$HALO" verify --help >/dev/null 2>&1; then
    for d in g gd gr e ed; do
        check "halo verify accepts import $d" "$HALO" verify "$T/$d"
    done
fi

# ---- Inputs that would import as something the user did not mean -----------------------------
fresh_ogb "$T/o"
head -c 4096 /dev/zero | gzip -n >"$T/o/raw/edge.csv.gz"
fails_clean "ogb gzip member of NUL bytes" "o/raw/edge.csv.gz:1: a NUL byte: binary data, not text" \
    "$HALO" import ogb "$T/o" -o "$T/bad"
fresh_ogb "$T/o"
printf '0,0\n1,1\n' | gzip -n >"$T/o/raw/edge.csv.gz"
fails_clean "ogb edges all self-loops" "o/raw/edge.csv.gz: no edges left \(2 self-loops dropped\)" \
    "$HALO" import ogb "$T/o" -o "$T/bad"
printf '0 0\n1 1\n2 2\n' >"$T/loops.txt"
fails_clean "edge list of self-loops only" \
    "loops.txt: every edge is a self-loop \(3 dropped\): no edges left" \
    "$HALO" import edgelist "$T/loops.txt" -o "$T/bad"
printf '0 1\n+1 2\n' >"$T/plus.txt"
fails_clean "ids with a + sign" "plus.txt:2: source id '\+1' is not a non-negative integer" \
    "$HALO" import edgelist "$T/plus.txt" -o "$T/bad"

# ---- Command line --------------------------------------------------------------------------
check_out "import --help shows both formats" \
    "halo import edgelist FILE -o DIR" "$HALO" import --help
check_fails "import without -o is a usage error" "-o DIR is required" \
    "$HALO" import edgelist "$DATA/edges.txt"
check_fails "import of an unknown format" "unknown format 'csv'" \
    "$HALO" import csv "$DATA/edges.txt" -o "$T/bad"
"$HALO" import csv x -o "$T/bad" 2>/dev/null
check "usage errors exit 2" test $? -eq 2
check_fails "import into a missing parent directory fails before reading" \
    "-o $T/nodir/g: directory $T/nodir/ does not exist" \
    "$HALO" import edgelist "$DATA/edges.txt" -o "$T/nodir/g"
check "no parent directory created" test ! -e "$T/nodir"

done_testing
