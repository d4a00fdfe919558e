"""Effect tests for the settings made inside a traced function: set_vec_tile_shapes,
set_cube_tile_shapes, every pass option of set_pass_options (sg_set_scope included)
and set_runtime_options. Each test compiles a small kernel with and without the
setting and asserts the documented difference in .ir(stage) / .stats / the run report.
"""
import functools
import io
import json
import re

import numpy as np
import pytest

import ptoc

TINY = "tiny"  # 2 AIC / 4 AIV cores, 32 KiB UB: small kernels show every merge rule
RNG = np.random.default_rng(7)

# Pass option name -> the test showing its effect. A knob added to the compiler
# without an entry here fails test_every_pass_option_has_an_effect_test.
KNOB_TESTS = {}


def effect_of(*knobs):
    """Registers the decorated test as the effect test of these pass options."""
    def register(test):
        for knob in knobs:
            KNOB_TESTS.setdefault(knob, []).append(test.__name__)
        return test
    return register


def with_knobs(body, knobs):
    """``body`` with ``ptoc.set_pass_options(**knobs)`` made first inside the trace
    (the signature and name stay body's, so the jit sees the same parameters)."""
    @functools.wraps(body)
    def traced(**params):
        if knobs:
            ptoc.set_pass_options(**knobs)
        return body(**params)
    return traced


def compile_with(body, arrays, device=TINY, **knobs):
    """Compiles ``body`` (knobs set inside it) and, as a guard that no knob breaks
    numerics, runs it against the body's numpy reference ``body.ref``."""
    f = ptoc.jit(with_knobs(body, knobs), device=device)
    kernel = f.compile(*arrays)
    if hasattr(body, "ref"):
        call = [a.copy() for a in arrays]
        got = f(*call)
        if got is None:  # written in place: the last array is the output
            got = call[-1]
        np.testing.assert_allclose(got, body.ref(*arrays), rtol=2e-5, atol=1e-6)
    return kernel


def reference(fn):
    def attach(body):
        body.ref = fn
        return body
    return attach


def subgraphs(kernel, core="total"):
    return kernel.stats["subgraphs"][core]


def merged(kernel, pass_name):
    return kernel.stats["merges"][pass_name]["merged"]


def refused(kernel, pass_name, reason):
    return kernel.stats["merges"][pass_name]["refused"].get(reason, 0)


def sg_of_ops(ir_text, opname):
    """The set of subgraph ids of the tile ops named ``opname``."""
    return {int(m) for m in re.findall(rf"= {opname} [^\n]*?\bsg = (\d+)", ir_text)}


# --- kernels --------------------------------------------------------------

@reference(lambda x, y: -np.exp(x))
def chain(x, y):
    """exp then neg, each row a tile; with fuse_local=False each stage is its own
    atomic subgraph joined to the next through GM: partition's merge rules decide."""
    ptoc.set_vec_tile_shapes(1, 64)
    y[:] = -ptoc.exp(x)


CHAIN_ARGS = (RNG.random((8, 64), dtype=np.float32), np.empty((8, 64), np.float32))
# Isolates partition: no UB fusion, no vector NBuffer merge afterwards.
CHAIN_BASE = dict(fuse_local=False, vec_nbuffer_mode=0)


@reference(lambda x, y: np.exp(x).sum(0, keepdims=True))
def column_sum(x, y):
    """16-row exp (one subgraph per 1x64 tile) feeding a column sum whose 16x64 tiles
    read 16 exp tiles each through GM: two groups of different sizes."""
    ptoc.set_vec_tile_shapes(1, 64)
    e = ptoc.exp(x)
    ptoc.set_vec_tile_shapes(16, 64)
    y[:] = ptoc.sum(e, dim=0, keepdim=True)


def column_sum_args(cols):
    return RNG.random((16, cols), dtype=np.float32), np.empty((1, cols), np.float32)


def softmax_ref(x, y):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


@reference(softmax_ref)
def row_softmax(x, y):
    """64 rows, one row per tile: 64 isomorphic AIV subgraphs before nbuffer-merge."""
    ptoc.set_vec_tile_shapes(1, 256)
    m = ptoc.amax(x, dim=-1, keepdim=True)
    e = ptoc.exp(x - m)
    y[:] = e / ptoc.sum(e, dim=-1, keepdim=True)


SOFTMAX_ARGS = (RNG.random((64, 256), dtype=np.float32), np.empty((64, 256), np.float32))
SOFTMAX_ROWS = 64


@reference(lambda a, b: a.astype(np.float32) @ b.astype(np.float32))
def small_tile_matmul(a, b):
    """A 64x64 result in 16x16 output tiles: 16 isomorphic AIC subgraphs, each row
    of tiles sharing an A panel and each column a B panel (L1 reuse candidates)."""
    ptoc.set_cube_tile_shapes([16, 16], [32, 32], [16, 16])
    return ptoc.matmul(a, b, out_dtype=ptoc.DT_FP32)


