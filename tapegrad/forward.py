"""Forward mode's entry points: `jvp` and `jacobian` (in either mode).

`jvp(f, args, tangents)` runs `f` on Duals (`tapegrad.dual`) and gives the value and the
tangent of its result; `jacobian(f, x, mode="fwd" | "rev")` stacks one jvp per input
direction or one pullback per output entry. Both take and give structures as `grad` does.
The second-order entry points, `hessian` and `hvp`, are in `tapegrad.second_order`.
"""
from __future__ import annotations

import functools

import numpy as np

from .arraylike import ArrayLike, new_epoch, primitive
from .buffers import Buffer, TracedBuffer, unbuffer
from .grad import pullback
from .errors import (ComplexValueError, is_complex_value, restore_warnings, route_warnings, several_points_error,
                     too_deep_error, type_str, user_location)
from .hints import plain_store_error
from .literals import dual_literals
from .pytree import flatten, unflatten
from .structures import parts_at, split, structure_of
from .tangents import NO_TANGENT, ZERO, tangent_structure
from .tracer import plain_scalar
from .dual import Dual, dual_value, zero_tangent

__all__ = ["jvp", "jacobian", "tangent_of_result", "new_tag", "inner_dtype", "pack_leaves", "tangent_leaves",
           "flat_leaves", "of_flat", "packed_blocks", "integer_valued", "with_keywords"]


def tangent_of_result(out, tag=None):
    """The tangent carried by a forward-mode result: a Dual's variation (of the Duals of `tag`,
    if given), zeros of a constant's shape and dtype, in the same structure (tuple, list,
    NamedTuple, dict; a `Tangent` for a dataclass or a Tangent), NoTangent for what has none."""
    return _walk_result(out, lambda v: _tangent_leaf(v, tag), True)


def _tangent_leaf(v, tag):
    if type(v) is Dual and (tag is None or v.tag == tag):
        return v.delta
    if isinstance(v, (np.ndarray, np.generic, ArrayLike, int, float, complex)):
        return zero_tangent(v)
    return NO_TANGENT


def _primal_of(out, tag=None):
    """`out` with every Dual (of `tag`, if given) replaced by its value (through containers)."""
    return _walk_result(out, lambda v: dual_value(v, tag), False)


def _walk_result(out, leaf, tangent, inside=()):
    """`out` with `leaf` applied at each leaf of its containers (`tapegrad.structures`: tuples,
    lists, NamedTuples, dicts, deques, Tangents, registered types, and dataclasses and other
    objects by their fields; as a `tangent`, an object becomes a Tangent). A container met
    again inside itself (`inside`: the ids of those around it) is a leaf."""
    t = type(out)
    if t is Dual:
        return leaf(out)
    if t is Buffer or t is TracedBuffer:  # a preallocated buffer: the array or Dual it holds
        return leaf(unbuffer(out))
    whole = split(out, subclasses=True, objects=True)
    if whole is None or id(out) in inside:
        return leaf(out)
    s, keys, items, aux = whole
    inside = (*inside, id(out))
    items = [_walk_result(v, leaf, tangent, inside) for v in items]
    if tangent:
        s, t, aux = tangent_structure(s, t, aux)
    return s.join(t, aux, keys, items)


def _duals(arg, tangent, i, tag):
    """Argument `arg` with each float leaf made a Dual of `tag` carrying the tangent of the same place."""
    spec, leaves = flatten(arg, argument=True)
    if spec.kind == "leaf":
        return Dual(_numpy_number(arg), _checked(arg, tangent, f"argument {i}"), tag)
    ts = []
    try:
        tangent_leaves(spec, tangent, f"argument {i}", ts)
    except RecursionError:
        raise too_deep_error(f"the tangent of argument {i}") from None
    return unflatten(spec, [Dual(_numpy_number(x), t, tag) for x, t in zip(leaves, ts)])


def _numpy_number(x):
    """A Python float or complex as numpy's: the rules' arithmetic on it then follows numpy
    (``1 / x`` at 0.0 is inf with a warning, as in reverse mode) rather than raising
    ZeroDivisionError."""
    t = type(x)
    return np.float64(x) if t is float else np.complex128(x) if t is complex else x


def new_tag():
    """A tag for the Duals of one forward-mode pass, later than every tag and trace before it."""
    return new_epoch()


