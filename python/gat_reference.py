#!/usr/bin/env python3
"""A PyTorch reference of halo's GAT (``halo train --model gat``), in plain torch (no DGL).

The layer is DGL's GATConv as halo computes it (docs/model.md): z = h W split into H heads of F
floats; per edge j -> i of a block e_ij = LeakyReLU(a_l . z_j + a_r . z_i, 0.2) per head;
alpha = softmax of e over i's in-edges (per destination and head); out_i = concat_h
sum_j alpha_ij z_j + b, zeros + b for a destination without in-edges (no self loop is added).
Hidden layers concatenate their heads and apply ReLU and dropout; the output layer averages its
heads (one by default).

Two commands:

  gat_reference.py op DIR [--tol 1e-4]
      DIR holds a mini-batch, parameters and halo's results on it (``test_gat --dump DIR``).
      Computes the logits, the loss and the gradients of every parameter and of the input rows
      with autograd, and prints the largest difference to halo's (relative to the largest
      magnitude of each array); exit 1 when it is above --tol.

  gat_reference.py train GRAPH [--fanouts 5,5] [--epochs E] [--batch B] [--hidden 8]
                     [--heads 4] [--out-heads 1] [--lr 0.005] [--dropout 0.5] [--seed S[,S...]]
      Trains the same GAT (the same hyper-parameters and split, neighbours sampled uniformly
      without replacement with the same fanouts, Adam) on the halo graph directory GRAPH and
      prints ``test acc X`` of full-neighbour inference (halo's ``--eval full``); with several
      seeds, each one's and their mean.
"""

import argparse
import warnings
import json
import math
import os
import sys

try:
    import numpy as np
    import torch
    import torch.nn.functional as fn
except ImportError as _e:  # one line, not a traceback (Debian: apt-get install python3-torch)
    print(f"halo: error: gat_reference.py: needs numpy and torch ({_e}); on Debian: "
          "apt-get install python3-torch", file=sys.stderr)
    sys.exit(2)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import halo_io  # noqa: E402

SLOPE = 0.2  # LeakyReLU slope of the attention scores (DGL's GATConv default)
warnings.filterwarnings("ignore", message="scatter_reduce")


def gat_layer(h, indptr, indices, nd, w, al, ar, b, heads, mean=False):
    """One GAT layer on a block of nd destinations (the first nd rows of h are the
    destinations); indptr/indices: the block's in-edge CSR (LongTensors). mean: the heads
    averaged instead of concatenated."""
    hf = w.shape[1]
    f = hf // heads
    z = (h @ w).view(-1, heads, f)
    el = (z * al.view(1, heads, f)).sum(-1)
    er = (z[:nd] * ar.view(1, heads, f)).sum(-1)
    deg = indptr[1:] - indptr[:-1]
    dst = torch.repeat_interleave(torch.arange(nd), deg)
    e = fn.leaky_relu(el[indices] + er[dst], SLOPE)
    emax = torch.full((nd, heads), -math.inf, dtype=e.dtype)
    emax = emax.scatter_reduce(0, dst.view(-1, 1).expand(-1, heads), e, reduce="amax")
    ex = torch.exp(e - emax[dst])
    den = torch.zeros(nd, heads, dtype=e.dtype).index_add(0, dst, ex)
    alpha = ex / den[dst]
    out = torch.zeros(nd, heads, f, dtype=e.dtype).index_add(0, dst, alpha.unsqueeze(-1) * z[indices])
    out = out + b.view(1, heads, f)
    return out.mean(1) if mean else out.reshape(nd, hf)


def split_params(flat, offsets, dims, heads_of):
    """The per-layer (W, a_l, a_r, b, heads) views of halo's flat parameter vector; dims[l + 1]
    is layer l's width before any mean over heads."""
    out = []
    for l, off in enumerate(offsets):
        i, o = dims[l], dims[l + 1]
        w = flat[off:off + i * o].view(i, o)
        al = flat[off + i * o:off + i * o + o]
        ar = flat[off + i * o + o:off + i * o + 2 * o]
        b = flat[off + i * o + 2 * o:off + i * o + 3 * o]
        out.append((w, al, ar, b, heads_of(l)))
    return out


def forward(h, blocks, layers, dropout=0.0, training=False):
    """The model on a mini-batch: blocks[l] = (indptr, indices, nd); ReLU (and dropout while
    training) between layers."""
    for l, ((indptr, indices, nd), (w, al, ar, b, heads)) in enumerate(zip(blocks, layers)):
        last = l == len(layers) - 1
        h = gat_layer(h, indptr, indices, nd, w, al, ar, b, heads, mean=last)
        if not last:
            h = fn.dropout(fn.relu(h), dropout, training)
    return h


