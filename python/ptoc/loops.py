"""Loops that compile their body once: ``for i in ptoc.loop(n): ...``.

Inside a ``@ptoc.jit`` function, a plain Python ``for`` is unrolled into the graph.
``ptoc.loop`` instead makes the body a function of its own (PyPTO's root function),
compiled once and run once per iteration by the simulated AICPU control thread. The
index is a symbolic scalar (``SymInt``): it selects windows of the tensors from
outside the loop (``x[i]``, ``x[i * 64:(i + 1) * 64]``), and what the body writes into
such windows (``y[i] = ...``) lands in place.

How tracing works: the body runs once, with the index symbolic. Every tensor from
outside the loop that the body reads becomes a window argument of the body; every
window it writes becomes a result, written into the outer tensor when the loop op
runs. Values computed inside the body stay inside it.
"""

import builtins
import numbers
import types

from . import _ptoc

from .errors import Error, ShapeError
from .tracing import current_trace, located, user_position


# ----------------------------------------------------------------- symbolic scalars

class SymInt:
    """An integer known only when the kernel runs: a loop index, or arithmetic on
    one. Kept affine (``3 * i + 2 * j + 1``) when it can be, which lets ptoc see that a
    slice ``x[i * 64:(i + 1) * 64]`` has the static size 64. A non-affine part (a value
    read from a tensor, ``min``, ``//``) that is added or scaled becomes one opaque term
    of the affine form, so ``x[o + i * 64:o + (i + 1) * 64]`` with ``o = offs[e]`` has
    the static size 64 too."""

    __slots__ = ("_terms", "_const", "_text")

    def __init__(self, terms=None, const=0, text=None):
        self._terms = {k: v for k, v in (terms or {}).items() if v}
        self._const = int(const)
        self._text = text  # non-affine: the expression's text (ir/SymExpr.h syntax)

    @classmethod
    def index(cls, name):
        return cls({name: 1})

    @property
    def is_affine(self):
        return self._text is None

    def _affine(self):
        """This scalar as an affine form: itself, or (non-affine) a single term whose
        name is its expression in parentheses."""
        return self if self._text is None else SymInt({f"({self._text})": 1})

    def _str(self):
        if self._text is not None:
            return self._text
        text = ""
        for name, coef in self._terms.items():
            term = name if abs(coef) == 1 else f"{abs(coef)} * {name}"
            text += (f" - {term}" if text else f"-{term}") if coef < 0 else (
                f" + {term}" if text else term)
        if self._const or not text:
            c = self._const
            text += (f" - {-c}" if c < 0 else f" + {c}") if text else str(c)
        return text

    def __str__(self):
        return self._str()

    def __repr__(self):
        return f"ptoc.SymInt({self._str()})"

    @staticmethod
    def _of(x):
        if isinstance(x, SymInt):
            return x
        if isinstance(x, numbers.Integral) and not isinstance(x, bool):
            return SymInt(const=int(x))
        return None

    def _opaque(self, op, other, swap=False):
        o = SymInt._of(other)
        if o is None:
            return NotImplemented
        a, b = (o, self) if swap else (self, o)
        one = {"+": 0, "-": 0, "*": 1, "//": 1}.get(op)
        if one is not None and b.is_affine and not b._terms and b._const == one:
            return a  # x + 0, x - 0, x * 1, x // 1
        return SymInt(text=f"({a._str()}) {op} ({b._str()})")

    def __add__(self, other):
        o = SymInt._of(other)
        if o is None:
            return NotImplemented
        a, o = self._affine(), o._affine()
        terms = dict(a._terms)
        for k, v in o._terms.items():
            terms[k] = terms.get(k, 0) + v
        return SymInt(terms, a._const + o._const)

    __radd__ = __add__

    def __neg__(self):
        a = self._affine()
        return SymInt({k: -v for k, v in a._terms.items()}, -a._const)

    def __sub__(self, other):
        o = SymInt._of(other)
        if o is None:
            return NotImplemented
        return self + (-o)

    def __rsub__(self, other):
        o = SymInt._of(other)
        if o is None:
            return NotImplemented
        return o + (-self)

    def __mul__(self, other):
        o = SymInt._of(other)
        if o is None:
            return NotImplemented
        a, b = self._affine(), o._affine()
        if not b._terms:
            return SymInt({k: v * b._const for k, v in a._terms.items()}, a._const * b._const)
        if not a._terms:
            return b * a._const
        return self._opaque("*", o)

    __rmul__ = __mul__

    def __floordiv__(self, other):
        return self._opaque("//", other)

    def __rfloordiv__(self, other):
        return self._opaque("//", other, swap=True)

    def __mod__(self, other):
        return self._opaque("%", other)

    def __rmod__(self, other):
        return self._opaque("%", other, swap=True)

    def min(self, other):
        o = SymInt._of(other)
        return SymInt(text=f"min({self._str()}, {o._str()})")

    def max(self, other):
        o = SymInt._of(other)
        return SymInt(text=f"max({self._str()}, {o._str()})")

    def constant_difference(self, other):
        """``self - other`` when it is the same for every value of the indices, else
        None."""
        o = SymInt._of(other)
        if o is None or not self.is_affine or not o.is_affine:
            return None
        d = self - o
        return d._const if not d._terms else None

    def _no(self, *args):
        raise Error(located(f"{self!r} is known only when the kernel runs: use it in slices, "
                            "window offsets and loop bounds (x[i], x[i * 64:(i + 1) * 64]); "
                            "turning it into a Python int is not possible; compare it in an "
                            "`if` inside a ptoc.loop body for a runtime branch"))

    __index__ = __int__ = __bool__ = _no
    # Comparisons give a SymBool: in an `if` inside a ptoc.loop body, a runtime branch.
    # Other objects (`k in (..., None)`) compare unequal as usual.
    def __lt__(self, other):
        o = SymInt._of(other)
        return NotImplemented if o is None else SymBool._at_least(o - self, 1)

    def __le__(self, other):
        o = SymInt._of(other)
        return NotImplemented if o is None else SymBool._at_least(o - self, 0)

    def __gt__(self, other):
        o = SymInt._of(other)
        return NotImplemented if o is None else SymBool._at_least(self - o, 1)

    def __ge__(self, other):
        o = SymInt._of(other)
        return NotImplemented if o is None else SymBool._at_least(self - o, 0)

    def __eq__(self, other):
        o = SymInt._of(other)
        if o is None:
            return NotImplemented
        return SymBool((SymBool._at_least(o - self, 0)._value *
                        SymBool._at_least(self - o, 0)._value), f"{self} == {o}")

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else ~eq
    __hash__ = object.__hash__


