#!/usr/bin/env python3
"""sim-agree.py REAL.json SIM.json: a matrix run on the test bed and the simulator's run of the same
fault (issue 29: "the simulator and the VM agree on the round list and the verdict for the same
fault"). Endpoints are matched by node name (one adapter a node on both sides; the devices' names
differ: rxeN on the test bed, the model's device-prefix and adapter number in the simulator).

Compared: the round list (planned rounds, retest rounds, the sweep's rounds, its unreachable, flaky,
dead endpoints, their directions, confirmation and late rounds), the verdict (pass, counts, the
drained and unusable adapters by node, the suspects' kinds and nodes) and every direction (passed or
failed, confirmed or not, its attempts' ACK timeouts, whether the sweep decided it). A failure's
code may differ: a real link at 100% loss times out, exceeds its retries or fails address resolution
(tests/e2e/32-matrix-loss.sh), the model's times out.

When the guest starved a healthy direction past a screen window (the report's sweep "cleared" > 0),
the real run has a second-pass round the model cannot have: the round list is then compared without
the sweep's round counts, and that is printed. Exit 0 agree, 1 not (each difference printed).
"""
import json
import sys

FAILED = ("timed_out", "retry_exceeded", "resolve_failed", "endpoint_dead")


def node(ep):
    return ep["node"]


def rounds(d, loose):
    m = d["matrix"]
    out = {k: m[k] for k in ("pattern", "rounds", "rounds_run", "retest_rounds", "complete")}
    s = m.get("sweep") or {}
    keys = ["width", "unreachable", "dead_endpoints", "endpoint_dead_directions", "confirm_rounds", "hold"]
    if not loose:
        keys += ["rounds", "flaky", "cleared", "late_rounds"]
    out.update({"sweep." + k: s.get(k) for k in keys})
    return out


def verdict(d):
    v = d["verdict"]
    out = {k: v[k] for k in ("pass", "pairs", "ok", "failed", "below_threshold")}
    out["drain"] = sorted((n["node"], len(n["drain"])) for n in d["nodes"] if n["drain"])
    out["unusable"] = sorted((n["node"], len(n["unusable"])) for n in d["nodes"] if n["unusable"])
    out["suspects"] = sorted((s["kind"], s["name"].split("/")[0], s["drain"]) for s in v["suspects"])
    return out


def directions(d):
    out = {}
    for p in d["pairs"]:
        ok = p["status"] == "ok"
        out[(node(p["src"]), node(p["dst"]))] = {
            "ok": ok,
            "failed as a dead link would": ok or p["status"] in FAILED,
            "confirm": p["confirm"],
            "qp_timeouts": [a["qp_timeout"] for a in p.get("attempts", [])],
            "by the sweep": p["reason"].startswith("reachability sweep: "),
        }
    return out


def main():
    real, sim = (json.load(open(f)) for f in sys.argv[1:3])
    diffs = []
    if not sim.get("simulated") or real.get("simulated"):
        diffs.append("the first report must be a real run's and the second the simulator's")
    loose = (real["matrix"].get("sweep") or {}).get("cleared", 0) > 0
    if loose:
        print("sim-agree: the guest cleared %d directions (failed a screen, then passed): the sweep's round counts "
              "are not compared" % real["matrix"]["sweep"]["cleared"])
    for name, f in (("round list", lambda d: rounds(d, loose)), ("verdict", verdict)):
        a, b = f(real), f(sim)
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                diffs.append("%s: %s: real %r, simulated %r" % (name, k, a.get(k), b.get(k)))
    a, b = directions(real), directions(sim)
    if set(a) != set(b):
        diffs.append("directions: real only %s, simulated only %s" % (sorted(set(a) - set(b)), sorted(set(b) - set(a))))
    for k in sorted(set(a) & set(b)):
        if a[k] != b[k]:
            diffs.append("direction %s -> %s: real %r, simulated %r" % (k[0], k[1], a[k], b[k]))
    for x in diffs:
        print("sim-agree: DIFFERS: " + x)
    if not diffs:
        r = rounds(real, loose)
        print("sim-agree: the same round list (%s) and verdict (%s) for %d directions" %
              (", ".join("%s %s" % kv for kv in r.items()), json.dumps(verdict(real)), len(a)))
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
