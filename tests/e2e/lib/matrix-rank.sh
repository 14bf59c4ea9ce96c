#!/usr/bin/env bash
# matrix-rank.sh: one MPI rank of the matrix e2e cases. Rank N plays node N with device rxeN (the
# test bed's one VM looks like several nodes). RP_MX_LAYOUT=pairs makes rank N node N with rxe(2N)
# and rxe(2N+1); RP_MX_LAYOUT=shared makes ranks 2M and 2M+1 both node M offering rxe(2M), rxe(2M+1).
# RP_MX_KILL_RANK=N kills rank N (kill -9) once the file RP_MX_KILL_WHEN exists
# (rank 0 writes its report after the first round: "mid-run"), plus RP_MX_KILL_AFTER seconds.
# RP_MX_NODEV_RANK=N gives rank N a -d that matches no adapter (=rxe_missing).
# RP_MX_BADNAME_RANK=N names rank N's node "bad\xffname" (not UTF-8).
# RP_MX_PID_DIR: each rank writes the pid of its rdmaprobe to DIR/rankN.pid (to signal one rank).
set -euo pipefail
r=${OMPI_COMM_WORLD_RANK:?not started by Open MPI mpirun}
node=node$r
dev="=rxe$r"
[ "${RP_MX_LAYOUT:-}" = pairs ] && dev="=rxe$((2 * r)),rxe$((2 * r + 1))"
if [ "${RP_MX_LAYOUT:-}" = shared ]; then
	# two ranks per node, both offering the node's two adapters
	node=node$((r / 2))
	dev="=rxe$((2 * (r / 2))),rxe$((2 * (r / 2) + 1))"
fi
[ -n "${RP_MX_NODEV_RANK:-}" ] && [ "$r" = "$RP_MX_NODEV_RANK" ] && dev="=rxe_missing"
[ -n "${RP_MX_BADNAME_RANK:-}" ] && [ "$r" = "$RP_MX_BADNAME_RANK" ] && node=$'bad\xffname'
if [ -n "${RP_MX_KILL_RANK:-}" ] && [ "$r" = "$RP_MX_KILL_RANK" ]; then
	"${RP_BIN:?}" matrix --node "$node" -d "$dev" "$@" &
	pid=$!
	for _ in $(seq 1 600); do
		[ -e "${RP_MX_KILL_WHEN:?}" ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.2
	done
	sleep "${RP_MX_KILL_AFTER:-0}"
	kill -9 "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	exit 137
fi
# RP_MX_STATUS_DIR: keep each rank's own exit status (mpirun --enable-recovery reports 0 whatever
# the ranks return).
if [ -n "${RP_MX_STATUS_DIR:-}" ]; then
	rc=0
	"${RP_BIN:?}" matrix --node "$node" -d "$dev" "$@" &
	pid=$!
	[ -n "${RP_MX_PID_DIR:-}" ] && echo "$pid" >"$RP_MX_PID_DIR/rank$r.pid"
	wait "$pid" || rc=$?
	echo "$rc" >"$RP_MX_STATUS_DIR/rank$r.rc"
	exit "$rc"
fi
[ -n "${RP_MX_PID_DIR:-}" ] && echo "$$" >"$RP_MX_PID_DIR/rank$r.pid"   # exec keeps the pid
exec "${RP_BIN:?}" matrix --node "$node" -d "$dev" "$@"
