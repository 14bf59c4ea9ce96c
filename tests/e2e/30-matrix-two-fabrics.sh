#!/usr/bin/env bash
# fabric: br0:0,1,2 br1:3
# timeout: 170
# host-after: tests/e2e/lib/check-html.sh "$RP_RESULTS/30/m.html" 6
# Four ranks, each its own node on one rxe; node 3 sits on another fabric. The 4x4 matrix: pairs
# among nodes 0-2 ok and verified, pairs with node 3 failed with a reason, rxe3 to drain, exit 1;
# JUnit parses; the HTML page renders in headless Chromium and lists the failures. The run lists
# the notable pairs only (--list-pairs notable, as runs past 100,000 directions do by default): the
# reports carry the 6 failures and count the 6 passes, the --jsonl stream has all 12.
set -uo pipefail
. "$RP_ROOT/tests/e2e/lib/matrix.sh"
mx_need
out=$RP_RESULTS/30
mkdir -p "$out"
mx_mpirun 4 -s 4K -n 200 --timeout 2 --min-bw 0 --outlier 0 --list-pairs notable --jsonl "$out/m.jsonl" \
	--json "$out/m.json" --csv "$out/m.csv" --html "$out/m.html" --junit "$out/m.xml" >"$out/stdout" 2>"$out/stderr"
rc=$?
cat "$out/stdout"
[ $rc -eq 1 ] || { echo "FAIL: exit $rc, want 1"; tail -20 "$out/stderr"; exit 1; }
grep -q "round 3 of 3 done" "$out/stderr" || { echo "FAIL: no progress lines on stderr"; exit 1; }
grep -q "the reports list the notable pairs only" "$out/stderr" || { echo "FAIL: stderr does not say the listing"; exit 1; }
mx_check "$out/m.json" '
assert d["matrix"]["complete"] and d["matrix"]["rounds"] == 3, d["matrix"]
pl = d["matrix"]["pairs_listed"]
# the 6 failures, and a healthy pair only if it is notable too (a warning or flaky in a starved guest)
assert pl["which"] == "notable" and pl["listed"] == len(pairs) and pl["total"] == 12, pl
assert pl["listed"] + pl["not_listed"] == 12 and pl["not_listed"] <= 6, pl
for p in pairs:
    if p["status"] == "ok":
        assert [w for w in p["warnings"] if w != "nominal_link_rate"] or p["confirm"] == "flaky", p
open(sys.argv[1] + ".not_listed", "w").write(str(pl["not_listed"]))
assert pl["every_pair_in"].endswith("/30/m.jsonl"), pl
assert d["summary"]["pairs"] == 12 and d["summary"]["ok"] == 6, d["summary"]
for e in d["matrix"]["endpoints"]:
    assert e["pairs"] == 6 and e["failed"] == (6 if e["node"] == "node3" else 2), e
lines = [json.loads(l) for l in open(sys.argv[1].replace(".json", ".jsonl"))]
assert lines[0]["record"] == "run" and lines[-1]["record"] == "end" and lines[-1]["complete"], lines[-1]
last = {}
for l in lines:
    if l["record"] == "pair":
        last[(idx(l["src"]), idx(l["dst"]))] = l
assert sorted(last) == sorted((a, b) for a in range(4) for b in range(4) if a != b), sorted(last)
for (a, b), l in last.items():
    assert (l["status"] == "ok" and l["verified"]) == (a < 3 and b < 3), l
got = sorted((idx(p["src"]), idx(p["dst"])) for p in pairs if p["status"] != "ok")
assert got == sorted((a, b) for a in range(4) for b in range(4) if a != b and 3 in (a, b)), got
for p in pairs:
    a, b = idx(p["src"]), idx(p["dst"])
    if a < 3 and b < 3:
        assert p["status"] == "ok" and p["verified"] and p["gbps"] > 0, p
    else:
        # node 3 and its rxe are on another bridge: no ARP reply ever comes, so moving the QP to RTR fails
        # in address resolution (deterministic: the neighbour lookup in the kernel times out), the
        # first and every retest attempt alike: resolve_failed, confirmed, nothing else
        assert p["status"] == "resolve_failed" and "address resolution" in p["reason"], p
        assert p["confirm"] == "confirmed" and p["attempts"], p
        assert all(a["status"] == "resolve_failed" for a in p["attempts"]), p
assert nodes["node3"]["drain"] == ["rxe3:1"], nodes["node3"]
assert nodes["node3"]["recommended_nccl_ib_hca"] is None
for n in range(3):
    assert nodes["node%d" % n]["drain"] == [] and nodes["node%d" % n]["recommended_nccl_ib_hca"] == "=rxe%d:1" % n
assert d["verdict"]["pass"] is False and d["verdict"]["failed"] == 6
' || { echo "FAIL: JSON report"; exit 1; }
unlisted=$(cat "$out/m.json.not_listed")
[ "$(wc -l <"$out/m.csv")" -eq $((13 - unlisted)) ] || { echo "FAIL: CSV should have a header and the listed pairs"; exit 1; }
if command -v xmllint >/dev/null; then
	xmllint --noout "$out/m.xml" || { echo "FAIL: JUnit is not well-formed"; exit 1; }
fi
# JUnit: a case per endpoint and per node; only the drained adapter's (its 6 failed directions) and
# its node's fail
[ "$(grep -c '<failure ' "$out/m.xml")" -eq 2 ] &&
	grep -q '<failure type="drain" message="drain: reached no peer: all 6 pairs failed">6 failed directions of its own' "$out/m.xml" &&
	grep -q '<failure type="drain" message="1 of 1 adapters to drain">drain: rxe3:1</failure>' "$out/m.xml" ||
	{ echo "FAIL: JUnit should carry the drained adapter's and its node's failures only"; grep '<failure' "$out/m.xml"; exit 1; }
[ "$(grep -c '<testcase ' "$out/m.xml")" -eq 8 ] ||
	{ echo "FAIL: JUnit should have 8 cases (4 endpoints, 4 nodes)"; grep -c '<testcase ' "$out/m.xml"; exit 1; }
# Chromium under TCG emulation takes minutes to start: the page is rendered on the host after the VM
# (the host-after line above; tests/test_report_html renders one in make check too), or here as well
# when RP_MX_BROWSER=1.
if [ "${RP_MX_BROWSER:-0}" = 1 ]; then
	mx_html_check "$out/m.html" 6 || { echo "FAIL: browser check"; exit 1; }
fi
echo "PASS"
