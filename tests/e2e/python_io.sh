#!/usr/bin/env bash
# python/halo_io.py against the C writers: a graph from `halo gen`, its partition, and the
# metrics, trace and timeline of a 2-rank `halo train`, read back with the numpy reader and
# checked against values computed independently (halo info's numbers, the input graph's rows,
# the range table, the run's own counters). Without numpy every reader check is a TAP skip.
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# The first interpreter that has numpy: $PYTHON, python3 on PATH, then Debian's own (where
# python3-numpy installs, when PATH's python3 is another build).
PY=
for c in ${PYTHON:-} python3 /usr/bin/python3; do
    if "$c" -c 'import numpy' >/dev/null 2>&1; then PY=$c; break; fi
done

# ---- the files, written by the C side ----
check "gen writes a small sbm graph" "$HALO" gen sbm --nodes 2000 -o "$T/g"
check "partition writes 2 parts" "$HALO" partition "$T/g" --parts 2 -o "$T/p"
check "info describes the graph" bash -c "'$HALO' info '$T/g' >'$T/info.txt'"
check "train writes metrics, a trace per rank and a timeline" \
    mpirun --timeout 60 --oversubscribe -np 2 "$HALO" train "$T/p" \
    --policy "$ROOT/policies/massivegnn.lua" --set f=0.25 --epochs 2 --batch 200 \
    --metrics "$T/m.jsonl" --trace "$T/t.trc" --timeline "$T/tl.jsonl"
check "trace record writes a single-file trace" \
    "$HALO" trace record "$T/p" -o "$T/rec.trc" --epochs 2 --batch 200
nofeat=0
if "$HALO" gen --help 2>&1 | grep -q -- '--no-features'; then
    nofeat=1
    check "gen --no-features writes a topology-only graph" \
        "$HALO" gen sbm --nodes 2000 --no-features -o "$T/gt"
    check "partition of the topology-only graph" "$HALO" partition "$T/gt" --parts 2 -o "$T/pt"
fi
cp -r "$T/g" "$T/g-short" && truncate -s -4 "$T/g-short/feat.f32"
cp -r "$T/g" "$T/g-long" && printf '\0\0\0\0' >>"$T/g-long/indices.i32"
cp -r "$T/p" "$T/p-short" && truncate -s -4 "$T/p-short/part-1/halo.i32"
cp "$T/t.trc.r1" "$T/short.trc" && truncate -s -8 "$T/short.trc"

cat >"$T/checks.py" <<'EOF'
"""One check per invocation: python3 checks.py NAME T; an AssertionError fails it."""
import os
import re
import sys
from collections import defaultdict

import numpy as np

import halo_io as hio

name, T = sys.argv[1], sys.argv[2]
J = lambda *p: os.path.join(T, *p)


def info_numbers():
    """nodes, edges and split counts as printed by `halo info`."""
    txt = open(J("info.txt")).read()
    nodes = int(re.search(r"^nodes\s+(\d+)", txt, re.M).group(1))
    edges = int(re.search(r"^edges\s+(\d+)", txt, re.M).group(1))
    m = re.search(r"^split\s+train (\d+), valid (\d+), test (\d+), none (\d+)", txt, re.M)
    split = dict(zip(("train", "valid", "test", "none"), map(int, m.groups())))
    return nodes, edges, split


def expect_error(fn, path_part):
    try:
        fn()
    except ValueError as e:
        assert path_part in str(e), f"error does not name {path_part}: {e}"
        assert isinstance(e, hio.HaloFormatError)
        return str(e)
    raise AssertionError("no ValueError")


def run_batches(trace):
    """(rank, epoch) -> [inputs, remote, hits] summed over the trace's batches."""
    acc = defaultdict(lambda: [0, 0, 0])
    for r in trace.ranks_data:
        for b in r.batches:
            a = acc[(r.rank, b.epoch)]
            a[0] += len(b.ids)
            a[1] += int(b.remote.sum())
            a[2] += int(b.hit.sum())
    return acc