def max_err(a, b):
    """Largest |a - b| relative to the largest |b| (at least 1e-3)."""
    scale = max(float(np.max(np.abs(b))) if b.size else 0.0, 1e-3)
    return float(np.max(np.abs(a - b))) / scale if a.size else 0.0


def cmd_op(args):
    d = args.dir
    with open(os.path.join(d, "dump.json")) as f:
        meta = json.load(f)

    def raw(name, dtype, shape=None):
        a = np.fromfile(os.path.join(d, name), dtype=dtype)
        return a.reshape(shape) if shape is not None else a

    L, heads, out_heads = meta["layers"], meta["heads"], meta.get("out_heads", 1)
    nodes = meta["nodes"]
    dims = [meta["in"]] + [meta["hidden"] * heads] * (L - 1) + [meta["classes"] * out_heads]
    blocks = []
    for l in range(L):
        ip = torch.from_numpy(raw(f"indptr{l}.i64", "<i8").astype(np.int64))
        ix = torch.from_numpy(raw(f"indices{l}.i32", "<i4").astype(np.int64))
        blocks.append((ip, ix, nodes[l + 1]))
    flat = torch.tensor(raw("params.f32", "<f4"), dtype=torch.float64, requires_grad=True)
    feat = torch.tensor(raw("feat.f32", "<f4", (nodes[0], meta["in"])), dtype=torch.float64,
                        requires_grad=True)
    label = torch.from_numpy(raw("label.i32", "<i4").astype(np.int64))
    layers = split_params(flat, meta["offsets"], dims, lambda l: heads if l < L - 1 else out_heads)
    logits = forward(feat, blocks, layers)
    loss = fn.cross_entropy(logits, label)
    loss.backward()
    errs = {
        "logits": max_err(raw("logits.f32", "<f4").reshape(logits.shape),
                          logits.detach().numpy()),
        "loss": abs(meta["loss"] - float(loss)) / max(abs(float(loss)), 1e-3),
        "param grads": max_err(raw("grads.f32", "<f4"), flat.grad.numpy()),
        "input grads": max_err(raw("dfeat.f32", "<f4").reshape(feat.shape), feat.grad.numpy()),
    }
    worst = max(errs.values())
    print(f"gat op check ({heads} heads, {out_heads} on the output layer): " + ", ".join(f"{k} {v:.2e}" for k, v in errs.items()) +
          f"; max error {worst:.2e} (tolerance {args.tol:g})")
    return 0 if worst <= args.tol else 1


def sample_blocks(g, seeds, fanouts, rng):
    """DGL-style blocks for seeds, input layer first: each destination draws up to fanout of its
    in-neighbours uniformly without replacement (all of them when it has fewer); sources are
    the destinations first, then the new nodes in order of first appearance."""
    indptr_g = np.asarray(g.indptr)
    indices_g = np.asarray(g.indices)
    blocks = []
    dst = np.asarray(seeds, dtype=np.int64)
    for fo in reversed(fanouts):
        start, deg = indptr_g[dst], indptr_g[dst + 1] - indptr_g[dst]
        seg = np.repeat(np.arange(len(dst)), deg)
        first = np.repeat(np.cumsum(deg) - deg, deg)
        eidx = np.repeat(start, deg) + (np.arange(len(seg)) - first)
        # a random order within each destination's edges; keep its first fanout
        order = np.lexsort((rng.random(len(seg)), seg))
        rank = np.arange(len(seg)) - first
        keep = order[rank < fo] if fo >= 0 else order
        keep.sort()  # back to CSR order, destinations ascending
        nb = indices_g[eidx[keep]].astype(np.int64)
        cnt = np.bincount(seg[keep], minlength=len(dst))
        allv = np.concatenate([dst, nb])
        uniq, first_at, inv = np.unique(allv, return_index=True, return_inverse=True)
        # local ids in order of first appearance (the destinations keep 0..nd-1)
        rank_of = np.empty(len(uniq), dtype=np.int64)
        rank_of[np.argsort(first_at, kind="stable")] = np.arange(len(uniq))
        local = rank_of[inv]
        src = np.empty(len(uniq), dtype=np.int64)
        src[local] = allv
        ip = np.concatenate([[0], np.cumsum(cnt)])
        blocks.append((torch.from_numpy(ip.astype(np.int64)),
                       torch.from_numpy(local[len(dst):].copy()), len(dst)))
        dst = src
    blocks.reverse()
    return blocks, dst


