#!/usr/bin/env bash
# Tries examples/slurm/train.sbatch for real on this machine: a one-node Slurm (munged,
# slurmctld, slurmd from Debian's slurm-wlm packages, private config, ports and state under a
# temporary directory), a small graph and partition, the job submitted twice (LAUNCH=srun and
# LAUNCH=mpirun, CPU only, 2 ranks), then everything stopped and removed.
#
#   examples/slurm/try-local.sh      (root; apt-get install slurmctld slurmd slurm-client munge)
set -u
here=$(cd "$(dirname "$0")" && pwd)
HALO=${HALO_BIN:-$here/../../bin/halo}
for b in munged slurmctld slurmd sbatch; do
    command -v $b >/dev/null || { echo "try-local: needs $b (apt-get install slurmctld slurmd slurm-client munge)" >&2; exit 77; }
done
[ "$(id -u)" = 0 ] || { echo "try-local: needs root (slurmd runs jobs as any user)" >&2; exit 77; }
[ -x "$HALO" ] || { echo "try-local: no halo at $HALO (make build)" >&2; exit 1; }
HALO=$(cd "$(dirname "$HALO")" && pwd)/$(basename "$HALO")
W=$(mktemp -d /tmp/halo-slurm.XXXXXX)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    sleep 1
    for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
    rm -rf "$W"
}
[ -n "${TRY_KEEP:-}" ] || trap cleanup EXIT
t0=$(date +%s)
node=$(hostname)
cpus=$(nproc)
mkdir -p "$W/state" "$W/spool" "$W/munge"
# munge: a private key and socket (not the system's)
dd if=/dev/urandom of="$W/munge/key" bs=1024 count=1 status=none
chmod 600 "$W/munge/key"
munged --foreground --force --socket="$W/munge/sock" --key-file="$W/munge/key" \
    --pid-file="$W/munge/pid" --log-file="$W/munge/log" --seed-file="$W/munge/seed" &
pids+=($!)
for _ in $(seq 1 50); do [ -S "$W/munge/sock" ] && break; sleep 0.1; done
[ -S "$W/munge/sock" ] || { echo "try-local: munged did not start" >&2; exit 1; }
cat >"$W/slurm.conf" <<EOF
ClusterName=halotry
SlurmctldHost=$node
SlurmctldPort=16917
SlurmdPort=16918
AuthType=auth/munge
AuthInfo=socket=$W/munge/sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$W/state
SlurmdSpoolDir=$W/spool
SlurmctldPidFile=$W/ctld.pid
SlurmdPidFile=$W/slurmd.pid
SlurmctldLogFile=$W/ctld.log
SlurmdLogFile=$W/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
SchedulerType=sched/builtin
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=$node CPUs=$((cpus < 2 ? 2 : cpus)) State=UNKNOWN
PartitionName=try Nodes=$node Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
export SLURM_CONF=$W/slurm.conf
slurmctld -D -f "$W/slurm.conf" >"$W/ctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$W/slurm.conf" >"$W/slurmd.out" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do
    sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed)' && break
    sleep 0.3
done
if ! sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed)'; then
    echo "try-local: the node did not come up:" >&2
    tail -n 5 "$W/ctld.log" "$W/slurmd.log" >&2
    exit 1
fi
echo "try-local: slurmctld + slurmd up on $node in $(($(date +%s) - t0)) s ($(srun --version))"
echo "try-local: srun --mpi=list: $(srun --mpi=list 2>&1 | tr '\n' ' ')"

"$HALO" gen sbm -n 2000 -F 16 -C 4 -s 1 -o "$W/g" >/dev/null &&
    "$HALO" partition "$W/g" --parts 2 -o "$W/p" >/dev/null || exit 1
# the reference: the same training under a plain mpirun
ref=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 60 mpirun --oversubscribe \
    -np 2 "$HALO" train "$W/p" --epochs 2 --batch 200 --device cpu --eval none --no-table \
    2>/dev/null | grep -o 'params [0-9a-f]*')
echo "try-local: plain mpirun -np 2: $ref"
status=0
for launch in srun mpirun; do
    job=$(sbatch --parsable --time=00:05:00 --nodes=1 --ntasks-per-node=2 --cpus-per-task=1 --gpus-per-node=0 \
        --output="$W/$launch.out" \
        --export="ALL,PDIR=$W/p,HALO=$HALO,LAUNCH=$launch,GPUS_PER_TASK=0,OMPI_ALLOW_RUN_AS_ROOT=1,OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1" \
        "$here/train.sbatch" --epochs 2 --batch 200 --device cpu --eval none --no-table) ||
        { echo "try-local: sbatch ($launch) refused"; status=1; continue; }
    for _ in $(seq 1 200); do
        squeue -h -j "$job" 2>/dev/null | grep -q . || break
        sleep 0.3
    done
    state=$(scontrol show job "$job" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
    echo "try-local: LAUNCH=$launch: job $job $state"
    sed 's/^/    /' "$W/$launch.out" | grep -v '^ *$' | tail -n 6
    got=$(grep -o 'params [0-9a-f]*' "$W/$launch.out")
    if [ -n "$ref" ] && [ "$got" = "$ref" ]; then
        echo "try-local: LAUNCH=$launch: $got, the same as plain mpirun"
    else
        echo "try-local: LAUNCH=$launch: '$got' differs from plain mpirun's '$ref'"
        status=1
    fi
done
echo "try-local: done in $(($(date +%s) - t0)) s"
exit $status
