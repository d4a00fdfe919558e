"""User errors: for each kind, the exception class (a ptoc.Error and the built-in
ValueError / TypeError it documents) and the message: where (this file and the line
of the offending op, found by the `# <tag>` marker at the end of that line) and a
hint of the fix. None of them may take the process down."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ptoc
from conftest import F32, I32, TINY, TINY_CUBE, assert_close

THIS_FILE = os.path.abspath(__file__)
BASENAME = os.path.basename(THIS_FILE)


def line_of(tag):
    """The line of this file that ends with the marker ``# <tag>``."""
    with open(THIS_FILE) as f:
        lines = [n for n, text in enumerate(f, 1) if text.rstrip().endswith(f"# <{tag}>")]
    assert len(lines) == 1, f"marker <{tag}> must appear exactly once, found {lines}"
    return lines[0]


def assert_located(error, tag):
    """The message names this file and the marked line (file:line: ...)."""
    msg = str(error)
    assert f"{BASENAME}:{line_of(tag)}:" in msg, msg
    assert "error" in msg


def raises(kind, builtin, fn, *args, **kwargs):
    """Calls fn, expecting a `kind` that is also a `builtin`; returns the exception."""
    with pytest.raises(kind) as e:
        fn(*args, **kwargs)
    assert isinstance(e.value, ptoc.Error), type(e.value).__mro__
    if builtin is not None:
        assert isinstance(e.value, builtin), type(e.value).__mro__
    return e.value


def jit(fn):
    return ptoc.jit(fn, device=TINY)


A = np.ones((64, 64), F32)
B = np.ones((48, 64), F32)


# --- shapes ---------------------------------------------------------------------------

def test_shapes_not_broadcastable():
    @jit
    def f(x, y):
        ptoc.set_vec_tile_shapes(32, 64)
        return x + y  # <bad-broadcast>

    e = raises(ptoc.ShapeError, ValueError, f, A, B)
    assert_located(e, "bad-broadcast")
    msg = str(e)
    assert "[64, 64]" in msg and "[48, 64]" in msg and "broadcast" in msg
    assert "trailing dimensions must be equal or 1" in msg  # the rule to fix it by


def test_matmul_inner_dims_mismatch():
    @jit
    def f(x, y):
        ptoc.set_cube_tile_shapes(*TINY_CUBE)
        return ptoc.matmul(x, y)  # <bad-matmul>

    e = raises(ptoc.ShapeError, ValueError, f, A, B)
    assert_located(e, "bad-matmul")
    msg = str(e)
    assert "matmul" in msg and "K=64" in msg and "K=48" in msg
    assert "transpose" in msg  # hint: fix the shapes or transpose an operand


def test_matmul_dtype_mismatch():
    @jit
    def f(x, y):
        ptoc.set_cube_tile_shapes(*TINY_CUBE)
        return x @ y  # <matmul-dtypes>

    e = raises(ptoc.DTypeError, TypeError, f, A, A.astype(np.float16))
    assert_located(e, "matmul-dtypes")
    assert "ptoc.cast" in str(e)


def test_wrong_array_shape_at_call_time_names_the_parameter():
    @jit
    def f(x, bias: ptoc.Tensor([1, 64], ptoc.DT_FP32)):
        ptoc.set_vec_tile_shapes(32, 64)
        return x + bias

    e = raises(ptoc.ShapeError, ValueError, f, A, np.ones((64, 1), F32))
    msg = str(e)
    assert "'bias'" in msg and "[1, 64]" in msg and "[64, 1]" in msg
    assert_close(f(A, np.ones((1, 64), F32)), A + 1)  # the function still works


