#!/usr/bin/env bash
# End-to-end tests of `halo import ogb` on OGB's binary layout (ogbn-papers100M: raw/data.npz and
# raw/node-label.npz, zip archives of .npy arrays). The fixture tests/data/import/ogb_npz is the
# six-node graph of tests/data/import/ogb in that layout (written by make_npz.py), so every array
# must come out as the CSV layout's import, whose values import.sh checks by hand; npz_cases/ holds
# other encodings (must give the same graph) and bad archives (one error line, exit 1, no output).
source "$(dirname "$0")/lib.sh"
DATA=$(cd "$(dirname "$0")/../data/import" && pwd)
CASES=$DATA/npz_cases
ARRAYS="indptr.i64 indices.i32 feat.f32 label.i32 split.u8"

# no_output DIR: neither DIR nor a temporary sibling of it exists.
no_output() {
    [ ! -e "$1" ] && ! compgen -G "$1.*" >/dev/null
}

# same_arrays A B [FILES]: the graph directories A and B hold byte-identical arrays.
same_arrays() {
    local f
    for f in ${3:-$ARRAYS}; do cmp -s "$1/$f" "$2/$f" || { echo "$f differs" >&2; return 1; }; done
}

# fresh DIR [data.npz|node-label.npz CASE]: a copy of the fixture, one archive replaced.
fresh() {
    rm -rf "$1"
    cp -r "$DATA/ogb_npz" "$1"
    if [ $# -eq 3 ]; then cp "$CASES/$3" "$1/raw/$2"; fi
}

# fails_clean NAME PATTERN: importing $T/o fails with PATTERN and leaves no output.
fails_clean() {
    rm -rf "$T/bad"
    check_fails "$1" "$2" "$HALO" import ogb "$T/o" -o "$T/bad"
    check "$1: no output left" no_output "$T/bad"
}

# The reference: the CSV layout of the same graph.
cp -r "$DATA/ogb" "$T/csv"
check "csv layout import (the reference)" "$HALO" -q import ogb "$T/csv" -o "$T/ref"
check "csv --directed import (the reference)" "$HALO" -q import ogb "$T/csv" -o "$T/refd" --directed

# ---- the fixture: deflated data.npz, stored node-label.npz ----------------------------------
fresh "$T/n"
check "npz import succeeds" bash -c "'$HALO' import ogb '$T/n' -o '$T/g' 2>'$T/log'"
check_out "npz import says what it read" \
    "imported .*: 6 nodes, 10 edges \(symmetrised\), feat_dim 3, classes 4, train/valid/test 3/1/2" \
    cat "$T/log"
check "npz arrays equal the csv layout's" same_arrays "$T/g" "$T/ref"
check "npz graph passes halo verify" "$HALO" verify "$T/g"
check_out "npz meta: classes from the labels (NaN unlabelled)" '"classes": 4' cat "$T/g/meta.json"
check_out "npz meta: source names the format and the ignored arrays" \
    '"importer":"ogb","format":"npz",.*"input_edges":8,"self_loops_removed":1,"duplicates_removed":2,.*"ignored_arrays":\["node_year"\]' \
    cat "$T/g/meta.json"
check "npz --directed equals the csv layout's" "$HALO" -q import ogb "$T/n" -o "$T/gd" --directed
check "npz --directed arrays" same_arrays "$T/gd" "$T/refd"

# ---- other encodings of the same graph -------------------------------------------------------
fresh "$T/n" data.npz data_fortran_f64.npz
check "column-major int32 edge_index, float64 features" "$HALO" -q import ogb "$T/n" -o "$T/g2"
check "column-major arrays equal the csv layout's" same_arrays "$T/g2" "$T/ref"
fresh "$T/n" node-label.npz label_int.npz
check "int64 labels with -1 for unlabelled" "$HALO" -q import ogb "$T/n" -o "$T/g3"
check "int64 labels equal the csv layout's" same_arrays "$T/g3" "$T/ref" label.i32
fresh "$T/n" node-label.npz label_f64_flat.npz
check "float64 labels of shape (N,)" "$HALO" -q import ogb "$T/n" -o "$T/g4"
check "float64 labels equal the csv layout's" same_arrays "$T/g4" "$T/ref" label.i32
fresh "$T/n" data.npz data_f16.npz
check "float16 features" "$HALO" -q import ogb "$T/n" -o "$T/g5"
check_out "float16 features widened exactly (65504 is float16's largest)" \
    '^0.5 1 -1 2 3 4 0.25 0 0 -7.25 8 9 10 11 12 0 0 65504$' \
    python3 -c 'import struct, sys; d = open(sys.argv[1], "rb").read()
print(" ".join("%g" % x for x in struct.unpack("<%df" % (len(d) // 4), d)))' "$T/g5/feat.f32"
# zip64, as numpy writes archives past 4 GiB: every size and offset of the central directory is
# 0xFFFFFFFF with the real value in a zip64 extra field, and the end record is zip64's (written
# here by hand with the standard library, members deflated raw).
fresh "$T/n"
python3 - "$DATA/ogb_npz/raw/data.npz" "$T/n/raw/data.npz" <<'PYEOF'
import struct, sys, zipfile, zlib
src, dst = sys.argv[1], sys.argv[2]
out, cdir = bytearray(), bytearray()
with zipfile.ZipFile(src) as a:
    names = a.namelist()
    for n in names:
        data, name = a.read(n), n.encode()
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        comp = c.compress(data) + c.flush()
        crc, off = zlib.crc32(data), len(out)
        x64 = struct.pack("<HHQQ", 1, 16, len(data), len(comp))
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, 8, 0, 0x21, crc, 0xFFFFFFFF,
                           0xFFFFFFFF, len(name), len(x64)) + name + x64 + comp
        x64 = struct.pack("<HHQQQ", 1, 24, len(data), len(comp), off)
        cdir += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, 8, 0, 0x21, crc,
                            0xFFFFFFFF, 0xFFFFFFFF, len(name), len(x64), 0, 0, 0, 0,
                            0xFFFFFFFF) + name + x64
cd_off = len(out)
out += cdir
z64 = len(out)
out += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, len(names), len(names),
                   len(cdir), cd_off)
out += struct.pack("<IIQI", 0x07064B50, 0, z64, 1)
out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
open(dst, "wb").write(out)
PYEOF
check "zip64 archive (sizes and offsets in zip64 extras, zip64 end record)" \
    "$HALO" -q import ogb "$T/n" -o "$T/g7"
check "zip64 arrays equal the csv layout's" same_arrays "$T/g7" "$T/ref"

fresh "$T/n"
python3 -c 'import sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(src) as a, zipfile.ZipFile(dst, "w") as b:
    for n in a.namelist():
        if n != "node_feat.npy":
            b.writestr(n, a.read(n))' "$DATA/ogb_npz/raw/data.npz" "$T/n/raw/data.npz"
check "no node_feat: a graph without features" "$HALO" -q import ogb "$T/n" -o "$T/g6"
check_out "no node_feat: feat_dim 0" '"feat_dim": 0' cat "$T/g6/meta.json"

# ---- bad input ---------------------------------------------------------------------------
fresh "$T/o"
head -c -40 "$DATA/ogb_npz/raw/data.npz" >"$T/o/raw/data.npz"
fails_clean "truncated zip" "o/raw/data.npz: not a zip archive, or truncated"
fresh "$T/o"
head -c 100 "$DATA/ogb_npz/raw/node-label.npz" >"$T/o/raw/node-label.npz"
fails_clean "truncated label archive" "o/raw/node-label.npz: not a zip archive, or truncated"
fresh "$T/o"
printf 'not a zip file\n' >"$T/o/raw/node-label.npz"
fails_clean "not a zip file" "o/raw/node-label.npz: not a zip archive"
fresh "$T/o"
rm "$T/o/raw/node-label.npz"
fails_clean "missing label archive" "o/raw/node-label.npz: cannot open: No such file"
# A byte of the stored label data flipped: only the CRC can tell.
fresh "$T/o"
python3 -c 'import sys
p = sys.argv[1]; b = bytearray(open(p, "rb").read())
i = b.index(b"\n", b.index(b"NUMPY")) + 5; b[i] ^= 0x40; open(p, "wb").write(bytes(b))' \
    "$T/o/raw/node-label.npz"
fails_clean "stored member with a flipped byte" \
    "o/raw/node-label.npz:node_label.npy: CRC-32 [0-9a-f]{8}, the archive records [0-9a-f]{8}"
fresh "$T/o"
python3 -c 'import sys
p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[120] ^= 0x55
open(p, "wb").write(bytes(b))' "$T/o/raw/data.npz"
fails_clean "corrupt deflate data" "o/raw/data.npz:edge_index.npy: corrupt deflate data"

fresh "$T/o" data.npz data_no_edge_index.npz
fails_clean "missing member lists the arrays present" \
    "o/raw/data.npz: no array 'edge_index' \(it holds: num_nodes_list, num_edges_list, node_feat, node_year\)"
fresh "$T/o" data.npz data_edge_float.npz
fails_clean "edge_index of floats" "data.npz:edge_index.npy: dtype '<f4', expected an integer type"
fresh "$T/o" data.npz data_feat_int.npz
fails_clean "integer features" \
    "data.npz:node_feat.npy: dtype '<i8', expected float16, float32 or float64"
fresh "$T/o" data.npz data_big_endian.npz
fails_clean "big-endian features" "data.npz:node_feat.npy: dtype '>f4' is not supported"
fresh "$T/o" data.npz data_edge_rows.npz
fails_clean "edge_index of 3 rows" "edge_index.npy: shape \(3, 8\), expected \(2, 8\)"
fresh "$T/o" data.npz data_edges_count.npz
fails_clean "num_edges_list disagrees with edge_index" \
    "edge_index.npy: shape \(2, 8\), expected \(2, 9\) \(num_edges_list says 9 edges\)"
fresh "$T/o" data.npz data_edge_range.npz
fails_clean "edge id out of range" \
    "edge_index.npy: edge_index\[1\]\[4\] = 6 is out of range \(num_nodes_list says 6 nodes\)"
fresh "$T/o" data.npz data_self_loops.npz
fails_clean "edges all self-loops" "o/raw/data.npz:edge_index.npy: no edges left \(3 self-loops dropped\)"
fresh "$T/o" data.npz data_two_graphs.npz
fails_clean "two graphs" "num_nodes_list.npy: 2 entries: a node-property dataset holds one graph"
fresh "$T/o" data.npz data_feat_rows.npz
fails_clean "feature rows != nodes" "node_feat.npy: shape \(5, 3\), expected \(6, width\)"
fresh "$T/o" data.npz data_feat_nan.npz
fails_clean "NaN feature" "node_feat.npy: node_feat\[3\]\[1\] = nan is not a finite float32"
fresh "$T/o" node-label.npz label_fraction.npz
fails_clean "fractional label" "node-label.npz:node_label.npy: node_label\[3\] = 1.5 is not a class"
fresh "$T/o" node-label.npz label_rows.npz
fails_clean "label rows != nodes" "node_label.npy: shape \(5, 1\), expected \(6,\) or \(6, 1\)"
fresh "$T/o" node-label.npz label_two_columns.npz
fails_clean "two label columns" "node_label.npy: shape \(6, 2\), expected \(6,\) or \(6, 1\)"
fresh "$T/o"
printf '0\n7\n' >"$T/o/split/time/train.csv"
fails_clean "split id out of range (split files as in the csv layout)" \
    "time/train.csv:2: node id 7 is out of range"

# A failed import over an earlier graph directory leaves it as it was.
cp -r "$T/ref" "$T/keep"
fresh "$T/o" data.npz data_edge_range.npz
check_fails "failed import over an existing graph" "out of range" \
    "$HALO" import ogb "$T/o" -o "$T/keep"
check "existing graph untouched" same_arrays "$T/keep" "$T/ref"

done_testing