class SymBool:
    """A condition known only when the kernel runs (``i < 2``, ``i == j``): a SymInt
    of value 0 or 1. In an ``if`` (or ``and``, ``or``, ``not``) inside a ``ptoc.loop``
    body it is a runtime branch: the body is traced once per answer, each path compiled
    once, and each iteration runs the path its conditions select."""

    __slots__ = ("_value", "_source")

    def __init__(self, value, source):
        self._value = value    # a SymInt, 0 or 1
        self._source = source  # what the user wrote, for messages

    @staticmethod
    def _at_least(x, k):
        """x >= k, as min(max(x - k + 1, 0), 1)."""
        return SymBool((x - (k - 1)).max(0).min(1), None)

    def __invert__(self):
        return SymBool(1 - self._value, f"not ({self})")

    def __and__(self, other):
        return SymBool(self._value * _bool_value(other), f"({self}) & ({other})")

    __rand__ = __and__

    def __or__(self, other):
        a, b = self._value, _bool_value(other)
        return SymBool((a + b).min(1), f"({self}) | ({other})")

    __ror__ = __or__

    def __str__(self):
        return self._source or str(self._value)

    def __repr__(self):
        return f"ptoc.SymBool({self})"

    def __bool__(self):
        trace = current_trace("a condition on a symbolic scalar")
        s = trace.fn_scope
        if s is None or getattr(s, "paths", None) is None:
            raise Error(located(
                f"`if {self}` branches on a value known only when the kernel runs, outside "
                "any ptoc.loop body; runtime branches are supported inside loop bodies"))
        return s.paths.ask(("cond", str(self._value)))

    __hash__ = object.__hash__


def _bool_value(x):
    if isinstance(x, SymBool):
        return x._value
    if isinstance(x, bool) or (isinstance(x, numbers.Integral) and x in (0, 1)):
        return SymInt(const=int(x))
    raise Error(located(f"a condition combines with a bool or another condition, got {x!r}"))


