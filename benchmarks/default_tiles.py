"""Derived tile shapes against the examples' hand-set ones (issue 21: default tilings).

Each example of examples/*.py is compiled twice on the same device: with its
set_*_tile_shapes calls, and with none (--derived-tiles: the default-tiles pass derives
every tile, docs/passes.md "default-tiles"). Both run with numerics on the example's
own inputs; the table gives their simulated times, the ratio and the tiles derived.
The outputs of the two must agree within the example's tolerance (checked).

Run (after a build):
  PYTHONPATH=build/python /usr/bin/python3 benchmarks/default_tiles.py
  PYTHONPATH=build/python /usr/bin/python3 benchmarks/default_tiles.py --device tiny
  PYTHONPATH=build/python /usr/bin/python3 benchmarks/default_tiles.py --examples softmax,matmul

Simulated times are deterministic; no wall-clock time is reported.
"""

import argparse
import math
import os
import pathlib
import sys

import numpy as np

EXAMPLES_DIR = pathlib.Path(__file__).resolve().parents[1] / "examples"
sys.path.insert(0, str(EXAMPLES_DIR))

import attention  # noqa: E402 (after the path)
import layernorm  # noqa: E402
import matmul  # noqa: E402
import matmul_bias_gelu  # noqa: E402
import mlp  # noqa: E402
import rmsnorm  # noqa: E402
import softmax  # noqa: E402


def inputs(name, rng):
    """The example's own input shapes and dtypes (as its main() makes them)."""
    f16, f32 = np.float16, np.float32
    if name == "softmax":
        x = rng.uniform(-4, 4, (softmax.ROWS, softmax.COLS)).astype(f32)
        return (x, np.empty_like(x)), 1
    if name == "rmsnorm":
        x = rng.normal(0, 3, (rmsnorm.ROWS, rmsnorm.HIDDEN)).astype(f16)
        w = rng.uniform(0.5, 1.5, rmsnorm.HIDDEN).astype(f32)
        return (x, w, np.empty_like(x)), 2
    if name == "layernorm":
        x = rng.normal(0.5, 2, (layernorm.ROWS, layernorm.HIDDEN)).astype(f32)
        w = rng.uniform(0.5, 1.5, layernorm.HIDDEN).astype(f32)
        b = rng.uniform(-0.5, 0.5, layernorm.HIDDEN).astype(f32)
        return (x, w, b, layernorm.EPS), None
    if name == "matmul":
        a = rng.uniform(-1, 1, (matmul.M, matmul.K)).astype(f16)
        b = rng.uniform(-1, 1, (matmul.K, matmul.N)).astype(f16)
        return (a, b), None
    if name == "matmul_bias_gelu":
        m = matmul_bias_gelu
        x = rng.uniform(-1, 1, (m.TOKENS, m.IN_FEATURES)).astype(f16)
        w = (rng.uniform(-1, 1, (m.IN_FEATURES, m.OUT_FEATURES)) / math.sqrt(m.IN_FEATURES)).astype(f16)
        b = rng.uniform(-0.5, 0.5, m.OUT_FEATURES).astype(f32)
        return (x, w, b), None
    if name == "attention":
        q, k, v = (rng.uniform(-1, 1, (attention.TOKENS, attention.HEAD_DIM)).astype(f16)
                   for _ in range(3))
        return (q, k, v), None
    if name == "mlp":
        x = rng.uniform(-1, 1, (mlp.TOKENS, mlp.MODEL)).astype(f16)
        w1 = (rng.uniform(-1, 1, (mlp.MODEL, mlp.HIDDEN)) * math.sqrt(9 / mlp.MODEL)).astype(f16)
        w2 = (rng.uniform(-1, 1, (mlp.HIDDEN, mlp.MODEL)) * math.sqrt(3 / mlp.HIDDEN)).astype(f16)
        return (x, w1, w2), None
    raise ValueError(name)


MAKERS = {
    "softmax": softmax.make_softmax,
    "rmsnorm": rmsnorm.make_rmsnorm,
    "layernorm": layernorm.make_layernorm,
    "matmul": matmul.make_matmul,
    "matmul_bias_gelu": matmul_bias_gelu.make_linear_gelu,
    "attention": attention.make_attention,
    "mlp": mlp.make_mlp,
}
# Tolerances of the examples' own checks (relative, absolute), for hand vs derived.
TOLERANCE = {"softmax": (1e-5, 1e-8), "rmsnorm": (1e-3, 1e-3), "layernorm": (1e-4, 1e-5),
             "matmul": (1e-4, 1e-3), "matmul_bias_gelu": (2e-3, 2e-3),
             "attention": (2e-3, 2e-3), "mlp": (1e-3, 1e-3)}


def run(name, device, derived):
    """Simulated us, the output, and the derived tiles of one compile of an example."""
    args, out_index = inputs(name, np.random.default_rng(0))
    kernel = MAKERS[name](device, 0, derived)
    result = kernel(*args)
    output = args[out_index] if out_index is not None else result
    compiled = kernel.compile(*args)
    return kernel.last_run.simulated_us, np.asarray(output), compiled.derived_tiles


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="a2")
    parser.add_argument("--examples", default="softmax,rmsnorm,matmul,mlp,layernorm,"
                        "matmul_bias_gelu,attention")
    args = parser.parse_args()

    rows = []
    ok = True
    for name in args.examples.split(","):
        hand_us, hand_out, _ = run(name, args.device, False)
        derived_us, derived_out, tiles = run(name, args.device, True)
        rtol, atol = TOLERANCE[name]
        same = np.allclose(derived_out.astype(np.float64), hand_out.astype(np.float64),
                           rtol=rtol, atol=atol)
        ok &= same
        text = "; ".join(f"{t['kind']} {t['tile']} x{t['ops']} ({t['rule']})" for t in tiles)
        rows.append((name, hand_us, derived_us, same, text))

    print(f"device {args.device}: simulated us, hand-set tiles vs derived (no tile calls)\n")
    print(f"{'example':18s} {'hand':>9s} {'derived':>9s} {'ratio':>6s}  outputs  derived tiles")
    for name, hand, derived, same, text in rows:
        print(f"{name:18s} {hand:9.2f} {derived:9.2f} {derived / hand:6.3f}  "
              f"{'agree' if same else 'DIFFER':7s}  {text}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
