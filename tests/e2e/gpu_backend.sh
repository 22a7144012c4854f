#!/usr/bin/env bash
# The CUDA back end loaded only when a run asks for a GPU (docs/model.md, "The CUDA back end"):
# bin/halo links no CUDA library and a CPU run maps none; a missing, broken or foreign back end
# with --device gpu is one error line, with --device auto a notice and the CPU; a "GPU" run on the
# tests' fake back end (HALO_CUDA_LIB) trains as the CPU does, bit for bit, also when pinned
# memory runs out (HALO_FAULT=host_alloc); make install puts the back end where the installed
# binary looks for it.
cd "$(dirname "$0")/../.."
. tests/e2e/lib.sh
B=${BUILD:-build}
FAKE=$PWD/$B/tests/libhalo_fakegpu.so

if ldd "$HALO" | grep -qiE 'libcuda|libcublas'; then
    not_ok "bin/halo links no CUDA library"
    ldd "$HALO" | grep -iE 'cuda|cublas' | sed 's/^/# /'
else
    ok "bin/halo links no CUDA library"
fi

"$HALO" gen --preset arxiv --scale 0.02 -o "$T/g" >/dev/null 2>&1
"$HALO" partition "$T/g" --parts 1 -o "$T/p" >/dev/null 2>&1
run() { "$HALO" train "$T/p" --epochs 1 --batch 500 --no-table "$@"; }

# CPU runs (explicit and auto without a driver) never load the back end or the CUDA runtime (a
# file of its own per run: MPI's helper processes inherit LD_DEBUG and write after halo exits)
for dev in cpu auto; do
    if env -u HALO_CUDA_LIB LD_DEBUG=files "$HALO" train "$T/p" --device $dev --epochs 1 \
        --batch 500 --no-table >"$T/out" 2>"$T/ld-$dev" &&
        ! grep -aqE 'libhalo_cuda|libcudart|libcublas' "$T/ld-$dev"; then
        ok "--device $dev maps no CUDA library"
    else
        not_ok "--device $dev maps no CUDA library"
        grep -aE 'error|libhalo_cuda|libcudart' "$T/ld-$dev" | head -5 | sed 's/^/# /'
    fi
done

# one error line each, exit 1, for a missing, a broken and a foreign back end
one_line() {
    local name=$1 pattern=$2
    shift 2
    env "$@" "$HALO" train "$T/p" --device gpu --epochs 1 --no-table >"$T/out" 2>"$T/err"
    local rc=$?
    if [ $rc = 1 ] && [ "$(wc -l <"$T/err")" = 1 ] && grep -qE "^halo: error: .*$pattern" "$T/err"; then
        ok "$name"
    else
        not_ok "$name (exit $rc)"
        sed 's/^/# /' "$T/err" | head -5
    fi
}
printf 'not an ELF file\n' >"$T/broken.so"
one_line "--device gpu, back end missing: one line" "cannot load the CUDA back end: /nonexistent" \
    HALO_CUDA_LIB=/nonexistent/libhalo_cuda.so
one_line "--device gpu, back end broken: one line" "cannot load the CUDA back end: .*broken.so" \
    HALO_CUDA_LIB="$T/broken.so"
one_line "--device gpu, back end of another version: one line" "another halo version" \
    HALO_CUDA_LIB="$FAKE" HALO_FAKE_ABI=99
one_line "--device gpu, no driver: one line naming the back end" "no NVIDIA driver" \
    HALO_CUDA_LIB=

# --device auto with a broken back end: a notice, then the CPU
HALO_CUDA_LIB="$T/broken.so" run --device auto >"$T/out" 2>"$T/err"
if [ $? = 0 ] && grep -q 'notice: --device auto' "$T/err" && grep -q '(cpu)' "$T/out"; then
    ok "--device auto, back end broken: notice, trains on the CPU"
else
    not_ok "--device auto, back end broken: notice, trains on the CPU"
    sed 's/^/# /' "$T/err" | head -5
fi

# the fake GPU trains as the CPU does (the parameter checksum), with pinned memory or without
cpu=$(run --device cpu 2>/dev/null | sed -n 's/.*params \([0-9a-f]*\).*/\1/p')
gpu=$(HALO_CUDA_LIB="$FAKE" run --device gpu 2>/dev/null | sed -n 's/.*params \([0-9a-f]*\).*/\1/p')
nopin=$(HALO_CUDA_LIB="$FAKE" HALO_FAULT=host_alloc run --device gpu --depth 2 2>"$T/err" |
    sed -n 's/.*params \([0-9a-f]*\).*/\1/p')
if [ -n "$cpu" ] && [ "$cpu" = "$gpu" ]; then ok "fake GPU run equals the CPU run ($cpu)"; else
    not_ok "fake GPU run equals the CPU run (cpu '$cpu', gpu '$gpu')"; fi
if [ -n "$cpu" ] && [ "$cpu" = "$nopin" ] && grep -q 'pinned host memory unavailable' "$T/err"; then
    ok "fake GPU without pinned memory (HALO_FAULT=host_alloc) equals the CPU run"
else
    not_ok "fake GPU without pinned memory equals the CPU run ('$nopin')"
    sed 's/^/# /' "$T/err" | head -5
fi

# make install: the back end beside the installed binary, where that binary looks for it
# (the default build only: an asan or CUDA=0 build has no back end of its own; -o: nothing rebuilt)
if [ -e lib/halo/libhalo_cuda.so ] && [ "$HALO" -ef bin/halo ] && [ "$B" = build ]; then
    env -u MAKEFLAGS -u MFLAGS make --no-print-directory -o bin/halo -o lib/halo/libhalo_cuda.so \
        install PREFIX="$T/inst" >"$T/out" 2>&1
    env -u HALO_CUDA_LIB "$T/inst/bin/halo" train "$T/p" --device gpu --epochs 1 >"$T/out" 2>"$T/err"
    if [ -x "$T/inst/lib/halo/libhalo_cuda.so" ] && grep -q "$T/inst/bin/../lib/halo/libhalo_cuda.so" "$T/err"; then
        ok "make install: lib/halo/libhalo_cuda.so, found relative to bin/halo"
    else
        not_ok "make install: lib/halo/libhalo_cuda.so, found relative to bin/halo"
        sed 's/^/# /' "$T/err" | head -3
    fi
else
    ok "make install of the back end # SKIP not the default build (CUDA=0, asan or another BUILD)"
fi
done_testing