@pytest.mark.parametrize("what,body_tag", [
    ("step", "slice-step"), ("range", "index-range"), ("empty", "empty-slice"),
    ("dim", "reduce-dim"), ("reshape", "bad-reshape"),
])
def test_bad_slices_dims_and_reshapes(what, body_tag):
    @jit
    def f(x):
        ptoc.set_vec_tile_shapes(32, 64)
        if what == "step":
            return x[::2, :] * 2.0  # <slice-step>
        if what == "range":
            return x[64, :] * 2.0  # <index-range>
        if what == "empty":
            return x[10:5, :] * 2.0  # <empty-slice>
        if what == "dim":
            return ptoc.sum(x, dim=2)  # <reduce-dim>
        return ptoc.reshape(x, (3, -1))  # <bad-reshape>

    e = raises(ptoc.ShapeError, ValueError, f, A)
    assert_located(e, body_tag)
    hint = {"step": "step 1", "range": "out of range", "empty": "empty",
            "dim": "valid: -2..1", "reshape": "cannot reshape"}[what]
    assert hint in str(e)


# --- dtypes ---------------------------------------------------------------------------

def test_float_op_on_int_tensor_is_a_dtype_error():
    @jit
    def f(x):
        ptoc.set_vec_tile_shapes(32, 64)
        return ptoc.exp(x)  # <exp-int>

    e = raises(ptoc.DTypeError, TypeError, f, np.ones((64, 64), I32))
    assert_located(e, "exp-int")


def test_float_op_on_int_tensor_message():
    @jit
    def f(x):
        ptoc.set_vec_tile_shapes(32, 64)
        return ptoc.log(x)  # <log-int>

    e = raises(ptoc.DTypeError, TypeError, f, np.ones((64, 64), I32))
    assert_located(e, "log-int")
    assert "floating-point" in str(e) and "cast" in str(e)


# --- vector tiles ---------------------------------------------------------------------

def test_vec_tile_of_a_copy_not_32_byte_aligned():
    @jit
    def f(x, y):
        ptoc.set_vec_tile_shapes(32, 60)
        return ptoc.concat([x, y], dim=1)  # <vec-misaligned>

    e = raises(ptoc.TileShapeError, ValueError, f, A, A)
    assert_located(e, "vec-misaligned")
    msg = str(e)
    assert "60" in msg and "32 bytes" in msg and "use 56 or 64" in msg
    assert "a copy through UB moves whole blocks" in msg


def test_vec_tile_short_rows_of_a_compute_op_are_padded():
    x = np.arange(64 * 64, dtype=F32).reshape(64, 64) / 100

    @jit
    def f(x, y):
        ptoc.set_vec_tile_shapes(32, 60)  # 240-byte rows: padded to 256 in UB
        return x * y

    np.testing.assert_allclose(f(x, x), x * x, rtol=1e-6)


def test_vec_tile_too_big_for_ub():
    x = np.ones((64, 512), F32)

    @jit
    def f(x, y):
        # Not the whole result (that would be split to fit): the user's own tiling.
        ptoc.set_vec_tile_shapes(32, 512)
        return x - y  # <vec-too-big>

    e = raises(ptoc.TileShapeError, ValueError, f, x, x)
    assert_located(e, "vec-too-big")
    msg = str(e)
    assert "UB" in msg and "32768" in msg  # tiny's UB
    assert "try " in msg  # a tile that fits


def test_vec_tile_of_the_wrong_rank():
    @jit
    def f(x, y):
        ptoc.set_vec_tile_shapes(64)
        return x * y  # <vec-rank>

    e = raises(ptoc.TileShapeError, ValueError, f, A, A)
    assert_located(e, "vec-rank")
    assert "one size per dimension" in str(e)


def test_no_derived_vec_tile_fits():
    # Without a vec_tile the compiler derives one (test_default_tiles.py); topk holds
    # its dim whole, and a 16384-long f32 row does not fit tiny's 32 KiB of UB.
    @jit
    def f(x):
        return ptoc.topk(x, 8, dim=-1).values  # <no-vec-tile>

    e = raises(ptoc.TileShapeError, ValueError, f, np.ones((4, 16384), F32))
    assert_located(e, "no-vec-tile")
    assert "'topk' op has no vec_tile, and no tile of its chain's 4x16384 iteration fits" in str(e)
    assert "make that dimension smaller" in str(e)


