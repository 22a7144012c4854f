# The trace file as an outsider reads it: a reader written from docs/cache.md's byte layout alone
# (python3 and struct, no numpy, no halo code) parses `halo trace record --blocks` and a training
# run's trace, and its counts equal what `halo trace replay` prints (totals, hits, misses) and
# what the run's metrics say; the halo records' owners are the partition's; the BLOCK records
# let the sampler be checked from outside (every sampled edge is an edge of the input graph,
# each destination gets min(fanout, in-degree) distinct in-neighbours, the layers chain, the
# last layer's destinations are training seeds).
. "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN="timeout -k 5 60 mpirun --timeout 50 --oversubscribe --bind-to none"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=$(command -v python3 || true)
if [ -z "$PY" ]; then
    ok "trace format # SKIP no python3"
    done_testing
    exit 0
fi

check "generate a small sbm graph" "$HALO" gen sbm -n 1500 -F 8 -C 4 -s 11 -o "$T/g"
check "partition into 3" "$HALO" partition "$T/g" --parts 3 -o "$T/p"
check_out "record with --blocks" "recorded .*3 ranks, 2 epochs" \
    "$HALO" trace record "$T/p" -o "$T/t.trc" --fanouts 3,5 --batch 100 --epochs 2 --blocks

# the reader, from docs/cache.md "Trace format" only
cat >"$T/read.py" <<'PYEOF'
import json, os, struct, sys

def pad8(x):
    return (x + 7) // 8 * 8

def arr(buf, fmt, n, off):
    return list(struct.unpack_from("<%d%s" % (n, fmt), buf, off)) if n else []

def read(path):
    """Header, halo sets, batches and blocks of one trace file."""
    buf = open(path, "rb").read()
    magic, version, ranks, feat_dim, reserved, nodes = struct.unpack_from("<8sIIIIq", buf, 0)
    assert magic == b"HALOTRC1" and version == 1 and reserved == 0, (magic, version)
    t = {"ranks": ranks, "feat_dim": feat_dim, "nodes": nodes, "halo": {}, "batches": [],
         "blocks": []}
    off = 32
    while off < len(buf):
        assert off % 8 == 0, off
        kind, rank, a, b, n = struct.unpack_from("<IIqqq", buf, off)
        p = off + 32
        if kind == 1:
            ids = arr(buf, "i", n, p)
            deg = arr(buf, "i", n, p + 4 * n)
            owner = arr(buf, "i", n, p + 8 * n)
            vip = arr(buf, "d", n, p + 8 * n + pad8(4 * n)) if a else None
            body = 8 * n + pad8(4 * n) + (8 * n if a else 0)
            t["halo"][rank] = (ids, deg, owner, vip)
        elif kind == 2:
            ids = arr(buf, "i", n, p)
            flags = list(buf[p + pad8(4 * n):p + pad8(4 * n) + n])
            body = pad8(4 * n) + pad8(n)
            t["batches"].append((rank, a, b, ids, flags))
        elif kind == 3:
            layer, d = struct.unpack_from("<ii", buf, p)
            dst = arr(buf, "i", d, p + 8)
            count = arr(buf, "i", d, p + 8 + pad8(4 * d))
            src = arr(buf, "i", n, p + 8 + 2 * pad8(4 * d))
            body = 8 + 2 * pad8(4 * d) + pad8(4 * n)
            t["blocks"].append((rank, a, b, layer, dst, count, src))
        else:
            raise SystemExit("unknown kind %d at %d" % (kind, off))
        off = p + body
    assert off == len(buf), (off, len(buf))
    return t

def load(path):
    """FILE, or FILE.r0 .. FILE.r{P-1}."""
    if os.path.exists(path):
        return read(path)
    t = read(path + ".r0")
    for r in range(1, t["ranks"]):
        u = read("%s.r%d" % (path, r))
        t["halo"].update(u["halo"])
        t["batches"] += u["batches"]
        t["blocks"] += u["blocks"]
    return t

def summary(t):
    """The totals line halo trace replay prints first."""
    nb = len(t["batches"])
    ni = sum(len(x[3]) for x in t["batches"])
    nr = sum(sum(1 for f in x[4] if f & 1) for x in t["batches"])
    nh = sum(sum(1 for f in x[4] if f & 2) for x in t["batches"])
    halo = sum(len(h[0]) for h in t["halo"].values())
    return "%d ranks, %d batches, %d input nodes, %d remote (%d halo), %d halo nodes" % (
        t["ranks"], nb, ni, nr, nh, halo)

def hits_per_rank(t):
    h = [0] * t["ranks"]
    for rank, a, b, ids, flags in t["batches"]:
        h[rank] += sum(1 for f in flags if f & 6 == 6)
    return h

def halo_accesses(t):
    return sum(sum(1 for f in x[4] if f & 2) for x in t["batches"])

