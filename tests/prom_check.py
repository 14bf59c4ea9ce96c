#!/usr/bin/env python3
"""prom_check.py FILE: parse a Prometheus text exposition file with the Prometheus Python client's
parser (python3-prometheus-client) and check what that parser lets through but the format and the
naming conventions forbid; print every sample canonically, one a line, for the unit test to compare.

  name{label="value",...} VALUE      labels sorted, values JSON-quoted (escapes decoded by the parser)

Then, when promtool is installed (Debian's prometheus package; scripts/install-deps.sh), the file must
pass `promtool check metrics` without a word: its lint names what Prometheus's conventions forbid (a
unit not in base units, such as bits per second). RP_PROMTOOL=require (or CI=true) makes a missing
promtool an error (exit 3) instead of a skipped step.

Exit 0 valid, 1 invalid (the reason on stderr), 3 the parser (or a required promtool) is not installed.
"""
import shutil
import subprocess
import json
import os
import math
import re
import sys

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    print("prom_check: python3-prometheus-client is not installed", file=sys.stderr)
    sys.exit(3)

METRIC = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
LABEL = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


def fail(msg):
    print("prom_check: " + msg, file=sys.stderr)
    sys.exit(1)


def main():
    text = open(sys.argv[1], "rb").read()
    try:
        text = text.decode("utf-8")
    except UnicodeDecodeError as e:
        fail("not UTF-8: %s" % e)
    if text and not text.endswith("\n"):
        fail("the last line has no newline")
    # The parser keeps the last of two equal label names and merges repeated HELP/TYPE lines; the
    # format (and Prometheus's own parser) forbids both.
    meta = set()
    for line in text.splitlines():
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            key = tuple(line.split(" ", 3)[1:3])
            if key in meta:
                fail("a second %s line for %s" % key)
            meta.add(key)
        if line.startswith("#") or not line:
            continue
        names = re.findall(r'[{,]([a-zA-Z0-9_]+)="', line)
        if len(names) != len(set(names)):
            fail("a label repeats in: " + line)
    try:
        families = list(text_string_to_metric_families(text))
    except Exception as e:  # the parser raises ValueError and others on bad lines
        fail("the parser rejected the file: %s: %s" % (type(e).__name__, e))
    seen_fam, seen_series, out = set(), set(), []
    for f in families:
        if f.name in seen_fam:
            fail("family %s appears twice (its samples are not together, or TYPE repeats)" % f.name)
        seen_fam.add(f.name)
        if not METRIC.match(f.name) or f.name.startswith("__"):
            fail("bad metric name " + f.name)
        if f.type != "gauge":
            fail("%s: type %s, want gauge (every family has a TYPE line)" % (f.name, f.type))
        if not f.documentation:
            fail("%s: no HELP" % f.name)
        for s in f.samples:
            if s.timestamp is not None:
                fail("%s: a timestamp (the textfile collector rejects them)" % s.name)
            for k in s.labels:
                if not LABEL.match(k) or k.startswith("__"):
                    fail("%s: bad label name %r" % (s.name, k))
            if math.isnan(s.value):
                fail("%s: NaN" % s.name)
            key = (s.name, tuple(sorted(s.labels.items())))
            if key in seen_series:
                fail("series repeats: %s %s" % key)
            seen_series.add(key)
            labels = ",".join("%s=%s" % (k, json.dumps(v, ensure_ascii=False)) for k, v in sorted(s.labels.items()))
            out.append("%s{%s} %r" % (s.name, labels, s.value))
    promtool(text)
    sys.stdout.write("".join(line + "\n" for line in out))


def promtool(text):
    tool = shutil.which("promtool")
    if not tool:
        if os.environ.get("RP_PROMTOOL") == "require" or os.environ.get("CI") == "true":
            print("prom_check: promtool is not installed (Debian: prometheus)", file=sys.stderr)
            sys.exit(3)
        return
    p = subprocess.run([tool, "check", "metrics"], input=text.encode("utf-8"), capture_output=True)
    said = (p.stdout + p.stderr).decode("utf-8", "replace").strip()
    if p.returncode != 0 or said:
        fail("promtool check metrics: " + (said or "exit %d" % p.returncode))


main()
