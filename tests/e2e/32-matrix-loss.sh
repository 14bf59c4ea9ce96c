#!/usr/bin/env bash
# fabric: br0:0,1,2,3
# timeout: 260
# 100% packet loss on rxe3's link: every pair with node 3 fails with a reason (transport retries or
# address resolution), nodes 0-2 pass among themselves, rxe3 is to drain, exit 1. --jsonl streams
# every measured direction: a run line, a pair line per measurement (retests again, with their
# attempts), an end line; the last line of each direction is the JSON report's measurement (its
# status and attempts; the run-wide judgement, confirm and below_threshold, is the summary's).
# Then --sweep 2 --timeout 5: the same verdict, found by the reachability sweep (two screening rounds
# of 3 s without the MTU probe, then node3's six directions probed again at the full --timeout and
# NCCL's ACK timeout, node3 writing two and taking two at a time), node3's directions left out of the
# bandwidth rounds with both attempts, no retest round after them; run with the default --min-bw,
# which soft devices pass with a nominal_link_rate warning. The first run has --sweep off: the
# lock-step rounds and their retest rounds alone (the default sweep is the second run's path).
set -uo pipefail
. "$RP_ROOT/tests/e2e/lib/matrix.sh"
mx_need
out=$RP_RESULTS/32
mkdir -p "$out"
"$RP_FABRIC" fault loss rxe3 100% || { echo "FAIL: could not inject loss"; exit 1; }
mx_mpirun 4 -s 4K -n 200 --timeout 2 --min-bw 0 --outlier 0 --sweep off --json "$out/m.json" --jsonl "$out/m.jsonl" >"$out/stdout" 2>"$out/stderr"
rc=$?
cat "$out/stdout"
[ $rc -eq 1 ] || { echo "FAIL: exit $rc, want 1"; tail -20 "$out/stderr"; exit 1; }
mx_check "$out/m.json" '
assert len(pairs) == 12 and d["matrix"]["complete"]
for p in pairs:
    a, b = idx(p["src"]), idx(p["dst"])
    if 3 in (a, b):
        # Not one exact code: which symptom of the transport comes first under 100% loss depends
        # on whether the neighbour entry for rxe3 is still cached (no: resolve_failed; yes: the
        # writes go out and are never acknowledged, timed_out when --timeout 2 passes before the
        # ACK retries run out, retry_exceeded otherwise). Never a consequence code (peer_lost,
        # setup_failed), and confirmed: the loss stays for the retest rounds, both ranks alive.
        assert p["status"] in ("timed_out", "retry_exceeded", "resolve_failed") and p["reason"], p
        assert p["confirm"] == "confirmed" and len(p["attempts"]) >= 2, p
    else:
        # ok, or flaky (failed once, ok on retest): a healthy pair may be, see the report on peer_lost
        assert p["status"] == "ok" and p["verified"] and p["confirm"] in (None, "flaky"), p
assert nodes["node3"]["drain"] == ["rxe3:1"], nodes["node3"]
assert all(nodes["node%d" % n]["drain"] == [] for n in range(3))
' || { echo "FAIL: JSON report"; exit 1; }
python3 - "$out/m.json" "$out/m.jsonl" <<'PY' || { echo "FAIL: JSON Lines stream"; exit 1; }
import json, sys
d = json.load(open(sys.argv[1]))
lines = [json.loads(x) for x in open(sys.argv[2])]
assert lines[0]["record"] == "run" and lines[0]["command"] == "matrix" and lines[0]["simulated"] is False, lines[0]
assert lines[-1] == {"record": "end", "pairs": len(lines) - 2, "complete": True}, lines[-1]
pl = lines[1:-1]
assert all(x["record"] == "pair" for x in pl)
key = lambda p: (p["src"]["node"], p["src"]["device"], p["dst"]["node"], p["dst"]["device"])
last = {}
for x in pl:
    last[key(x)] = x
