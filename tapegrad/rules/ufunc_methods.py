"""Rules for the methods of ufuncs: ``outer``, ``reduce``, ``accumulate`` and ``reduceat``.

A Tracer meets ``np.add.reduce(x)`` as a call of the bound method ``np.add.reduce``, which
compares and hashes equal to every other ``np.add.reduce``: the rules are registered on the
methods themselves. numpy hands tapegrad the arrays by position and every option by keyword
(``axis=``, ``dtype=``, ``keepdims=``, ``initial=``, ``where=``), with numpy's defaults: the
axis of ``reduce`` and ``accumulate`` is 0 unless given, ``axis=None`` reduces every axis.

- ``outer`` of every two-input ufunc that has a rule: the ufunc's own rule on ``a`` reshaped
  to ``a.shape + (1,) * b.ndim`` and ``b`` (broadcasting makes the outer product), ``a``'s
  tangent reshaped back.
- ``reduce`` of add, multiply, maximum, minimum (the rules of np.sum, np.prod, np.max and
  np.min, ties split evenly), fmax and fmin (as max and min, a nan never picked), logaddexp
  and logaddexp2 (log-sum-exp along the axes: ``ȳ · exp(x - y)``, ``ȳ · 2^(x - y)``).
- ``accumulate`` of add and multiply (the rules of np.cumsum and np.cumprod); of maximum,
  minimum, fmax, fmin, logaddexp and logaddexp2 the derivative of the fold numpy computes,
  ``y[j] = f(y[j-1], x[j])``, taken step by step with f's own rule: the cotangent of each
  output goes to the element holding the running extremum there, and at a tie ``x[j] ==
  y[j-1]`` it is split as np.maximum's rule splits it, half to each (the same gradient as
  the loop written with np.maximum).
- ``reduceat`` of add: each element gets the cotangents of the segments it was summed into.

The methods of the non-differentiable two-input ufuncs (comparisons, logic, bitwise
operations; of floor_divide, outer only) are non-differentiable too. Any other method raises
NoRuleError naming the ufuncs whose method of that name tapegrad differentiates.

Complex values (the rules declared with ``complex=True``): sums, products and their scans are
holomorphic (np.sum's, np.prod's, np.cumsum's and np.cumprod's rules); max and min pick
elements in numpy's lexicographic order; ``outer`` is complex where its ufunc's rule is.
Checked on complex values in tests/rules/test_ufunc_methods.py.
"""
from __future__ import annotations

import numpy as np

from ..context import METHOD_SIGNATURES
from ..errors import NoRuleError, qualified_name, user_location
from ..dual import derived_frule
from ..registry import COMPLEX, FORMULAS, FRULES, NEEDS, NONDIFF, RULES, frule, nondifferentiable, rrule, whole
from ..broadcasting import unbroadcast
from ..tangents import NO_TANGENT, ZERO, Thunk, getitem
from ._shapes import cast_like, expand_reduced, no_tangents, normalize_axis, reduced_axes, tangent_dtype
from .indexing import scatter_add
from .reductions import (cumprod_rrule, cumsum_rrule, initial_of_extremum, max_rrule, min_rrule, option_tangents,
                         prod_rrule, sum_rrule)


#: method -> (its parameter names, the defaults of its options, how many arrays come first)
_PARAMETERS = {
    method: (list(sig.parameters),
             {k: p.default for k, p in sig.parameters.items() if p.default is not p.empty},
             sum(p.default is p.empty for p in sig.parameters.values()))
    for method, sig in METHOD_SIGNATURES.items()
}
#: the options after the array of ``ufunc.reduce``, in numpy's order (axis, dtype, out,
#: keepdims, initial, where), and initial='s place among them: a traced initial= is passed
#: there (see `tapegrad.context.signature_of`)
_REDUCE_OPTIONS = tuple(_PARAMETERS["reduce"][0][1:])
_INITIAL = _REDUCE_OPTIONS.index("initial")


