#!/usr/bin/env bash
# selftest.sh: the suite runner's own check (part of `make test`: five VM boots, ~3 min).
# It runs five throw-away cases through run-suite.sh: one that passes, one whose first run crashes
# the guest kernel (sysrq c) and whose second passes, one that crashes it every time (run again
# RP_E2E_CRASH_RERUNS = 1 time here, then failed: the limit is what is checked, not its default of
# 2, which would take a boot more), one whose first run freezes the guest's harness (no progress:
# the host must end the VM), one after all of them.
# Expected: the crashes and the hang each end their boot with the reason, the cases after them run
# in a fresh boot, the always-crashing case fails, the others pass, and the closing line says
# "4 passed, 1 failed, 0 skipped". Exit 0 when all of that holds.
set -euo pipefail
TB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$TB_DIR/../.." && pwd)
dir=$ROOT/build/testbed-selftest
if ! why=$("$TB_DIR/vm.sh" check 2>&1); then
	echo "selftest: THE TEST BED CANNOT RUN HERE: ${why:-vm.sh check failed}" >&2
	[ "${CI:-}" = true ] && exit 1
	exit 77
fi
rm -rf "$dir"
mkdir -p "$dir/cases"

head() { printf '#!/usr/bin/env bash\n# selftest case\n# timeout: %s\n' "$1"; }
{ head 30; echo 'exit 0'; } >"$dir/cases/a-ok.sh"
{ head 30; echo 'm=$RP_RESULTS/../marker-$RP_CASE; [ -e "$m" ] && exit 0; : >"$m"; sync; echo c >/proc/sysrq-trigger; sleep 30'; } >"$dir/cases/b-crash-once.sh"
{ head 30; echo 'sync; echo c >/proc/sysrq-trigger; sleep 30'; } >"$dir/cases/c-crash-always.sh"
{ head 5; echo 'm=$RP_RESULTS/../marker-$RP_CASE; [ -e "$m" ] && exit 0; : >"$m"; sync; pkill -STOP -f "run-suite.sh --inside"; sleep 60'; } >"$dir/cases/d-hang-once.sh"
{ head 30; echo 'exit 0'; } >"$dir/cases/e-ok.sh"

out=$dir/out.log
rc=0
# The inner suite's lines go to its log only (its closing "4 passed, 1 failed" is the expected
# outcome, not this check's); they are shown when the check fails.
echo "selftest: five throw-away cases in as many boots as they take (log: $out)"
RP_E2E_CRASH_RERUNS=1 RP_E2E_HANG_GRACE=20 RP_E2E_RESULTS=$dir/results CI=true bash "$TB_DIR/run-suite.sh" "$dir"/cases/*.sh >"$out" 2>&1 || rc=$?
fail=0
want() { grep -qE "$1" "$out" || { echo "selftest: MISSING: $1"; fail=1; }; }
want '^e2e: PASS a-ok'
want '^e2e: RERUN b-crash-once: the guest kernel crashed'
want '^e2e: PASS b-crash-once'
want '^e2e: RERUN c-crash-always: the guest kernel crashed'
want '^e2e: FAIL c-crash-always \(the guest kernel crashed.*crash 2 of its runs'
want '^e2e: the guest made no progress for [0-9]+ s in d-hang-once'
want '^e2e: RERUN d-hang-once: the guest stopped responding'
want '^e2e: PASS d-hang-once'
want '^e2e: PASS e-ok'
want '^e2e: note: ran again after a test bed crash or hang: b-crash-once \(1 crash\), c-crash-always \(1 crash\), d-hang-once \(1 crash\)'
want '^e2e: 4 passed, 1 failed, 0 skipped$'
if [ $fail -ne 0 ]; then
	grep '^e2e:' "$out" | sed 's/^/    | /'
	echo "selftest: FAILED (log: $out)"
	exit 1
fi
echo "selftest: OK: a crash once reran and passed, a crash every time failed, a hang was ended and reran, the case after them ran"
