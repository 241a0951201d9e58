#!/usr/bin/env bash
# up.sh - start a throw-away Slurm 22.05 cluster on this one machine (no systemd).
#
#   BASE=/tmp/hpctrain-cluster MODE=single|multi|netns NODES=2 tests/cluster/up.sh
#   export SLURM_CONF=$BASE/etc/slurm.conf        # what up.sh prints last
#   BASE=... tests/cluster/down.sh                # stops exactly what up.sh started
#
# MODE=single (default): one slurmd named after this host.
# MODE=multi:  NODES slurmds n1..nN on this host (`slurmd -N nX`, one Port= each).
# MODE=netns:  NODES slurmds node1..nodeN, each in its own network, UTS and mount
#              namespace with its own hostname and IP, on a private bridge.
#              $BASE/local is each node's own node-local scratch (a bind
#              mount of $BASE/nodes/NODE/local in the node's namespace).
# Every node has NGPUS fake GPUs: character devices (major 195) under
# $BASE/dev, which is all gres/gpu needs to hand out CUDA_VISIBLE_DEVICES.
# MAX_ARRAY_SIZE sets MaxArraySize (Slurm's default, 1001, unless given);
# SLURMD_TIMEOUT sets SlurmdTimeout (Slurm's 300 s unless given): how
# long a node may stay silent before slurmctld sets it DOWN.
#
# Several clusters may run at once (concurrent `make check`s): each claims
# a slot under /tmp/hpctrain-cluster-slots (under a lock) that picks its
# ports, bridge, namespace names and subnet, and its first job id: two
# clusters never run jobs of the same id, so a job's key (and the
# MASTER_PORT launch derives from it) differs between them.  munge: a munged that answers
# on the default socket is reused and never stopped; otherwise a private
# one runs on $BASE/munge-run/munge.sock (AuthInfo=socket=...), so no
# cluster's teardown can pull munge from under another.
# Idempotent: a second call with the same BASE just waits for the nodes.
# Runs as root (mknod, setpriv, namespaces).
set -euo pipefail
BASE=${BASE:-/tmp/hpctrain-cluster}
MODE=${MODE:-single}
NODES=${NODES:-2}
NGPUS=${NGPUS:-4}
CPUS=${CPUS:-8}   # advertised per node; SlurmdParameters=config_overrides allows more than real cores
MEM=${MEM:-4000}  # MB per node
MAX_ARRAY_SIZE=${MAX_ARRAY_SIZE:-1001}
SLURMD_TIMEOUT=${SLURMD_TIMEOUT:-300}
SLOTS=/tmp/hpctrain-cluster-slots
H=$(hostname -s)
say() { echo "[cluster-up] $*" >&2; }
die() { echo "[cluster-up] error: $*" >&2; exit 1; }

case $MODE in
single) NODES=1 ;;
multi | netns) [ "$NODES" -ge 1 ] && [ "$NODES" -le 16 ] || die "NODES must be 1..16" ;;
*) die "unknown MODE=$MODE (single, multi or netns)" ;;
esac
[ "$(id -u)" -eq 0 ] || die "must run as root (daemons, mknod, namespaces)"
for c in slurmctld slurmd sinfo munged setpriv flock; do
	command -v "$c" >/dev/null || die "$c not found; run 'make deps'"
