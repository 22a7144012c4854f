#!/usr/bin/env bash
# The BLAS kernels halo runs with (model/ops.h halo_blas_pick_kernels): on a CPU with AVX2 or
# AVX-512 halo never stays on OpenBLAS's SSE-only fallback kernels (which it picks for CPU models
# newer than the library); OPENBLAS_CORETYPE given by the user and HALO_BLAS_KEEP=1 are obeyed.
# OpenBLAS prints the core it loads ("Core: NAME") when OPENBLAS_VERBOSE=2.
cd "$(dirname "$0")/../.."
. tests/e2e/lib.sh

wide='^Core: (Haswell|SkylakeX|Cooperlake|SapphireRapids|Zen)'
cores() { OPENBLAS_VERBOSE=2 "$@" 2>&1 | grep '^Core:'; }

if ! grep -qw avx2 /proc/cpuinfo 2>/dev/null || ! grep -qw fma /proc/cpuinfo; then
    ok "halo uses wide BLAS kernels # SKIP this CPU has no AVX2/FMA"
else
    got=$(env -u OPENBLAS_CORETYPE -u HALO_BLAS_KEEP \
        bash -c 'OPENBLAS_VERBOSE=2 "$0" --version 2>&1' "$HALO" | grep '^Core:' | tail -n 1)
    if echo "$got" | grep -Eq "$wide"; then ok "halo runs with AVX2-or-wider BLAS kernels ($got)"
    else not_ok "halo runs with AVX2-or-wider BLAS kernels (last: '$got')"; fi
fi
# the user's choice stands: one load of OpenBLAS, no re-execution
n=$(OPENBLAS_CORETYPE=Haswell cores "$HALO" --version | wc -l)
last=$(OPENBLAS_CORETYPE=Haswell cores "$HALO" --version | tail -n 1)
if [ "$n" -eq 1 ] && [ "$last" = "Core: Haswell" ]; then ok "OPENBLAS_CORETYPE is kept"
else not_ok "OPENBLAS_CORETYPE is kept ($n loads, last '$last')"; fi
n=$(HALO_BLAS_KEEP=1 env -u OPENBLAS_CORETYPE \
    bash -c 'OPENBLAS_VERBOSE=2 "$0" --version 2>&1' "$HALO" | grep -c '^Core:')
if [ "$n" -eq 1 ]; then ok "HALO_BLAS_KEEP=1 keeps OpenBLAS's own choice"
else not_ok "HALO_BLAS_KEEP=1 keeps OpenBLAS's own choice ($n loads)"; fi
# the re-executed program still gets its arguments and its exit status
check_out "arguments survive the re-execution" '^halo [0-9]' \
    env -u OPENBLAS_CORETYPE "$HALO" --version
check_fails "... and so do errors" 'unknown option' env -u OPENBLAS_CORETYPE "$HALO" --no-such-flag
done_testing
