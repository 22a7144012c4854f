#!/usr/bin/env bash
# Validates the simulator against measured runs on this machine: a thin wrapper over
# `halo sim validate` (docs/sim.md, "halo sim validate"), which draws configurations from a
# declared space with a seed, runs each with mpirun halo train and halo sim, and prints the
# epoch and per-stage errors, the counts' equality, and whether the machine was quiet enough.
# Usage: scripts/sim-validate.sh [halo sim validate flags]
#   e.g. scripts/sim-validate.sh --seed 1 --configs 20 --out reports --markdown
#   The old positional form (WORKDIR [CSV] [REPORTS]) maps to --work WORKDIR --out REPORTS.
#   env: HALO_BIN (default bin/halo)
set -euo pipefail
cd "$(dirname "$0")/.."
HALO=${HALO_BIN:-$(pwd)/bin/halo}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
args=()
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
    # the old form: WORKDIR [CSV] [REPORTS]; the CSV is now always OUT/sim_vs_measured.csv
    args+=(--work "$1")
    [ $# -ge 3 ] && args+=(--out "$3") || args+=(--out "$1")
    shift $(($# < 3 ? $# : 3))
fi
exec "$HALO" sim validate "${args[@]}" "$@"
