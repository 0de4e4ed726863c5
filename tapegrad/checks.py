"""Numerical checks: central differences, and the comparison of reverse mode against them."""
from __future__ import annotations

import numpy as np

from .dual import Dual
from .forward import jvp, new_tag, tangent_leaves, tangent_of_result
from .grad import grad
from .literals import dual_literals
from .pytree import flatten, unflatten
from .solvernoise import advice, note_adaptive_solver, note_stopping_point, unwatch, watch
from .structures import is_differentiable_leaf, parts_at, split
from .tangents import NO_TANGENT, ZERO

__all__ = ["ngradient", "check_grad", "note_adaptive_solver", "note_stopping_point"]

def _is_diff_arg(x):
    if isinstance(x, bool):
        return False
    if isinstance(x, (float, int, complex, np.floating, np.complexfloating)):
        return True
    return isinstance(x, np.ndarray) and x.dtype.kind in "fc"


def _with(args, i, value):
    out = list(args)
    out[i] = value
    return out


def _restore(x, arr):
    """Give a perturbed float64 copy back the type of the argument it stands for."""
    if isinstance(x, np.ndarray):
        return arr.astype(x.dtype)
    return float(arr)


def ngradient(f, *args, eps=1e-6):
    """Central differences of a scalar `f` with respect to each float argument.

    Returns one gradient per argument (None for an argument that is not a float or a float
    array). Each element is perturbed by ``eps * max(1, |x|)`` in both directions.

    Examples
    --------
    >>> import tapegrad
    >>> g = tapegrad.ngradient(lambda a, b: a * b, 2.0, 3.0)
    >>> [round(v, 6) for v in g]
    [3.0, 2.0]
    """
    grads = []
    for i, x in enumerate(args):
        if not _is_diff_arg(x):
            grads.append(None)
            continue
        base = np.array(x, dtype=np.float64)
        g = np.zeros_like(base)
        flat = base.reshape(-1)
        gflat = g.reshape(-1)
        for k in range(flat.size):
            h = eps * max(1.0, abs(flat[k]))
            old = flat[k]
            flat[k] = old + h
            fp = f(*_with(args, i, _restore(x, base)))
            flat[k] = old - h
            fm = f(*_with(args, i, _restore(x, base)))
            flat[k] = old
            gflat[k] = (np.float64(fp) - np.float64(fm)) / (2 * h)
        grads.append(float(g) if g.ndim == 0 and not isinstance(x, np.ndarray) else g)
    return tuple(grads)


_TOLERANCE = {np.dtype(np.float64): (1e-6, 1e-7), np.dtype(np.float32): (2e-2, 2e-3),
              np.dtype(np.float16): (1e-1, 1e-2)}


def _leaves(x, path=(), out=None, seen=None):
    """Differentiable leaves of an argument as {key: (first path, value)}; a shared array is one key.
    Containers are walked as `grad` walks them (`tapegrad.structures`)."""
    out = {} if out is None else out
    seen = set() if seen is None else seen
    if is_differentiable_leaf(x):
        if np.asarray(x).dtype.kind in "fc":  # integers cannot be moved by small steps
            key = id(x) if isinstance(x, np.ndarray) else path
            out.setdefault(key, (path, x))
        return out
    if id(x) in seen:
        return out
    whole = split(x, objects=True)
    if whole is not None:
        seen.add(id(x))
        _, keys, items, _ = whole
        for k, v in zip(keys, items):
            _leaves(v, path + (k,), out, seen)
    return out


_BUILDING = object()  # in `_substitute`'s memo: a tuple or an object whose copy is being made


