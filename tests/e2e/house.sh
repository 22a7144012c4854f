#!/usr/bin/env bash
# The house rules (scripts/house.sh): no .c file of runtime/ over 1,000 lines, no function over
# 120 lines unless its comment says why; and the script itself sees what it must.
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh

if scripts/house.sh >"$T/house.out" 2>&1; then ok "runtime/ keeps the house rules (scripts/house.sh)"
else not_ok "runtime/ keeps the house rules (scripts/house.sh)"; grep -E '^FAIL' "$T/house.out" | sed 's/^/# /'; fi

# a long function (130 lines), a long file, and one long function whose comment says why
mkdir -p "$T/h/long" "$T/h/file" "$T/h/excused" "$T/h/short"
body() { printf '%s\n' "$1" '{' '    int s = 0;'; for i in $(seq "$2"); do echo "    s += $i; /* { } */"; done; printf '%s\n' '    return s;' '}'; }
{ echo '/* x */'; body 'int halo_x_long(void)' 126; } >"$T/h/long/x.c"
{ echo '/* x */'; for i in $(seq 120); do body "static int f$i(void)" 6; done; } >"$T/h/file/x.c"
{ echo '/* house: long because a flat table */'; body 'int halo_x_long(void)' 126; } >"$T/h/excused/x.c"
{ echo 'struct s { int a; };'; body 'int halo_x_short(int a,' 100 | sed '1a\                 int b)'; } >"$T/h/short/x.c"
check_house() {
    local name=$1 want=$2 pattern=$3 dir=$4 rc
    scripts/house.sh "$dir" >"$T/out" 2>&1
    rc=$?
    if [ "$rc" = "$want" ] && grep -E "$pattern" "$T/out" >/dev/null; then ok "$name"
    else not_ok "$name (exit $rc, wanted $want and /$pattern/)"; sed 's/^/# /' "$T/out" | tail -n 8; fi
}
check_house "a 131-line function fails" 1 "FAIL: .*/long/x.c:halo_x_long \(line 2\): 131 lines" "$T/h/long"
check_house "a file over 1,000 lines fails" 1 "FAIL: .*/file/x.c: 1321 lines" "$T/h/file"
check_house "a long function whose comment says why passes" 0 "excused: .*halo_x_long: 131 lines" "$T/h/excused"
check_house "a two-line signature counts from its first line" 0 " 106  .*short/x.c:halo_x_short \(line 2\)" "$T/h/short"
done_testing