def tangent_leaves(spec, t, where, out, seen=None):
    """The tangents of the leaves of `spec`, in `flatten`'s order: a spec met again (a shared
    array, a list that holds itself) has its leaves once, as `flatten` gave them."""
    if spec.kind == "static":
        return
    seen = set() if seen is None else seen
    if id(spec) in seen:
        return
    seen.add(id(spec))
    if spec.kind == "leaf":
        out.append(_checked(spec.primal, t, where))
        return
    parts = [t] * len(spec.keys) if t is ZERO or t is NO_TANGENT else parts_at(t, spec.keys, ZERO)
    if parts is None:
        raise TypeError(f"the tangent of {where} is {type(t).__name__}, where the value is a "
                        f"{spec.cls.__name__}: pass a tangent of the same structure")
    for k, child, sub in zip(spec.keys, spec.children, parts):
        tangent_leaves(child, sub, f"{where}[{k!r}]", out, seen)


def _checked(x, t, where):
    if t is ZERO:
        return zero_tangent(x)
    if t is None:
        raise TypeError(f"the tangent of {where} is None: pass a tangent of its shape and type, or "
                        f"tapegrad.ZERO (or zeros) where it does not move")
    if np.shape(x) != np.shape(t):
        raise ValueError(f"the tangent of {where} has shape {np.shape(t)} for a value of shape {np.shape(x)}")
    if np.iscomplexobj(t) and not np.iscomplexobj(x):
        # a real value moves along real directions only: the imaginary part would be dropped
        # by some rules and kept by others
        raise ValueError(f"the tangent of {where} is complex for a real value; pass a real tangent, "
                         f"or make the value complex (x.astype(complex)) to move it off the real line")
    return t


def with_keywords(f, kwargs):
    """`f` with keyword arguments bound (held fixed, not differentiated), for the entry points
    that pass ``**kwargs`` on to `f` as `grad` does; `f` itself when there are none."""
    return functools.partial(f, **kwargs) if kwargs else f


def jvp(f, args, tangents, **kwargs):
    """Value and Jacobian-vector product: ``jvp(f, (x, ...), (v, ...)) -> (f(x), J v)``.

    Keyword arguments go to `f` as they are (held fixed), as `grad` passes them.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> y, dy = tapegrad.jvp(lambda x, y: x * np.sin(y), (2.0, 0.0), (1.0, 1.0))
    >>> float(y), float(dy)
    (0.0, 2.0)
    """
    if len(args) != len(tangents):
        raise TypeError(f"jvp takes one tangent per argument: {len(args)} args, {len(tangents)} tangents")
    f = with_keywords(f, kwargs)
    tag = new_tag()
    duals = [_duals(a, t, i, tag) for i, (a, t) in enumerate(zip(args, tangents))]
    token = route_warnings()  # numpy's warnings inside rules point at the user's line
    with dual_literals():  # np.array([d1, d2]) of dual values, buffers from np.zeros & co.
        try:
            out = f(*duals)
        except ValueError as exc:
            error = plain_store_error(exc, "dual")
            if error is None:
                raise
            raise error from exc
        finally:
            restore_warnings(token)
    return _plain(_primal_of(out, tag)), _plain(tangent_of_result(out, tag))


def _plain(out):
    """0-d results as numbers, as `grad` gives them, and arrays as plain ndarrays (not the
    subclasses rules compute with), also inside containers."""
    return _walk_result(out, _plain_leaf, False)


def _plain_leaf(out):
    if isinstance(out, np.ndarray) and type(out) is not np.ndarray:
        return out.view(np.ndarray)
    return plain_scalar(out)


