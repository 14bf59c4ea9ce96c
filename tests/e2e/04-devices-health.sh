#!/usr/bin/env bash
# fabric: br0:0,1
# timeout: 150
# The health section of 'devices' on real Soft-RoCE devices: a clean fabric gives no warning and no
# note; a link taken down is port_down with its cause. 'devices --counters' reads rxe's hw_counters:
# under 5% loss a loopback run moves retransmission counters (classed retrans) and no link-flap or
# physical-layer counter; on the clean link (measured first) retransmissions stay below what
# --max-errors' default calls lossy (10 per GB, judged as at least 1 GB): not zero, because on the
# emulated CPU an ACK timeout can fire without any loss (a stalled vCPU), and rxe then counts one.
set -u
BIN=${RP_BIN:?RP_BIN not set}
fail() { echo "FAIL: $*"; exit 1; }

out=$("$BIN" devices --json) || fail "devices --json exited $?"
echo "$out" >"$RP_RESULTS/clean.json"
python3 - "$RP_RESULTS/clean.json" <<'PY' || exit 1
import json, sys
h = json.load(open(sys.argv[1]))["health"]
assert h["warnings"] == [] and h["notes"] == [], (h["warnings"], h["notes"])
rates = {r["device"]: r for r in h["expected_rates"]}
for d in ("rxe0", "rxe1"):
    assert rates[d]["limit"] == "port" and rates[d]["pcie_gbps"] is None, rates[d]
print("ok: clean fabric, no warning, no note")
PY
"$BIN" devices | grep -q "^  no warning$" || fail "text output does not say 'no warning'"

# Counters around a loopback run on the clean link, then on a lossy one (no bandwidth rule: this
# case is about the counters).
counters() { "$BIN" devices --counters --json >"$RP_RESULTS/$1.json" || fail "devices --counters exited $?"; }
loop() { "$RP_BIN" loopback -d rxe0,rxe1 --no-self -s 4K -n 300 --timeout 10 --min-bw 0 --outlier 0 >>"$RP_RESULTS/loopback.out" 2>&1 ||
	fail "loopback exited $? ($1)"; }
counters c0
loop clean
counters c1
"$RP_FABRIC" fault loss rxe1 5% || exit 1
loop lossy
counters c2
"$RP_FABRIC" fault clear rxe1 || exit 1
python3 - "$RP_RESULTS" <<'PY' || exit 1
import json, sys
d = sys.argv[1]
def load(n):
    return {(dev["name"], p["port"]): p["counters"] for dev in json.load(open(f"{d}/{n}.json"))["devices"] for p in dev["ports"]}
c0, c1, c2 = load("c0"), load("c1"), load("c2")
def moved(a, b):
    out = {}
    for port, ctrs in b.items():
        for name, v in ctrs.items():
            before = a[port][name]["value"]
            if v["value"] is not None and before is not None and v["value"] != before:
                out[f"{port[0]}:{port[1]} {name}"] = (v["class"], v["value"] - before)
    return out
clean, lossy = moved(c0, c1), moved(c1, c2)
print("lossy run:", lossy)
print("clean run:", clean)
assert any(c == "retrans" for c, _ in lossy.values()), "no retrans counter moved under 5% loss"
assert not any(c in ("link_flap", "phys") for c, _ in lossy.values()), lossy
assert not any(c in ("link_flap", "phys") for c, _ in clean.values()), clean
for dev in ("rxe0:1", "rxe1:1"):
    n = sum(v for k, (c, v) in clean.items() if c == "retrans" and k.startswith(dev + " "))
    assert n < 10, "clean link: %d retransmissions on %s, lossy by the default rule" % (n, dev)
print("ok: loss moves retrans counters only; the clean link stays below the lossy rule")
PY

# A link taken down: port_down, with the state the kernel shows and its cause.
"$RP_FABRIC" fault down rxe1 || exit 1
for _ in 1 2 3 4 5; do
	out=$("$BIN" devices --json) || fail "devices --json exited $? with rxe1 down"
	echo "$out" | jq -e '.health.warnings | map(select(.code == "port_down" and .device == "rxe1:1")) | length == 1' \
		>/dev/null && break
	sleep 1
done
echo "$out" | jq -c '.health.warnings'
echo "$out" | jq -e '.health.warnings | map(select(.code == "port_down" and .device == "rxe1:1")) | length == 1' \
	>/dev/null || fail "no port_down for rxe1:1: $(echo "$out" | jq -c '.health.warnings')"
"$RP_FABRIC" fault up rxe1 || exit 1
echo "PASS"
