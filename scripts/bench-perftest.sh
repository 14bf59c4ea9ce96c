#!/usr/bin/env bash
# bench-perftest.sh: rdmaprobe against perftest on the same Soft-RoCE device pair, in ONE VM boot.
# A benchmark, not a test: it asserts nothing, it writes numbers.
#
#   scripts/bench-perftest.sh            (host) boots the VM and runs itself inside; writes
#                                        results/perftest-compare.md and results/perftest-raw/*
#   RP_BENCH_REPEATS=3 RP_BENCH_SIZES="4096:1000 65536:1000 1048576:200"   (size:iterations)
#
# Per size and repeat: ib_write_bw and `rdmaprobe pair` rxe0 -> rxe1 with the same size, iterations,
# tx depth (128) and completion moderation (100); then ib_write_lat against `rdmaprobe pair --latency`
# (64 B); then the time each tool takes to give up on an unreachable pair (rxe0 -> rxe2, which sits on
# another bridge). Ratios are rdmaprobe / perftest; under QEMU TCG only ratios from one boot mean
# anything (doc/testbed.md, "What figures from the VM mean").
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RAW=$ROOT/results/perftest-raw
OUT=$ROOT/results/perftest-compare.md
FABRIC='br0:0,1 br1:2'

if [ "${1:-}" != --inside ]; then
	mkdir -p "$RAW"
	rm -f "$RAW"/*
	[ -x "$ROOT/build/rdmaprobe" ] || make -C "$ROOT" -j2 >/dev/null || exit 1
	exec "$ROOT/scripts/testbed/vm.sh" run --fabric "$FABRIC" --results "$ROOT/results" --timeout "${RP_BENCH_TIMEOUT:-1500}" \
		-- "$ROOT/scripts/bench-perftest.sh" --inside
fi

RP=$ROOT/build/rdmaprobe
REPEATS=${RP_BENCH_REPEATS:-5}
SIZES=${RP_BENCH_SIZES:-"4096:1000 65536:1000 1048576:200"}
GID=1            # rxe's IPv4-mapped RoCE v2 GID (the rule NCCL applies picks it too)
DEPTH=128
CQMOD=100
port=19000
log() { echo "bench: $*" >&2; }

# perftest server on rxe1 in the background, client on rxe0 (retried while the server is still
# starting: perftest's client gives up at once when nobody listens). The server is bounded too.
perftest_run() {   # $1 tool, $2 tag, rest: extra args
	local tool=$1 tag=$2 try
	shift 2
	port=$((port + 1))
	timeout 300 "$tool" -d rxe1 -x $GID -p $port -F "$@" >"$RAW/$tag.server" 2>&1 &
	local spid=$!
	echo "$tool -d rxe0 -x $GID -p $port -F $* 127.0.0.1" >"$RAW/$tag.cmd"
	for try in $(seq 1 30); do
		sleep 1
		timeout 300 "$tool" -d rxe0 -x $GID -p $port -F "$@" 127.0.0.1 >"$RAW/$tag.client" 2>&1 && break
		grep -q "Couldn't connect" "$RAW/$tag.client" || break
	done
	( sleep 60; kill $spid 2>/dev/null ) &
	local wpid=$!
	wait $spid
	kill $wpid 2>/dev/null
}

rdmaprobe_run() {  # $1 tag, rest: client args
	local tag=$1
	shift
	port=$((port + 1))
	"$RP" pair --listen -d rxe1 -p $port --wait 60 >"$RAW/$tag.server" 2>&1 &
	local spid=$!
	echo "rdmaprobe pair 127.0.0.1:$port -d rxe0 $* (listener: rdmaprobe pair --listen -d rxe1 -p $port)" >"$RAW/$tag.cmd"
	timeout 300 "$RP" pair 127.0.0.1:$port -d rxe0 --wait 60 --json "$RAW/$tag.json" "$@" >"$RAW/$tag.client" 2>&1
	wait $spid
}

# The average Gb/s of an ib_write_bw client output (the line that starts with the size).
pt_bw() { awk -v s="$2" '$1 == s && NF >= 5 { print $4 }' "$RAW/$1.client" | tail -1; }
# t_min and t_typical (median) of ib_write_lat.
pt_lat() { awk -v s="$2" '$1 == s && NF >= 6 { print $3, $5 }' "$RAW/$1.client" | tail -1; }
rp_field() { jq -r ".pairs[0].$2" "$RAW/$1.json" 2>/dev/null; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.3f", a / b; else print "n/a" }'; }

{
	echo "# rdmaprobe vs perftest on Soft-RoCE (one VM boot)"
	echo
	echo "Produced by \`scripts/bench-perftest.sh\` on $(date -u +%Y-%m-%dT%H:%M:%SZ): QEMU TCG guest, kernel $(uname -r),"
	echo "fabric \`$FABRIC\`, rxe0 -> rxe1 over one bridge, $("$RP" --version), perftest $(ib_write_bw --version 2>&1 | head -1)."
	echo "Emulated CPU: absolute numbers mean nothing, ratios within this boot do. Raw output and exact"
	echo "command lines: results/perftest-raw/ (<tag>.cmd, .client, .server, .json)."
	echo
	echo "## Bandwidth: ib_write_bw vs rdmaprobe pair (tx depth $DEPTH, completion every $CQMOD, Gb/s = 10^9 bit/s)"
	echo
	echo "| size | iters | run | ib_write_bw Gb/s | rdmaprobe Gb/s | rdmaprobe min-interval Gb/s | ratio |"
	echo "|---:|---:|---:|---:|---:|---:|---:|"
} >"$OUT"

for si in $SIZES; do
	size=${si%%:*} iters=${si##*:}
	for r in $(seq 1 "$REPEATS"); do
		log "bw size $size run $r"
		# alternate which tool goes first, so drift in the emulator does not favour one
		if [ $((r % 2)) -eq 1 ]; then
			perftest_run ib_write_bw "bw-pt-$size-$r" -s "$size" -n "$iters" -t $DEPTH -Q $CQMOD --report_gbits
			rdmaprobe_run "bw-rp-$size-$r" -s "$size" -n "$iters" -t $DEPTH --cq-mod $CQMOD
		else
			rdmaprobe_run "bw-rp-$size-$r" -s "$size" -n "$iters" -t $DEPTH --cq-mod $CQMOD
			perftest_run ib_write_bw "bw-pt-$size-$r" -s "$size" -n "$iters" -t $DEPTH -Q $CQMOD --report_gbits
		fi
		pt=$(pt_bw "bw-pt-$size-$r" "$size")
		rp=$(rp_field "bw-rp-$size-$r" gbps)
		rpmin=$(rp_field "bw-rp-$size-$r" gbps_min)
		echo "| $size | $iters | $r | ${pt:-failed} | ${rp:-failed} | ${rpmin:-} | $(ratio "${rp:-0}" "${pt:-0}") |" >>"$OUT"
		echo "$size ${pt:-0} ${rp:-0}" >>"$RAW/bw-summary.txt"
	done
done
{
	echo
	echo "Median over the runs (ratio of medians):"
	echo
	echo "| size | ib_write_bw median Gb/s | rdmaprobe median Gb/s | ratio |"
	echo "|---:|---:|---:|---:|"
	for si in $SIZES; do
		size=${si%%:*}
		ptm=$(awk -v s="$size" '$1 == s { print $2 }' "$RAW/bw-summary.txt" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }')
		rpm=$(awk -v s="$size" '$1 == s { print $3 }' "$RAW/bw-summary.txt" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }')
		echo "| $size | $ptm | $rpm | $(ratio "$rpm" "$ptm") |"
	done
} >>"$OUT"

{
	echo
	echo "## Latency: ib_write_lat vs rdmaprobe pair --latency (64 B, 1000 round trips, half round trip in us)"
	echo
	echo "| run | ib_write_lat t_min | rdmaprobe min | ib_write_lat t_typical | rdmaprobe median | median ratio |"
	echo "|---:|---:|---:|---:|---:|---:|"
} >>"$OUT"
for r in $(seq 1 "$REPEATS"); do
	log "lat run $r"
	if [ $((r % 2)) -eq 1 ]; then
		perftest_run ib_write_lat "lat-pt-$r" -s 64 -n 1000
		rdmaprobe_run "lat-rp-$r" --latency -s 64 -n 1000
	else
		rdmaprobe_run "lat-rp-$r" --latency -s 64 -n 1000
		perftest_run ib_write_lat "lat-pt-$r" -s 64 -n 1000
	fi
	read -r ptmin pttyp <<<"$(pt_lat "lat-pt-$r" 64)"
	rpmin=$(rp_field "lat-rp-$r" latency.min_us)
	rpmed=$(rp_field "lat-rp-$r" latency.median_us)
	echo "| $r | ${ptmin:-failed} | ${rpmin:-failed} | ${pttyp:-failed} | ${rpmed:-failed} | $(ratio "${rpmed:-0}" "${pttyp:-0}") |" >>"$OUT"
done

{
	echo
	echo "## Unreachable pair: time until each tool gives up (rxe0 -> rxe2, another bridge)"
	echo
	echo "| run | ib_write_bw s (exit) | rdmaprobe pair s (exit, status) |"
	echo "|---:|---:|---:|"
} >>"$OUT"
for r in $(seq 1 "$REPEATS"); do
	log "unreachable run $r"
	port=$((port + 1))
	timeout 120 ib_write_bw -d rxe2 -x $GID -p $port -F -s 4096 -n 100 >"$RAW/unr-pt-$r.server" 2>&1 &
	spid=$!
	echo "ib_write_bw -d rxe0 -x $GID -p $port -F -s 4096 -n 100 127.0.0.1 (server: -d rxe2)" >"$RAW/unr-pt-$r.cmd"
	for try in $(seq 1 30); do
		sleep 1
		t0=$(date +%s.%N)
		timeout 120 ib_write_bw -d rxe0 -x $GID -p $port -F -s 4096 -n 100 127.0.0.1 >"$RAW/unr-pt-$r.client" 2>&1
		ptrc=$?
		t1=$(date +%s.%N)
		grep -q "Couldn't connect" "$RAW/unr-pt-$r.client" || break
	done
	kill $spid 2>/dev/null
	wait $spid 2>/dev/null
	port=$((port + 1))
	"$RP" pair --listen -d rxe2 -p $port --wait 60 >"$RAW/unr-rp-$r.server" 2>&1 &
	spid=$!
	echo "rdmaprobe pair 127.0.0.1:$port -d rxe0 -s 4096 -n 100 (listener: -d rxe2); default --timeout 10s" >"$RAW/unr-rp-$r.cmd"
	sleep 1   # as for perftest: the listener is up before the clock starts
	t2=$(date +%s.%N)
	timeout 120 "$RP" pair 127.0.0.1:$port -d rxe0 -s 4096 -n 100 --json "$RAW/unr-rp-$r.json" >"$RAW/unr-rp-$r.client" 2>&1
	rprc=$?
	t3=$(date +%s.%N)
	wait $spid
	st=$(rp_field "unr-rp-$r" status)
	printf '| %s | %.1f (%s) | %.1f (%s, %s) |\n' "$r" "$(echo "$t1 - $t0" | bc)" "$ptrc" "$(echo "$t3 - $t2" | bc)" "$rprc" "$st" >>"$OUT"
done
echo >>"$OUT"
echo "Process start-up (device discovery, under emulation) is included in both tools' times." >>"$OUT"
cat "$OUT"