def _substitute(x, new, path=(), memo=None):
    """A copy of `x` with leaves replaced: `new` maps a key of `_leaves` to its new value.

    A container met twice is copied once (`memo`), so shared and cyclic arguments keep their
    shape: a list that holds itself is copied into a list that holds its copy.
    """
    if is_differentiable_leaf(x):
        key = id(x) if isinstance(x, np.ndarray) else path
        return new.get(key, x)
    whole = split(x, objects=True)
    if whole is None:
        return x
    memo = {} if memo is None else memo
    done = memo.get(id(x))
    if done is _BUILDING:
        raise TypeError(
            f"check_grad cannot rebuild {_where(path)}: it holds itself through a "
            f"{type(x).__name__}, which is built only after its contents; make the cycle go "
            f"through a list or a dict"
        )
    if done is not None:
        return done
    s, keys, items, aux = whole
    if s.fill is not None:  # a mutable container: made first, so that a cycle meets the copy
        out = memo[id(x)] = s.join(type(x), aux, (), [])
        s.fill(out, keys, [_substitute(v, new, path + (k,), memo) for k, v in zip(keys, items)])
        return out
    memo[id(x)] = _BUILDING
    out = s.join(type(x), aux, keys, [_substitute(v, new, path + (k,), memo) for k, v in zip(keys, items)])
    memo[id(x)] = out
    return out


def _where(path):
    """A path of `_substitute` (its first key: 0 for f, i + 1 for argument i) in words."""
    what = "the values f captures" if path[0] == 0 else f"argument {path[0] - 1}"
    return f"{what} at {list(path[1:])}" if len(path) > 1 else what


def _tangent_at(t, path):
    for k in path:
        if t is ZERO or t is NO_TANGENT:
            return t
        t = parts_at(t, (k,), ZERO)[0]
    return t


def check_grad(f, *args, seed=None, rng=None, rtol=None, atol=None, eps=None, modes=("rev", "fwd"), order=1):
    """Check reverse-mode gradients of `f` against central differences along a random direction.

    For each differentiable leaf of the arguments (numbers and float arrays, also inside
    tuples, lists, dicts, dataclasses, objects and the closure of `f`) a random direction is
    drawn; the directional derivative ``(g(x + h v) - g(x - h v)) / 2h`` is compared with
    ``<grad, v>``, where ``g`` is `f` for a scalar result and ``<u, f>`` for a random `u` (or
    `seed`) otherwise, which checks the vector-Jacobian product. A complex leaf moves along a
    random complex direction and ``<a, b>`` is ``Re Σ a·b`` (autograd's convention, see the
    README). The differences are taken in
    float64; tolerances follow the leaves' dtype (float32 is looser). Also checks that each
    array gradient has its leaf's shape and dtype, and (with ``"fwd"`` in `modes`, the
    default) that forward mode, a dual-number pass along the same direction, agrees too.
    Raises AssertionError with the numbers when they disagree. When `f` ran an adaptive solver
    (``tapegrad.scipy.integrate.odeint``), central differences of its result carry the solver's
    error divided by `eps`: the message then says so, with the `eps`, `rtol` and `atol` to
    check with (or the solver tolerances to tighten).

    ``order=2`` (or higher) then checks the derivative functions themselves, as autograd's
    ``check_grads(f, modes, order)`` does: for each mode in `modes`, the directional
    derivative ``x -> <grad f(x), v>`` (``"rev"``) or ``x -> <u, jvp(f, x, v)>`` (``"fwd"``),
    along fixed random `v` and `u`, is checked in every mode at one order less. With both modes
    and ``order=2`` that covers reverse over reverse, forward over reverse, reverse over
    forward and forward over forward. The derivative functions take the positional arguments
    that hold numbers (floats, complex numbers, float arrays, and tuples, lists, dicts and
    objects of them, each leaf along a direction of its own); other arguments are held fixed.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> tapegrad.check_grad(lambda x: np.sum(np.sin(x) ** 2), np.linspace(0, 1, 5))
    >>> tapegrad.check_grad(lambda x: np.sum(np.sin(x) ** 2), np.linspace(0, 1, 5), order=3)
    """
    rng = np.random.default_rng(0) if rng is None else rng
    token = watch()  # the solvers f runs note how far off their results are (None inside a check)
    try:
        _check_first_order(f, args, seed, rng, rtol, atol, eps, modes)
        for mode in modes if order > 1 else ():
            derivative = _derivative(f, args, seed, rng, mode)
            try:
                check_grad(derivative, *args, rng=rng, rtol=rtol, atol=atol, eps=eps, modes=modes, order=order - 1)
            except AssertionError as e:
                kind = "reverse" if mode == "rev" else "forward"
                raise AssertionError(f"of the {kind}-mode derivative: {e}") from None
    except AssertionError as e:
        said = advice(eps) if token is not None else ""
        if not said:
            raise
        raise AssertionError(f"{e}{said}") from None
    finally:
        unwatch(token)


