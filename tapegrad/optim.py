"""Flat vectors of structures, and gradient-based optimizers that take any structure.

`flatten(x)` returns ``(vector, unflatten)``: the numbers and float arrays of `x` (walked as
every walk of tapegrad walks it: tuples, lists, dicts, named tuples, dataclasses, objects by
their fields, types given to `tapegrad.extend.register_structure`) raveled and joined into one 1-d
array, and the function that puts a vector of that length back into `x`'s structure. Both
halves are numpy calls, so they work on traced values too: a loss may flatten its parameters,
or take a flat vector and unflatten it, and be differentiated.

`sgd`, `rmsprop` and `adam` are autograd's optimizers (``autograd.misc.optimizers``) on any
structure: ``adam(grad, x0, callback=None, num_iters=100, step_size=0.001, ...)`` calls
``grad(x, i)`` for the gradient at step `i` (in `x`'s structure; ``ZeroTangent()`` parts count
as zeros, so ``lambda x, i: tapegrad.gradient(loss, x)[0]`` fits as it is) and
``callback(x, i, g)`` before each step, and returns the last `x` in the structure of `x0`.
They move one flat vector, as autograd's do, so their steps are autograd's to the last bit.
"""
import numpy as np

from .structures import is_differentiable_leaf, parts_at, split
from .tangents import ZERO, NoTangent, ZeroTangent

__all__ = ["flatten", "sgd", "rmsprop", "adam"]


def flatten(x, *, sort_keys=False):
    """``(vector, unflatten)``: the numbers of `x` as one 1-d float array, and its inverse.

    Leaves that are not numbers (strings, None, integer arrays, functions) are kept as they
    are by `unflatten`. With `sort_keys` a dict's entries are taken in the order of their
    sorted keys (autograd's ``flatten`` order), else in their own order.

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.optim import flatten
    >>> v, unflatten = flatten({"w": np.ones((2, 2)), "b": 0.5, "name": "layer"})
    >>> v
    array([1. , 1. , 1. , 1. , 0.5])
    >>> unflatten(2 * v)["w"]
    array([[2., 2.],
           [2., 2.]])
    """
    leaves = []
    template = _template(x, leaves, sort_keys)
    sizes = [int(np.size(leaf)) for leaf in leaves]
    vector = np.concatenate([np.ravel(leaf) for leaf in leaves]) if leaves else np.zeros(0)

    def unflatten(v, _c=(template, sizes)):
        parts, start = [], 0
        for (shape, number), size in zip(_c[0][1], _c[1]):
            piece = v[start] if number else np.reshape(v[start:start + size], shape)
            parts.append(piece)
            start += size
        return _fill(_c[0][0], iter(parts))

    return vector, unflatten


def _template(x, leaves, sort_keys):
    """A copy of `x`'s shape with a marker at each number, the markers' (shape, is-a-number)
    in order, and the numbers themselves appended to `leaves`: (tree, markers)."""
    markers = []

    def walk(v):
        whole = split(v, objects=True)
        if whole is None:
            if not is_differentiable_leaf(v):
                return ("keep", v)
            leaves.append(v)
            markers.append((np.shape(v), not isinstance(v, np.ndarray) and np.ndim(v) == 0))
            return ("leaf",)
        s, keys, items, aux = whole
        order = list(range(len(items)))
        if sort_keys and type(keys) is not range:
            order.sort(key=lambda i: keys[i])
        done = {i: walk(items[i]) for i in order}
        return ("node", s, type(v), aux, keys, [done[i] for i in range(len(items))], order)

    return walk(x), markers


def _fill(node, parts):
    """Build the value the tree `node` describes, taking the numbers from `parts` in order."""
    if node[0] == "keep":
        return node[1]
    if node[0] == "leaf":
        return next(parts)
    _, s, cls, aux, keys, children, order = node
    built = {}
    for i in order:
        built[i] = _fill(children[i], parts)
    return s.join(cls, aux, keys, [built[i] for i in range(len(children))])