def xavier(shape, fan_in, fan_out):
    """U(-a, a) with a = sqrt(2) sqrt(6 / (fan_in + fan_out)) (Glorot with the ReLU gain)."""
    a = math.sqrt(2.0) * math.sqrt(6.0 / (fan_in + fan_out))
    return torch.nn.Parameter(torch.empty(shape).uniform_(-a, a))


def make_params(in_dim, hidden, heads, out_heads, classes, layers):
    """Per layer W, a_l, a_r (Glorot, as halo's init) and a zero bias."""
    params = []
    for l in range(layers):
        i = in_dim if l == 0 else hidden * heads
        h = heads if l < layers - 1 else out_heads
        f = hidden if l < layers - 1 else classes
        params.append((xavier((i, h * f), i, h * f), xavier((h * f,), h * f, f),
                       xavier((h * f,), h * f, f), torch.nn.Parameter(torch.zeros(h * f)), h))
    return params


def cmd_train(args):
    torch.set_num_threads(max(1, args.threads))
    g = halo_io.load_graph(args.graph)
    seeds = [int(x) for x in str(args.seed).split(",")]
    accs = [train_one(args, g, s) for s in seeds]
    for s, a in zip(seeds, accs):
        print(f"gat reference: seed {s}, {args.epochs} epochs, test acc {a:.4f}")
    if len(accs) > 1:
        print(f"gat reference: mean test acc {sum(accs) / len(accs):.4f} over {len(accs)} seeds")
    return 0


def train_one(args, g, seed):
    """Trains from seed and returns the test accuracy of full-neighbour inference."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    feat = torch.from_numpy(np.array(g.padded_features(), dtype=np.float32))
    label = torch.from_numpy(np.asarray(g.label).astype(np.int64))
    split = np.asarray(g.split)
    train = np.nonzero(split == 1)[0]
    test = np.nonzero(split == 3)[0]
    fanouts = [int(x) for x in args.fanouts.split(",")]
    params = make_params(g.feat_dim, args.hidden, args.heads, args.out_heads, g.classes,
                         len(fanouts))
    opt = torch.optim.Adam([p for layer in params for p in layer[:4]], lr=args.lr)
    for _ in range(args.epochs):
        order = rng.permutation(train)
        for s in range(0, len(order), args.batch):
            seeds = order[s:s + args.batch]
            blocks, inputs = sample_blocks(g, seeds, fanouts, rng)
            logits = forward(feat[torch.from_numpy(inputs)], blocks, params, args.dropout, True)
            loss = fn.cross_entropy(logits, label[torch.from_numpy(seeds)])
            opt.zero_grad()
            loss.backward()
            opt.step()
    # full-neighbour inference on the whole graph, layer by layer
    n = g.nodes
    indptr = torch.from_numpy(np.asarray(g.indptr).astype(np.int64))
    indices = torch.from_numpy(np.asarray(g.indices).astype(np.int64))
    with torch.no_grad():
        logits = forward(feat, [(indptr, indices, n)] * len(params), params)
    pred = logits.argmax(1).numpy()
    return float(np.mean(pred[test] == np.asarray(g.label)[test])) if len(test) else 0.0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    op = sub.add_parser("op", help="halo's dumped forward/backward against autograd")
    op.add_argument("dir")
    op.add_argument("--tol", type=float, default=1e-4)
    tr = sub.add_parser("train", help="train the same GAT and print its test accuracy")
    tr.add_argument("graph")
    tr.add_argument("--fanouts", default="5,5")
    tr.add_argument("--epochs", type=int, default=3)
    tr.add_argument("--batch", type=int, default=2000)
    tr.add_argument("--hidden", type=int, default=8)
    tr.add_argument("--heads", type=int, default=4)
    tr.add_argument("--out-heads", type=int, default=1)
    tr.add_argument("--lr", type=float, default=0.005)
    tr.add_argument("--dropout", type=float, default=0.5)
    tr.add_argument("--seed", default="1", help="a seed, or a list 1,2,3 (then their mean too)")
    tr.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    try:
        return cmd_op(args) if args.cmd == "op" else cmd_train(args)
    except (OSError, ValueError, KeyError) as e:
        print(f"halo: error: gat_reference.py: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
