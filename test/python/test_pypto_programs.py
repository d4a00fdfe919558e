"""Small PyPTO-style programs (written for ptoc against PyPTO's documented API) run
through ptoc's compatibility layer, each checked against numpy/torch."""

import numpy as np
import pytest

import ptoc
from ptoc import pypto

torch = pytest.importorskip("torch")

RTOL = ATOL = 1e-5


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.NPU})
def add_kernel(a: pypto.Tensor([], pypto.DT_FP32), b: pypto.Tensor([], pypto.DT_FP32),
               out: pypto.Tensor([], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    out[:] = pypto.add(a, b)


def test_dtype_only_annotations_take_any_shape():
    for shape in [(3,), (2, 5), (32, 64)]:
        a, b = torch.randn(shape), torch.randn(shape)
        out = torch.empty(shape)
        add_kernel(a, b, out)
        torch.testing.assert_close(out, a + b, rtol=RTOL, atol=ATOL)


def test_dtype_only_annotation_rejects_another_dtype():
    a = torch.randn(4, 8, dtype=torch.float16)
    with pytest.raises(ptoc.DTypeError, match="parameter 'a' is annotated pypto.DT_FP32"):
        add_kernel(a, a, torch.empty(4, 8, dtype=torch.float16))


@pypto.frontend.jit
def softmax_kernel(x: pypto.Tensor[[32, 64], pypto.DT_FP32],
                   y: pypto.Tensor[[32, 64], pypto.DT_FP32]):
    pypto.set_vec_tile_shapes(8, 64)
    e = pypto.exp(pypto.sub(x, pypto.amax(x, -1, True)))
    y[:] = pypto.div(e, pypto.sum(e, -1, True))


def test_bracket_annotation_softmax():
    x = torch.randn(32, 64)
    y = torch.empty(32, 64)
    softmax_kernel(x, y)
    torch.testing.assert_close(y, torch.softmax(x, -1), rtol=1e-5, atol=1e-6)


def test_static_annotation_rejects_another_shape():
    with pytest.raises(ptoc.ShapeError, match=r"has size 16 in axis 0, but its annotation \[32, 64\] fixes it to 32"):
        softmax_kernel(torch.randn(16, 64), torch.empty(16, 64))


@pypto.frontend.jit
def matmul_kernel(a: pypto.Tensor([64, 32], pypto.DT_FP16), b: pypto.Tensor([32, 48], pypto.DT_FP16),
                  out: pypto.Tensor([64, 48], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([32, 32], [32, 32], [16, 48])
    out.move(pypto.matmul(a, b, pypto.DT_FP32))


def test_matmul_with_move():
    a = torch.randn(64, 32, dtype=torch.float16)
    b = torch.randn(32, 48, dtype=torch.float16)
    out = torch.empty(64, 48)
    matmul_kernel(a, b, out)
    torch.testing.assert_close(out, a.float() @ b.float(), rtol=1e-4, atol=1e-4)


@pypto.frontend.jit
def blocks_kernel(x: pypto.Tensor([64, 64], pypto.DT_FP32), out: pypto.Tensor([64, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    for i in pypto.loop(0, 4, 1, name="rows", idx_name="i"):
        block = pypto.view(x, [16, 64], [i * 16, 0])
        pypto.assemble(pypto.mul(pypto.exp(block), 2.0), [i * 16, 0], out)


def test_loop_view_assemble():
    x = torch.randn(64, 64)
    out = torch.empty(64, 64)
    blocks_kernel(x, out)
    torch.testing.assert_close(out, torch.exp(x) * 2, rtol=1e-5, atol=1e-5)


@pypto.frontend.jit
def local_kernel(x: pypto.Tensor([16, 64], pypto.DT_FP32), out: pypto.Tensor([16, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    tmp = pypto.tensor([16, 64], pypto.DT_FP32, "tmp")
    pypto.assemble(x[0:8, :] + 1.0, [0, 0], tmp)
    pypto.assemble(x[8:16, :] - 1.0, [8, 0], tmp)
    ones = pypto.full([16, 64], 1.0, pypto.DT_FP32, valid_shape=[16, 64])
    out.move(tmp * ones + x.view([16, 64], [0, 0]))


def test_local_tensor_full_and_tensor_view():
    x = torch.randn(16, 64)
    out = torch.empty(16, 64)
    local_kernel(x, out)
    ref = torch.cat([x[:8] + 1, x[8:] - 1]) + x
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)


@pypto.frontend.jit
def rows_kernel(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
                out: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    for i in pypto.loop(x.shape[0] // 16):
        rows = pypto.view(x, [16, 64], [i * 16, 0])
        pypto.assemble(pypto.sqrt(pypto.abs(rows)), [i * 16, 0], out)


def test_dynamic_axis_serves_every_size():
    # pypto.DYNAMIC is ptoc.DYNAMIC: one compiled kernel for all sizes.
    rows_kernel.cache_clear()
    for n in (32, 64, 16):
        x = torch.randn(n, 64)
        out = torch.empty(n, 64)
        rows_kernel(x, out)
        torch.testing.assert_close(out, x.abs().sqrt(), rtol=1e-5, atol=1e-5)
    assert rows_kernel.cache_info().currsize == 1


def test_dynamic_annotation_checks_static_axes():
    with pytest.raises(ptoc.ShapeError, match="has size 32 in axis 1, but its annotation "
                       r"\[ptoc.DYNAMIC, 64\] fixes it to 64"):
        rows_kernel(torch.randn(16, 32), torch.empty(16, 32))


@pypto.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def hello_kernel(x: pypto.Tensor[...], y: pypto.Tensor[...], out: pypto.Tensor[...]):
    pypto.set_vec_tile_shapes(32, 32)
    out[:] = x + y


def test_sim_run_mode_computes_exact_results():
    x, y = torch.randn(64, 64), torch.randn(64, 64)
    out = torch.empty(64, 64)
    hello_kernel(x, y, out)
    torch.testing.assert_close(out, x + y, rtol=0, atol=0)
    assert hello_kernel.last_run.simulated_us > 0


@pypto.frontend.jit
def scaled_kernel(x: pypto.Tensor([], pypto.DT_BF16), out: pypto.Tensor([], pypto.DT_BF16),
                  scale: float):
    pypto.set_vec_tile_shapes(16, 64)
    out[:] = pypto.cast(pypto.mul(pypto.cast(x, pypto.DT_FP32), scale), pypto.DT_BF16)


def test_bf16_and_scalar_parameter():
    x = torch.randn(16, 64, dtype=torch.bfloat16)
    out = torch.empty(16, 64, dtype=torch.bfloat16)
    scaled_kernel(x, out, 0.5)
    torch.testing.assert_close(out, (x.float() * 0.5).bfloat16(), rtol=0, atol=0)


def test_dtype_only_bf16_takes_torch_bf16_not_float32():
    # numpy float32 would silently compute in fp32: refused, naming the fix.
    with pytest.raises(ptoc.DTypeError, match="pass a torch.bfloat16 tensor"):
        scaled_kernel(np.ones((16, 64), np.float32), np.empty((16, 64), np.float32), 0.5)


def test_datatype_and_tensor_isinstance():
    assert pypto.DataType.DT_FP16 is pypto.DT_FP16 is ptoc.DT_FP16
    assert isinstance(pypto.DT_FP32, pypto.DataType)
    seen = []

    @pypto.frontend.jit
    def k(x: pypto.Tensor, out: pypto.Tensor):
        pypto.set_vec_tile_shapes(16, 64)
        seen.append((isinstance(x, pypto.Tensor), x.dtype, list(x.shape),
                     pypto.get_vec_tile_shapes()))
        out[:] = x * 3

    x = torch.randn(16, 64)
    out = torch.empty(16, 64)
    k(x, out)
    torch.testing.assert_close(out, x * 3)
    assert seen == [(True, ptoc.DT_FP32, [16, 64], [16, 64])]


def test_dtype_ptoc_lacks_is_named_not_usable():
    # A table of dtypes naming one ptoc lacks still imports; using it is an error
    # that names it. (Skipped once ptoc has every dtype PyPTO names.)
    missing = [n for n in pypto._names.DTYPE_NAMES if getattr(ptoc, n, None) is None]
    if not missing:
        pytest.skip("this ptoc has every PyPTO dtype")
    d = getattr(pypto, missing[0])
    assert missing[0] in repr(d)

    @pypto.frontend.jit
    def k(x: pypto.Tensor([16, 64], pypto.DT_FP32), out: pypto.Tensor([16, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = pypto.cast(pypto.cast(x, d), pypto.DT_FP32)

    with pytest.raises(ptoc.Error, match=f"pypto.{missing[0]} is not supported by this ptoc yet"):
        k(torch.randn(16, 64), torch.empty(16, 64))


def test_missing_op_is_a_clear_error():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([16, 64], pypto.DT_FP32), out: pypto.Tensor([16, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = pypto.no_such_op_in_ptoc(x)

    with pytest.raises(ptoc.Error, match="pypto.no_such_op_in_ptoc is not supported by this ptoc yet"):
        k(torch.randn(16, 64), torch.empty(16, 64))


def test_min_max_of_loop_indices_are_symbolic():
    seen = []

    @pypto.frontend.jit
    def k(x: pypto.Tensor([64, 64], pypto.DT_FP32), out: pypto.Tensor([64, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        for i in pypto.loop(4):
            end = min(i * 16 + 16, x.shape[0])
            seen.append((isinstance(end, ptoc.SymInt), str(max(i, 2)), min(3, 5), max([1, 7])))
            pypto.assemble(pypto.view(x, [16, 64], [i * 16, 0]) + 1.0, [i * 16, 0], out)

    x = torch.randn(64, 64)
    out = torch.empty(64, 64)
    k(x, out)
    torch.testing.assert_close(out, x + 1)
    assert len(seen) == 1 and seen[0][0] and seen[0][2:] == (3, 7)
    assert "loop" in seen[0][1]


# A vec tile whose rows are shorter than a 32-byte block: PyPTO checks the row rule
# for its copy ops only, so a compute op (here a cast to fp16, 8 elements = 16 bytes)
# takes it; ptoc pads each UB row to a whole block.
@pypto.frontend.jit
def narrow_cast_kernel(x: pypto.Tensor([], pypto.DT_FP32), out: pypto.Tensor([], pypto.DT_FP16)):
    pypto.set_vec_tile_shapes(*([8] * len(x.shape)))
    out[:] = pypto.cast(x, pypto.DT_FP16)


@pytest.mark.parametrize("shape", [(3,), (5, 12)], ids=["vector", "matrix"])
def test_cast_with_a_short_row_tile(shape):
    x = torch.randn(shape) * 7
    out = torch.empty(shape, dtype=torch.float16)
    narrow_cast_kernel(x, out)
    torch.testing.assert_close(out, x.half(), rtol=0, atol=0)


# PyPTO's transpose applies the vec tile to its input: (1, 16, 8, 64) cuts k
# [1, 4, 32, 64] into 1x4x8x64 tiles, each transposed into a 1x4x64x8 tile whose bf16
# rows are 16 bytes (padded in UB).
@pypto.frontend.jit
def transpose_kernel(k: pypto.Tensor([1, 4, 32, 64], pypto.DT_BF16),
                     kt_out: pypto.Tensor([1, 4, 64, 32], pypto.DT_BF16)):
    pypto.set_vec_tile_shapes(1, 16, 8, 64)
    kt_out[:] = pypto.transpose(k, 2, 3)


def test_transpose_tile_cuts_the_input():
    k = torch.randn(1, 4, 32, 64, dtype=torch.bfloat16)
    kt = torch.empty(1, 4, 64, 32, dtype=torch.bfloat16)
    transpose_kernel(k, kt)
    assert torch.equal(kt, k.transpose(2, 3))


@pypto.frontend.jit
def scores_kernel(q: pypto.Tensor([1, 4, 16, 64], pypto.DT_BF16),
                  k: pypto.Tensor([1, 4, 32, 64], pypto.DT_BF16),
                  scores: pypto.Tensor([1, 4, 16, 32], pypto.DT_BF16)):
    pypto.set_cube_tile_shapes([16, 16], [64, 64], [32, 32])
    pypto.set_vec_tile_shapes(1, 16, 8, 64)
    scores.move(pypto.matmul(q, pypto.transpose(k, 2, 3), out_dtype=pypto.DT_BF16))


def test_scores_through_a_transposed_key():
    q = torch.randn(1, 4, 16, 64, dtype=torch.bfloat16)
    k = torch.randn(1, 4, 32, 64, dtype=torch.bfloat16)
    scores = torch.empty(1, 4, 16, 32, dtype=torch.bfloat16)
    scores_kernel(q, k, scores)
    # fp32 accumulation, one rounding to bf16 (at most half an ulp: 2^-9 relative).
    golden = (q.float() @ k.float().transpose(2, 3)).bfloat16()
    torch.testing.assert_close(scores.float(), golden.float(), rtol=2 ** -8, atol=1e-6)


# PyPTO's softmax computes an fp16/bf16 input in fp32 and casts the result back (so
# does torch's): rounding each step to bf16 instead puts ~3/4 of the results off by
# up to 7% (what ptoc's softmax did, and why PyPTO's attention example drifted from
# its torch golden).
@pypto.frontend.jit
def bf16_softmax_kernel(x: pypto.Tensor([64, 128], pypto.DT_BF16),
                        y: pypto.Tensor([64, 128], pypto.DT_BF16)):
    pypto.set_vec_tile_shapes(16, 128)
    y[:] = pypto.softmax(x, -1)


def test_bf16_softmax_computes_in_fp32():
    torch.manual_seed(3)
    x = torch.randn(64, 128, dtype=torch.bfloat16) * 4
    y = torch.empty(64, 128, dtype=torch.bfloat16)
    bf16_softmax_kernel(x, y)
    golden = torch.softmax(x, -1)
    # One bf16 rounding of the fp32 result: equal but for a rare exp ulp across a
    # rounding boundary, never more than one bf16 ulp (2^-8 relative) apart.
    assert (y == golden).float().mean() >= 0.99
    assert ((y.float() - golden.float()).abs() / golden.float()).max() <= 2 ** -7