def _bind(fn, method, args, kwargs) -> dict:
    """Every argument of a call of ``ufunc.<method>`` by name, numpy's defaults filled in.

    numpy hands over the options by keyword (what a trace sees); a direct call of the rule
    may pass them by position too. ``out=`` is taken by the traced values' own handling
    before a rule is reached, so a rule never writes into one."""
    names, defaults, required = _PARAMETERS[method]
    if len(args) == required and kwargs.keys() <= defaults.keys():
        # what a trace hands over (the arrays by position, options by keyword): no binding to do
        b = dict(defaults)
        b.update(zip(names, args))
        b.update(kwargs)
    else:
        b = METHOD_SIGNATURES[method].bind(*args, **kwargs)
        b.apply_defaults()
        b = b.arguments
    if b["out"] is not None:
        raise NoRuleError(f"{qualified_name(fn)} with out= at {user_location()}: call it without "
                          f"out= and assign the result instead")
    return b


def _refuse(fn, what, instead):
    raise NoRuleError(f"tapegrad does not differentiate {qualified_name(fn)} with {what} (at "
                      f"{user_location()}); {instead}")


def _no_dtype(fn, b):
    if b["dtype"] is not None:
        _refuse(fn, "dtype=", "cast the array first (x.astype(dtype)) and call it without dtype=")


def _options(b, names=("dtype", "initial", "where")) -> dict:
    """The options of a bound reduce call that differ from numpy's defaults, as keywords for
    np.sum & co. (the axis and keepdims always; a plain call stays on their fast path)."""
    out = {"axis": b["axis"], "keepdims": bool(b["keepdims"])} if "keepdims" in b else {"axis": b["axis"]}
    if "dtype" in names and b["dtype"] is not None:
        out["dtype"] = b["dtype"]
    if "initial" in names and b.get("initial", np._NoValue) is not np._NoValue:
        out["initial"] = b["initial"]
    if "where" in names and b.get("where", True) is not True:
        out["where"] = b["where"]
    return out


def _named(pb, ufunc, method, args, initial=None):
    """The pullback of a rule of np.sum & co. as the method's: one tangent more per option
    given by position (a direct call, or a traced initial= or where= moved into place), where
    `initial(dy)`, when given, makes initial='s."""
    if not args:
        return pb

    def pullback(dy):
        return (*pb(dy), *_option_tangents(args, initial, dy))

    pullback.__name__ = pullback.__qualname__ = f"{ufunc.__name__}_{method}_pullback"
    return pullback


def _option_tangents(args, initial, dy):
    """NoTangent for each option of ``ufunc.reduce`` given by position, but for initial=
    (`initial(dy)`, computed only if the sweep reads it: the initial value is traced)."""
    return option_tangents(_REDUCE_OPTIONS[:len(args)], None if initial is None else lambda: initial(dy))


def _name(fn, ufunc, method):
    fn.__name__ = fn.__qualname__ = f"{ufunc.__name__}_{method}_{fn.__name__.rsplit('_', 1)[-1]}"
    return fn


# --- outer ---


def _spread_first(a, b):
    """`a` reshaped to ``a.shape + (1,) * b.ndim``, so that a ufunc of it and `b` is their
    outer product; `a` itself when either is a scalar (the plain broadcast is the outer product)."""
    na, nb = np.ndim(a), np.ndim(b)
    if not na or not nb:
        return a
    return np.reshape(a, np.shape(a) + (1,) * nb)


def _reshaped(t, shape):
    """The tangent `t` of the reshaped `a`, reshaped back to `a`'s shape (a Thunk stays one)."""
    if t is ZERO or t is NO_TANGENT:
        return t
    if type(t) is Thunk:
        return Thunk(lambda: _reshaped(t.fn(), shape))
    return np.reshape(t, shape)


def _outer(ufunc, a, b, needs):
    ea = _spread_first(a, b)
    rule = RULES[ufunc]  # looked up at each call: a rule the user registers later takes over
    y, pb = rule(ea, b) if needs is None or ufunc not in NEEDS else rule(ea, b, needs=needs)
    if ea is a:
        return y, pb
    shape = np.shape(a)

    def outer_pullback(dy):
        t = pb(dy)
        return t[0], _reshaped(t[1], shape), t[2]

    _name(outer_pullback, ufunc, "outer")
    return y, outer_pullback


def _outer_rule(ufunc):
    """The rule of ``ufunc.outer``: the ufunc's own rule on ``a`` spread along the axes of ``b``.
    It takes ``needs`` when the ufunc's rule does (a constant's partner is then kept as a
    shape only)."""
    if ufunc in NEEDS:
        def outer_rrule(a, b, needs=None):
            return _outer(ufunc, a, b, needs)
    else:
        def outer_rrule(a, b):
            return _outer(ufunc, a, b, None)
    outer_rrule.__doc__ = f"{qualified_name(ufunc)}'s rule, with a spread along the axes of b."
    return _name(outer_rrule, ufunc, "outer")


