"""``@ptoc.jit``: trace a Python function into a tensor-level graph, compile it for
the device, and run it (numerics on the host, timing on the simulated device).

A call with a new signature (argument shapes and dtypes, constant arguments,
options, device; constants compared by value) traces and compiles once; later calls
with the same signature reuse the compiled kernel (``cache_info()`` counts hits and
misses). An axis annotated ``ptoc.DYNAMIC`` is not part of the signature: one kernel
serves every size of it (its loops are instantiated per call's sizes). Array
arguments and results: arrays.py.
"""

import collections
import functools
import inspect
import os
import threading
import warnings

import numpy as np

from . import _ptoc
from .arrays import TORCH, for_user, host_array, not_computed, to_torch
from .constants import Unkeyable, freeze
from .dtypes import as_dtype
from .errors import ArgumentError, Error, OptionError
from .loops import DYNAMIC_DIM, SymInt, with_symbolic_builtins
from .options import STAGES, OptionSet, ambient, defaults
from .tensor import Tensor
from .tracing import Trace, tracing

CacheInfo = collections.namedtuple("CacheInfo", "hits misses currsize")


_sessions = {}
_sessions_lock = threading.Lock()


def session_for(device):
    """The (immutable, shareable) session of a device preset name or JSON path."""
    if isinstance(device, os.PathLike):
        device = os.fspath(device)
    if not isinstance(device, str):
        raise OptionError(f"device must be a preset name ({', '.join(_ptoc.device_presets())}) "
                          f"or the path of a device JSON file, got {device!r}")
    with _sessions_lock:
        s = _sessions.get(device)
    if s is None:
        s = _ptoc.Session(device)
        with _sessions_lock:
            s = _sessions.setdefault(device, s)
    return s


def _freeze(v):
    if isinstance(v, dict):
        return tuple(sorted((k, _freeze(x)) for k, x in v.items()))
    if isinstance(v, (list, tuple)):
        return tuple(_freeze(x) for x in v)
    return v


class CompiledKernel:
    """A compiled signature of a jit function: its IR at every stage it reached
    (``ir(stage)``), compile statistics (``stats``), and how to run it."""

    def __init__(self, kernel, plan, options):
        self._kernel = kernel
        self._plan = plan
        self.options = options  # the OptionSet it was compiled with (settings inside included)

    @property
    def stage(self):
        return self._kernel.stage

    @property
    def pipeline(self):
        """The pass pipeline that ran (the default one with the pass options)."""
        return self._kernel.pipeline

    @property
    def compile_seconds(self):
        return self._kernel.compile_seconds

    @property
    def bank_config(self):
        """The knowledge bank's config (a dict) this kernel was compiled with, or None
        when it was compiled as written (no record, or use_tune_bank=False)."""
        import json
        return json.loads(self._plan.bank_config) if self._plan.bank_config else None

    @property
    def ir_dump_dir(self):
        """Where compile_debug_mode=1 wrote the IR after every pass ("" if off)."""
        return self._plan.ir_dump_dir

    def ir(self, stage=None):
        """The text of a stage: "tensor" (as traced), "tile" (after expand-tiles),
        "partitioned" (after the merge passes) or "codegen" (leaf programs and the
        execute graph), as ptoc-opt prints them. Default: the last stage reached."""
        if stage is not None and not isinstance(stage, str):
            raise OptionError(f"ir(): stage must be one of {', '.join(STAGES)}, got {stage!r}")
        return self._kernel.ir(stage or self._kernel.stage)

    @property
    def stats(self):
        """Subgraph counts per core kind, the hash-order groups with their sizes, the
        merge decisions of each merge pass, all pass statistics, and per ptoc.loop the
        number of paths its body was compiled for (``loop_paths``: 1, or one per answer
        of its is_loop_begin / is_loop_end tests) (a dict)."""
        stats = dict(self._kernel.stats)
        stats["loop_paths"] = dict(self._plan.loop_paths)
        return stats

    @property
    def remarks(self):
        """What the compiler remarks on, one "file:line:col: remark: ..." per entry
        (e.g. a whole-shape vec_tile split to fit UB)."""
        return list(self._kernel.remarks)

    @property
    def derived_tiles(self):
        """The tile shapes the compiler derived for ops the kernel gave none
        (docs/passes.md "default-tiles"): one dict per tile with its kind
        ("vec_tile" / "cube_tile"), the tile as the IR writes it, how many ops took it,
        the first of them, the function, the tile count and the rule that chose it."""
        return list(self._kernel.derived_tiles)

    @property
    def args(self):
        return self._kernel.args

    @property
    def results(self):
        return self._kernel.results

    def __repr__(self):
        return (f"<ptoc.CompiledKernel {self._kernel.func_name} stage={self.stage} "
                f"tasks={self.stats['tasks']}>")


