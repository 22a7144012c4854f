#!/usr/bin/env bash
# End-to-end: topology-only graphs (halo gen --no-features) through gen, verify, info, partition,
# trace record, and their refusal by halo train / halo sample on every rank.
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# same_files NAME DIR1 DIR2 FILE...: passes when every FILE is byte-identical in both directories.
same_files() {
    local name=$1 a=$2 b=$3 f
    shift 3
    for f in "$@"; do
        if ! cmp -s "$a/$f" "$b/$f"; then
            not_ok "$name"; echo "# $a/$f and $b/$f differ"; return
        fi
    done
    ok "$name"
}

# no_file NAME PATH...: passes when none of the paths exists.
no_file() {
    local name=$1 p
    shift
    for p in "$@"; do
        if [ -e "$p" ]; then not_ok "$name"; echo "# $p exists"; return; fi
    done
    ok "$name"
}

G="--preset products --scale 0.002 --seed 7"
check_out "gen --no-features" "100 features \(topology-only" "$HALO" gen $G --no-features -o "$T/g0"
check "gen with features, same seed" "$HALO" gen $G -o "$T/g1"
no_file "a topology-only graph has no feat.f32" "$T/g0/feat.f32"
same_files "same indptr, indices, labels and split as the featured graph" "$T/g0" "$T/g1" \
    indptr.i64 indices.i32 label.i32 split.u8
check_out "meta.json keeps the declared width" '"feat_dim": 100' cat "$T/g0/meta.json"
check_out "meta.json says features: false" '"features": false' cat "$T/g0/meta.json"
if grep -q '"features"' "$T/g1/meta.json"; then not_ok "a featured meta.json is as before"
else ok "a featured meta.json is as before"; fi
check_out "verify accepts it" "ok \(4898 nodes, [0-9]+ edges, topology-only; .* 4 files\)" \
    "$HALO" verify "$T/g0"
check_out "info says topology-only" "^features +topology-only.*declared width 100" \
    "$HALO" info "$T/g0"
check_out "gen rmat --no-features" "features \(topology-only" \
    "$HALO" gen rmat --scale 10 --edge-factor 8 --no-features -o "$T/r0"
check "gen rmat with features" "$HALO" gen rmat --scale 10 --edge-factor 8 -o "$T/r1"
no_file "rmat: no feat.f32" "$T/r0/feat.f32"
same_files "rmat: same topology as with features" "$T/r0" "$T/r1" indptr.i64 indices.i32 label.i32
check "gen sbm --no-features --directed" "$HALO" gen sbm --nodes 2000 --directed --no-features -o "$T/s0"
check "verify sbm --no-features" "$HALO" verify "$T/s0"

# The spilled generator (a CSR over HALO_GEN_MAX_BYTES goes through bucket files, as papers100M
# at scale 1 does) writes the same files as the in-memory one.
check "gen, spilled into many buckets" env HALO_GEN_MAX_BYTES=20000 "$HALO" gen $G --no-features -o "$T/g0s"
same_files "the spilled generator writes the same files" "$T/g0" "$T/g0s" \
    meta.json indptr.i64 indices.i32 label.i32 split.u8
check "gen rmat --directed, spilled" env HALO_GEN_MAX_BYTES=1000 "$HALO" gen rmat --scale 10 --edge-factor 8 --directed -o "$T/rds"
check "gen rmat --directed in memory" "$HALO" gen rmat --scale 10 --edge-factor 8 --directed -o "$T/rdm"
same_files "spilled directed rmat with features is the same" "$T/rds" "$T/rdm" \
    meta.json indptr.i64 indices.i32 feat.f32 label.i32 split.u8

# Partitions: no feat.f32 anywhere, the same arrays as the featured graph's partition.
for m in stream metis; do
    check "partition --method $m (topology-only)" "$HALO" partition "$T/g0" --parts 3 --method $m -o "$T/p0-$m"
    check "partition --method $m (features)" "$HALO" partition "$T/g1" --parts 3 --method $m -o "$T/p1-$m"
    no_file "$m: parts have no feat.f32" "$T/p0-$m"/part-{0,1,2}/feat.f32
    same_files "$m: same parts as the featured partition" "$T/p0-$m" "$T/p1-$m" orig_id.i64 \
        part-{0,1,2}/{indptr.i64,indices.i32,label.i32,split.u8,halo.i32,halo_deg.i32,train.i32}
