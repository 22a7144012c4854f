"""Prints the halo vs DistDGL table of `make bench-peers` from its work directory.

    python table.py WORKDIR POLICY...

Epoch time is the median over epochs >= 1 of the slowest rank's (trainer's) wall time, so the
first epoch's warm-up is left out on both sides; remote rows are per epoch, summed over ranks.
"""
import json
import os
import sys


def jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.startswith("{")]


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else float("nan")


def main():
    w, policies = sys.argv[1], sys.argv[2:]
    part = json.load(open(os.path.join(w, "p", "partition.json")))
    rows = []
    for pol in policies:
        recs = jsonl(os.path.join(w, f"halo-{pol}.jsonl"))
        ep = {}
        for r in recs:
            if r.get("type") == "epoch":
                e = ep.setdefault(r["epoch"], {"t": 0.0, "remote": 0, "misses": 0})
                e["t"] = max(e["t"], r["time_s"])
                e["remote"] += r["remote_nodes"]
                e["misses"] += r["cache_misses"]
        summ = next(r for r in recs if r.get("type") == "summary")
        steady = [ep[e] for e in sorted(ep) if e >= 1] or list(ep.values())
        rows.append((f"halo {pol}", median([e["t"] for e in steady]), summ["test_acc"],
                     median([e["misses"] for e in steady]), part["edge_cut_fraction"],
                     part["balance"]["nodes"] if isinstance(part.get("balance"), dict) else float("nan")))
    d = jsonl(os.path.join(w, "trainer0.log"))
    dp = jsonl(os.path.join(w, "dgl-partition.jsonl"))[0]
    dep = [r for r in d if r.get("type") == "epoch"]
    dsum = next(r for r in d if r.get("type") == "summary")
    steady = [r for r in dep if r["epoch"] >= 1] or dep
    dgl_t = median([r["epoch_s"] for r in steady])
    rows.append(("DistDGL 2.1.0", dgl_t, dsum["test_acc"], median([r["remote_rows"] for r in steady]),
                 dp["cut_share"], dp["node_balance"]))
    print(f"{'system':<22} {'epoch_s':>8} {'vs DistDGL':>10} {'test_acc':>8} "
          f"{'remote rows/epoch':>17} {'edge cut':>8} {'node bal':>8}")
    for name, t, acc, remote, cut, bal in rows:
        print(f"{name:<22} {t:8.3f} {dgl_t / t:9.2f}x {acc:8.4f} {remote:17d} {cut:8.2%} {bal:8.3f}")
    for name, t, *_ in rows[:-1]:
        print(f"RATIO distdgl_epoch_over_{name.split()[1]} {dgl_t / t:.3f}")


if __name__ == "__main__":
    main()
