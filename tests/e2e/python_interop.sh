#!/usr/bin/env bash
# python/halo_io.py's interchange with DGL and PyG and its import without numpy: a graph written
# from numpy arrays, a PyG Data or a DGLGraph must pass `halo verify` and hold exactly the edges,
# features, labels and split it was given; to_pyg/to_dgl must give back the graph's own edges; a
# DGL partition_graph layout (hand-made here) must become an --assign file that puts every node in
# the part DGL chose. Each check whose package (numpy, torch_geometric, dgl) is missing is a TAP
# skip; `import halo_io` without numpy is checked with numpy hidden from the interpreter.
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DATA=$ROOT/tests/data/import

# First interpreter that imports `mod`: $PYTHON, python3 on PATH, then Debian's own.
find_py() {
    local c
    for c in ${PYTHON:-} python3 /usr/bin/python3; do
        if "$c" -c "import $1" >/dev/null 2>&1; then echo "$c"; return; fi
    done
}
PY=$(find_py numpy)
PYG=$(find_py torch_geometric)
DGL=$(find_py dgl)
PYANY=$(command -v python3 || echo /usr/bin/python3)

# pycheck NAME INTERPRETER: runs check NAME of checks.py; empty INTERPRETER is a TAP skip.
pycheck() {
    local name=$1 py=$2 why=$3
    if [ -z "$py" ]; then ok "$name # SKIP $why"; return; fi
    check "$name" env PYTHONPATH="$ROOT/python" "$py" "$T/checks.py" "$name" "$T"
}

# ---- import without numpy (sys.modules["numpy"] = None makes `import numpy` fail) -----------
cat >"$T/nonumpy.py" <<'PYEOF'
import sys
sys.modules["numpy"] = None
import halo_io
if sys.argv[1] == "call":
    halo_io.load_graph(sys.argv[2])
PYEOF
check "import halo_io without numpy" env PYTHONPATH="$ROOT/python" "$PYANY" "$T/nonumpy.py" import
# ---- inputs written by the C side ----------------------------------------------------------
cp -r "$DATA/ogb" "$T/ogb"
check "import the six-node graph" "$HALO" -q import ogb "$T/ogb" -o "$T/g"
check "import it --directed" "$HALO" -q import ogb "$T/ogb" -o "$T/gd" --directed
check "gen a small sbm graph" "$HALO" -q gen sbm --nodes 600 -o "$T/sbm"
check "partition it in 2" "$HALO" -q partition "$T/sbm" --parts 2 -o "$T/sbmp"
env PYTHONPATH="$ROOT/python" "$PYANY" "$T/nonumpy.py" call "$T/g" >"$T/nn.out" 2>"$T/nn.err"
rc=$?
if [ $rc -eq 1 ] && tail -n 1 "$T/nn.err" | grep -qE \
    '^halo_io.MissingDependency: halo_io.load_graph needs numpy, which .* cannot import .*pip install numpy\)$'; then
    ok "a reader without numpy: one line naming numpy and load_graph"
else
    not_ok "a reader without numpy: one line naming numpy and load_graph"
    sed 's/^/# /' "$T/nn.err" | tail -n 5
fi


cat >"$T/checks.py" <<'PYEOF'
"""One check per run: python3 checks.py NAME T; an exception fails it."""
import json
import os
import subprocess
import sys

import numpy as np

import halo_io as hio

name, T = sys.argv[1], sys.argv[2]
J = lambda *p: os.path.join(T, *p)
HALO = os.environ.get("HALO_BIN") or os.path.join(os.getcwd(), "bin", "halo")

# The six-node graph's edge.csv, symmetrised by hand: pairs {0,1} {1,2} {0,2} {3,4} {0,3}.
PAIRS = [(0, 1), (1, 2), (0, 2), (3, 4), (0, 3)]
SYM = sorted(PAIRS + [(v, u) for u, v in PAIRS])
EDGES = [(0, 1), (1, 2), (2, 0), (3, 4), (4, 3), (2, 2), (1, 2), (0, 3)]  # edge.csv as given


def verify(d):
    subprocess.run([HALO, "verify", d], check=True, capture_output=True)