done
case $BASE in /*) ;; *) BASE=$PWD/$BASE ;; esac
export SLURM_CONF=$BASE/etc/slurm.conf

# ---- already up? --------------------------------------------------------
alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
wait_idle() { # wait up to 30 s for $NODES idle nodes
	local up=0
	for _ in $(seq 150); do
		up=$(sinfo -h -N -o '%T' 2>/dev/null | grep -c '^idle$' || true)
		[ "$up" -ge "$NODES" ] && return 0
		sleep 0.2
	done
	return 1
}
if [ -f "$BASE/.hpctrain-cluster" ] && alive "$BASE/run/slurmctld.pid"; then
	. "$BASE/run/env"
	[ "$MODE" = "$CL_MODE" ] || die "$BASE already runs MODE=$CL_MODE; run down.sh first"
	NODES=$CL_NODES
	wait_idle || die "cluster at $BASE is up but its nodes are not idle; see $BASE/log"
	say "already up: export SLURM_CONF=$SLURM_CONF"
	echo "export SLURM_CONF=$SLURM_CONF"
	exit 0
fi
[ -e "$BASE" ] && [ ! -f "$BASE/.hpctrain-cluster" ] && [ -n "$(ls -A "$BASE")" ] &&
	die "$BASE exists and is not a cluster directory; pick another BASE"
mkdir -p "$BASE"/{etc,state,spool,log,run,dev,pmix,local}
chmod 0755 "$BASE"
touch "$BASE/.hpctrain-cluster"
# From here on a failure leaves a half-started cluster: take it down again.
trap 'rc=$?; [ $rc -ne 0 ] && { say "failed; tearing down"; BASE=$BASE bash "$(dirname "$0")/down.sh" >&2 || true; }' EXIT

# ---- slot: ports, names, subnet -----------------------------------------
port_free() { [ -z "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]; }
mkdir -p "$SLOTS"
exec 9>"$SLOTS/.lock"
flock 9
SLOT=
for k in $(seq 1 60); do
	link=$SLOTS/$k
	if [ -L "$link" ]; then
		owner=$(readlink "$link")
		# stale: its cluster directory is gone or no longer names this slot
		if [ "$owner" != "$BASE" ] && [ "$(cat "$owner/run/slot" 2>/dev/null)" = "$k" ]; then
			continue
		fi
		rm -f "$link"
	fi
	ctld=$((20000 + 20 * k))
	ok=1
	for p in $(seq "$ctld" $((ctld + 2 + NODES))); do port_free "$p" || { ok=0; break; }; done
	[ $ok = 1 ] || continue
	ln -s "$BASE" "$link"
	SLOT=$k
	break
done
[ -n "$SLOT" ] || die "no free cluster slot (ports 20020-21220 busy?)"
echo "$SLOT" >"$BASE/run/slot"
flock -u 9
exec 9>&-
CTLD_PORT=$((20000 + 20 * SLOT))
SUBNET=10.250.$SLOT
BRIDGE=hpt${SLOT}br
cat >"$BASE/run/env" <<VARS
CL_MODE=$MODE
CL_NODES=$NODES
CL_SLOT=$SLOT
VARS

# ---- munge -----------------------------------------------------------------
# cred_expire: Slurm holds a requeued job back this long (default 120 s);
# 10 s keeps preemption tests short.  The scheduler then starts it at its
# next periodic pass (SchedulerParameters below), not on an event.
AUTHINFO="AuthInfo=cred_expire=10"
if munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
	say "reusing the munged on the default socket"
else
	# munged refuses a socket directory that is not 0755, and a key that is not its own
	install -d -o munge -g munge -m 0700 "$BASE/munge"
	install -d -o munge -g munge -m 0755 "$BASE/munge-run"
	if [ -s /etc/munge/munge.key ]; then
		install -o munge -g munge -m 0400 /etc/munge/munge.key "$BASE/munge/munge.key"
	else
		mungekey -c -k "$BASE/munge/munge.key"
		chown munge:munge "$BASE/munge/munge.key"
		chmod 0400 "$BASE/munge/munge.key"
	fi
	# setpriv execs munged itself, so $! is munged's PID (runuser would stay in between)
	setpriv --reuid=munge --regid=munge --clear-groups -- /usr/sbin/munged -F \
		--socket="$BASE/munge-run/munge.sock" --key-file="$BASE/munge/munge.key" \
		--pid-file="$BASE/munge-run/munged.pid" --seed-file="$BASE/munge/munged.seed" \
		--log-file="$BASE/log/munged.log" </dev/null >"$BASE/log/munged.out" 2>&1 &
	echo $! >"$BASE/run/munged.pid"
	for _ in $(seq 50); do [ -S "$BASE/munge-run/munge.sock" ] && break; sleep 0.1; done
	munge -S "$BASE/munge-run/munge.sock" -n </dev/null | unmunge -S "$BASE/munge-run/munge.sock" >/dev/null ||
		die "private munged did not start; see $BASE/log/munged.out"
	AUTHINFO="AuthInfo=socket=$BASE/munge-run/munge.sock,cred_expire=10"
fi

# ---- fake GPUs ----------------------------------------------------------
for i in $(seq 0 $((NGPUS - 1))); do
	[ -c "$BASE/dev/nvidia$i" ] || mknod -m 0666 "$BASE/dev/nvidia$i" c 195 "$i"
done

# ---- slurm.conf -----------------------------------------------------------
case $MODE in
single) NODELINE="NodeName=$H NodeAddr=127.0.0.1"
	CTLD_ADDR=127.0.0.1 NODENAMES=$H ;;
multi) NODELINE="NodeName=n[1-$NODES] NodeHostname=$H NodeAddr=127.0.0.1 Port=[$((CTLD_PORT + 2))-$((CTLD_PORT + 1 + NODES))]"
	CTLD_ADDR=127.0.0.1 NODENAMES=$(seq -f 'n%g' 1 "$NODES") ;;
netns) NODELINE="NodeName=node[1-$NODES] NodeAddr=$SUBNET.[11-$((10 + NODES))]"
	CTLD_ADDR=$SUBNET.1 NODENAMES=$(seq -f 'node%g' 1 "$NODES") ;;
esac
cat >"$SLURM_CONF" <<CONF
# written by tests/cluster/up.sh (MODE=$MODE, slot $SLOT)
ClusterName=hpttest$SLOT
SlurmctldHost=$H($CTLD_ADDR)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
$AUTHINFO
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
# 1, as most sites have it: a node that stopped answering comes back when
# its slurmd registers again; one an administrator set DOWN stays DOWN
ReturnToService=1
MinJobAge=600
MaxArraySize=$MAX_ARRAY_SIZE
SlurmdTimeout=$SLURMD_TIMEOUT
JobRequeue=1
# a requeued job becomes eligible by the clock, and only a periodic pass
# starts it: Slurm's (60 s, backfill 30 s) left it pending 16 s longer
SchedulerParameters=sched_interval=1,bf_interval=1
StateSaveLocation=$BASE/state
SlurmdSpoolDir=$BASE/spool/%n
SlurmctldPidFile=$BASE/run/slurmctld.own.pid
SlurmdPidFile=$BASE/run/slurmd-%n.own.pid
SlurmctldLogFile=$BASE/log/slurmctld.log
SlurmdLogFile=$BASE/log/slurmd-%n.log
SlurmctldPort=$CTLD_PORT
SlurmdPort=$((CTLD_PORT + 1))
FirstJobId=$((SLOT * 100000 + 1))
SlurmdParameters=config_overrides
GresTypes=gpu
$NODELINE CPUs=$CPUS RealMemory=$MEM Gres=gpu:$NGPUS State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
printf 'AutoDetect=off\nName=gpu File=%s/dev/nvidia[0-%d]\n' "$BASE" $((NGPUS - 1)) >"$BASE/etc/gres.conf"
echo "PMIxCliTmpDirBase=$BASE/pmix" >"$BASE/etc/mpi.conf" # not /tmp/spmix_appdir_*: shared by all clusters

# ---- namespaces (MODE=netns) ----------------------------------------------
if [ "$MODE" = netns ]; then
	{
		echo "127.0.0.1 localhost"
		echo "$SUBNET.1 $H"
		for i in $(seq 1 "$NODES"); do echo "$SUBNET.$((10 + i)) node$i"; done
	} >"$BASE/etc/hosts"
	ip link add "$BRIDGE" type bridge
	echo "$BRIDGE" >"$BASE/run/bridge"
	ip addr add "$SUBNET.1/24" dev "$BRIDGE"
	ip link set "$BRIDGE" up
	for i in $(seq 1 "$NODES"); do
		ns=hpt${SLOT}n$i
		ip netns add "$ns"
		echo "$ns" >>"$BASE/run/netns"
		ip link add "hpt${SLOT}v$i" type veth peer name eth0 netns "$ns"
		ip link set "hpt${SLOT}v$i" master "$BRIDGE" up
		ip -n "$ns" addr add "$SUBNET.$((10 + i))/24" dev eth0
		ip -n "$ns" link set eth0 up
		ip -n "$ns" link set lo up
	done
fi

# ---- daemons: -D in the background, so $! is each daemon's own PID ----------
slurmctld -D -i -f "$SLURM_CONF" </dev/null >"$BASE/log/slurmctld.out" 2>&1 &
echo $! >"$BASE/run/slurmctld.pid"
i=0
for n in $NODENAMES; do
	i=$((i + 1))
	mkdir -p "$BASE/spool/$n/pmix" "$BASE/nodes/$n/local"
	case $MODE in
	single)
		slurmd -D -f "$SLURM_CONF" </dev/null >"$BASE/log/slurmd-$n.out" 2>&1 & ;;
	multi) # a conf dir per node, so each slurmd's PMIx clients get their own tmpdir
		mkdir -p "$BASE/etc/$n"
		ln -sf ../slurm.conf "$BASE/etc/$n/slurm.conf"
		ln -sf ../gres.conf "$BASE/etc/$n/gres.conf"
		echo "PMIxCliTmpDirBase=$BASE/spool/$n/pmix" >"$BASE/etc/$n/mpi.conf"
		slurmd -D -N "$n" -f "$BASE/etc/$n/slurm.conf" </dev/null >"$BASE/log/slurmd-$n.out" 2>&1 & ;;
	netns) # nsenter, not `ip netns exec` (that remounts /sys and slurmd loses /sys/fs/cgroup)
		nsenter --net="/run/netns/hpt${SLOT}n$i" unshare --uts --mount sh -c '
			hostname "$1"
			mount --bind "$2/etc/hosts" /etc/hosts
			mount --bind "$2/spool/$1/pmix" "$2/pmix"
			mount --bind "$2/nodes/$1/local" "$2/local"
			exec slurmd -D -f "$2/etc/slurm.conf"' sh "$n" "$BASE" \
			</dev/null >"$BASE/log/slurmd-$n.out" 2>&1 & ;;
	esac
	echo $! >"$BASE/run/slurmd-$n.pid"
done

wait_idle || { sinfo -N >&2 || true; die "nodes did not become idle; see $BASE/log"; }
sinfo -N -o '%N %T %c %m %G' >&2
say "up (MODE=$MODE, $NODES node(s), slot $SLOT): export SLURM_CONF=$SLURM_CONF"
echo "export SLURM_CONF=$SLURM_CONF"
