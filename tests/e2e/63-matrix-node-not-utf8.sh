#!/usr/bin/env bash
# fabric: br0:0,1,2
# timeout: 200
# Issue 26 item 8 on real ranks (3 ranks, node N on rxeN): rank 1's --node is not UTF-8. The JSON is
# written (it was lost: "could not write", exit 3), the name with '?' for the bad byte, in the
# endpoints and in every rank's NCCL release.
set -uo pipefail
. "$RP_ROOT/tests/e2e/lib/matrix.sh"
mx_need
out=$RP_RESULTS/63
mkdir -p "$out"

wait_for() {   # wait_for FILE: up to 120 s
	for _ in $(seq 1 600); do [ -e "$1" ] && return 0; sleep 0.2; done
	return 1
}

# wait_gone PID SECONDS: 0 when PID ended within SECONDS
wait_gone() {
	for _ in $(seq 1 $(($2 * 5))); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.2; done
	return 1
}

RP_MX_BADNAME_RANK=1 mx_mpirun 3 -s 4K -n 100 --timeout 2 --min-bw 0 --outlier 0 --json "$out/bad.json" \
	>"$out/bad.out" 2>"$out/bad.err"
rc=$?
cat "$out/bad.out"
grep -q "could not write" "$out/bad.err" && { echo "FAIL: a node name that is not UTF-8 lost a report"; exit 1; }
[ $rc -eq 0 ] || { echo "FAIL: exit $rc"; tail -20 "$out/bad.err"; exit 1; }
"$MX_PY" - "$out/bad.json" <<'PY' || { echo "FAIL: JSON with a node name that is not UTF-8"; exit 1; }
import json, sys
d = json.load(open(sys.argv[1]))
names = sorted(e["node"] for e in d["matrix"]["endpoints"])
assert names == ["bad?name", "node0", "node2"], names
assert sorted(v["node"] for v in d["nccl_versions"]) == ["bad?name", "node0", "node2"], d["nccl_versions"]
assert len(d["pairs"]) == 6 and all(p["status"] == "ok" for p in d["pairs"]), d["pairs"]
PY

echo "PASS"