MATMUL_ARGS = (RNG.random((64, 32), dtype=np.float32).astype(np.float16),
               RNG.random((32, 64), dtype=np.float32).astype(np.float16))
MATMUL_TILES = 16


@reference(lambda a, b: a.astype(np.float32) @ b.astype(np.float32))
def deep_matmul(a, b):
    """Four 32-row output tiles sharing B, K = 256 in eight steps of 32."""
    ptoc.set_cube_tile_shapes([32, 32], [32, 32], [64, 64])
    return ptoc.matmul(a, b, out_dtype=ptoc.DT_FP32)


DEEP_MATMUL_ARGS = (RNG.random((128, 256), dtype=np.float32).astype(np.float16),
                    RNG.random((256, 64), dtype=np.float32).astype(np.float16))


# --- set_vec_tile_shapes ----------------------------------------------------

def test_vec_tile_shapes_apply_to_the_ops_after_the_call():
    @ptoc.jit(device=TINY)
    def two_tiles(x, y):
        ptoc.set_vec_tile_shapes(1, 64)
        e = ptoc.exp(x)
        ptoc.set_vec_tile_shapes(4, 64)
        y[:] = -e

    x, y = CHAIN_ARGS[0], np.empty((8, 64), np.float32)
    k = two_tiles.compile(x, y)
    tensor = k.ir("tensor")
    assert re.search(r"= exp [^\n]*vec_tile = \[1, 64\]", tensor)
    assert re.search(r"= neg [^\n]*vec_tile = \[4, 64\]", tensor)
    tile = k.ir("tile")
    exp_tiles = re.findall(r"= exp [^\n]*: tile<(\w+), ub>", tile)
    neg_tiles = re.findall(r"= neg [^\n]*: tile<(\w+), ub>", tile)
    assert exp_tiles == ["1x64xf32"] * 8
    assert neg_tiles == ["4x64xf32"] * 2
    two_tiles(x, y)
    np.testing.assert_allclose(y, -np.exp(x), rtol=1e-6)


def test_vec_tile_shapes_change_the_tile_op_count():
    def softmax_with(rows):
        @ptoc.jit(device=TINY)
        def sm(x, y):
            ptoc.set_vec_tile_shapes(rows, 256)
            m = ptoc.amax(x, dim=-1, keepdim=True)
            e = ptoc.exp(x - m)
            y[:] = e / ptoc.sum(e, dim=-1, keepdim=True)
        return sm.compile(*SOFTMAX_ARGS)

    one, four = softmax_with(1), softmax_with(4)
    assert one.stats["tile_ops"] > four.stats["tile_ops"]
    # Seven tile ops per tile (copy_in, amax, sub, exp, sum, div, copy_out).
    assert one.stats["tile_ops"] == 4 * four.stats["tile_ops"]
    assert "tile<1x256xf32, ub>" in one.ir("tile") and "tile<4x256xf32, ub>" not in one.ir("tile")
    assert "tile<4x256xf32, ub>" in four.ir("tile")


# --- set_cube_tile_shapes ---------------------------------------------------

def matmul_with(mn, device=TINY):
    @ptoc.jit(device=device)
    def mm(a, b):
        ptoc.set_cube_tile_shapes([mn, mn], [32, 32], [mn, mn])
        return a @ b
    return mm


def test_cube_tile_shapes_set_the_cube_tile_attr_and_the_aic_subgraphs():
    a, b = MATMUL_ARGS
    big, small = matmul_with(64), matmul_with(32)
    kb, ks = big.compile(a, b), small.compile(a, b)
    assert "cube_tile = {m = [64, 64], k = [32, 32], n = [64, 64]}" in kb.ir("tensor")
    assert "cube_tile = {m = [32, 32], k = [32, 32], n = [32, 32]}" in ks.ir("tensor")
    # 64x64 result: one output tile vs 2x2 (L1 reuse's automatic N is 1 for 4 members
    # on 2 AIC cores, so nothing merges them back).
    assert subgraphs(kb, "AIC") == 1
    assert subgraphs(ks, "AIC") == 4
    ref = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(big(a, b), ref, rtol=1e-3)
    np.testing.assert_allclose(small(a, b), ref, rtol=1e-3)


def test_cube_tile_shapes_apply_to_the_matmuls_after_the_call():
    @ptoc.jit(device=TINY)
    def two_matmuls(a, b, c):
        ptoc.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])
        ab = a @ b
        ptoc.set_cube_tile_shapes([16, 16], [32, 32], [16, 16])
        return ab, a @ c

    a, b = MATMUL_ARGS
    c = b.copy()
    tensor = two_matmuls.compile(a, b, c).ir("tensor")
    tiles = re.findall(r"= matmul [^\n]*cube_tile = \{m = \[(\d+), (\d+)\]", tensor)
    assert tiles == [("32", "32"), ("16", "16")]


