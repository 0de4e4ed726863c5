"""Rules for products of arrays: matmul, dot, vdot, inner, outer, kron, tensordot, multi_dot, einsum, trace.

Every pullback is itself a product (matmul, tensordot or einsum) of the cotangent with the
other operands, so that a Tracer can record it again.

Complex values, under autograd's convention (the cotangent of z is c = ∂f/∂Re z - i ∂f/∂Im z,
df = Re Σ c·dz): every product here but vdot is holomorphic in each operand, so its pullback is
the real formula, with transposes and never conjugates; a real operand of a complex product
gets the real part of its cotangent (`like`). vdot conjugates its first operand (see there).
"""
from __future__ import annotations

import operator
import string

import numpy as np

from ..errors import user_location
from ..registry import rrule, whole
from ..tangents import NO_TANGENT, Thunk
from ._forward import linear_frule, bilinear_frule, multilinear_frule
from ._shapes import conj, like, mT, perm_back, reject, tangent_float

# --- helpers shared with the linalg rules ---


# --- matrix products ---


def _matmul_grads(dz, x, y):
    """Tangents (as thunks) of x @ y for 1-d and n-d operands, batch axes broadcast."""
    xn = x.ndim if type(x) is np.ndarray else np.ndim(x)  # (np.ndim is a Python call)
    yn = y.ndim if type(y) is np.ndarray else np.ndim(y)
    if xn == 1 and yn == 1:
        return lambda: like(dz * y, x), lambda: like(dz * x, y)
    # one matrix and one vector: matrix-vector products go to BLAS (einsum would not)
    if xn == 1 and yn == 2:  # (k,) @ (k, n) -> (n,)
        return lambda: like(np.matmul(y, dz), x), lambda: like(np.outer(x, dz), y)
    if xn == 2 and yn == 1:  # (m, k) @ (k,) -> (m,)
        return lambda: like(np.outer(dz, y), x), lambda: like(np.matmul(mT(x), dz), y)
    if xn == 1:  # (k,) @ (..., k, n) -> (..., n); like sums the batch axes out of dx
        return (
            lambda: like(np.einsum("...kn,...n->...k", y, dz), x),
            lambda: like(np.einsum("k,...n->...kn", x, dz), y),
        )
    if yn == 1:  # (..., m, k) @ (k,) -> (..., m)
        return (
            lambda: like(np.einsum("...m,k->...mk", dz, y), x),
            lambda: like(np.einsum("...mk,...m->...k", x, dz), y),
        )
    return (
        lambda: like(np.matmul(dz, mT(y)), x),
        lambda: like(np.matmul(mT(x), dz), y),
    )


@rrule(np.matmul, forward=bilinear_frule(np.matmul), complex=True,
       formula=whole("{dy} · {a[1]}ᵀ", "{a[0]}ᵀ · {dy}"))
def matmul_rrule(x, y, needs=None):
    def matmul_pullback(dz):
        dx, dy = _matmul_grads(dz, x, y)
        # which tangents the sweep reads is known, so they are made at once, without a Thunk
        # apiece: beside a constant (X @ w) `needs` tells; two plain arrays without it are
        # both traced (a constant array comes with `needs`), as in multiply's rule
        if needs is not None:
            return NO_TANGENT, dx() if needs[0] else NO_TANGENT, dy() if needs[1] else NO_TANGENT
        if type(x) is np.ndarray and type(y) is np.ndarray:
            return NO_TANGENT, dx(), dy()
        return NO_TANGENT, Thunk(dx), Thunk(dy)

    return np.matmul(x, y), matmul_pullback


def _tensordot_axes(xn, yn, axes):
    """Normalise tensordot's `axes` (an int, or a pair of ints or sequences) to two lists."""
    if isinstance(axes, (int, np.integer)):
        return list(range(xn - axes, xn)), list(range(axes))
    ax, ay = axes
    ax = [ax] if np.ndim(ax) == 0 else list(ax)
    ay = [ay] if np.ndim(ay) == 0 else list(ay)
    return [int(a) % xn for a in ax], [int(a) % yn for a in ay]


