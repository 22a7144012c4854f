#!/usr/bin/env bash
# make bench-peers: halo beside a real DistDGL (dgl 2.1.0, torch 2.2.1) on this machine, the same
# graph and training settings, and a table of epoch time, accuracy, remote rows and partition
# quality. Optional; never part of `make test`. Needs root (network namespaces) and PyPI.
#
# DistDGL runs as 4 machines x (1 server + 1 trainer). Two things stop it running on one host:
# a trainer finds its machine from its local IP (on one host every trainer is machine 0), and a
# server shares its partition through shared memory named after the graph (four servers on one
# host collide). So each machine is a network namespace with its own address (a bridge joins
# them), and runs its server and trainer in their own IPC and mount namespace with a private
# /dev/shm.
#
# Environment: SCALE (products-like preset, default 0.05), EPOCHS (4), BATCH (1000),
# FANOUTS (10,25), HIDDEN (256), POLICIES (default distdglv2 massivegnn), HALO_PEERS_VENV
# (default .venv-peers), KEEP=1 keeps the work directory.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HALO=${HALO_BIN:-$ROOT/bin/halo}
VENV=${HALO_PEERS_VENV:-$ROOT/.venv-peers}
SCALE=${SCALE:-0.05} EPOCHS=${EPOCHS:-4} BATCH=${BATCH:-1000} FANOUTS=${FANOUTS:-10,25}
HIDDEN=${HIDDEN:-256} POLICIES=${POLICIES:-default distdglv2 massivegnn}
PARTS=4 NET=10.213.7 NS=halopeer$$ BR=hpbr$$
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1

die() { echo "bench-peers: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (network namespaces for DistDGL's machines)"
command -v ip >/dev/null && command -v unshare >/dev/null || die "needs ip (iproute2) and unshare"
[ -x "$HALO" ] || die "$HALO: not built (make build)"

if ! "$VENV/bin/python" -c 'import dgl, torch, torchdata' 2>/dev/null; then
    echo "bench-peers: installing dgl 2.1.0 + torch 2.2.1 into $VENV (once; a few GB)" >&2
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q 'torch==2.2.1' 'dgl==2.1.0' 'torchdata==0.7.1' 'numpy<2' \
        scipy networkx requests tqdm psutil pydantic pyyaml pandas
fi
PY=$VENV/bin/python
"$PY" -c 'import dgl, torch; print("bench-peers: dgl", dgl.__version__, "torch", torch.__version__)' 2>/dev/null

W=$(mktemp -d /tmp/halo-peers.XXXXXX)
cleanup() {
    for i in 0 1 2 3; do
        ip netns pids "$NS$i" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
        ip netns del "$NS$i" 2>/dev/null || true
    done
    ip link del "$BR" 2>/dev/null || true
    [ "${KEEP:-0}" = 1 ] && echo "bench-peers: kept $W" >&2 || rm -rf "$W"
}
trap cleanup EXIT
trap "exit 130" INT TERM

echo "bench-peers: graph products-like scale $SCALE, $PARTS parts, batch $BATCH, fanouts $FANOUTS, hidden $HIDDEN, $EPOCHS epochs, 1 thread per process" >&2
"$HALO" gen --preset products --scale "$SCALE" -o "$W/g" >/dev/null
classes=$(sed -nE 's/.*"classes": *([0-9]+).*/\1/p' "$W/g/meta.json" | head -1)
"$HALO" partition "$W/g" --parts $PARTS -o "$W/p" >"$W/halo-partition.txt" 2>&1

# halo: one rank per part, one thread each (DistDGL's trainers get one thread too).
for pol in $POLICIES; do
    pf=$ROOT/policies/$pol.lua
    [ "$pol" = default ] && pf=$ROOT/policies/default.lua
    mpirun --timeout 1800 -np $PARTS --oversubscribe --bind-to none "$HALO" train "$W/p" \
        --policy "$pf" --batch "$BATCH" --fanouts "$FANOUTS" --hidden "$HIDDEN" --threads 1 \
        --epochs "$EPOCHS" --metrics "$W/halo-$pol.jsonl" --no-table >"$W/halo-$pol.log" 2>&1 ||
        { tail -5 "$W/halo-$pol.log" >&2; die "halo train --policy $pol failed"; }
done

# DistDGL: DGL's own METIS partition of the same graph, then 4 machines in namespaces.
"$PY" "$ROOT/bench/peers/distdgl_prep.py" "$W/g" "$W/dgl" --parts $PARTS >"$W/dgl-partition.jsonl" \
    2>"$W/dgl-prep.log" || { tail -5 "$W/dgl-prep.log" >&2; die "DGL partition_graph failed"; }
ip link add "$BR" type bridge && ip link set "$BR" up
: >"$W/ip_config.txt"
for i in 0 1 2 3; do
    ip netns add "$NS$i"
    ip link add "v$NS$i" type veth peer name eth0 netns "$NS$i"
    ip link set "v$NS$i" master "$BR" up
    ip -n "$NS$i" addr add "$NET.$((i + 1))/24" dev eth0
    ip -n "$NS$i" link set eth0 up
    ip -n "$NS$i" link set lo up
    echo "$NET.$((i + 1)) 30050" >>"$W/ip_config.txt"
done
common="DGL_DIST_MODE=distributed DGL_NUM_SERVER=1 DGL_IP_CONFIG=$W/ip_config.txt DGLBACKEND=pytorch OMP_NUM_THREADS=1"
args="--ip-config $W/ip_config.txt --part-config $W/dgl/halo.json --epochs $EPOCHS --batch $BATCH \
--fanouts $FANOUTS --hidden $HIDDEN --classes $classes --threads 1"
pids=()
for i in 0 1 2 3; do
    ip netns exec "$NS$i" unshare --ipc --mount --propagation private sh -c "
        mount -t tmpfs -o size=8g tmpfs /dev/shm
        env $common DGL_ROLE=server DGL_SERVER_ID=$i DGL_NUM_CLIENT=$PARTS \
            DGL_CONF_PATH=$W/dgl/halo.json DGL_GRAPH_FORMAT=csc \
            $PY $ROOT/bench/peers/distdgl_train.py $args >$W/server$i.log 2>&1 &
        env $common DGL_ROLE=client DGL_NUM_SAMPLER=0 DGL_GROUP_ID=0 \
            GLOO_SOCKET_IFNAME=eth0 MASTER_ADDR=$NET.1 MASTER_PORT=29511 RANK=$i WORLD_SIZE=$PARTS \
            $PY $ROOT/bench/peers/distdgl_train.py $args >$W/trainer$i.log 2>&1
        rc=\$?; wait; exit \$rc" &
    pids+=($!)
done
ok=1
for p in "${pids[@]}"; do wait "$p" || ok=0; done
[ $ok = 1 ] || { tail -5 "$W"/trainer*.log "$W"/server*.log >&2; die "DistDGL failed"; }

"$PY" "$ROOT/bench/peers/table.py" "$W" $POLICIES
