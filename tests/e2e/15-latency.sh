#!/usr/bin/env bash
# fabric: br0:0,1
# timeout: 90
# Latency mode (write ping-pong like ib_write_lat): ordered statistics, then a verified final write.
set -u
"$RP_BIN" loopback -d rxe0,rxe1 --no-self --latency -s 64 -n 300 --json "$RP_RESULTS/lat.json" >"$RP_RESULTS/stdout" 2>"$RP_RESULTS/stderr"
rc=$?
cat "$RP_RESULTS/stdout"
[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc"; tail "$RP_RESULTS/stderr"; exit 1; }
python3 - "$RP_RESULTS/lat.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for p in r["pairs"]:
    l = p["latency"]
    assert p["status"] == "ok" and p["verified"], p
    assert l["measured"] and l["samples"] == 300, l
    assert 0 < l["min_us"] <= l["median_us"] <= l["p99_us"] <= l["max_us"], l
print("ok: latency measured and verified in both directions")
PY