def _tensordot_grads(dz, x, y, ax, ay):
    """Tangents (as thunks) of tensordot(x, y, (ax, ay)): contract dz with the other operand."""
    xn, yn = np.ndim(x), np.ndim(y)
    xfree = [i for i in range(xn) if i not in ax]
    yfree = [i for i in range(yn) if i not in ay]
    nx = len(xfree)

    def dx():
        # the result's axes: x's free axes, then y's contracted axes in increasing order
        t = np.tensordot(dz, y, axes=(list(range(nx, nx + len(yfree))), yfree))
        return like(perm_back(t, xfree + [ax[ay.index(a)] for a in sorted(ay)]), x)

    def dy():
        t = np.tensordot(x, dz, axes=(xfree, list(range(nx))))
        return like(perm_back(t, [ay[ax.index(a)] for a in sorted(ax)] + yfree), y)

    return dx, dy


@rrule(np.dot, forward=bilinear_frule(np.dot), complex=True,
       formula=whole("{dy} · {a[1]}ᵀ", "{a[0]}ᵀ · {dy}"))
def dot_rrule(x, y):
    xn, yn = np.ndim(x), np.ndim(y)
    z = np.dot(x, y)

    def dot_pullback(dz):
        if xn == 0 or yn == 0:  # dot is multiply when either side is a scalar
            dx, dy = (lambda: like(dz * y, x)), (lambda: like(dz * x, y))
        elif xn <= 2 and yn <= 2:  # and matmul up to 2-d
            dx, dy = _matmul_grads(dz, x, y)
        else:  # n-d: the last axis of x against the second-to-last of y
            dx, dy = _tensordot_grads(dz, x, y, [xn - 1], [max(yn - 2, 0)])
        return NO_TANGENT, Thunk(dx), Thunk(dy)

    return z, dot_pullback


@rrule(np.tensordot, complex=True, forward=multilinear_frule(np.tensordot), formula=whole(
    "{dy} contracted with {a[1]} over its free axes",
    "{a[0]} contracted with {dy} over its free axes",
))
def tensordot_rrule(x, y, *rest, **kwargs):
    axes = rest[0] if rest else kwargs.get("axes", 2)
    ax, ay = _tensordot_axes(np.ndim(x), np.ndim(y), axes)

    def tensordot_pullback(dz):
        dx, dy = _tensordot_grads(dz, x, y, ax, ay)
        return NO_TANGENT, Thunk(dx), Thunk(dy), *(NO_TANGENT for _ in rest)

    return np.tensordot(x, y, *rest, **kwargs), tensordot_pullback


@rrule(np.inner, forward=bilinear_frule(np.inner), complex=True,
       formula=whole("{dy} · {a[1]}", "{dy} · {a[0]}"))
def inner_rrule(x, y):
    xn, yn = np.ndim(x), np.ndim(y)

    def inner_pullback(dz):
        if xn == 0 or yn == 0:
            dx, dy = (lambda: like(dz * y, x)), (lambda: like(dz * x, y))
        else:  # the last axes of both
            dx, dy = _tensordot_grads(dz, x, y, [xn - 1], [yn - 1])
        return NO_TANGENT, Thunk(dx), Thunk(dy)

    return np.inner(x, y), inner_pullback


# --- flattening products ---


@rrule(np.vdot, complex=True, forward=multilinear_frule(np.vdot), formula=whole("conj({dy} · {a[1]})", "{dy} · conj({a[0]})"))
def vdot_rrule(x, y):
    """Conjugates its first operand: x̄ = conj(z̄·y) and ȳ = z̄·conj(x) (autograd's convention).

    vdot(x, y) = Σ conj(x)·y is not holomorphic in x. With df = Re Σ c·dx:
    dz = Σ conj(dx)·y + conj(x)·dy, and Re(z̄ Σ conj(dx)·y) = Re Σ dx·conj(z̄ y)."""
    def vdot_pullback(dz):
        # vdot flattens both operands: each tangent is the other operand in its own shape
        return (
            NO_TANGENT,
            Thunk(lambda: like(conj(dz * np.reshape(y, np.shape(x))), x)),
            Thunk(lambda: like(dz * conj(np.reshape(x, np.shape(y))), y)),
        )

    return np.vdot(x, y), vdot_pullback


@rrule(np.outer, forward=bilinear_frule(np.outer), complex=True,
       formula=whole("{dy} · {a[1]}", "{dy}ᵀ · {a[0]}"))
def outer_rrule(x, y):
    def outer_pullback(dz):
        # outer(x, y)[i, j] = x.flat[i] y.flat[j]
        return (
            NO_TANGENT,
            Thunk(lambda: like(np.reshape(np.matmul(dz, np.reshape(y, (-1,))), np.shape(x)), x)),
            Thunk(lambda: like(np.reshape(np.matmul(np.reshape(x, (-1,)), dz), np.shape(y)), y)),
        )

    return np.outer(x, y), outer_pullback


