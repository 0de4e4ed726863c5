"""Random programs over the registered primitives: reverse mode, forward mode, compiled and
replayed gradients all agree with central differences.

Each program draws inputs of random shapes (with broadcasting partners), passed alone or
packed in a random container (tuple, list, dict, OrderedDict, defaultdict, deque, NamedTuple),
with an integer argument used as an index; then a random sequence of smooth primitives that
reuse earlier values (fan-out), reductions with random axes and keepdims, matrix products,
indexing, views (transposes, reversals, reshapes) and writes into copies, integer results
(counts, dtype=int), np.where (with a branch singular where it is not taken), Python control
flow on values and control flow through exceptions (try: cholesky except LinAlgError). The
compiled gradient is checked on the inputs and on their negation, which takes other paths.
TAPEGRAD_FUZZ_CASES sets how many programs run (default 3000, about 1.5 s of CPU a hundred
programs); TAPEGRAD_FUZZ_SEED picks another sequence.
"""
import collections
import os
from typing import NamedTuple

import numpy as np
import pytest

import tapegrad
from tapegrad.pytree import flatten, unflatten

CASES = int(os.environ.get("TAPEGRAD_FUZZ_CASES", "3000"))
SEED = int(os.environ.get("TAPEGRAD_FUZZ_SEED", "0"))
SHAPES = [(), (3,), (2, 3), (1, 3), (2, 1)]