def is_symbolic(x):
    return isinstance(x, SymInt)


def _symbolic(builtin, method):
    """``builtin`` (min or max) that folds two or more arguments with ``SymInt.<method>``
    when one of them is a SymInt."""
    def pick(*args, **kwargs):
        if len(args) >= 2 and not kwargs and any(isinstance(a, SymInt) for a in args):
            result = args[0]
            for a in args[1:]:
                result = (getattr(result, method)(a) if isinstance(result, SymInt)
                          else getattr(a, method)(result))
            return result
        return builtin(*args, **kwargs)
    pick.__name__ = builtin.__name__
    return pick


_symbolic_min = _symbolic(builtins.min, "min")
_symbolic_max = _symbolic(builtins.max, "max")


def with_symbolic_builtins(fn):
    """``fn`` with the builtins ``min(a, b, ...)`` and ``max(a, b, ...)`` taking symbolic scalars
    (``min(off + 64, x.shape[0])`` is the symbolic minimum, as in PyPTO), for the trace
    of a jit function. The function runs on a snapshot of its module's globals; a global
    ``min``/``max`` of the module's own still wins. Functions it calls keep the plain
    builtins (use ``SymInt.min``/``.max`` there)."""
    if not isinstance(fn, types.FunctionType):
        return fn
    globs = dict(fn.__globals__)
    base = globs.get("__builtins__", builtins)
    base = dict(base if isinstance(base, dict) else vars(base))
    base["min"], base["max"] = _symbolic_min, _symbolic_max
    globs["__builtins__"] = base
    clone = types.FunctionType(fn.__code__, globs, fn.__name__, fn.__defaults__, fn.__closure__)
    clone.__kwdefaults__ = fn.__kwdefaults__
    return clone


def offset_text(x):
    """An offset as the text the IR takes (an int or an expression)."""
    return str(x) if isinstance(x, SymInt) else str(int(x))


# ----------------------------------------------------------------- scopes

