#!/usr/bin/env python3
"""Writes the seed corpora and dictionaries of the fuzz targets from the project's own
inputs, so nothing large is committed and the seeds follow the code:

  pto     every .pto of examples/ and test/, split at `// -----` like ptoc-opt
          --split-input-file does, and variants with view/assemble offsets and cube
          L1 sizes at the edge of int64 (PTO_EDGES)
  device  the device presets (lib/target/presets), the test device files, and the
          device JSON the lit tests write with `echo '...'`
  trace   merged_swimlane.json of `ptoc run --debug-mode 1` and `2` of the examples and
          the codegen test inputs on a2 and tiny (small ones only), and the test traces
  bank    the bank files `ptoc tune` writes for two examples, whole and line by line
  space   the spaces the lit tests and docs/tuning.md write, and the `space` of the
          tune_result files of the bank step
  report  the examples' performance reports (benchmarks/baselines) and the
          summary.json of the trace step's runs

Every target also gets inputs nested 40,000 levels deep (JSON arrays and objects; for
pto an attribute): a fuzzer cannot grow such an input by mutation in a short run, and
a recursive reader without a depth limit overflows the stack on it.

Dictionaries (libFuzzer -dict): for pto the op names of include/ptoc/ir/Ops.def, the
words of the seeds and the text form's punctuation; for the JSON targets the keys and
string values of their seeds, JSON's own tokens and numbers at the edges of int64 and
double.

usage: make_seeds.py --source-dir DIR --ptoc PATH --out DIR
Writes OUT/<target>/seeds/* and OUT/<target>.dict (the seeds folder is replaced).
"""
import argparse
import collections
import hashlib
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

TARGETS = ["pto", "device", "trace", "bank", "space", "report"]
# Larger seeds slow every execution; the small ones cover the same code. (The deep
# seeds are larger, and added past this check.)
MAX_SEED_BYTES = 48 * 1024
# Words per dictionary: libFuzzer picks entries at random, so a long tail dilutes them.
MAX_DICT_WORDS = 400

JSON_TOKENS = ["{", "}", "[", "]", ":", ",", '"', "null", "true", "false", "-", "0", "-0",
               "1", "-1", "0.5", "1e308", "-1e308", "1e309", "1e-300", "4.9e-324",
               "2147483647", "2147483648", "-2147483649", "9223372036854775807",
               "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
               "18446744073709551615", "18446744073709551616", '"\\u0000"', '"\\ud800"',
               '"\\""']
PTO_TOKENS = ["func", "return", "@", "%", "->", "(", ")", "{", "}", "[", "]", "<", ">",
              "=", ":", ",", "x", "tensor<", "tile<", "loc(", '"', "// -----", "\n",
              "true", "false", "-1", "0", "9223372036854775807", "-9223372036854775808",
              "1e308", "0x7fffffff"]
DEVICE_KEY_HINTS = ('"base"', '"aic_cores"', '"aiv_cores"', '"buffers"', '"clock_mhz"')


class Corpus:
    """The seeds of one target, deduplicated by content."""

    def __init__(self, root, name):
        self.dir = root / name / "seeds"
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)
        self.texts = []
        self.seen = set()

    def add(self, label, text, max_bytes=MAX_SEED_BYTES):
        data = text.encode() if isinstance(text, str) else text
        if not data.strip() or len(data) > max_bytes:
            return
        digest = hashlib.sha1(data).hexdigest()[:12]
        if digest in self.seen:
            return
        self.seen.add(digest)
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", label)[-60:]
        (self.dir / f"{safe}-{digest}").write_bytes(data)
        self.texts.append(data.decode(errors="replace"))


FAILED_RUNS = []


def run(cmd):
    """Runs a ptoc command. A failure is fine for a seed (a test input may not be a
    whole runnable function, or may not fit tiny); main() counts them, and a target
    left without seeds fails."""
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        FAILED_RUNS.append(" ".join(map(str, cmd)))
    return proc


def pto_files(src):
    files = sorted(src.glob("examples/*.pto")) + sorted(src.glob("test/**/*.pto"))
    return [f for f in files if f.is_file()]