def split_k_matmul(flag, **kw):
    @ptoc.jit(device=TINY)
    def mm(a, b):
        ptoc.set_cube_tile_shapes([32, 32], [32, 32], [32, 32], flag, **kw)
        return a @ b
    return mm


def test_split_k_flag_in_4th_place_is_not_a_label():
    """Regression: set_cube_tile_shapes(m, k, n, True), PyPTO's enable_split_k, bound
    True to label= silently. It is the split-K flag: accepted, one warning (not
    modelled), same results; False says nothing."""
    import warnings
    a, b = MATMUL_ARGS
    ref = a.astype(np.float32) @ b.astype(np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        np.testing.assert_allclose(split_k_matmul(True)(a, b), ref, rtol=1e-3)
        np.testing.assert_allclose(split_k_matmul(False)(a, b), ref, rtol=1e-3)
        np.testing.assert_allclose(split_k_matmul(np.bool_(False))(a, b), ref, rtol=1e-3)
    texts = [str(w.message) for w in caught]
    assert len(texts) == 1 and "enable_split_k" in texts[0] and "not modelled" in texts[0]
    assert caught[0].filename == __file__  # at the user's call


def test_split_k_by_keyword_and_label_keyword_only():
    a, b = MATMUL_ARGS
    f = ptoc.autotune([{"cube_tile": {"mm": ([32, 32], [32, 32], [32, 32])}},
                       {"cube_tile": {"mm": ([16, 16], [32, 32], [16, 16])}}],
                      file=io.StringIO())(split_k_matmul(False, label="mm"))
    f(a, b)
    assert len([r for r in f.results if r.valid]) == 2
    # A str in 4th place is still the label.
    tensor = split_k_matmul("mm").with_config(cube_tile={"mm": (16, 32, 16)}).compile(a, b)
    assert "cube_tile = {m = [16, 16]" in tensor.ir("tensor")


@pytest.mark.parametrize("bad", [1, 2.0, None, [True]])
def test_split_k_flag_must_be_a_bool(bad):
    a, b = MATMUL_ARGS
    with pytest.raises(ptoc.ArgumentError) as e:
        split_k_matmul(bad)(a, b)
    assert "enable_split_k" in str(e.value) and "label=" in str(e.value)


# --- set_pass_options: every knob ---------------------------------------------

@effect_of("pg_skip_partition")
def test_pg_skip_partition_gives_one_subgraph_per_connected_region():
    args = column_sum_args(64)
    base = compile_with(column_sum, args, vec_nbuffer_mode=0)
    skip = compile_with(column_sum, args, vec_nbuffer_mode=0, pg_skip_partition=True)
    assert subgraphs(base) > 1
    assert subgraphs(skip) == 1  # the 16 exps and their sum form one region
    assert sg_of_ops(skip.ir("partitioned"), "exp") == {0}
    assert len(sg_of_ops(base.ir("partitioned"), "exp")) > 1


@effect_of("pg_lower_bound")
def test_pg_lower_bound_decides_which_subgraphs_are_small_enough_to_merge():
    default = compile_with(chain, CHAIN_ARGS, **CHAIN_BASE)
    low = compile_with(chain, CHAIN_ARGS, **CHAIN_BASE, pg_lower_bound=1)
    # Each exp/neg stage is far under the default 512 cycles: row by row they merge.
    assert merged(default, "partition") == 8 and subgraphs(default) == 8
    # Nothing is under 1 cycle: the 16 stages stay apart, in two groups of 8.
    assert merged(low, "partition") == 0 and subgraphs(low) == 16
    assert sorted(g["size"] for g in low.stats["groups"]) == [8, 8]


@effect_of("pg_upper_bound")
def test_pg_upper_bound_refuses_merges_that_exceed_it():
    default = compile_with(chain, CHAIN_ARGS, **CHAIN_BASE)
    capped = compile_with(chain, CHAIN_ARGS, **CHAIN_BASE, pg_upper_bound=200)
    assert refused(default, "partition", "cycle-bound") == 0
    assert refused(capped, "partition", "cycle-bound") == 8
    assert subgraphs(capped) == 2 * subgraphs(default)
    assert max(g["cycles"] for g in capped.stats["groups"]) <= 200


@effect_of("pg_parallel_lower_bound")
def test_pg_parallel_lower_bound_guards_groups_of_different_sizes():
    args = column_sum_args(128)  # 32 exp tiles, 2 sum tiles of 303 cycles each
    default = compile_with(column_sum, args, vec_nbuffer_mode=0)
    low = compile_with(column_sum, args, vec_nbuffer_mode=0, pg_parallel_lower_bound=1)
    # Default 20: the sum group (2 members, 606 cycles > pg_lower_bound) keeps its
    # parallelism and nothing merges.
    assert refused(default, "partition", "parallelism-floor") == 1
    assert merged(default, "partition") == 0 and subgraphs(default) == 34
    # 1: the exps may merge into their sum (up to the automatic cycle bound).
    assert refused(low, "partition", "parallelism-floor") == 0
    assert merged(low, "partition") > 0 and subgraphs(low) < 34


@effect_of("mg_vec_parallel_lb")
def test_mg_vec_parallel_lb_sets_the_automatic_nbuffer_floor():
    default = compile_with(row_softmax, SOFTMAX_ARGS)
    sixteen = compile_with(row_softmax, SOFTMAX_ARGS, mg_vec_parallel_lb=16)
    assert subgraphs(default, "AIV") == 4  # the device's 4 AIV cores
    assert subgraphs(sixteen, "AIV") == 16
    assert [g["size"] for g in sixteen.stats["groups"]] == [16]


@effect_of("vec_nbuffer_mode")
def test_vec_nbuffer_mode_zero_turns_the_vector_merge_off():
    default = compile_with(row_softmax, SOFTMAX_ARGS)
    off = compile_with(row_softmax, SOFTMAX_ARGS, vec_nbuffer_mode=0)
    assert merged(default, "nbuffer-merge") == SOFTMAX_ROWS - 4
    assert merged(off, "nbuffer-merge") == 0
    assert subgraphs(off) == SOFTMAX_ROWS
    assert "vec-nbuffer-mode=0" in off.pipeline and "vec-nbuffer-mode=1" in default.pipeline
    # The merged leaf runs several rows one after another: longer per-task cycles.
    assert default.stats["groups"][0]["cycles"] > off.stats["groups"][0]["cycles"]


@effect_of("vec_nbuffer_setting")
def test_vec_nbuffer_setting_gives_n_per_group_in_mode_2():
    by_key = compile_with(row_softmax, SOFTMAX_ARGS, vec_nbuffer_mode=2,
                          vec_nbuffer_setting={0: 8})
    by_default = compile_with(row_softmax, SOFTMAX_ARGS, vec_nbuffer_mode=2,
                              vec_nbuffer_setting={-1: 2})
    assert subgraphs(by_key) == SOFTMAX_ROWS // 8
    assert subgraphs(by_default) == SOFTMAX_ROWS // 2
    assert "vec-nbuffer-setting={0:8}" in by_key.pipeline


@effect_of("cube_nbuffer_mode")
def test_cube_nbuffer_mode_merges_isomorphic_cube_subgraphs():
    off = compile_with(small_tile_matmul, MATMUL_ARGS, cube_l1_reuse_mode=0)
    auto = compile_with(small_tile_matmul, MATMUL_ARGS, cube_l1_reuse_mode=0,
                        cube_nbuffer_mode=1)
    # By default the pass runs in its loop-bodies-only mode: a kernel without loops
    # keeps its cube tiles apart.
    assert subgraphs(off, "AIC") == MATMUL_TILES
    assert "cube-nbuffer-merge," in off.pipeline
    assert "cube-nbuffer-merge{cube-nbuffer-mode=1}" in auto.pipeline
    # Automatic N keeps the 2 AIC cores busy: 16 tiles in 2 tasks of 8.
    assert subgraphs(auto, "AIC") == 2
    assert merged(auto, "cube-nbuffer-merge") == MATMUL_TILES - 2


@effect_of("cube_nbuffer_setting")
def test_cube_nbuffer_setting_gives_n_per_group_in_mode_2():
    four = compile_with(small_tile_matmul, MATMUL_ARGS, cube_l1_reuse_mode=0,
                        cube_nbuffer_mode=2, cube_nbuffer_setting={0: 4})
    eight = compile_with(small_tile_matmul, MATMUL_ARGS, cube_l1_reuse_mode=0,
                         cube_nbuffer_mode=2, cube_nbuffer_setting={-1: 8})
    assert subgraphs(four, "AIC") == MATMUL_TILES // 4
    assert subgraphs(eight, "AIC") == MATMUL_TILES // 8


@effect_of("cube_l1_reuse_mode")
def test_cube_l1_reuse_mode_merges_tiles_that_load_the_same_panel():
    default = compile_with(small_tile_matmul, MATMUL_ARGS)
    off = compile_with(small_tile_matmul, MATMUL_ARGS, cube_l1_reuse_mode=0)
    assert subgraphs(off, "AIC") == MATMUL_TILES and merged(off, "l1-reuse-merge") == 0
    # Automatic N = floor(16 / (2 x 2 AIC cores)) = 4 members per anchor.
    assert subgraphs(default, "AIC") == MATMUL_TILES // 4
    l1 = default.stats["passes"]["l1-reuse-merge"]
    assert l1["copy-ins-removed"] > 0 and l1["bytes-saved"] > 0
    copy_in_default = sum(g["copy_in_bytes"] * g["size"] for g in default.stats["groups"])
    copy_in_off = sum(g["copy_in_bytes"] * g["size"] for g in off.stats["groups"])
    assert copy_in_default == copy_in_off - l1["bytes-saved"]


@effect_of("cube_l1_reuse_setting")
def test_cube_l1_reuse_setting_gives_members_per_anchor_in_mode_2():
    two = compile_with(small_tile_matmul, MATMUL_ARGS, cube_l1_reuse_mode=2,
                       cube_l1_reuse_setting={0: 2})
    one = compile_with(small_tile_matmul, MATMUL_ARGS, cube_l1_reuse_mode=2,
                       cube_l1_reuse_setting={-1: 1})
    assert subgraphs(two, "AIC") == MATMUL_TILES // 2
    assert subgraphs(one, "AIC") == MATMUL_TILES  # N = 1: no merge


@reference(lambda x, y: -np.exp(x))
def two_bodies(x, y):
    """Two loops of two iterations over 8-row slices: @two_bodies.a (function 1) runs
    exp, @two_bodies.b (function 2) neg; each body's 1x256 rows are one AIV group of
    eight, func1_0 and func2_0."""
    ptoc.set_vec_tile_shapes(1, 256)
    for i in ptoc.loop(2, name="a"):
        y[i * 8:(i + 1) * 8] = ptoc.exp(x[i * 8:(i + 1) * 8])
    for j in ptoc.loop(2, name="b"):
        y[j * 8:(j + 1) * 8] = ptoc.neg(y[j * 8:(j + 1) * 8])


TWO_BODIES_ARGS = (RNG.random((16, 256), dtype=np.float32), np.zeros((16, 256), np.float32))


def group_sizes(kernel):
    return {g["key"]: g["size"] for g in kernel.stats["groups"]}


def test_a_func_keyed_setting_sets_that_bodys_group_only():
    # No entry: the automatic N. In a loop body it has the control thread's floor
    # (docs/passes.md "Loop bodies"): eight rows of this little work merge whole.
    auto = compile_with(two_bodies, TWO_BODIES_ARGS, vec_nbuffer_mode=2, vec_nbuffer_setting={})
    assert group_sizes(auto) == {"func1_0": 1, "func2_0": 1}
    # A plain hash order sets group 0 of every root function ...
    plain = compile_with(two_bodies, TWO_BODIES_ARGS, vec_nbuffer_mode=2,
                         vec_nbuffer_setting={0: 2})
    assert group_sizes(plain) == {"func1_0": 4, "func2_0": 4}
    # ... "func2_0" only body 2's, as the compile statistics key it ...
    keyed = compile_with(two_bodies, TWO_BODIES_ARGS, vec_nbuffer_mode=2,
                         vec_nbuffer_setting={"func2_0": 2})
    assert group_sizes(keyed) == {"func1_0": 1, "func2_0": 4}
    assert "vec-nbuffer-setting={func2_0:2}" in keyed.pipeline
    assert [g["func"] for g in keyed.stats["groups"]] == [1, 2]
    # ... and wins over the plain key in its body.
    mixed = compile_with(two_bodies, TWO_BODIES_ARGS, vec_nbuffer_mode=2,
                         vec_nbuffer_setting={0: 2, "func1_0": 4, -1: 8})
    assert group_sizes(mixed) == {"func1_0": 2, "func2_0": 4}
    # A jit option means the same as a setting inside the function.
    f = ptoc.jit(two_bodies, device=TINY, pass_options={"vec_nbuffer_mode": 2,
                                                        "vec_nbuffer_setting": {"func2_0": 2}})
    assert group_sizes(f.compile(*TWO_BODIES_ARGS)) == {"func1_0": 1, "func2_0": 4}


def test_setting_keys_that_name_nothing_are_errors_or_warnings():
    f = ptoc.jit(two_bodies, device=TINY)
    # A key that is neither a hash order nor func<F>_<order>: refused when set.
    for bad in ({"func2": 4}, {"2": 4}, {"func2_-1": 4}, {True: 4}, {2.0: 4}):
        with pytest.raises(ptoc.OptionError) as e:
            ptoc.jit(two_bodies, device=TINY, pass_options={"vec_nbuffer_setting": bad})
        assert "vec_nbuffer_setting" in str(e.value) and '"func<F>_<order>" str' in str(e.value)
    # Function 0 runs the loops (it is no root function), there is no function 7: errors
    # that name the key and list the valid ones.
    for key, what in (("func0_0", "names function 0, @two_bodies, which runs loops"),
                      ("func7_0", "names function 7, but the module has 3 functions")):
        g = ptoc.jit(with_knobs(two_bodies, {"vec_nbuffer_mode": 2,
                                             "vec_nbuffer_setting": {key: 2}}), device=TINY)
        with pytest.raises(ptoc.OptionError) as e:
            g.compile(*TWO_BODIES_ARGS)
        assert f"vec-nbuffer-setting key {key} {what}" in str(e.value)
        assert "valid keys (the AIV groups): func1_0, func2_0" in str(e.value)
    # A group the body does not have: a warning, and the kernel compiles without it.
    g = ptoc.jit(with_knobs(two_bodies, {"vec_nbuffer_mode": 2,
                                         "vec_nbuffer_setting": {"func2_3": 2, 5: 2}}),
                 device=TINY)
    with pytest.warns(UserWarning) as caught:
        k = g.compile(*TWO_BODIES_ARGS)
    messages = [str(w.message) for w in caught]
    assert any("key func2_3 names no AIV group of @two_bodies.b (function 2)" in m
               for m in messages)
    assert any("key 5 names no AIV group (no root function has one of hash order 5)" in m
               for m in messages)
    assert group_sizes(k) == group_sizes(f.compile(*TWO_BODIES_ARGS))  # the automatic N
    assert f.compile(*TWO_BODIES_ARGS).stats["groups"]  # the kernel itself is fine


@effect_of("mg_copyin_upper_bound")
def test_mg_copyin_upper_bound_caps_merged_copy_in():
    cube = compile_with(small_tile_matmul, MATMUL_ARGS, mg_copyin_upper_bound=1024)
    assert refused(cube, "l1-reuse-merge", "copy-in-cap") > 0
    assert subgraphs(cube, "AIC") == MATMUL_TILES  # each tile alone copies in 2 KiB
    vec = compile_with(row_softmax, SOFTMAX_ARGS, mg_copyin_upper_bound=3000)
    # A row copies in 1 KiB: at most two rows per merged subgraph.
    assert refused(vec, "nbuffer-merge", "copy-in-cap") > 0
    assert subgraphs(vec) == SOFTMAX_ROWS // 2
    assert max(g["copy_in_bytes"] for g in vec.stats["groups"]) <= 3000
    # -1 is "no cap" for every pass declaring the knob (l1-reuse-merge's default is 1 MiB).
    uncapped = compile_with(small_tile_matmul, MATMUL_ARGS, mg_copyin_upper_bound=-1)
    assert refused(uncapped, "l1-reuse-merge", "copy-in-cap") == 0
    assert "l1-reuse-merge{cube-l1-reuse-mode=1 mg-copyin-upper-bound=-1}" in uncapped.pipeline


@effect_of("merge_fuel")
def test_merge_fuel_stops_merging_after_n_merges():
    fueled = compile_with(row_softmax, SOFTMAX_ARGS, merge_fuel=3)
    assert merged(fueled, "nbuffer-merge") == 3
    assert refused(fueled, "nbuffer-merge", "fuel") > 0
    assert subgraphs(fueled) == SOFTMAX_ROWS - 3
    part = compile_with(chain, CHAIN_ARGS, **CHAIN_BASE, merge_fuel=1)
    assert merged(part, "partition") == 1 and refused(part, "partition", "fuel") > 0


@effect_of("cube_k_stagger")
def test_cube_k_stagger_starts_each_tiles_k_loop_at_its_own_step():
    # compile_with checks the numerics both ways: the accumulation order differs,
    # the result matches numpy.
    staggered = compile_with(deep_matmul, DEEP_MATMUL_ARGS)
    stepped = compile_with(deep_matmul, DEEP_MATMUL_ARGS, cube_k_stagger=False)
    assert staggered.stats["passes"]["expand-tiles"]["staggered-k-tiles"] > 0
    assert stepped.stats["passes"]["expand-tiles"]["staggered-k-tiles"] == 0

    def first_a_reads(kernel):
        # The K offset of each output tile's first read of A (its first K step).
        reads = re.findall(r"copy_in %a \{offsets = \[(\d+), (\d+)\]", kernel.ir("tile"))
        firsts = {}
        for row, k in reads:
            firsts.setdefault(int(row), int(k))
        return [firsts[row] for row in sorted(firsts)]

    assert first_a_reads(stepped) == [0, 0, 0, 0]
    # Tiles 0..3 of 8 steps: frac(t * 0.618) * 8 -> steps 0, 4, 1, 6.
    assert first_a_reads(staggered) == [0, 128, 32, 192]


@effect_of("fuse_local")
def test_fuse_local_false_sends_every_intermediate_through_gm():
    fused = compile_with(row_softmax, SOFTMAX_ARGS)
    unfused = compile_with(row_softmax, SOFTMAX_ARGS, fuse_local=False)
    ef, eu = fused.stats["passes"]["expand-tiles"], unfused.stats["passes"]["expand-tiles"]
    assert ef["fused-tiles"] > 0 and eu["fused-tiles"] == 0
    assert eu["copy-in-bytes"] > ef["copy-in-bytes"]
    assert unfused.ir("tile").count("= copy_in ") > fused.ir("tile").count("= copy_in ")
    assert "gm_tensor : tensor<64x1xf32>" in unfused.ir("tile")  # the row max in GM
    assert "gm_tensor : tensor<64x1xf32>" not in fused.ir("tile")


@reference(lambda x, y: x * 2.0)
def times_one_plus_one(x, y):
    ptoc.set_vec_tile_shapes(1, 64)
    y[:] = x * (ptoc.full([1, 64], 1.0) + 1.0)


@effect_of("fold_constants")
def test_fold_constants_false_keeps_constant_arithmetic():
    folded = compile_with(times_one_plus_one, CHAIN_ARGS)
    kept = compile_with(times_one_plus_one, CHAIN_ARGS, fold_constants=False)
    assert folded.stats["passes"]["canonicalize"]["rewrites"] > 0
    assert kept.stats["passes"]["canonicalize"]["rewrites"] == 0
    assert "full {value = 2.0}" in folded.ir("tile") and "= add " not in folded.ir("tile")
    assert "full {value = 2.0}" not in kept.ir("tile") and "= add " in kept.ir("tile")
    assert "canonicalize{fold-constants=false}" in kept.pipeline


@reference(lambda x, y: -np.exp(x))
def scoped_exp(x, y):
    ptoc.set_vec_tile_shapes(1, 64)
    ptoc.set_pass_options(sg_set_scope=1)
    e = ptoc.exp(x)
    ptoc.set_pass_options(sg_set_scope=-1)
    ptoc.set_vec_tile_shapes(2, 64)
    y[:] = -e


@reference(lambda x, y: -np.exp(x))
def unscoped_exp(x, y):
    ptoc.set_vec_tile_shapes(1, 64)
    e = ptoc.exp(x)
    ptoc.set_vec_tile_shapes(2, 64)
    y[:] = -e


@effect_of("sg_set_scope")
def test_sg_set_scope_forces_the_scoped_ops_into_one_subgraph():
    scoped = compile_with(scoped_exp, CHAIN_ARGS)
    plain = compile_with(unscoped_exp, CHAIN_ARGS)
    assert re.search(r"= exp [^\n]*sg_scope = 1", scoped.ir("tensor"))
    assert not re.search(r"= neg [^\n]*sg_scope", scoped.ir("tensor"))  # -1 ended it
    part = scoped.ir("partitioned")
    # All 8 exp tiles in one subgraph, every op of it tagged with the scope ...
    assert len(sg_of_ops(part, "exp")) == 1
    assert len(re.findall(r"= exp [^\n]*sg_scope = 1", part)) == 8
    # ... and the ops after sg_set_scope=-1 are not scoped and not in it.
    assert not re.search(r"= neg [^\n]*sg_scope", part)
    assert sg_of_ops(part, "exp").isdisjoint(sg_of_ops(part, "neg"))
    # Without the scope the exps are spread over several subgraphs.
    assert len(sg_of_ops(plain.ir("partitioned"), "exp")) > 1
    assert refused(scoped, "partition", "scope") > 0
    assert subgraphs(scoped) == 1 + 4 and subgraphs(plain) == 8


def test_scopes_with_different_ids_stay_apart():
    @ptoc.jit(device=TINY)
    def two_scopes(x, y):
        ptoc.set_vec_tile_shapes(1, 64)
        ptoc.set_pass_options(sg_set_scope=1)
        e = ptoc.exp(x)
        ptoc.set_pass_options(sg_set_scope=2)
        ptoc.set_vec_tile_shapes(2, 64)
        y[:] = -e

    part = two_scopes.compile(*CHAIN_ARGS).ir("partitioned")
    exp_sg, neg_sg = sg_of_ops(part, "exp"), sg_of_ops(part, "neg")
    assert len(exp_sg) == 1 and len(neg_sg) == 1 and exp_sg != neg_sg
    assert len(re.findall(r"= neg [^\n]*sg_scope = 2", part)) == 4


def test_every_pass_option_has_an_effect_test():
    names = set(ptoc.pass_option_names())
    untested = names - set(KNOB_TESTS)
    assert not untested, f"pass options without an effect test here: {sorted(untested)}"
    stale = set(KNOB_TESTS) - names
    assert not stale, f"effect tests for pass options that no longer exist: {sorted(stale)}"


# --- set_runtime_options -----------------------------------------------------

def attention(q, k, y):
    """matmul -> row softmax: cube tasks ready vector tasks, so the scheduler's
    order (and L2 residency of the scores) matters."""
    ptoc.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])
    s = ptoc.matmul(q, k, out_dtype=ptoc.DT_FP32, b_trans=True)
    ptoc.set_vec_tile_shapes(8, s.shape[1])
    m = ptoc.amax(s, dim=-1, keepdim=True)
    e = ptoc.exp(s - m)
    y[:] = e / ptoc.sum(e, dim=-1, keepdim=True)