class Scope:
    """A function being traced: the jit function itself (no parent) or a loop body.
    A body's reads of tensors from outside it are windows (its arguments), its writes
    into them windows too (its results)."""

    def __init__(self, trace, builder, parent=None, name=None, index=None):
        self.trace = trace
        self.builder = builder
        self.parent = parent
        self.name = name
        self.index = index
        self.operands = []        # parent value ids, in operand order
        self.operand_tensors = [] # the tensors they are the values of
        self.operand_pos = {}     # parent value id -> operand position
        self.ins = []             # [operand pos, offsets (text), sizes, placeholder id, valid,
        #                            where the user made it ("file:line:col")]
        self.in_of = {}           # (pos, offsets, sizes) -> placeholder id
        self.outs = []            # [operand pos, offsets, sizes, value id, outer tensor,
        #                            offsets (objects), valid (texts, [] for all), where]
        self.out_of = {}          # (pos, offsets, sizes) -> index into outs
        self.paths = None         # a loop body's _Paths (is_loop_begin / is_loop_end)

    def is_inside(self, other):
        s = self
        while s is not None:
            if s is other:
                return True
            s = s.parent
        return False

    def _operand(self, tensor):
        """The operand position of outer ``tensor`` (a value of the parent scope)."""
        pid = self.parent.value_of(tensor)
        pos = self.operand_pos.get(pid)
        if pos is None:
            pos = self.operand_pos[pid] = len(self.operands)
            self.operands.append(pid)
            self.operand_tensors.append(tensor)
        return pos

    def value_of(self, tensor):
        """The id in this scope of ``tensor``'s current value: its own id, or the whole
        tensor imported as a window."""
        if tensor._scope is self:
            return tensor._id
        whole = _whole_sizes(tensor)
        return self.window(tensor, [0] * tensor.ndim, whole, whole)

    def window(self, tensor, offsets, sizes, shape=None, valid=None):
        """The id of a window of outer ``tensor`` read in this body, seen with
        ``shape`` (default: ``sizes`` without their size-1 dims); ``valid``: the extent
        per dimension that holds data (ptoc.view's valid_shape), None for all."""
        if tensor._scope is self:
            raise Error(located("internal: a window of a local tensor"))
        if not self.is_inside(tensor._scope):
            raise Error(located(_escaped_message(tensor)))
        pos = self._operand(tensor)
        valid_text = _valid_text(valid, sizes)
        key = (pos, tuple(offset_text(o) for o in offsets), tuple(sizes), tuple(valid_text))
        written = self._written_overlap(pos, offsets, sizes)
        if written is not None:
            if written[0] == "same":
                return self.outs[written[1]][3]
            raise Error(located(
                f"this iteration reads a part of a tensor from outside loop '{self.name}' that "
                "it has written in an overlapping but different window; read exactly the window "
                "written, or a part that cannot overlap it"))
        pid = self.in_of.get(key)
        if pid is None:
            if shape is None:
                shape = [s for s in sizes if s != 1] or [1]
            pid = self.builder.placeholder(shape, tensor.dtype.ir_name, tensor._name or "w")
            self.in_of[key] = pid
            self.ins.append([pos, list(key[1]), list(sizes), pid, valid_text, _where()])
        return pid

    def write(self, tensor, offsets, sizes, value_id, valid=None):
        """Records writing ``value_id`` (this scope's, of the window's shape with
        size-1 dims dropped) into a window of outer ``tensor``."""
        if not self.is_inside(tensor._scope):
            raise Error(located(_escaped_message(tensor)))
        pos = self._operand(tensor)
        key = (pos, tuple(offset_text(o) for o in offsets), tuple(sizes))
        i = self.out_of.get(key)
        if i is not None:
            self.outs[i][3] = value_id  # a later write of the same window replaces it
            self.outs[i][6] = _valid_text(valid, sizes)
            self.outs[i][7] = _where()
            return
        overlap = self._written_overlap(pos, offsets, sizes)
        if overlap is not None:
            raise Error(located(
                f"this iteration writes two overlapping but different windows of one tensor "
                f"from outside loop '{self.name}'; write each part once"))
        self.out_of[key] = len(self.outs)
        self.outs.append([pos, list(key[1]), list(sizes), value_id, tensor, list(offsets),
                          _valid_text(valid, sizes), _where()])

    def in_windows(self):
        """The body's argument windows as the builder's loop takes them."""
        return [(pos, offs, sizes, valid, where) for pos, offs, sizes, _, valid, where in self.ins]

    def out_windows(self):
        """The body's result windows as the builder's loop takes them."""
        return [(pos, offs, sizes, valid, where)
                for pos, offs, sizes, _, _, _, valid, where in self.outs]

    def _written_overlap(self, pos, offsets, sizes):
        """("same", i) when window i written this iteration is exactly this one,
        ("overlap", i) when one may overlap it, None when none can."""
        for i, (p, offs, szs, _, _, objs, _, _) in enumerate(self.outs):
            if p != pos:
                continue
            if offs == [offset_text(o) for o in offsets] and szs == list(sizes):
                return ("same", i)
            if not _disjoint(objs, szs, offsets, sizes):
                return ("overlap", i)
        return None


def _whole_sizes(tensor):
    """The sizes of a window that is all of ``tensor``: -1 (the IR's `?`, the whole
    axis) for a dynamic axis, passed whole into a nested loop's body."""
    return [DYNAMIC_DIM if is_symbolic(d) else d for d in tensor.shape]


DYNAMIC_DIM = _ptoc.DYNAMIC_DIM  # a dynamic axis in the IR's types and window sizes (`?`)


def _where():
    """Where the user's code is now, as a window's location: "file:line:col"."""
    file, line, col = user_position()
    return f"{file}:{line}:{col}"


def _valid_text(valid, sizes):
    """A window's valid extents as expression texts; [] when it is valid whole."""
    if valid is None:
        return []
    texts = [offset_text(v) for v in valid]
    if all(t == str(s) for t, s in zip(texts, sizes)):
        return []
    return texts


def _disjoint(offs_a, sizes_a, offs_b, sizes_b):
    """Whether two windows provably never share an element: in some dimension their
    offsets differ by a constant at least the earlier one's size."""
    for a, sa, b, sb in zip(offs_a, sizes_a, offs_b, sizes_b):
        if sa == DYNAMIC_DIM or sb == DYNAMIC_DIM:
            continue  # a whole dynamic axis overlaps everything in it
        d = SymInt._of(b).constant_difference(a)
        if d is not None and (d >= sa or -d >= sb):
            return True
    return False


