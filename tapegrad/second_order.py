"""Second order: `hessian` and `hvp`, a pass over a gradient.

The inner pass gives the gradient (reverse mode, or one forward pass per input direction);
the outer pass differentiates it (reverse: one pullback per gradient entry; forward: one
`jvp` per input direction). `mode="outer-inner"` picks each, in all four combinations;
`hvp` forms no Hessian.
"""
from __future__ import annotations

import numpy as np

from .arraylike import ArrayLike
from .grad import gradient
from .errors import ComplexValueError, is_complex_value, several_points_error, type_str, user_location
from .pytree import fill_zeros, finalize, flatten, unflatten
from .dual import real_pairing, zero_tangent
from .tangents import NO_TANGENT, ZERO
from .forward import (flat_leaves, inner_dtype, jacobian, jvp, of_flat, pack_leaves, packed_blocks,
                      tangent_leaves, with_keywords)
from .context import BaseContext
from .tracing import trace

__all__ = ["hessian", "hvp", "choose_mode", "HESSIAN_MODE", "FORWARD_DIRECTIONS"]


def _gradient_of(f, inner="rev"):
    """x -> the gradient of scalar `f` at x, zeros (not ZeroTangent) where no path reaches a leaf;
    by reverse mode, or (``inner="fwd"``) by one forward pass per input direction."""
    if inner == "fwd":
        return lambda x, _f=f: _forward_gradient(_f, x)

    def gradient_of(x, _f=f):
        g = gradient(_f, x)[0]
        spec, _ = flatten(x, argument=True)
        leaves = []
        tangent_leaves(spec, g, "the gradient", leaves)
        return pack_leaves(spec, iter(leaves).__next__)
    return gradient_of


def _forward_gradient(f, x):
    """The gradient of scalar `f` at `x` by forward mode: one jvp per real direction of each
    leaf. A complex entry takes two, along 1 and along i: under autograd's convention (see the
    README) its gradient g pairs as ``df = Re(g·dz)``, so ``Re g`` is the derivative along 1
    and ``-Im g`` the one along i (the gradient of a real function of complex values, which
    no complex Jacobian gives)."""
    spec, leaves = flatten(x, argument=True)
    parts = []
    for k, leaf in enumerate(leaves):
        shape = np.shape(inner_value(leaf))
        n = int(np.prod(shape))
        dtype = np.result_type(inner_dtype(leaf), float)
        units = (1.0, 1j) if dtype.kind == "c" else (1.0,)
        entries = []
        for i in range(n):
            along = []
            for unit in units:
                e = np.zeros(n, dtype=dtype)
                e[i] = unit
                ts = [zero_tangent(v) for v in leaves]
                ts[k] = e.reshape(shape)
                along.append(jvp(f, (x,), (unflatten(spec, ts),))[1])
            entries.append(along[0] - 1j * along[1] if len(along) == 2 else along[0])
        parts.append(np.reshape(np.stack(entries), shape) if n else np.zeros(shape, dtype=dtype))
    return pack_leaves(spec, iter(parts).__next__)


def inner_value(v):
    """The plain value inside traced or dual values."""
    while isinstance(v, ArrayLike):
        v = v._val
    return v


#: how `hessian` and `hvp` compose the two passes when no mode is given: chosen from the shapes
#: (`choose_mode`; benchmarks/README.md, "Second order", has the measurements)
HESSIAN_MODE = "auto"

#: `choose_mode` goes forward over reverse for at most this many directions (the Hessian's
#: input entries; one for `hvp`) when every value f computes is a scalar
FORWARD_DIRECTIONS = 2

#: the modes of `hessian` and `hvp`: "outer-inner"; "rev" and "fwd" name the outer pass over
#: a reverse-mode gradient
_SECOND_ORDER_MODES = {"rev": ("rev", "rev"), "fwd": ("fwd", "rev"), "rev-rev": ("rev", "rev"),
                       "fwd-rev": ("fwd", "rev"), "rev-fwd": ("rev", "fwd"), "fwd-fwd": ("fwd", "fwd")}