def _outer_frule(ufunc):
    """The forward rule of ``ufunc.outer``: the ufunc's own forward rule (written out, or
    derived from its reverse rule) on ``a`` and its variation spread along the axes of ``b``
    (a derived rule of ``outer`` itself traced the reshapes too, at every call)."""
    def outer_frule(dargs, a, b, **kwargs):
        ea = _spread_first(a, b)
        da, db = dargs[0], dargs[1]
        if da is not ZERO and ea is not a:
            da = np.reshape(da, np.shape(ea))
        rule = FRULES.get(ufunc)  # (at each call: a rule the user registers later takes over)
        if rule is not None:
            return rule([da, db], ea, b, **kwargs)
        return derived_frule(ufunc, (ea, b), [da, db], kwargs)

    outer_frule.__name__ = outer_frule.__qualname__ = f"{ufunc.__name__}_outer_frule"
    return outer_frule


def _binary_ufuncs(table):
    """The two-input elementwise ufuncs of `table` (not matmul, whose methods numpy refuses)."""
    return [f for f in table if isinstance(f, np.ufunc) and f.nin == 2 and f.signature is None]


def _outer_formula(entry):
    """What explain prints for ``ufunc.outer``, from the ufunc's own formula: each tangent is
    the elementwise one (a[0] spread along the axes of a[1]), summed over the axes of the other
    argument."""
    def templates(names, values, kwargs):
        out = []
        for i, other in enumerate(("{a[1]}", "{a[0]}")):
            t = entry.template(i, names, values, kwargs)
            if t is not None and entry.kind == "partial":
                t = "{dy}" if t == "1" else "-{dy}" if t == "-1" else "{dy} · " + t
            out.append(None if t is None else f"{t}, summed over the axes of {other} (outer product)")
        return out
    return whole(templates)


def give_outer(fns):
    """Declare ``outer`` of each two-input ufunc of `fns` that has a rule: its own rule, reshaped
    (complex where the elementwise rule is). Run on every rule registered before this module,
    and on the rules registered later, when scipy's module is imported (`tapegrad.rules`)."""
    for uf in _binary_ufuncs(fns):
        if uf in RULES:
            rrule(uf.outer, complex=uf in COMPLEX, forward=_outer_frule(uf),
                  formula=_outer_formula(FORMULAS[uf]) if uf in FORMULAS else None)(_outer_rule(uf))


give_outer(list(RULES))


def _along(text):
    """The formula of a ufunc's reduce or accumulate: `text` with ``{over}`` the axes it ran
    along, numpy's axis 0 when none was given (explain's ``{over}`` reads None as every axis)."""
    def templates(names, values, kwargs):
        axis = kwargs.get("axis", 0)
        if type(axis) is tuple and len(axis) == 1:
            axis = axis[0]
        over = ("every axis" if axis is None else
                "axes " + ", ".join(map(str, axis)) if type(axis) is tuple else f"axis {axis}")
        return [text.replace("{over}", over)]
    return whole(templates)


_LARGEST = "{dy} sent to where {a[0]} is largest over {over} (shared at a tie)"
_SMALLEST = "{dy} sent to where {a[0]} is smallest over {over} (shared at a tie)"


# --- reduce ---


@rrule(np.add.reduce, complex=True, formula=_along("{dy} broadcast back over {over}"))
def add_reduce_rrule(array, *args, **kwargs):
    """np.sum along numpy's axis=0: each element gets the cotangent of its sum."""
    b = _bind(np.add.reduce, "reduce", (array, *args), kwargs)
    y, pb = sum_rrule(array, **_options(b))
    initial = b["initial"]
    # initial= is added to each sum: it gets the sum of their cotangents
    return y, _named(pb, np.add, "reduce", args, lambda dy: unbroadcast(dy, initial))


@rrule(np.multiply.reduce, complex=True,
       formula=_along("{dy} · {y}/{a[0]} broadcast back over {over} (the product of the others)"))
