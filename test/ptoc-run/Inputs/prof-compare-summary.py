"""Checks that analysis.json (ptoc prof) agrees with the run's summary.json on the numbers
both compute, and has every key docs/profiling.md lists. Exit status 1 with a message
on a mismatch."""
import json
import sys

KEYS = ["source", "run_summary", "func", "device", "sched_mode", "clock_mhz", "tasks", "edges",
        "simulated_us", "head_us", "span_us", "bound_us", "ratio", "span_ratio", "limiter",
        "bound", "cores", "bytes", "groups", "bubbles", "top_tasks", "critical_path", "pipes",
        "verdicts", "family", "carries", "notes", "control", "roots", "blocks", "loops"]
# Trace times are rounded to the nanosecond; sums over a few dozen tasks stay within this.
TOL_US = 0.05
TOL_RATIO = 2e-3


def fail(message):
    print("prof-compare-summary: " + message)
    sys.exit(1)


analysis = json.load(open(sys.argv[1]))
summary = json.load(open(sys.argv[2]))
if list(analysis) != KEYS:
    fail(f"analysis.json keys {list(analysis)} != {KEYS}")
for key in ("func", "device", "sched_mode", "tasks", "edges", "limiter"):
    if analysis[key] != summary[key]:
        fail(f"{key}: {analysis[key]!r} != summary {summary[key]!r}")
for key in ("simulated_us", "head_us", "span_us", "bound_us"):
    if abs(analysis[key] - summary[key]) > TOL_US:
        fail(f"{key}: {analysis[key]} != summary {summary[key]}")
for a, s in zip(analysis["cores"], summary["cores"]):
    for key in ("kind", "cores", "tasks", "cores_used", "waves"):
        if a[key] != s[key]:
            fail(f"cores {a['kind']} {key}: {a[key]} != {s[key]}")
    for key in ("utilisation", "window_idle_share", "wave_idle_share"):
        if abs(a[key] - s[key]) > TOL_RATIO:
            fail(f"cores {a['kind']} {key}: {a[key]} != {s[key]}")
for a, s in zip(analysis["groups"], summary["groups"]):
    for key in ("key", "core", "hash", "group_size", "tasks", "cores_used"):
        if a[key] != s[key]:
            fail(f"group {a['key']} {key}: {a[key]} != {s[key]}")
if analysis["critical_path"]["calls"] != summary["critical_path"]["calls"]:
    fail("critical path calls differ")
if analysis["pipes"] is None:
    fail("a debug-mode-2 run has pipe lanes but analysis.json has no pipes")
if abs(analysis["pipes"]["per_kind"][0]["transfer_us"] + 0 -
       sum(p["busy_us"] for p in analysis["pipes"]["per_pipe"] if p["transfer"])) > TOL_US:
    fail("per_kind transfer_us is not the sum of the transfer pipes")
shared = {"under_parallelised", "wave_imbalance", "scheduling_gaps", "memory_bound",
          "near_roofline"}
rules = [v["rule"] for v in analysis["verdicts"] if v["rule"] in shared]
if rules != [v["rule"] for v in summary["verdicts"]]:
    fail(f"shared verdicts {rules} != summary {[v['rule'] for v in summary['verdicts']]}")
print("prof-compare-summary: ok")
