#!/usr/bin/env bash
# End-to-end: bad graphs, partitions and paths, one case per class. Each fails with one line on
# stderr naming the file (or flag) and what is wrong, exits non-zero, and writes nothing.
source "$(dirname "$0")/lib.sh"
P="$(cd "$(dirname "$0")/../.." && pwd)"

# one_line NAME PATTERN CMD...: CMD exits non-zero with exactly one stderr line matching PATTERN.
one_line() {
    local name=$1 pattern=$2
    shift 2
    timeout 120 "$@" >"$T/out" 2>"$T/err"
    local rc=$?
    if [ $rc -ne 0 ] && [ $rc -lt 124 ] && [ "$(grep -c . "$T/err")" -eq 1 ] &&
        grep -qE "^halo: error: $pattern" "$T/err"; then ok "$name"; else
        not_ok "$name"; echo "# exit $rc, wanted one line: $pattern"; sed 's/^/# /' "$T/err" | head -5
    fi
}

"$HALO" gen sbm --nodes 300 --seed 3 -o "$T/g" >/dev/null 2>&1
"$HALO" partition "$T/g" --parts 2 -o "$T/p2" >/dev/null 2>&1

# NaN features reaching halo partition: refused before any work, no output directory.
cp -r "$T/g" "$T/gn"
printf '\x00\x00\xc0\x7f' | dd of="$T/gn/feat.f32" bs=1 seek=$((4 * 37)) conv=notrunc 2>/dev/null
one_line "halo partition refuses a NaN feature" \
    "$T/gn/feat.f32: row 1 column 5 is NaN, not a finite number" \
    "$HALO" partition "$T/gn" --parts 2 -o "$T/pn"
check "... and writes no partition" test ! -e "$T/pn"

# halo info on a partition whose part directories were swapped.
cp -r "$T/p2" "$T/ps"
mv "$T/ps/part-0" "$T/ps/tmp" && mv "$T/ps/part-1" "$T/ps/part-0" && mv "$T/ps/tmp" "$T/ps/part-1"
one_line "halo info refuses swapped part directories" "$T/ps/part-0/meta.json: " \
    "$HALO" info "$T/ps"
# ... whose orig_id file was truncated.
cp -r "$T/p2" "$T/pt"
truncate -s 100 "$T/pt/orig_id.i64"
one_line "halo info refuses a truncated orig_id.i64" \
    "$T/pt/orig_id.i64: 100 bytes, expected 2400 \(an int64 per node\)" "$HALO" info "$T/pt"
check "halo info of the intact partition works" "$HALO" info "$T/p2"

# Paths that name the wrong thing.
"$HALO" partition "$T/g" --parts 1 -o "$T/p1" >/dev/null 2>&1
one_line "--metrics into a missing directory names the directory" \
    "$T/nodir/m.jsonl: cannot write the metrics file: directory $T/nodir/ does not exist" \
    "$HALO" train "$T/p1" --epochs 1 --metrics "$T/nodir/m.jsonl"
check "... and creates nothing" test ! -e "$T/nodir"
mkdir -p "$T/pol.lua" "$T/tr"
one_line "a policy path that is a directory" "$T/pol.lua: is a directory, not a regular file" \
    "$HALO" train "$T/p1" --epochs 1 --policy "$T/pol.lua"
one_line "a trace path that is a directory" "$T/tr: is a directory, not a regular file" \
    "$HALO" trace replay "$T/tr" --policy "$P/policies/lru.lua"
done_testing