def jacobian(f, x, mode: str | None = None, holomorphic: bool = False, **kwargs):
    """The Jacobian of `f` at `x`, shaped ``f(x).shape + x.shape``. Keyword arguments go to `f`
    as they are (held fixed), as `grad` passes them.

    ``mode="fwd"`` makes one dual pass per input direction; ``mode="rev"`` one pullback per
    output. Forward is cheaper when there are fewer inputs than outputs (a tall Jacobian),
    reverse when there are fewer outputs (a wide one). Without a mode, `jacobian` chooses from
    the shapes: forward for a single input entry; otherwise it records the pullback, which
    gives the output's size m, keeps reverse when m is at most the input's size n, and
    otherwise drops the recording and goes forward (at the cost of that one recording; pass the
    mode to spare it). Both modes give the same numbers and differentiate again:
    ``jacobian(lambda x: jacobian(f, x), x)`` is the array of second derivatives.

    `x` and the result of `f` may be structures, as for `grad`: tuples, lists, dicts,
    NamedTuples, dataclasses and objects (by their float leaves). The Jacobian then has the
    structure of the result, and in place of each of its leaves the structure of `x` (a
    `Tangent` for an object), holding the block ``d result_leaf / d x_leaf`` shaped
    ``result_leaf.shape + x_leaf.shape`` (JAX's convention).

    Complex values (autograd's convention, see the README): a complex result of a real `x` gives
    the complex Jacobian ``df/dx`` in both modes. A complex `x` needs ``holomorphic=True``
    (JAX's rule): the Jacobian is then ``df/dz``, the same in both modes; for a function that is
    not holomorphic no complex matrix is its derivative, and it raises `ComplexValueError`.
    `hessian` of a real function of a complex `x` raises too: use `hvp`.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> f = lambda x: np.array([1.0, 2.0]) * x[0] * x[1]
    >>> tapegrad.jacobian(f, np.array([3.0, 4.0]), mode="fwd")
    array([[4., 3.],
           [8., 6.]])
    >>> J = tapegrad.jacobian(lambda p: {"s": p["a"] * p["b"]}, {"a": 2.0, "b": np.ones(2)})
    >>> J["s"]["a"], J["s"]["b"]
    (array([1., 1.]), array([[2., 0.],
           [0., 2.]]))
    """
    if mode not in ("fwd", "rev", None):
        if not isinstance(mode, str):  # (jacobian(f, x1, x2): a function of two arguments)
            raise several_points_error("jacobian", (mode,) if holomorphic is False else (mode, holomorphic))
        raise ValueError(f"jacobian mode is 'fwd', 'rev' or None (chosen from the shapes), not {mode!r}")
    f = with_keywords(f, kwargs)
    spec, leaves = flatten(x, argument=True)
    if not holomorphic and any(map(is_complex_value, leaves)):
        raise ComplexValueError(
            f"the Jacobian taken at {user_location()} is with respect to a complex "
            f"{type_str(next(v for v in leaves if is_complex_value(v)))}: a complex Jacobian matrix "
            f"(df/dz) exists only for a holomorphic function; pass holomorphic=True if it is "
            f"(as JAX's jacfwd/jacrev ask), or take real and imaginary parts as two real "
            f"arguments, f(x + 1j*y), for the full real Jacobian"
        )
    if spec.kind == "leaf" and isinstance(x, (np.ndarray, ArrayLike)):
        out = _array_jacobian(f, x, mode)
        if out is not None:
            return out
    flat, shapes, starts, ends = flat_leaves(leaves)
    seen = []

    # the constants ride in a default argument: reverse mode differentiates a closure's leaves
    def flat_f(v, _c=(of_flat(f, spec, leaves, starts, ends, shapes), seen)):
        f_flat, seen = _c
        out = f_flat(v)
        ospec, oleaves = flatten(out)
        seen.append((ospec, [np.shape(o) for o in oleaves]))
        # (a part with no derivative, the NoTangent of a string in a dict: a row of zeros)
        pieces = [np.zeros(1) if o is NO_TANGENT or o is ZERO else np.reshape(o, -1) for o in oleaves]
        return pieces[0] if len(pieces) == 1 else np.concatenate(pieces) if pieces else np.zeros(0)

    J = _array_jacobian(flat_f, flat, mode, structured=True)
    ospec, oshapes = seen[-1]
    return packed_blocks(J, ospec, oshapes, spec, starts, ends, shapes)


@primitive(traceable=False)
def integer_valued(x, n):
    """The integer `n`, varying as `x` (an entry of `jacobian`'s flat vector) varies: what an
    integer leaf of a structure reaches `f` as, so that a count (``range(p["steps"])``, an
    index) stays an integer while an integer used as a number is still differentiated, as
    `grad` differentiates an int argument (its rule passes the cotangent on to `x`)."""
    return n


def flat_leaves(leaves):
    """``(flat, shapes, starts, ends)``: the leaves of a structure in one vector (of their common
    float dtype), each leaf's shape, and where its entries start and end in the vector."""
    shapes = [np.shape(v) for v in leaves]
    sizes = [int(np.prod(s)) for s in shapes]
    dtype = np.result_type(*[inner_dtype(v) for v in leaves], float)
    flat = (np.concatenate([np.reshape(v, -1) for v in leaves]) if len(leaves) > 1
            else np.reshape(leaves[0], -1) if leaves else np.zeros(0))
    if isinstance(flat, np.ndarray):
        flat = flat.astype(dtype)
    ends = np.cumsum(sizes).tolist()
    return flat, shapes, [0] + ends[:-1], ends


def of_flat(f, spec, leaves, starts, ends, shapes):
    """`f` of a structure (`spec`, its `leaves`) as a function of the structure's flat vector
    (`flat_leaves`): each entry range in its leaf's shape, and an integer leaf (a Python int, a
    numpy integer) as `integer_valued`, an integer that varies with its entry."""
    # (the constants ride in a default argument: reverse mode differentiates a closure's leaves)
    def f_of_flat(v, _c=(f, spec, leaves, starts, ends, shapes)):
        f, spec, leaves, starts, ends, shapes = _c
        return f(unflatten(spec, [
            integer_valued(np.reshape(v[a:b], s), leaf) if isinstance(leaf, (int, np.integer))
            and not isinstance(leaf, bool) else np.reshape(v[a:b], s)
            for leaf, a, b, s in zip(leaves, starts, ends, shapes)]))
    return f_of_flat


