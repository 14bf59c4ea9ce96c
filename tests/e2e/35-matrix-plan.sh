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
"$RP_BIN" matrix --pattern rail >/dev/null 2>"$out/nompi"
rc=$?
[ $rc -eq 3 ] && grep -q 'mpirun' "$out/nompi" || { echo "FAIL: without a launcher: exit $rc, want 3 and a hint"; exit 1; }
echo "PASS"