def multiply_reduce_rrule(array, *args, **kwargs):
    """np.prod along numpy's axis=0: each element gets the cotangent times the product of the others."""
    b = _bind(np.multiply.reduce, "reduce", (array, *args), kwargs)
    where, initial = b["where"], b["initial"]

    def initial_tangent(dy):
        # each result is initial times the product of its elements
        return unbroadcast(dy * np.multiply.reduce(array, **_options(b, ("where",))), initial)

    if where is True:
        y, pb = prod_rrule(array, **_options(b))
        return y, _named(pb, np.multiply, "reduce", args, initial_tangent)
    # the product of the selected elements: np.prod of the array with 1 where not selected,
    # whose derivative reaches only the selected ones
    y = np.multiply.reduce(array, **_options(b))
    _, pb = prod_rrule(np.where(where, array, 1), **_options(b, ("dtype", "initial")))

    def multiply_reduce_pullback(dy):
        dx = pb(dy)[1]
        return NO_TANGENT, cast_like(np.where(where, dx, 0), array), *_option_tangents(args, initial_tangent, dy)

    return y, multiply_reduce_pullback


def _extremum_reduce(ufunc, rule):
    def reduce_rrule(array, *args, **kwargs):
        fn = ufunc.reduce
        b = _bind(fn, "reduce", (array, *args), kwargs)
        _no_dtype(fn, b)
        options = _options(b)
        y, pb = rule(array, **options)
        axes = reduced_axes(b["axis"], np.ndim(array))
        return y, _named(pb, ufunc, "reduce", args, initial_of_extremum(array, y, axes, options["keepdims"], b))

    reduce_rrule.__doc__ = (f"np.{rule.__name__[:3]} along numpy's axis=0: the cotangent goes to the "
                            f"element picked, split evenly at a tie.")
    return _name(reduce_rrule, ufunc, "reduce")


# (max and min pick elements in numpy's lexicographic order: complex values too)
rrule(np.maximum.reduce, complex=True, formula=_along(_LARGEST))(_extremum_reduce(np.maximum, max_rrule))
rrule(np.minimum.reduce, complex=True, formula=_along(_SMALLEST))(_extremum_reduce(np.minimum, min_rrule))


def _nan_extremum_reduce(ufunc, rule, fill):
    def reduce_rrule(array, *args, **kwargs):
        fn = ufunc.reduce
        b = _bind(fn, "reduce", (array, *args), kwargs)
        _no_dtype(fn, b)
        options = _options(b)
        y = fn(array, **options)
        axes, keepdims = reduced_axes(b["axis"], np.ndim(array)), options["keepdims"]
        # np.max's (np.min's) rule over the elements that are not nan: the cotangent goes to
        # the elements equal to the result, split at a tie; a group of nans only gets none
        keep = np.logical_not(np.isnan(array))
        if b["where"] is not True:
            keep = np.logical_and(keep, b["where"])
        start = fill if b["initial"] is np._NoValue else b["initial"]
        _, pb = rule(array, axis=b["axis"], keepdims=keepdims, where=keep, initial=start)
        return y, _named(pb, ufunc, "reduce", args, initial_of_extremum(array, y, axes, keepdims, b))

    reduce_rrule.__doc__ = (f"As numpy.{'maximum' if ufunc is np.fmax else 'minimum'}.reduce, a nan "
                            f"skipped: the cotangent goes to the element picked, split evenly at a tie.")
    return _name(reduce_rrule, ufunc, "reduce")


rrule(np.fmax.reduce, formula=_along(_LARGEST))(_nan_extremum_reduce(np.fmax, max_rrule, -np.inf))
rrule(np.fmin.reduce, formula=_along(_SMALLEST))(_nan_extremum_reduce(np.fmin, min_rrule, np.inf))


