"""``pypto.frontend.jit`` (and ``pypto.jit``): a PyPTO kernel as a ``@ptoc.jit``
function.

The PyPTO annotations (``pypto.Tensor([...], dtype)``, ``pypto.Tensor[...]``,
``pypto.Tensor``) become ptoc annotations where ptoc can say the same thing; the rest
(dtype-only tensors) is checked here before the call, and ptoc specialises the
kernel to the shapes of the call. ``pypto.DYNAMIC`` axes are ptoc's dynamic axes. PyPTO's
option dictionaries are translated (``_options.py``); options without effect in ptoc
are listed once in a warning.
"""

import functools
import inspect
import os
import shutil

import ptoc
from ptoc.loops import with_symbolic_builtins

from ._options import is_sim, translate_all
from ._tensor import Tensor


class JitFunction:
    """A PyPTO kernel compiled and run by ptoc. Calling it runs the kernel (outputs
    written in place, as in PyPTO); ``ptoc_function`` is the underlying
    ``ptoc.JitFunction`` (``last_run``, ``compile``, ``cache_info``)."""

    def __init__(self, fn, options, device, sim=False):
        self.fn = fn
        self._sim = sim
        sig = inspect.signature(fn)
        self._checks = {}
        params = []
        for name, p in sig.parameters.items():
            ann = p.annotation
            if ann is Tensor:
                ann = Tensor()
            if isinstance(ann, Tensor):
                ptoc_ann = ann.ptoc_annotation()
                if ptoc_ann is None:
                    self._checks[name] = ann
                p = p.replace(annotation=ptoc_ann if ptoc_ann is not None
                              else inspect.Parameter.empty)
            params.append(p)
        self._signature = sig
        traced = _with_signature(fn, sig.replace(parameters=params))
        self.ptoc_function = ptoc.jit(traced, device=device, **options)
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        if self._checks:
            try:
                bound = self._signature.bind(*args, **kwargs)
            except TypeError as e:
                raise ptoc.ArgumentError(f"{self.fn.__qualname__}(): {e}") from None
            for name, ann in self._checks.items():
                if name in bound.arguments:
                    ann.check(self.fn.__qualname__, name, bound.arguments[name])
        result = self.ptoc_function(*args, **kwargs)
        if self._sim:
            _cost_model_layout(self.ptoc_function.last_run)
        return result

    @property
    def last_run(self):
        return self.ptoc_function.last_run

    def compile(self, *args, **kwargs):
        return self.ptoc_function.compile(*args, **kwargs)

    def cache_info(self):
        return self.ptoc_function.cache_info()

    def cache_clear(self):
        self.ptoc_function.cache_clear()


def _cost_model_layout(report):
    """PyPTO's cost model (RunMode.SIM) leaves its swimlane at
    <run folder>/CostModelSimulationOutput/merged_swimlane.json: a link (or copy) of
    ptoc's swimlane there, for scripts that read it."""
    path = getattr(report, "swimlane_path", "") if report is not None else ""
    if not path or not os.path.isfile(path):
        return
    folder = os.path.join(os.path.dirname(path), "CostModelSimulationOutput")
    os.makedirs(folder, exist_ok=True)
    target = os.path.join(folder, os.path.basename(path))
    if not os.path.exists(target):
        try:
            os.link(path, target)
        except OSError:
            shutil.copyfile(path, target)


def _with_signature(fn, signature):
    """The function ptoc traces: ``fn`` under the translated signature (ptoc.jit gives
    it PyPTO's symbolic ``min``/``max``, loops.with_symbolic_builtins)."""
    @functools.wraps(fn)
    def traced(*args, **kwargs):
        return with_symbolic_builtins(fn)(*args, **kwargs)
    traced.__signature__ = signature
    return traced


def jit(func=None, *, host_options=None, runtime_options=None, codegen_options=None,
        pass_options=None, verify_options=None, debug_options=None, device="a2", **kwargs):
    """``@pypto.frontend.jit`` / ``@pypto.frontend.jit(runtime_options=..., ...)``.
    ``device`` (ptoc only) picks the device model; other keywords PyPTO may take are
    accepted and ignored."""
    kinds = dict(host_options=host_options, runtime_options=runtime_options,
                 codegen_options=codegen_options, pass_options=pass_options,
                 verify_options=verify_options, debug_options=debug_options)
    from ._options import warn_ignored
    warn_ignored([f"jit({k}=)" for k in kwargs])

    def wrap(f):
        return JitFunction(f, translate_all(**kinds), device, is_sim(runtime_options))

    return wrap(func) if func is not None else wrap