assert len(last) == len(d["pairs"]) == 12, (len(last), len(d["pairs"]))
retested = sum(1 for x in pl if x["retest"])
assert retested >= 6 and len(pl) == 12 + retested, (len(pl), retested)
for p in d["pairs"]:
    x = last[key(p)]
    assert x["status"] == p["status"], (x, p)
    assert len(x.get("attempts", [])) == len(p.get("attempts", [])), (x, p)
PY
mx_mpirun 4 -s 4K -n 100 --timeout 5 --outlier 0 --sweep 2 --json "$out/s.json" >"$out/s.stdout" 2>"$out/s.stderr"
rc=$?
cat "$out/s.stdout"
[ $rc -eq 1 ] || { echo "FAIL: --sweep: exit $rc, want 1"; tail -20 "$out/s.stderr"; exit 1; }
grep -q "after a reachability sweep of 4 rounds (6 directions unreachable, 0 flaky)" "$out/s.stdout" ||
	{ echo "FAIL: --sweep: the summary line"; exit 1; }
mx_check "$out/s.json" '
m = d["matrix"]
assert len(pairs) == 12 and m["complete"] and m["retest_rounds"] == 0, m
# --timeout 5 with --retest 1: the first pass screens (3 s, no MTU probe), the second confirms at 5 s
sw = dict(m["sweep"])
cleared = sw.pop("cleared")
assert 0 < sw.pop("elapsed_s") < m["elapsed_s"], m
# --hold (the default): the bandwidth on the probes connections; a cleared direction waits for a late round
assert sw.pop("hold") is True and sw.pop("hold_off") is None, m["sweep"]
assert (sw.pop("late_rounds") > 0) == (cleared > 0), m["sweep"]
assert sw.pop("rank0_writes_on_held") + sw.pop("rank0_writes_fresh") in (1, 2), m["sweep"]   # 0 -> 1, 0 -> 2 (0 -> 3 is dead)
# rxe3 fails with 3 peers only: too few distinct peers to call it dead (doc/dead-endpoints.md), so no
# confirmation round; its directions are settled one by one as unreachable
assert (sw.pop("dead_endpoints"), sw.pop("endpoint_dead_directions"), sw.pop("confirm_rounds")) == (0, 0, 0), m["sweep"]
assert sw == {"width": 2, "rounds": 4, "unreachable": 6, "flaky": 0, "screen_s": 3.0}, m["sweep"]
assert cleared >= 0   # a healthy direction that failed the screen and passed is measured as any other
for p in pairs:
    a, b = idx(p["src"]), idx(p["dst"])
    if 3 in (a, b):
        # as above; found by the sweep, probed again at NCCL timeout, never measured for bandwidth
        assert p["status"] in ("timed_out", "retry_exceeded", "resolve_failed"), p
        assert p["reason"].startswith("reachability sweep: "), p["reason"]
        assert p["confirm"] == "confirmed" and len(p["attempts"]) == 2, p
        assert p["attempts"][1]["qp_timeout"] == 20, p["attempts"]
    else:
        # the default --min-bw (a fraction of the link rate) is not applied to soft devices: the rate of rxe
        # is nominal, so the pair passes with the nominal_link_rate warning (before: soft was lost in
        # the collection on rank 0 and every pair failed below_threshold)
        assert p["status"] == "ok" and p["verified"] and p["iters"] == 100 and p["confirm"] is None, p
        assert p["src"]["soft"] and p["dst"]["soft"] and "nominal_link_rate" in p["warnings"], p
assert nodes["node3"]["drain"] == ["rxe3:1"], nodes["node3"]
assert all(nodes["node%d" % n]["drain"] == [] for n in range(3))
' || { echo "FAIL: --sweep JSON report"; exit 1; }
# the simulator, the same fault and options: the same round list, verdict and directions
mx_sim_agree "$out/s.json" $'nodes 4\nadapters 1\ndevice-prefix rxe\ndead-endpoint node3/rxe0' "$out/sim.json" \
	-s 4K -n 100 --timeout 5 --outlier 0 --sweep 2 || { echo "FAIL: the simulator disagrees with the test bed"; exit 1; }
echo "PASS"
