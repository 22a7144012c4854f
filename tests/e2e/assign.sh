# halo partition --assign FILE: a node -> part array from another tool (raw int32, or .npy of
# int32 / int64, as numpy.save writes it), without --unsafe or a policy. The parts follow the
# array exactly (every node lands in the part the file says); bad arrays are refused with one
# line each (length, range, empty part, dtype, shape) and leave no output.
. "$(dirname "$0")/lib.sh"
PY=$(command -v python3 || true)
if [ -z "$PY" ]; then
    ok "--assign # SKIP no python3"
    done_testing
    exit 0
fi
check "generate a graph" "$HALO" gen sbm -n 600 -F 8 -C 4 -s 3 -o "$T/g"

# arrays written with struct, the .npy header by hand as numpy.save writes format 1.0
"$PY" - "$T" <<'PYEOF'
import struct, sys
T = sys.argv[1]
N = 600
def npy(path, vals, descr, fmt, shape=None):
    shape = shape or "(%d,)" % len(vals)
    h = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    h += " " * ((64 - (10 + len(h) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode())
        f.write(struct.pack("<%d%s" % (len(vals), fmt), *vals))
# a skewed assignment no partitioner would make: part 2 gets every node v % 7 == 0, then 0/1
a = [2 if v % 7 == 0 else (v // 3) % 2 for v in range(N)]
open(T + "/a.raw", "wb").write(struct.pack("<%di" % N, *a))
npy(T + "/a32.npy", a, "<i4", "i")
npy(T + "/a64.npy", a, "<i8", "q")
open(T + "/a.txt", "w").write(" ".join(map(str, a)))
npy(T + "/short.npy", a[:-1], "<i4", "i")
npy(T + "/range.npy", a[:5] + [3] + a[6:], "<i8", "q")
npy(T + "/neg.npy", a[:9] + [-1] + a[10:], "<i4", "i")
npy(T + "/empty.npy", [0 if x == 1 else x for x in a], "<i4", "i")
npy(T + "/float.npy", [float(x) for x in a], "<f4", "f")
npy(T + "/twod.npy", a, "<i4", "i", "(300, 2)")
open(T + "/odd.raw", "wb").write(struct.pack("<%di" % N, *a)[:-1])
PYEOF

for f in a.raw a32.npy a64.npy; do
    check "--assign $f" "$HALO" partition "$T/g" --assign "$T/$f" -o "$T/p.$f"
done
check "... with --parts 3" "$HALO" partition "$T/g" --assign "$T/a32.npy" --parts 3 -o "$T/p3"
check "raw int32, .npy int32 and int64 give the same partition" \
    cmp "$T/p.a.raw/orig_id.i64" "$T/p.a64.npy/orig_id.i64"
check "... (the same as the int32 .npy)" cmp "$T/p.a.raw/orig_id.i64" "$T/p.a32.npy/orig_id.i64"
# every node is in the part the file says: new id n of part k (its id range) has orig id v with
# a[v] == k, and part k holds as many nodes as the file gives it
check_out "every node lands in its assigned part" "^ok 3 parts$" "$PY" - "$T" <<'PYEOF'
import json, struct, sys
T = sys.argv[1]
a = list(map(int, open(T + "/a.txt").read().split()))
P = T + "/p.a64.npy"
ranges = json.load(open(P + "/partition.json"))["ranges"]
b = open(P + "/orig_id.i64", "rb").read()
orig = struct.unpack("<%dq" % (len(b) // 8), b)
for k, (lo, hi) in enumerate(ranges):
    assert hi - lo == a.count(k), (k, hi - lo, a.count(k))
    assert json.load(open("%s/part-%d/meta.json" % (P, k)))["nodes"] == hi - lo
    for n in range(lo, hi):
        assert a[orig[n]] == k, (n, orig[n], a[orig[n]], k)
print("ok %d parts" % len(ranges))
PYEOF

# bad arrays: one line, exit 1, no output directory
bad() {
    local name=$1 pattern=$2
    shift 2
    check_fails "$name" "$pattern" "$HALO" partition "$T/g" "$@" -o "$T/bad"
    if [ "$(grep -c . "$T/err")" = 1 ] && [ ! -e "$T/bad" ]; then ok "... in one line, nothing written"
    else not_ok "... in one line, nothing written"; sed 's/^/# /' "$T/err" | head -5; fi
}
bad "too short" "--assign: .*short.npy: 599 entries, the graph has 600 nodes" --assign "$T/short.npy"
bad "raw file of a partial entry" "odd.raw: 2399 bytes is not a whole number of int32" \
    --assign "$T/odd.raw"
bad "a part id beyond --parts" "range.npy: node 5 is assigned to part 3, not in \[0, 3\)" \
    --assign "$T/range.npy" --parts 3
bad "a negative part id" "neg.npy: node 9 is assigned to part -1" --assign "$T/neg.npy"
bad "an empty part" "empty.npy: part 1 of 3 has no node" --assign "$T/empty.npy"
bad "an empty part when --parts is larger" "a32.npy: part 3 of 4 has no node" \
    --assign "$T/a32.npy" --parts 4
bad "a float array" "float.npy: .npy dtype '<f4', expected int32 or int64" --assign "$T/float.npy"
bad "a 2-D array" "twod.npy: .npy shape \(300, 2\) is not one-dimensional" --assign "$T/twod.npy"
bad "--assign with --policy" "--assign and --policy" --assign "$T/a32.npy" \
    --policy "$(dirname "$0")/../../policies/default.lua"
bad "a missing file" "--assign: .*nope" --assign "$T/nope"
done_testing