def _escaped_message(tensor):
    where = tensor._scope.name if tensor._scope is not None else "?"
    return (f"a value computed inside loop '{where}' is used outside that loop's body; each "
            "iteration has its own: write it into a tensor created before the loop "
            "(t[...] = value) and use that tensor instead")


# ----------------------------------------------------------------- the loop

def _range(what, bounds, symbolic, step=None):
    """(start, stop, step) of ``what``'s (stop) / (start, stop) / (start, stop, step),
    with ``step=`` also accepted as a keyword (PyPTO's ``loop(start, end, step=1)``);
    start and stop each an int, or with ``symbolic`` also a SymInt; the step a
    positive int."""
    if not 1 <= len(bounds) <= 3:
        raise Error(located(f"{what} takes (stop), (start, stop) or (start, stop, step), "
                            f"got {len(bounds)} values"))
    if step is not None and len(bounds) == 3:
        raise Error(located(f"{what}: the step is given twice (the third value and step=); "
                            "give it once"))
    start, stop = (0, bounds[0]) if len(bounds) == 1 else (bounds[0], bounds[1])
    if len(bounds) == 3:
        step = bounds[2]
    elif step is None:
        step = 1
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        is_int = isinstance(v, numbers.Integral) and not isinstance(v, bool)
        if not (is_int or (symbolic and name != "step" and isinstance(v, SymInt))):
            kind = "an int or a symbolic scalar" if symbolic and name != "step" else (
                "a positive int (a step known when tracing)" if name == "step"
                else "an int (a static trip count)")
            raise Error(located(f"{what}: {name} must be {kind}, got {type(v).__name__}"))
    if step <= 0:
        raise Error(located(
            f"{what}: step must be a positive int, got {step!r}; loops count up: for a "
            "descending index, loop up and use stop - 1 - i"))
    return start, stop, int(step)


def loop(*bounds, step=None, name=None, idx_name=None, parallel=False):
    """``for i in ptoc.loop(stop)`` / ``ptoc.loop(start, stop, step=1, name=...,
    idx_name=..., parallel=False)``: the body is compiled once and runs once per value
    of ``i`` in ``range(start, stop, step)``. ``i`` is a SymInt. The step (a positive
    int) is the third value or ``step=``; ``ptoc.loop(8, step=2)`` is range(0, 8, 2).

    ``parallel=True`` promises that the iterations are independent (PyPTO's
    ``loop(..., parallel=True)``): the control thread submits each iteration as a
    stitch of its own, and up to runtime option ``device_sched_parallelism`` of them
    run at once instead of one stitch after another (docs/python.md, "Parallel
    loops"). Results stay exact even if the promise is false (the data dependencies
    between iterations are still kept); only the timing changes."""
    start, stop, step = _range("ptoc.loop", bounds, symbolic=True, step=step)
    if not isinstance(parallel, bool):
        raise Error(located(f"ptoc.loop: parallel must be True or False, got {parallel!r}"))
    trace = current_trace("ptoc.loop")
    name = name or f"loop{trace.loop_count}"
    index = idx_name or name
    if not index.isidentifier() or index in ("min", "max"):
        raise Error(located(f"ptoc.loop: the index name {index!r} must be a Python identifier "
                            "(and not min or max); pass idx_name="))
    return _LoopIter(trace, start, stop, step, name, index, parallel)