UNARY = [
    ("sin", np.sin), ("cos", np.cos), ("tanh", np.tanh), ("exp∘tanh", lambda x: np.exp(np.tanh(x))),
    ("log1p(x²)", lambda x: np.log1p(x * x)), ("sqrt(1+x²)", lambda x: np.sqrt(1 + x * x)),
    ("arctan", np.arctan), ("square", np.square), ("neg", np.negative), ("x**3", lambda x: x ** 3),
    ("sinh∘tanh", lambda x: np.sinh(np.tanh(x))), ("expit", lambda x: 1 / (1 + np.exp(-x))),
]
BINARY = [
    ("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
    ("div", lambda x, y: x / (1.5 + y * y)), ("hypot+", lambda x, y: np.hypot(x, y) + 1),
    ("where", lambda x, y: np.where(x > y, x * y, x - y)),
    ("arctan2", lambda x, y: np.arctan2(x, 2.0 + y * y)),
]


class Pair(NamedTuple):
    first: object
    second: object


#: container kinds an argument list is packed in: (name, pack(list) -> container, unpack)
CONTAINERS = [
    ("tuple", tuple, list),
    ("list", list, list),
    ("dict", lambda xs: {f"k{i}": x for i, x in enumerate(xs)}, lambda c: list(c.values())),
    ("OrderedDict", lambda xs: collections.OrderedDict((f"k{i}", x) for i, x in enumerate(xs)),
     lambda c: list(c.values())),
    ("defaultdict", lambda xs: collections.defaultdict(float, {i: x for i, x in enumerate(xs)}),
     lambda c: [c[i] for i in range(len(c))]),
    ("deque", collections.deque, list),
    ("NamedTuple", lambda xs: Pair(xs[0], tuple(xs[1:])), lambda c: [c.first, *c.second]),
]


def cholesky_or_square(x):
    """A path chosen by an exception: s·I is positive definite exactly when s > 0."""
    s = np.sum(x) - 0.3
    try:
        return np.sum(np.linalg.cholesky(np.eye(2) * s)) * x
    except np.linalg.LinAlgError:
        return -s * s * x


def sqrt_where_positive(x):
    """A branch singular (nan, and an inf derivative at 0) where it is not taken."""
    with np.errstate(invalid="ignore", divide="ignore"):  # as numpy code must say it
        return np.where(x > 0.1, np.sqrt(x), x) + np.where(x != 0, 1 / x, 0.0) * 0.01


def write_into_copy(x):
    """A write into a copy of a traced array (the copy is a new value; x keeps its own)."""
    if np.ndim(x) == 0:
        return x * x
    y = x.copy()
    y[..., 0] = np.sin(y[..., 0]) * 2.0
    return y * x


def _reduce(rng, v):
    nd = np.ndim(v)
    fn = [np.sum, np.mean, np.max, np.prod][rng.integers(4)]
    if nd == 0 or rng.random() < 0.3:
        return fn.__name__, lambda x: fn(x)
    axis = int(rng.integers(-nd, nd))
    keep = bool(rng.integers(2))
    return f"{fn.__name__}(axis={axis}, keepdims={keep})", lambda x: fn(x, axis=axis, keepdims=keep)


def make_program(rng):
    """A random program: (description, function, inputs)."""
    n_in = int(rng.integers(1, 4))
    inputs = [rng.uniform(-1.5, 1.5, SHAPES[rng.integers(len(SHAPES))]) for _ in range(n_in)]
    inputs = [float(x) if x.ndim == 0 and rng.random() < 0.5 else x for x in inputs]
    steps = []
    shapes = [np.shape(x) for x in inputs]
    for _ in range(int(rng.integers(3, 9))):
        kind = rng.random()
        i = int(rng.integers(len(shapes)))
        if kind < 0.35:
            name, fn = UNARY[rng.integers(len(UNARY))]
            steps.append((name, (i,), fn))
            shapes.append(shapes[i])
        elif kind < 0.7:
            j = int(rng.integers(len(shapes)))
            try:
                out = np.broadcast_shapes(shapes[i], shapes[j])
            except ValueError:
                continue
            name, fn = BINARY[rng.integers(len(BINARY))]
            steps.append((name, (i, j), fn))
            shapes.append(out)
        elif kind < 0.82:
            probe = np.zeros(shapes[i])
            name, fn = _reduce(rng, probe)
            steps.append((name, (i,), fn))
            shapes.append(np.shape(fn(probe)))
        elif kind < 0.9 and len(shapes[i]) >= 1:
            axis_len = shapes[i][-1]
            k = int(rng.integers(axis_len))
            steps.append((f"[..., {k}]", (i,), lambda x, k=k: x[..., k]))
            shapes.append(shapes[i][:-1])
        elif kind < 0.95 and len(shapes[i]) == 2:
            steps.append(("@ᵀ", (i,), lambda x: x @ x.T))
            shapes.append((shapes[i][0], shapes[i][0]))
        elif kind < 0.955:
            view = [("T", lambda x: np.transpose(x) if np.ndim(x) else x),
                    ("[::-1]", lambda x: x[::-1] if np.ndim(x) else x),
                    ("reshape(-1)", lambda x: np.reshape(x, -1)[::-1] * 1.0)][rng.integers(3)]
            steps.append((view[0], (i,), view[1]))
            shapes.append(np.shape(view[1](np.zeros(shapes[i]))))
        elif kind < 0.965:
            steps.append(("write into copy", (i,), write_into_copy))
            shapes.append(shapes[i])
        elif kind < 0.975:
            ints = [("x·count(x>0)", lambda x: x * np.sum(x > 0)),
                    ("x + sum(x, dtype=int)", lambda x: x + np.sum(np.floor(x * 0.0 + 2.5), dtype=int))]
            name, fn = ints[rng.integers(2)]
            steps.append((name, (i,), fn))
            shapes.append(shapes[i])
        elif kind < 0.98:
            steps.append(("where(x>0.1, sqrt(x), x)", (i,), sqrt_where_positive))
            shapes.append(shapes[i])
        elif kind < 0.985:
            steps.append(("cholesky or square", (i,), cholesky_or_square))
            shapes.append(shapes[i])
        elif kind < 0.99 and len(shapes[i]) >= 1:
            steps.append(("take(index)", (i, "index"), lambda x, k: np.take(x, k % x.shape[-1], axis=-1)))
            shapes.append(shapes[i][:-1])
        else:
            # Python control flow on a value: the tape records the branch taken, with a guard
            # (the threshold keeps the branch away from sums that are 0 by construction, such
            # as x - mean(x), where central differences would straddle it)
            steps.append(("if", (i,), lambda x: x * 2.0 if np.sum(x) > 0.3 else np.sin(x) - 1.0))
            shapes.append(shapes[i])

    index = int(rng.integers(0, 7))

    def run(xs, k):
        vals = list(xs)
        for _, args, fn in steps:
            vals.append(fn(*[k if isinstance(a, str) else vals[a] for a in args]))
        total = 0.0
        for v in vals[len(xs):] or vals:
            total = total + np.sum(v)
        return total

    uses_index = any(isinstance(a, str) for _, args, _ in steps for a in args)
    container = CONTAINERS[rng.integers(len(CONTAINERS))] if rng.random() < 0.3 else None
    if container is not None:
        name, pack, unpack = container

        def program(c, *k):
            return run(unpack(c), *(k or (index,)))

        inputs = [pack(inputs)]
    else:
        def program(*xs):
            return run(xs[:len(xs) - uses_index], xs[-1] if uses_index else index)

    if uses_index:
        inputs = [*inputs, index] if container is None else [*inputs, index]
    desc = (f"inputs {[np.shape(x) for x in inputs] if container is None else container[0]}"
            f"{' and index ' + str(index) if uses_index else ''}: " + ", ".join(
                f"v{k} = {name}({', '.join(a if isinstance(a, str) else f'v{a}' for a in args)})"
                for k, (name, args, _) in enumerate(steps, start=n_in)))
    return desc, program, inputs


def _same(a, b):
    if type(a) is not type(b) and not (isinstance(a, float) and isinstance(b, float)):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
    if isinstance(a, (tuple, list, dict, collections.deque)):
        (sa, la), (sb, lb) = flatten(a), flatten(b)
        return repr(sa) == repr(sb) and len(la) == len(lb) and all(map(_same, la, lb))
    return a == b or (a != a and b != b)


def negated(inputs):
    """The inputs with every number negated, in copies of their containers."""
    out = []
    for x in inputs:
        spec, leaves = flatten(x, argument=True)
        out.append(unflatten(spec, [-v for v in leaves]))
    return out


BATCH = 100


@pytest.mark.parametrize("batch", range((CASES + BATCH - 1) // BATCH))
def test_random_programs(batch):
    """Every random program's gradient agrees with central differences, forward mode, the compiled
    gradient and the replayed gradient tape."""
    rng = np.random.default_rng([SEED, batch])
    for case in range(min(BATCH, CASES - batch * BATCH)):
        desc, program, inputs = make_program(rng)
        where = f"seed {SEED}, batch {batch}, case {case}: {desc}"
        try:
            tapegrad.check_grad(program, *inputs, rng=rng, rtol=1e-5, atol=1e-6)
            value, grads = tapegrad.grad(program, *inputs)
            # tiers=False: the first call traces, the next compiles and runs the program, so two
            # rounds run both paths' compiled programs (with the tiers, three rounds compiled the
            # first path only, its other calls answered by eager grads); the tiers themselves
            # are tests/program/test_compiled.py's
            compiled = tapegrad.compiled_grad(program, tiers=False)
            other = negated(inputs)
            other_value, other_grads = tapegrad.grad(program, *other)
            for _ in range(2):  # the traces of the programs, then the compiled programs
                cvalue, cgrads = compiled(*inputs)
                assert _same(cvalue, value)
                assert all(_same(c, g) for c, g in zip(cgrads[1:], grads[1:], strict=True))
                # the negated inputs take other paths: traced again, or the right program found
                cvalue, cgrads = compiled(*other)
                assert _same(cvalue, other_value)
                assert all(_same(c, g) for c, g in zip(cgrads[1:], other_grads[1:], strict=True))
            _, back = tapegrad.pullback(program, *inputs)
            back(1.0)
            ins = back.tape.inputs
            outs = [back.derivatives[v] for v in ins[1:] if v in back.derivatives]
            with np.errstate(invalid="ignore", divide="ignore"):  # (the program's own errstate is not replayed)
                replayed = back.tape.replay(*[back.tape[v].val for v in ins], outputs=outs)
            assert all(_same(r, d._op.val) for r, d in zip(replayed, outs))
        except Exception as exc:  # name the program that failed, so it can be replayed
            raise AssertionError(f"{where}\n{type(exc).__name__}: {exc}") from exc
