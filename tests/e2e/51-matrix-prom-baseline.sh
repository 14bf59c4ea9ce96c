#!/usr/bin/env bash
# fabric: br0:0,1,2
# timeout: 240
# host-after: bash tests/e2e/51-matrix-prom-baseline.sh --host
# matrix --prom and --baseline on real rxe devices, three ranks (node N on rxeN). A healthy run writes
# the baseline (its --json) and a metrics file; a second healthy run passes against it; with 100% loss
# on rxe2's link the run fails and the baseline names the four pairs with node2 as new failures, in
# the text and in the JSON's baseline section, and the metrics say which pairs failed. The metrics are
# checked on the host with the Prometheus client's parser (tests/prom_check.py). --drop 90% keeps the
# emulated CPU's bandwidth noise out of it (test_baseline covers drops).
set -u
r=$RP_RESULTS
if [ "${1:-}" = --host ]; then
	chk=tests/e2e/lib/check-prom.sh
	bash $chk "$r/base.prom" 'rdmaprobe_run_pass{command="matrix"} 1.0' 'rdmaprobe_run_pairs{command="matrix"} 6.0' \
		'rdmaprobe_endpoint_drain{command="matrix",device="rxe2",node="node2",port="1"} 0.0' || exit $?
	bash $chk "$r/lossy.prom" 'rdmaprobe_run_pass{command="matrix"} 0.0' \
		'rdmaprobe_run_failed_pairs{command="matrix"} 4.0' \
		'rdmaprobe_endpoint_drain{command="matrix",device="rxe2",node="node2",port="1"} 1.0' \
		'rdmaprobe_endpoint_drain{command="matrix",device="rxe0",node="node0",port="1"} 0.0' || exit $?
	/usr/bin/python3 - "$r/lossy.json" "$r/base.json" <<'PY' || exit 1
import json, os, sys
d = json.load(open(sys.argv[1]))
b = d.get("baseline")
if not b or not b["regression"] or os.path.basename(b["file"]) != os.path.basename(sys.argv[2]):
    print("FAIL: lossy.json baseline section:", b); sys.exit(1)
new = sorted((i["src"], i["dst"]) for i in b["comparison"]["items"] if i["kind"] == "new_failure")
want = sorted((s, t) for s in ("node0/rxe0:1", "node1/rxe1:1", "node2/rxe2:1") for t in ("node0/rxe0:1", "node1/rxe1:1", "node2/rxe2:1")
              if s != t and "node2" in (s + t))
if new != want:
    print("FAIL: new failures", new, "want", want); sys.exit(1)
print("ok: lossy.json baseline section, new failures", new)
PY
	exit 0
fi
. "$RP_ROOT/tests/e2e/lib/matrix.sh"
mx_need
mx() { mx_mpirun 3 -s 4K -n 100 --timeout 3 --min-bw 0 --outlier 0 "$@"; }
mx --json "$r/base.json" --prom "$r/base.prom" >"$r/base.out" 2>&1
rc=$?
[ "$rc" -eq 0 ] || { echo "FAIL: healthy matrix exit $rc"; tail -20 "$r/base.out"; exit 1; }
[ -s "$r/base.prom" ] && ! ls "$r"/base.prom.tmp.* >/dev/null 2>&1 || { echo "FAIL: base.prom missing or a temporary left"; ls -la "$r"; exit 1; }
mx --baseline "$r/base.json" --drop 90% >"$r/again.out" 2>&1
rc=$?
[ "$rc" -eq 0 ] || { echo "FAIL: healthy matrix against its baseline exit $rc"; tail -20 "$r/again.out"; exit 1; }
grep -q "^BASELINE ok: no regression against $r/base.json" "$r/again.out" || { echo "FAIL: again.out"; tail "$r/again.out"; exit 1; }
"$RP_FABRIC" fault loss rxe2 100% || exit 1
mx --baseline "$r/base.json" --drop 90% --json "$r/lossy.json" --prom "$r/lossy.prom" >"$r/lossy.out" 2>&1
rc=$?
tail -12 "$r/lossy.out"
[ "$rc" -eq 1 ] || { echo "FAIL: matrix with rxe2 at 100% loss exit $rc, expected 1"; exit 1; }
grep -q "^BASELINE FAIL: " "$r/lossy.out" || { echo "FAIL: no BASELINE FAIL line"; exit 1; }
n=$(grep -c '^  new_failure: ' "$r/lossy.out")
[ "$n" -eq 4 ] || { echo "FAIL: $n new_failure lines, expected 4 (every pair with node2)"; exit 1; }
"$RP_FABRIC" fault clear rxe2
echo "ok: matrix --prom and --baseline on real runs"