def _derivative(f, args, seed, rng, mode):
    """A scalar directional derivative of `f` as a function of the same arguments (see check_grad)."""
    if mode not in ("rev", "fwd"):
        raise ValueError(f"check_grad modes are 'rev' and 'fwd', not {mode!r}")
    # every argument that holds a number: a float, an array, or a structure of them (a dict of
    # parameters: its direction is a structure of the same kind, paired with its gradient leaf
    # by leaf)
    specs = {i: flatten(a, argument=True) for i, a in enumerate(args) if not _is_diff_arg(a)}
    where = [i for i, a in enumerate(args) if _is_diff_arg(a) or i in specs and specs[i][1]]
    if not where:
        raise ValueError("check_grad(order > 1) needs an argument to differentiate: a float, a complex "
                         "number, a float array, or a structure holding them")
    y0 = f(*args)
    if seed is None:
        seed = _random_seed(rng, y0)
    directions = {i: (_direction(rng, args[i]) if i not in specs else
                      unflatten(specs[i][0], [_direction(rng, leaf) for leaf in specs[i][1]])) for i in where}

    # the constants ride in a default argument: check_grad differentiates a closure's leaves too
    def reverse_derivative(*a, _c=(f, where, seed, directions, specs)):
        f, where, seed, directions, specs = _c
        _, grads = grad(f, *a, seed=seed)
        total = 0.0
        for i in where:
            g = grads[i + 1]
            if g is ZERO or g is NO_TANGENT:
                continue
            if i in specs:  # a structure: its gradient's leaves with the direction's
                gs, ds = [], []
                tangent_leaves(specs[i][0], g, "the gradient", gs)
                tangent_leaves(specs[i][0], directions[i], "the direction", ds)
                for gl, dl in zip(gs, ds):
                    if gl is not ZERO and gl is not NO_TANGENT:
                        total = total + np.sum(_real_part(gl * dl))
            else:
                total = total + np.sum(_real_part(g * directions[i]))
        return total

    def forward_derivative(*a, _c=(f, where, seed, directions)):
        f, where, seed, directions = _c

        def of_floats(*xs):
            full = list(a)
            for i, x in zip(where, xs):
                full[i] = x
            return f(*full)
        _, dy = jvp(of_floats, tuple(a[i] for i in where), tuple(directions[i] for i in where))
        return _paired(seed, dy)

    return reverse_derivative if mode == "rev" else forward_derivative


def _random_seed(rng, y):
    """None for a number; for any other result a random cotangent in its structure (an array,
    a tuple, a dict, a type given to `register_structure`), each leaf of its leaf's shape."""
    if split(y, subclasses=True) is None and np.ndim(y) == 0:
        return None
    spec, leaves = flatten(y)
    return unflatten(spec, [rng.standard_normal(np.shape(v)).astype(np.result_type(v, np.float64))
                            for v in leaves])


def _paired(seed, y):
    """``Re Σ seed·y`` over the leaves of a result `y` and its `seed` (the same structure; a
    ZeroTangent part pairs to nothing): what a seed's gradient is the gradient of. `y` itself
    for a number's None seed. Traced values pair too (a derivative function is traced)."""
    if seed is None:
        return y
    if seed is ZERO or seed is NO_TANGENT:
        return 0.0
    parts = split(y, subclasses=True)
    if parts is None:
        return np.sum(_real_part(y * seed))
    _, keys, items, _ = parts
    total = 0.0
    for s, v in zip(parts_at(seed, keys, ZERO), items):
        total = total + _paired(s, v)
    return total


