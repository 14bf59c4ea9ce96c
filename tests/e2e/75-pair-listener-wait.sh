#!/usr/bin/env bash
# fabric: br0:0,1
# timeout: 120
# Issue 26 item 20: a listener that let no writer in says how long it waited and whom it refused,
# and why. pair --listen --wait 4 with a token; one writer with the wrong token is refused; the
# listener's report then says "no valid writer within --wait 4 s (waited 4.x s); refused 1 client:
# 1 with a wrong token", elapsed_s the wait (before: "no side channel to the peer: Connection timed
# out", elapsed_s 0.0).
set -u
port=18631
export RDMAPROBE_TOKEN=right-token-1234
"$RP_BIN" pair --listen -p $port -d rxe0 --wait 4 --json "$RP_RESULTS/l.json" >"$RP_RESULTS/l.out" 2>&1 &
lpid=$!
sleep 1
RDMAPROBE_TOKEN=wrong-token-5678 "$RP_BIN" pair 127.0.0.1 -p $port -d rxe1 --wait 3 >"$RP_RESULTS/w.out" 2>&1
wrc=$?
wait $lpid
lrc=$?
cat "$RP_RESULTS/l.out" "$RP_RESULTS/w.out"
[ "$wrc" -ne 0 ] || { echo "FAIL: the wrong-token writer exited 0"; exit 1; }
[ "$lrc" -eq 1 ] || { echo "FAIL: listener exit $lrc, expected 1"; exit 1; }
python3 - "$RP_RESULTS/l.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["pairs"][0]
print(p["status"], p["elapsed_s"], p["reason"])
assert p["reason"].startswith("no valid writer within --wait 4 s (waited "), p["reason"]
assert "refused 1 client: 1 with a wrong token" in p["reason"], p["reason"]
assert p["elapsed_s"] >= 3.5, p["elapsed_s"]
print("ok")
PY
