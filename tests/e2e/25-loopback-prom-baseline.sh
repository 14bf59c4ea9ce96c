#!/usr/bin/env bash
# fabric: br0:0,1
# timeout: 240
# host-after: bash tests/e2e/25-loopback-prom-baseline.sh --host
# loopback --prom and --baseline on real rxe devices. A healthy run writes the baseline (its --json)
# and a metrics file; a second healthy run passes against it; a run that covers only rxe0 passes its
# own verdict but fails the baseline (lost coverage: exit 1); with 100% loss on rxe1's link the run
# fails and the baseline names the two crossing pairs as new failures (they failed before a size was
# recorded: msg_size 0 in the reports and the metrics).
# are checked with the Prometheus client's parser (tests/prom_check.py, the unit test's checker).
# --drop 90% keeps emulated-CPU bandwidth noise out of it (test_baseline covers drops).
set -u
r=$RP_RESULTS
if [ "${1:-}" = --host ]; then
	chk=tests/e2e/lib/check-prom.sh
	h=$(cat "$r/host")
	bash $chk "$r/base.prom" 'rdmaprobe_run_pass{command="loopback"} 1.0' \
		'rdmaprobe_run_pairs{command="loopback"} 4.0' || exit $?
	bash $chk "$r/lossy.prom" 'rdmaprobe_run_pass{command="loopback"} 0.0' \
		"rdmaprobe_pair_pass{command=\"loopback\",dst_device=\"rxe1\",dst_node=\"$h\",dst_port=\"1\",msg_size=\"0\",src_device=\"rxe0\",src_node=\"$h\",src_port=\"1\"} 0.0" \
		"rdmaprobe_pair_pass{command=\"loopback\",dst_device=\"rxe0\",dst_node=\"$h\",dst_port=\"1\",msg_size=\"4096\",src_device=\"rxe0\",src_node=\"$h\",src_port=\"1\"} 1.0" || exit $?
	/usr/bin/python3 - "$r/lossy.json" "$r/base.json" <<'PY' || exit 1
import json, os, sys
d = json.load(open(sys.argv[1]))
b = d.get("baseline")
# the guest names its results folder differently: compare the file name
if not b or not b["regression"] or os.path.basename(b["file"]) != os.path.basename(sys.argv[2]):
    print("FAIL: lossy.json baseline section:", b); sys.exit(1)
new = sorted((i["src"].split("/")[1], i["dst"].split("/")[1]) for i in b["comparison"]["items"] if i["kind"] == "new_failure")
if new != [("rxe0:1", "rxe1:1"), ("rxe1:1", "rxe0:1")]:
    print("FAIL: new failures", new); sys.exit(1)
print("ok: lossy.json baseline section, new failures", new)
PY
	exit 0
fi
hostname >"$r/host"
# T: the no-progress deadline; the lossy run's is 4 s (each attempt across the link waits it out)
lb() { "$RP_BIN" loopback -s 4K -n 100 --timeout "${T:-8}" "$@"; }

lb -d rxe0,rxe1 --json "$r/base.json" --prom "$r/base.prom" >"$r/base.out" 2>&1
rc=$?
[ "$rc" -eq 0 ] || { echo "FAIL: healthy loopback exit $rc"; tail -20 "$r/base.out"; exit 1; }
[ -s "$r/base.prom" ] && ! ls "$r"/base.prom.tmp.* >/dev/null 2>&1 || { echo "FAIL: base.prom missing or a temporary left"; ls -la "$r"; exit 1; }

lb -d rxe0,rxe1 --baseline "$r/base.json" --drop 90% >"$r/again.out" 2>&1
rc=$?
[ "$rc" -eq 0 ] || { echo "FAIL: healthy run against its baseline exit $rc"; tail -20 "$r/again.out"; exit 1; }
grep -q "^BASELINE ok: no regression against $r/base.json" "$r/again.out" || { echo "FAIL: again.out"; tail "$r/again.out"; exit 1; }

lb -d rxe0 --baseline "$r/base.json" --drop 90% >"$r/less.out" 2>&1
rc=$?
cat "$r/less.out" | tail -8
[ "$rc" -eq 1 ] || { echo "FAIL: run covering rxe0 only exit $rc, expected 1 (lost coverage)"; exit 1; }
grep -q "^verdict: PASS" "$r/less.out" || { echo "FAIL: its own verdict should pass"; exit 1; }
grep -q "^BASELINE FAIL: 3 regressions" "$r/less.out" || { echo "FAIL: expected 3 regressions"; exit 1; }
grep -q "^  not_measured: .*/rxe1:1 -> .*/rxe1:1 4096 B" "$r/less.out" || { echo "FAIL: rxe1 self pair not named"; exit 1; }

"$RP_FABRIC" fault loss rxe1 100% || exit 1
T=4 lb -d rxe0,rxe1 --baseline "$r/base.json" --drop 90% --json "$r/lossy.json" --prom "$r/lossy.prom" >"$r/lossy.out" 2>&1
rc=$?
tail -8 "$r/lossy.out"
[ "$rc" -eq 1 ] || { echo "FAIL: lossy loopback exit $rc, expected 1"; exit 1; }
grep -q "^BASELINE FAIL: " "$r/lossy.out" || { echo "FAIL: no BASELINE FAIL line"; exit 1; }
[ "$(grep -c '^  new_failure: ' "$r/lossy.out")" -eq 2 ] || { echo "FAIL: expected 2 new_failure lines"; exit 1; }

lb -d rxe0,rxe1 --baseline "$r/lossy.out" >"$r/badbase.out" 2>&1
rc=$?
[ "$rc" -eq 2 ] || { echo "FAIL: a baseline that is not JSON: exit $rc, expected 2"; cat "$r/badbase.out"; exit 1; }
grep -q "nothing was measured" "$r/badbase.out" || { echo "FAIL: badbase.out"; cat "$r/badbase.out"; exit 1; }
echo "ok: --prom and --baseline on real loopback runs"