def split_chunks(text):
    return re.split(r"^// -----.*$", text, flags=re.M)


def echoed_json(src):
    """(file, json text) for every `echo '<json>' > file` of a lit RUN line."""
    for f in pto_files(src):
        for m in re.finditer(r"RUN:.*?echo '([^']*)' *> *(\S+)", f.read_text()):
            yield f, m.group(1), m.group(2)


# Values at the edge of int64 put into the seeds' attributes, where sizes and offsets
# are added and multiplied: (label, pattern, replacement).
PTO_EDGES = [
    ("offset-max", r"offsets = \[\d+", "offsets = [9223372036854775807"),
    ("cube-kl1-huge", r"k = \[(\d+), \d+\]", r"k = [\1, 4611686018427387904]"),
]


def pto_seeds(src, corpus):
    for f in pto_files(src):
        for i, chunk in enumerate(split_chunks(f.read_text())):
            corpus.add(f"{f.stem}-{i}", chunk.strip() + "\n")
            for label, pattern, replacement in PTO_EDGES:
                edge = re.sub(pattern, replacement, chunk)
                if edge != chunk:
                    corpus.add(f"{f.stem}-{i}-{label}", edge.strip() + "\n")


def device_seeds(src, corpus):
    for f in sorted(src.glob("lib/target/presets/*.json")):
        corpus.add(f"preset-{f.stem}", f.read_bytes())
    # Every test JSON input but the traces is a device file (some deliberately broken).
    for f in sorted(src.glob("test/**/Inputs/*.json")):
        if not f.name.startswith("prof-"):
            corpus.add(f"test-{f.stem}", f.read_bytes())
    for f, text, _ in echoed_json(src):
        if any(k in text for k in DEVICE_KEY_HINTS):
            corpus.add(f"echo-{f.stem}", text)


def trace_and_report_seeds(src, ptoc, work, corpus, reports):
    for f in sorted(src.glob("benchmarks/baselines/*.json")):
        reports.add(f"baseline-{f.stem}", f.read_bytes())
    for f in sorted(src.glob("test/ptoc-run/Inputs/prof-*.json")):
        corpus.add(f.stem, f.read_bytes())
    for f, text, _ in echoed_json(src):
        if "traceEvents" in text:
            corpus.add(f"echo-{f.stem}", text)
    inputs = sorted(src.glob("examples/*.pto")) + sorted(src.glob("test/codegen/Inputs/*.pto"))
    for f in inputs:
        for device in ["a2", "tiny"]:
            for mode in ["1", "2"]:
                out = work / "runs" / f"{f.stem}-{device}-{mode}"
                run([ptoc, "run", f, "--device", device, "--debug-mode", mode,
                     "--no-numerics", "--threads", "1", "--output-dir", out])
                for trace in out.glob("*/merged_swimlane.json"):
                    corpus.add(f"{f.stem}-{device}-mode{mode}", trace.read_bytes())
                for summary in out.glob("*/summary.json"):
                    reports.add(f"summary-{f.stem}-{device}", summary.read_bytes())


def bank_and_space_seeds(src, ptoc, work, bank, space):
    for example in ["softmax", "matmul"]:
        results = work / "tune" / example
        run([ptoc, "tune", src / "examples" / f"{example}.pto", "--strategy", "random",
             "--budget", "6", "--threads", "1", "--bank", work / "bank",
             "--result-dir", results])
        for result in results.glob("tune_result_*.json"):
            space.add(f"result-space-{example}", json.dumps(json.loads(result.read_text())["space"]))
    for f in sorted((work / "bank").glob("*.jsonl")):
        text = f.read_text()
        bank.add("bank-file", text)
        for i, line in enumerate(text.splitlines()):
            bank.add(f"bank-line-{i}", line + "\n")
    for f, text, target in echoed_json(src):
        if "space" in target or "tune" in f.stem:
            space.add(f"echo-{f.stem}", text)
    # docs/tuning.md: the JSON after `$ cat space.json`, up to the next `$` line.
    doc = (src / "docs" / "tuning.md").read_text()
    for m in re.finditer(r"^\$ cat \S*space\S*\.json\n(.*?)^\$", doc, flags=re.M | re.S):
        space.add("docs-tuning", m.group(1))


