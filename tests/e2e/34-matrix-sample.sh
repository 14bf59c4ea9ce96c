#!/usr/bin/env bash
# fabric: br0:0,1,2,3
# timeout: 150
# sample:2 on four nodes: each endpoint gets two distinct peers, exactly the pairs --plan prints for
# that seed (the schedule is a pure function of endpoints, pattern and seed).
set -uo pipefail
. "$RP_ROOT/tests/e2e/lib/matrix.sh"
mx_need
out=$RP_RESULTS/34
mkdir -p "$out"
common=(-s 4K -n 100 --timeout 2 --min-bw 0 --outlier 0)

mx_mpirun 4 "${common[@]}" --pattern sample:2 --seed 5 --json "$out/sample.json" >"$out/sample.out" 2>&1
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: sample exit $rc"; tail -20 "$out/sample.out"; exit 1; }
"$RP_BIN" matrix --plan --nodes 4 --hcas 1 --pattern sample:2 --seed 5 >"$out/sample.plan" ||
	{ echo "FAIL: plan"; exit 1; }
plan=$(grep -o '[0-9]*<->[0-9]*' "$out/sample.plan" | tr '\n' ' ')
mx_check "$out/sample.json" "
plan = sorted(tuple(sorted(map(int, x.split('<->')))) for x in '$plan'.split())
got = sorted(set(tuple(sorted((idx(p['src']), idx(p['dst'])))) for p in pairs))
assert got == plan, (got, plan)
assert len(pairs) == 8
for e in range(4):
    peers = {idx(p['dst']) for p in pairs if idx(p['src']) == e}
    assert len(peers) == 2 and e not in peers, (e, peers)
" || { echo "FAIL: sample pair set"; exit 1; }
echo "PASS"
