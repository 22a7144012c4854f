"""DistDGL GraphSAGE node classification, the peer halo is measured against.

One script for both roles: with DGL_ROLE=server, dgl.distributed.initialize() serves a
partition and never returns; otherwise it is a trainer (torch.distributed, gloo). The training
follows DGL's distributed GraphSAGE example in substance: DistNodeDataLoader over the
trainer's share of the training nodes (node_split, force_even), NeighborSampler with the given
fanouts (input layer first, as halo lists them), a two-layer SAGEConv (mean) model in
DistributedDataParallel, Adam. Evaluation is sampled inference over the test nodes with the
same fanouts (as `halo train --eval sampled`).

Rank 0 prints one JSON line per epoch and a summary line; epoch time is the slowest trainer's.
"remote_rows" counts input nodes whose features live in another partition (what the trainer
pulls through the KVStore's RPCs), summed over trainers.
"""
import argparse
import json
import os
import time

os.environ.setdefault("DGLBACKEND", "pytorch")
import dgl  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from dgl.nn import SAGEConv  # noqa: E402


class SAGE(nn.Module):
    def __init__(self, in_dim, hidden, classes, layers, dropout):
        super().__init__()
        dims = [in_dim] + [hidden] * (layers - 1) + [classes]
        self.layers = nn.ModuleList(SAGEConv(dims[i], dims[i + 1], "mean") for i in range(layers))
        self.dropout = nn.Dropout(dropout)

    def forward(self, blocks, x):
        h = x
        for i, (layer, block) in enumerate(zip(self.layers, blocks)):
            h = layer(block, h)
            if i != len(self.layers) - 1:
                h = self.dropout(F.relu(h))
        return h


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--graph-name", default="halo")
    ap.add_argument("--ip-config", required=True)
    ap.add_argument("--part-config", required=True)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--fanouts", default="10,25")
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--lr", type=float, default=0.003)
    ap.add_argument("--dropout", type=float, default=0.5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--classes", type=int, required=True)
    a = ap.parse_args()

    torch.set_num_threads(a.threads)
    dgl.distributed.initialize(a.ip_config)  # a server never returns from here
    torch.distributed.init_process_group("gloo")
    rank, world = torch.distributed.get_rank(), torch.distributed.get_world_size()
    torch.manual_seed(1 + rank)

    g = dgl.distributed.DistGraph(a.graph_name, part_config=a.part_config)
    pb = g.get_partition_book()
    train_nid = dgl.distributed.node_split(g.ndata["train_mask"], pb, force_even=True)
    test_nid = dgl.distributed.node_split(g.ndata["test_mask"], pb, force_even=True)
    fanouts = [int(x) for x in a.fanouts.split(",")]
    sampler = dgl.dataloading.NeighborSampler(fanouts)
    loader = dgl.dataloading.DistNodeDataLoader(
        g, train_nid, sampler, batch_size=a.batch, shuffle=True, drop_last=False)
    in_dim = g.ndata["feat"].shape[1]
    classes = a.classes
    model = SAGE(in_dim, a.hidden, classes, len(fanouts), a.dropout)
    model = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)

    def reduce(vals, op=torch.distributed.ReduceOp.SUM):
        t = torch.tensor(vals, dtype=torch.float64)
        torch.distributed.all_reduce(t, op)
        return t.tolist()

    times = []
    for epoch in range(a.epochs):
        model.train()
        t0 = time.time()
        steps = remote = inputs = 0
        loss_sum = 0.0
        for input_nodes, seeds, blocks in loader:
            x = g.ndata["feat"][input_nodes]
            y = g.ndata["label"][seeds].long()
            out = model(blocks, x)
            loss = F.cross_entropy(out, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            steps += 1
            inputs += len(input_nodes)
            remote += int((pb.nid2partid(input_nodes) != pb.partid).sum())
            loss_sum += float(loss)
        dt = time.time() - t0
        slowest = reduce([dt], torch.distributed.ReduceOp.MAX)[0]
        tot = reduce([steps, inputs, remote, loss_sum])
        times.append(slowest)
        if rank == 0:
            print(json.dumps({"type": "epoch", "epoch": epoch, "epoch_s": slowest,
                              "steps": int(tot[0]), "input_nodes": int(tot[1]),
                              "remote_rows": int(tot[2]), "loss": tot[3] / max(1, tot[0])}),
                  flush=True)

    model.eval()
    test_loader = dgl.dataloading.DistNodeDataLoader(
        g, test_nid, sampler, batch_size=a.batch, shuffle=False, drop_last=False)
    correct = count = 0
    with torch.no_grad():
        for input_nodes, seeds, blocks in test_loader:
            out = model(blocks, g.ndata["feat"][input_nodes])
            correct += int((out.argmax(1) == g.ndata["label"][seeds].long()).sum())
            count += len(seeds)
    c = reduce([correct, count])
    if rank == 0:
        steady = times[1:] if len(times) > 1 else times
        steady = sorted(steady)
        print(json.dumps({"type": "summary", "system": "distdgl", "trainers": world,
                          "epochs": a.epochs, "median_epoch_s": steady[len(steady) // 2],
                          "test_acc": c[0] / max(1, c[1])}), flush=True)
    dgl.distributed.exit_client()


if __name__ == "__main__":
    main()