def _log_reduce(ufunc, power):
    def reduce_rrule(array, *args, **kwargs):
        fn = ufunc.reduce
        b = _bind(fn, "reduce", (array, *args), kwargs)
        options = _options(b)
        y = fn(array, **options)
        axes, keepdims, where = reduced_axes(b["axis"], np.ndim(array)), options["keepdims"], b["where"]
        initial = b["initial"]

        def reduce_pullback(dy):
            # y = log Σ eˣ: dy/dx = eˣ / Σ eˣ = exp(x - y), which cannot overflow (2^(x - y) for
            # log2 Σ 2ˣ); an element left out by where= gets nothing, initial= its own share
            shifted = array - expand_reduced(y, axes, keepdims)
            if where is not True:
                shifted = np.where(where, shifted, -np.inf)  # (a large one left out: no overflow)
            dx = expand_reduced(dy, axes, keepdims) * power(shifted)
            return (NO_TANGENT, cast_like(dx, array),
                    *_option_tangents(args, lambda dy: unbroadcast(dy * power(initial - y), initial), dy))

        return y, _name(reduce_pullback, ufunc, "reduce")

    reduce_rrule.__doc__ = (f"log-sum-{'exp' if ufunc is np.logaddexp else 'exp2'} along numpy's "
                            f"axis=0: the softmax of the elements times the cotangent.")
    return _name(reduce_rrule, ufunc, "reduce")


rrule(np.logaddexp.reduce, formula=_along("{dy} · exp({a[0]} - {y}) broadcast back over {over}"))(
    _log_reduce(np.logaddexp, np.exp))
rrule(np.logaddexp2.reduce, formula=_along("{dy} · 2^({a[0]} - {y}) broadcast back over {over}"))(
    _log_reduce(np.logaddexp2, np.exp2))


# --- accumulate ---


def _scan_axis(fn, array, b):
    """The one axis an accumulation runs along; numpy raises for what it refuses (a scalar,
    several axes, axis=None of more than one dimension)."""
    axis, ndim = b["axis"], np.ndim(array)
    if type(axis) is tuple and len(axis) == 1:
        axis = axis[0]  # (numpy takes a tuple of one axis)
    if axis is None and ndim == 1:
        return 0
    if ndim == 0 or axis is None or type(axis) is bool or not isinstance(axis, (int, np.integer)):
        fn(array, axis=b["axis"])  # numpy's own error
        _refuse(fn, f"axis={axis!r}", "give one integer axis")  # pragma: no cover - numpy raised
    return normalize_axis(axis, ndim)


@rrule(np.add.accumulate, complex=True,
       formula=_along("the cumulative sum of {dy} taken backwards along {over}"))
def add_accumulate_rrule(array, *args, **kwargs):
    """np.cumsum along numpy's axis=0: each element gets the sum of the cotangents from its place on."""
    fn = np.add.accumulate
    b = _bind(fn, "accumulate", (array, *args), kwargs)
    options = {"axis": _scan_axis(fn, array, b)}
    if b["dtype"] is not None:
        options["dtype"] = b["dtype"]
    y, pb = cumsum_rrule(array, **options)
    return y, _named(pb, np.add, "accumulate", args)


@rrule(np.multiply.accumulate, complex=True,
       formula=_along("the backward cumulative sum of {dy} · {y}, divided by {a[0]}, along {over}"))
def multiply_accumulate_rrule(array, *args, **kwargs):
    """np.cumprod along numpy's axis=0, right with zeros in the array."""
    fn = np.multiply.accumulate
    b = _bind(fn, "accumulate", (array, *args), kwargs)
    options = {"axis": _scan_axis(fn, array, b)}
    if b["dtype"] is not None:
        options["dtype"] = b["dtype"]
    y, pb = cumprod_rrule(array, **options)
    return y, _named(pb, np.multiply, "accumulate", args)


def _reverse_scan(g, c):
    """The solution of ``g[i] = dy[i] + c[i] · g[i+1]`` along the last axis (``g[n-1] =
    dy[n-1]``), from ``g = dy`` and the n - 1 factors `c`: Hillis and Steele's doubling, log₂ n
    steps of whole-array numpy calls (which a Tracer records again).

    After the step of span s, ``g[i]`` holds the terms ``dy[j] · c[i]⋯c[j-1]`` for i ≤ j < i + 2s
    and ``a[i]`` the product ``c[i]⋯c[i+2s-1]``. Where the factors are 0, ½ and 1 (the extrema)
    every product is exact."""
    n = np.shape(g)[-1]
    a = c  # a[i] = c[i]⋯c[i+s-1], for i + s ≤ n - 1
    s = 1
    while s < n:
        g = np.concatenate([g[..., :n - s] + a * g[..., s:], g[..., n - s:]], axis=-1)
        if 2 * s < n:
            a = a[..., :n - 2 * s] * a[..., s:]
        s *= 2
    return g


