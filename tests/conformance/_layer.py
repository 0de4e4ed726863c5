"""The conformance layer's machinery: references by central differences, plain-type checks,
and one function per entry point.

A case is a function and its arguments. For each case, `Reference` draws a direction `v` for
the arguments (and `vf` for the values the function captures), a cotangent `u` of the
result's structure and a second direction `r`, and computes by central differences of the
plain function alone:

- ``d1``: the derivative of ``phi(x) = Re Σ u·f(x)`` along `v` (arguments) and along `vf`
  (captured values);
- ``jv``: the derivative of ``f`` itself along `v`, leaf by leaf of the result;
- ``d2``: the derivative along `r` of ``x -> <grad phi(x), v>``: the second derivative
  ``<r, H v>`` (central differences of the first derivative, as autograd's ``check_grads``
  takes the second order).

Every entry point (`ENTRY_POINTS`) is checked against these numbers and checked to hand back
plain values (floats, numpy scalars, ndarrays) in the argument's or the result's structure.
An entry point added to tapegrad is added here, and runs on every case at once.
"""
import dataclasses
import zlib

import numpy as np

import tapegrad
from tapegrad import NO_TANGENT, ZERO, Tangent
from tapegrad.checks import _leaves, _substitute
from tapegrad.structures import is_differentiable_leaf, split

#: plain scalar types a result may hold
PLAIN_SCALARS = (float, complex, np.floating, np.complexfloating)

#: the steps of the central differences (relative to the size of the point)
H1 = 1e-6


# --- structures of results ---


def out_leaves(y, path=()):
    """``[(path, leaf), ...]`` of a result: tuples, lists, NamedTuples and dicts walked into."""
    if isinstance(y, dict):
        return [p for k, v in y.items() for p in out_leaves(v, path + (k,))]
    if isinstance(y, (tuple, list)):
        return [p for i, v in enumerate(y) for p in out_leaves(v, path + (i,))]
    parts = registered(y)
    if parts is not None:
        return [p for k, v in zip(parts[1], parts[2]) for p in out_leaves(v, path + (k,))]
    return [(path, y)]


def registered(x):
    """``split(x)`` of a value of a type given to `register_structure`, else None."""
    parts = split(x)
    return parts if parts is not None and parts[0].kind == "registered" else None


def at(t, path):
    """The part of a tangent or value at `path` (through Tangents' fields, dicts and sequences);
    ZERO and NO_TANGENT stand for all their parts."""
    for k in path:
        if t is ZERO or t is NO_TANGENT:
            return t
        if isinstance(t, Tangent):
            t = t.fields.get(k, ZERO)
        elif registered(t) is not None:
            _, keys, items, _ = registered(t)
            t = dict(zip(keys, items))[k]
        else:
            t = t[k]
    return t


def like(y, leaf):
    """The structure of result `y` with ``leaf(path, value)`` at each leaf."""
    def walk(v, path):
        if isinstance(v, dict):
            return {k: walk(x, path + (k,)) for k, x in v.items()}
        if isinstance(v, tuple) and hasattr(v, "_fields"):
            return type(v)(*[walk(x, path + (i,)) for i, x in enumerate(v)])
        if isinstance(v, (tuple, list)):
            return type(v)(walk(x, path + (i,)) for i, x in enumerate(v))
        parts = registered(v)
        if parts is not None:
            kind, keys, items, aux = parts
            return kind.join(type(v), aux, keys, [walk(x, path + (k,)) for k, x in zip(keys, items)])
        return leaf(path, v)
    return walk(y, ())


def pair(a, b, paths):
    """``Re Σ a·b`` over the leaves at `paths` (a may hold ZERO); works on traced values too."""
    total = 0.0
    for path in paths:
        x, y = at(a, path), at(b, path)
        if x is ZERO or x is NO_TANGENT or y is ZERO or y is NO_TANGENT:
            continue
        p = x * y
        total = total + np.sum(np.real(p) if np.iscomplexobj(_inner(p)) else p)
    return total


def _inner(v):
    while isinstance(v, tapegrad.pytree.Boxed):
        v = v._val
    return v


# --- plain types ---


def assert_plain_value(y, where):
    """Every leaf of a result or a tangent of one is a float, a numpy scalar or an ndarray."""
    for path, leaf in out_leaves(y):
        assert type(leaf) is np.ndarray or type(leaf) in (float, complex) or isinstance(leaf, np.generic), \
            f"{where}: the leaf at {list(path)} is {type(leaf).__module__}.{type(leaf).__name__}, not a plain value"


