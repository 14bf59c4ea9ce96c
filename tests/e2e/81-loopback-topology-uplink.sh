#!/usr/bin/env bash
# fabric: br0:0,1 br1:2,3 br2:4,5 spine:br0,br1,br2
# timeout: 600
# Three leaf switches (br0: rxe0, rxe1; br1: rxe2, rxe3; br2: rxe4, rxe5) joined by a spine (sp0),
# described to the verdict by a native --topology file (issue 28 item 4). Leaf br1's uplink drops
# everything: the pairs between br1 and the other leaves fail, the rest pass. With the file the
# verdict names that uplink as the first suspect ("uplink br1 - sp0": every pair through it failed,
# while br0's and br2's uplinks carried pairs that passed) and drains nothing: each adapter moves data
# with its leaf-mate. (Without the file e2e 80 covers it: nothing is drained.)
set -u
run() {   # name [options]: loopback over the six devices; its exit status
	local name=$1
	shift
	"$RP_BIN" loopback -d rxe0,rxe1,rxe2,rxe3,rxe4,rxe5 --no-self -s 4K -n 100 --timeout 4 --outlier 0 --retest 0 \
		--json "$RP_RESULTS/$name.json" "$@" >"$RP_RESULTS/$name.out" 2>"$RP_RESULTS/$name.err"
}
run healthy
rc=$?
[ "$rc" -eq 0 ] || { echo "FAIL: healthy three-leaf fabric: exit $rc"; cat "$RP_RESULTS/healthy.out" "$RP_RESULTS/healthy.err"; exit 1; }

# The topology file, with the node name the run reports.
node=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["pairs"][0]["src"]["node"])' "$RP_RESULTS/healthy.json") ||
	{ echo "FAIL: no node name in the healthy run's JSON"; exit 1; }
{
	echo "# three leaves, one spine: every pair between two leaves crosses sp0"
	echo "route dmodk"
	for n in 0 1 2 3 4 5; do echo "adapter $node/rxe$n:1 br$((n / 2)) $((n % 2 + 1))"; done
	for l in 0 1 2; do echo "uplink br$l sp0"; done
} >"$RP_RESULTS/topology"

bash "$RP_FABRIC" fault uplink br1 loss 100%
run uplink --topology "$RP_RESULTS/topology"
rc=$?
cat "$RP_RESULTS/uplink.out"
[ "$rc" -eq 1 ] || { echo "FAIL: dead uplink: exit $rc, expected 1"; cat "$RP_RESULTS/uplink.err"; exit 1; }
# --retest 0 sweeps too: the 16 directions through the uplink found in one round of probes at once at
# the full --timeout, not one deadline after another (issue 29)
grep -q '^\[sweep\] 16 dead (--retest 0: one probe at the full --timeout decided, not measured again), 0 failed once then passed, in 1 round,' \
	"$RP_RESULTS/uplink.err" || { echo "FAIL: the sweep did not decide the 16 directions in one round"; grep '^\[sweep\]' "$RP_RESULTS/uplink.err"; exit 1; }
! grep -q '^drain:' "$RP_RESULTS/uplink.out" || { echo "FAIL: a dead uplink drains no adapter"; exit 1; }
grep -A1 '^suspects (most likely first):$' "$RP_RESULTS/uplink.out" | grep -q '^  1\. uplink br1 - sp0: 8 of 8 peer pairs through it failed' ||
	{ echo "FAIL: the first suspect is not br1's uplink with 8 of 8 failed"; exit 1; }
grep -q '^path faults: ' "$RP_RESULTS/uplink.out" && { echo "FAIL: the uplink explains every failure, yet path faults remain"; exit 1; }
python3 - "$RP_RESULTS/uplink.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
bad = []
for p in r["pairs"]:
    s, d = int(p["src"]["device"][3:]) // 2, int(p["dst"]["device"][3:]) // 2
    through = (s == 1) != (d == 1)
    if through == (p["status"] == "ok"):
        bad.append("%s->%s: %s" % (p["src"]["device"], p["dst"]["device"], p["status"]))
assert len(r["pairs"]) == 30, len(r["pairs"])
if bad:
    print("FAIL: only the pairs through br1's uplink fail:", *bad, sep="\n  ")
    sys.exit(1)
print("ok: br1's uplink is the first suspect, 16 directions through it failed, nothing drained")
PY