@pytest.mark.parametrize("dims", [(0, 64), (32, -64), (32.0, 64)])
def test_vec_tile_sizes_must_be_positive_ints(dims):
    @jit
    def f(x):
        ptoc.set_vec_tile_shapes(*dims)  # <vec-nonpositive>
        return ptoc.exp(x)

    e = raises(ptoc.TileShapeError, ValueError, f, A)
    assert_located(e, "vec-nonpositive")
    assert "positive ints" in str(e)


# --- cube tiles -----------------------------------------------------------------------

@pytest.mark.parametrize("cube,hint", [
    (([24, 32], [32, 32], [32, 32]), "mL0 = 24 is not a multiple of 16"),
    (([32, 48], [32, 32], [32, 32]), "does not divide mL1 = 48"),
    (([128, 128], [128, 128], [128, 128]), "L0A"),
], ids=["misaligned", "l0-does-not-divide-l1", "too-big"])
def test_bad_cube_tile(cube, hint):
    @jit
    def f(x, y):
        ptoc.set_cube_tile_shapes(*cube)
        return x @ y  # <bad-cube>

    e = raises(ptoc.TileShapeError, ValueError, f, A, A)
    assert_located(e, "bad-cube")
    assert hint in str(e)
    assert "use " in str(e) or "halve" in str(e) or "reduce" in str(e)  # the fix


def test_cube_tile_needs_two_levels():
    @jit
    def f(x, y):
        ptoc.set_cube_tile_shapes([16, 32, 64], [32, 32], [32, 32])  # <cube-levels>
        return x @ y

    e = raises(ptoc.TileShapeError, ValueError, f, A, A)
    assert_located(e, "cube-levels")
    assert "[L0, L1]" in str(e)


def test_no_derived_cube_tile_fits(tmp_path):
    # Without a cube_tile the compiler derives one (test_default_tiles.py); an L0C of
    # 512 bytes holds no 16x16 fp32 accumulator.
    device = tmp_path / "small-l0c.json"
    device.write_text('{"name": "small-l0c", "base": "tiny", "buffers": {"l0c": 512}}')

    @ptoc.jit(device=str(device))
    def f(x, y):
        return ptoc.matmul(x, y)  # <no-cube-tile>

    e = raises(ptoc.TileShapeError, ValueError, f, A, A)
    assert_located(e, "no-cube-tile")
    assert "'matmul' op has no cube_tile and no cube tile of its f32 operands fits" in str(e)
    assert "use a device with bigger cube buffers" in str(e)


# --- options --------------------------------------------------------------------------

def test_unknown_pass_option_in_set_pass_options():
    @jit
    def f(x):
        ptoc.set_pass_options(pg_lower_bond=3)
        ptoc.set_vec_tile_shapes(32, 64)
        return ptoc.exp(x)

    e = raises(ptoc.OptionError, ValueError, f, A)
    msg = str(e)
    assert "'pg_lower_bond'" in msg
    names = ptoc.pass_option_names()
    assert "pg_lower_bound" in names and "vec_nbuffer_mode" in names
    for name in names:  # lists every valid name
        assert name in msg, name


@pytest.mark.parametrize("where", ["jit", "options"])
def test_unknown_pass_option_elsewhere(where):
    with pytest.raises(ptoc.OptionError) as e:
        if where == "jit":
            ptoc.jit(lambda x: x, pass_options={"no_such_knob": 1})
        else:
            ptoc.options(pass_options={"no_such_knob": 1})
    assert isinstance(e.value, ValueError)
    assert "'no_such_knob'" in str(e.value) and "pg_upper_bound" in str(e.value)


def test_pass_option_of_the_wrong_type():
    with pytest.raises(ptoc.OptionError) as e:
        ptoc.jit(lambda x: x, pass_options={"vec_nbuffer_setting": {0: "four"}})
    assert "vec_nbuffer_setting" in str(e.value) and '{0: 4, "func1_0": 2, -1: 2}' in str(e.value)
    assert "got 0: 'four'" in str(e.value)


