#!/usr/bin/env bash
# fabric: br0:0,1,2
# timeout: 240
# The counter rule in the matrix: with 5% netem loss on rxe1's link, the pairs across it (node0<->
# node1, node1<->node2) still move and verify their data (--min-bw 0 --outlier 0 leave only the
# counter rule to speak) and come out ok but "lossy", with a retransmission counter that moved in
# their "counters"; the clean pairs (node0<->node2) carry no warning but the soft device's nominal_link_rate. Exit 0: lossy is a
# warning, not a failure. Which retransmission counter moves on which side is not fixed (rxe recovers
# a loss by a NAK or by the ACK timeout), only that one did.
set -uo pipefail
. "$RP_ROOT/tests/e2e/lib/matrix.sh"
mx_need
out=$RP_RESULTS/70
mkdir -p "$out"
"$RP_FABRIC" fault loss rxe1 5% || { echo "FAIL: could not inject loss"; exit 1; }
mx_mpirun 3 -s 4K -n 500 --timeout 10 --min-bw 0 --outlier 0 --retest 0 --json "$out/m.json" \
	>"$out/stdout" 2>"$out/stderr"
rc=$?
cat "$out/stdout"
"$RP_FABRIC" fault clear rxe1
[ $rc -eq 0 ] || { echo "FAIL: exit $rc, want 0 (bandwidth passes, lossy is a warning)"; tail -20 "$out/stderr"; exit 1; }
mx_check "$out/m.json" '
RETRANS = {"completer_retry_err", "out_of_seq_request", "duplicate_request", "rcvd_seq_err", "retry_exceeded_err"}
assert len(pairs) == 6 and d["matrix"]["complete"], len(pairs)
for p in pairs:
    a, b = idx(p["src"]), idx(p["dst"])
    ctr = p.get("counters") or {}
    moved = {}
    for side in ("src", "dst"):
        c = ctr.get(side)
        assert c is not None, ("counters not measured", side, p)
        for k, v in list(c["moved"].items()) + list(c["at_least"].items()):
            moved[side + ":" + k] = v
    retrans = {k: v for k, v in moved.items() if k.split(":", 1)[1] in RETRANS}
    print("node%d->node%d: %s %s %.3f retrans=%s" % (a, b, p["status"], p["warnings"], p["gbps"], retrans))
    assert p["status"] == "ok" and p["verified"], p
    if 1 in (a, b):
        assert "lossy" in p["warnings"], ("across the lossy link, no lossy warning", p)
        assert retrans, ("lossy without a retransmission counter", ctr)
    else:
        # nominal_link_rate is on every rxe pair; interval_drop may join it on a vCPU stall of the
        # emulated VM (tests/e2e/10-loopback-fabric.sh); nothing else may.
        assert not set(p["warnings"]) - {"nominal_link_rate", "interval_drop"}, ("a warning on a clean pair", p["warnings"], ctr)
' || { echo "FAIL: JSON report"; exit 1; }
echo "PASS"
