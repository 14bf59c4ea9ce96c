#!/usr/bin/env bash
# 01-perftest-canary: perftest's ib_write_bw between two devices on one segment succeeds and its
# bytes cross the wire (the client's veth counts them); a device also reaches itself. When this
# fails the test bed is broken, not rdmaprobe.
# fabric: br0:0,1
# timeout: 60
set -uo pipefail
. "$RP_ROOT/scripts/testbed/e2e-lib.sh"
N=1000 SIZE=4096
tx0=$(e2e_tx_bytes h1)
rc=0
e2e_write_bw rxe0 rxe1 30 -F -n $N -s $SIZE --report_gbits || rc=$?
cat "$E2E_BW_LOG"
[ $rc -eq 0 ] || e2e_fail "ib_write_bw rxe1 -> rxe0 exited $rc"
e2e_bw_has_result "$E2E_BW_LOG" $N || e2e_fail "ib_write_bw printed no result row for $N iterations"
sent=$(($(e2e_tx_bytes h1) - tx0))
[ $sent -ge $((N * SIZE)) ] || e2e_fail "h1 sent $sent bytes, fewer than the $((N * SIZE)) written: traffic did not cross the wire"
e2e_note "rxe1 -> rxe0: $N x $SIZE B written, h1 sent $sent bytes"

# A device to itself (what 'rdmaprobe loopback' pairs need): works thanks to the local route in
# the device's table; it never touches the wire.
rc=0
e2e_write_bw rxe0 rxe0 30 -F -n $N -s $SIZE --report_gbits || rc=$?
[ $rc -eq 0 ] && e2e_bw_has_result "$E2E_BW_LOG" $N || { cat "$E2E_BW_LOG"; e2e_fail "ib_write_bw rxe0 -> rxe0 (self) failed ($rc)"; }
e2e_note "rxe0 -> rxe0 (self): $N x $SIZE B written"
