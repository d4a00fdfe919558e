"""The issue's contract example, verbatim in spirit: softmax through @ptoc.jit."""
import os

import numpy as np

import ptoc


@ptoc.jit(debug_options={"runtime_debug_mode": 1}, runtime_options={"device_sched_mode": 1})
def softmax(x: ptoc.Tensor([256, 4096], ptoc.DT_FP32), y: ptoc.Tensor([256, 4096], ptoc.DT_FP32)):
    ptoc.set_vec_tile_shapes(1, 4096)
    m = ptoc.amax(x, dim=-1, keepdim=True)
    e = ptoc.exp(x - m)
    y[:] = e / ptoc.sum(e, dim=-1, keepdim=True)


def test_softmax_contract():
    rng = np.random.default_rng(0)
    x = rng.random((256, 4096), dtype=np.float32)
    y = np.empty_like(x)
    assert softmax(x, y) is None
    ref = np.exp(x - x.max(-1, keepdims=True))
    ref /= ref.sum(-1, keepdims=True)
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-7)

    r = softmax.last_run
    assert r.simulated_us >= r.bound_us > 0
    assert 0 < r.utilization["AIV"] <= 1 and r.utilization["AIC"] == 0
    assert os.path.isfile(r.swimlane_path)
    assert r.swimlane_path.endswith("merged_swimlane.json")
    assert "bound" in r.summary

    # Same signature: no recompilation.
    before = softmax.cache_info()
    softmax(x, y)
    after = softmax.cache_info()
    assert after.hits == before.hits + 1 and after.misses == before.misses
