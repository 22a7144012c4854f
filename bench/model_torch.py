#!/usr/bin/env python3
"""The PyTorch reference of bench_model: the same GraphSAGE training step (DGL SAGEConv with the
mean aggregator, ReLU + dropout between layers, cross-entropy, Adam) on the block that
bench_model wrote, with the same thread count.

Usage: model_torch.py BLOCKFILE [cpu|cuda]   (written by build/bench/bench_model; format below)
Prints `torch_step_s SECONDS` (median step time), `torch_step_min_s` (fastest) and `torch_eval_loss LOSS` (loss of the initial
weights without dropout, which bench_model compares with its own).

File (little-endian): b"HALOMB1\\0"; int32 layers, in_dim, hidden, classes, threads, steps,
warmup, 0; float32 dropout, lr; per layer: int32 num_dst, num_src; int64 num_edges;
int64 indptr[num_dst+1]; int32 indices[num_edges]; int32 labels[seeds]; float32
feat[num_input*in_dim]; int64 offset per layer; int64 count; float32 params[count] (per layer at
its offset: W_self and W_neigh as row-major in x out, then the bias).
"""
import struct
import sys
import time
import warnings

warnings.filterwarnings("ignore")  # numpy missing, sparse CSR "beta": not about the figures

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402


class Reader:
    """Sequential reader of the block file."""

    def __init__(self, data):
        self.data = data
        self.pos = 0

    def take(self, fmt):
        vals = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return vals

    def tensor(self, dtype, count):
        size = torch.tensor([], dtype=dtype).element_size()
        t = torch.frombuffer(bytearray(self.data[self.pos:self.pos + size * count]), dtype=dtype)
        self.pos += size * count
        return t


class SAGEConv(torch.nn.Module):
    """DGL's SAGEConv, aggregator 'mean': fc_self(h_dst) + fc_neigh(mean(h_src)) + bias, with
    the linear map applied before the aggregation when in_feats > out_feats, as DGL does."""

    def __init__(self, in_feats, out_feats):
        super().__init__()
        self.in_feats, self.out_feats = in_feats, out_feats
        self.fc_self = torch.nn.Linear(in_feats, out_feats, bias=False)
        self.fc_neigh = torch.nn.Linear(in_feats, out_feats, bias=False)
        self.bias = torch.nn.Parameter(torch.zeros(out_feats))

    def forward(self, adj, h, num_dst):
        if self.in_feats > self.out_feats:
            h_neigh = torch.sparse.mm(adj, self.fc_neigh(h))
        else:
            h_neigh = self.fc_neigh(torch.sparse.mm(adj, h))
        return self.fc_self(h[:num_dst]) + h_neigh + self.bias


class SAGE(torch.nn.Module):
    """The GraphSAGE of DGL's distributed example: ReLU and dropout between layers."""

    def __init__(self, dims, dropout):
        super().__init__()
        self.layers = torch.nn.ModuleList(
            SAGEConv(dims[i], dims[i + 1]) for i in range(len(dims) - 1))
        self.dropout = torch.nn.Dropout(dropout)

    def forward(self, blocks, x):
        h = x
        for i, (layer, (adj, num_dst)) in enumerate(zip(self.layers, blocks)):
            h = layer(adj, h, num_dst)
            if i != len(self.layers) - 1:
                h = self.dropout(F.relu(h))
        return h


