#!/usr/bin/env bash
# check-prom.sh FILE [LINE ...]: FILE parses with the Prometheus Python client's parser
# (tests/prom_check.py, the same check as test_prom) and its canonical dump holds every LINE
# ('name{label="value",...} VALUE', labels sorted). Exit 0 ok, 1 not, 77 no parser installed.
set -u
f=$1
shift
py=
for p in python3 /usr/bin/python3; do
	if "$p" -c 'import prometheus_client' 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || { echo "SKIP: no python3 with prometheus_client (python3-prometheus-client)"; exit 77; }
dump=$("$py" "${RP_ROOT:-.}/tests/prom_check.py" "$f") || { echo "FAIL: $f does not parse"; exit 1; }
for want in "$@"; do
	grep -qxF -- "$want" <<<"$dump" || { echo "FAIL: $f lacks: $want"; echo "$dump"; exit 1; }
done
echo "ok: $f parses ($(wc -l <<<"$dump") samples)"
