"""Kernels that set no tile shapes (docs/passes.md "default-tiles"): the compiler derives
every vec_tile and cube_tile from the ops and the device, the kernel runs with the
numerics of a hand-tiled one, and the run summary lists the derived tiles."""

import json
import math
import os
import re

import numpy as np
import pytest

import ptoc
from conftest import F32, assert_close, gelu_ref

A2 = "a2"
# a2's cores (lib/target/presets/a2.json): the whole-wave and parallelism rules use them.
A2_AIC, A2_AIV = 24, 48


def softmax_kernel(tile=None, device=A2, **options):
    @ptoc.jit(device=device, **options)
    def softmax(x):
        if tile:
            ptoc.set_vec_tile_shapes(*tile)
        e = ptoc.exp(x - ptoc.amax(x, dim=-1, keepdim=True))
        return e / ptoc.sum(e, dim=-1, keepdim=True)
    return softmax


def softmax_ref(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def vec_tile_of(derived):
    """The derived vec_tile text "[a, b]" as a list of ints."""
    return [int(v) for v in derived["tile"].strip("[]").split(",")]


def test_softmax_without_tiles_runs_and_matches_numpy(rng):
    x = rng.uniform(-4, 4, (256, 4096)).astype(F32)
    f = softmax_kernel()
    y = f(x)
    assert_close(y, softmax_ref(x), F32)
    # The same bits as the hand-tiled kernel: the rows are whole either way.
    np.testing.assert_array_equal(y, softmax_kernel(tile=(1, 4096))(x))

    (d,) = f.compile(x).derived_tiles
    assert d["kind"] == "vec_tile" and d["ops"] == 5   # amax, sub, exp, sum, div share it
    rows, cols = vec_tile_of(d)
    assert cols == 4096                                 # the reduction axis whole
    assert 16 * 1024 <= rows * cols * 4 <= 64 * 1024    # 16-64 KiB of f32
    assert d["tiles"] == math.ceil(256 / rows)
    assert "whole reduction axis 1" in d["rule"]


def test_summary_lists_the_derived_tiles(rng, tmp_path):
    x = rng.uniform(-1, 1, (64, 1024)).astype(F32)
    f = softmax_kernel(debug_options={"runtime_debug_mode": 1, "output_dir": str(tmp_path)})
    f(x)
    (d,) = f.compile(x).derived_tiles
    line = next(l for l in f.last_run.summary.splitlines() if l.startswith("tiles:"))
    assert line == f"tiles: derived vec_tile {d['tile']} for 5 ops ({d['rule']})"
    with open(os.path.join(f.last_run.output_folder, "summary.json")) as fh:
        summary = json.load(fh)
    (j,) = summary["derived_tiles"]
    assert j == {"kind": "vec_tile", "tile": d["tile"], "ops": 5, "first_op": d["first_op"],
                 "func": "softmax", "tiles": d["tiles"], "rule": d["rule"]}
    assert re.fullmatch(r"'amax' at .*test_default_tiles\.py:\d+:\d+", j["first_op"])


def test_user_tiles_are_kept_and_not_listed(rng):
    x = rng.uniform(-1, 1, (64, 1024)).astype(F32)
    f = softmax_kernel(tile=(2, 1024))
    f(x)
    k = f.compile(x)
    assert k.derived_tiles == []
    assert not any(l.startswith("tiles:") for l in f.last_run.summary.splitlines())
    assert "vec_tile = [2, 1024]" in k.ir("tensor")
    assert not any("default-tiles" in r for r in k.remarks)


def test_ops_before_the_first_tile_call_take_their_chains_tile(rng):
    # The user set a tile after the amax: the amax takes that tile (so it fuses with
    # the rest of its chain) instead of a derived one, and nothing is listed.
    @ptoc.jit(device=A2)
    def f(x):
        m = ptoc.amax(x, dim=-1, keepdim=True)
        ptoc.set_vec_tile_shapes(4, 1024)
        e = ptoc.exp(x - m)
        return e / ptoc.sum(e, dim=-1, keepdim=True)

    x = rng.uniform(-1, 1, (64, 1024)).astype(F32)
    assert_close(f(x), softmax_ref(x), F32)
    k = f.compile(x)
    assert k.derived_tiles == []
    (remark,) = [r for r in k.remarks if "default-tiles" in r]
    assert "'amax' op has no vec_tile: default-tiles gives it [4, 1024], the tile of 'sub'" in remark


def rmsnorm_kernel(tile=None, device=A2):
    @ptoc.jit(device=device)
    def rmsnorm(x, w):
        if tile:
            ptoc.set_vec_tile_shapes(*tile)
        x32 = ptoc.cast(x, ptoc.DT_FP32)
        return ptoc.cast(x32 * ptoc.rsqrt(ptoc.mean(x32 * x32, -1, True) + 1e-6) * w,
                         ptoc.DT_FP16)
    return rmsnorm


def test_rmsnorm_without_tiles_counts_the_widest_type(rng):
    x = rng.normal(0, 3, (256, 1024)).astype(np.float16)
    w = rng.uniform(0.5, 1.5, 1024).astype(F32)
    f = rmsnorm_kernel()
    y = f(x, w)
    x64 = x.astype(np.float64)
    assert_close(y, x64 / np.sqrt((x64 * x64).mean(-1, keepdims=True) + 1e-6) * w, np.float16)
    np.testing.assert_array_equal(y, rmsnorm_kernel(tile=(8, 1024))(x, w))
    (d,) = f.compile(x, w).derived_tiles
    rows, cols = vec_tile_of(d)
    # The f16 input is cast to f32: the tile's bytes count at f32, the widest type.
    assert cols == 1024 and 16 * 1024 <= rows * cols * 4 <= 64 * 1024
    assert "at f32" in d["rule"]


def test_a_device_with_less_ub_gets_smaller_tiles(rng):
    x = rng.uniform(-1, 1, (64, 1024)).astype(F32)
    tiles = {}
    for device in (A2, "tiny"):
        f = softmax_kernel(device=device)
        assert_close(f(x), softmax_ref(x), F32)
        (d,) = f.compile(x).derived_tiles
        tiles[device] = vec_tile_of(d)
    # tiny's 32 KiB of UB holds at most 16 KiB a task with room for two (a row of 1024
    # f32 is 4 KiB); a2's 192 KiB takes bigger tiles.
    assert tiles["tiny"][1] == tiles[A2][1] == 1024
    assert tiles["tiny"][0] < tiles[A2][0]
    assert 2 * tiles["tiny"][0] * 1024 * 4 <= 32 * 1024


def test_matmul_without_tiles_fills_the_cube_cores_in_whole_waves(rng):
    @ptoc.jit(device=A2)
    def mm(a, b):
        return ptoc.matmul(a, b, out_dtype=ptoc.DT_FP32)

    a = rng.uniform(-1, 1, (1024, 1024)).astype(np.float16)
    b = rng.uniform(-1, 1, (1024, 1024)).astype(np.float16)
    c = mm(a, b)
    assert_close(c, a.astype(np.float64) @ b.astype(np.float64), F32, rtol=1e-4, atol=1e-3)
    (d,) = mm.compile(a, b).derived_tiles
    assert d["kind"] == "cube_tile" and d["ops"] == 1
    assert d["tiles"] % A2_AIC == 0, d
    assert d["rule"].startswith(f"{d['tiles']} tiles = {d['tiles'] // A2_AIC} waves of 24 AIC")
    assert mm.last_run.tasks == d["tiles"]


def test_mlp_without_tiles_matches_numpy(rng):
    # cube -> vector -> cube with nothing set: two cube tiles and one vector chain.
    @ptoc.jit(device=A2)
    def mlp(x, w1, w2):
        h = ptoc.matmul(x, w1, out_dtype=ptoc.DT_FP32)
        g = ptoc.cast(ptoc.gelu(h), ptoc.DT_FP16)
        return ptoc.matmul(g, w2, out_dtype=ptoc.DT_FP32)

    x = rng.uniform(-1, 1, (256, 512)).astype(np.float16)
    w1 = (rng.uniform(-1, 1, (512, 1024)) * math.sqrt(9 / 512)).astype(np.float16)
    w2 = (rng.uniform(-1, 1, (1024, 512)) * math.sqrt(3 / 1024)).astype(np.float16)
    y = mlp(x, w1, w2)
    g = gelu_ref(x.astype(np.float32) @ w1.astype(np.float32)).astype(np.float16)
    assert_close(y, g.astype(np.float64) @ w2.astype(np.float64), F32, rtol=1e-3, atol=1e-3)
    kinds = [d["kind"] for d in mlp.compile(x, w1, w2).derived_tiles]
    assert kinds == ["vec_tile", "cube_tile", "cube_tile"]
    line = next(l for l in mlp.last_run.summary.splitlines() if l.startswith("tiles:"))
    assert line.count("cube_tile") == 2 and line.count("vec_tile") == 1


def test_the_tiles_line_leaves_the_tiles_per_task_to_the_merge_passes():
    # 8192 rows of 4096 f32 on 48 AIV cores: many tiles per core. How many a task runs
    # is the merge passes' choice (nbuffer-merge's rules see what the tiles feed, and in
    # a loop body the control thread), so the line gives the tiles per core only.
    x = np.zeros((8192, 4096), np.float32)
    k = softmax_kernel(runtime_options={"run_numerics": False})
    k(x)
    (d,) = k.compile(x).derived_tiles
    per_core = d["tiles"] / A2_AIV
    assert per_core > 1
    assert d["rule"].endswith(f"{d['tiles']} tiles, {per_core:.1f} per AIV core before merging"), d
    assert "per task" not in k.last_run.summary.split("tiles:")[1].splitlines()[0]

    # In a loop body, even tiles that fit one wave: the control thread's rule may merge
    # them.
    @ptoc.jit(device=A2, runtime_options={"run_numerics": False})
    def rows(x: ptoc.Tensor([4, 8192, 64], ptoc.DT_FP16), y: ptoc.Tensor([4, 8192, 64], ptoc.DT_FP16)):
        for b in ptoc.loop(4, name="b"):
            y[b] = -x[b]

    h = np.zeros((4, 8192, 64), np.float16)
    rows(h, np.zeros_like(h))
    (d,) = rows.compile(h, np.zeros_like(h)).derived_tiles
    assert d["rule"].endswith(f"{d['tiles']} tiles for 48 AIV cores before merging"), d
