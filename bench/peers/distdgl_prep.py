"""Converts a halo graph directory into a DGL graph and partitions it the way DistDGL does.

    python distdgl_prep.py GRAPH_DIR OUT_DIR --parts 4 [--name NAME]

The graph keeps halo's node ids (so labels, features and the split are the same rows);
partitioning is DGL's own: dgl.distributed.partition_graph with METIS, balanced on the
training nodes and on edges, one hop of halo nodes (DistDGL's defaults for GraphSAGE). It
prints one JSON line with the partition's quality: the edge cut (edges whose endpoints lie in
different partitions), the share of cut edges, and the largest part's nodes over the mean.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import halo_io  # noqa: E402

os.environ.setdefault("DGLBACKEND", "pytorch")
import dgl  # noqa: E402
import torch  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("graph")
    ap.add_argument("out")
    ap.add_argument("--parts", type=int, default=4)
    ap.add_argument("--name", default="halo")
    a = ap.parse_args()

    g = halo_io.load_graph(a.graph, mmap=False)
    feat = g.padded_features()  # a typed graph's per-type rows, padded as halo trains them
    if feat is None:
        sys.exit(f"{a.graph}: topology-only graph; DistDGL needs features")
    deg = np.diff(g.indptr.astype(np.int64))
    dst = np.repeat(np.arange(g.nodes, dtype=np.int64), deg)
    src = g.indices.astype(np.int64)
    dg = dgl.graph((torch.from_numpy(src), torch.from_numpy(dst)), num_nodes=g.nodes)
    dg.ndata["feat"] = torch.from_numpy(np.ascontiguousarray(feat))
    dg.ndata["label"] = torch.from_numpy(g.label.astype(np.int64))
    split = torch.from_numpy(g.split.astype(np.int64))
    dg.ndata["train_mask"] = split == halo_io.SPLIT_TRAIN
    dg.ndata["val_mask"] = split == halo_io.SPLIT_VALID
    dg.ndata["test_mask"] = split == halo_io.SPLIT_TEST

    t0 = time.time()
    orig_nids, _ = dgl.distributed.partition_graph(
        dg, a.name, a.parts, a.out, num_hops=1, part_method="metis",
        balance_ntypes=dg.ndata["train_mask"], balance_edges=True, return_mapping=True)
    part_s = time.time() - t0

    # Part of every original node: new ids are contiguous per part (node_map in the json).
    with open(os.path.join(a.out, a.name + ".json")) as f:
        cfg = json.load(f)
    ranges = cfg["node_map"]["_N"]
    new_part = np.empty(g.nodes, dtype=np.int32)
    for p, (lo, hi) in enumerate(ranges):
        new_part[lo:hi] = p
    part_of = np.empty(g.nodes, dtype=np.int32)
    part_of[orig_nids.numpy()] = new_part
    cut = int(np.count_nonzero(part_of[src] != part_of[dst]))
    counts = np.bincount(part_of, minlength=a.parts)
    print(json.dumps({"type": "dgl_partition", "parts": a.parts, "edges": int(g.edges),
                      "edge_cut": cut, "cut_share": cut / max(1, g.edges),
                      "node_balance": float(counts.max() / counts.mean()),
                      "partition_s": part_s}))


if __name__ == "__main__":
    main()