def _real_part(p):
    """Re p for a complex product (the pairing Re Σ a·b of autograd's convention), taken before
    the sum; a real one as it is."""
    return np.real(p) if np.iscomplexobj(p) else p


def _draw(rng, x):
    """A random direction of `x`'s shape, in float64 (complex128 for a complex `x`: both parts move)."""
    v = rng.standard_normal(np.shape(x))
    if np.iscomplexobj(x):
        v = v + 1j * rng.standard_normal(np.shape(x))
    return v


def _direction(rng, x):
    """A random direction with the shape and dtype of argument `x`."""
    v = _draw(rng, x)
    if isinstance(x, np.ndarray):
        return v.astype(x.dtype)
    return complex(v) if np.iscomplexobj(x) else float(v)


def _check_first_order(f, args, seed, rng, rtol, atol, eps, modes):
    y0 = f(*args)
    if seed is None:
        seed = _random_seed(rng, y0)
    _, grads = grad(f, *args, seed=seed)

    def scalar_f(fn, *a):
        # Re Σ seed·y: what a seed's gradient is of (autograd's convention for complex values)
        return _paired(seed, fn(*a))

    everything = (f, *args)
    leaves = _leaves(everything)
    dtypes = [np.asarray(x).dtype for _, x in leaves.values()]
    low = any(d in (np.float32, np.float16) for d in dtypes)
    if eps is None:
        eps = 1e-3 if low else 1e-6
    worst = max(dtypes, key=lambda d: _TOLERANCE.get(d, (1e-6, 0))[0], default=np.dtype(np.float64))
    rt, at = _TOLERANCE.get(worst, (1e-6, 1e-7))
    rtol = rt if rtol is None else rtol
    atol = at if atol is None else atol

    directions = {}
    predicted = 0.0
    for key, (path, x) in leaves.items():
        g = _tangent_at(grads, path)
        if g is NO_TANGENT:
            if path[0] == 0:
                continue  # a leaf of f that f does not expose for differentiation
            raise AssertionError(f"gradient at {path} of a float leaf is NoTangent(): {x!r}")
        v = _draw(rng, x)
        directions[key] = (x, v)
        if g is ZERO:
            continue
        if isinstance(x, np.ndarray):
            assert np.shape(g) == x.shape, f"gradient shape {np.shape(g)} != leaf shape {x.shape} at {path}"
            assert g.dtype == x.dtype, f"gradient dtype {g.dtype} != leaf dtype {x.dtype} at {path}"
        # Re Σ g·v: the first-order change along v (no conjugate: autograd's convention)
        predicted += float(np.real(np.sum(np.asarray(g, dtype=np.result_type(g, np.float64)) * v)))

    def at_step(h):
        new = {}
        for key, (x, v) in directions.items():
            moved = np.asarray(x, dtype=np.result_type(x, np.float64)) + h * v
            new[key] = moved if isinstance(x, np.ndarray) else moved.item()
        fn, *a = _substitute(everything, new)
        return np.float64(scalar_f(fn, *a))

    numeric = (at_step(eps) - at_step(-eps)) / (2 * eps)
    if not np.isclose(predicted, numeric, rtol=rtol, atol=atol * max(1.0, abs(numeric))):
        raise AssertionError(
            f"reverse mode gives {float(predicted)!r} along a random direction, central "
            f"differences give {float(numeric)!r} (rtol={rtol}, atol={atol})"
        )
    if "fwd" in modes:
        tag = new_tag()
        duals = {key: Dual(x, v.astype(np.result_type(x, float)) if isinstance(x, np.ndarray) else np.asarray(v).item(), tag)
                 for key, (x, v) in directions.items()}
        fn, *a = _substitute(everything, duals)
        with dual_literals():
            out = fn(*a)
        dy = tangent_of_result(out, tag)
        forward = float(np.real(_paired(seed, dy)))
        if not np.isclose(forward, numeric, rtol=rtol, atol=atol * max(1.0, abs(numeric))):
            raise AssertionError(
                f"forward mode gives {float(forward)!r} along a random direction, central "
                f"differences give {float(numeric)!r} (rtol={rtol}, atol={atol})"
            )
