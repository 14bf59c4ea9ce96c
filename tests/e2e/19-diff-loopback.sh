#!/usr/bin/env bash
# fabric: br0:0,1
# timeout: 180
# rdmaprobe diff on real loopback reports: a healthy run against itself is no regression; after 100%
# loss on rxe1's link the pairs crossing it are new failures (exit 1, named in text and JSON) and the
# self pairs are not; the other way round they recovered (exit 0). --drop 90% keeps emulated-CPU
# bandwidth noise out of it: this case is about failures, test_diff about drops. The lossy run has
# --timeout 4: each attempt across the link waits out its no-progress deadline (2 pairs x 2 attempts).
set -u
r=$RP_RESULTS
"$RP_BIN" loopback -d rxe0,rxe1 -s 4K -n 100 --timeout 8 --json "$r/base.json" >"$r/base.out" 2>&1
rc=$?
[ "$rc" -eq 0 ] || { echo "FAIL: healthy loopback exit $rc"; tail -20 "$r/base.out"; exit 1; }
python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert r["complete"] is True and r["interrupted"] is False and r["signal"] is None and r["pairs_planned"] == 4, r' "$r/base.json" ||
	{ echo "FAIL: a finished loopback does not say complete (issue 26 item 17)"; exit 1; }
"$RP_FABRIC" fault loss rxe1 100% || exit 1
"$RP_BIN" loopback -d rxe0,rxe1 -s 4K -n 100 --timeout 4 --json "$r/lossy.json" >"$r/lossy.out" 2>&1
rc=$?
[ "$rc" -eq 1 ] || { echo "FAIL: lossy loopback exit $rc, expected 1"; tail -20 "$r/lossy.out"; exit 1; }

"$RP_BIN" diff --drop 90% "$r/base.json" "$r/base.json" >"$r/same.txt" 2>&1
rc=$?
[ "$rc" -eq 0 ] || { echo "FAIL: diff of a report with itself exit $rc"; cat "$r/same.txt"; exit 1; }
grep -q "no regression against OLD" "$r/same.txt" || { echo "FAIL: same.txt"; cat "$r/same.txt"; exit 1; }

"$RP_BIN" diff --drop 90% "$r/base.json" "$r/lossy.json" >"$r/worse.txt" 2>&1
rc=$?
cat "$r/worse.txt"
[ "$rc" -eq 1 ] || { echo "FAIL: diff base lossy exit $rc, expected 1"; exit 1; }
grep -q "^new failures (2):" "$r/worse.txt" || { echo "FAIL: expected 2 new failures"; exit 1; }
"$RP_BIN" diff --json - --drop 90% "$r/base.json" "$r/lossy.json" >"$r/worse.json"
python3 - "$r/worse.json" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
new = sorted((i["src"].split("/")[1], i["dst"].split("/")[1]) for i in d["items"] if i["kind"] == "new_failure")
want = [("rxe0:1", "rxe1:1"), ("rxe1:1", "rxe0:1")]
if new != want or not d["regression"] or d["matched"] != 4:
    print("FAIL: new failures %s (want %s), regression %s, matched %s" % (new, want, d["regression"], d["matched"]))
    sys.exit(1)
print("ok: new failures", new, "statuses", sorted({i["new"]["status"] for i in d["items"] if i["kind"] == "new_failure"}))
PY

"$RP_BIN" diff --drop 90% "$r/lossy.json" "$r/base.json" >"$r/better.txt" 2>&1
rc=$?
[ "$rc" -eq 0 ] || { echo "FAIL: diff lossy base exit $rc, expected 0"; cat "$r/better.txt"; exit 1; }
grep -q "^recovered (2):" "$r/better.txt" || { echo "FAIL: expected 2 recovered"; cat "$r/better.txt"; exit 1; }
echo "ok: diff on real reports"