@pytest.mark.parametrize("kind,opts,name,valid", [
    ("runtime_options", {"device_sched_mode": 7}, "device_sched_mode", "[0, 3]"),
    ("runtime_options", {"device_sched_mode": -1}, "device_sched_mode", "[0, 3]"),
    ("runtime_options", {"host_threads": -2}, "host_threads", "[0, 4096]"),
    ("debug_options", {"runtime_debug_mode": 5}, "runtime_debug_mode", "[0, 2]"),
    ("debug_options", {"compile_debug_mode": 2}, "compile_debug_mode", "[0, 1]"),
    ("host_options", {"compile_stage": "llvm"}, "compile_stage", "tensor, tile, partitioned"),
])
def test_out_of_range_option(kind, opts, name, valid):
    for make in (lambda: ptoc.jit(lambda x: x, **{kind: opts}),
                 lambda: ptoc.options(**{kind: opts})):
        with pytest.raises(ptoc.OptionError) as e:
            make()
        assert isinstance(e.value, ValueError)
        assert f"'{name}'" in str(e.value) and valid in str(e.value)


def test_out_of_range_option_inside_the_function():
    @jit
    def f(x):
        ptoc.set_runtime_options(device_sched_mode=7)
        ptoc.set_vec_tile_shapes(32, 64)
        return ptoc.exp(x)

    @jit
    def g(x):
        ptoc.set_debug_options(runtime_debug_mode=5)
        ptoc.set_vec_tile_shapes(32, 64)
        return ptoc.exp(x)

    for fn, name in ((f, "device_sched_mode"), (g, "runtime_debug_mode")):
        e = raises(ptoc.OptionError, ValueError, fn, A)
        assert f"'{name}'" in str(e)
        assert fn.cache_info().currsize == 0


@pytest.mark.parametrize("kind,valid", [
    ("runtime_options", "device_sched_mode, device_sched_parallelism, host_threads, run_numerics"),
    ("debug_options", "compile_debug_mode, output_dir, runtime_debug_mode"),
    ("host_options", "compile_stage, double_buffer, max_tile_ops, tune_bank_path, use_tune_bank, verify_each"),
])
def test_unknown_option_key(kind, valid):
    with pytest.raises(ptoc.OptionError) as e:
        ptoc.jit(lambda x: x, **{kind: {"devce_sched_mode": 1}})
    assert "'devce_sched_mode'" in str(e.value) and valid in str(e.value)


def test_unknown_runtime_option_in_set_runtime_options():
    @jit
    def f(x):
        ptoc.set_runtime_options(sched_mode=1)
        ptoc.set_vec_tile_shapes(32, 64)
        return ptoc.exp(x)

    e = raises(ptoc.OptionError, ValueError, f, A)
    assert "'sched_mode'" in str(e) and "device_sched_mode" in str(e)


def test_bad_device_name():
    with pytest.raises(ptoc.OptionError) as e:
        ptoc.jit(lambda x: x, device="a9")
    assert isinstance(e.value, ValueError)
    msg = str(e.value)
    assert "'a9'" in msg
    for preset in ("a2", "a3", "b3", "tiny"):
        assert preset in msg
    with pytest.raises(ptoc.OptionError):
        ptoc.jit(device="/no/such/device.json")(lambda x: x)


# --- the function as a whole ----------------------------------------------------------

def test_parameter_never_read_or_written_is_allowed():
    """An unused tensor parameter once was an error; a function may ignore an input
    (PyPTO programs pass inputs some configurations do not use)."""
    @jit
    def f(x, unused):
        ptoc.set_vec_tile_shapes(32, 64)
        return ptoc.exp(x)

    np.testing.assert_allclose(f(A, A), np.exp(A), rtol=1e-6)


def test_function_producing_nothing():
    @jit
    def f(x):
        ptoc.set_vec_tile_shapes(32, 64)
        ptoc.exp(x)  # computed, never returned or written

    e = raises(ptoc.Error, None, f, A)
    assert "produces nothing" in str(e) and "return" in str(e) and "y[:] = " in str(e)
    assert BASENAME in str(e)


