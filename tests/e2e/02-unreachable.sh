#!/usr/bin/env bash
# 02-unreachable: a device on another bridge is really unreachable: ib_write_bw to it fails within
# a bound, while the same client reaches a device on its own bridge (so the failure is the fabric's).
# fabric: br0:0 br1:1,2
# timeout: 90
set -uo pipefail
. "$RP_ROOT/scripts/testbed/e2e-lib.sh"
rc=0
e2e_write_bw rxe2 rxe1 30 -F -n 100 -s 4096 || rc=$?
[ $rc -eq 0 ] || { cat "$E2E_BW_LOG"; e2e_fail "control: rxe1 -> rxe2 on one bridge failed ($rc)"; }
e2e_note "control: rxe1 -> rxe2 (same bridge) works"

BOUND=20
t0=$SECONDS
rc=0
e2e_write_bw rxe0 rxe1 $BOUND -F -n 100 -s 4096 || rc=$?
secs=$((SECONDS - t0))
cat "$E2E_BW_LOG"
[ $rc -ne 0 ] || e2e_fail "rxe1 (br1) reached rxe0 (br0): the bridges are not separate"
[ $rc -ne 124 ] && [ $rc -ne 137 ] || e2e_fail "ib_write_bw rxe1 -> rxe0 hung for $BOUND s instead of failing"
[ $rc -ne 125 ] || e2e_fail "the perftest server did not start"
# Deterministic: rxe resolves the peer's address when the QP goes to RTR, finds no neighbour across
# the bridges, refuses the transition, and perftest gives up connecting with exit 1.
[ $rc -eq 1 ] || e2e_fail "ib_write_bw rxe1 -> rxe0 exited $rc, want 1 (RTR refused)"
grep -q "to RTR" "$E2E_BW_LOG" || e2e_fail "ib_write_bw did not fail at the RTR transition (see above)"
! e2e_bw_has_result "$E2E_BW_LOG" 100 || e2e_fail "ib_write_bw printed a result across bridges"
e2e_note "rxe1 -> rxe0 (other bridge) failed with exit $rc after ${secs} s, as it must"