ATTENTION_ARGS = (RNG.random((512, 64), dtype=np.float32).astype(np.float16),
                  RNG.random((256, 64), dtype=np.float32).astype(np.float16),
                  np.empty((512, 256), np.float32))


def attention_ref(q, k):
    s = q.astype(np.float32) @ k.astype(np.float32).T
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def run_attention_in_mode(mode, out_dir=None):
    """Runs attention on a2 (3 AICPU scheduler threads) with device_sched_mode set
    inside the function; returns (report, output). With `out_dir` the run writes its
    swimlane there."""
    def body(q, k, y):
        ptoc.set_runtime_options(device_sched_mode=mode)
        if out_dir is not None:
            ptoc.set_debug_options(runtime_debug_mode=1, output_dir=str(out_dir))
        attention(q, k, y)
    body.__name__ = "attention"
    f = ptoc.jit(body, device="a2")
    q, k, y = ATTENTION_ARGS[0], ATTENTION_ARGS[1], np.empty((512, 256), np.float32)
    f(q, k, y)
    return f.last_run, y


def schedule_of(report):
    """Each task's (core, dispatching thread, start) from the run's swimlane."""
    with open(report.swimlane_path) as f:
        events = json.load(f)["traceEvents"]
    return sorted((e["name"], e["pid"], e["tid"], e["args"].get("thread"), e["ts"])
                  for e in events if e.get("ph") == "X" and "thread" in e.get("args", {}))