def choose_mode(f, x, directions):
    """The mode `hessian` and `hvp` take when none is given, from the shapes.

    Reverse over reverse records the gradient once, every op of it on a tape, and sweeps that
    tape once per direction; forward over reverse computes the gradient on dual numbers once per
    direction and keeps no tape between passes. On a program of scalars (a long recurrence) the
    recording costs more than two passes, and holds several times the memory
    (benchmarks/README.md: a 30,000-op chain of 2 inputs); on arrays the forward rules derived
    from reverse ones (matmul, cholesky, ...) cost more per call than the sweep they replace.
    So: ``"fwd-rev"`` for at most `FORWARD_DIRECTIONS` directions when every value f computes at
    `x` holds one number, ``"rev-rev"`` otherwise. The values are read from f's forward pass,
    traced until its first array or for `PROBE_OPS` ops (a small part of one pass: f's
    first array ends it at once, and a scalar program is taken as one after a thousand ops).
    """
    if directions > FORWARD_DIRECTIONS:
        return "rev-rev"
    try:
        trace(f, x, ctx=_ScalarProbe())
    except _Verdict as verdict:
        return "fwd-rev" if verdict.scalars else "rev-rev"
    except Exception:  # (the mode that runs next raises it again, with its own context)
        return "rev-rev"
    return "fwd-rev"


#: `choose_mode` reads at most this many ops of f's forward pass: a program whose first
#: thousand values are all scalars is taken for a scalar program
PROBE_OPS = 1000


class _Verdict(BaseException):
    """Ends `choose_mode`'s trace early (a BaseException, which f's own ``except Exception``
    does not catch)."""

    def __init__(self, scalars):
        super().__init__(scalars)
        self.scalars = scalars


class _ScalarProbe(BaseContext):
    """Records as a trace does, and stops at f's first value that is not one number, or once
    `PROBE_OPS` ops were all numbers: what `choose_mode` needs of f's forward pass, no more."""

    def record_primitive(self, tape, fn, *args, **kwargs):
        out = super().record_primitive(tape, fn, *args, **kwargs)
        val = tape.ops[-1].val
        if getattr(val, "size", 1 if type(val) in (float, int, complex, bool) else 2) != 1:
            raise _Verdict(False)
        if len(tape.ops) >= PROBE_OPS:
            raise _Verdict(True)
        return out


def _second_order_mode(mode, what, extra=(), f=None, x=None, directions=None):
    """``(outer, inner)`` of a mode of `hessian` or `hvp` ("auto": `choose_mode` for f at x);
    anything else raises, and a number in the place of the mode (``hessian(f, 1.0, 2.0)``: a
    second argument) says how to pass several."""
    if mode == "auto" and not extra:
        mode = choose_mode(f, x, directions)
    modes = _SECOND_ORDER_MODES.get(mode) if isinstance(mode, str) else None
    if modes is not None:
        return modes
    if extra or not isinstance(mode, str):
        raise several_points_error(what, (mode, *extra))
    raise ValueError(f"{what} mode is 'auto' or one of {', '.join(map(repr, _SECOND_ORDER_MODES))} "
                     f"(outer-inner; 'rev' and 'fwd' are 'rev-rev' and 'fwd-rev'), not {mode!r}")