DEEP_LEVELS = 40000


def deep_seeds(corpora):
    """Inputs nested DEEP_LEVELS deep, for every target (see the module comment)."""
    n = DEEP_LEVELS
    deep_array = "[" * n + "]" * n
    deep_object = '{"a":' * n + "1" + "}" * n
    unlimited = float("inf")
    for t in ["device", "trace", "space", "report"]:
        corpora[t].add("deep-array", deep_array, unlimited)
        corpora[t].add("deep-object", deep_object, unlimited)
    corpora["bank"].add("deep-array-line", deep_array + "\n", unlimited)
    corpora["bank"].add("deep-config-line", '{"format":1,"config":' + deep_object + "}\n",
                        unlimited)
    corpora["pto"].add("deep-attribute",
                       "func @f(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {\n"
                       "  %e = exp %x {vec_tile = [8, 64], a = " + deep_array +
                       "} : tensor<8x64xf32>\n  return %e\n}\n", unlimited)


def json_words(texts):
    """Object keys and string values of every JSON text (or of each of its lines)."""
    counts = collections.Counter()

    def walk(value):
        if isinstance(value, dict):
            for k, v in value.items():
                counts[json.dumps(k)] += 2
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)
        elif isinstance(value, str):
            counts[json.dumps(value)] += 1

    for text in texts:
        for piece in [text] + text.splitlines():
            try:
                walk(json.loads(piece))
            except (ValueError, RecursionError):  # not JSON, or a deep seed
                pass
    return [w for w, _ in counts.most_common(MAX_DICT_WORDS)]


def pto_words(src, texts):
    ops = re.findall(r'PTOC_OP\(\w+, "([^"]+)"', (src / "include/ptoc/ir/Ops.def").read_text())
    counts = collections.Counter()
    for text in texts:
        code = re.sub(r"//.*", "", text)
        counts.update(re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", code))
    words = [w for w, _ in counts.most_common(MAX_DICT_WORDS)]
    return ops + [w for w in words if w not in ops]


def write_dict(path, entries):
    def quote(s):
        out = []
        for b in s.encode():
            c = chr(b)
            if c in '\\"':
                out.append("\\" + c)
            elif 32 <= b < 127:
                out.append(c)
            else:
                out.append(f"\\x{b:02x}")
        return '"' + "".join(out) + '"'

    seen, lines = set(), []
    for e in entries:
        if e and e not in seen:
            seen.add(e)
            lines.append(quote(e))
    path.write_text("\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source-dir", required=True, type=pathlib.Path)
    parser.add_argument("--ptoc", required=True, type=pathlib.Path)
    parser.add_argument("--out", required=True, type=pathlib.Path)
    args = parser.parse_args()
    src, out = args.source_dir.resolve(), args.out.resolve()
    corpora = {t: Corpus(out, t) for t in TARGETS}
    with tempfile.TemporaryDirectory(prefix="ptoc-seeds-") as tmp:
        work = pathlib.Path(tmp)
        pto_seeds(src, corpora["pto"])
        device_seeds(src, corpora["device"])
        trace_and_report_seeds(src, args.ptoc, work, corpora["trace"], corpora["report"])
        bank_and_space_seeds(src, args.ptoc, work, corpora["bank"], corpora["space"])
    deep_seeds(corpora)

    write_dict(out / "pto.dict", PTO_TOKENS + pto_words(src, corpora["pto"].texts))
    for t in ["device", "trace", "bank", "space", "report"]:
        write_dict(out / f"{t}.dict", JSON_TOKENS + json_words(corpora[t].texts))
    print(f"make_seeds: {len(FAILED_RUNS)} ptoc runs gave no seed (inputs that are not "
          "runnable functions or do not fit the device)", file=sys.stderr)
    for t in TARGETS:
        print(f"make_seeds: {t}: {len(corpora[t].texts)} seeds", file=sys.stderr)
        if not corpora[t].texts:
            sys.exit(f"make_seeds: no seeds for {t}; the step that makes them failed")


if __name__ == "__main__":
    main()