class _LoopIter:
    def __init__(self, trace, start, stop, step, name, index, parallel=False):
        self.trace, self.start, self.stop, self.step = trace, start, stop, step
        self.name, self.index = name, index
        self.parallel = parallel

    def __iter__(self):
        return self._run()

    def _run(self):
        trace = self.trace
        trace.at_user_code()
        location = trace.location
        parent = trace.fn_scope
        s = parent
        while s is not None:
            if s.index == self.index:
                raise Error(located(f"ptoc.loop: index name {self.index!r} is already used by an "
                                    "enclosing loop; pass another name= or idx_name="))
            s = s.parent
        trace.loop_count += 1
        # The body is traced once per path of its is_loop_begin / is_loop_end tests
        # (once when it has none); each path is a loop of its own over the iterations
        # where its answers hold, emitted in iteration order (_Paths).
        paths = _Paths()
        traced = []
        while True:
            body_name = f"{trace.func_name}.{self.name}"
            while body_name in trace.body_names:
                body_name += "_"
            trace.body_names.add(body_name)
            builder = parent.builder.body(body_name, [])
            scope = Scope(trace, builder, parent, self.name, self.index)
            scope.paths = paths
            trace.push_scope(scope)
            try:
                yield SymInt.index(self.index)
            finally:
                trace.pop_scope(scope)
            # This path's body ran to its end (no break, no exception).
            results = [o[3] for o in scope.outs]
            if results:
                builder.finish_body(results, [i[3] for i in scope.ins])
                parent.builder.adopt_settings(builder)
                traced.append((dict(paths.answers), body_name, scope))
            else:  # a path that does nothing (`if i > 2: ...` without an else)
                builder.discard_body()
                trace.body_names.discard(body_name)
            if not paths.next():
                break
        if not traced:
            raise Error(f"{location[0]}:{location[1]}: error: loop '{self.name}' writes "
                        "nothing outside its body: write the values it computes into a "
                        "tensor created before the loop (y[i] = ...)")
        trace.loop_paths[self.name] = trace.loop_paths.get(self.name, 0) + len(traced)
        if any(isinstance(key, tuple) for answers, _, _ in traced for key in answers):
            self._emit_branches(parent, location, traced)
            return
        # Only first/last tests: one loop per path over the iterations it holds for.
        traced.sort(key=lambda t: _Paths.order(t[0]))
        for answers, body_name, scope in traced:
            start, stop = _Paths.range(answers, self.start, self.stop, self.step)
            self._emit(parent, location, body_name, scope, start, stop)

    def _guard(self, answers):
        """1 for the iterations where ``answers`` hold, else 0 (a SymInt of the index)."""
        i = SymInt.index(self.index)
        g = SymInt(const=1)
        for key, answer in answers.items():
            if key == "begin":
                c = 1 - (i - self.start).max(0).min(1)            # i == start
            elif key == "end":
                c = (i + self.step - self.stop + 1).max(0).min(1)  # i + step >= stop
            else:
                c = SymInt(text=key[1])
            g = g * (c if answer else 1 - c)
        return g

    def _emit_branches(self, parent, location, traced):
        """A body with runtime conditions: the loop runs a body of its own whose loops,
        one per path, run 0 or 1 times (their guard), so each iteration takes its path
        and the iterations keep their order."""
        trace = self.trace
        tensors = []  # every tensor some path reads or writes, once
        for _, _, scope in traced:
            for t in scope.operand_tensors:
                if not any(t is u for u in tensors):
                    tensors.append(t)
        name = f"{trace.func_name}.{self.name}.paths"
        while name in trace.body_names:
            name += "_"
        trace.body_names.add(name)
        wb = parent.builder.body(name, [])
        wb.set_location(*location)
        # Inside it, every tensor whole; `current` follows the paths' updates.
        current = [wb.placeholder(_whole_sizes(t), t.dtype.ir_name, t._name or "w")
                   for t in tensors]
        placeholders = list(current)
        written = []
        for k, (answers, body_name, scope) in enumerate(traced):
            pos = [next(j for j, u in enumerate(tensors) if u is t) for t in scope.operand_tensors]
            ids = wb.loop(
                [current[p] for p in pos], body_name, self.name, f"{self.index}_p{k}", "0",
                offset_text(self._guard(answers)), "1",
                scope.in_windows(), scope.out_windows())
            order = []
            for q, *_ in scope.outs:
                if q not in order:
                    order.append(q)
            for q, rid in zip(order, ids):
                current[pos[q]] = rid
                if pos[q] not in written:
                    written.append(pos[q])
        wb.finish_body([current[p] for p in written], placeholders)
        parent.builder.adopt_settings(wb)
        parent.builder.set_location(*location)
        whole = lambda t: (["0"] * t.ndim, _whole_sizes(t), [], "")
        ids = parent.builder.loop(
            [parent.value_of(t) for t in tensors], name, self.name, self.index,
            offset_text(self.start), offset_text(self.stop), offset_text(self.step),
            [(p, *whole(t)) for p, t in enumerate(tensors)],
            [(p, *whole(tensors[p])) for p in written], self.parallel)
        for p, rid in zip(written, ids):
            t = tensors[p]
            if t._scope is parent:
                t._id = rid
                t._written = True
            else:  # a tensor from further out: the enclosing body writes it whole
                parent.write(t, [0] * t.ndim, _whole_sizes(t), rid)

    def _emit(self, parent, location, body_name, scope, start, stop):
        """The loop op running ``body_name`` over range(start, stop, step)."""
        parent.builder.set_location(*location)
        # The operands' values now: a path emitted before may have updated them.
        operands = [parent.value_of(t) for t in scope.operand_tensors]
        ids = parent.builder.loop(
            operands, body_name, self.name, self.index, offset_text(start),
            offset_text(stop), offset_text(self.step),
            scope.in_windows(), scope.out_windows(),
            self.parallel)
        # Each written tensor now holds the loop's result (an operand is written by
        # the outs naming its position; results follow their first appearance).
        order, tensors = [], {}
        for pos, _, _, _, t, *_ in scope.outs:
            if pos not in tensors:
                order.append(pos)
                tensors[pos] = []
            if not any(t is x for x in tensors[pos]):
                tensors[pos].append(t)
        for pos, rid in zip(order, ids):
            for t in tensors[pos]:
                if t._scope is parent:
                    t._id = rid
                    t._written = True
                else:  # a tensor from further out: the enclosing body writes it whole
                    parent.write(t, [0] * t.ndim, _whole_sizes(t), rid)