def test_function_returning_a_non_tensor():
    @jit
    def f(x):
        ptoc.set_vec_tile_shapes(32, 64)
        return 3.0

    e = raises(ptoc.Error, None, f, A)
    assert "returned float" in str(e)


def test_branching_on_a_traced_tensor():
    @jit
    def f(x):
        ptoc.set_vec_tile_shapes(32, 64)
        if ptoc.sum(x):  # <truth-value>
            return x * 2.0
        return x

    e = raises(ptoc.Error, None, f, A)
    assert_located(e, "truth-value")
    assert "maximum" in str(e)  # what to use instead


def test_branching_on_a_comparison():
    # A comparison is a bool tensor (for ptoc.where); branching on it is the error.
    @jit
    def f(x):
        ptoc.set_vec_tile_shapes(32, 64)
        return x * 2.0 if x > 0 else x  # <compare>

    e = raises(ptoc.Error, None, f, A)
    assert_located(e, "compare")
    assert "ptoc.where" in str(e)


def test_wrong_number_of_arguments():
    @jit
    def f(x, y):
        ptoc.set_vec_tile_shapes(32, 64)
        return x + y

    with pytest.raises(TypeError) as e:
        f(A)
    assert "f()" in str(e.value) and "'y'" in str(e.value)


@pytest.mark.parametrize("call", ["set_vec_tile_shapes", "set_cube_tile_shapes",
                                  "set_pass_options", "full"])
def test_settings_and_ops_outside_a_jit_function(call):
    with pytest.raises(ptoc.Error) as e:
        if call == "set_vec_tile_shapes":
            ptoc.set_vec_tile_shapes(32, 64)  # <outside-vec>
        elif call == "set_cube_tile_shapes":
            ptoc.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])  # <outside-cube>
        elif call == "set_pass_options":
            ptoc.set_pass_options(pg_lower_bound=10)  # <outside-pass>
        else:
            ptoc.full([4, 4], 1.0)  # <outside-full>
    tag = {"set_vec_tile_shapes": "outside-vec", "set_cube_tile_shapes": "outside-cube",
           "set_pass_options": "outside-pass", "full": "outside-full"}[call]
    assert_located(e.value, tag)
    msg = str(e.value)
    assert f"ptoc.{call}" in msg and "@ptoc.jit" in msg
    assert "ptoc.options" in msg  # what to use outside a trace


def test_traced_tensor_used_after_its_trace():
    leaked = []

    @jit
    def f(x):
        ptoc.set_vec_tile_shapes(32, 64)
        leaked.append(x)
        return x * 2.0

    @jit
    def g(x):
        ptoc.set_vec_tile_shapes(32, 64)
        return x + leaked[0]  # <foreign-tensor>

    f(A)
    e = raises(ptoc.Error, None, g, A)
    assert_located(e, "foreign-tensor")
    assert "different traced functions" in str(e)


# --- the process survives -------------------------------------------------------------

def test_errors_leave_the_function_usable():
    """A failing call (bad shape at trace time) does not break the next one."""
    @jit
    def f(x, y):
        ptoc.set_vec_tile_shapes(32, 64)
        return x + y

    raises(ptoc.ShapeError, ValueError, f, A, B)
    assert_close(f(A, A), A + A)
    raises(ptoc.ShapeError, ValueError, f, A, B)
    assert f.cache_info().currsize == 1


