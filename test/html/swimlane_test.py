#!/usr/bin/env python3
"""swimlane.html in headless Chromium: runs examples through `ptoc run` with a debug
mode, loads each run's swimlane.html, and checks from the DOM Chromium dumps after the
page's script ran that the lanes, task boxes, dependency arrows, summary numbers and
verdicts match the run's merged_swimlane.json and summary.json (analysis.json when
`ptoc prof` wrote one); then the same for the pages `ptoc prof` writes for traces
PyPTO recorded on real NPUs (test/data/pypto-real); then saves a screenshot. Fails, never skips, when Chromium is
missing (install it with `bash scripts/install-deps.sh`).

Usage: swimlane_test.py --ptoc build/tools/ptoc --source-dir . --work-dir DIR
                        [--screenshot-dir DIR]
"""
import argparse
import glob
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from html.parser import HTMLParser

# Chromium runs the page's script inside this much virtual time before dumping.
VIRTUAL_TIME_MS = 5000
WINDOW = (1600, 900)
# A screenshot of the drawn page; a blank or failed one is far smaller.
MIN_SCREENSHOT_BYTES = 20000
CHROMIUM_TIMEOUT_S = 60
PTOC_TIMEOUT_S = 120
# The page draws every box (no clustering) up to this many (FULL_DRAW_LIMIT in swimlane.js).
FULL_DRAW_LIMIT = 20000

CASES = [
    # (name, example, debug mode, screenshot file name for docs/images)
    ("softmax", "examples/softmax.pto", 1, "swimlane-softmax.png"),
    ("attention-pipes", "examples/attention.pto", 2, "swimlane-attention-pipes.png"),
]
# Traces PyPTO wrote on real NPUs (test/data/pypto-real): (name, file, device,
# screenshot file name for docs/images).
REAL_CASES = [
    ("machine-view", "KayWang12138__pypto__merged_swimlane.json", "a2",
     "swimlane-machine-view.png"),
    ("worker-view",
     "georgebisbas__pypto-profiling__ep8-p8-l2-uniform1024-rank0-d21__merged_swimlane_20260910_071357.json",
     "a2", None),
]

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL: " + message)
    return condition


