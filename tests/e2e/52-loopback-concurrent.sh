#!/usr/bin/env bash
# fabric: br0:0,1,2,3
# timeout: 200
# loopback --concurrent on four real rxe ports: after the solo pairs, three rounds of two disjoint pairs
# each run at the same time (every unordered pair once, no port in two pairs of a round); each entry
# of the JSON's "concurrent" section carries its solo figure, the ratio is the pair's Gb/s over it,
# and concurrent_drop is set exactly when the ratio is below 1 - --concurrent-drop (here 40%).
# The text prints one line per concurrent pair. No bandwidth rule: the emulated CPU is the shared
# resource here, so only the consistency of the report is judged, never a figure.
set -u
r=$RP_RESULTS
"$RP_BIN" loopback -d rxe0,rxe1,rxe2,rxe3 --no-self --concurrent --concurrent-drop 40% -s 4K -n 200 --timeout 8 \
	--min-bw 0 --outlier 0 --json "$r/c.json" >"$r/c.out" 2>"$r/c.err"
rc=$?
tail -12 "$r/c.out"
[ "$rc" -eq 0 ] || { echo "FAIL: loopback --concurrent exit $rc"; tail -20 "$r/c.err"; exit 1; }
[ "$(grep -c '^  round [123]  rxe' "$r/c.out")" -eq 6 ] || { echo "FAIL: expected 6 concurrent lines"; exit 1; }
grep -q "^\[concurrent 3/3\] 2 pairs at once" "$r/c.err" || { echo "FAIL: no progress line for round 3"; exit 1; }
/usr/bin/python3 - "$r/c.json" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
c = d["concurrent"]
assert len(c) == 6, len(c)
rounds = {}
for e in c:
    rounds.setdefault(e["round"], []).append(e)
assert sorted(rounds) == [0, 1, 2], sorted(rounds)
seen = set()
for k, es in rounds.items():
    ports = [e["src"] for e in es] + [e["dst"] for e in es]
    assert len(set(ports)) == 4, ("a port in two pairs of round", k, ports)
    for e in es:
        seen.add(tuple(sorted((e["src"], e["dst"]))))
assert len(seen) == 6, seen
solo = {(p["src"]["device"], p["dst"]["device"]): p["gbps"] for p in d["pairs"] if p["status"] == "ok"}
for e in c:
    p = e["pair"]
    assert p["status"] == "ok" and p["verified"], p
    # the report writes reals to 6 significant digits: compare relatively
    assert abs(e["solo_gbps"] / solo[(e["src"], e["dst"])] - 1) < 1e-4, (e["solo_gbps"], solo[(e["src"], e["dst"])])
    assert abs(e["ratio"] / (p["gbps"] / e["solo_gbps"]) - 1) < 1e-3, e
    assert ("concurrent_drop" in p["warnings"]) == (e["ratio"] < 0.6), e
print("ok: 3 rounds x 2 disjoint pairs, every pair once, ratios %s" % sorted(round(e["ratio"], 2) for e in c))
PY