def hessian(f, x, mode: str = HESSIAN_MODE, *extra, **kwargs):
    """The Hessian of a scalar `f` at `x`. Keyword arguments go to `f` as they are (held fixed),
    as `grad` passes them.

    `mode` names the outer pass, then the inner one that gives the gradient: ``"rev-rev"``
    (also ``"rev"``) records the gradient once and takes one reverse pass over it per gradient
    entry; ``"fwd-rev"`` (also ``"fwd"``) one forward-mode pass over the reverse-mode gradient
    per input direction; ``"rev-fwd"`` takes the gradient by forward mode, one pass per input
    direction; ``"fwd-fwd"`` one nested forward pass per pair of input directions, each pair
    once (n(n+1)/2 passes, the Hessian being symmetric). All give the same numbers. The
    default, ``"auto"``, chooses
    from the shapes (`choose_mode`): forward over reverse for at most two input entries when
    f computes only scalars (faster there, and a fraction of the memory), reverse over reverse
    otherwise (benchmarks/hessian.py; benchmarks/README.md). `x` may be a structure, as for `grad`: the Hessian is
    then the structure of `x` holding, at each leaf, the structure of `x` again (see
    `jacobian`), ``H[a][b]`` shaped ``a.shape + b.shape``. For a function of several
    arguments, pass them as one tuple: ``hessian(lambda xs: f(*xs), (a, b))``.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> tapegrad.hessian(lambda x: x[0] ** 2 * x[1], np.array([1.0, 2.0]))
    array([[4., 2.],
           [2., 0.]])
    >>> H = tapegrad.hessian(lambda p: p["a"] ** 2 * p["b"], {"a": 1.0, "b": 2.0}, mode="fwd")
    >>> float(H["a"]["a"]), float(H["a"]["b"]), float(H["b"]["b"])
    (4.0, 2.0, 0.0)
    """
    f = with_keywords(f, kwargs)
    leaves = flatten(x, argument=True)[1]
    if any(map(is_complex_value, leaves)):
        raise ComplexValueError(
            f"the Hessian taken at {user_location()} is with respect to a complex "
            f"{type_str(next(v for v in leaves if is_complex_value(v)))}: the gradient of a real "
            f"function of complex values is not holomorphic, so no complex matrix is its "
            f"derivative; use hvp(f, x, v) for H v (the gradient of the derivative along v), "
            f"or take real and imaginary parts as two real arguments, f(x + 1j*y), for the "
            f"real Hessian"
        )
    outer, inner = _second_order_mode(mode, "hessian", extra, f, x, sum(int(np.size(v)) for v in leaves))
    if outer == inner == "fwd":
        return _forward_hessian(f, x)
    return jacobian(_gradient_of(f, inner), x, mode=outer)


def _forward_hessian(f, x):
    """``hessian(f, x, mode="fwd-fwd")``: the second derivative along each pair of input
    directions, by a forward pass along e_i over one along e_j, for j >= i only, the other half
    by symmetry: n(n+1)/2 nested passes where the forward Jacobian of the forward gradient
    takes n² (for six entries, 21 and 36). Shaped and structured as `jacobian` shapes the
    Jacobian of the gradient."""
    spec, leaves = flatten(x, argument=True)
    if spec.kind == "leaf" and isinstance(x, (np.ndarray, ArrayLike)):
        if not isinstance(x, ArrayLike):
            x = np.asarray(x, dtype=np.result_type(x, float))
        shape = np.shape(x)

        def phi(v, _c=(f, shape)):
            return _c[0](np.reshape(v, _c[1]))
        return np.reshape(_symmetric_hessian(phi, np.reshape(x, -1)), shape + shape)
    flat, shapes, starts, ends = flat_leaves(leaves)
    H = _symmetric_hessian(of_flat(f, spec, leaves, starts, ends, shapes), flat)
    # the gradient's structure, as `jacobian` reads it from the gradient it differentiates: a
    # row of H per leaf of x, a row of zeros per part without a derivative (a string's NoTangent)
    marks = [np.zeros(s) for s in shapes]
    ospec, oleaves = flatten(pack_leaves(spec, iter(marks).__next__))
    rows = {id(m): H[a:b] for m, a, b in zip(marks, starts, ends)}
    oshapes = [np.shape(o) for o in oleaves]
    if len(oleaves) != len(marks):
        H = np.concatenate([rows[id(o)] if id(o) in rows else np.zeros((1, len(flat)))
                            for o in oleaves]) if oleaves else H
    return packed_blocks(H, ospec, oshapes, spec, starts, ends, shapes)