def same_graph(a, b):
    for f in ("indptr", "indices", "label", "split"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    assert (a.feat is None) == (b.feat is None) and (a.feat is None or np.array_equal(a.feat, b.feat))


if name == "write_graph from numpy: CSR by hand, verify":
    g = hio.write_graph(J("w"), [0, 2, 1, 2], [1, 1, 0, 1], 3, feat=np.eye(3),
                        label=[np.nan, 1, 0], masks=[[0], np.array([False, True, False]), None])
    verify(J("w"))
    assert g.indptr.tolist() == [0, 1, 4, 4] and g.indices.tolist() == [1, 0, 2, 2]
    assert g.directed and g.classes == 2 and g.label.tolist() == [-1, 1, 0]
    assert g.split.tolist() == [1, 2, 0] and g.feat.tolist() == np.eye(3).tolist()
    # 0/1 uint8 masks of length N (some DGL datasets) are masks, not id lists
    g = hio.write_graph(J("w8"), [0], [1], 4, masks=[np.array([0, 1, 1, 0], np.uint8), [0], None])
    assert g.split.tolist() == [2, 1, 1, 0]
elif name == "write_graph: a symmetric edge set is undirected":
    u, v = zip(*SYM)
    g = hio.write_graph(J("ws"), u, v, 6)
    verify(J("ws"))
    assert not g.directed and g.feat_dim == 0 and (g.label == -1).all()
elif name == "write_graph refuses bad input and leaves nothing":
    for kw, want in (({"label": [0, 1.5, 2]}, "entry 1 is 1.5"),
                     ({"masks": [[0, 1], [1], None]}, "node 1 is in two splits"),
                     ({"feat": np.ones((2, 4))}, "feat: shape (2, 4)")):
        try:
            hio.write_graph(J("bad"), [0], [1], 3, **kw)
            raise AssertionError(f"{kw} accepted")
        except hio.HaloFormatError as e:
            assert want in str(e), e
    try:
        hio.write_graph(J("bad"), [0], [3], 3)
        raise AssertionError("edge out of range accepted")
    except hio.HaloFormatError:
        pass
    assert not [f for f in os.listdir(T) if f.startswith("bad")], os.listdir(T)
    try:
        hio.write_graph(J("g"), [0], [1], 3)
        raise AssertionError("existing directory overwritten")
    except FileExistsError:
        pass
elif name == "dgl_partition_to_assign: reshuffled ranges + orig_nids -> halo partition":
    # DGL's layout: GRAPH.json with node_map ranges of reshuffled ids and part-K/ folders;
    # orig_nids[new] = input id. Parts: new ids 0..3 -> part 0, 4..5 -> part 1.
    os.makedirs(J("dglpart", "part-0")); os.makedirs(J("dglpart", "part-1"))
    meta = {"graph_name": "g", "part_method": "metis", "num_parts": 2, "halo_hops": 1,
            "num_nodes": 6, "num_edges": 10, "node_map": {"_N": [[0, 4], [4, 6]]},
            "edge_map": {"_N": [[0, 6], [6, 10]]}, "ntypes": {"_N": 0},
            "etypes": {"_N:_E:_N": 0}}
    for k in range(2):
        meta[f"part-{k}"] = {"node_feats": f"part-{k}/node_feat.dgl",
                             "edge_feats": f"part-{k}/edge_feat.dgl",
                             "part_graph": f"part-{k}/graph.dgl"}
    json.dump(meta, open(J("dglpart", "g.json"), "w"))
    orig = np.array([5, 0, 3, 1, 2, 4])
    np.save(J("orig_nids.npy"), orig)
    a = hio.dgl_partition_to_assign(J("dglpart", "g.json"), J("parts.npy"),
                                    orig_nids=J("orig_nids.npy"))
    want = [0, 0, 1, 0, 1, 0]  # input node -> part (nodes 5, 0, 3, 1 in part 0)
    assert a.tolist() == want and np.load(J("parts.npy")).tolist() == want
    assert hio.dgl_partition_to_assign(J("dglpart", "g.json"), J("p2.npy"),
                                       orig_nids={"_N": orig}).tolist() == want
    subprocess.run([HALO, "-q", "partition", J("g"), "--assign", J("parts.npy"), "-o", J("gp")],
                   check=True, capture_output=True)
    P = hio.load_partition(J("gp"))
    for k in range(2):
        got = sorted(P.orig_id[P.ranges[k]:P.ranges[k + 1]].tolist())
        assert got == [v for v in range(6) if want[v] == k], (k, got)
elif name == "dgl_partition_to_assign: old node_map file, and refusals":
    os.makedirs(J("old"))
    np.save(J("old", "node_map.npy"), np.array([1, 1, 0, 0, 1, 0]))
    meta = {"num_nodes": 6, "num_parts": 2, "node_map": "node_map.npy"}
    json.dump(meta, open(J("old", "g.json"), "w"))
    assert hio.dgl_partition_to_assign(J("old", "g.json"), J("o.npy")).tolist() == [1, 1, 0, 0, 1, 0]
    bad = [({"node_map": {"_N": [[0, 4], [4, 5]]}}, "ranges end at 5"),
           ({"node_map": {"_N": [[0, 4], [3, 6]]}}, "range 1 is [3, 6)"),
           ({"node_map": {"_N": [[0, 4], [4, 6]]}}, "pass orig_nids")]
    for change, want in bad:
        json.dump(dict(meta, **change), open(J("old", "b.json"), "w"))
        try:
            hio.dgl_partition_to_assign(J("old", "b.json"), J("b.npy"))
            raise AssertionError(f"{change} accepted")
        except hio.HaloFormatError as e:
            assert want in str(e) and "b.json" in str(e), e
    json.dump(dict(meta, node_map={"_N": [[0, 4], [4, 6]]}), open(J("old", "b.json"), "w"))
    try:
        hio.dgl_partition_to_assign(J("old", "b.json"), J("b.npy"), orig_nids=[0, 1, 2, 3, 4, 4])
        raise AssertionError("a non-permutation accepted")
    except hio.HaloFormatError as e:
        assert "not a permutation" in str(e), e
elif name == "to_pyg: the graph's edges, features, labels and masks":
    g = hio.load_graph(J("g"))
    d = hio.to_pyg(g)
    assert sorted(map(tuple, d.edge_index.t().tolist())) == SYM
    assert d.y.tolist() == [3, 0, -1, 1, -1, 2] and d.num_nodes == 6
    assert [int(m.sum()) for m in (d.train_mask, d.val_mask, d.test_mask)] == [3, 1, 2]
    assert d.x[3].tolist() == [-7.25, 8, 9]
    # the --directed import keeps edge.csv's edges as given: row 0 sources, row 1 targets
    d = hio.to_pyg(hio.load_graph(J("gd")))
    assert sorted(map(tuple, d.edge_index.t().tolist())) == sorted(EDGES)
elif name == "from_pyg(to_pyg(g)) is g, and passes verify":
    g = hio.load_graph(J("sbm"))
    g2 = hio.from_pyg(hio.to_pyg(g), J("sbm-pyg"))
    verify(J("sbm-pyg"))
    same_graph(g, g2)
    assert g2.directed == g.directed and g2.classes == g.classes
elif name == "from_pyg of a hand-made Data with NaN labels":
    import torch
    from torch_geometric.data import Data
    d = Data(x=torch.arange(8, dtype=torch.float64).reshape(4, 2),
             edge_index=torch.tensor([[0, 1, 3], [1, 2, 2]]),
             y=torch.tensor([[1.0], [float("nan")], [0.0], [2.0]]),
             train_mask=torch.tensor([True, False, False, True]))
    g = hio.from_pyg(d, J("hand"))
    verify(J("hand"))
    assert g.indptr.tolist() == [0, 0, 1, 3, 3] and g.indices.tolist() == [0, 1, 3]
    assert g.label.tolist() == [1, -1, 0, 2] and g.split.tolist() == [1, 0, 0, 1]
    assert g.feat.tolist() == [[0, 1], [2, 3], [4, 5], [6, 7]] and g.classes == 3
elif name == "to_pyg of a part: owned nodes then halo, in-edges of the owned":
    P = hio.load_partition(J("sbmp"))
    g = hio.load_graph(J("sbm"))
    for k in range(P.parts):
        p = P.part(k)
        d = hio.to_pyg(p, nodes=P.nodes)
        assert d.num_nodes == p.nodes + p.num_halo and int(d.inner_node.sum()) == p.nodes
        assert d.edge_index.shape[1] == p.edges and bool((d.edge_index[1] < p.nodes).all())
        gid = d.n_id.numpy()
        e = sorted(zip(gid[d.edge_index[0].numpy()].tolist(),
                       gid[d.edge_index[1].numpy()].tolist()))
        rows = range(p.start, p.end)
        want = sorted((int(u), v) for i, v in enumerate(rows)
                      for u in p.indices[p.indptr[i]:p.indptr[i + 1]])
        assert e == want
        # the part's rows are the graph's rows of the same input nodes
        orig = P.orig_id[p.start:p.end]
        assert np.array_equal(d.x[:p.nodes].numpy(), g.feat[orig])
        assert np.array_equal(d.y[:p.nodes].numpy(), g.label[orig]) and (d.y[p.nodes:] == -1).all()
    whole = hio.to_pyg(P)  # a Partition: one Data per part, covering every node once
    assert len(whole) == P.parts
    assert sorted(np.concatenate([d.n_id[d.inner_node].numpy() for d in whole]).tolist()) == list(range(P.nodes))
elif name == "to_dgl and from_dgl round trip":
    g = hio.load_graph(J("sbm"))
    dg = hio.to_dgl(g)
    u, v = dg.edges()
    assert dg.num_nodes() == g.nodes and dg.num_edges() == g.edges
    assert sorted(zip(u.tolist(), v.tolist())) == sorted(
        (int(s), t) for t in range(g.nodes) for s in g.indices[g.indptr[t]:g.indptr[t + 1]])
    g2 = hio.from_dgl(dg, J("sbm-dgl"))
    verify(J("sbm-dgl"))
    same_graph(g, g2)
elif name == "to_dgl of a part: inner_node and _ID":
    P = hio.load_partition(J("sbmp"))
    p = P.part(1)
    dg = hio.to_dgl(p, nodes=P.nodes)
    assert int(dg.ndata["inner_node"].sum()) == p.nodes and dg.num_edges() == p.edges
    assert dg.ndata["_ID"][:p.nodes].tolist() == list(range(p.start, p.end))
elif name == "dgl partition_graph -> assign -> halo partition":
    import dgl
    g = hio.load_graph(J("sbm"))
    dg = hio.to_dgl(g)
    orig, _ = dgl.distributed.partition_graph(dg, "sbm", 2, J("dglp"), part_method="random",
                                              return_mapping=True)
    hio.from_dgl(dg, J("sbm-d2"))
    a = hio.dgl_partition_to_assign(J("dglp", "sbm.json"), J("d.npy"), orig_nids=orig)
    subprocess.run([HALO, "-q", "partition", J("sbm-d2"), "--assign", J("d.npy"), "-o", J("dp")],
                   check=True, capture_output=True)
    P = hio.load_partition(J("dp"))
    for k in range(2):
        assert sorted(P.orig_id[P.ranges[k]:P.ranges[k + 1]].tolist()) == np.flatnonzero(a == k).tolist()
else:
    raise SystemExit(f"no check {name!r}")
PYEOF

export HALO_BIN=$HALO
pycheck "write_graph from numpy: CSR by hand, verify" "$PY" "numpy missing"
pycheck "write_graph: a symmetric edge set is undirected" "$PY" "numpy missing"
pycheck "write_graph refuses bad input and leaves nothing" "$PY" "numpy missing"
pycheck "dgl_partition_to_assign: reshuffled ranges + orig_nids -> halo partition" "$PY" "numpy missing"
pycheck "dgl_partition_to_assign: old node_map file, and refusals" "$PY" "numpy missing"
pycheck "to_pyg: the graph's edges, features, labels and masks" "$PYG" "torch_geometric missing"
pycheck "from_pyg(to_pyg(g)) is g, and passes verify" "$PYG" "torch_geometric missing"
pycheck "from_pyg of a hand-made Data with NaN labels" "$PYG" "torch_geometric missing"
pycheck "to_pyg of a part: owned nodes then halo, in-edges of the owned" "$PYG" "torch_geometric missing"
pycheck "to_dgl and from_dgl round trip" "$DGL" "dgl missing"
pycheck "to_dgl of a part: inner_node and _ID" "$DGL" "dgl missing"
pycheck "dgl partition_graph -> assign -> halo partition" "$DGL" "dgl missing"

done_testing