class _Plan:
    """How a traced signature maps the call's arrays to the kernel."""

    def __init__(self):
        self.tensor_params = []   # names of the kernel's arguments, in order
        self.outputs = []         # names of parameters written (results first)
        self.num_returned = 0
        self.return_kind = None   # None, "one", "tuple"
        self.ir_dump_dir = ""
        # Runtime and debug options set inside the traced function: they override the
        # call's (ambient and jit) options on every run of this kernel.
        self.runtime_options = {}
        self.debug_options = {}
        # The knowledge bank's config this kernel was compiled with (JSON), or None.
        self.bank_config = None
        # The traced tensor-level function with loc(...) on every op (ptoc.tune's input).
        self.tensor_text = ""
        # Per ptoc.loop name: the bodies traced for its is_loop_begin / is_loop_end paths.
        self.loop_paths = {}


class JitFunction:
    """A ``@ptoc.jit`` function. Call it with arrays: numpy, torch CPU tensors, or
    anything with ``__dlpack__``, ``__array_interface__`` or the buffer protocol."""

    def __init__(self, fn, device, options, tile_overrides=None):
        self.fn = fn
        self.device = device
        self.options = options
        # {"vec_tile": ..., "cube_tile": ...}: replaces the shapes the function's
        # set_*_tile_shapes calls give (used by @ptoc.autotune configs).
        self.tile_overrides = dict(tile_overrides or {})
        self.signature = inspect.signature(fn)
        self._annotations = {}
        for name, p in self.signature.parameters.items():
            if isinstance(p.annotation, Tensor):
                self._annotations[name] = p.annotation
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise Error(f"@ptoc.jit function {fn.__qualname__}: *args / **kwargs parameters "
                            "are not supported; name every tensor parameter")
        self._cache = {}
        # Signature key -> (tensor-level text, pass options, sched mode,
        # device_sched_parallelism) found by ptoc.tune: compiled instead of the trace's
        # own module for that signature, run with those runtime options.
        self._tuned = {}
        self._lock = threading.Lock()
        self._hits = 0
        self._misses = 0
        self._local = threading.local()
        self._last_run = None
        functools.update_wrapper(self, fn)

    # --- cache ---
    def cache_info(self):
        """Hits, misses and the number of compiled signatures."""
        with self._lock:
            return CacheInfo(self._hits, self._misses, len(self._cache))

    def cache_clear(self):
        with self._lock:
            self._cache.clear()
            self._hits = self._misses = 0

    @property
    def last_run(self):
        """The report of this thread's last run (or, if it has none, the latest of any
        thread): ``.simulated_us .bound_us .bound_ratio .utilization .summary
        .swimlane_path .output_folder .sched_parallelism`` (the last: the
        device_sched_parallelism the run used, the automatic value resolved)."""
        return getattr(self._local, "last_run", None) or self._last_run

    def with_config(self, pass_options=None, runtime_options=None, debug_options=None,
                    host_options=None, vec_tile=None, cube_tile=None):
        """A new jit function of the same Python function with these options on top of
        this one's, and the tile shapes of its set_*_tile_shapes calls replaced:
        ``vec_tile`` / ``cube_tile`` is one shape for every call, or a dict keyed by the
        call's position (0, 1, ...) or its ``label=``. Has its own compile cache."""
        overrides = dict(self.tile_overrides)
        if vec_tile is not None:
            overrides["vec_tile"] = vec_tile
        if cube_tile is not None:
            overrides["cube_tile"] = cube_tile
        extra = OptionSet(pass_options, runtime_options, debug_options, host_options)
        return JitFunction(self.fn, self.device, extra.merged_over(self.options), overrides)

    def _at_def(self, message):
        """``file:line: error: message`` at the function's ``def``."""
        code = getattr(inspect.unwrap(self.fn), "__code__", None)
        if code is None:
            return message
        return f"{code.co_filename}:{code.co_firstlineno}: error: {message}"

    # --- calling ---
    def _bind(self, args, kwargs):
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise ArgumentError(f"{self.fn.__qualname__}(): {e}") from None
        bound.apply_defaults()
        return bound.arguments

    def _host_arrays(self, arguments):
        """{name: HostArray} of the call's array arguments (the tensor parameters);
        every other argument is a compile-time constant."""
        qual = self.fn.__qualname__
        hosts = {}
        for name, value in arguments.items():
            h = host_array(qual, name, value, self._annotations.get(name))
            if h is not None:
                hosts[name] = h
        return hosts

    def _resolve_options(self):
        return self.options.merged_over(ambient())

    def _signature_key(self, arguments, options, hosts=None):
        if hosts is None:
            hosts = self._host_arrays(arguments)
        parts = []
        named = {}  # ptoc.dynamic(name) -> (size, parameter, axis) first seen
        for name, value in arguments.items():
            h = hosts.get(name)
            if h is not None:
                shape = list(h.shape)
                annotation = self._annotations.get(name)
                for d, axis in (annotation._dynamic_axes() if annotation is not None else []):
                    if axis.name is not None:
                        seen = named.setdefault(axis.name, (shape[d], name, d))
                        if seen[0] != shape[d]:
                            raise ArgumentError(
                                f"{self.fn.__qualname__}(): axis {d} of '{name}' has size "
                                f"{shape[d]}, but axis {seen[2]} of '{seen[1]}' has size "
                                f"{seen[0]}; both are ptoc.dynamic({axis.name!r}), one size "
                                "per call")
                    shape[d] = axis  # any size: the same kernel
                parts.append((name, h.dtype.ir_name, tuple(shape)))
                continue
            try:
                parts.append((name, "const", freeze(value)))
            except Unkeyable as e:
                raise ArgumentError(
                    f"{self.fn.__qualname__}(): parameter '{name}' is neither an array (numpy, "
                    f"torch, DLPack or buffer) nor a constant ptoc can key its cache by: "
                    f"{e.path.replace('value', name, 1)} {e.reason}; pass a hashable value, or "
                    "lists, tuples, dicts, sets or dataclasses of them") from None
        compile_options = (_freeze(options.pass_options), _freeze(options.host_options),
                           options.debug_options.get("compile_debug_mode", 0),
                           options.debug_options.get("output_dir", "") if
                           options.debug_options.get("compile_debug_mode", 0) else "")
        return (tuple(parts), compile_options, self.device)

    def _trace_and_compile(self, arguments, options, key=None, hosts=None):
        session = session_for(self.device)
        plan = _Plan()
        specs = []
        if hosts is None:
            hosts = self._host_arrays(arguments)
        for name, h in hosts.items():
            plan.tensor_params.append(name)
            shape = list(h.shape)
            annotation = self._annotations.get(name)
            for d, _ in (annotation._dynamic_axes() if annotation is not None else []):
                shape[d] = DYNAMIC_DIM
            specs.append((shape, h.dtype.ir_name, name))
        builder = _ptoc.Builder(session, self.fn.__name__, specs)
        trace = Trace(builder, self.fn.__name__)
        trace.scope = -1
        trace.tile_overrides = self.tile_overrides
        # sg_set_scope given as an option scopes the whole function (until changed).
        options = options.merged_over(OptionSet())
        scope = options.pass_options.pop("sg_set_scope", None)
        if scope is not None:
            trace.scope = scope
            builder.set_scope(scope)
        call_args = dict(arguments)
        params = {}
        symbols = {}  # ptoc.dynamic(name) -> its SymInt (the first axis annotated so)
        for i, name in enumerate(plan.tensor_params):
            t = Tensor._bound(trace, i, name)
            annotation = self._annotations.get(name)
            if annotation is not None and annotation._dynamic_axes():
                # A dynamic axis's size is a symbolic scalar: dim(name, axis).
                shape = list(t._shape)
                for d, axis in annotation._dynamic_axes():
                    sym = SymInt.index(f"dim({name}, {d})")
                    shape[d] = symbols.setdefault(axis.name, sym) if axis.name else sym
                t._shape = tuple(shape)
            params[name] = t
            call_args[name] = t
        with tracing(trace):
            returned = with_symbolic_builtins(self.fn)(**call_args)

        results = []
        written = [name for name in plan.tensor_params if params[name]._written]
        for name in written:
            results.append(params[name]._id)
        plan.outputs = written
        if returned is None:
            plan.return_kind = None
        elif isinstance(returned, Tensor):
            plan.return_kind = "one"
            returned = [returned]
        elif isinstance(returned, (tuple, list)) and all(isinstance(r, Tensor) for r in returned):
            plan.return_kind = "tuple"
        else:
            raise Error(self._at_def(f"{self.fn.__qualname__}: a @ptoc.jit function returns a ptoc.Tensor, a "
                        f"tuple of them, or nothing; it returned {type(returned).__name__}"))
        for r in returned or ():
            if r._trace is not trace:
                raise Error(f"{self.fn.__qualname__}: it returned a tensor that does not belong "
                            "to this call's trace")
            results.append(r._value())
        plan.num_returned = len(returned or ())
        plan.loop_paths = dict(trace.loop_paths)
        # A tensor parameter that is never read nor written is allowed (an input the
        # function does not need here); a function that produces nothing is not.
        if not results:
            raise Error(self._at_def(f"{self.fn.__qualname__} produces nothing: write an output "
                                     "parameter (y[:] = ...) or return a tensor"))
        builder.finish(results)

        final = OptionSet()
        for kind in OptionSet.__slots__:
            merged = dict(getattr(options, kind))
            merged.update(getattr(trace, kind))
            setattr(final, kind, merged)
        plan.runtime_options = dict(trace.runtime_options)
        plan.debug_options = dict(trace.debug_options)
        host = dict(defaults("host_options"), **final.host_options)
        debug = dict(defaults("debug_options"), **final.debug_options)
        if debug["compile_debug_mode"]:
            folder = _ptoc.create_output_dir(debug["output_dir"])
            plan.ir_dump_dir = folder + "/ir"
        tuned = self._tuned.get(key) if key is not None else None
        # The traced function with the user's lines, for ptoc.tune (whose messages and
        # tuned kernels then name them).
        plan.tensor_text = builder.text(locations=True)
        if tuned is not None and host["compile_stage"] == "codegen":
            # The module ptoc.tune chose (same signature, its tile shapes and knobs).
            text, knobs, sched_mode, parallelism = tuned
            final.pass_options.update(knobs)
            # What the tuner measured the config with wins over the kernel's own
            # settings (which were the search's "as written" values).
            plan.runtime_options["device_sched_mode"] = sched_mode
            if parallelism is not None:
                plan.runtime_options["device_sched_parallelism"] = parallelism
            kernel = session.compile_text(text, final.pass_options, host["compile_stage"],
                                          host["double_buffer"], plan.ir_dump_dir,
                                          host["verify_each"], host["max_tile_ops"])
            for w in kernel.warnings:  # the passes' (a setting key that names no group)
                warnings.warn(f"ptoc: {w}")
        else:
            # The session consults the knowledge bank (use_tune_bank): a function it knows
            # on this device compiles with the best config found for it.
            kernel = session.compile(builder, final.pass_options, host["compile_stage"],
                                     host["double_buffer"], plan.ir_dump_dir, host["verify_each"],
                                     host["max_tile_ops"], host["use_tune_bank"],
                                     host["tune_bank_path"])
            # An unusable bank never stops a kernel from compiling; the passes' warnings
            # (a setting key that names no group) neither.
            for w in kernel.warnings:
                warnings.warn(f"ptoc: {w}")
            if kernel.bank_config:
                plan.bank_config = kernel.bank_config
                final.pass_options.update(kernel.knobs)
                plan.runtime_options.setdefault("device_sched_mode", kernel.bank_sched_mode)
        return CompiledKernel(kernel, plan, final)

    def _lookup(self, arguments, options=None, hosts=None):
        options = options or self._resolve_options()
        if hosts is None:
            hosts = self._host_arrays(arguments)
        key = self._signature_key(arguments, options, hosts)
        with self._lock:
            compiled = self._cache.get(key)
            if compiled is not None:
                self._hits += 1
                return compiled
        compiled = self._trace_and_compile(arguments, options, key, hosts)
        with self._lock:
            self._misses += 1
            self._cache.setdefault(key, compiled)
        return compiled

    def _use_tuned(self, arguments, text, knobs, sched_mode, parallelism=None):
        """Makes later calls with this signature compile `text` (ptoc.tune's choice) and
        run it with its scheduler mode and device_sched_parallelism (None: the kernel's
        own)."""
        key = self._signature_key(arguments, self._resolve_options())
        with self._lock:
            self._tuned[key] = (text, dict(knobs), sched_mode, parallelism)
            self._cache.pop(key, None)

    def compile(self, *args, **kwargs):
        """Traces and compiles (or finds in the cache) the kernel for these arguments,
        without running it. Returns a CompiledKernel (``.ir(stage)``, ``.stats``)."""
        return self._lookup(self._bind(args, kwargs))

    def __call__(self, *args, **kwargs):
        arguments = self._bind(args, kwargs)
        options = self._resolve_options()
        hosts = self._host_arrays(arguments)
        compiled = self._lookup(arguments, options, hosts)
        if compiled.stage != "codegen":
            return compiled  # host_options compile_stage stopped before code
        return self._run(compiled, hosts, options)

    @staticmethod
    def _runtime_options(compiled, options):
        """A call's runtime options: the defaults, the ambient and jit options
        (``options``), then the function's own settings (and a tuned scheduler mode)."""
        run = dict(defaults("runtime_options"), **options.runtime_options)
        run.update(compiled._plan.runtime_options)
        return run

    def _run(self, compiled, hosts, options):
        plan = compiled._plan
        kernel = compiled._kernel
        session = session_for(self.device)
        qual = self.fn.__qualname__
        run = self._runtime_options(compiled, options)
        in_arrays = [hosts[name].for_kernel(values=run["run_numerics"])
                     for name in plan.tensor_params]
        out_arrays, copy_back = [], []
        for i, spec in enumerate(kernel.results):
            storage = as_dtype(spec["dtype"]).storage
            if i < len(plan.outputs):
                name = plan.outputs[i]
                user = hosts[name]
                target = user.writable_view(qual, name)
                if target.dtype == storage and target.flags.c_contiguous:
                    out_arrays.append(target)  # the kernel writes the caller's memory
                    continue
                copy_back.append((user, target, len(out_arrays)))
            out_arrays.append(np.empty(spec["shape"], dtype=storage))
        debug = dict(defaults("debug_options"), **options.debug_options)
        debug.update(plan.debug_options)
        report = session.run(kernel, in_arrays, out_arrays, run["device_sched_mode"],
                             debug["runtime_debug_mode"], debug["output_dir"],
                             run["run_numerics"], run["host_threads"],
                             run["stitch_function_max_num"],
                             run["device_sched_parallelism"])
        self._local.last_run = report
        self._last_run = report

        # Returned tensors are torch tensors when every array argument is one (bf16
        # then exact, as torch.bfloat16), numpy arrays otherwise.
        as_torch = bool(hosts) and all(h.kind == TORCH for h in hosts.values())
        returned = []
        for i in range(len(plan.outputs), len(out_arrays)):
            dtype = as_dtype(kernel.results[i]["dtype"])
            if not run["run_numerics"]:
                returned.append(not_computed(kernel.results[i]["shape"], dtype, as_torch))
            elif as_torch:
                returned.append(to_torch(out_arrays[i], dtype))
            else:
                returned.append(for_user(out_arrays[i], dtype))
        if run["run_numerics"]:  # else output parameters keep what they held
            for user, target, i in copy_back:
                user.store(target, out_arrays[i])
        if plan.return_kind is None:
            return None
        if plan.return_kind == "one":
            return returned[0]
        return tuple(returned)


def jit(fn=None, *, device=_ptoc.DEFAULT_DEVICE, pass_options=None, runtime_options=None,
        debug_options=None, host_options=None):
    """Compiles a Python function of tensors into a fused tile operator::

        @ptoc.jit(debug_options={"runtime_debug_mode": 1})
        def softmax(x: ptoc.Tensor([256, 4096], ptoc.DT_FP32), y):
            ptoc.set_vec_tile_shapes(1, 4096)
            ...
            y[:] = ...

    ``device`` is a preset name ("a2", "b3", "a3", "tiny"; default "a2") or a device JSON
    path.
    Options are validated now; an unknown name or bad value raises OptionError.
    """
    options = OptionSet(pass_options, runtime_options, debug_options, host_options)
    session_for(device)  # a bad device name fails at decoration time

    def wrap(f):
        return JitFunction(f, device, options)

    return wrap(fn) if fn is not None else wrap