def owners_match(t, pdir):
    """Every halo node's owner is the part whose id range holds it, never the rank itself."""
    ranges = json.load(open(os.path.join(pdir, "partition.json")))["ranges"]
    for rank, (ids, deg, owner, vip) in t["halo"].items():
        for v, o in zip(ids, owner):
            lo, hi = ranges[o]
            if o == rank or not (lo <= v < hi):
                return "rank %d: halo node %d has owner %d (range %s)" % (rank, v, o, ranges[o])
    return None

def check_blocks(t, pdir, gdir, fanouts):
    """The sampler from outside: edges of the input graph, min(fanout, in-degree) distinct
    neighbours per destination, layers chained, seeds of the rank's training set, inputs."""
    n = t["nodes"]
    orig = arr(open(os.path.join(pdir, "orig_id.i64"), "rb").read(), "q", n, 0)
    ib = open(os.path.join(gdir, "indptr.i64"), "rb").read()
    indptr = arr(ib, "q", n + 1, 0)
    xb = open(os.path.join(gdir, "indices.i32"), "rb").read()
    indices = arr(xb, "i", indptr[n], 0)
    nbrs = lambda u: indices[indptr[u]:indptr[u + 1]]
    L = len(fanouts)
    train = {}
    for r in range(t["ranks"]):
        tb = open(os.path.join(pdir, "part-%d" % r, "train.i32"), "rb").read()
        train[r] = set(arr(tb, "i", len(tb) // 4, 0))
    by = {}
    for rank, a, b, layer, dst, count, src in t["blocks"]:
        by.setdefault((rank, a, b), {})[layer] = (dst, count, src)
    edges = 0
    for rank, a, b, ids, flags in t["batches"]:
        layers = by.get((rank, a, b))
        if layers is None or sorted(layers) != list(range(L)):
            return "rank %d epoch %d batch %d: layers %s" % (rank, a, b, layers and sorted(layers))
        for l in range(L):
            dst, count, src = layers[l]
            if len(set(dst)) != len(dst):
                return "layer %d: repeated destinations" % l
            e = 0
            for v, c in zip(dst, count):
                s = src[e:e + c]
                e += c
                nb = set(nbrs(orig[v]))
                want = min(fanouts[l], len(nbrs(orig[v])))
                if c != want or len(set(s)) != c or any(orig[u] not in nb for u in s):
                    return ("rank %d batch %d layer %d: node %d (degree %d) sampled %s"
                            % (rank, b, l, v, len(nb), s))
            edges += len(src)
            if l + 1 < L:
                up_dst, _, up_src = layers[l + 1]
                if set(dst) != set(up_dst) | set(up_src):
                    return "layer %d's destinations are not layer %d's sources" % (l, l + 1)
        seeds = layers[L - 1][0]
        if not set(seeds) <= train[rank]:
            return "rank %d batch %d: a seed that is not a training node" % (rank, b)
        d0, _, s0 = layers[0]
        if sorted(ids) != sorted(set(d0) | set(s0)):
            return "rank %d batch %d: the input ids are not layer 0's sources" % (rank, b)
    return "ok %d edges" % edges

if __name__ == "__main__":
    cmd, path = sys.argv[1], sys.argv[2]
    t = load(path)
    if cmd == "summary":
        print(summary(t))
    elif cmd == "hits":
        print(" ".join(str(h) for h in hits_per_rank(t)), halo_accesses(t))
    elif cmd == "owners":
        print(owners_match(t, sys.argv[3]) or "ok")
    elif cmd == "blocks":
        print(check_blocks(t, sys.argv[3], sys.argv[4], [int(x) for x in sys.argv[5].split(",")]))
PYEOF

"$HALO" trace replay "$T/t.trc" --policy lru --capacities 0.2 >"$T/rep" 2>"$T/rep.err"
want=$(sed -n 's/^trace [^:]*: \(.* halo nodes\), .*/\1/p' "$T/rep")
got=$("$PY" "$T/read.py" summary "$T/t.trc" 2>&1)
echo "# replay: $want"
echo "# reader: $got"
check "the reader's totals are replay's ($want)" test -n "$want" -a "$got" = "$want"
check_out "the halo owners are the partition's" "^ok$" "$PY" "$T/read.py" owners "$T/t.trc" "$T/p"
check_out "the sampled edges check out from outside" "^ok [1-9][0-9]* edges$" \
    "$PY" "$T/read.py" blocks "$T/t.trc" "$T/p" "$T/g" 3,5
check "a trace with blocks replays like one without" "$HALO" trace record "$T/p" -o "$T/nb.trc" \
    --fanouts 3,5 --batch 100 --epochs 2
"$HALO" trace replay "$T/nb.trc" --policy lru --capacities 0.2 >"$T/rep2" 2>&1
row1=$(grep '^0.2 ' "$T/rep" | awk '{$10 = ""; print}')
row2=$(grep '^0.2 ' "$T/rep2" | awk '{$10 = ""; print}')
check "... (the same table row)" test -n "$row1" -a "$row1" = "$row2"
# replay prints hits and misses, and hit_rate is their ratio
# col NAME < TABLE: NAME's column of the table's data row
col() { awk -v k="$1" '$1 == "capacity" { for (i = 1; i <= NF; i++) c[$i] = i; next }
    c[k] && NF > 5 { print $c[k] }'; }
h=$(col hits <"$T/rep")
m=$(col misses <"$T/rep")
rate=$(col hit_rate <"$T/rep")
acc=$("$PY" "$T/read.py" hits "$T/t.trc" | awk '{print $NF}')
check "replay's hits + misses are the trace's halo accesses ($h + $m = $acc)" \
    test -n "$h" -a -n "$m" -a "$((h + m))" = "$acc"
check "replay's hit_rate is hits / (hits + misses)" test -n "$rate" -a "$h" -gt 0 -a \
    "$(awk -v h="$h" -v m="$m" 'BEGIN { printf "%.4f", h / (h + m) }')" = "$rate"

# a training run's trace: the F_HIT flags of each rank are its cache_hits, and replaying it with
# the same policy gives the same hits
check "train --trace on 3 ranks" $MPIRUN -np 3 "$HALO" train "$T/p" --epochs 1 --batch 100 \
    --fanouts 3,5 --eval none --no-table --policy "$ROOT/policies/massivegnn.lua" \
    --set delta=2 --set alpha=0.3 --metrics "$T/m.jsonl" --trace "$T/run"
run_hits=$(grep '"type":"epoch"' "$T/m.jsonl" |
    sed 's/.*"rank":\([0-9]*\),.*"cache_hits":\([0-9]*\),.*/\1 \2/' |
    sort -n | awk '{printf "%s ", $2}')
read_hits=$("$PY" "$T/read.py" hits "$T/run" |
    awk '{NF--; for (i = 1; i <= NF; i++) printf "%s ", $i}')
echo "# hits per rank: metrics $run_hits, trace $read_hits"
check "the trace's hit flags are each rank's cache_hits ($run_hits)" \
    test -n "$run_hits" -a "$run_hits" = "$read_hits"
check_out "its halo owners are the partition's" "^ok$" "$PY" "$T/read.py" owners "$T/run" "$T/p"
"$HALO" trace replay "$T/run" --policy "$ROOT/policies/massivegnn.lua" --set delta=2 \
    --set alpha=0.3 >"$T/rrun" 2>&1
total=$(echo $run_hits | awk '{for (i = 1; i <= NF; i++) s += $i; print s}')
check "replaying it prints the run's hits ($total)" \
    test -n "$total" -a "$(col hits <"$T/rrun")" = "$total"
ev=$(grep -o '"cache_evicted":[0-9]*' "$T/m.jsonl" | awk -F: '{s += $2} END {print s}')
check "... and its evictions ($ev)" test -n "$ev" -a "$(col evicted <"$T/rrun")" = "$ev"

# bad BLOCK records are refused with one line
cp "$T/t.trc" "$T/bad.trc"
# the first BLOCK record follows the 3 HALO records and the first BATCH record; break its layer
"$PY" - "$T/bad.trc" <<'PYEOF'
import struct, sys
path = sys.argv[1]
buf = bytearray(open(path, "rb").read())
off = 32
while True:
    kind, rank, a, b, n = struct.unpack_from("<IIqqq", buf, off)
    if kind == 3:
        struct.pack_into("<i", buf, off + 32, 99)
        break
    p = off + 32
    pad8 = lambda x: (x + 7) // 8 * 8
    off = p + (8 * n + pad8(4 * n) + (8 * n if a else 0) if kind == 1 else pad8(4 * n) + pad8(n))
open(path, "wb").write(buf)
PYEOF
check_fails "a BLOCK record with a bad layer" "bad.trc: record [0-9]+: bad block layer 99" \
    "$HALO" trace replay "$T/bad.trc" --policy lru
# a BATCH record whose input id is not a node of the graph is refused with one line
cp "$T/t.trc" "$T/badid.trc"
"$PY" - "$T/badid.trc" <<'PYEOF'
import struct, sys
path = sys.argv[1]
buf = bytearray(open(path, "rb").read())
nodes = struct.unpack_from("<q", buf, 24)[0]
pad8 = lambda x: (x + 7) // 8 * 8
off = 32
while True:
    kind, rank, a, b, n = struct.unpack_from("<IIqqq", buf, off)
    if kind == 2 and n > 0:
        struct.pack_into("<i", buf, off + 32, nodes)
        break
    p = off + 32
    if kind == 3:
        d = struct.unpack_from("<ii", buf, p)[1]
        off = p + 8 + 2 * pad8(4 * d) + pad8(4 * n)
    else:
        off = p + (8 * n + pad8(4 * n) + (8 * n if a else 0) if kind == 1 else pad8(4 * n) + pad8(n))
open(path, "wb").write(buf)
PYEOF
check_fails "a BATCH record with an input id outside the graph" \
    "badid.trc: record [0-9]+: input 0: bad id [0-9]+ or flags" \
    "$HALO" trace replay "$T/badid.trc" --policy lru
done_testing
