"""PyPTO's option dictionaries, translated into ptoc's.

PyPTO spells its options ``runtime_options``, ``pass_options``, ``debug_options``,
``host_options``, ``codegen_options`` and ``verify_options``. Each name falls into one
of three classes:

* **mapped**: ptoc models it; the value becomes a ptoc option (``device_sched_mode``,
  ``stitch_function_max_num``, ``device_sched_parallelism``, ``vec_nbuffer_setting`` -> ``vec_nbuffer_mode=2`` plus
  ``vec_nbuffer_setting``, ``runtime_debug_mode``, ...);
* **consumed**: it has a meaning ptoc always satisfies (``run_mode``: NPU and SIM both
  compute the exact numbers and simulate the timing);
* **ignored**: it has no effect in ptoc (``enable_slice``, ``valid_shape_optimize``,
  codegen and verify options, ...). It is accepted and listed in a ``UserWarning``,
  once per process per option name.

Nothing PyPTO accepts is an error here; the table in docs/pypto.md lists every name.
"""

import re
import threading
import warnings

import ptoc
from ptoc import _ptoc
from ptoc.errors import OptionError
from ptoc.tracing import user_location

KINDS = ("runtime_options", "pass_options", "debug_options", "host_options",
         "codegen_options", "verify_options")

# PyPTO runtime options ptoc has under the same name and meaning.
_RUNTIME_SAME = ("device_sched_mode", "stitch_function_max_num", "device_sched_parallelism")
# PyPTO debug options ptoc has under the same name and meaning.
_DEBUG_SAME = ("runtime_debug_mode", "compile_debug_mode")
# PyPTO's "*_setting" merge options: ptoc's setting with its mode knob.
_SETTINGS = {"vec_nbuffer_setting": "vec_nbuffer_mode",
             "cube_nbuffer_setting": "cube_nbuffer_mode",
             "cube_l1_reuse_setting": "cube_l1_reuse_mode"}
# PyPTO's compile_stage values -> ptoc's host option compile_stage.
_STAGES = {"ALL_COMPLETE": None, "TENSOR_GRAPH": "tensor", "EXECUTE_GRAPH": "codegen",
           "CODEGEN_INSTRUCTION": "codegen", "CODEGEN_BINARY": "codegen"}
_FUNC_KEY = re.compile(r"func(\d+)_(\d+)\Z")

_warned = set()
_warn_lock = threading.Lock()


def warn_ignored(names):
    """One UserWarning listing the ignored option names not listed before in this
    process (kind.name strings), at the user's line."""
    with _warn_lock:
        fresh = [n for n in names if n not in _warned]
        _warned.update(fresh)
    if not fresh:
        return
    file, line = user_location()
    warnings.warn_explicit(
        "ptoc.pypto: these PyPTO options have no effect in ptoc and are ignored: "
        f"{', '.join(fresh)} (see docs/pypto.md, 'Options')", UserWarning, file, line)


def _setting(name, value, ignored):
    """PyPTO's {"DEFAULT": N, "func<F>_<order>": N, order: N, label: N} as ptoc's
    {-1: N, "func<F>_<order>": N, order: N}: a "func<F>_<order>" key keeps its function
    (ptoc numbers root functions as PyPTO does: F is the function's position in the
    module, and the summary prints the same keys), so it sets that function's group
    only; semantic-label keys are ignored."""
    if not isinstance(value, dict):
        raise OptionError(f"pass option '{name}' must be a dict like {{'DEFAULT': 2, "
                          f"'func0_1': 4}}, got {value!r}")
    out = {}
    for key, n in value.items():
        if key == "DEFAULT" or key == -1:
            out[-1] = n
        elif isinstance(key, int) and not isinstance(key, bool):
            out[key] = n
        elif isinstance(key, str) and _FUNC_KEY.match(key):
            func, order = _FUNC_KEY.match(key).groups()
            out[f"func{int(func)}_{int(order)}"] = n
        else:
            ignored.append(f"pass_options.{name}[{key!r}] (semantic-label keys)")
    return out


