#!/usr/bin/env bash
# fabric: br0:0,1,2
# timeout: 200
# matrix --bidir (issue 11): each unordered pair is measured once, both directions at the same time,
# each verified and reported (3 records for 3 endpoints, not 6); the text grid shows the reverse
# direction's rate in the mirrored cell. Healthy fabric: everything ok, exit 0.
set -uo pipefail
. "$RP_ROOT/tests/e2e/lib/matrix.sh"
mx_need
out=$RP_RESULTS/62
mkdir -p "$out"
mx_mpirun 3 --bidir -s 64K -n 100 --timeout 10 --min-bw 0 --outlier 0 --json "$out/m.json" \
	>"$out/stdout" 2>"$out/stderr"
rc=$?
cat "$out/stdout"
[ $rc -eq 0 ] || { echo "FAIL: exit $rc, want 0"; tail -20 "$out/stderr"; exit 1; }
mx_check "$out/m.json" '
assert len(pairs) == 3 and d["matrix"]["complete"], len(pairs)
seen = set()
for p in pairs:
    a, b = idx(p["src"]), idx(p["dst"])
    assert a < b, (a, b)
    seen.add((a, b))
    rv = p.get("reverse")
    assert p.get("bidir") and rv, p
    assert p["status"] == "ok" and p["forward_status"] == "ok" and rv["status"] == "ok", p
    assert p["verified"] and rv["verified"] and p["gbps"] > 0 and rv["gbps"] > 0, p
    assert abs(p["gbps_sum"] - p["gbps"] - rv["gbps"]) < 1e-3, p
assert seen == {(0, 1), (0, 2), (1, 2)}, seen
' || { echo "FAIL: JSON report"; exit 1; }
# every off-diagonal cell of the grid holds a rate (the lower triangle from the reverse directions)
python3 - "$out/stdout" <<'PY' || { echo "FAIL: text grid"; exit 1; }
import re, sys
rows = [l for l in open(sys.argv[1]) if re.match(r"^[0-2] node", l)]
assert len(rows) == 3, rows
for i, l in enumerate(rows):
    cells = l[28:].split()
    assert len(cells) == 2, l
    assert all(re.match(r"^[0-9.]+$", c) for c in cells), l
PY
echo "PASS"
