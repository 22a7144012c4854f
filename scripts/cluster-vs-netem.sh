#!/usr/bin/env bash
# Epoch times of one training configuration run four ways, side by side: on namespace hosts
# (scripts/cluster.sh) with unshaped and with tbf-shaped links, and on one host with halo's
# --netem at the same bandwidth and without it. Prints a Markdown table (docs/cluster.md).
#
#   scripts/cluster-vs-netem.sh [--rate 200mbit] [--nodes 12000] [--feat 64] [--epochs 4]
#                               [--batch 500] [--keep DIR]
#
# Needs root and ip netns (exit 77 without). Epoch 0 is left out of the means (start-up).
set -u
here=$(cd "$(dirname "$0")" && pwd)
HALO=${HALO_BIN:-$here/../bin/halo}
rate=200mbit nodes=12000 feat=64 epochs=4 batch=500 keep=""
die() { echo "cluster-vs-netem: error: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
    case "$1" in
    --rate) rate=${2:-}; shift 2 || die "--rate needs a value" ;;
    --nodes) nodes=${2:-}; shift 2 || die "--nodes needs a value" ;;
    --feat) feat=${2:-}; shift 2 || die "--feat needs a value" ;;
    --epochs) epochs=${2:-}; shift 2 || die "--epochs needs a value" ;;
    --batch) batch=${2:-}; shift 2 || die "--batch needs a value" ;;
    --keep) keep=${2:-}; shift 2 || die "--keep needs a value" ;;
    -h | --help) sed -n '2,9s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) die "unknown argument '$1'" ;;
    esac
done
# tc's kbit/mbit/gbit are powers of 1000, as netem's Kbit/Mbit/Gbit
[[ "$rate" =~ ^([0-9]+)([kmg])bit$ ]] || die "--rate must look like 500kbit, 200mbit or 1gbit"
bw="${BASH_REMATCH[1]}$(echo "${BASH_REMATCH[2]}" | tr kmg KMG)bit"
[ -x "$HALO" ] || die "no halo binary at $HALO (make build)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

W=${keep:-$(mktemp -d /tmp/cluster-vs-netem.XXXXXX)}
mkdir -p "$W"
p1=cvn$$a p2=cvn$$b
cleanup() {
    "$here/cluster.sh" down --prefix "$p1" >/dev/null 2>&1
    "$here/cluster.sh" down --prefix "$p2" >/dev/null 2>&1
    [ -n "$keep" ] || rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
"$here/cluster.sh" up 4 --prefix "$p1" >/dev/null || exit $?
"$here/cluster.sh" up 4 --prefix "$p2" --rate "$rate" >/dev/null || exit $?
C1=${TMPDIR:-/tmp}/halo-cluster-$p1
C2=${TMPDIR:-/tmp}/halo-cluster-$p2

"$HALO" gen sbm -n "$nodes" -F "$feat" -C 8 -s 3 -o "$W/g" >/dev/null || die "gen failed"
"$HALO" partition "$W/g" --parts 4 -o "$W/p" >/dev/null || die "partition failed"
MPI="timeout -k 5 600 mpirun --oversubscribe --bind-to none -np 4"
train="$HALO train $W/p --epochs $epochs --batch $batch --fanouts 10,25 --eval none --no-table"

# run NAME CMD...: one training run with metrics into $W/NAME.jsonl
run() {
    local name=$1
    shift
    "$@" --metrics "$W/$name.jsonl" >"$W/$name.out" 2>"$W/$name.err" ||
        { sed 's/^/  /' "$W/$name.err" | tail -n 5 >&2; die "run $name failed"; }
}
run cl_free timeout -k 5 600 "$C1/mpirun" --oversubscribe --bind-to none -np 4 --npernode 1 $train
run cl_tbf timeout -k 5 600 "$C2/mpirun" --oversubscribe --bind-to none -np 4 --npernode 1 $train
run cl_tbf22 timeout -k 5 600 "$C2/mpirun" --oversubscribe --bind-to none -np 4 --npernode 2 $train
run one_netem $MPI $train --netem "bw=$bw"
run one_netem_tcp $MPI --mca btl tcp,self $train --netem "bw=$bw"
run one_free $MPI $train

# row NAME LABEL: means over ranks and epochs >= 1 of the epoch records
row() {
    grep '"type":"epoch"' "$W/$1.jsonl" | awk -v label="$2" -v p="$(grep -o 'params [0-9a-f]*' "$W/$1.out")" '
        function f(k,   m) { if (match($0, "\"" k "\":[-0-9.e+]+")) {
            m = substr($0, RSTART, RLENGTH); sub(/.*:/, "", m); return m + 0 } return 0 }
        f("epoch") >= 1 { n++; t += f("time_s"); fe += f("fetch_s"); sa += f("sample_s");
                          ar += f("allreduce_s"); b += f("bytes_sent") }
        END { if (n == 0) { print "| " label " | no epochs |"; exit }
              printf "| %s | %.3f | %.3f | %.3f | %.3f | %.2f | %s |\n", label, t / n, sa / n,
                     fe / n, ar / n, b / n / 1e6, p }'
}
echo "Same configuration: sbm graph of $nodes nodes, $feat features, 4 parts, batch $batch,"
echo "fanouts 10,25, $epochs epochs (means over ranks of epochs 1..$((epochs - 1))); rate $rate."
echo
echo "| run | epoch s | sample s | fetch s | allreduce s | MB sent per rank per epoch | parameters |"
echo "|---|---|---|---|---|---|---|"
row cl_free "4 hosts x 1, unshaped veth links (TCP)"
row cl_tbf "4 hosts x 1, tbf $rate per link (TCP)"
row cl_tbf22 "2 hosts x 2, tbf $rate per link (TCP, 2 ranks share a link)"
row one_netem "1 host x 4, --netem bw=$bw (shared memory)"
row one_netem_tcp "1 host x 4, --netem bw=$bw, btl tcp,self"
row one_free "1 host x 4, no netem (shared memory)"