def assert_plain_tangent(g, x, where, path=()):
    """`g` is a tangent of the argument `x`: ZeroTangent/NoTangent, or its structure with plain
    leaves of the argument's type, shape and dtype (a Tangent for an object)."""
    if g is ZERO or g is NO_TANGENT:
        return
    here = f"{where} at {list(path)}"
    if isinstance(x, np.ndarray) and x.dtype.kind in "fc":
        assert type(g) is np.ndarray, f"{here}: {type(g).__module__}.{type(g).__name__} for an ndarray"
        assert g.shape == x.shape and g.dtype == x.dtype, f"{here}: {g.dtype}{g.shape} for {x.dtype}{x.shape}"
    elif type(x) in (float, int):
        assert type(g) is float, f"{here}: {type(g).__module__}.{type(g).__name__} for a {type(x).__name__}"
    elif type(x) is complex:
        assert type(g) is complex, f"{here}: {type(g).__name__} for a complex"
    elif isinstance(x, np.generic) and x.dtype.kind in "fc":
        assert type(g) is type(x), f"{here}: {type(g).__name__} for a {type(x).__name__}"
    elif registered(x) is not None:  # a type of register_structure: its gradient is one too
        assert type(g) is type(x), f"{here}: {type(g).__name__} for a {type(x).__name__}"
        for k, a, b in zip(registered(x)[1], registered(g)[2], registered(x)[2]):
            assert_plain_tangent(a, b, where, path + (k,))
    elif isinstance(x, dict):
        assert type(g) is type(x) or (type(g) is dict and isinstance(x, dict)), f"{here}: {type(g).__name__} for a {type(x).__name__}"
        for k, v in x.items():
            assert_plain_tangent(g.get(k, ZERO) if isinstance(g, dict) else ZERO, v, where, path + (k,))
    elif isinstance(x, (tuple, list)):
        assert type(g) is type(x), f"{here}: {type(g).__name__} for a {type(x).__name__}"
        for i, (a, b) in enumerate(zip(g, x)):
            assert_plain_tangent(a, b, where, path + (i,))
    elif dataclasses.is_dataclass(x) or hasattr(x, "__dict__"):
        if isinstance(g, Tangent):
            fields = tapegrad.pytree.object_fields(x) or {}
            for k, v in g.fields.items():
                assert_plain_tangent(v, fields.get(k), where, path + (k,))
        else:
            raise AssertionError(f"{here}: {type(g).__name__} for an object (a Tangent expected)")


# --- references ---


def _integer_leaves(x, path, seen):
    """``[(key, leaf)]`` of the integer numbers and arrays in `x` at `path` (`_substitute`'s
    keys; `_leaves` leaves them out, as no small step moves them): they take zero tangents."""
    if is_differentiable_leaf(x):
        if not isinstance(x, (bool, np.bool_)) and np.asarray(x).dtype.kind in "iu":
            return [(id(x) if isinstance(x, np.ndarray) else path, x)]
        return []
    whole = split(x, objects=True) if id(x) not in seen else None
    if whole is None:
        return []
    seen.add(id(x))
    _, keys, items, _ = whole
    return [found for k, v in zip(keys, items) for found in _integer_leaves(v, path + (k,), seen)]


#: dtypes whose leaves move in double precision for central differences
_SINGLE = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.complex64))


def _numeric(y) -> bool:
    return isinstance(y, (int, float, complex, np.ndarray, np.generic)) and not isinstance(y, (bool, np.bool_))


def _scale(x):
    return max(1.0, float(np.max(np.abs(x)))) if np.size(x) else 1.0


