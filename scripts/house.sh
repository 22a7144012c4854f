#!/usr/bin/env bash
# The house rules of runtime/: prints the largest .c files and the longest functions, and fails
# when a file or a function is over its limit.
#
#   usage: scripts/house.sh [--top N] [DIR...]      (default DIR: runtime)
#
# Limits: a .c file holds at most MAX_FILE lines (1,000); a function at most MAX_FUNC lines
# (120), counted from the first line of its signature to its closing brace. A longer function is
# accepted when the comment above it (or its signature) says why with the marker
#
#     /* house: long because <reason> */        e.g. "a flat dispatch table", "a generated table"
#
# Functions are found by counting braces over the code with comments, strings and character
# literals blanked: a '{' at depth 0 whose header (the text since the last ';', '}' or
# preprocessor line at depth 0) ends in ')' opens a function definition; its name is the
# identifier before the header's first '('. Struct, enum and initializer braces do not end in ')'.
#
# Exit status: 0 when every file and function is within its limit or on the allow-list below,
# 1 when one is over, 2 on a usage error.
set -u
cd "$(dirname "$0")/.." || exit 2

MAX_FILE=1000
MAX_FUNC=120
TOP=10

# Files and functions over the limits that other work is splitting right now, with who owns the
# split. Each entry is a path (a file over MAX_FILE; it covers the file's functions too) or
# PATH:FUNCTION (a function over MAX_FUNC). Remove an entry once its split is merged; the script says when an entry is no
# longer needed ("allow-list entry no longer needed").
ALLOW=()

usage() {
    sed -n '2,4p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

dirs=()
while [ $# -gt 0 ]; do
    case "$1" in
    --top)
        if [ $# -lt 2 ] || ! [[ "$2" =~ ^[0-9]+$ ]]; then usage; fi
        TOP=$2
        shift 2
        ;;
    -h | --help)
        sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    -*) usage ;;
    *)
        [ -d "$1" ] || { echo "house.sh: error: $1: no such directory" >&2; exit 2; }
        dirs+=("$1")
        shift
        ;;
    esac
done
[ ${#dirs[@]} -gt 0 ] || dirs=(runtime)

files=$(find "${dirs[@]}" -name '*.c' -type f | sort)
[ -n "$files" ] || { echo "house.sh: error: no .c file under ${dirs[*]}" >&2; exit 2; }

# allowed KEY: whether KEY (a path or PATH:FUNCTION) is on the allow-list.
allowed() {
    local a
    for a in "${ALLOW[@]}"; do
        [ "$a" = "$1" ] && return 0
    done
    return 1
}

# One line per function: LINES PATH:FUNCTION START EXCUSED(0/1).
# shellcheck disable=SC2086
funcs=$(awk '
function flush_header() { header = ""; raw = "" }
FNR == 1 { depth = 0; incomment = 0; flush_header() }
{
    line = $0
    rawline = $0
    # blank block comments (possibly spanning lines), line comments, strings and chars
    out = ""
    i = 1
    n = length(line)
    while (i <= n) {
        c = substr(line, i, 1)
        if (incomment) {
            if (substr(line, i, 2) == "*/") { incomment = 0; i += 2 } else { i++ }
            continue
        }
        if (substr(line, i, 2) == "/*") { incomment = 1; i += 2; out = out " "; continue }
        if (substr(line, i, 2) == "//") { break }
        if (c == "\"" || c == "\x27") {
            q = c; i++
            while (i <= n && substr(line, i, 1) != q) { i += (substr(line, i, 1) == "\\") ? 2 : 1 }
            i++; out = out "\"\""; continue
        }
        out = out c; i++
    }
    if (depth == 0 && out ~ /^[ \t]*#/) { flush_header(); next }
    if (depth == 0) { raw = raw "\n" rawline }
    for (i = 1; i <= length(out); i++) {
        c = substr(out, i, 1)
        if (c == "{") {
            if (depth == 0) {
                h = header
                gsub(/[ \t\n]+/, " ", h)
                sub(/ +$/, "", h)
                infunc = (h ~ /\)$/ || h ~ /\) *__attribute__ *\(\(.*\)\)$/)
                if (infunc) {
                    name = h
                    sub(/\(.*/, "", name)
                    sub(/.*[^A-Za-z0-9_]/, "", name)
                    start = hstart
                    excused = (raw ~ /house: long because/) ? 1 : 0
                }
            }
            depth++
        } else if (c == "}") {
            depth--
            if (depth == 0) {
                if (infunc) { print (FNR - start + 1), FILENAME ":" name, start, excused }
                infunc = 0
                flush_header()
            }
        } else if (depth == 0) {
            if (c == ";") { flush_header() }
            else {
                if (header ~ /^[ \t\n]*$/ && c !~ /[ \t]/) { hstart = FNR }
                header = header c
            }
        }
    }
    if (depth == 0) { header = header "\n" }
}' $files)

fail=0
echo "# the largest .c files (limit $MAX_FILE lines)"
# shellcheck disable=SC2086
wc -l $files | grep -v ' total$' | sort -rn | head -n "$TOP" | awk '{ printf "%6d  %s\n", $1, $2 }'
echo "# the longest functions (limit $MAX_FUNC lines)"
echo "$funcs" | sort -rn | head -n "$TOP" | awk '{ printf "%6d  %s (line %d)%s\n", $1, $2, $3, $4 ? " excused" : "" }'

echo "# over the limits"
over=0
# shellcheck disable=SC2086
while read -r n f; do
    [ "$n" -gt "$MAX_FILE" ] || continue
    over=1
    if allowed "$f"; then echo "allowed: $f: $n lines (on the allow-list)"
    else echo "FAIL: $f: $n lines, over $MAX_FILE"; fail=1; fi
done < <(wc -l $files | grep -v ' total$')
while read -r n key start excused; do
    if [ -z "$n" ] || [ "$n" -le "$MAX_FUNC" ]; then continue; fi
    over=1
    if [ "$excused" = 1 ]; then echo "excused: $key: $n lines (its comment says why)"
    elif allowed "$key" || allowed "${key%%:*}"; then echo "allowed: $key: $n lines (on the allow-list)"
    else echo "FAIL: $key (line $start): $n lines, over $MAX_FUNC"; fail=1; fi
done <<<"$funcs"
[ "$over" = 1 ] || echo "none"

echo "# allow-list (${#ALLOW[@]} entries)"
for a in "${ALLOW[@]}"; do
    f=${a%%:*}
    if [ "$f" = "$a" ]; then
        if [ -f "$f" ] && [ "$(wc -l <"$f")" -gt "$MAX_FILE" ]; then echo "  $a"
        else echo "  $a: allow-list entry no longer needed"; fi
    else
        n=$(echo "$funcs" | awk -v k="$a" '$2 == k { print $1; exit }')
        if [ -n "$n" ] && [ "$n" -gt "$MAX_FUNC" ]; then echo "  $a"
        else echo "  $a: allow-list entry no longer needed"; fi
    fi
done
if [ "$fail" = 0 ]; then echo "house: ok"; else echo "house: over the limits (see FAIL lines)"; fi
exit "$fail"