def _flat_gradient(g, x):
    """The gradient `g` of `x` as one vector in `flatten(x)`'s order, zeros where nothing flows."""
    out = []

    def walk(t, p):
        whole = split(p, objects=True)
        if whole is None:
            if is_differentiable_leaf(p):
                zero = t is ZERO or isinstance(t, (ZeroTangent, NoTangent))
                out.append(np.zeros(np.size(p)) if zero else np.ravel(t))
            return
        _, keys, items, _ = whole
        parts = [ZERO] * len(items) if t is ZERO or isinstance(t, (ZeroTangent, NoTangent)) else parts_at(t, keys, ZERO)
        for ti, pi in zip(parts, items):
            walk(ti, pi)

    walk(g, x)
    return np.concatenate(out) if out else np.zeros(0)


def _run(step, grad, x0, callback, num_iters, state):
    """Drive `step(x, g, i, state) -> x` over a flat vector; the user sees structures."""
    x, unflatten = flatten(x0)
    for i in range(num_iters):
        xs = unflatten(x)
        g = _flat_gradient(grad(xs, i), xs)
        if callback:
            callback(xs, i, unflatten(g))
        x = step(x, g, i, state)
    return unflatten(x)


def sgd(grad, x0, callback=None, num_iters=200, step_size=0.1, mass=0.9):
    """Stochastic gradient descent with momentum, on any structure `x0`.

    ``grad(x, i)`` gives the gradient at step `i`; ``callback(x, i, g)`` runs before each step.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> from tapegrad.optim import sgd
    >>> loss = lambda p: (p["a"] - 3.0) ** 2 + np.sum((p["b"] + 1.0) ** 2)
    >>> p = sgd(lambda p, i: tapegrad.gradient(loss, p)[0], {"a": 0.0, "b": np.zeros(2)}, num_iters=300)
    >>> round(float(p["a"]), 6), p["b"].round(6)
    (3.0, array([-1., -1.]))
    """
    def step(x, g, i, velocity):
        velocity[:] = mass * velocity - (1.0 - mass) * g
        return x + step_size * velocity

    return _run(step, grad, x0, callback, num_iters, np.zeros(flatten(x0)[0].size))


def rmsprop(grad, x0, callback=None, num_iters=100, step_size=0.1, gamma=0.9, eps=10**-8):
    """Root-mean-square propagation on any structure `x0` (arguments as for `sgd`).

    Examples
    --------
    >>> import tapegrad
    >>> from tapegrad.optim import rmsprop
    >>> x = rmsprop(lambda x, i: tapegrad.gradient(lambda x: (x - 2.0) ** 2, x)[0], 0.0,
    ...             num_iters=300, step_size=0.02)
    >>> round(float(x), 2)
    2.0
    """
    def step(x, g, i, avg_sq_grad):
        avg_sq_grad[:] = avg_sq_grad * gamma + g**2 * (1 - gamma)
        return x - step_size * g / (np.sqrt(avg_sq_grad) + eps)

    return _run(step, grad, x0, callback, num_iters, np.ones(flatten(x0)[0].size))


def adam(grad, x0, callback=None, num_iters=100, step_size=0.001, b1=0.9, b2=0.999, eps=10**-8):
    """Adam (Kingma and Ba, arXiv:1412.6980) on any structure `x0` (arguments as for `sgd`).

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> from tapegrad.optim import adam
    >>> loss = lambda w: np.sum((w - np.array([1.0, -2.0])) ** 2)
    >>> adam(lambda w, i: tapegrad.gradient(loss, w)[0], np.zeros(2), num_iters=500, step_size=0.05).round(3)
    array([ 1., -2.])
    """
    n = flatten(x0)[0].size

    def step(x, g, i, moments):
        m, v = moments
        m[:] = (1 - b1) * g + b1 * m  # first moment estimate
        v[:] = (1 - b2) * (g**2) + b2 * v  # second moment estimate
        mhat = m / (1 - b1 ** (i + 1))  # bias correction
        vhat = v / (1 - b2 ** (i + 1))
        return x - step_size * mhat / (np.sqrt(vhat) + eps)

    return _run(step, grad, x0, callback, num_iters, (np.zeros(n), np.zeros(n)))
