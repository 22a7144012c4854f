#!/usr/bin/env bash
# A cluster of N hosts on one machine: each host a network namespace (its own address, loopback,
# host name), all joined by a bridge in a switch namespace, links optionally shaped with tbf, and
# an mpirun wrapper that launches ranks on the hosts through an rsh agent, as on a real cluster.
# See docs/cluster.md.
#
#   scripts/cluster.sh up N [--rate R] [--prefix P] [--slots S] [--subnet A.B.C] [--dir D]
#   scripts/cluster.sh down   [--prefix P | --dir D]
#   scripts/cluster.sh status [--prefix P | --dir D]
#   scripts/cluster.sh exec   [--prefix P | --dir D] [--host K] -- CMD...
#
# `up` prints the cluster's directory; in it: hostfile, agent (the rsh agent), mpirun (runs
# mpirun inside host 0 with the agent, the hostfile and TCP restricted to the cluster subnet),
# env (PREFIX, HOSTS, SUBNET, ...), made (what `down` removes). Needs root and `ip netns`;
# without them it prints one line and exits 77 (tests report a skip).
set -u

die() { echo "cluster: error: $*" >&2; exit 1; }
usage() { sed -n '2,16s/^# \{0,1\}//p' "$0"; }

cmd=${1:-}
[ -n "$cmd" ] || { usage >&2; exit 2; }
shift
case "$cmd" in -h | --help | help) usage; exit 0 ;; esac

n="" rate="" prefix="" slots=4 subnet=10.250.0 dir="" host=0
if [ "$cmd" = up ]; then
    n=${1:-}
    shift || true
    case "$n" in '' | *[!0-9]*) die "up: N must be a number of hosts (got '${n}')" ;; esac
    [ "$n" -ge 1 ] && [ "$n" -le 64 ] || die "up: N must be 1..64 (got $n)"
fi
while [ $# -gt 0 ]; do
    case "$1" in
    --rate) rate=${2:-}; shift 2 || die "--rate needs a value" ;;
    --prefix) prefix=${2:-}; shift 2 || die "--prefix needs a value" ;;
    --slots) slots=${2:-}; shift 2 || die "--slots needs a value" ;;
    --subnet) subnet=${2:-}; shift 2 || die "--subnet needs a value" ;;
    --dir) dir=${2:-}; shift 2 || die "--dir needs a value" ;;
    --host) host=${2:-}; shift 2 || die "--host needs a value" ;;
    --) shift; break ;;
    *) die "$cmd: unknown argument '$1' (see scripts/cluster.sh --help)" ;;
    esac
done

# Root and network namespaces, or one line and exit 77.
need_netns() {
    local why=""
    if [ "$(id -u)" != 0 ]; then why="not root"
    elif ! command -v ip >/dev/null 2>&1; then why="no ip command"
    elif ! command -v unshare >/dev/null 2>&1; then why="no unshare command"
    elif ! ip netns list >/dev/null 2>&1; then why="ip netns does not work here"
    fi
    if [ -n "$why" ]; then
        echo "cluster: needs root and network namespaces ($why)" >&2
        exit 77
    fi
}

# The directory of a cluster from --dir or --prefix.
find_dir() {
    if [ -z "$dir" ]; then
        [ -n "$prefix" ] || die "$cmd: give --prefix P or --dir D"
        dir=${TMPDIR:-/tmp}/halo-cluster-$prefix
    fi
    [ -f "$dir/env" ] || die "$cmd: no cluster at $dir (no env file)"
    # shellcheck disable=SC1091
    . "$dir/env"
}

case "$cmd" in
up)
    need_netns
    [ -n "$prefix" ] || prefix=hc$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
    [[ "$prefix" =~ ^[A-Za-z][A-Za-z0-9_]{0,11}$ ]] ||
        die "up: --prefix must be a letter then up to 11 letters, digits or _ (got '$prefix')"
    [[ "$subnet" =~ ^(10|192\.168|172\.(1[6-9]|2[0-9]|3[01]))(\.[0-9]{1,3}){0,2}$ ]] &&
        [ "$(echo "$subnet" | tr -cd . | wc -c)" = 2 ] ||
        die "up: --subnet must be the first three numbers of a private /24 (got '$subnet')"
    case "$slots" in '' | *[!0-9]*) die "up: --slots must be a number (got '$slots')" ;; esac
    if [ -n "$rate" ] && ! [[ "$rate" =~ ^[0-9]+(\.[0-9]+)?([kmgt]?bit|[kmgt]?bps)$ ]]; then
        die "up: --rate must be a tc rate such as 1gbit or 500mbit (got '$rate')"
    fi
    [ -n "$dir" ] || dir=${TMPDIR:-/tmp}/halo-cluster-$prefix
    [ -e "$dir" ] && die "up: $dir exists (a cluster with prefix $prefix is up? run down first)"
    for ns in "$prefix-sw" "$prefix-h0"; do
        ip netns list | awk '{print $1}' | grep -qx "$ns" && die "up: namespace $ns exists"
    done
    mkdir -p "$dir" || die "up: cannot create $dir"
    made=$dir/made
    : >"$made"
    fail_up() { echo "cluster: error: up: $*" >&2; "$0" down --dir "$dir" >/dev/null 2>&1; exit 1; }
    trap 'fail_up "interrupted"' INT TERM
    sw=$prefix-sw
    ip netns add "$sw" || fail_up "ip netns add $sw"
    echo "netns $sw" >>"$made"
    ip -n "$sw" link set lo up
    ip -n "$sw" link add br0 type bridge || fail_up "bridge in $sw"
    ip -n "$sw" link set br0 up
    hosts=""
    : >"$dir/hostfile"
    for ((k = 0; k < n; k++)); do
        h=$prefix-h$k
        ip netns add "$h" || fail_up "ip netns add $h"
        echo "netns $h" >>"$made"
        ip link add eth0 netns "$h" type veth peer name "p$k" netns "$sw" ||
            fail_up "veth for $h"
        ip -n "$sw" link set "p$k" master br0 up
        ip -n "$h" link set lo up
        ip -n "$h" addr add "$subnet.$((k + 1))/24" dev eth0 || fail_up "address of $h"
        ip -n "$h" link set eth0 up
        if [ -n "$rate" ]; then
            # both directions of the host's link: what it sends, and what the switch sends it
            tc -n "$h" qdisc add dev eth0 root tbf rate "$rate" burst 128kb latency 100ms &&
                tc -n "$sw" qdisc add dev "p$k" root tbf rate "$rate" burst 128kb latency 100ms ||
                fail_up "tbf on $h"
        fi
        echo "$h slots=$slots" >>"$dir/hostfile"
        hosts="$hosts $h"
    done
    cat >"$dir/agent" <<'EOF'