def test_errors_never_crash_the_process(tmp_path):
    """Every error path of the C++ layer in one fresh interpreter, which then still
    runs a kernel and exits normally."""
    script = textwrap.dedent("""
        import numpy as np, ptoc
        A = np.ones((64, 64), np.float32)
        def attempt(fn, *args):
            try:
                fn(*args)
            except ptoc.Error as e:
                print(type(e).__name__)

        def jit(body):
            return ptoc.jit(body, device="tiny")

        @jit
        def bad_broadcast(x, y):
            ptoc.set_vec_tile_shapes(32, 64)
            return x + y
        @jit
        def bad_matmul(x, y):
            ptoc.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])
            return x @ y
        @jit
        def bad_cube(x, y):
            ptoc.set_cube_tile_shapes([128, 128], [128, 128], [128, 128])
            return x @ y
        @jit
        def no_tile_fits(x):
            return ptoc.topk(x, 8, dim=-1).values
        @jit
        def too_big(x):
            ptoc.set_vec_tile_shapes(64, 64)
            return ptoc.exp(x) + x
        @jit
        def int_exp(x):
            ptoc.set_vec_tile_shapes(32, 64)
            return ptoc.exp(x)
        @jit
        def good(x):
            ptoc.set_vec_tile_shapes(32, 64)
            return x * 3.0
        attempt(bad_broadcast, A, A[:48])
        attempt(bad_matmul, A, A[:48])
        attempt(bad_cube, A, A)
        attempt(no_tile_fits, np.ones((4, 16384), np.float32))
        attempt(too_big, np.ones((128, 64), np.float32))  # 64x64 is not the whole shape
        attempt(int_exp, A.astype(np.int32))
        attempt(lambda: ptoc.jit(good, device="a9"))
        attempt(lambda: ptoc.jit(good, runtime_options={"device_sched_mode": 7}))
        print("result", float(good(A)[0, 0]))
    """)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, cwd=str(tmp_path), timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split()
    assert lines[-2:] == ["result", "3.0"], proc.stdout
    assert lines.count("TileShapeError") == 3 and lines.count("OptionError") == 2, proc.stdout
    assert proc.stderr == ""


# --- categories -------------------------------------------------------------------------

@pytest.mark.parametrize("category, cls", [
    ("shape", ptoc.ShapeError), ("tile", ptoc.TileShapeError), ("dtype", ptoc.DTypeError),
    ("option", ptoc.OptionError), ("io", ptoc.FileError), ("resource", ptoc.ResourceError),
    ("internal", ptoc.InternalError),
])
def test_the_core_files_each_error_under_a_category_mapped_to_one_class(category, cls):
    # The class comes from the category the C++ core gave, never from the words in the
    # message: a shape error that mentions vec_tile is still a shape error.
    e = ptoc.errors.from_status("compile", "invalid_argument",
                                "x.py:1: error: the vec_tile and dtype of this op", category)
    assert type(e) is cls and isinstance(e, ptoc.Error)


def test_host_memory_errors_are_memory_errors():
    # A compile or run the host's memory cannot hold (docs/reliability.md, "Host
    # memory"): `except MemoryError` catches it too.
    e = ptoc.errors.from_status("compile", "resource_exhausted",
                                "past the 1000 tile ops the host's memory holds", "resource")
    assert type(e) is ptoc.ResourceError
    assert isinstance(e, MemoryError) and isinstance(e, ptoc.Error)


def test_uncategorised_errors_take_the_class_of_what_was_done():
    from_status = ptoc.errors.from_status
    assert type(from_status("compile", "invalid_argument", "vec_tile", "general")) is \
        ptoc.CompileError
    assert type(from_status("run", "invalid_argument", "m")) is ptoc.RunError
    assert type(from_status("input", "invalid_argument", "m")) is ptoc.ShapeError
    assert type(from_status("option", "invalid_argument", "m")) is ptoc.OptionError
    assert type(from_status("compile", "internal", "m", "shape")) is ptoc.InternalError



def test_a_run_folder_that_cannot_be_created_is_a_file_error(tmp_path):
    # /proc refuses new folders, and a regular file cannot hold one: both are the
    # disk's answer, not a bug in ptoc and not a bad option value.
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    for base in ("/proc/nope", str(blocker / "runs")):
        @ptoc.jit(device=TINY, debug_options={"runtime_debug_mode": 1, "output_dir": base})
        def double(x):
            ptoc.set_vec_tile_shapes(32, 64)
            return x * 2.0
        e = raises(ptoc.FileError, OSError, double, A)
        assert f"cannot create output folder '{base}'" in str(e), str(e)
        assert "PTOC_OUTPUT_DIR" in str(e)
