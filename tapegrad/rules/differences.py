"""Rules for finite differences and ranges: diff, gradient, cross and linspace.

diff and gradient are linear along one axis: their pullback applies the transposed matrix of
the operation to the cotangent. For gradient that matrix is numpy's own result on the identity
(so uniform and coordinate spacings and both edge orders are exactly what numpy computes).
cross is bilinear: ⟨g, a × b⟩ = ⟨a, b × g⟩ = ⟨b, g × a⟩. linspace is affine in its endpoints.
All four are holomorphic (linear or bilinear with real coefficients), so under autograd's
convention their pullbacks are right for complex values as written; a real argument beside a
complex one gets the real part of its cotangent (`cast_like`).

Complex values (the rules declared with ``complex=True``): linear, bilinear or affine with real
coefficients: the complex tests in tests/rules/test_numpy_extra.py pass for each.
"""
from __future__ import annotations

import operator

import numpy as np

from ..registry import rrule, whole

from ..broadcasting import unbroadcast
from ..tangents import NO_TANGENT, ZERO, Thunk
from ._forward import multilinear_frule
from ._shapes import bind, call_option, cast_like, no_tangents, positional_names, tangent_float
from .special_params import no_derivative

# --- diff ---


def _diff_transpose(g, axis):
    """The transpose of one first difference along `axis`: dx[i] = g[i-1] - g[i]."""
    pad_front = [(0, 0)] * np.ndim(g)
    pad_back = [(0, 0)] * np.ndim(g)
    pad_front[axis], pad_back[axis] = (1, 0), (0, 1)
    return np.pad(g, pad_front) - np.pad(g, pad_back)


def _diff(names, values, kwargs):
    """diff is a first difference applied n times; its transpose is applied as often."""
    n = call_option(values, kwargs, "n", 1)
    n = 1 if n is None else n
    times = "once" if n == 1 else f"{n} times" if isinstance(n, (int, np.integer)) else "n times"
    step = "the transposed difference ({dy}[i-1] - {dy}[i], zero past the ends)"
    return ["{dy} through " + step + " " + times, None, None,
            "the first entries of the transposed differences of {dy} (where prepend went)",
            "the last entries of the transposed differences of {dy} (where append went)"]


@rrule(np.diff, complex=True, formula=whole(_diff))
def diff_rrule(a, *args, **kwargs):
    b = bind(np.diff, (a, *args), kwargs)
    n, axis = operator.index(b.get("n", 1)), b.get("axis", -1)
    prepend, append = b.get("prepend"), b.get("append")
    y = np.diff(a, *args, **kwargs)
    ndim = np.ndim(y)
    axis = operator.index(axis) % ndim

    def diff_pullback(dy):
        # diff n times is the first difference applied n times: transpose it n times
        dfull = dy
        for _ in range(n):
            dfull = _diff_transpose(dfull, axis)
        # the input numpy differenced was prepend ++ a ++ append along axis
        k = 0 if prepend is None else _edge_length(prepend, a, axis)
        m = np.shape(a)[axis]
        pieces = np.split(dfull, [k, k + m], axis=axis)
        da = cast_like(pieces[1], a)
        extra = {"prepend": Thunk(lambda: _edge_tangent(pieces[0], prepend, axis)),
                 "append": Thunk(lambda: _edge_tangent(pieces[2], append, axis))}
        names = positional_names(np.diff, 1 + len(args))[1:]
        return NO_TANGENT, da, *(extra.get(name, NO_TANGENT) for name in names)

    return y, diff_pullback


def _edge_length(edge, a, axis):
    """How many entries numpy's prepend/append adds along axis (a scalar is broadcast to 1)."""
    return 1 if np.ndim(edge) == 0 else np.shape(edge)[axis]


def _edge_tangent(piece, edge, axis):
    if np.ndim(edge) == 0:  # numpy broadcast the scalar to one slice: its slope sums over it
        return cast_like(np.sum(piece), edge)
    return cast_like(piece, edge)


# --- gradient ---


def _axis_matrix(m, spacing, edge_order, dtype):
    """The m×m matrix J of np.gradient along one axis: gradient(f) = J f (numpy's result on the identity)."""
    return np.asarray(np.gradient(np.eye(m, dtype=dtype), *spacing, axis=0, edge_order=edge_order))