#!/bin/sh
# rsh agent for mpirun (--mca plm_rsh_agent): agent [OPTIONS] HOST COMMAND... runs COMMAND
# (joined as ssh would) in HOST's network namespace with HOST as its host name.
while [ $# -gt 0 ]; do case "$1" in -*) shift ;; *) break ;; esac; done
host=$1
shift
exec ip netns exec "$host" unshare --uts sh -c 'hostname "$0" && exec sh -c "$1"' "$host" "$*"
EOF
    cat >"$dir/mpirun" <<EOF
#!/bin/sh
# mpirun on this cluster: started inside $prefix-h0, ranks placed by the hostfile and launched
# through the rsh agent, MPI and its runtime over TCP on $subnet.0/24 only.
exec ip netns exec $prefix-h0 unshare --uts sh -c 'hostname $prefix-h0 && exec mpirun "\$@"' sh \\
    --hostfile $dir/hostfile --mca plm_rsh_agent $dir/agent \\
    --mca pml ob1 --mca btl tcp,self \\
    --mca btl_tcp_if_include $subnet.0/24 --mca oob_tcp_if_include $subnet.0/24 "\$@"
EOF
    chmod +x "$dir/agent" "$dir/mpirun"
    cat >"$dir/env" <<EOF
PREFIX=$prefix
HOSTS="${hosts# }"
NHOSTS=$n
SUBNET=$subnet
RATE=$rate
SLOTS=$slots
CLUSTER_DIR=$dir
EOF
    trap - INT TERM
    echo "$dir"
    ;;
down)
    need_netns
    find_dir
    killed=0
    # processes left in the cluster's namespaces (a daemon cut off by a downed link) end first:
    # deleting a namespace only unlinks its name while processes hold it
    for sig in TERM KILL; do
        while read -r what name; do
            [ "$what" = netns ] || continue
            for pid in $(ip netns pids "$name" 2>/dev/null); do
                kill -s "$sig" "$pid" 2>/dev/null && killed=$((killed + 1))
            done
        done <"$dir/made"
        [ "$sig" = TERM ] && [ "$killed" -gt 0 ] && sleep 1
    done
    removed=0
    while read -r what name; do
        [ "$what" = netns ] || continue
        ip netns del "$name" 2>/dev/null && removed=$((removed + 1))
    done <"$dir/made"
    rm -f "$dir/made" "$dir/env" "$dir/hostfile" "$dir/agent" "$dir/mpirun"
    rmdir "$dir" 2>/dev/null || echo "cluster: note: $dir kept (it holds other files)" >&2
    echo "cluster $PREFIX down: $removed namespaces removed, $killed signals sent to processes left"
    ;;
status)
    need_netns
    find_dir
    echo "cluster $PREFIX: $NHOSTS hosts on $SUBNET.0/24, rate ${RATE:-unshaped}, dir $CLUSTER_DIR"
    for h in $HOSTS; do
        addr=$(ip -n "$h" -4 -o addr show dev eth0 2>/dev/null | awk '{print $4}')
        state=$(ip -n "$h" -o link show dev eth0 2>/dev/null | grep -q 'state UP\|,UP' && echo up || echo down)
        q=$(tc -n "$h" qdisc show dev eth0 2>/dev/null | awk '/tbf/ {print "tbf", $8; exit}')
        np=$(ip netns pids "$h" 2>/dev/null | wc -l)
        echo "  $h ${addr:-no-address} link $state ${q:-no-shaping} processes $np"
    done
    ;;
exec)
    need_netns
    find_dir
    [ $# -gt 0 ] || die "exec: give a command after --"
    case "$host" in '' | *[!0-9]*) die "exec: --host must be a host number" ;; esac
    [ "$host" -lt "$NHOSTS" ] || die "exec: host $host out of 0..$((NHOSTS - 1))"
    h=$PREFIX-h$host
    exec ip netns exec "$h" unshare --uts sh -c 'hostname "$0" && exec "$@"' "$h" "$@"
    ;;
*)
    die "unknown command '$cmd' (up, down, status, exec)"
    ;;
esac
