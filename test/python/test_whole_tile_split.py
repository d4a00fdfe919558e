"""A vec_tile covering the whole result but too big for UB is split to fit (reduced
axes kept whole) with a remark; a reduction whose kept axis alone does not fit is an
error naming the op, the sizes and the fix. Device "tiny": UB 32 KiB."""

import re

import numpy as np
import pytest

import ptoc
from conftest import F32, assert_close


def _elementwise():
    @ptoc.jit(device="tiny")
    def f(x):
        ptoc.set_vec_tile_shapes(64, 256)  # the whole 64x256 f32 result: 64 KiB per tile
        return ptoc.exp(x) + 1.0
    return f


def test_whole_tile_elementwise_is_split(rng):
    x = rng.random((64, 256), dtype=np.float32)
    f = _elementwise()
    k = f.compile(x)
    assert any("split into" in r and "'exp'" in r for r in k.remarks), k.remarks
    assert any("split into" in r and "'add'" in r for r in k.remarks), k.remarks
    # exp holds 2 tiles (16x256 f32: 2 x 16 KiB fits 32 KiB); add of a constant holds 3
    # (8x256: 3 x 8 KiB).
    tile_ir = k.ir("tile")
    assert re.search(r"= exp %\d+ : tile<16x256xf32, ub>", tile_ir), tile_ir
    assert "tile<8x256xf32, ub>" in tile_ir
    assert "tile<64x256xf32, ub>" not in tile_ir
    assert k.stats["passes"]["expand-tiles"]["whole-tile-splits"] == 2
    assert_close(f(x), np.exp(x) + 1, F32)


def test_whole_tile_reduction_keeps_the_reduced_axis(rng):
    x = rng.random((64, 1024), dtype=np.float32)

    @ptoc.jit(device="tiny")
    def g(x):
        ptoc.set_vec_tile_shapes(64, 1024)
        return ptoc.sum(x, dim=-1, keepdim=True)

    k = g.compile(x)
    assert any("'sum'" in r and "reduced dimensions kept whole" in r for r in k.remarks)
    tile_ir = k.ir("tile")
    # 2 buffers of 4x1024 f32 = 32 KiB: rows whole, no cross-tile combine (no add).
    assert "tile<4x1024xf32, ub>" in tile_ir
    assert " add " not in tile_ir
    assert_close(g(x), x.sum(-1, keepdims=True), F32, rtol=1e-5)


def test_partial_tile_too_big_is_still_an_error(rng):
    @ptoc.jit(device="tiny")
    def f(x):
        ptoc.set_vec_tile_shapes(32, 256)  # not the whole shape: the user's tiling stands
        return ptoc.exp(x)

    with pytest.raises(ptoc.TileShapeError, match=r"'exp' op vec_tile 32x256 needs .* try "):
        f(rng.random((64, 256), dtype=np.float32))


def test_reduction_row_too_long_names_the_fix(rng):
    @ptoc.jit(device="tiny")
    def f(x):
        ptoc.set_vec_tile_shapes(4, 16384)
        return ptoc.sum(x, dim=-1, keepdim=True)

    with pytest.raises(ptoc.TileShapeError) as e:
        f(rng.random((4, 16384), dtype=np.float32))
    msg = str(e.value)
    assert "'sum' op" in msg and "1x16384" in msg and "32768" in msg, msg
    assert "split the reduction with an explicit vec_tile such as 1x2048" in msg, msg
