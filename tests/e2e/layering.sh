#!/usr/bin/env bash
# Layering (runtime/README.md): only comm/ includes MPI, only policy/ includes Lua, only *.cu
# include CUDA; the deciding modules link into a program without MPI (the simulator's promise).
cd "$(dirname "$0")/../.."
. tests/e2e/lib.sh
B=${BUILD:-build}

bad=$(grep -lE '#include <mpi\.h>|#include "mpi\.h"' runtime/*/*.c runtime/*/*.h | grep -v '^runtime/comm/')
if [ -z "$bad" ]; then ok "only comm/ includes mpi.h"; else not_ok "only comm/ includes mpi.h: $bad"; fi
# PT-Scotch is an MPI library: only comm/ may call it (part/dist.c prepares its input on plain arrays)
bad=$(grep -lE '#include [<"](pt)?scotch\.h' runtime/*/*.c runtime/*/*.h | grep -v '^runtime/comm/')
if [ -z "$bad" ]; then ok "only comm/ includes PT-Scotch"; else not_ok "only comm/ includes PT-Scotch: $bad"; fi
bad=$(grep -lE '#include [<"](lua|lauxlib|lualib)\.h' runtime/*/*.c runtime/*/*.h | grep -v '^runtime/policy/')
if [ -z "$bad" ]; then ok "only policy/ includes Lua"; else not_ok "only policy/ includes Lua: $bad"; fi
# halo_store is opaque: its layout (store_impl.h) is seen by store/ alone, never by tests
bad=$(grep -lE '#include "store/store_impl\.h"' runtime/*/*.c runtime/*/*.h tests/*/*.c bench/*.c |
    grep -v '^runtime/store/')
if [ -z "$bad" ]; then ok "only store/ sees halo_store's layout"; else
    not_ok "only store/ sees halo_store's layout: $bad"; fi
bad=$(grep -lE '#include [<"](cuda_runtime|cublas_v2|cuda)\.h' runtime/*/*.c runtime/*/*.h)
if [ -z "$bad" ]; then ok "no C file includes CUDA"; else not_ok "no C file includes CUDA: $bad"; fi

# The objects of the deciding modules and what they use: no MPI symbol in any of them.
objs=$(ls "$B"/runtime/{core,graph,part,sample,cache,policy,order,plan,sim,pipe}/*.o "$B"/runtime/train/metrics.o "$B"/runtime/model/path.o 2>/dev/null)
# only objects whose source still exists (a file split or removed leaves its old object behind)
objs=$(for o in $objs; do s=${o#"$B"/}; [ -f "${s%.o}.c" ] && echo "$o"; done)
if [ -z "$objs" ]; then
    not_ok "objects of the deciding modules exist in $B"
else
    mpi=$(nm -A $objs 2>/dev/null | grep -E ' [UT] (P?MPI_|ompi_)' | head -n 5)
    if [ -z "$mpi" ]; then ok "no MPI symbol in sample/ cache/ part/ policy/ order/ plan/ sim/ objects"
    else not_ok "no MPI symbol in the deciding modules' objects"; echo "$mpi" | sed 's/^/# /'; fi
    if [ -n "$(nm -A "$B"/runtime/comm/comm.o | grep -E ' U MPI_' | head -n 1)" ]; then
        ok "the check sees MPI symbols where they are (comm.o)"
    else not_ok "the check sees MPI symbols where they are (comm.o)"; fi
    rm -f "$T/libdecide.a"
    ar rcs "$T/libdecide.a" $objs
    # objects of a sanitizer build (make asan) need the sanitizer runtimes at link time
    san=""
    if nm "$B"/runtime/core/err.o 2>/dev/null | grep -q '__asan_'; then
        san="-fsanitize=address,undefined"
    fi
    # shellcheck disable=SC2086
    if gcc -std=gnu11 -O1 $san -Iruntime -o "$T/sim_nompi" tests/link/sim_nompi.c "$T/libdecide.a" \
        -llua5.4 -lmetis -lz -lm -lpthread 2>"$T/link.err"; then
        ok "sim links without -lmpi"
    else
        not_ok "sim links without -lmpi"; sed 's/^/# /' "$T/link.err" | head -n 20
    fi
    if [ -x "$T/sim_nompi" ] && ! ldd "$T/sim_nompi" 2>/dev/null | grep -q libmpi; then
        ok "sim_nompi does not load libmpi"
    else not_ok "sim_nompi does not load libmpi"; fi
    "$HALO" gen sbm --nodes 3000 --seed 3 -o "$T/g" >/dev/null 2>&1
    "$HALO" partition "$T/g" --parts 3 -o "$T/p" >/dev/null 2>&1
    check_out "the MPI-free program simulates a 3-part run" "sim_nompi: 3 ranks, [1-9][0-9]* sampled edges" \
        "$T/sim_nompi" "$T/p" policies/massivegnn.lua
fi
# No circle between files: two objects of runtime/ where each uses a symbol the other defines
# (A's undefined symbols meet B's defined ones, and B's undefined meet A's defined) lean on each
# other; what both need belongs in a third file below them. Checked with nm on the objects whose
# source still exists. Known circles that work in progress is removing, with its owner; the
# entries are shell patterns over "A <-> B" (the two objects without build/runtime/ and .o, A < B).
circle_allow=()
# circles_of OBJECTS...: one line "A <-> B (a symbol A uses from B / one B uses from A)" per circle.
circles_of() {
    nm -A "$@" 2>/dev/null | awk -v pre="$B/runtime/" '
    { split($1, f, ":"); o = f[1]; sub("^" pre, "", o); sub(/\.o$/, "", o)
      t = $(NF - 1); s = $NF
      if (t == "U") { use[o, s] = 1 } else if (t ~ /^[TDBRVWCG]$/) { def[s] = o } }
    END {
      for (k in use) { split(k, p, SUBSEP); a = p[1]; b = def[p[2]]
        if (b != "" && b != a && !((a, b) in edge)) { edge[a, b] = p[2] } }
      for (k in edge) { split(k, p, SUBSEP); a = p[1]; b = p[2]
        if (a < b && ((b, a) in edge)) { print a " <-> " b " (" edge[a, b] " / " edge[b, a] ")" } }
    }' | sort
}
# circle_check NAME OBJECTS...: passes when every circle among OBJECTS is on circle_allow.
circle_check() {
    local name=$1 line pat bad="" allowed
    shift
    while IFS= read -r line; do
        [ -n "$line" ] || continue
        allowed=0
        for pat in "${circle_allow[@]}"; do
            # shellcheck disable=SC2053
            [[ "${line%% (*}" == $pat ]] && allowed=1
        done
        if [ "$allowed" = 1 ]; then echo "# allowed circle: $line"; else bad="$bad$line"$'\n'; fi
    done < <(circles_of "$@")
    if [ -z "$bad" ]; then ok "$name"; else not_ok "$name"; printf '%s' "$bad" | sed 's/^/# /'; fi
}
all=$(for o in "$B"/runtime/*/*.o; do s=${o#"$B"/}; [ -f "${s%.o}.c" ] || [ -f "${s%.o}.cu" ] && echo "$o"; done)
if [ -z "$all" ]; then
    not_ok "objects of runtime/ exist in $B"
else
    # shellcheck disable=SC2086
    circle_check "no two files of runtime/ use each other's symbols (no circle)" $all
    # the check must see a circle where there is one: two objects that call each other
    mkdir -p "$T/circle/runtime/x"
    printf 'int halo_x_b(int);\nint halo_x_a(int n) { return n ? halo_x_b(n - 1) : 0; }\n' >"$T/circle/a.c"
    printf 'int halo_x_a(int);\nint halo_x_b(int n) { return n ? halo_x_a(n - 1) : 1; }\n' >"$T/circle/b.c"
    gcc -c -o "$T/circle/runtime/x/a.o" "$T/circle/a.c" && gcc -c -o "$T/circle/runtime/x/b.o" "$T/circle/b.c"
    if B="$T/circle" circles_of "$T/circle/runtime/x/a.o" "$T/circle/runtime/x/b.o" | grep -q '^x/a <-> x/b (halo_x_b / halo_x_a)$'; then
        ok "the circle check sees an injected circle (x/a <-> x/b)"
    else not_ok "the circle check sees an injected circle (x/a <-> x/b)"; fi
fi
done_testing