def test_device_sched_mode_changes_the_simulated_schedule(tmp_path):
    runs = {mode: run_attention_in_mode(mode, tmp_path / str(mode)) for mode in range(4)}
    ref = attention_ref(*ATTENTION_ARGS[:2])
    for mode, (report, y) in runs.items():
        assert f"sched mode {mode}," in report.summary
        np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-6)  # numerics never change
    # Every policy dispatches the tasks differently from the shared FIFO queue (which
    # thread takes which task, on which core, when); the makespan may or may not move.
    s = {mode: schedule_of(report) for mode, (report, _) in runs.items()}
    assert len(s[0]) == 128  # every task, with its thread
    assert s[1] != s[0]  # L2 affinity (LIFO, direct hand-off) reorders the tasks
    assert s[2] != s[0]  # fair: per-thread queues
    assert s[3] != s[0]  # both
    t = {mode: report.simulated_us for mode, (report, _) in runs.items()}
    # Deterministic: the same mode gives the same time.
    assert run_attention_in_mode(1)[0].simulated_us == t[1]


def test_runtime_option_set_inside_overrides_the_jit_option():
    def body(q, k, y):
        ptoc.set_runtime_options(device_sched_mode=1)
        attention(q, k, y)
    inside = ptoc.jit(body, device="a2", runtime_options={"device_sched_mode": 0})
    plain0 = ptoc.jit(attention, device="a2", runtime_options={"device_sched_mode": 0})
    q, k, y = ATTENTION_ARGS
    inside(q, k, y)
    plain0(q, k, y)
    assert inside.compile(q, k, y).options.runtime_options["device_sched_mode"] == 1
    assert "sched mode 1," in inside.last_run.summary
    assert inside.last_run.simulated_us == run_attention_in_mode(1)[0].simulated_us
    assert inside.last_run.simulated_us != plain0.last_run.simulated_us


