#!/usr/bin/env python3
"""PyG's SAGEConv on the block that bench_model wrote: the same GraphSAGE training step (mean
aggregator with a root weight, ReLU + dropout between layers, cross-entropy, Adam) with the
same initial weights, so the step time compares halo with PyTorch Geometric on one block.

Usage: model_pyg.py BLOCKFILE [cpu|cuda]   (bench_model --keep FILE writes it; the format is
in model_torch.py's header). Prints `pyg_step_s`, `pyg_step_min_s` and `pyg_eval_loss` (the
loss of the initial weights without dropout; bench_model prints its own to compare), or one
line `model_pyg: skipped: ...` and exit 0 when torch_geometric cannot be imported.
"""
import os
import sys
import time
import warnings

warnings.filterwarnings("ignore")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

try:
    from torch_geometric.nn import SAGEConv  # noqa: E402
except Exception as e:  # noqa: BLE001 - any import failure means "no PyG here"
    print(f"model_pyg: skipped: torch_geometric cannot be imported ({type(e).__name__}: {e})")
    sys.exit(0)

from model_torch import Reader  # noqa: E402


def main():
    data = open(sys.argv[1], "rb").read()
    if data[:7] != b"HALOMB1":
        sys.exit("model_pyg.py: not a bench_model block file")
    r = Reader(data)
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
        src = r.tensor(torch.int32, num_edges).to(torch.int64)
        dst = torch.repeat_interleave(torch.arange(num_dst), indptr[1:] - indptr[:-1])
        blocks.append((torch.stack([src, dst]).to(dev), num_src, num_dst))
    labels = r.tensor(torch.int32, blocks[-1][2]).to(torch.int64).to(dev)
    num_input = blocks[0][1]
    feat = r.tensor(torch.float32, num_input * in_dim).view(num_input, in_dim).to(dev)
    offsets = [r.take("q")[0] for _ in range(layers)]
    (count,) = r.take("q")
    params = r.tensor(torch.float32, count)

    dims = [in_dim] + [hidden] * (layers - 1) + [classes]
    convs = torch.nn.ModuleList(SAGEConv(dims[i], dims[i + 1], aggr="mean", root_weight=True)
                                for i in range(layers))
    with torch.no_grad():
        for i, conv in enumerate(convs):
            fin, fout, off = dims[i], dims[i + 1], offsets[i]
            w = params[off:off + 2 * fin * fout].view(2 * fin, fout)
            conv.lin_r.weight.copy_(w[:fin].t())  # root (self) weight
            conv.lin_l.weight.copy_(w[fin:].t())  # neighbour weight, carries the bias
            conv.lin_l.bias.copy_(params[off + 2 * fin * fout:off + 2 * fin * fout + fout])
    convs.to(dev)
    drop = torch.nn.Dropout(dropout)

    def forward(x):
        h = x
        for i, (conv, (ei, ns, nd)) in enumerate(zip(convs, blocks)):
            h = conv((h, h[:nd]), ei, size=(ns, nd))
            if i != layers - 1:
                h = drop(F.relu(h))
        return h

    convs.eval()
    drop.eval()
    with torch.no_grad():
        eval_loss = F.cross_entropy(forward(feat), labels).item()
    convs.train()
    drop.train()
    opt = torch.optim.Adam(convs.parameters(), lr=lr)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    times = []
    for s in range(warmup + steps):
        sync()
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = F.cross_entropy(forward(feat), labels)
        loss.backward()
        opt.step()
        sync()
        if s >= warmup:
            times.append(time.perf_counter() - t0)
    times.sort()
    import torch_geometric
    print("model_pyg: torch_geometric %s, torch %s on %s, %d threads, last loss %.4f" %
          (torch_geometric.__version__, torch.__version__, dev, torch.get_num_threads(), loss.item()))
    print("pyg_step_s %.6f" % times[len(times) // 2])
    print("pyg_step_min_s %.6f" % times[0])
    print("pyg_eval_loss %.6f" % eval_loss)


if __name__ == "__main__":
    main()