@rrule(np.kron, forward=bilinear_frule(np.kron), complex=True, formula=whole(
    "each block of {dy} contracted with {a[1]}",
    "the blocks of {dy} weighted by {a[0]} and summed",
))
def kron_rrule(x, y):
    n = max(np.ndim(x), np.ndim(y))
    xs = (1,) * (n - np.ndim(x)) + np.shape(x)
    ys = (1,) * (n - np.ndim(y)) + np.shape(y)

    def kron_pullback(dz):
        # kron(x, y)[i*ny + k] = x[i] y[k] on every axis: split each axis of dz into (x, y) axes
        dzr = np.reshape(dz, tuple(s for pair in zip(xs, ys) for s in pair))

        def contract(other, shape, axes, primal):
            t = np.tensordot(dzr, np.reshape(other, shape), axes=(axes, list(range(n))))
            return like(np.reshape(t, np.shape(primal)), primal)

        return (
            NO_TANGENT,
            Thunk(lambda: contract(y, ys, list(range(1, 2 * n, 2)), x)),
            Thunk(lambda: contract(x, xs, list(range(0, 2 * n, 2)), y)),
        )

    return np.kron(x, y), kron_pullback


# --- chains of products ---


@rrule(np.linalg.multi_dot, complex=True, formula=whole(
    "(A₀⋯Aₖ₋₁)ᵀ · {dy} · (Aₖ₊₁⋯Aₙ)ᵀ for each Aₖ of {a[0]}",
))
def multi_dot_rrule(arrays, **kwargs):
    """Āₖ = (A₀ ⋯ Aₖ₋₁)ᵀ Ȳ (Aₖ₊₁ ⋯ Aₙ)ᵀ; a 1-d first array is a row, a 1-d last one a column.

    multi_dot([A₀, ..., Aₙ]) = A₀ A₁ ⋯ Aₙ is holomorphic in each array (transposes, no
    conjugates, for complex values). The pullback walks the chain once from each end."""
    reject(np.linalg.multi_dot, kwargs, ["out"])
    mats = list(arrays)
    if np.ndim(mats[0]) == 1:
        mats[0] = np.reshape(mats[0], (1, -1))
    if np.ndim(mats[-1]) == 1:
        mats[-1] = np.reshape(mats[-1], (-1, 1))

    def multi_dot_pullback(dy):
        n = len(mats)
        right = [None] * n  # right[k] = Ȳ (Aₖ₊₁ ⋯ Aₙ)ᵀ
        right[-1] = np.reshape(dy, (np.shape(mats[0])[0], np.shape(mats[-1])[1]))
        for k in range(n - 2, -1, -1):
            right[k] = np.matmul(right[k + 1], mT(mats[k + 1]))
        grads, prefix = [], None  # prefix = A₀ ⋯ Aₖ₋₁
        for k in range(n):
            g = right[k] if prefix is None else np.matmul(mT(prefix), right[k])
            grads.append(like(np.reshape(g, np.shape(arrays[k])), arrays[k]))
            prefix = mats[k] if prefix is None else np.matmul(prefix, mats[k])
        return NO_TANGENT, type(arrays)(grads) if isinstance(arrays, (list, tuple)) else grads

    return np.linalg.multi_dot(arrays, **kwargs), multi_dot_pullback


# --- einsum ---


def _einsum_explicit(subscripts, operands):
    """(terms, output, spare letters) of an einsum with '...' spelt out and the output explicit."""
    s = subscripts.replace(" ", "")
    lhs, out = s.split("->") if "->" in s else (s, None)
    terms = lhs.split(",")
    spare = [c for c in string.ascii_letters if c not in s]
    ranks = [np.ndim(op) - (len(t) - 3) for t, op in zip(terms, operands) if "..." in t]
    ell, spare = "".join(spare[:max(ranks, default=0)]), spare[max(ranks, default=0):]
    # the ellipsis axes are right-aligned, as broadcasting aligns them
    terms = [t.replace("...", ell[len(ell) - (np.ndim(op) - len(t) + 3):]) if "..." in t else t
             for t, op in zip(terms, operands)]
    if out is None:  # implicit mode: '...' first, then the labels used once, alphabetically
        once = [c for c in sorted(set(lhs)) if c.isalpha() and lhs.count(c) == 1]
        out = ell + "".join(once)
    else:
        out = out.replace("...", ell)
    return terms, out, spare