def _symmetric_hessian(phi, v):
    """The n×n Hessian of scalar `phi` at the vector `v`: column i from the derivative along e_i
    of the derivatives along e_i..e_{n-1}; its entries above the diagonal are earlier columns'."""
    n = int(np.shape(v)[0])
    dtype = np.result_type(inner_dtype(v), float)
    units = np.eye(n, dtype=dtype)
    lower = []  # lower[i]: H[i:, i]

    def along(j, _c=(phi, units)):  # the derivative along e_j, as a function of the point
        phi, units = _c
        return lambda w: jvp(phi, (w,), (units[j],))[1]

    for i in range(n):
        derivatives = [along(j) for j in range(i, n)]

        def tail(w, _d=derivatives):
            return np.stack([d(w) for d in _d])
        lower.append(jvp(tail, (v,), (units[i],))[1])
    if n == 0:
        return np.zeros((0, 0), dtype=dtype)
    columns = [np.concatenate([np.stack([lower[k][i - k] for k in range(i)]), lower[i]]) if i else lower[0]
               for i in range(n)]
    return np.stack(columns, axis=-1)


def hvp(f, x, v, mode: str = HESSIAN_MODE, *extra, **kwargs):
    """The Hessian-vector product ``H(x) v`` without forming the Hessian. Keyword arguments go
    to `f` as they are (held fixed), as `grad` passes them.

    `mode` names the outer pass, then the inner one, as for `hessian` (whose ``"auto"``, the
    default, chooses here as for one direction): ``"rev-rev"`` (also ``"rev"``): the gradient
    of ``<grad f(x), v>``; ``"fwd-rev"`` (also
    ``"fwd"``): the forward-mode derivative of the gradient along `v`; ``"rev-fwd"``: the
    gradient of the forward-mode derivative ``jvp(f, x, v)``; ``"fwd-fwd"``: the forward-mode
    derivative along `v` of the forward-mode gradient. The same numbers. `x` and `v` may be
    structures of the same shape, as for `grad`; the result has
    the structure of the gradient. For a complex `x` (autograd's convention, see the README)
    ``H v`` is the gradient of ``Re Σ grad f(x)·v``, the derivative of f along v, and both
    modes agree.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> tapegrad.hvp(lambda x: np.sum(x ** 3), np.array([1.0, 2.0]), np.array([1.0, 0.0]))
    array([6., 0.])
    >>> tapegrad.hvp(lambda x: np.sum(x ** 3), np.array([1.0, 2.0]), np.array([1.0, 0.0]), mode="fwd")
    array([6., 0.])
    """
    f = with_keywords(f, kwargs)
    outer, inner = _second_order_mode(mode, "hvp", extra, f, x, 1)
    if outer == "fwd":
        hv = jvp(_gradient_of(f, inner), (x,), (v,))[1]
    elif inner == "fwd":
        # the gradient of the directional derivative, taken by forward mode
        def derivative_along_v(x, _c=(f, v)):
            f, v = _c
            return jvp(f, (x,), (v,))[1]

        hv = gradient(derivative_along_v, x)[0]
    else:
        hv = _hvp_reverse(f, x, v)
    # H v in the gradient's types (a float for a float, an array for an array), and zeros
    # where no second-order path reaches (a Hessian's entries are numbers, as `hessian`'s)
    return finalize(fill_zeros(hv, x), x)


def _hvp_reverse(f, x, v):
    """H v as the gradient of ``<grad f(x), v>`` (reverse over reverse)."""
    spec, _ = flatten(x, argument=True)
    vs = []
    tangent_leaves(spec, v, "v", vs)

    def along_v(x, _c=(f, spec, vs)):
        f, spec, vs = _c
        gs = []
        tangent_leaves(spec, gradient(f, x)[0], "the gradient", gs)
        # Re Σ g·v, the pairing of autograd's convention: for a complex x too, both modes
        # give the same H v (the gradient of the directional derivative along v)
        return sum(real_pairing(g, d) for g, d in zip(gs, vs) if g is not NO_TANGENT and g is not ZERO)

    return gradient(along_v, x)[0]