def mean_adjacency(indptr, indices, num_dst, num_src, dev):
    """The block's mean-aggregation matrix [num_dst x num_src]: 1 / in-degree at each sampled
    edge, as a sparse CSR tensor. The sampler lists a row's sources in sampling order, and a
    source drawn twice (a multigraph's parallel edges) appears twice; torch 1.13's CSR
    constructor (Debian's python3-torch) requires ascending, distinct column indices within a
    row, so each row is sorted and repeated sources merged (their values add up: the same sum).
    Where this torch has no CSR matmul with autograd on the device, a COO tensor does the same."""
    counts = indptr[1:] - indptr[:-1]
    rows = torch.repeat_interleave(torch.arange(num_dst, dtype=torch.int64), counts)
    deg = counts.to(torch.float32)
    inv = torch.where(deg > 0, 1.0 / deg.clamp(min=1), torch.zeros_like(deg))
    width = max(num_src, 1)
    keys, mult = torch.unique_consecutive(torch.sort(rows * width + indices).values,
                                          return_counts=True)
    rows, cols = keys // width, keys % width
    values = inv[rows] * mult.to(torch.float32)
    crow = torch.zeros(num_dst + 1, dtype=torch.int64)
    crow[1:] = torch.cumsum(torch.bincount(rows, minlength=num_dst), 0)
    adj = torch.sparse_csr_tensor(crow, cols, values, size=(num_dst, num_src)).to(dev)
    try:
        probe = torch.ones(num_src, 1, device=dev, requires_grad=True)
        torch.sparse.mm(adj, probe).sum().backward()
        return adj
    except (RuntimeError, NotImplementedError):
        coo = torch.sparse_coo_tensor(torch.stack([rows, cols]), values, size=(num_dst, num_src))
        return coo.coalesce().to(dev)


def main():
    data = open(sys.argv[1], "rb").read()
    r = Reader(data)
    if data[:7] != b"HALOMB1":
        sys.exit("model_torch.py: not a bench_model block file")
    r.pos = 8
    layers, in_dim, hidden, classes, threads, steps, warmup, _ = r.take("8i")
    dropout, lr = r.take("2f")
    torch.set_num_threads(threads)
    dev = torch.device(sys.argv[2] if len(sys.argv) > 2 else "cpu")
    blocks = []
    for _ in range(layers):
        num_dst, num_src = r.take("2i")
        (num_edges,) = r.take("q")
        indptr = r.tensor(torch.int64, num_dst + 1)
        indices = r.tensor(torch.int32, num_edges).to(torch.int64)
        blocks.append((mean_adjacency(indptr, indices, num_dst, num_src, dev), num_dst))
    num_seeds = blocks[-1][1]
    labels = r.tensor(torch.int32, num_seeds).to(torch.int64).to(dev)
    num_input = blocks[0][0].shape[1]
    feat = r.tensor(torch.float32, num_input * in_dim).view(num_input, in_dim).to(dev)
    offsets = [r.take("q")[0] for _ in range(layers)]
    (count,) = r.take("q")
    params = r.tensor(torch.float32, count)

    dims = [in_dim] + [hidden] * (layers - 1) + [classes]
    model = SAGE(dims, dropout)
    with torch.no_grad():
        for i, conv in enumerate(model.layers):
            fin, fout, off = dims[i], dims[i + 1], offsets[i]
            w = params[off:off + 2 * fin * fout].view(2 * fin, fout)
            conv.fc_self.weight.copy_(w[:fin].t())
            conv.fc_neigh.weight.copy_(w[fin:].t())
            conv.bias.copy_(params[off + 2 * fin * fout:off + 2 * fin * fout + fout])
        model.to(dev)
        model.eval()
        eval_loss = F.cross_entropy(model(blocks, feat), labels).item()
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    times = []
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    for s in range(warmup + steps):
        sync()
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = F.cross_entropy(model(blocks, feat), labels)
        loss.backward()
        opt.step()
        sync()
        if s >= warmup:
            times.append(time.perf_counter() - t0)
    times.sort()
    print("model_torch: torch %s on %s, %d threads, %s blocks, last loss %.4f" %
          (torch.__version__, dev, torch.get_num_threads(), blocks[0][0].layout, loss.item()))
    print("torch_step_s %.6f" % times[len(times) // 2])
    print("torch_step_min_s %.6f" % times[0])
    print("torch_eval_loss %.6f" % eval_loss)


if __name__ == "__main__":
    main()
