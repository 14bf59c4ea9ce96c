#!/usr/bin/env bash
# fabric: br0:0,1,2
# timeout: 240
# 5% loss on rxe1's link (netem on both ends of its veth): the transport retransmits, so every pair
# through it still moves and verifies its data, but it can run several times slower than its
# neighbours (the issue: 0.014 Gb/s against 0.27, and loopback said PASS). The shared verdict now
# flags such a pair as an outlier (rxe is a soft device: the default --min-bw fraction of its nominal
# link rate is not applied, and the verdict says so), measures it again (--retest 1, with the probe's
# ACK timeout: a slow pair is not a timeout failure), finds it as slow again: confirmed.
# Exact: the pairs off rxe1's link (rxe0<->rxe2, the self pairs, which never leave the device) are
# ok; every failure is a pair across rxe1's link, below_threshold by the outlier rule, confirmed after
# 2 of 2 attempts with --qp-timeout 14; nothing is unconfirmed; at least one pair failed; the drains
# are what the cover rule gives for those failures (rxe1 when it is in more of them than its peers;
# nobody when only rxe1<->rxe2 failed: the old tie rule drained rxe2 then, a false drain seen here). Not exact: which of the four pairs across the
# link are slow. Two runs on this kernel: 2 and 3 of 4, different directions each time (how rxe
# recovers a lost packet, by an immediate NAK or by the ACK timeout, varies per run), so the set of
# slow pairs is read from the results, not asserted. Under TCG contention a clean pair may need its
# retest (then it is ok and flaky), so the clean pairs' confirmation is not asserted.
# Two verdicts are right, and the run decides which: rxe sometimes recovers its lost packets fast
# enough that no pair across the link is half as fast as its row (seen in CI: 0.060 against 0.116
# Gb/s, one outlier that passed its retest). Then the run passes (exit 0), but never silently: every
# pair across rxe1's link carries the `lossy` warning (its port counters moved: retransmissions),
# the verdict line counts them, and nothing is drained. A pair across the link that is a plain,
# unwarned pass fails this case either way: that was the issue's silent pass.
set -u
"$RP_FABRIC" fault loss rxe1 5% || exit 1
"$RP_BIN" loopback -d rxe0,rxe1,rxe2 -s 4K -n 1000 --timeout 10 --json "$RP_RESULTS/loss5.json" \
	--csv "$RP_RESULTS/loss5.csv" >"$RP_RESULTS/stdout" 2>"$RP_RESULTS/stderr"
rc=$?
cat "$RP_RESULTS/stdout"
[ "$rc" -eq 1 ] || [ "$rc" -eq 0 ] || { echo "FAIL: exit $rc, expected 1 (or 0 with every pair across the link lossy)"; tail -20 "$RP_RESULTS/stderr"; exit 1; }
out=$RP_RESULTS/stdout
if [ "$rc" -eq 1 ]; then
	grep -Eq '^verdict: FAIL \(([1234]) of 9 pairs failed: below_threshold \1; \1 confirmed, 0 unconfirmed;' "$out" ||
		{ echo "FAIL: verdict line"; exit 1; }
else
	grep -Eq '^verdict: PASS \(9 of 9 pairs ok and verified; .*, [4-9] lossy,' "$out" ||
		{ echo "FAIL: a pass must count the lossy pairs on its verdict line"; exit 1; }
fi
grep -q '^note: 9 pairs on soft devices (rxe, siw) whose link rate is nominal' "$out" ||
	{ echo "FAIL: the verdict does not say the fraction of the nominal rate was not applied"; exit 1; }
# every lossy pair: its result line, then how it held up
python3 - "$RP_RESULTS/loss5.json" "$out" "$rc" <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1]))
rc = int(sys.argv[3])
lines = open(sys.argv[2]).read().splitlines()
assert len(r["pairs"]) == 9, len(r["pairs"])
bad = []
failed = []
for p in r["pairs"]:
    s, d = p["src"]["device"], p["dst"]["device"]
    across = "rxe1" in (s, d) and s != d
    print("%s->%s: %s %.3f Gb/s" % (s, d, p["status"], p["gbps"]))
    if not p["verified"] or p["bytes"] != 1000 * 4096:
        bad.append("%s->%s: verified=%s bytes=%d" % (s, d, p["verified"], p["bytes"]))
    if p["status"] == "ok":
        if across and "lossy" not in p.get("warnings", []):
            bad.append("%s->%s: a plain pass across the lossy link, no lossy warning: the silent pass of the issue" % (s, d))
        continue
    if not across or p["status"] != "below_threshold" or ("outlier" not in p["reason"] and
                                                         "reverse direction of the same link" not in p["reason"]):
        bad.append("%s->%s: %s %r (only pairs across rxe1's link may fail, as outliers or under 0.1 x "
                   "their reverse)" % (s, d, p["status"], p["reason"]))
    failed.append((s, d))
    # the text under the pair's result line
    head = [i for i, l in enumerate(lines) if l.startswith("%s:1 -> %s:1 " % (s, d))]
    below = lines[head[0] + 1] if len(head) == 1 and head[0] + 1 < len(lines) else ""
    if not below.startswith("    confirmed: failed 2 of 2 attempts (below_threshold"):
        bad.append("%s->%s: not confirmed: %r" % (s, d, below))
    if below.count("--qp-timeout 14") != 2:
        bad.append("%s->%s: a slow pair is retested with the probe's ACK timeout: %r" % (s, d, below))
if rc == 1 and not failed:
    bad.append("exit 1 without a failed pair")
if rc == 0 and failed:
    bad.append("exit 0 with failed pairs %s" % failed)
# the cover rule on these failures: the endpoint in most of them is drained (ties to the later
# one), unless a peer it failed with failed as often: then those failures blame nobody
drained = sorted(l.split()[1] for l in lines if l.startswith("drain: "))
want = []
left = list(failed)
while left:
    deg = {}
    for s, d in left:
        for e in (s, d):
            deg[e] = deg.get(e, 0) + 1
    top = max(deg.values())
    e = max(k for k, v in deg.items() if v == top)
    tied = [f for f in left if e in f and deg[f[0] if f[1] == e else f[1]] == top]
    if tied:
        left = [f for f in left if f not in tied]
    else:
        want.append(e + ":1")
        left = [f for f in left if e not in f]
if drained != sorted(want):
    bad.append("drained %s, the cover of %s gives %s" % (drained, failed, sorted(want)))
csv = open(sys.argv[1].replace(".json", ".csv")).read().splitlines()
assert len(csv) == 10, len(csv)
if bad:
    print("FAIL:\n  " + "\n  ".join(bad))
    sys.exit(1)
print("ok: %d pairs across the lossy link are confirmed outliers (%s), the others across it lossy, the pairs off it ok; drained %s" % (len(failed), failed, drained))
PY
