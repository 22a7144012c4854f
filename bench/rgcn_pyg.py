#!/usr/bin/env python3
"""The PyG reference of bench_rgcn: the same RGCN training step (torch_geometric's RGCNConv with
aggr='mean', root weight and bias; ReLU + dropout between layers; cross-entropy; Adam) on the
typed block that bench_rgcn wrote, with halo's initial weights and the same thread count.

Usage: rgcn_pyg.py BLOCKFILE
Prints `pyg_step_s SECONDS` (median step time) and `pyg_eval_loss LOSS` (loss of the initial
weights without dropout, which bench_rgcn prints beside its own).

File (little-endian): b"HALORG1\\0"; int32 layers, in_dim, hidden, classes, relations, bases,
threads, steps, warmup, 0; float32 dropout, lr; per layer (input layer first): int32 num_dst,
num_src; int64 num_edges; int64 indptr[num_dst+1]; int32 indices[num_edges]; uint8
etype[num_edges]; int32 labels[seeds]; float32 feat[num_input*in_dim]; int64 offset per layer;
int64 count; float32 params[count]. Per layer at its offset: W_self (in x out), then R relation
weights or B bases (in x out each), then with bases the R x B coefficients, then the bias.
"""
import struct
import sys
import time
import warnings

warnings.filterwarnings("ignore")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch_geometric.nn import RGCNConv  # noqa: E402


def main():
    data = open(sys.argv[1], "rb").read()
    pos = 0

    def take(fmt):
        nonlocal pos
        vals = struct.unpack_from("<" + fmt, data, pos)
        pos += struct.calcsize("<" + fmt)
        return vals

    def tensor(dtype, count):
        nonlocal pos
        size = torch.tensor([], dtype=dtype).element_size()
        t = torch.frombuffer(bytearray(data[pos:pos + size * count]), dtype=dtype)
        pos += size * count
        return t

    assert data[:8] == b"HALORG1\0", "not a bench_rgcn block file"
    pos = 8
    layers, in_dim, hidden, classes, rel, bases, threads, steps, warmup, _ = take("10i")
    dropout, lr = take("2f")
    torch.set_num_threads(threads)
    blocks = []
    for _ in range(layers):
        nd, ns = take("2i")
        (ne,) = take("q")
        indptr = tensor(torch.int64, nd + 1)
        indices = tensor(torch.int32, ne).long()
        etype = tensor(torch.uint8, ne).long()
        dst = torch.repeat_interleave(torch.arange(nd), indptr[1:] - indptr[:-1])
        blocks.append((nd, ns, torch.stack([indices, dst]), etype))
    seeds = blocks[-1][0]
    labels = tensor(torch.int32, seeds).long()
    feat = tensor(torch.float32, blocks[0][1] * in_dim).view(-1, in_dim)
    offs = [take("q")[0] for _ in range(layers)]
    (count,) = take("q")
    params = tensor(torch.float32, count)

    dims = [in_dim] + [hidden] * (layers - 1) + [classes]
    convs = torch.nn.ModuleList()
    for l in range(layers):
        i, o = dims[l], dims[l + 1]
        conv = RGCNConv(i, o, rel, num_bases=bases if bases > 0 else None, aggr="mean",
                        root_weight=True, bias=True)
        at = offs[l]
        with torch.no_grad():
            conv.root.copy_(params[at:at + i * o].view(i, o))
            at += i * o
            mats = bases if bases > 0 else rel
            conv.weight.copy_(params[at:at + mats * i * o].view(mats, i, o))
            at += mats * i * o
            if bases > 0:
                conv.comp.copy_(params[at:at + rel * bases].view(rel, bases))
                at += rel * bases
            conv.bias.copy_(params[at:at + o])
        convs.append(conv)

    def forward(train):
        h = feat
        for l, (nd, ns, ei, et) in enumerate(blocks):
            h = convs[l]((h, h[:nd]), ei, et)
            if l < layers - 1:
                h = F.dropout(F.relu(h), dropout, train)
        return h

    with torch.no_grad():
        print("pyg_eval_loss %.6f" % F.cross_entropy(forward(False), labels).item())
    opt = torch.optim.Adam(convs.parameters(), lr=lr)
    times = []
    for s in range(warmup + steps):
        t0 = time.perf_counter()
        opt.zero_grad()
        F.cross_entropy(forward(True), labels).backward()
        opt.step()
        if s >= warmup:
            times.append(time.perf_counter() - t0)
    times.sort()
    print("pyg_step_s %.6f" % times[len(times) // 2])


if __name__ == "__main__":
    main()
