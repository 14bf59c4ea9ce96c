#!/usr/bin/env bash
# fabric: br0:0,1,2,3
# timeout: 200
# Rank 3's -d matches no adapter (=rxe_missing). The job is not aborted: rank 3's endpoint is the
# finding (every pair with it no_usable_port, with the reason; drained), the pairs among nodes 0-2
# are measured and pass, exit 1, the JSON is written. Then a run whose --json path cannot be written:
# refused before anything is measured, the file named on stderr, exit 2. Last, a threshold no
# pair meets (--min-bw 1000G): every pair is measured again in extra contention-free rounds (three
# for three endpoints) before the verdict, and still fails.
set -uo pipefail
. "$RP_ROOT/tests/e2e/lib/matrix.sh"
mx_need
out=$RP_RESULTS/38
mkdir -p "$out"
RP_MX_NODEV_RANK=3 mx_mpirun 4 -s 4K -n 200 --timeout 2 --min-bw 0 --outlier 0 --json "$out/m.json" \
	>"$out/stdout" 2>"$out/stderr"
rc=$?
cat "$out/stdout"
[ $rc -eq 1 ] || { echo "FAIL: exit $rc, want 1"; tail -20 "$out/stderr"; exit 1; }
grep -q "rank 3 (node3): .*rxe_missing.*no_usable_port" "$out/stderr" ||
	{ echo "FAIL: rank 0 does not name rank 3's missing port"; tail -20 "$out/stderr"; exit 1; }
mx_check "$out/m.json" '
eps = d["matrix"]["endpoints"]
assert [(e["node"], e["device"]) for e in eps] == [("node0", "rxe0"), ("node1", "rxe1"), ("node2", "rxe2"), ("node3", "rxe_missing")], eps
assert eps[3]["no_port"] and "no_port" not in eps[0], eps
assert len(pairs) == 12 and d["matrix"]["complete"], (len(pairs), d["matrix"])
for p in pairs:
    a, b = idx(p["src"]), idx(p["dst"])
    if 3 in (a, b):
        assert p["status"] == "no_usable_port" and "rxe_missing" in p["reason"], p
    else:
        assert p["status"] == "ok" and p["verified"], p
assert nodes["node3"]["drain"] == ["rxe_missing:0"], nodes["node3"]
for n in range(3):
    assert nodes["node%d" % n]["drain"] == [] and nodes["node%d" % n]["recommended_nccl_ib_hca"] == "=rxe%d:1" % n, nodes
assert d["verdict"]["failed"] == 6
' || { echo "FAIL: JSON report"; exit 1; }

# An unwritable --json (no such directory): refused before anything is measured (issue 26 item 19;
# it used to measure every round and then exit 3), every rank stopping with exit 2.
mx_mpirun 4 -s 4K -n 100 --timeout 2 --min-bw 0 --outlier 0 --json /nonexistent-dir/m.json --csv "$out/m.csv" \
	>"$out/stdout2" 2>"$out/stderr2"
rc=$?
cat "$out/stdout2"
[ $rc -eq 2 ] || { echo "FAIL: unwritable --json: exit $rc, want 2"; tail -20 "$out/stderr2"; exit 1; }
grep -q "pairs ok" "$out/stdout2" && { echo "FAIL: measured although the report cannot be written"; exit 1; }
grep -q -- "--json /nonexistent-dir/m.json: cannot write the report there; nothing was measured" "$out/stderr2" ||
	{ echo "FAIL: the unwritable file is not named"; exit 1; }
[ -e "$out/m.csv" ] && { echo "FAIL: a CSV was written by a run that should not have started"; exit 1; }

# Retest rounds: all three pairs below threshold -> measured again in 3 extra rounds, then the verdict.
mx_mpirun 3 -s 4K -n 100 --timeout 2 --min-bw 1000G --outlier 0 --json "$out/slow.json" >"$out/stdout3" 2>"$out/stderr3"
rc=$?
tail -3 "$out/stdout3"
grep "rdmaprobe matrix" "$out/stderr3" | tail -5
[ $rc -eq 1 ] || { echo "FAIL: --min-bw 1000G: exit $rc, want 1"; exit 1; }
grep -q "measuring 3 pairs again in 3 extra rounds" "$out/stderr3" || { echo "FAIL: no retest rounds"; exit 1; }
grep -q "retest round 3 of 3 done" "$out/stderr3" || { echo "FAIL: the retest rounds did not all run"; exit 1; }
mx_check "$out/slow.json" '
assert d["matrix"]["retest_rounds"] == 3 and d["matrix"]["complete"], d["matrix"]
assert len(pairs) == 6 and all(p["status"] == "below_threshold" and p["verified"] for p in pairs), pairs
' || { echo "FAIL: JSON after retest"; exit 1; }
echo "PASS"
