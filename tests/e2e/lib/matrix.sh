# matrix.sh: shared by the matrix e2e cases (sourced): how to start the ranks and check the reports.
# Expects RP_BIN, RP_RESULTS, RP_ROOT from the suite runner.

MX_RANK="$RP_ROOT/tests/e2e/lib/matrix-rank.sh"
MX_PY=/usr/bin/python3

mx_need() {
	command -v mpirun >/dev/null || { echo "SKIP: mpirun (openmpi-bin) is not installed"; exit 77; }
	[ -x "$MX_PY" ] || { echo "SKIP: python3 is needed to check the JSON report"; exit 77; }
	"$RP_BIN" --version | grep -qw mpi || { echo "SKIP: rdmaprobe was built without MPI"; exit 77; }
}

# mx_mpirun NP [mpirun options --] matrix options: NP ranks, rank N = node N on =rxeN.
mx_mpirun() {
	local np=$1
	shift
	# shellcheck disable=SC2086 # MX_MPIRUN_FLAGS: extra mpirun options, split on spaces
	mpirun --allow-run-as-root --oversubscribe ${MX_MPIRUN_FLAGS:-} -np "$np" "$MX_RANK" "$@"
}

# mx_check FILE PYTHON: run PYTHON with d = the parsed JSON; an assert failing fails the case.
mx_check() {
	local file=$1 code=$2
	"$MX_PY" - "$file" <<PYEOF
import json, sys
d = json.load(open(sys.argv[1]))
pairs = d["pairs"]
nodes = {n["node"]: n for n in d["nodes"]}
def idx(ep): return int(ep["node"].replace("node", ""))
$code
PYEOF
}

# mx_browser HTML: render in headless Chromium and print the DOM; exit 77 from the case when absent.
mx_browser() {
	local html=$1 b=
	for c in chromium chromium-browser; do command -v "$c" >/dev/null && { b=$c; break; }; done
	if [ -z "$b" ]; then
		echo "SKIP (browser part): chromium is not installed (apt-get install chromium)" >&2
		return 77
	fi
	html=$(realpath "$html") || return 1
	timeout 120 "$b" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$(mktemp -d)" --dump-dom "file://$html" 2>/dev/null
}

# mx_html_check HTML NFAIL: the page renders in headless Chromium, its script ran, both heatmaps and
# the colour legend are there, it lists NFAIL failures and (when NFAIL > 0) groups them by cause. 77
# when chromium is absent. Here-strings, not "echo | grep -q": under pipefail a grep that stops at its
# first match kills echo with SIGPIPE on a large page and the check failed although the text was there.
mx_html_check() {
	local dom rc
	dom=$(mx_browser "$1")
	rc=$?
	[ $rc -eq 0 ] || return $rc
	grep -q 'data-ready="1"' <<<"$dom" || { echo "FAIL: the page script did not run" >&2; return 1; }
	[ "$(grep -c '<li class="failure">' <<<"$dom")" -eq "$2" ] || { echo "FAIL: the page should list $2 failures" >&2; return 1; }
	grep -q 'id="bw-heatmap"' <<<"$dom" && grep -q 'id="reach-heatmap"' <<<"$dom" ||
		{ echo "FAIL: heatmaps missing" >&2; return 1; }
	grep -q 'id="legend"' <<<"$dom" || { echo "FAIL: colour legend missing" >&2; return 1; }
	if [ "$2" -gt 0 ]; then
		grep -q '<li class="cause">' <<<"$dom" || { echo "FAIL: failures not grouped by cause" >&2; return 1; }
	fi
	return 0
}

# mx_sim_agree REAL.json MODEL SIM.json OPTIONS...: the simulator's run of the fabric model MODEL (its
# text) with the matrix OPTIONS the real run had, its JSON report SIM.json, compared with the real
# run's REAL.json: the round list, the verdict, every direction (tests/e2e/lib/sim-agree.py). Both
# runs must have exited 1 (a fault found). 0 agree, 1 not.
mx_sim_agree() {
	local real=$1 model=$2 sim=$3 rc
	shift 3
	printf '%s\n' "$model" >"$sim.model"
	"$RP_BIN" matrix --transport sim --fabric-model "$sim.model" "$@" --json "$sim" >"$sim.out" 2>"$sim.err"
	rc=$?
	[ $rc -eq 1 ] || { echo "FAIL: the simulator's run of $sim.model: exit $rc, want 1"; tail -5 "$sim.err"; return 1; }
	"$MX_PY" "$RP_ROOT/tests/e2e/lib/sim-agree.py" "$real" "$sim"
}