def c_graph_edges():
    g = hio.load_graph(J("g"))
    assert g.edges == g.meta["edges"] == int(g.indptr[-1]), (g.edges, int(g.indptr[-1]))
    assert g.indices.shape == (g.edges,) and g.indptr.shape == (g.nodes + 1,)
    assert isinstance(g.indices, np.memmap), type(g.indices)
    assert g.feat.shape == (g.nodes, g.feat_dim) and g.feat.dtype == np.float32
    assert np.all(np.diff(g.indptr) >= 0) and int(g.indices.min()) >= 0
    assert int(g.indices.max()) < g.nodes


def c_graph_info():
    nodes, edges, split = info_numbers()
    g = hio.load_graph(J("g"))
    assert (g.nodes, g.edges) == (nodes, edges), ((g.nodes, g.edges), (nodes, edges))
    mine = {k: int(np.count_nonzero(g.split == v)) for k, v in
            (("none", 0), ("train", 1), ("valid", 2), ("test", 3))}
    assert mine == split == g.split_counts(), (mine, split)
    assert g.label.shape == (g.nodes,) and int(g.label.max()) < g.classes


def c_graph_nommap():
    a, b = hio.load_graph(J("g")), hio.load_graph(J("g"), mmap=False)
    assert not isinstance(b.feat, np.memmap)
    for f in ("indptr", "indices", "feat", "label", "split"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f


def c_part_nodes():
    g, P = hio.load_graph(J("g")), hio.load_partition(J("p"))
    assert P.parts == 2 == P.info["parts"] and P.nodes == g.nodes
    parts = list(P)
    assert sum(p.nodes for p in parts) == g.nodes
    assert sum(p.edges for p in parts) == g.edges
    assert [p.num_halo for p in parts] == P.info["halo_per_part"]
    assert np.array_equal(np.sort(P.orig_id), np.arange(g.nodes)), "orig_id not a permutation"
    assert np.array_equal(P.ranges, [0] + [p.end for p in parts])


def c_part_rows():
    g, P = hio.load_graph(J("g")), hio.load_partition(J("p"))
    deg = g.in_degree()
    for p in P:
        orig = P.orig_id[p.start:p.end]
        assert np.array_equal(p.label, g.label[orig]) and np.array_equal(p.split, g.split[orig])
        assert np.array_equal(p.feat, g.feat[orig])
        assert np.array_equal(np.diff(p.indptr), deg[orig])
        want = np.concatenate([g.indices[g.indptr[v]:g.indptr[v + 1]] for v in orig])
        assert np.array_equal(P.orig_id[p.indices], want), f"part {p.id}: rows differ"


def c_part_halo():
    g, P = hio.load_graph(J("g")), hio.load_partition(J("p"))
    for p in P:
        own = P.owner(p.halo)
        assert np.all(own != p.id) and np.all(own >= 0), f"part {p.id}: halo owned here"
        src = np.unique(np.asarray(p.indices))
        assert np.array_equal(p.halo, src[P.owner(src) != p.id])
        assert np.array_equal(p.halo_deg, g.in_degree()[P.orig_id[p.halo]])
        assert np.all(P.owner(p.train) >= 0) and len(p.train) == P.info["train_per_part"]


def c_owner():
    P = hio.load_partition(J("p"))
    ids = np.arange(-2, P.nodes + 2)
    lin = np.array([next((k for k in range(P.parts)
                          if P.ranges[k] <= i < P.ranges[k + 1]), -1) for i in ids])
    assert np.array_equal(P.owner(ids), lin)
    assert P.owner(int(P.ranges[1])) == 1 and P.owner(int(P.ranges[1]) - 1) == 0
    assert P.owner(-1) == -1 and P.owner(P.nodes) == -1


def c_trace_remote():
    P, t = hio.load_partition(J("p")), hio.load_trace(J("t.trc"))
    assert t.ranks == 2 and t.nodes == P.nodes and t.files[-1].endswith("t.trc.r1")
    for r in t.ranks_data:
        assert len(r.batches) > 0
        for b in r.batches:
            remote = set(b.ids[b.remote].tolist())
            assert remote == set(b.ids[P.owner(b.ids) != r.rank].tolist()), (r.rank, b.batch)
            assert np.array_equal(b.remote, P.owner(b.ids) != r.rank)


def c_trace_halo():
    P, t = hio.load_partition(J("p")), hio.load_trace(J("t.trc"))
    for r in t.ranks_data:
        p = P.part(r.rank)
        assert np.array_equal(r.halo_ids, p.halo) and np.array_equal(r.halo_deg, p.halo_deg)
        assert np.array_equal(r.halo_owner, P.owner(r.halo_ids))
        for b in r.batches:
            assert np.array_equal(b.halo, np.isin(b.ids, r.halo_ids))
            assert not np.any(b.hit & ~b.halo), "a hit outside the halo set"


def c_trace_vs_metrics():
    m, t = hio.load_metrics(J("m.jsonl")), hio.load_trace(J("t.trc"))
    acc = run_batches(t)
    assert len(acc) == len(m.epochs)
    for e in m.epochs:
        got = acc[(e["rank"], e["epoch"])]
        assert got == [e["input_nodes"], e["remote_nodes"], e["cache_hits"]], (e, got)


def c_trace_record():
    P, rec, run = (hio.load_partition(J("p")), hio.load_trace(J("rec.trc")),
                   hio.load_trace(J("t.trc")))
    assert rec.files == [J("rec.trc")] and rec.ranks == 2
    for r in rec.ranks_data:
        assert r.vip is not None and r.vip.shape == r.halo_ids.shape
        assert np.all((r.vip >= 0) & (r.vip <= 1))
        assert np.array_equal(r.halo_owner, P.owner(r.halo_ids)), "halo owners recorded"
        assert np.all(r.halo_owner != r.rank)
        assert len(r.batches) == len(run[r.rank].batches)
        for b, c in zip(r.batches, run[r.rank].batches):
            assert (b.epoch, b.batch) == (c.epoch, c.batch) and np.array_equal(b.ids, c.ids)
            assert np.array_equal(b.remote, P.owner(b.ids) != r.rank)


def c_metrics():
    m = hio.load_metrics(J("m.jsonl"))
    s = m.summary
    ranks, epochs = s["ranks"], s["epochs"]
    assert (ranks, epochs) == (2, 2)
    assert len(m.epochs) == ranks * epochs, len(m.epochs)
    assert len(m.evals) >= 1 and len(m.summaries) == 1
    tab = hio.epochs_table(m.epochs)
    assert tab["rank"].dtype == np.int64 and tab["loss"].dtype == np.float64
    assert sorted(zip(tab["rank"].tolist(), tab["epoch"].tolist())) == \
        [(r, e) for r in range(ranks) for e in range(epochs)]
    mean = [tab["loss"][tab["epoch"] == e].mean() for e in range(epochs)]
    assert np.allclose(mean, s["epoch_loss"], rtol=1e-5), (mean, s["epoch_loss"])
    assert tab["policy"].dtype.kind == "U"


def c_table_missing():
    tab = hio.epochs_table([{"a": 1, "b": "x", "c": [1]}, {"a": 2.5}, {"b": "y", "d": True}])
    assert list(tab) == ["a", "b", "c", "d"]
    assert tab["a"].dtype == np.float64 and np.isnan(tab["a"][2]) and tab["a"][1] == 2.5
    assert tab["b"].dtype == object and tab["b"][1] is None and tab["c"][0] == [1]
    assert all(len(v) == 3 for v in tab.values())


def c_timeline():
    tl, t = hio.load_timeline(J("tl.jsonl")), hio.load_trace(J("t.trc"))
    assert np.all(tl["end"] >= tl["start"]) and tl["stage"].dtype.kind == "U"
    c = tl["stage"] == "compute"
    got = sorted(zip(tl["rank"][c].tolist(), tl["epoch"][c].tolist(), tl["batch"][c].tolist()))
    want = sorted((r.rank, b.epoch, b.batch) for r in t.ranks_data for b in r.batches)
    assert got == want, (got, want)


def c_truncated():
    expect_error(lambda: hio.load_graph(J("g-short")), os.path.join("g-short", "feat.f32"))
    expect_error(lambda: hio.load_graph(J("g-long")), os.path.join("g-long", "indices.i32"))
    P = hio.load_partition(J("p-short"))
    P.part(0)
    expect_error(lambda: P.part(1), os.path.join("part-1", "halo.i32"))
    msg = expect_error(lambda: hio.load_trace(J("short.trc")), "short.trc")
    assert "truncated" in msg, msg


def c_bad_jsonl():
    with open(J("bad.jsonl"), "w") as f:
        f.write('{"type":"epoch","epoch":0}\nnot json\n')
    expect_error(lambda: hio.load_metrics(J("bad.jsonl")), "bad.jsonl:2")
    with open(J("bad-tl.jsonl"), "w") as f:
        f.write('{"rank":0,"batch":1,"stage":"x","start":1,"end":2}\n'
                '{"rank":0,"batch":2,"stage":"x","start":3}\n')
    expect_error(lambda: hio.load_timeline(J("bad-tl.jsonl")), "bad-tl.jsonl:2")


def c_nofeat():
    g, gt = hio.load_graph(J("g")), hio.load_graph(J("gt"))
    assert gt.feat is None and gt.topology_only and gt.meta["features"] is False
    assert gt.feat_dim == g.feat_dim and not os.path.exists(J("gt", "feat.f32"))
    for f in ("indptr", "indices", "label", "split"):
        assert np.array_equal(getattr(g, f), getattr(gt, f)), f
    P = hio.load_partition(J("pt"))
    assert P.topology_only and P.feat_dim == g.feat_dim
    for p in P:
        assert p.feat is None and p.topology_only


def c_nofeat_missing():
    import shutil
    shutil.copytree(J("g"), J("g-nofeat"))
    os.unlink(J("g-nofeat", "feat.f32"))
    msg = expect_error(lambda: hio.load_graph(J("g-nofeat")), "feat.f32")
    assert "topology-only" in msg, msg


globals()["c_" + name]()
EOF

pycheck() {
    local desc=$1 fn=$2
    if [ -z "$PY" ]; then ok "# SKIP numpy missing ($desc)"; return; fi
    check "$desc" env PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}" "$PY" "$T/checks.py" "$fn" "$T"
}