class Reference:
    """The directions of a case and the central differences of the plain function along them."""

    def __init__(self, case):
        self.case = case
        f, args = case.f, tuple(case.args)
        self.f, self.args = f, args
        rng = np.random.default_rng(zlib.crc32((case.seed or case.id).encode()))
        self.y = f(*args)
        # (a name or a flag among the results has no cotangent: it is kept as it is in the seed)
        self.paths = [p for p, y in out_leaves(self.y) if _numeric(y)]
        self.scalar = not isinstance(self.y, (tuple, list, dict, np.ndarray)) and registered(self.y) is None or \
            isinstance(self.y, np.ndarray) and self.y.ndim == 0

        def draw(x):
            v = rng.standard_normal(np.shape(x))
            if np.iscomplexobj(x):
                v = v + 1j * rng.standard_normal(np.shape(x))
            if isinstance(x, np.ndarray):
                return v.astype(x.dtype)
            return complex(v) if np.iscomplexobj(x) else float(v)

        #: the leaves of (f, *args) that move: {key: (path, value)}; path[0] is 0 for the
        #: values f captures and i + 1 for argument i
        self.leaves = {k: pv for k, pv in _leaves((f, *args)).items() if np.asarray(pv[1]).dtype.kind in "fc"}
        self.v = {k: draw(x) for k, (_, x) in self.leaves.items()}
        self.r = {k: draw(x) for k, (_, x) in self.leaves.items()}
        self.arg_keys = [k for k, (p, _) in self.leaves.items() if p[0] != 0]
        self.f_keys = [k for k, (p, _) in self.leaves.items() if p[0] == 0]
        #: the seed: 1 for a number, a random cotangent of an array or a structure
        self.u = 1.0 if self.scalar else like(self.y, lambda p, y: draw(y) if _numeric(y) else y)
        self.seed = None if self.scalar else self.u
        self.v_args = self.tangents(self.v)
        self.r_args = self.tangents(self.r)
        self.d1 = self._d1(self.arg_keys)
        self.d1f = self._d1(self.f_keys) if self.f_keys else None
        self.jv = self._jv()
        self._d2 = None

    def tangents(self, dirs):
        """The arguments' tuple with each moving leaf replaced by its direction in `dirs`, and
        every other number or float array by zeros: what jvp takes as tangents."""
        new = {k: dirs[k] for k in self.arg_keys}
        seen = set()
        for k, x in (kx for i, a in enumerate(self.args) for kx in _integer_leaves(a, (i + 1,), seen)):
            new[k] = np.zeros(np.shape(x)) if isinstance(x, np.ndarray) else 0.0
        return _substitute((self.f, *self.args), new)[1:]

    def moved(self, keys, dirs, h):
        """``(f, args)`` with each leaf of `keys` moved by h along `dirs`."""
        new = {}
        for k in keys:
            x = self.leaves[k][1]
            m = np.asarray(x, dtype=np.result_type(x, np.float64)) + h * dirs[k]
            # (float32 and float16 leaves move in float64: central differences of the function
            # computed in float32 would be its rounding over the step, not its slope)
            if not isinstance(x, np.ndarray):
                new[k] = m.item()
            else:
                new[k] = m if x.dtype in _SINGLE else m.astype(x.dtype)
        fn, *a = _substitute((self.f, *self.args), new)
        return fn, tuple(a)

    def along(self, tangent, dirs, keys):
        """``Re Σ t·d`` over the leaves of `keys`, t read from the tangent tuple ``(df, *dargs)``."""
        return pair_paths(tangent, [(self.leaves[k][0], dirs[k]) for k in keys])

    def phi(self, fn, a):
        return float(np.real(pair(self.u, fn(*a), self.paths)))

    def step(self, keys=None):
        keys = self.arg_keys if keys is None else keys
        return H1 * max([_scale(self.leaves[k][1]) for k in keys] or [1.0])

    def _d1(self, keys):
        h = self.step(keys)
        return (self.phi(*self.moved(keys, self.v, h)) - self.phi(*self.moved(keys, self.v, -h))) / (2 * h)

    def _jv(self):
        h = self.step()
        (fp, ap), (fm, am) = self.moved(self.arg_keys, self.v, h), self.moved(self.arg_keys, self.v, -h)
        yp, ym = fp(*ap), fm(*am)
        return {p: (np.asarray(at(yp, p), dtype=np.result_type(at(yp, p), float)) - np.asarray(at(ym, p))) / (2 * h)
                for p in self.paths}

    @property
    def d2(self):
        """``<r, H v>`` of phi: central differences along r of ``<grad phi, v>`` (arguments only),
        the first derivative by tapegrad's reverse mode, which the "grad" entry checks."""
        if self._d2 is None:
            h = self.step()
            ends = []
            for sign in (1, -1):
                fn, a = self.moved(self.arg_keys, self.r, sign * h)
                _, grads = tapegrad.grad(fn, *a, seed=self.seed)
                ends.append(self.along(grads, self.v, self.arg_keys))
            self._d2 = (ends[0] - ends[1]) / (2 * h)
        return self._d2


def pair_paths(t, items):
    """``Re Σ t[path]·d`` over ``items = [(path, d), ...]`` (ZERO parts add nothing); traced too."""
    total = 0.0
    for path, d in items:
        x = at(t, path)
        if x is ZERO or x is NO_TANGENT:
            continue
        p = x * d
        total = total + np.sum(np.real(p) if np.iscomplexobj(_inner(p)) else p)
    return total


def close(got, want, what, rtol=1e-5, atol=1e-6):
    """Two numbers agree (`want` from central differences)."""
    got, want = complex(got), complex(want)
    assert abs(got - want) <= atol * max(1.0, abs(want)) + rtol * abs(want), \
        f"{what}: tapegrad gives {got!r}, central differences {want!r}"


def close_arrays(got, want, what, rtol=1e-5, atol=1e-6):
    """Two arrays agree (`want` from central differences)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, central differences {want.shape}"
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    assert np.allclose(got, want, rtol=rtol, atol=atol * scale), \
        f"{what}: tapegrad gives {got!r}, central differences {want!r}"
