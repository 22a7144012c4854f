# A cluster of network-namespace hosts on this machine (scripts/cluster.sh): halo train and
# halo sample on 4 hosts x 1 rank and 2 hosts x 2 ranks give what 1 host x 4 ranks gives
# (invariant 1), and three failures across hosts (a link down mid-epoch, a rank SIGKILLed on
# another host, mpirun killed) end every rank within 10 s with a halo line naming the rank and
# host that failed. Needs root and ip netns; without them every check is reported as skipped.
. "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
CLUSTER="$(cd "$(dirname "$0")/../.." && pwd)/scripts/cluster.sh"
MPIRUN="timeout -k 5 60 mpirun --oversubscribe --bind-to none"
PREFIX=hct$$
BOUND=10 # seconds every rank may take to end after a failure

skip_all() {
    ok "cluster tests # SKIP $1"
    done_testing
    exit 0
}

C=$("$CLUSTER" up 4 --prefix "$PREFIX" --dir "$T/cluster" 2>"$T/up.err")
rc=$?
if [ $rc -ne 0 ]; then
    [ $rc -eq 77 ] && skip_all "$(head -n 1 "$T/up.err")"
    not_ok "scripts/cluster.sh up 4"; sed 's/^/# /' "$T/up.err"
    done_testing
    exit 1