def _fold_back(ufunc, dy, x, y, axis):
    """The cotangent of x through ``y = ufunc.accumulate(x, axis)``, the fold ``y[0] = x[0]``,
    ``y[j] = ufunc(y[j-1], x[j])``, differentiated step by step with ufunc's own rule.

    Step j passes its cotangent ``g[j]`` on as ``c[j] · g[j]`` to ``y[j-1]`` and ``t[j] · g[j]``
    to ``x[j]``, the shares that ufunc's pullback gives a cotangent of ones; so ``g[j] = dy[j] +
    c[j+1] · g[j+1]`` (`_reverse_scan`) and ``dx[j] = t[j] · g[j]``, ``dx[0] = g[0]``."""
    last = np.ndim(x) - 1
    if axis != last:
        dy, x, y = np.moveaxis(dy, axis, -1), np.moveaxis(x, axis, -1), np.moveaxis(y, axis, -1)
    n = np.shape(x)[-1]
    if n > 1:
        _, pb = RULES[ufunc](y[..., :-1], x[..., 1:])
        shares = pb(np.ones(np.shape(x)[:-1] + (n - 1,), tangent_dtype(x, dy)))
        carry, take = getitem(shares, 1), getitem(shares, 2)
        g = _reverse_scan(dy, carry)
        dy = np.concatenate([g[..., :1], take * g[..., 1:]], axis=-1)
    return dy if axis == last else np.moveaxis(dy, -1, axis)


def _fold_accumulate(ufunc, note):
    def accumulate_rrule(array, *args, **kwargs):
        fn = ufunc.accumulate
        b = _bind(fn, "accumulate", (array, *args), kwargs)
        _no_dtype(fn, b)
        axis = _scan_axis(fn, array, b)
        y = fn(array, axis=axis)

        def accumulate_pullback(dy):
            return NO_TANGENT, cast_like(_fold_back(ufunc, dy, array, y, axis), array), *no_tangents(args)

        return y, _name(accumulate_pullback, ufunc, "accumulate")

    accumulate_rrule.__doc__ = note
    return _name(accumulate_rrule, ufunc, "accumulate")


_RUNNING_MAX = ("each {dy}ⱼ sent to the element holding the running maximum {y}ⱼ along {over} "
                "(half to each of two at a tie, as np.maximum's rule)")
_RUNNING_MIN = ("each {dy}ⱼ sent to the element holding the running minimum {y}ⱼ along {over} "
                "(half to each of two at a tie, as np.minimum's rule)")
for _uf, _note, _formula in [
    (np.maximum, "The running maximum along numpy's axis=0: each cotangent goes to the element "
                 "holding the maximum there, half to each of two at a tie (np.maximum's rule, step by step).",
     _RUNNING_MAX),
    (np.minimum, "The running minimum along numpy's axis=0: each cotangent goes to the element "
                 "holding the minimum there, half to each of two at a tie (np.minimum's rule, step by step).",
     _RUNNING_MIN),
    (np.fmax, "The running maximum along numpy's axis=0, a nan skipped: np.fmax's rule, step by step.",
     _RUNNING_MAX),
    (np.fmin, "The running minimum along numpy's axis=0, a nan skipped: np.fmin's rule, step by step.",
     _RUNNING_MIN),
    (np.logaddexp, "The running log-sum-exp along numpy's axis=0: np.logaddexp's rule, step by step.",
     "Σⱼ₍≥ᵢ₎ {dy}ⱼ · exp({a[0]}ᵢ - {y}ⱼ) along {over}"),
    (np.logaddexp2, "The running log-sum-exp2 along numpy's axis=0: np.logaddexp2's rule, step by step.",
     "Σⱼ₍≥ᵢ₎ {dy}ⱼ · 2^({a[0]}ᵢ - {y}ⱼ) along {over}"),
]:
    rrule(_uf.accumulate, formula=_along(_formula))(_fold_accumulate(_uf, _note))


# --- reduceat ---


def _segments(indices, n):
    """(segment of each pair, position of each pair): the elements numpy's reduceat sums into
    each output, ``indices[k]:indices[k+1]`` where that is not empty, else ``indices[k]`` alone
    (the last segment runs to the end)."""
    starts = np.asarray(indices, dtype=np.intp)
    ends = np.append(starts[1:], n)
    lengths = np.where(ends > starts, ends - starts, 1)
    segment = np.repeat(np.arange(len(starts)), lengths)
    offsets = np.cumsum(lengths) - lengths
    position = np.arange(int(np.sum(lengths))) - np.repeat(offsets - starts, lengths)
    return segment, position


