#!/usr/bin/env python3
"""Writes the .npz fixtures of tests/e2e/import_npz.sh (needs numpy; the output is committed, so
the tests themselves need neither numpy nor this script).

ogb_npz/ is the six-node dataset of ogb/ (the CSV layout) in ogbn-papers100M's binary layout:
raw/data.npz (deflated, as np.savez_compressed writes it) with edge_index int64 (2, E),
num_nodes_list, num_edges_list, node_feat float32 (N, 3) and node_year int64 (N, 1) (which halo
ignores), raw/node-label.npz (stored, as np.savez writes it) with node_label float32 (N, 1), NaN
for unlabelled, and the split files of ogb/. npz_cases/ holds replacements for one of the two
archives: good variants (other dtypes, column-major order) and bad ones.

Run from anywhere: python3 tests/data/import/make_npz.py
"""
import os
import shutil

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "ogb_npz")
CASES = os.path.join(HERE, "npz_cases")

EDGES = [(0, 1), (1, 2), (2, 0), (3, 4), (4, 3), (2, 2), (1, 2), (0, 3)]
FEAT = [[0.5, 1, -1], [2, 3, 4], [1e-3, 0, 0], [-7.25, 8, 9], [10, 11, 12], [0, 0, 0]]
LABEL = [3, 0, np.nan, 1, np.nan, 2]
N = 6


def data(edge_index=None, feat=None, nodes=None, edges=None, drop=(), **extra):
    """The arrays of data.npz, with any of them replaced or dropped."""
    ei = np.array(EDGES, dtype=np.int64).T.copy() if edge_index is None else edge_index
    d = {
        "edge_index": ei,
        "num_nodes_list": np.array([N] if nodes is None else nodes, dtype=np.int64),
        "num_edges_list": np.array([ei.shape[-1]] if edges is None else edges, dtype=np.int64),
        "node_feat": np.array(FEAT, dtype=np.float32) if feat is None else feat,
        "node_year": np.arange(2000, 2000 + N, dtype=np.int64).reshape(N, 1),
    }
    d.update(extra)
    return {k: v for k, v in d.items() if k not in drop}


def label(values=None, dtype=np.float32):
    v = np.array(LABEL if values is None else values, dtype=dtype)
    return {"node_label": v.reshape(N, 1)}


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    shutil.rmtree(CASES, ignore_errors=True)
    os.makedirs(os.path.join(OUT, "raw"))
    os.makedirs(os.path.join(OUT, "split", "time"))
    os.makedirs(CASES)
    np.savez_compressed(os.path.join(OUT, "raw", "data.npz"), **data())
    np.savez(os.path.join(OUT, "raw", "node-label.npz"), **label())
    for s in ("train", "valid", "test"):
        shutil.copy(os.path.join(HERE, "ogb", "split", "time", s + ".csv"),
                    os.path.join(OUT, "split", "time", s + ".csv"))

    c = lambda name: os.path.join(CASES, name)
    # good variants: same graph, other encodings
    ei = np.asfortranarray(np.array(EDGES, dtype=np.int64).T)  # column-major (2, E)
    np.savez(c("data_fortran_f64.npz"), **data(edge_index=ei.astype(np.int32),
                                               feat=np.asfortranarray(np.array(FEAT, np.float64))))
    half = [[0.5, 1, -1], [2, 3, 4], [0.25, 0, 0], [-7.25, 8, 9], [10, 11, 12], [0, 0, 65504]]
    np.savez(c("data_f16.npz"), **data(feat=np.array(half, dtype=np.float16)))
    np.savez(c("label_int.npz"), node_label=np.array([3, 0, -1, 1, -1, 2], dtype=np.int64))
    np.savez(c("label_f64_flat.npz"), node_label=np.array(LABEL, dtype=np.float64))
    # bad ones
    np.savez(c("data_edge_float.npz"), **data(edge_index=np.array(EDGES, np.float32).T.copy()))
    np.savez(c("data_feat_rows.npz"), **data(feat=np.array(FEAT[:5], dtype=np.float32)))
    np.savez(c("data_feat_int.npz"), **data(feat=np.array(FEAT, dtype=np.int64)))
    np.savez(c("data_no_edge_index.npz"), **data(drop=("edge_index",)))
    np.savez(c("data_edge_rows.npz"), **data(edge_index=np.zeros((3, 8), dtype=np.int64)))
    np.savez(c("data_edges_count.npz"), **data(edges=[9]))
    bad = np.array(EDGES, dtype=np.int64).T.copy()
    bad[1, 4] = N
    np.savez(c("data_edge_range.npz"), **data(edge_index=bad))
    loops = np.array([[0, 1, 2], [0, 1, 2]], dtype=np.int64)
    np.savez(c("data_self_loops.npz"), **data(edge_index=loops))
    np.savez(c("data_two_graphs.npz"), **data(nodes=[3, 3], edges=[4, 4]))
    np.savez(c("data_big_endian.npz"), **data(feat=np.array(FEAT, dtype=">f4")))
    feat_nan = np.array(FEAT, dtype=np.float32)
    feat_nan[3, 1] = np.nan
    np.savez(c("data_feat_nan.npz"), **data(feat=feat_nan))
    np.savez(c("label_fraction.npz"), **label([3, 0, np.nan, 1.5, np.nan, 2]))
    np.savez(c("label_rows.npz"), node_label=np.zeros((5, 1), dtype=np.float32))
    np.savez(c("label_two_columns.npz"), node_label=np.zeros((6, 2), dtype=np.float32))


if __name__ == "__main__":
    main()