fi
job=""
cleanup() {
    [ -n "$job" ] && kill -9 "$job" 2>/dev/null
    "$CLUSTER" down --dir "$C" >/dev/null 2>&1
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
CMPI="timeout -k 5 60 $C/mpirun --timeout 55 --oversubscribe --bind-to none -np 4"
ok "scripts/cluster.sh up 4 ($C)"

hosts=$($CMPI --npernode 1 hostname 2>"$T/err" | sort -u | tr '\n' ' ')
if [ "$(echo $hosts | wc -w)" = 4 ]; then ok "4 ranks with --npernode 1 run on 4 hosts ($hosts)"
else not_ok "4 ranks with --npernode 1 run on 4 hosts (got: $hosts)"; sed 's/^/# /' "$T/err"; fi
addrs=$($CMPI --npernode 2 sh -c 'ip -4 -o addr show dev eth0' 2>/dev/null | awk '{print $4}' |
    sort | uniq -c | awk '{print $1}' | tr '\n' ' ')
if [ "$addrs" = "2 2 " ]; then ok "--npernode 2 puts 2 ranks on each of 2 hosts"
else not_ok "--npernode 2 puts 2 ranks on each of 2 hosts (ranks per address: $addrs)"; fi

check "generate an sbm graph" "$HALO" gen sbm -n 3000 -F 16 -C 8 -s 3 -o "$T/g"
check "partition into 4" "$HALO" partition "$T/g" --parts 4 -o "$T/p4"

# --- invariant 1 across hosts: the same parameters and sample counts on 1x4, 4x1 and 2x2
train="train $T/p4 --epochs 2 --batch 256 --fanouts 5,10 --no-table --eval none"
params() { grep -o 'params [0-9a-f]*' "$1"; }
$MPIRUN -np 4 "$HALO" $train --metrics "$T/m14.jsonl" >"$T/t14" 2>"$T/t14.err"
$CMPI --npernode 1 "$HALO" $train --metrics "$T/m41.jsonl" >"$T/t41" 2>"$T/t41.err"
$CMPI --npernode 2 "$HALO" $train --metrics "$T/m22.jsonl" >"$T/t22" 2>"$T/t22.err"
ref=$(params "$T/t14")
for run in 41 22; do
    got=$(params "$T/t$run")
    name="train on ${run:0:1} hosts x ${run:1:1} ranks: the checksum of 1 host x 4 ranks"
    if [ -n "$ref" ] && [ "$got" = "$ref" ]; then ok "$name ($got)"; else
        not_ok "$name (1x4: '$ref', got: '$got')"; sed 's/^/# /' "$T/t$run.err" | tail -n 8; fi
done
# bytes per rank in the metrics: every rank of the 4-host run sent feature bytes to others
sent=$(grep '"type":"epoch"' "$T/m41.jsonl" | grep -o '"rank":[0-9]*\|"bytes_sent":[0-9]*' |
    paste - - | awk -F'[:\t]' '$4 > 0 { r[$2] = 1 } END { n = 0; for (k in r) n++; print n }')
if [ "$sent" = 4 ]; then ok "metrics of the 4-host run: bytes_sent > 0 on each of 4 ranks"
else not_ok "metrics of the 4-host run: bytes_sent > 0 on each of 4 ranks (ranks: $sent)"; fi

counts() { awk '/^(rank|[0-9]|total)/ { print $1, $2, $3, $4, $5, $6 }' "$1"; }
sample="sample $T/p4 --fanouts 5,10 --batch 100 --batches 3"
$MPIRUN -np 4 "$HALO" $sample >"$T/s14" 2>"$T/s14.err"
$CMPI --npernode 1 "$HALO" $sample >"$T/s41" 2>"$T/s41.err"
$CMPI --npernode 2 "$HALO" $sample >"$T/s22" 2>"$T/s22.err"
for run in 41 22; do
    name="sample on ${run:0:1} hosts x ${run:1:1} ranks: the counts of 1 host x 4 ranks"
    if [ -n "$(counts "$T/s14")" ] && [ "$(counts "$T/s14")" = "$(counts "$T/s$run")" ]; then
        ok "$name"
    else
        not_ok "$name"; diff <(counts "$T/s14") <(counts "$T/s$run") | sed 's/^/# /' | head
        sed 's/^/# /' "$T/s$run.err" | tail -n 5
    fi
done

# --- failures across hosts. The job trains "forever" on 4 hosts x 1 rank (netem keeps the
# cores mostly idle); once epochs are being printed, the fault goes in and the clock starts.
ranks_alive() { # pids of halo processes in the cluster's namespaces
    local h p
    for h in $(. "$C/env"; echo $HOSTS); do
        for p in $(ip netns pids "$h" 2>/dev/null); do
            [ "$(cat "/proc/$p/comm" 2>/dev/null)" = halo ] && echo "$p"
        done
    done
}
pid_in() { # pid_in HOST COMM: a process named COMM in namespace HOST
    local p
    for p in $(ip netns pids "$1" 2>/dev/null); do
        [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$2" ] && { echo "$p"; return; }
    done
}
# start_job NAME: starts the endless training job; returns when an epoch was printed
start_job() {
    rm -f "$T/flog"
    HALO_FAILURE_LOG="$T/flog" $CMPI -x HALO_FAILURE_LOG --npernode 1 "$HALO" train "$T/p4" \
        --epochs 100000 --batch 128 --fanouts 5,10 --eval none --netem lat=2ms \
        >"$T/$1.out" 2>"$T/$1.err" &
    job=$!
    for _ in $(seq 1 300); do
        grep -qE '^ +[0-9]+ ' "$T/$1.err" 2>/dev/null && [ "$(ranks_alive | wc -l)" = 4 ] && return 0
        sleep 0.1
    done
    return 1
}
# ended_within: seconds (tenths) until no rank is left, at most 30 s
ended_within() {
    local t0 t1
    t0=$(date +%s%N)
    for _ in $(seq 1 300); do
        [ -z "$(ranks_alive)" ] && break
        sleep 0.1
    done
    t1=$(date +%s%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e9 }'
}
# judge NAME TOOK FILE PATTERN: every rank ended within BOUND s and FILE has a halo line matching
judge() {
    local line
    line=$(grep -E "^halo: error: rank [0-9]+: .*$4" "$3" | head -n 1)
    if awk -v t="$2" -v b=$BOUND 'BEGIN { exit !(t <= b) }' && [ -n "$line" ]; then
        ok "$1: every rank ended in $2 s; \"$line\""
    else
        not_ok "$1: every rank ended within $BOUND s (took $2 s) naming the failure"
        sed 's/^/# /' "$3" | grep -v '^# *$' | tail -n 12
    fi
}
finish_job() { # waits (bounded) for mpirun, then kills it
    for _ in $(seq 1 200); do kill -0 "$job" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$job" 2>/dev/null
    wait "$job" 2>/dev/null
    job=""
}

# 1. host 2's link goes down mid-epoch: its neighbours name rank 2 on host 2 unreachable
if start_job linkdown; then
    ip -n "$PREFIX-h2" link set eth0 down
    took=$(ended_within)
    ip -n "$PREFIX-h2" link set eth0 up # lets mpirun and the cut-off daemon finish
    finish_job
    judge "host 2's link down mid-epoch" "$took" "$T/linkdown.err" "rank 2 on host $PREFIX-h2 unreachable"
else
    not_ok "host 2's link down: the job did not start"; sed 's/^/# /' "$T/linkdown.err" | tail
    finish_job
fi

# 2. rank 1 SIGKILLed on host 1: its neighbours name it
if start_job kill; then
    victim=$(pid_in "$PREFIX-h1" halo)
    kill -9 "$victim"
    took=$(ended_within)
    finish_job
    judge "rank 1 SIGKILLed on host 1" "$took" "$T/kill.err" "rank 1 on host $PREFIX-h1 ended unexpectedly"
else
    not_ok "rank killed: the job did not start"; sed 's/^/# /' "$T/kill.err" | tail
    finish_job
fi

# 3. mpirun SIGKILLed: nothing forwards output any more, so the lines are in HALO_FAILURE_LOG
if start_job mpirun; then
    kill -9 "$(pid_in "$PREFIX-h0" mpirun)"
    took=$(ended_within)
    finish_job
    judge "mpirun SIGKILLed" "$took" "$T/flog" "(launcher of rank 0 on host $PREFIX-h0 ended|rank 0 on host $PREFIX-h0 ended unexpectedly)"
else
    not_ok "mpirun killed: the job did not start"; sed 's/^/# /' "$T/mpirun.err" | tail
    finish_job
fi

# --- a clean finish is never reported as a failure, across hosts and on one host
$CMPI --npernode 2 "$HALO" $train >"$T/clean" 2>"$T/clean.err"
rc=$?
$MPIRUN -np 4 --mca btl tcp,self "$HALO" $train >>"$T/clean" 2>>"$T/clean.err"
rc1=$?
if [ $rc -eq 0 ] && [ $rc1 -eq 0 ] && ! grep -q 'error' "$T/clean.err"; then
    ok "clean runs (2x2 cluster, 1x4 over tcp) report no failure"
else
    not_ok "clean runs report no failure (exits $rc, $rc1)"; sed 's/^/# /' "$T/clean.err" | tail
fi

# --- down removes what up made
"$CLUSTER" down --dir "$C" >"$T/down" 2>&1
left=$(ip netns list | awk '{print $1}' | grep -c "^$PREFIX-")
if [ "$left" = 0 ] && [ ! -e "$C" ]; then ok "down removes the namespaces and the directory ($(cat "$T/down"))"
else not_ok "down removes the namespaces and the directory ($left left)"; fi
trap - EXIT
rm -rf "$T/cluster"
done_testing