def translate(kind, options, ignored):
    """ptoc's options (a dict of ptoc kind -> dict) from one PyPTO option dict;
    names without effect are appended to ``ignored``."""
    out = {"runtime_options": {}, "pass_options": {}, "debug_options": {},
           "host_options": {}}
    if options is None:
        return out
    if not isinstance(options, dict):
        raise OptionError(f"{kind} must be a dict, got {type(options).__name__}")
    known_pass = set(_ptoc.pass_option_names())
    for name, value in options.items():
        if kind == "runtime_options":
            if name in _RUNTIME_SAME:
                out["runtime_options"][name] = value
            elif name == "run_mode":
                # NPU and SIM both compute exactly and simulate; SIM (PyPTO's cost
                # model) also writes a run folder with the swimlane, as PyPTO's does.
                if _is_sim(value):
                    out["debug_options"].setdefault("runtime_debug_mode", 1)
            else:
                ignored.append(f"runtime_options.{name}")
        elif kind == "pass_options":
            if name in _SETTINGS:
                setting = _setting(name, value, ignored)
                mode = _SETTINGS[name]
                out["pass_options"][mode] = 2 if setting else 1
                if setting:
                    out["pass_options"][name] = setting
            elif name == "sg_set_scope":
                if isinstance(value, (tuple, list)):
                    if len(value) > 1:
                        ignored.append("pass_options.sg_set_scope's flags")
                    value = value[0] if value else -1
                out["pass_options"][name] = value
            elif name in known_pass:
                out["pass_options"][name] = value
            else:
                ignored.append(f"pass_options.{name}")
        elif kind == "debug_options":
            if name in _DEBUG_SAME:
                # PyPTO's levels above ptoc's highest give ptoc's highest.
                top = _ptoc.MAX_DEBUG_MODE if name == "runtime_debug_mode" else 1
                if isinstance(value, int) and not isinstance(value, bool) and value > top:
                    value = top
                out["debug_options"][name] = value
            elif name == "output_dir":
                out["debug_options"][name] = value
            else:
                ignored.append(f"debug_options.{name}")
        elif kind == "host_options":
            if name == "compile_stage":
                stage = getattr(value, "name", value)
                if stage in _STAGES:
                    if _STAGES[stage] is not None:
                        out["host_options"]["compile_stage"] = _STAGES[stage]
                elif stage in ("tensor", "tile", "partitioned", "codegen"):
                    out["host_options"]["compile_stage"] = stage
                else:
                    ignored.append(f"host_options.compile_stage={value!r}")
            else:
                ignored.append(f"host_options.{name}")
        else:  # codegen_options, verify_options
            ignored.append(f"{kind}.{name}")
    return out


def _is_sim(run_mode):
    return getattr(run_mode, "name", None) == "SIM" or (
        isinstance(run_mode, int) and not isinstance(run_mode, bool) and run_mode == 1)


def is_sim(runtime_options):
    return isinstance(runtime_options, dict) and _is_sim(runtime_options.get("run_mode"))


def translate_all(**kinds):
    """ptoc's four option dicts from PyPTO's option dicts (None for absent kinds),
    warning once about the ignored names."""
    ignored = []
    merged = {"runtime_options": {}, "pass_options": {}, "debug_options": {},
              "host_options": {}}
    for kind in kinds:
        if kind not in KINDS:
            raise OptionError(f"unknown PyPTO option kind '{kind}'; valid: {', '.join(KINDS)}")
    # In KINDS order: explicit debug options win over run_mode's default.
    for kind in KINDS:
        for k, v in translate(kind, kinds.get(kind), ignored).items():
            merged[k].update(v)
    warn_ignored(ignored)
    return merged


class options:
    """``pypto.options(pass_options=..., runtime_options=..., ...)``: ptoc.options
    with PyPTO's option names; a context manager and a decorator."""

    def __init__(self, pass_options=None, runtime_options=None, debug_options=None,
                 host_options=None, codegen_options=None, verify_options=None, **kwargs):
        # PyPTO also takes knobs as keyword arguments: each goes to the kind that
        # declares it (unknown ones are ignored).
        extra = {}
        for name, value in kwargs.items():
            extra.setdefault(_kind_of(name), {})[name] = value
        kinds = dict(pass_options=pass_options, runtime_options=runtime_options,
                     debug_options=debug_options, host_options=host_options,
                     codegen_options=codegen_options, verify_options=verify_options)
        for kind, d in extra.items():
            kinds[kind] = {**(kinds[kind] or {}), **d}
        self._ptoc = ptoc.options(**translate_all(**kinds))

    def __enter__(self):
        self._ptoc.__enter__()
        return self

    def __exit__(self, *exc):
        return self._ptoc.__exit__(*exc)

    def __call__(self, fn):
        return self._ptoc(fn)


def _kind_of(name):
    if name == "run_mode" or name in _RUNTIME_SAME:
        return "runtime_options"
    if name in ("runtime_debug_mode", "compile_debug_mode"):
        return "debug_options"
    if name == "compile_stage":
        return "host_options"
    return "pass_options"


# --- settings inside a kernel -------------------------------------------------

def _apply(kind, knobs):
    t = translate_all(**{kind: knobs})
    if t["pass_options"]:
        ptoc.set_pass_options(**t["pass_options"])
    if t["runtime_options"]:
        ptoc.set_runtime_options(**t["runtime_options"])
    if t["debug_options"]:
        ptoc.set_debug_options(**t["debug_options"])
    if t["host_options"]:
        warn_ignored([f"host_options.{n} (inside a kernel)" for n in t["host_options"]])


def set_pass_options(**knobs):
    _apply("pass_options", knobs)


def set_runtime_options(**knobs):
    _apply("runtime_options", knobs)


def set_debug_options(**knobs):
    _apply("debug_options", knobs)


def set_host_options(**knobs):
    _apply("host_options", knobs)


def set_codegen_options(**knobs):
    _apply("codegen_options", knobs)


def set_verify_options(**knobs):
    _apply("verify_options", knobs)


def set_matrix_size(size):
    warn_ignored(["set_matrix_size"])


def set_semantic_label(label, *args, **kwargs):
    warn_ignored(["set_semantic_label"])


def set_pass_config(*args, **kwargs):
    warn_ignored(["set_pass_config"])


def set_pass_default_config(*args, **kwargs):
    warn_ignored(["set_pass_default_config"])


def reset_options():
    """PyPTO's reset of the global options: ptoc keeps no global options (settings
    live in the kernel being traced, and ``options`` contexts end with their block)."""