class _Paths:
    """The answers a body's trace gives to ``is_loop_begin`` / ``is_loop_end`` of its
    loop, enumerated depth-first: a question asked for the first time on a path is
    answered True, and the next path flips the last True answer."""

    def __init__(self):
        self.answers = {}  # "begin"/"end" -> bool, in the order first asked
        self.forced = {}

    def ask(self, flag):
        if flag not in self.answers:
            self.answers[flag] = self.forced.get(flag, True)
        return self.answers[flag]

    def next(self):
        flags = list(self.answers)
        while flags and not self.answers[flags[-1]]:
            flags.pop()
        if not flags:
            return False
        self.forced = {f: self.answers[f] for f in flags[:-1]}
        self.forced[flags[-1]] = False
        self.answers = {}
        return True

    @staticmethod
    def order(answers):
        """Where a path's iterations lie: first, middle or last (paths partition the
        iterations, so emitting them in this order keeps the iteration order)."""
        if answers.get("begin"):
            return 0
        if answers.get("end"):
            return 2
        return 0 if "begin" not in answers else 1

    @staticmethod
    def range(answers, start, stop, step):
        """(start, stop) of the iterations where ``answers`` hold."""
        begin, end = answers.get("begin"), answers.get("end")
        if begin is None and end is None:
            return start, stop
        n = _trip_count(start, stop, step)
        at_least = lambda k: _clamp01(n - (k - 1))  # 1 when n >= k
        last = start + (n - 1) * step
        if begin and end:       # the only iteration
            return start, start + (at_least(1) - at_least(2)) * step
        if begin:               # the first, with others after it (or regardless)
            return start, start + (at_least(2) if end is False else at_least(1)) * step
        if end:                 # the last, after others (or regardless)
            first = at_least(2) if begin is False else at_least(1)
            return last + (1 - first) * step, last + step
        if begin is False and end is False:  # the middle ones
            return start + step, start + step * _max0(n - 1)
        if begin is False:      # all but the first
            return start + step, start + step * _max0(n)
        return start, start + step * _max0(n - 1)  # all but the last