def test_pass_option_set_inside_overrides_the_jit_option():
    def body(x, y):
        ptoc.set_pass_options(vec_nbuffer_mode=0)
        row_softmax(x, y)
    inside = ptoc.jit(body, device=TINY, pass_options={"vec_nbuffer_mode": 2,
                                                       "vec_nbuffer_setting": {0: 8}})
    jit_only = ptoc.jit(row_softmax, device=TINY, pass_options={"vec_nbuffer_mode": 2,
                                                                "vec_nbuffer_setting": {0: 8}})
    assert subgraphs(jit_only.compile(*SOFTMAX_ARGS)) == SOFTMAX_ROWS // 8
    k = inside.compile(*SOFTMAX_ARGS)
    assert subgraphs(k) == SOFTMAX_ROWS
    assert "vec-nbuffer-mode=0" in k.pipeline
    # The jit's other knob is still there: settings merge, they do not replace.
    assert "vec-nbuffer-setting={0:8}" in k.pipeline


def test_debug_option_set_inside_writes_the_swimlane(tmp_path):
    @ptoc.jit(device=TINY)
    def traced(x, y):
        ptoc.set_debug_options(runtime_debug_mode=1, output_dir=str(tmp_path))
        chain(x, y)

    @ptoc.jit(device=TINY, debug_options={"output_dir": str(tmp_path)})
    def untraced(x, y):
        chain(x, y)

    x, y = CHAIN_ARGS
    untraced(x, y.copy())
    assert untraced.last_run.swimlane_path == ""
    traced(x, y.copy())
    path = traced.last_run.swimlane_path
    assert path.startswith(str(tmp_path)) and path.endswith("merged_swimlane.json")
