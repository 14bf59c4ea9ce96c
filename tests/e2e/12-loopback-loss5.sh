#!/usr/bin/env bash
# fabric: br0:0,1
# timeout: 120
# 5% loss on rxe1's link: the transport retransmits; every pair is still ok and verified.
set -u
"$RP_FABRIC" fault loss rxe1 5% || exit 1
"$RP_BIN" loopback -d rxe0,rxe1 --no-self -s 4K -n 300 --timeout 10 --json "$RP_RESULTS/loss5.json" >"$RP_RESULTS/stdout" 2>"$RP_RESULTS/stderr"
rc=$?
cat "$RP_RESULTS/stdout"
[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc, expected 0"; tail -20 "$RP_RESULTS/stderr"; exit 1; }
python3 - "$RP_RESULTS/loss5.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert len(r["pairs"]) == 2, r["pairs"]
for p in r["pairs"]:
    assert p["status"] == "ok" and p["verified"] and p["bytes"] == 300 * 4096, p
print("ok: both directions verified under 5% loss")
PY