pycheck "graph: edges equal meta.json's and indptr[-1]; arrays mapped" graph_edges
pycheck "graph: nodes, edges and split counts equal halo info's" graph_info
pycheck "graph: mmap=False reads the same arrays" graph_nommap
pycheck "partition: part nodes sum to nodes, orig_id is a permutation" part_nodes
pycheck "partition: every part's rows are the input graph's rows through orig_id" part_rows
pycheck "partition: halo ids are owned elsewhere and are the foreign sources" part_halo
pycheck "partition: owner() agrees with a linear scan of the ranges" owner
pycheck "trace: ids flagged remote are exactly those not owned by the rank" trace_remote
pycheck "trace: halo sets equal the parts', halo and hit flags agree" trace_halo
pycheck "trace: per rank and epoch inputs, remote and hits equal the metrics'" trace_vs_metrics
pycheck "trace: a single-file recorded trace has vip, the halo owners and the run's batches" trace_record
pycheck "metrics: ranks x epochs epoch records; the table's losses give epoch_loss" metrics
pycheck "metrics: epochs_table fills missing fields with NaN / None" table_missing
pycheck "timeline: one compute interval per traced batch" timeline
pycheck "truncated or overlong arrays and traces raise ValueError naming the file" truncated
pycheck "bad JSON Lines raise ValueError naming FILE:LINE" bad_jsonl
pycheck "a graph without feat.f32 that claims features is refused" nofeat_missing
if [ $nofeat -eq 1 ]; then
    pycheck "topology-only graph and partition: feat is None, the rest identical" nofeat
fi

done_testing
