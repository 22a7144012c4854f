# halo sample under mpirun: counts on 2 and 4 ranks, netem, and invariant 5 (a rank with bad
# input, a wrong rank count, or a killed rank ends the whole job quickly, naming the rank).
. "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN="timeout -k 5 60 mpirun --oversubscribe --bind-to none"

check "generate a small graph" "$HALO" gen sbm -n 4000 -s 5 -F 16 -o "$T/g"
check "partition into 2" "$HALO" partition "$T/g" --parts 2 --method random -o "$T/p2"
check "partition into 4" "$HALO" partition "$T/g" --parts 4 --method random -o "$T/p4"

check_out "sample on 2 ranks prints totals" '^total +[0-9]+ +[1-9][0-9]* +[1-9][0-9]* +[1-9]' \
    $MPIRUN -np 2 "$HALO" sample "$T/p2" --fanouts 5,10 --batch 100 --epochs 1
check_out "sample on 4 ranks over tcp prints totals" '^total +[0-9]+ +[1-9][0-9]* +[1-9]' \
    $MPIRUN -np 4 --mca btl tcp,self "$HALO" sample "$T/p4" --fanouts 5,10 --batch 100 --epochs 1

# The same counts whatever the transport and netem (netem changes time only).
$MPIRUN -np 2 "$HALO" sample "$T/p2" --batch 100 --batches 3 >"$T/a" 2>/dev/null
$MPIRUN -np 2 --mca btl tcp,self "$HALO" sample "$T/p2" --batch 100 --batches 3 \
    --netem lat=10ms,bw=1Gbit >"$T/b" 2>/dev/null
counts() { awk '/^(rank|[0-9]|total)/ { print $1, $2, $3, $4, $5, $6 }' "$1"; }
if [ -n "$(counts "$T/a")" ] && [ "$(counts "$T/a")" = "$(counts "$T/b")" ]; then
    ok "counts equal with netem and over tcp"
else
    not_ok "counts equal with netem and over tcp"; diff <(counts "$T/a") <(counts "$T/b") | sed 's/^/# /'
fi
# 3 batches x (2 layers + 1 pull) x 2 exchanges, each at least 10 ms
if awk '/^wall/ { w = $2 } END { exit !(w >= 0.18) }' "$T/b"; then ok "netem time is waited"; else
    not_ok "netem time is waited"; sed 's/^/# /' "$T/b"; fi

check_fails "bad usage names the flag" "--fanouts" "$HALO" sample "$T/p2" --fanouts 3,x

# Rank 1 reads a truncated array: the job ends at once with one line naming rank 1 and the file.
cp -r "$T/p2" "$T/bad"
truncate -s 100 "$T/bad/part-1/feat.f32"
start=$(date +%s)
check_fails "a rank with bad input ends the job naming it" "rank 1: .*part-1/feat.f32" \
    $MPIRUN -np 2 "$HALO" sample "$T/bad"
if [ $(($(date +%s) - start)) -le 20 ]; then ok "the failing job ends quickly"; else
    not_ok "the failing job ends quickly"; fi

check_fails "wrong rank count is named" "2 parts but 3 ranks" $MPIRUN -np 3 "$HALO" sample "$T/p2"

# A rank killed mid-run: mpirun ends every rank and names the dead one.
$MPIRUN -np 2 "$HALO" sample "$T/p2" --batch 50 --epochs 100000 --netem lat=2ms \
    >"$T/out" 2>"$T/err" &
job=$!
sleep 2
victim=""
for p in $(pgrep -P "$(pgrep -P $job | head -n 1)" 2>/dev/null); do victim=$p; done
start=$(date +%s)
[ -n "$victim" ] && kill -9 "$victim"
wait $job
rc=$?
took=$(($(date +%s) - start))
if [ -n "$victim" ] && [ $rc -ne 0 ] && [ $took -le 20 ] && grep -qi "rank" "$T/err"; then
    ok "a killed rank ends the job within seconds"
else
    not_ok "a killed rank ends the job within seconds"
    echo "# victim=$victim rc=$rc took=${took}s"; sed 's/^/# /' "$T/err" | tail -n 5
fi

done_testing