def find_chromium():
    override = os.environ.get("PTOC_CHROMIUM")
    if override:
        return override if shutil.which(override) else None
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Dom(HTMLParser):
    """Every element of the dumped DOM as (tag, attrs, text-inside), plus an id index."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elements = []
        self.stack = []

    def handle_starttag(self, tag, attrs):
        el = {"tag": tag, "attrs": dict(attrs), "text": [], "parents": list(self.stack)}
        self.elements.append(el)
        if tag not in ("br", "meta", "input", "img", "hr", "link"):
            self.stack.append(el)

    def handle_startendtag(self, tag, attrs):
        self.elements.append({"tag": tag, "attrs": dict(attrs), "text": [], "parents": list(self.stack)})

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i]["tag"] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data):
        for el in self.stack:
            el["text"].append(data)

    def find(self, tag=None, cls=None, inside=None, **attrs):
        out = []
        for el in self.elements:
            if inside is not None and not any(p is inside for p in el["parents"]):
                continue
            if tag and el["tag"] != tag:
                continue
            if cls and cls not in el["attrs"].get("class", "").split():
                continue
            if any(el["attrs"].get(k.replace("_", "-")) != v for k, v in attrs.items()):
                continue
            out.append(el)
        return out

    def by_id(self, id_):
        found = [el for el in self.elements if el["attrs"].get("id") == id_]
        return found[0] if found else None


def text_of(el):
    return "".join(el["text"]).strip()


def at(obj, path):
    for part in path.split("."):
        if isinstance(obj, list):
            obj = obj[int(part)]
        elif isinstance(obj, dict):
            obj = obj[part]
        else:
            raise KeyError(path)
    return obj


def same_value(shown, expected):
    if isinstance(expected, bool):
        return shown == ("true" if expected else "false")
    if isinstance(expected, (int, float)):
        try:
            return float(shown) == float(expected)
        except ValueError:
            return False
    return str(shown) == str(expected)


def chromium_cmd(chromium, profile_dir):
    return [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--user-data-dir=" + profile_dir, "--virtual-time-budget=%d" % VIRTUAL_TIME_MS,
            "--window-size=%d,%d" % WINDOW]


def dump_dom(chromium, profile_dir, url):
    proc = subprocess.run(chromium_cmd(chromium, profile_dir) + ["--dump-dom", url],
                          capture_output=True, text=True, timeout=CHROMIUM_TIMEOUT_S)
    if proc.returncode != 0 or "<html" not in proc.stdout:
        raise RuntimeError("chromium --dump-dom %s failed (exit %d): %s" %
                           (url, proc.returncode, proc.stderr[-2000:]))
    dom = Dom()
    dom.feed(proc.stdout)
    return dom


def screenshot(chromium, profile_dir, url, path):
    proc = subprocess.run(chromium_cmd(chromium, profile_dir) + ["--screenshot=" + path, url],
                          capture_output=True, text=True, timeout=CHROMIUM_TIMEOUT_S)
    if not check(proc.returncode == 0 and os.path.exists(path),
                 "chromium --screenshot %s failed (exit %d): %s" % (url, proc.returncode, proc.stderr[-2000:])):
        return
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(24)
    check(head[:8] == b"\x89PNG\r\n\x1a\n", "%s is not a PNG" % path)
    width, height = struct.unpack(">II", head[16:24])
    check((width, height) == WINDOW, "%s is %dx%d, expected %dx%d" % ((path, width, height) + WINDOW))
    check(size >= MIN_SCREENSHOT_BYTES, "%s has only %d bytes: the page looks blank" % (path, size))
    print("  screenshot %s (%d bytes)" % (path, size))


def trace_facts(trace):
    """What the page must show, computed here from the trace independently of the page."""
    events = trace["traceEvents"]
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
               if e.get("ph") == "M" and e.get("name") == "thread_name"}
    tasks = [e for e in events if e.get("ph") == "X" and e.get("cat") == "task"]
    pipes = [e for e in events if e.get("ph") == "X" and e.get("cat") == "pipe"]
    core_lanes = {threads[(e["pid"], e["tid"])] for e in tasks}
    pipe_lanes = {threads[(e["pid"], e["tid"])] for e in pipes}
    # Dependencies: a flow end belongs to the task whose slice on its lane holds it.
    by_lane = {}
    for t in tasks:
        by_lane.setdefault((t["pid"], t["tid"]), []).append(t)
    eps = 0.0015

    def owner(e):
        for t in by_lane.get((e["pid"], e["tid"]), []):
            if t["ts"] - eps <= e["ts"] <= t["ts"] + t["dur"] + eps:
                return t["args"]["call"]
        return None

    starts = {e["id"]: e for e in events if e.get("cat") == "dep" and e.get("ph") == "s"}
    preds, succs = {}, {}
    for e in events:
        if e.get("cat") == "dep" and e.get("ph") == "f":
            a, b = owner(starts[e["id"]]), owner(e)
            preds.setdefault(b, []).append(a)
            succs.setdefault(a, []).append(b)
    return {"tasks": tasks, "pipes": pipes, "core_lanes": core_lanes, "pipe_lanes": pipe_lanes,
            "preds": preds, "succs": succs}


def check_page(name, dom, facts, sources, analysis_present):
    body = dom.find("body")[0]
    if not check(body["attrs"].get("data-ready") == "1",
                 "%s: the page's script did not finish (body data-ready=%r, #error: %s)" %
                 (name, body["attrs"].get("data-ready"), text_of(dom.by_id("error") or {"text": []}))):
        return
    # Task boxes: one per task, with the trace's call ids and hash orders.
    rects = dom.find("rect", cls="task")
    calls_shown = sorted(int(r["attrs"]["data-call"]) for r in rects)
    calls_trace = sorted(t["args"]["call"] for t in facts["tasks"])
    check(calls_shown == calls_trace, "%s: %d task rects shown, trace has %d tasks (or their calls differ)" %
          (name, len(calls_shown), len(calls_trace)))
    order_of = {t["args"]["call"]: t["args"]["hash_order"] for t in facts["tasks"]}
    wrong = [r for r in rects if int(r["attrs"]["data-hash-order"]) != order_of.get(int(r["attrs"]["data-call"]))]
    check(not wrong, "%s: %d task rects carry the wrong hash order" % (name, len(wrong)))
    # Lanes: one per core that ran a task, one per pipe that recorded an event.
    lanes = dom.find("g", cls="lane")
    core = {l["attrs"]["data-lane"] for l in lanes if l["attrs"]["data-lane-kind"] == "core"}
    pipe = {l["attrs"]["data-lane"] for l in lanes if l["attrs"]["data-lane-kind"] == "pipe"}
    check(core == facts["core_lanes"], "%s: core lanes %s != cores that ran tasks %s" %
          (name, sorted(core), sorted(facts["core_lanes"])))
    check(pipe == facts["pipe_lanes"], "%s: pipe lanes %s != pipes with events %s" %
          (name, sorted(pipe), sorted(facts["pipe_lanes"])))
    cores_used = sum(k["cores_used"] for k in sources["summary"]["cores"])
    check(len(core) == cores_used, "%s: %d core lanes, summary.json says %d cores used" % (name, len(core), cores_used))
    if len(facts["pipes"]) + len(facts["tasks"]) <= FULL_DRAW_LIMIT:
        check(len(dom.find("rect", cls="pipe")) == len(facts["pipes"]),
              "%s: %d pipe rects, trace has %d pipe events" % (name, len(dom.find("rect", cls="pipe")), len(facts["pipes"])))
    # Legend: one entry per hash order.
    legend = {int(el["attrs"]["data-hash-order"]) for el in dom.find(cls="legend-item")}
    check(legend == set(order_of.values()), "%s: legend hash orders %s != trace's %s" %
          (name, sorted(legend), sorted(set(order_of.values()))))

    # Summary numbers: each shown where it came from and equal to that file's value.
    summary_el = dom.by_id("summary")
    expected_source = "analysis" if analysis_present else "summary"
    check(summary_el["attrs"].get("data-source") == expected_source,
          "%s: the summary shows %r numbers, expected %r%s" %
          (name, summary_el["attrs"].get("data-source"), expected_source,
           " (ptoc prof wrote analysis.json: it should rewrite swimlane.html with "
           "profile::writeSwimlaneHtmlFile)" if analysis_present else ""))
    metrics = {el["attrs"]["data-key"]: el for el in dom.find("div", cls="metric")}
    for key in ("simulated_us", "bound_us", "ratio", "tasks"):
        check(key in metrics, "%s: #summary has no [data-key=%s]" % (name, key))
    for key, el in metrics.items():
        a = el["attrs"]
        src = sources.get(a["data-source"])
        if not check(src is not None, "%s: metric %s from unknown source %r" % (name, key, a["data-source"])):
            continue
        try:
            expected = at(src, a["data-path"])
        except (KeyError, IndexError, ValueError):
            check(False, "%s: metric %s: %s has no %s" % (name, key, a["data-source"], a["data-path"]))
            continue
        check(same_value(a["data-value"], expected), "%s: metric %s shows %s, %s.%s is %s" %
              (name, key, a["data-value"], a["data-source"], a["data-path"], expected))
        shown = text_of(el)
        check(str(a["data-value"]) in shown, "%s: metric %s text %r lacks its value %s" % (name, key, shown, a["data-value"]))
    # Independently of the page's own bookkeeping: the headline numbers of summary.json.
    if not analysis_present:
        for key in ("simulated_us", "bound_us", "ratio", "tasks"):
            if key in metrics:
                check(same_value(metrics[key]["attrs"]["data-value"], sources["summary"][key]),
                      "%s: %s shown %s, summary.json has %s" % (name, key, metrics[key]["attrs"]["data-value"],
                                                                 sources["summary"][key]))
    # Utilisation per core kind.
    table = dom.find("table", inside=dom.by_id("core-kinds"))
    rows = dom.find("tr", cls="core-kind")
    kinds = {r["attrs"]["data-kind"]: r for r in rows}
    check(set(kinds) >= {"AIC", "AIV"}, "%s: core-kind rows %s, expected AIC and AIV" % (name, sorted(kinds)))
    if check(table and table[0]["attrs"].get("data-source") in sources,
             "%s: the core-kind table names no known source" % name):
        src = sources[table[0]["attrs"]["data-source"]]
        for kind, row in kinds.items():
            record = at(src, row["attrs"]["data-path"])
            check(record.get("kind", kind) == kind, "%s: row %s points at %s" % (name, kind, row["attrs"]["data-path"]))
            cells = {c["attrs"]["data-key"]: c for c in dom.find("td", inside=row) if "data-key" in c["attrs"]}
            check("utilisation" in cells, "%s: %s row shows no utilisation" % (name, kind))
            for key, cell in cells.items():
                expected = record.get(key, record.get("utilization") if key == "utilisation" else None)
                check(same_value(cell["attrs"]["data-value"], expected) and text_of(cell) == cell["attrs"]["data-value"],
                      "%s: %s %s shows %s, the %s has %s" % (name, kind, key, text_of(cell),
                                                             table[0]["attrs"]["data-source"], expected))
    # Per-pipe tables (analysis.json of a mode-2 run): every cell equals its record.
    pipe_rows = dom.find("tr", cls="pipe-row") + dom.find("tr", cls="pipe-kind-row")
    if analysis_present and facts["pipes"]:
        check(dom.find("tr", cls="pipe-row"), "%s: analysis.json has pipes but #pipes shows none" % name)
    for table in dom.find("table", inside=dom.by_id("pipes")):
        src = sources.get(table["attrs"].get("data-source"))
        if not check(src is not None, "%s: a #pipes table names no known source" % name):
            continue
        for row in [r for r in pipe_rows if any(p is table for p in r["parents"])]:
            record = at(src, row["attrs"]["data-path"])
            for cell in dom.find("td", inside=row):
                if "data-key" in cell["attrs"]:
                    check(same_value(cell["attrs"]["data-value"], record.get(cell["attrs"]["data-key"])),
                          "%s: pipe row %s %s shows %s, %s has %s" %
                          (name, row["attrs"]["data-path"], cell["attrs"]["data-key"], cell["attrs"]["data-value"],
                           table["attrs"]["data-source"], record.get(cell["attrs"]["data-key"])))
    # Verdicts: the same rules, in order.
    vsrc = dom.by_id("verdicts")["attrs"].get("data-source")
    if check(vsrc in sources, "%s: #verdicts names no source (%r)" % (name, vsrc)):
        expected_rules = [v.get("rule", "") for v in sources[vsrc].get("verdicts", [])]
        shown_rules = [el["attrs"].get("data-rule") for el in dom.find("li", cls="verdict")]
        check(shown_rules == expected_rules, "%s: verdicts shown %s, %s has %s" % (name, shown_rules, vsrc, expected_rules))


def check_selection(name, dom, facts, call):
    arrows = dom.find("path", cls="dep-arrow")
    preds = sorted(int(a["attrs"]["data-other"]) for a in arrows if "pred" in a["attrs"]["class"].split())
    succs = sorted(int(a["attrs"]["data-other"]) for a in arrows if "succ" in a["attrs"]["class"].split())
    check(preds == sorted(facts["preds"].get(call, [])), "%s: task %d pred arrows %s, trace flows say %s" %
          (name, call, preds, sorted(facts["preds"].get(call, []))))
    check(succs == sorted(facts["succs"].get(call, [])), "%s: task %d succ arrows %s, trace flows say %s" %
          (name, call, succs, sorted(facts["succs"].get(call, []))))
    selected = dom.find("rect", cls="selected")
    check(len(selected) == 1 and int(selected[0]["attrs"]["data-call"]) == call,
          "%s: task %d is not the one selected rect" % (name, call))
    task = [t for t in facts["tasks"] if t["args"]["call"] == call][0]
    details = text_of(dom.by_id("selection"))
    for region in task["args"]["regions"]:
        check(region in details, "%s: selection details lack region %s" % (name, region))
    check(str(task["args"]["bytes_in"]) in details, "%s: selection details lack bytes_in" % name)
    if "read_stall_us" in task["args"]:
        check("read stall" in details, "%s: selection details lack the read stall" % name)


def run_case(args, chromium, work, case):
    name, example, mode, image = case
    print("== %s (%s, --debug-mode %d)" % (name, example, mode))
    out_base = os.path.join(work, name)
    shutil.rmtree(out_base, ignore_errors=True)
    os.makedirs(out_base)
    cmd = [args.ptoc, "run", os.path.join(args.source_dir, example), "--debug-mode", str(mode),
           "--output-dir", out_base]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=PTOC_TIMEOUT_S)
    if not check(proc.returncode == 0, "%s: %s failed (exit %d): %s" %
                 (name, " ".join(cmd), proc.returncode, proc.stderr[-2000:])):
        return
    folders = glob.glob(os.path.join(out_base, "output_*"))
    if not check(len(folders) == 1, "%s: expected one run folder under %s, found %s" % (name, out_base, folders)):
        return
    folder = folders[0]
    # With `ptoc prof`, the page shows analysis.json (prof rewrites swimlane.html).
    prof = subprocess.run([args.ptoc, "prof", folder], capture_output=True, text=True, timeout=PTOC_TIMEOUT_S)
    analysis_path = os.path.join(folder, "analysis.json")
    analysis_present = os.path.exists(analysis_path)
    if analysis_present:
        print("  comparing the page with analysis.json (ptoc prof)")
    else:
        print("  note: `ptoc prof` wrote no analysis.json (exit %d); comparing with summary.json" % prof.returncode)
    page = os.path.join(folder, "swimlane.html")
    if not check(os.path.exists(page), "%s: no swimlane.html in %s" % (name, folder)):
        return
    with open(os.path.join(folder, "merged_swimlane.json")) as f:
        trace = json.load(f)
    sources = {"trace": trace.get("otherData", {})}
    with open(os.path.join(folder, "summary.json")) as f:
        sources["summary"] = json.load(f)
    if analysis_present:
        with open(analysis_path) as f:
            sources["analysis"] = json.load(f)
    facts = trace_facts(trace)
    check(mode < 2 or facts["pipes"], "%s: mode 2 but the trace has no pipe events" % name)
    print("  %d tasks, %d pipe events, %d core lanes, %d pipe lanes" %
          (len(facts["tasks"]), len(facts["pipes"]), len(facts["core_lanes"]), len(facts["pipe_lanes"])))

    profile_dir = tempfile.mkdtemp(prefix="chromium-", dir=work)
    url = "file://" + os.path.abspath(page)
    check_page(name, dump_dom(chromium, profile_dir, url), facts, sources, analysis_present)
    # Select the task with the most dependencies: its arrows must match the flows.
    call = max(facts["tasks"], key=lambda t: (len(facts["preds"].get(t["args"]["call"], [])) +
                                              len(facts["succs"].get(t["args"]["call"], [])),
                                              -t["args"]["call"]))["args"]["call"]
    edges = sources["summary"]["edges"]
    check(bool(facts["preds"].get(call) or facts["succs"].get(call)) == (edges > 0),
          "%s: the trace's flows bind to no task, yet summary.json counts %d edges" % (name, edges))
    check(sum(len(v) for v in facts["preds"].values()) == edges,
          "%s: %d flow pairs in the trace, summary.json counts %d edges" %
          (name, sum(len(v) for v in facts["preds"].values()), edges))
    select_url = "%s#select=%d" % (url, call)
    check_selection(name, dump_dom(chromium, profile_dir, select_url), facts, call)
    shot = os.path.join(work, name + ".png")
    screenshot(chromium, profile_dir, select_url, shot)
    if args.screenshot_dir and os.path.exists(shot):
        os.makedirs(args.screenshot_dir, exist_ok=True)
        shutil.copyfile(shot, os.path.join(args.screenshot_dir, image))
    shutil.rmtree(profile_dir, ignore_errors=True)


def embedded_json(page, element_id):
    """The JSON the page embeds in <script id=element_id> (what its script reads)."""
    with open(page) as f:
        text = f.read()
    start = text.index('<script type="application/json" id="%s">' % element_id)
    start = text.index(">", start) + 1
    return json.loads(text[start:text.index("</script>", start)])


def run_real_case(args, chromium, work, case):
    """A device trace: `ptoc prof` writes <stem>.swimlane.html; the page must draw one
    task box per complete event of the published file, its lanes by their names, the
    analysis's numbers and verdicts, and a selected task's dependency arrows."""
    name, file, device, image = case
    print("== %s (%s)" % (name, file))
    folder = os.path.join(work, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    trace_path = os.path.join(folder, file)
    shutil.copyfile(os.path.join(args.source_dir, "test", "data", "pypto-real", file), trace_path)
    proc = subprocess.run([args.ptoc, "prof", trace_path, "--device", device, "--quiet"],
                          capture_output=True, text=True, timeout=PTOC_TIMEOUT_S)
    if not check(proc.returncode == 0, "%s: ptoc prof failed (exit %d): %s" %
                 (name, proc.returncode, proc.stderr[-2000:])):
        return
    stem = file[:-len(".json")]
    page = os.path.join(folder, stem + ".swimlane.html")
    with open(os.path.join(folder, stem + ".analysis.json")) as f:
        analysis = json.load(f)
    # From the published file, independently of ptoc: its complete events and lanes.
    with open(trace_path) as f:
        events = json.load(f)["traceEvents"]
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
               if e.get("ph") == "M" and e.get("name") == "thread_name"}
    slices = [e for e in events if e.get("ph") == "X"]
    lanes_with_events = {threads[(e["pid"], e["tid"])] for e in slices}
    print("  %d complete events on %d lanes" % (len(slices), len(lanes_with_events)))

    profile_dir = tempfile.mkdtemp(prefix="chromium-", dir=work)
    url = "file://" + os.path.abspath(page)
    dom = dump_dom(chromium, profile_dir, url)
    body = dom.find("body")[0]
    if not check(body["attrs"].get("data-ready") == "1",
                 "%s: the page's script did not finish (#error: %s)" %
                 (name, text_of(dom.by_id("error") or {"text": []}))):
        return
    rects = dom.find("rect", cls="task")
    check(len(rects) == len(slices), "%s: %d task rects, the file has %d complete events" %
          (name, len(rects), len(slices)))
    check(sorted(int(r["attrs"]["data-call"]) for r in rects) == list(range(len(slices))),
          "%s: task rects do not number the tasks 0..%d" % (name, len(slices) - 1))
    core = {l["attrs"]["data-lane"] for l in dom.find("g", cls="lane")}
    check(core == lanes_with_events, "%s: lanes %s != the file's lanes with events %s" %
          (name, sorted(core), sorted(lanes_with_events)))
    metrics = {el["attrs"]["data-key"]: el for el in dom.find("div", cls="metric")}
    for key, el in metrics.items():
        a = el["attrs"]
        check(a["data-source"] == "analysis", "%s: metric %s from %s, expected analysis" %
              (name, key, a["data-source"]))
        check(same_value(a["data-value"], at(analysis, a["data-path"])),
              "%s: metric %s shows %s, analysis.%s is %s" %
              (name, key, a["data-value"], a["data-path"], at(analysis, a["data-path"])))
    check("tasks" in metrics and int(metrics["tasks"]["attrs"]["data-value"]) == analysis["tasks"],
          "%s: no tasks metric equal to analysis.json's" % name)
    shown_rules = [el["attrs"].get("data-rule") for el in dom.find("li", cls="verdict")]
    check(shown_rules == [v["rule"] for v in analysis["verdicts"]],
          "%s: verdicts shown %s, analysis.json has %s" %
          (name, shown_rules, [v["rule"] for v in analysis["verdicts"]]))
    notes = dom.find("li", cls="note")
    check(len(notes) == len(analysis["notes"]), "%s: %d notes shown, analysis.json has %d" %
          (name, len(notes), len(analysis["notes"])))
    # Arrows of the task with the most edges: as many as the page's trace says.
    display = embedded_json(page, "ptoc-trace")
    degree = {}
    for e in display["traceEvents"]:
        if e.get("cat") == "dep":
            degree[e["args"]["call"]] = degree.get(e["args"]["call"], 0) + 1
    if degree:
        call = max(sorted(degree), key=lambda c: degree[c])
        selected = dump_dom(chromium, profile_dir, "%s#select=%d" % (url, call))
        arrows = selected.find("path", cls="dep-arrow")
        check(len(arrows) == degree[call], "%s: task %d shows %d arrows, it has %d edges" %
              (name, call, len(arrows), degree[call]))
    shot = os.path.join(work, name + ".png")
    screenshot(chromium, profile_dir, url, shot)
    if args.screenshot_dir and image and os.path.exists(shot):
        os.makedirs(args.screenshot_dir, exist_ok=True)
        shutil.copyfile(shot, os.path.join(args.screenshot_dir, image))
    shutil.rmtree(profile_dir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ptoc", required=True)
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--work-dir", required=True)
    parser.add_argument("--screenshot-dir", help="also copy the screenshots here (docs/images)")
    args = parser.parse_args()
    chromium = find_chromium()
    if not chromium:
        print("FAIL: chromium not found (looked for $PTOC_CHROMIUM, chromium, chromium-browser, "
              "google-chrome); install it with `bash scripts/install-deps.sh`")
        return 1
    os.makedirs(args.work_dir, exist_ok=True)
    for case in CASES:
        try:
            run_case(args, chromium, args.work_dir, case)
        except (RuntimeError, subprocess.TimeoutExpired, OSError, ValueError, KeyError) as err:
            check(False, "%s: %s" % (case[0], err))
    for case in REAL_CASES:
        try:
            run_real_case(args, chromium, args.work_dir, case)
        except (RuntimeError, subprocess.TimeoutExpired, OSError, ValueError, KeyError) as err:
            check(False, "%s: %s" % (case[0], err))
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("all swimlane.html checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
