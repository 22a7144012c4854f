# halo train --model rgcn on a homogeneous graph (one relation): it trains, learns what GraphSAGE
# learns (same function, same initial weights), is deterministic, its checkpoints are not
# GraphSAGE's, and bad model flags fail on every rank.
. "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN="timeout -k 5 120 mpirun --oversubscribe --bind-to none"

check "generate an sbm graph" "$HALO" gen sbm -n 2000 -F 16 -C 6 -s 4 -o "$T/g"
check "partition into 2" "$HALO" partition "$T/g" --parts 2 -o "$T/p"
common="--epochs 6 --batch 128 --fanouts 5,5 --threads 1 --no-table"
run2() { $MPIRUN -np 2 "$HALO" train "$T/p" $common "$@"; }

# val accuracy of a run's last line ("... val acc X, test acc Y, ...")
val_acc() { sed -n 's/.*val acc \([0-9.]*\),.*/\1/p' "$1" | tail -1; }

check "sage trains" run2 --model sage
cp "$T/out" "$T/sage.out"
cp "$T/err" "$T/sage.err"
# GraphSAGE's hidden and rate, so that both compute the same function from the same weights
check "rgcn trains" run2 --model rgcn --hidden 16 --lr 0.003
cp "$T/out" "$T/rgcn.out"
s=$(val_acc "$T/sage.out")
r=$(val_acc "$T/rgcn.out")
# chance is 1/6; both must learn, and with one relation they compute the same function
if [ -n "$s" ] && [ -n "$r" ] && awk -v s="$s" -v r="$r" \
    'BEGIN { d = s - r; if (d < 0) d = -d; exit !(r > 0.25 && d <= 0.03) }'; then
    ok "rgcn with one relation learns as sage does (val acc $r vs $s)"
else
    not_ok "rgcn with one relation learns as sage does (val acc '$r' vs '$s')"
fi
if grep -q '^halo\[0\]: train: .*model rgcn, hidden 16' "$T/err" && \
    grep -q '^halo\[0\]: train: .*model sage, hidden 16' "$T/sage.err"; then
    ok "the run says which model it trains"
else
    not_ok "the run says which model it trains"
fi
check "rgcn again" run2 --model rgcn --hidden 16 --lr 0.003
if [ "$(grep -o 'params [0-9a-f]*' "$T/out")" = "$(grep -o 'params [0-9a-f]*' "$T/rgcn.out")" ]; then
    ok "the same rgcn run twice gives the same weights"
else
    not_ok "the same rgcn run twice gives the same weights"
fi

check "rgcn with its own defaults" run2 --model rgcn --epochs 1
if grep -q '^halo\[0\]: train: .*batch 128 (local), model rgcn, hidden 64' "$T/err"; then
    ok "rgcn's defaults are hidden 64 (a given --batch wins)"
else
    not_ok "rgcn's defaults are hidden 64 (a given --batch wins)"; grep 'train:' "$T/err" | head -2
fi

check "sage checkpoint" run2 --model sage --epochs 2 --checkpoint "$T/ck"
check_fails "an rgcn run does not resume a sage checkpoint" "another configuration" \
    run2 --model rgcn --epochs 3 --checkpoint "$T/ck" --resume
check_fails "more bases than relations" "bases must be in \[0, relations = 1\]" \
    run2 --model rgcn --bases 2
if [ "$(grep -c '^halo: error: .*model: rgcn bases' "$T/err")" -eq 1 ]; then
    ok "... said once for both ranks"
else
    not_ok "... said once for both ranks"; sed 's/^/# /' "$T/err" | head -5
fi
check_fails "an unknown model" "--model: expected sage, rgcn or gat, got 'gcn'" \
    run2 --model gcn
done_testing
