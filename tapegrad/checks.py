"""Numerical checks: central differences, and the comparison of reverse mode against them."""
from __future__ import annotations

import numpy as np

from .tangents import NO_TANGENT, ZERO

__all__ = ["ngradient", "check_grad"]


def _is_diff_arg(x):
    if isinstance(x, bool):
        return False
    if isinstance(x, (float, int, np.floating)):
        return True
    return isinstance(x, np.ndarray) and x.dtype.kind == "f"


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


def check_grad(f, *args, seed=None, rng=None, rtol=None, atol=None, eps=None):
    """Check reverse-mode gradients of `f` against central differences along a random direction.

    For each float argument a random direction ``v`` is drawn; the directional derivative
    ``(g(x + h v) - g(x - h v)) / 2h`` is compared with ``<grad, v>``, where ``g`` is `f` for a
    scalar result and ``<u, f>`` for a random `u` (or `seed`) otherwise, which checks the
    vector-Jacobian product. The differences are taken in float64; tolerances follow the
    arguments' dtype (float32 is looser). Also checks that each gradient has its argument's
    shape and dtype. Raises AssertionError with both numbers when they disagree.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> tapegrad.check_grad(lambda x: np.sum(np.sin(x) ** 2), np.linspace(0, 1, 5))
    """
    from .grad import grad

    rng = np.random.default_rng(0) if rng is None else rng
    y0 = f(*args)
    if seed is None and np.ndim(y0) != 0:
        seed = rng.standard_normal(np.shape(y0)).astype(np.result_type(y0, np.float64))
    _, grads = grad(f, *args, seed=seed)
    grads = grads[1:]

    def scalar_f(*a):
        y = f(*a)
        return np.sum(np.asarray(y, dtype=np.float64) * seed) if seed is not None else y

    dtypes = [np.asarray(x).dtype for x in args if _is_diff_arg(x)]
    low = any(d in (np.float32, np.float16) for d in dtypes)
    if eps is None:
        eps = 1e-3 if low else 1e-6
    worst = max(dtypes, key=lambda d: _TOLERANCE.get(d, (1e-6, 0))[0], default=np.dtype(np.float64))
    rt, at = _TOLERANCE.get(worst, (1e-6, 1e-7))
    rtol = rt if rtol is None else rtol
    atol = at if atol is None else atol

    wide = [np.array(x, dtype=np.float64) if _is_diff_arg(x) else x for x in args]
    directions = []
    predicted = 0.0
    for x, g in zip(args, grads):
        if not _is_diff_arg(x):
            directions.append(None)
            continue
        if g is NO_TANGENT:
            raise AssertionError(f"gradient for a float argument is NoTangent(): {x!r}")
        v = rng.standard_normal(np.shape(x))
        directions.append(v)
        if g is ZERO:
            continue
        if isinstance(x, np.ndarray):
            assert np.shape(g) == x.shape, f"gradient shape {np.shape(g)} != argument shape {x.shape}"
            assert g.dtype == x.dtype, f"gradient dtype {g.dtype} != argument dtype {x.dtype}"
        predicted += float(np.sum(np.asarray(g, dtype=np.float64) * v))

    def at_step(h):
        moved = []
        for x, w, v in zip(args, wide, directions):
            if v is None:
                moved.append(x)
            elif isinstance(x, np.ndarray):
                moved.append(w + h * v)
            else:
                moved.append(float(w + h * v))
        return np.float64(scalar_f(*moved))

    numeric = (at_step(eps) - at_step(-eps)) / (2 * eps)
    if not np.isclose(predicted, numeric, rtol=rtol, atol=atol * max(1.0, abs(numeric))):
        raise AssertionError(
            f"reverse mode gives {predicted!r} along a random direction, central differences "
            f"give {numeric!r} (rtol={rtol}, atol={atol})"
        )