def packed_blocks(J, ospec, oshapes, spec, starts, ends, shapes):
    """The matrix `J` (result entries by input entries) as a structured Jacobian: the structure
    of the result (`ospec`, its leaves shaped `oshapes`) holding at each leaf the structure of
    the input (`spec`) of blocks ``result_leaf.shape + input_leaf.shape``."""
    rows = []
    r = 0
    for oshape in oshapes:
        m = int(np.prod(oshape))
        blocks = [np.reshape(J[r:r + m, a:b], oshape + s) for a, b, s in zip(starts, ends, shapes)]
        rows.append(pack_leaves(spec, iter(blocks).__next__))
        r += m
    return pack_leaves(ospec, iter(rows).__next__)


def inner_dtype(v):
    while isinstance(v, ArrayLike):
        v = v._val
    return np.result_type(v)


_PACKING = object()  # in `pack_leaves`'s memo: a spec whose parts are being packed


def pack_leaves(spec, take, memo=None):
    """The structure `spec` describes with `take()` at each leaf, as a tangent (NoTangent where
    static). A spec met again (a shared array) gives the same value, as `flatten` gave one leaf."""
    if spec.kind == "static":
        return NO_TANGENT
    memo = {} if memo is None else memo
    done = memo.get(id(spec))
    if done is _PACKING:
        raise TypeError(
            f"the Jacobian or Hessian at {user_location()} is taken with respect to an argument "
            f"that holds itself (a list or dict inside itself), and a block matrix of such a "
            f"structure would be infinite; pass the numbers as an array or a structure without "
            f"a cycle (grad, jvp and check_grad take cyclic arguments)"
        )
    if done is not None:
        return done
    if spec.kind == "leaf":
        out = take()
    else:
        memo[id(spec)] = _PACKING
        out = spec.pack([pack_leaves(c, take, memo) for c in spec.children], tangent=True)
    memo[id(spec)] = out
    return out


def _array_jacobian(f, x, mode, structured=False):
    """The Jacobian of `f` from an array to an array (None if the result is a structure)."""
    if not isinstance(x, ArrayLike):
        x = np.asarray(x, dtype=np.result_type(x, float))
    n = int(np.prod(np.shape(x)))
    if mode is None:
        if n <= 1:
            mode = "fwd"  # (one dual pass: never more than one pullback)
        else:
            y, back = pullback(f, x)
            if np.size(y) <= n or (not structured and _is_structure(y)):
                return _reverse_jacobian(f, x, structured, y, back)
            del y, back  # a tall Jacobian: fewer dual passes than pullbacks
            mode = "fwd"
    if mode == "fwd":
        cols = []
        for i in range(n):
            e = np.zeros(n, dtype=np.result_type(inner_dtype(x), float))
            e[i] = 1.0
            y, dy = jvp(f, (x,), (e.reshape(np.shape(x)),))
            if not structured and _is_structure(y):
                return None
            cols.append(np.reshape(dy, -1) if np.ndim(dy) else np.reshape(dy, (1,)))
        if n == 0:
            y = f(x)
            if not structured and _is_structure(y):
                return None
            return np.zeros(np.shape(y) + np.shape(x))
        return np.reshape(np.stack(cols, axis=-1), np.shape(y) + np.shape(x))
    return _reverse_jacobian(f, x, structured, *pullback(f, x))


def _reverse_jacobian(f, x, structured, y, back):
    """`_array_jacobian` by reverse mode, given the pullback `back` of `f` at `x` and its value `y`."""
    if not structured and _is_structure(y):
        return None
    m = int(np.prod(np.shape(y)))
    real_x_complex_y = is_complex_value(y) and not is_complex_value(x)
    rows = []
    for j in range(m):
        e = np.zeros(m, dtype=np.result_type(inner_dtype(y), float))
        e[j] = 1.0
        seed = e.reshape(np.shape(y)) if np.ndim(y) else e[0]
        g = back(seed)[1]
        g = zero_tangent(x) if g is ZERO else g
        if real_x_complex_y:
            # the seed 1 gives the gradient of Re y_j, and -1j that of Im y_j: together dy_j/dx
            g_im = back(-1j * seed)[1]
            g = g + 1j * (zero_tangent(x) if g_im is ZERO else g_im)
        rows.append(np.reshape(g, -1))
    if m == 0:
        return np.zeros(np.shape(y) + np.shape(x))
    return np.reshape(np.stack(rows, axis=0), np.shape(y) + np.shape(x))


def _is_structure(y):
    return structure_of(y, subclasses=True) is not None