def _einsum_grad(k, dz, terms, out, spare, operands):
    """The tangent of operand k: einsum of dz with the other operands, into k's labels."""
    x = operands[k]
    shape = np.shape(x)
    dt = tangent_float(dz)
    fresh = iter(spare)
    ins = [out] + [t for j, t in enumerate(terms) if j != k]
    ops = [dz] + [op for j, op in enumerate(operands) if j != k]
    target = ""
    for pos, c in enumerate(terms[k]):
        if c in target:  # a repeated label (a diagonal): a fresh label tied to it by the identity
            c2 = next(fresh)
            ins.append(c + c2)
            ops.append(np.eye(shape[pos], dtype=dt))
            c = c2
        elif not any(c in t for t in ins):  # summed inside x alone: its tangent is constant along c
            ins.append(c)
            ops.append(np.ones(shape[pos], dtype=dt))
        target += c
    g = np.einsum(",".join(ins) + "->" + target, *ops, optimize=len(ops) > 2)
    return like(g, x)


def _sublist_letters(sub, letters):
    return "".join("..." if s is Ellipsis else letters[operator.index(s)] for s in sub)


def _interleaved_as_string(args):
    """einsum(op0, sublist0, op1, sublist1, ..., [sublistout]) as (subscripts, operands)."""
    letters = string.ascii_letters
    operands, subs = list(args[0::2]), list(args[1::2])
    out = None
    if len(args) % 2:  # a trailing output sublist
        out = operands.pop()
    spec = ",".join(_sublist_letters(sub, letters) for sub in subs)
    if out is not None:
        spec += "->" + _sublist_letters(out, letters)
    return spec, operands


def _einsum(names, values, kwargs):
    """The subscripts string gets no tangent; in the interleaved form the operands come first."""
    text = "einsum of {dy} with the other operands, this operand's subscripts as output"
    # interleaved (op0, sublist0, op1, ...): the sublists of integers are never differentiated
    return [None, text] if isinstance(values[0], str) else [text]


@rrule(np.einsum, complex=True, forward=multilinear_frule(np.einsum), formula=whole(_einsum))
def einsum_rrule(subscripts, *operands, **kwargs):
    if not isinstance(subscripts, str):
        # the interleaved form: differentiate its string form, one tangent per operand and
        # none for the sublists
        args = (subscripts, *operands)
        spec, ops = _interleaved_as_string(args)
        z, back = einsum_rrule(spec, *ops, **kwargs)

        def einsum_interleaved_pullback(dz):
            grads = iter(back(dz)[2:])
            return NO_TANGENT, *(next(grads) if i % 2 == 0 and i < 2 * len(ops) else NO_TANGENT
                                 for i in range(len(args)))

        return z, einsum_interleaved_pullback
    z = np.einsum(subscripts, *operands, **kwargs)
    terms, out, spare = _einsum_explicit(subscripts, operands)

    def einsum_pullback(dz):
        # d/dx_k of a sum of products is the same sum with x_k left out; the subscripts get none
        grads = (Thunk(lambda k=k: _einsum_grad(k, dz, terms, out, spare, operands)) for k in range(len(operands)))
        return NO_TANGENT, NO_TANGENT, *grads

    return z, einsum_pullback


# --- trace ---


@rrule(np.trace, forward=linear_frule(np.trace), complex=True,
       formula=whole("{dy} · I: {dy} on the diagonal, zeros elsewhere"))
def trace_rrule(x, *rest, **kwargs):
    names = ("offset", "axis1", "axis2", "dtype")
    opts = {"offset": 0, "axis1": 0, "axis2": 1, **dict(zip(names, rest)), **kwargs}
    nd = np.ndim(x)
    a1, a2 = opts["axis1"] % nd, opts["axis2"] % nd

    def trace_pullback(dy):
        # d trace / dx is the identity (shifted by offset) on the two axes, dy on the others
        n, m = np.shape(x)[a1], np.shape(x)[a2]
        eye = np.eye(n, m, k=opts["offset"], dtype=tangent_float(x))
        dx = np.reshape(eye, (n, m) + (1,) * np.ndim(dy)) * dy
        others = [i for i in range(nd) if i not in (a1, a2)]
        return NO_TANGENT, like(perm_back(dx, [a1, a2] + others), x), *(NO_TANGENT for _ in rest)

    return np.trace(x, *rest, **kwargs), trace_pullback
