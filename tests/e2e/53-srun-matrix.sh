#!/usr/bin/env bash
# fabric: br0:0,1,2
# timeout: 240
# The matrix launched by srun under a real Slurm (Debian's slurmctld/slurmd/munge, one slurmd: this
# VM), with --mpi=pmix (Slurm's mpi_pmix plugin, Open MPI's PMIx client; no mpirun): three tasks,
# task N plays node N on rxeN (SLURM_PROCID). Every ordered pair measured and verified, exit 0.
set -uo pipefail
. "$RP_ROOT/scripts/testbed/e2e-lib.sh"
"$RP_BIN" --version | grep -qw mpi || e2e_skip "rdmaprobe was built without MPI"
SL="$RP_ROOT/scripts/testbed/slurm.sh"
export SLURM_CONF=/tmp/slurm/slurm.conf
trap 'cp -r /tmp/slurm/log "$RP_RESULTS/slurm-log" 2>/dev/null; bash "$SL" down' EXIT
bash "$SL" up >"$RP_RESULTS/slurm-up.log" 2>&1 || { cat "$RP_RESULTS/slurm-up.log"; e2e_fail "slurm.sh up failed"; }
srun --mpi=list >"$RP_RESULTS/mpi-list.txt" 2>&1
grep -q pmix "$RP_RESULTS/mpi-list.txt" || e2e_skip "Slurm has no pmix plugin: $(cat "$RP_RESULTS/mpi-list.txt")"
rank="$RP_RESULTS/rank.sh"
cat >"$rank" <<'SH'
#!/usr/bin/env bash
r=${SLURM_PROCID:?not started by srun}
exec "$RP_BIN" matrix --node "node$r" -d "=rxe$r" "$@"
SH
chmod +x "$rank"
out=$RP_RESULTS/m
mkdir -p "$out"
srun --mpi=pmix -n 3 --overcommit -t 3 "$rank" -s 4K -n 100 --timeout 3 --min-bw 0 --outlier 0 \
	--json "$out/m.json" >"$out/stdout" 2>"$out/stderr"
rc=$?
tail -5 "$out/stdout"
[ $rc -eq 0 ] || { tail -20 "$out/stderr"; e2e_fail "srun matrix exit $rc"; }
/usr/bin/python3 - "$out/m.json" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
p = d["pairs"]
got = sorted((x["src"]["node"], x["dst"]["node"]) for x in p)
want = sorted((a, b) for a in ("node0", "node1", "node2") for b in ("node0", "node1", "node2") if a != b)
assert got == want, got
assert all(x["status"] == "ok" and x["verified"] for x in p), [(x["status"], x["reason"]) for x in p]
print("ok: srun --mpi=pmix, 3 tasks, 6 pairs ok and verified")
PY
e2e_note "srun --mpi=pmix matrix passed"