@rrule(np.add.reduceat, complex=True, formula=whole(
    "{dy} of each segment copied to the elements summed into it (added where segments overlap)",
    None,
))
def add_reduceat_rrule(array, indices, *args, **kwargs):
    """Sums over slices: each element gets the cotangents of the segments it was summed into."""
    b = _bind(np.add.reduceat, "reduceat", (array, indices, *args), kwargs)
    options = {"axis": b["axis"]} if b["dtype"] is None else {"axis": b["axis"], "dtype": b["dtype"]}
    y = np.add.reduceat(array, indices, **options)
    axis = normalize_axis(b["axis"], np.ndim(array))
    shape = np.shape(array)
    segment, position = _segments(indices, shape[axis])
    moved = shape[:axis] + shape[axis + 1:] + (shape[axis],)

    def add_reduceat_pullback(dy):
        # the transpose of the segment sums: each segment's cotangent copied to its elements
        # and added where segments overlap (indices that go back)
        dm = np.moveaxis(dy, axis, -1)[..., segment]
        dx = np.moveaxis(scatter_add(dm, moved, (Ellipsis, position), tangent_dtype(array, dy)), -1, axis)
        return NO_TANGENT, cast_like(dx, array), NO_TANGENT, *no_tangents(args)

    return y, add_reduceat_pullback


# the array is the only argument with a tangent (the listing in docs/rules.md reads this)
for _fn in (np.add.reduce, np.multiply.reduce, np.maximum.reduce, np.minimum.reduce, np.fmax.reduce,
            np.fmin.reduce, np.logaddexp.reduce, np.logaddexp2.reduce, np.add.accumulate,
            np.multiply.accumulate, np.maximum.accumulate, np.minimum.accumulate, np.fmax.accumulate,
            np.fmin.accumulate, np.logaddexp.accumulate, np.logaddexp2.accumulate, np.add.reduceat):
    RULES[_fn].differentiable = ("array",)


# --- forward rules of the linear ones: the variation goes through the same method ---


@frule(np.add.reduce)
def add_reduce_frule(d, array, *args, **kwargs):
    y = np.add.reduce(array, *args, **kwargs)
    b = _bind(np.add.reduce, "reduce", (array, *args), kwargs)
    # initial= is added to every sum: its own variation (a dual initial value), not its value
    dy = ZERO if d[0] is ZERO else np.add.reduce(_as_array(d[0]), **_options(b, ("dtype", "where")))
    dinitial = d[1 + _INITIAL] if len(d) > 1 + _INITIAL else ZERO
    if dinitial is not ZERO:
        dy = dinitial if dy is ZERO else dy + dinitial
    return y, dy


@frule(np.add.accumulate)
def add_accumulate_frule(d, array, *args, **kwargs):
    y = np.add.accumulate(array, *args, **kwargs)
    return y, ZERO if d[0] is ZERO else np.add.accumulate(_as_array(d[0]), *args, **kwargs)


def _as_array(dx):
    """The variation of a 0-d array given as a number, as an array (numpy's methods take arrays)."""
    return np.asarray(dx) if type(dx) in (float, complex) else dx


# --- the methods of the non-differentiable ufuncs ---

# a comparison's outer product (np.equal.outer(labels, labels)), np.logical_and.reduce(mask):
# piecewise constant as the ufunc is. A reduction or scan passes its first element through
# unchanged (a group of one), so only those of ufuncs whose results are never floats (bools,
# integers) are; np.floor_divide.reduce(x) is x[0] // x[1] // ..., whose x[0] alone is not
def give_nondifferentiable_methods(fns):
    """Mark the methods of each non-differentiable two-input ufunc of `fns` non-differentiable
    (see above); run as `give_outer` is."""
    for uf in _binary_ufuncs(sorted((f for f in fns if f in NONDIFF), key=repr)):
        nondifferentiable(uf.outer)
        if not any(types[-1] in np.typecodes["AllFloat"] for types in uf.types):
            nondifferentiable(uf.reduce, uf.accumulate, uf.reduceat)


give_nondifferentiable_methods(NONDIFF)
del _uf, _note, _formula, _fn
