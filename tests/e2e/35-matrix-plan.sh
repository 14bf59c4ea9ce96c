#!/usr/bin/env bash
# timeout: 60
# --plan needs neither MPI nor hardware: 1024 nodes x 8 adapters, rail: 1023 rounds of 4096 pairs.
# (Speed is not asserted; the generous timeout only keeps a runaway plan from hanging the suite.)
set -uo pipefail
out=$RP_RESULTS/34
mkdir -p "$out"
timeout 50 "$RP_BIN" matrix --plan --nodes 1024 --hcas 8 --pattern rail >"$out/plan" 2>&1
rc=$?
cat "$out/plan"
[ $rc -eq 0 ] || { echo "FAIL: plan exit $rc"; exit 1; }
grep -q '^rounds: 1023; pairs: 4190208 ' "$out/plan" || { echo "FAIL: wrong rounds/pairs"; exit 1; }
grep -q 'at most 4096 pairs per round' "$out/plan" || { echo "FAIL: wrong pairs per round"; exit 1; }
grep -q '^estimated time: ' "$out/plan" || { echo "FAIL: no estimate"; exit 1; }
# --plan --json -: stdout is one JSON document and nothing else (the text on stderr); --budget 3m
# over 64 x 8 at -s 8M runs full at -s 4M (full ~255.9 s at 8M, ~168.8 s at 4M)
"$RP_BIN" matrix --plan --nodes 64 --hcas 8 -s 8M --budget 3m --json - >"$out/plan.json" 2>"$out/plan.err" ||
	{ echo "FAIL: plan --json exit $?"; cat "$out/plan.err"; exit 1; }
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["command"] == "matrix --plan" and d["pattern"] == "full", d["pattern"]
assert d["endpoints"]["count"] == 512 and d["rounds"] == 511 and d["pairs"] == 130816, d["rounds"]
assert d["measurement"]["msg_size"] == 4 << 20 and d["budget"]["msg_size_requested"] == 8 << 20, d["budget"]
assert d["coverage"]["fraction"] == 1 and d["coverage"]["msg_size_run"] == 4 << 20, d["coverage"]
assert d["model"]["setup_s"]["source"] == "assumed, no calibration", d["model"]
' "$out/plan.json" || { echo "FAIL: plan JSON"; head -c 2000 "$out/plan.json"; exit 1; }
grep -q -- '-s 8M -> 4M to fit 3m' "$out/plan.err" && grep -q '^plan: pattern full, 512 endpoints' "$out/plan.err" ||
	{ echo "FAIL: plan text on stderr"; cat "$out/plan.err"; exit 1; }
"$RP_BIN" matrix --pattern rail >/dev/null 2>"$out/nompi"
rc=$?
[ $rc -eq 3 ] && grep -q 'mpirun' "$out/nompi" || { echo "FAIL: without a launcher: exit $rc, want 3 and a hint"; exit 1; }
echo "PASS"