def _trip_count(start, stop, step):
    """len(range(start, stop, step)): an int when stop - start is a constant."""
    if not is_symbolic(start) and not is_symbolic(stop):
        return len(range(start, stop, step))
    distance = SymInt._of(stop).constant_difference(start)
    if distance is not None:
        return len(range(0, distance, step))
    return _max0((SymInt._of(stop) - start + (step - 1)) // step)


def _max0(x):
    return x.max(0) if is_symbolic(x) else builtins.max(x, 0)


def _clamp01(x):
    """min(max(x, 0), 1): 1 when x >= 1, else 0."""
    if is_symbolic(x):
        return x.max(0).min(1)
    return builtins.min(builtins.max(x, 0), 1)


def _loop_scope(i, what):
    """The scope of the loop whose index is ``i``."""
    trace = current_trace(what)
    if isinstance(i, SymInt) and i.is_affine and not i._const and len(i._terms) == 1:
        (name, coef), = i._terms.items()
        s = trace.fn_scope
        while s is not None and coef == 1:
            if s.index == name and getattr(s, "paths", None) is not None:
                return s
            s = s.parent
    raise Error(located(f"{what} takes the index of an enclosing ptoc.loop (the i of "
                        f"'for i in ptoc.loop(...)'), got {i!r}"))


def is_loop_begin(i):
    """Whether ``i`` is its loop's first iteration: a Python bool while tracing. The
    body is traced once for each answer (each a loop of its own over the iterations
    where it holds: PyPTO's runtime branch, compiled once per path)."""
    return _loop_scope(i, "ptoc.is_loop_begin").paths.ask("begin")


def is_loop_end(i):
    """Whether ``i`` is its loop's last iteration (see is_loop_begin)."""
    return _loop_scope(i, "ptoc.is_loop_end").paths.ask("end")


def loop_unroll(*bounds, step=None, unroll_list=(1,), name=None, idx_name=None,
                parallel=False):
    """``for i, f in ptoc.loop_unroll(start, stop, step, unroll_list=[4, 2, 1])``: the
    iterations of ``range(start, stop, step)`` covered greedily from the largest factor:
    a body traced for factor ``f`` processes ``f`` steps at once, from index ``i``
    (``x[i:i + f]`` with step 1). Each factor's body is a loop of its own, compiled
    once. ``step`` may also be given as ``step=``.

    A static trip count is planned now (factors with no whole step left are skipped;
    factors that cannot cover it are an error). A symbolic start or stop (a dynamic
    axis, a value read from a tensor) gives every factor a loop whose trip count is
    computed when the kernel runs: with T the trip count, factor f's loop runs
    ``R // f`` times, where R is what the larger factors left (``T``, then ``T % f``
    after each), so the smallest factor, which must then be 1, takes the tail. One
    compiled kernel serves every size. ``parallel=True``: each factor's loop is a
    parallel loop (see ``loop``)."""
    start, stop, step = _range("ptoc.loop_unroll", bounds, symbolic=True, step=step)
    try:
        factors = sorted({int(f) for f in unroll_list}, reverse=True)
    except (TypeError, ValueError):
        factors = []
    if not factors or any(f <= 0 for f in factors) or any(
            isinstance(f, bool) or not isinstance(f, numbers.Integral) for f in unroll_list):
        raise Error(located(f"ptoc.loop_unroll: unroll_list must be positive ints, got "
                            f"{unroll_list!r}"))
    if not isinstance(parallel, bool):
        raise Error(located(f"ptoc.loop_unroll: parallel must be True or False, got {parallel!r}"))
    trace = current_trace("ptoc.loop_unroll")
    name = name or f"loop{trace.loop_count}"
    index = idx_name or name
    trip = _trip_count(start, stop, step)
    plan = []  # (factor, iterations before its first one, its trip count)
    if not is_symbolic(trip):
        covered = 0
        for f in factors:
            count = (trip - covered) // f
            if count:
                plan.append((f, covered, count))
                covered += count * f
        if covered != trip:
            raise Error(located(f"ptoc.loop_unroll: the factors {factors} cannot cover {trip} "
                                f"iterations (a tail of {trip - covered} is left); add 1 to "
                                "unroll_list"))
    else:
        if factors[-1] != 1:
            raise Error(located(
                f"ptoc.loop_unroll: the trip count {trip} is known only when the kernel runs, "
                f"so the factors {factors} may leave a tail; add 1 to unroll_list (its loop "
                "runs the tail, zero times when there is none)"))
        rest = trip  # iterations the factors so far have not covered
        for f in factors:
            plan.append((f, trip - rest, rest // f))
            rest = rest % f
    return _unrolled(plan, start, step, name, index, parallel)


def _unrolled(plan, start, step, name, index, parallel):
    for f, first, count in plan:
        for k in loop(count, name=f"{name}_x{f}", idx_name=f"{index}_x{f}", parallel=parallel):
            yield start + first * step + k * (f * step), f
