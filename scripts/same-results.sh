#!/bin/bash
# Same results: a fixed list of small training and simulator runs, each reduced to its parameter
# checksum and every count of its metrics records (times left out), written to one text file.
# Run it on two builds and compare the files: a refactoring that keeps every decision keeps them
# byte for byte.
#
#   scripts/same-results.sh OUT.txt            # bin/halo of this checkout
#   HALO_BIN=/path/to/halo scripts/same-results.sh OUT.txt
#   diff before.txt after.txt
#
# The list: every shipped policy at depths 0 and 4 with local batching, global batching (two
# policies), a given --fanouts, three ranks, a typed RGCN run (gen --preset mag) with the
# policy's and a per-relation --fanouts, and `halo sim --against` for several of them.
set -u
out=${1:?usage: scripts/same-results.sh OUT.txt}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
HALO=${HALO_BIN:-$ROOT/bin/halo}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN="timeout -k 5 120 mpirun --timeout 110 --oversubscribe --bind-to none"
T=$(mktemp -d "${TMPDIR:-/tmp}/same.XXXXXX")
trap 'rm -rf "$T"' EXIT
: >"$out"

die() { echo "same-results: $*" >&2; exit 1; }

# counts FILE: the metrics records without their times (keys ending in _s, peak memory), the
# scratch directory's name replaced by T
counts() {
    sed -E 's/"[a-z_]*_s":[-0-9.eE+]*,?//g; s/"peak_rss_bytes":[0-9]*,?//g; s/,}/}/g' "$1" |
        sed "s#$T#T#g"
}

# train NAME NP PDIR ARGS...: one run; its checksum line and its counts go into $out
train() {
    local name=$1 np=$2 pdir=$3
    shift 3
    $MPIRUN -np "$np" "$HALO" train "$pdir" --epochs 2 --no-table --eval none \
        --metrics "$T/$name.jsonl" "$@" >"$T/$name.out" 2>"$T/$name.err" ||
        { tail -n 5 "$T/$name.err" >&2; die "train $name failed"; }
    {
        echo "== train $name: $*"
        grep -o 'params [0-9a-f]*\|embed [0-9a-f]*' "$T/$name.out"
        counts "$T/$name.jsonl"
    } >>"$out"
}

# sim NAME PDIR ARGS...: the simulator on the same configuration, compared with train NAME
sim() {
    local name=$1 pdir=$2
    shift 2
    "$HALO" sim "$pdir" --epochs 2 -q --metrics "$T/$name.sim.jsonl" \
        --against "$T/$name.jsonl" "$@" >"$T/$name.sim.out" 2>"$T/$name.sim.err" ||
        { tail -n 5 "$T/$name.sim.err" >&2; die "sim $name failed"; }
    {
        echo "== sim $name: $*"
        grep -i 'counts' "$T/$name.sim.out" "$T/$name.sim.err" | sed 's/^[^:]*://'
        counts "$T/$name.sim.jsonl"
    } >>"$out"
}

"$HALO" gen sbm -n 800 -F 8 -C 4 -s 7 -o "$T/g" >/dev/null 2>&1 || die "gen sbm"
"$HALO" partition "$T/g" --parts 2 -o "$T/p2" >/dev/null 2>&1 || die "partition 2"
"$HALO" partition "$T/g" --parts 3 -o "$T/p3" >/dev/null 2>&1 || die "partition 3"
"$HALO" gen --preset mag --scale 0.01 -o "$T/m" >/dev/null 2>&1 || die "gen mag"
"$HALO" partition "$T/m" --parts 2 -o "$T/mp" >/dev/null 2>&1 || die "partition mag"

pols="default distdgl distdglv2 massivegnn pagraph lru fifo lfu belady vip"
for pol in $pols; do
    args=(--policy "$ROOT/policies/$pol.lua" --batch 40)
    [ $pol = massivegnn ] && args+=(--set delta=2 --set alpha=0.3)
    for d in 0 4; do
        train "$pol.d$d" 2 "$T/p2" --depth $d "${args[@]}"
    done
done
for pol in massivegnn belady vip; do
    args=(--policy "$ROOT/policies/$pol.lua" --batch 40)
    [ $pol = massivegnn ] && args+=(--set delta=2 --set alpha=0.3)
    sim "$pol.d4" "$T/p2" --depth 4 "${args[@]}"
done
train lru.global 2 "$T/p2" --batching global --policy "$ROOT/policies/lru.lua" --batch 40
sim lru.global "$T/p2" --batching global --policy "$ROOT/policies/lru.lua" --batch 40
train vip.global 2 "$T/p2" --batching global --policy "$ROOT/policies/vip.lua" --batch 40 \
    --fanouts 3,4,2
sim vip.global "$T/p2" --batching global --policy "$ROOT/policies/vip.lua" --batch 40 \
    --fanouts 3,4,2
train lfu.3 3 "$T/p3" --policy "$ROOT/policies/lfu.lua" --batch 30 --fanouts 3,5 --depth 4
sim lfu.3 "$T/p3" --policy "$ROOT/policies/lfu.lua" --batch 30 --fanouts 3,5 --depth 4
train rgcn 2 "$T/mp" --model rgcn --batch 100 --policy "$ROOT/policies/lru.lua"
sim rgcn "$T/mp" --model rgcn --batch 100 --policy "$ROOT/policies/lru.lua"
train rgcn.rel 2 "$T/mp" --model rgcn --batch 100 --fanouts 'cites=4,*=2;*=3' \
    --policy "$ROOT/policies/belady.lua" --depth 4
sim rgcn.rel "$T/mp" --model rgcn --batch 100 --fanouts 'cites=4,*=2;*=3' \
    --policy "$ROOT/policies/belady.lua" --depth 4
echo "same-results: $(grep -c '^== ' "$out") runs into $out"
