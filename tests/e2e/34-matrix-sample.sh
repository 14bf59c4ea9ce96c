#!/usr/bin/env bash
# fabric: br0:0,1,2,3
# timeout: 150
# sample:2 on four nodes: each endpoint gets two distinct peers, exactly the pairs --plan prints for
# that seed (the schedule is a pure function of endpoints, pattern and seed).
# Then the plan's model: --plan --calibrate-from that run's JSON states its figures and their source;
# --budget in a run picks what the (uncalibrated, so deterministic) model fits, sample:1 instead of
# full (-s 4K is below the 1 MiB the budget may shrink to: it samples at once), and the report states
# the coverage and why (a budget nothing fits, and one that shrinks -s: test_cmd_matrix, under mpirun
# on the host; 1 MiB writes over rxe under TCG stall past the case's deadlines).
set -uo pipefail
. "$RP_ROOT/tests/e2e/lib/matrix.sh"
mx_need
out=$RP_RESULTS/34
mkdir -p "$out"
common=(-s 4K -n 100 --timeout 2 --min-bw 0 --outlier 0)

# --sweep 1: two sweep rounds, each followed by its planned round on the probes' connections
mx_mpirun 4 "${common[@]}" --pattern sample:2 --seed 5 --sweep 1 --json "$out/sample.json" >"$out/sample.out" 2>&1
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: sample exit $rc"; tail -20 "$out/sample.out"; exit 1; }
"$RP_BIN" matrix --plan --nodes 4 --hcas 1 --pattern sample:2 --seed 5 >"$out/sample.plan" ||
	{ echo "FAIL: plan"; exit 1; }
plan=$(grep -o '[0-9]*<->[0-9]*' "$out/sample.plan" | tr '\n' ' ')
rounds=$(grep '^  round [0-9]*:' "$out/sample.plan" | sed 's/^[^:]*:[^:]*: //' | tr '\n' ';' | sed 's/;$//')
mx_check "$out/sample.json" "
plan = sorted(tuple(sorted(map(int, x.split('<->')))) for x in '$plan'.split())
got = sorted(set(tuple(sorted((idx(p['src']), idx(p['dst'])))) for p in pairs))
assert got == plan, (got, plan)
assert len(pairs) == 8
for e in range(4):
    peers = {idx(p['dst']) for p in pairs if idx(p['src']) == e}
    assert len(peers) == 2 and e not in peers, (e, peers)
" || { echo "FAIL: sample pair set"; exit 1; }
# --hold (the default with the sweep): every direction's bandwidth ran on its probe's connection, on
# every rank (each prints its own count), and nothing was left for late rounds. The sweep's time is
# its own rounds': with each planned round at least its slowest pair (a pair's directions one after
# the other), the two fit in the run's time, to the JSON's rounding (before, the sweep's time ran to the end of its last
# round, planned round 1 in it)
n_held=$(grep -c "rdmaprobe matrix: rank [0-3]: \([1-9][0-9]*\) of \1 bandwidth directions it wrote ran on its probe's connection" "$out/sample.out")
[ "$n_held" -eq 4 ] || { echo "FAIL: $n_held of 4 ranks measured every direction on its probe's connection"; grep "rank [0-3]: " "$out/sample.out"; exit 1; }
mx_check "$out/sample.json" "
s = d['matrix']['sweep']
assert s['hold'] is True and s['hold_off'] is None and s['late_rounds'] == 0, s
assert s['rank0_writes_on_held'] >= 2 and s['rank0_writes_fresh'] == 0, s
assert all(p['status'] == 'ok' and p['verified'] for p in pairs)
assert s['rounds'] == 2 and s['elapsed_s'] > 0, s
el = {(idx(p['src']), idx(p['dst'])): p['elapsed_s'] for p in pairs}
rounds = [[tuple(map(int, x.split('<->'))) for x in r.split()] for r in '''$rounds'''.strip().split(';')]
assert len(rounds) == 2, rounds
slowest = sum(max(el[(a, b)] + el[(b, a)] for a, b in r) for r in rounds)
assert s['elapsed_s'] + slowest <= d['matrix']['elapsed_s'] + 0.01, (s['elapsed_s'], slowest, d['matrix']['elapsed_s'])
" || { echo "FAIL: sample held"; exit 1; }

"$RP_BIN" matrix --plan --nodes 8 --hcas 1 "${common[@]}" --calibrate-from "$out/sample.json" >"$out/cal.plan" 2>&1 ||
	{ echo "FAIL: calibrated plan"; cat "$out/cal.plan"; exit 1; }
grep -q "set-up .* per direction: median of 8 ok directions in $out/sample.json" "$out/cal.plan" &&
	grep -q "sweep: .* over 4 probes of the busiest endpoints of the 2 sweep rounds in $out/sample.json (at most 2 at one)" "$out/cal.plan" &&
	grep -q "start-up .*: matrix.startup_s .* at the 4 endpoints of" "$out/cal.plan" &&
	grep -q "estimated time: .*, calibrated" "$out/cal.plan" || { echo "FAIL: calibrated plan"; cat "$out/cal.plan"; exit 1; }

# the model, uncalibrated over 4 rxe ports at 10 Gb/s: start-up 5 s + the reachability sweep's one
# probe round 0.1 s + ~0.15 s a round: full (3 rounds) ~5.55 s, sample:1 ~5.25 s, sample:2 ~5.40 s;
# 5.3 s fits sample:1 only. --plan-dead 0: the budget fits a healthy fabric here (by default it fits
# the worst case with a dead endpoint, a screen and a confirmation more: test_cmd_matrix's budget case)
mx_mpirun 4 "${common[@]}" --budget 5.3s --plan-dead 0 --json "$out/budget.json" >"$out/budget.out" 2>&1
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: budget exit $rc"; tail -20 "$out/budget.out"; exit 1; }
grep -q "sample:1 is the largest sample that fits" "$out/budget.out" &&
	grep -q "^coverage: sample:1 (--budget 5.3 s; requested full): every endpoint against 1 peer; .* 4 of 12 ordered pairs full allows (33.3%)" \
		"$out/budget.out" || { echo "FAIL: budget lines"; cat "$out/budget.out"; exit 1; }
mx_check "$out/budget.json" "
c = d['coverage']
assert d['matrix']['pattern'] == 'sample:1', d['matrix']['pattern']
assert c['pattern_requested'] == 'full' and c['pattern_run'] == 'sample:1', c
assert c['budget_s'] == 5.3 and c['peers_min'] == 1 and c['peers_max'] == 1, c
assert c['ordered_pairs'] == 12 and c['ordered_pairs_measured'] == 4 and len(pairs) == 4, c
assert abs(c['fraction'] - 1 / 3) < 1e-5 and c['rail_combinations'] == 1 and c['all_rail_combinations'], c
assert c['msg_size_requested'] == 4096 and c['msg_size_run'] == 4096, c
assert c['budget_choice'].startswith('full -> sample:1 to fit 5.3s: full needs ~5.'), c
assert d['matrix']['startup_s'] > 0
" || { echo "FAIL: budget JSON"; exit 1; }
echo "PASS"