done
P0=$T/p0-stream P1=$T/p1-stream
# Parts written in groups (one pass over the graph per group; here one part per pass).
check "partition with one part per write pass" env HALO_PART_WRITE_BYTES=1 "$HALO" partition "$T/g1" \
    --parts 3 --method stream -o "$T/p1-grouped"
same_files "grouped writing gives the same parts" "$P1" "$T/p1-grouped" orig_id.i64 \
    part-{0,1,2}/{meta.json,indptr.i64,indices.i32,feat.f32,label.i32,split.u8,halo.i32,halo_deg.i32,train.i32}
check_out "partition.json says features: false" '"features": false' cat "$P0/partition.json"
check_out "part meta.json says features: false" '"features": false' cat "$P0/part-1/meta.json"
check_out "info on the partition says topology-only" "100 features declared, topology-only" \
    "$HALO" info "$P0"
# trace record needs topology only: same trace as on the featured partition.
check "trace record on a topology-only partition" "$HALO" trace record "$P0" -o "$T/t0" --epochs 1
check "trace record on the featured partition" "$HALO" trace record "$P1" -o "$T/t1" --epochs 1
if cmp -s "$T/t0" "$T/t1"; then ok "the two traces are identical"; else not_ok "the two traces are identical"; fi

# halo train and halo sample refuse it: one line, and all ranks exit.
line='topology-only partition \(made with --no-features\): halo train needs features'
# refused NAME CMD...: CMD exits non-zero (not by a signal) and each of the 2 ranks says the line.
refused() {
    local name=$1
    shift
    "$@" >"$T/out" 2>"$T/err"
    local rc=$? ranks
    ranks=$(grep -E "^halo(\[[0-9]+\])?: error: rank [0-9]+: .*$line" "$T/err" |
        sed -E 's/.*error: rank ([0-9]+):.*/\1/' | sort -u | wc -l)
    if [ $rc -ne 0 ] && [ $rc -lt 128 ] && [ "$ranks" -eq 2 ]; then ok "$name"; else
        not_ok "$name"; echo "# command: $* (exit $rc), $ranks of 2 ranks said: $line"
        sed 's/^/# /' "$T/err" | tail -n 20
    fi
}
MPI="mpirun --timeout 60 --oversubscribe --bind-to none -np 2"
check "partition it into 2 parts" "$HALO" partition "$T/g0" --parts 2 --method stream -o "$T/p0-2"
# train agrees on the error and says it once for both ranks (docs/cli.md, "Errors")
$MPI "$HALO" train "$T/p0-2" --epochs 1 >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -ne 0 ] && [ $rc -lt 128 ] && [ "$(grep -c "error:" "$T/err")" = 1 ] &&
    grep -qE "^halo: error: .*$line" "$T/err"; then ok "train refuses it, said once for both ranks"
else not_ok "train refuses it, said once for both ranks (exit $rc)"; sed 's/^/# /' "$T/err" | tail -n 20; fi
refused "sample refuses it on every rank" $MPI "$HALO" sample "$T/p0-2"
check_fails "the refusal comes before the rank count check (1 rank, 3 parts)" "$line" \
    "$HALO" train "$T/p0-metis" --epochs 1

# Claiming features without feat.f32 is an error, for a graph and for a part.
cp -r "$T/g1" "$T/g-nofeat"
rm "$T/g-nofeat/feat.f32"
check_fails "verify refuses a graph that claims features but lacks feat.f32" \
    "feat.f32: missing, and meta.json does not say the graph is topology-only" \
    "$HALO" verify "$T/g-nofeat"
check_fails "partition refuses it too" "feat.f32: missing" \
    "$HALO" partition "$T/g-nofeat" --parts 2 --method stream -o "$T/p-bad"
cp -r "$P1" "$T/p-nofeat"
rm "$T/p-nofeat/part-1/feat.f32"
check_fails "a part that claims features but lacks feat.f32 is refused" \
    "part-1/feat.f32: missing" "$HALO" trace record "$T/p-nofeat" -o "$T/t2"
done_testing
