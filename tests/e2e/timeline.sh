#!/usr/bin/env bash
# halo timeline: draws a timeline file as a PNG, reports hidden time, refuses bad input.
source "$(dirname "$0")/lib.sh"

# A two-rank, depth-2 pipeline written by hand: sample 10 ms, fetch 15 ms, compute 20 ms per
# batch; fetch of batch b+1 runs while batch b computes.
tl="$T/tl.jsonl"
: >"$tl"
for r in 0 1; do
    for b in 0 1 2 3 4 5 6 7 8 9; do
        s0=$(awk -v b=$b 'BEGIN { printf "%.3f", b * 0.020 }')
        s1=$(awk -v b=$b 'BEGIN { printf "%.3f", b * 0.020 + 0.010 }')
        f1=$(awk -v b=$b 'BEGIN { printf "%.3f", b * 0.020 + 0.025 }')
        c1=$(awk -v b=$b 'BEGIN { printf "%.3f", b * 0.020 + 0.045 }')
        echo "{\"rank\":$r,\"epoch\":0,\"batch\":$b,\"stage\":\"sample\",\"thread\":0,\"start\":$s0,\"end\":$s1}" >>"$tl"
        echo "{\"rank\":$r,\"epoch\":0,\"batch\":$b,\"stage\":\"fetch\",\"thread\":0,\"start\":$s1,\"end\":$f1}" >>"$tl"
        echo "{\"rank\":$r,\"epoch\":0,\"batch\":$b,\"stage\":\"compute\",\"thread\":0,\"start\":$f1,\"end\":$c1}" >>"$tl"
    done
done

check "timeline draws a png" "$HALO" timeline "$tl" -o "$T/tl.png"
check "the png is a png" bash -c "head -c 8 '$T/tl.png' | od -An -tx1 | grep -q '89 50 4e 47 0d 0a 1a 0a'"
check "no temporary file is left" bash -c "! ls '$T'/tl.png.tmp-* 2>/dev/null"
check_out "timeline reports ranks, batches and span" "2 ranks, 10 batches, span 0.225 s" \
    "$HALO" timeline "$tl" -o "$T/tl2.png"
# fetch of batch b (b*20+10 .. b*20+25 ms) overlaps compute of b-1 (b*20+5 .. b*20+25): all of
# it for b >= 1, none for b = 0: 9 of 10 batches hidden = 90%
check_out "timeline measures the hidden share of fetch" "fetch +0.1500 +90.0%" \
    "$HALO" timeline "$tl" -o "$T/tl3.png"
check "timeline writes the gnuplot script" "$HALO" timeline "$tl" --script "$T/tl.gp"
check "the script holds every event" bash -c "[ \$(sed -n '/^\\\$D << EOD/,/^EOD/p' '$T/tl.gp' | wc -l) -eq 62 ]"

echo '{"rank":0,"batch":1,"stage":"x","start":1,"end":2}' >"$T/bad.jsonl"
echo '{"rank":0,"batch":2,"stage":"x","start":3}' >>"$T/bad.jsonl"
check_fails "a line without end is an error naming FILE:LINE" "bad.jsonl:2" \
    "$HALO" timeline "$T/bad.jsonl" -o "$T/bad.png"
check "no png is written for bad input" test ! -e "$T/bad.png"
echo 'not json' >"$T/bad2.jsonl"
check_fails "a line that is not JSON is an error" "bad2.jsonl:1" \
    "$HALO" timeline "$T/bad2.jsonl" -o "$T/bad.png"
check_fails "an epoch with no events is an error" "no events of epoch 7" \
    "$HALO" timeline "$tl" -o "$T/bad.png" --epoch 7
check_fails "a missing file is an error" "nope.jsonl" "$HALO" timeline "$T/nope.jsonl" -o "$T/x.png"
"$HALO" timeline "$tl" >/dev/null 2>&1
[ $? -eq 2 ] && ok "no -o is a usage error (exit 2)" || not_ok "no -o is a usage error (exit 2)"
done_testing
