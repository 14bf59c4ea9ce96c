# e2e-lib.sh: small helpers for tests/e2e cases (source it: . "$RP_ROOT/scripts/testbed/e2e-lib.sh").
# Cases run inside the test bed VM as root, with RP_BIN, RP_FABRIC, RP_RESULTS and RP_ROOT set.

# Skip (exit 77) or fail (exit 1) with a message that stands out in the suite's output.
e2e_skip() { echo "SKIP: $*"; exit 77; }
e2e_fail() { echo "FAIL: $*"; exit 1; }
e2e_note() { echo "e2e: [${SECONDS}s] $*"; }

# The index of DEV's (port 1) IPv4-mapped RoCE v2 GID from sysfs, or "" when it has none.
e2e_gid_index() {
	local port=/sys/class/infiniband/$1/ports/${2:-1} f i gid type
	for f in "$port"/gids/*; do
		i=${f##*/}
		read -r gid <"$f" 2>/dev/null || continue
		[[ $gid == 0000:0000:0000:0000:0000:ffff:* ]] || continue
		read -r type <"$port/gid_attrs/types/$i" 2>/dev/null || continue
		[ "$type" = "RoCE v2" ] && { echo "$i"; return 0; }
	done
	echo ""
}

# The port state word of DEV port 1 from sysfs: ACTIVE, DOWN, ...
e2e_port_state() {
	local s
	read -r s <"/sys/class/infiniband/$1/ports/${2:-1}/state" 2>/dev/null || { echo ""; return; }
	echo "${s#*: }"
}

# A netdev's transmitted bytes.
e2e_tx_bytes() { local b; read -r b <"/sys/class/net/$1/statistics/tx_bytes"; echo "$b"; }

# Wait until a TCP port on 127.0.0.1 listens; 1 after SECS seconds without.
e2e_wait_listen() {
	local port=$1 secs=${2:-10} i
	for ((i = 0; i < secs * 10; i++)); do
		ss -Hltn "sport = :$port" 2>/dev/null | grep -q . && return 0
		sleep 0.1
	done
	return 1
}

E2E_PORT=${E2E_PORT:-18515}

# e2e_write_bw SERVER_DEV CLIENT_DEV BOUND [ib_write_bw options...]
# perftest's ib_write_bw with the server on SERVER_DEV and the client on CLIENT_DEV (each on its
# IPv4 RoCE v2 GID), out of band over 127.0.0.1, both bounded by BOUND seconds. Returns the
# client's status (124 when it ran out of time; 125 when the server never listened); logs in
# $RP_RESULTS/bw-<port>-{server,client}.log, the client's path in E2E_BW_LOG.
e2e_write_bw() {
	local sdev=$1 cdev=$2 bound=$3 sgid cgid port spid rc=0
	shift 3
	sgid=$(e2e_gid_index "$sdev")
	cgid=$(e2e_gid_index "$cdev")
	[ -n "$sgid" ] && [ -n "$cgid" ] || { echo "e2e_write_bw: no IPv4 RoCE v2 GID on $sdev or $cdev"; return 125; }
	E2E_PORT=$((E2E_PORT + 1))
	port=$E2E_PORT
	local slog=$RP_RESULTS/bw-$port-server.log
	E2E_BW_LOG=$RP_RESULTS/bw-$port-client.log
	timeout -k 2 "$bound" ib_write_bw -d "$sdev" -x "$sgid" -p "$port" "$@" >"$slog" 2>&1 &
	spid=$!
	if ! e2e_wait_listen "$port" 10; then
		kill "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null
		echo "e2e_write_bw: the server on $sdev did not listen on port $port"
		return 125
	fi
	timeout -k 2 "$bound" ib_write_bw -d "$cdev" -x "$cgid" -p "$port" "$@" 127.0.0.1 >"$E2E_BW_LOG" 2>&1 || rc=$?
	# After a good run the server ends by itself; after a failed one it would wait for nothing.
	local i
	if [ $rc -eq 0 ]; then
		for ((i = 0; i < 50; i++)); do kill -0 "$spid" 2>/dev/null || break; sleep 0.1; done
	fi
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	return $rc
}

# True when an ib_write_bw log holds a result row for N iterations.
e2e_bw_has_result() { grep -Eq "^[[:space:]]*[0-9]+[[:space:]]+$2[[:space:]]+[0-9.]+[[:space:]]+[0-9.]+" "$1"; }