@rrule(np.gradient, complex=True, formula=whole(
    "Σ over the axes of Jᵀ·{dy} along each (J: np.gradient's matrix for that axis's spacing "
    "and edge order)",
    None,
))
def gradient_rrule(f, *varargs, axis=None, edge_order=1):
    y = np.gradient(f, *varargs, axis=axis, edge_order=edge_order)
    ndim = np.ndim(f)
    axes = tuple(range(ndim)) if axis is None else tuple(
        operator.index(a) % ndim for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if len(varargs) <= 1:
        spacings = [tuple(varargs)] * len(axes)
    else:
        spacings = [(np.asarray(v),) for v in varargs]
    dt = tangent_float(f)
    mats = [_axis_matrix(np.shape(f)[ax], sp, edge_order, dt) for ax, sp in zip(axes, spacings)]

    def gradient_pullback(dy):
        # one result per axis (a single array for one axis): df = Σ_axes Jᵀ dy along that axis
        parts = [dy] if len(axes) == 1 else list(dy)
        df = ZERO
        for ax, mat, d in zip(axes, mats, parts):
            if d is ZERO:
                continue
            moved = np.moveaxis(d, ax, -1)
            share = np.moveaxis(np.matmul(moved, mat), -1, ax)
            df = share if df is ZERO else df + share
        spacing_tangents = (no_derivative(np.gradient, "varargs (the spacing)", v) for v in varargs)
        return NO_TANGENT, (ZERO if df is ZERO else cast_like(df, f)), *spacing_tangents

    return y, gradient_pullback


# --- cross ---


@rrule(np.cross, complex=True, forward=multilinear_frule(np.cross), formula=whole("{a[1]} × {dy}", "{dy} × {a[0]}", None))
def cross_rrule(a, b, *args, **kwargs):
    o = bind(np.cross, (a, b, *args), kwargs)
    if o.get("axis") is not None:
        axa = axb = axc = o["axis"]
    else:
        axa, axb, axc = o.get("axisa", -1), o.get("axisb", -1), o.get("axisc", -1)
    if np.shape(a)[axa] != 3 or np.shape(b)[axb] != 3:
        raise NotImplementedError(
            "tapegrad differentiates numpy.cross of 3-vectors; for 2-vectors (deprecated by numpy) "
            "write a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0] instead")
    am, bm = np.moveaxis(a, axa, -1), np.moveaxis(b, axb, -1)

    def cross_pullback(dy):
        g = np.moveaxis(dy, axc, -1)
        # ⟨g, a × b⟩ = ⟨a, b × g⟩ = ⟨b, g × a⟩
        da = Thunk(lambda: cast_like(np.moveaxis(unbroadcast(np.cross(bm, g), am), -1, axa), a))
        db = Thunk(lambda: cast_like(np.moveaxis(unbroadcast(np.cross(g, am), bm), -1, axb), b))
        return NO_TANGENT, da, db, *no_tangents(args)

    return np.cross(a, b, *args, **kwargs), cross_pullback


# --- linspace ---


@rrule(np.linspace, complex=True, formula=whole(
    "Σₖ {dy}ₖ·(1 - tₖ), tₖ = k/(num - 1) (k/num without the endpoint)",
    "Σₖ {dy}ₖ·tₖ, tₖ = k/(num - 1) (k/num without the endpoint)",
    None,
))
def linspace_rrule(start, stop, *args, **kwargs):
    o = bind(np.linspace, (start, stop, *args), kwargs)
    num, endpoint = operator.index(o.get("num", 50)), bool(o.get("endpoint", True))
    retstep, axis = bool(o.get("retstep", False)), o.get("axis", 0)
    out = np.linspace(start, stop, *args, **kwargs)
    # y = start + (stop - start) t with t = 0 .. 1 (or short of 1 without the endpoint)
    t = np.linspace(0.0, 1.0, num, endpoint=endpoint)
    div = (num - 1 if endpoint else num) or 1

    def linspace_pullback(dy):
        dsamples, dstep = dy if retstep else (dy, ZERO)
        wsum = wt = 0.0
        if dsamples is not ZERO:
            moved = np.moveaxis(dsamples, axis, 0)
            tt = np.reshape(t, (-1,) + (1,) * (np.ndim(moved) - 1))
            wt = np.sum(moved * tt, axis=0)
            wsum = np.sum(moved, axis=0)
        if dstep is not ZERO:  # step = (stop - start) / div
            wt = wt + dstep / div
        dstart = Thunk(lambda: cast_like(unbroadcast(wsum - wt, start), start))
        dstop = Thunk(lambda: cast_like(unbroadcast(wt, stop), stop))
        return NO_TANGENT, dstart, dstop, *no_tangents(args)

    return out, linspace_pullback
