"""Random programs over the registered primitives: reverse mode, forward mode, compiled and
replayed gradients all agree with central differences.

Each program draws inputs of random shapes (with broadcasting partners), then a random
sequence of smooth primitives that reuse earlier values (fan-out), reductions with random
axes and keepdims, matrix products, indexing, np.where and Python control flow on values.
TAPEGRAD_FUZZ_CASES sets how many programs run (default 3000, about a second a hundred
hundred); TAPEGRAD_FUZZ_SEED picks another sequence.
"""
import os

import numpy as np
import pytest

import tapegrad

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
        else:
            # Python control flow on a value: the tape records the branch taken, with a guard
            # (the threshold keeps the branch away from sums that are 0 by construction, such
            # as x - mean(x), where central differences would straddle it)
            steps.append(("if", (i,), lambda x: x * 2.0 if np.sum(x) > 0.3 else np.sin(x) - 1.0))
            shapes.append(shapes[i])

    def program(*xs):
        vals = list(xs)
        for _, args, fn in steps:
            vals.append(fn(*[vals[a] for a in args]))
        total = 0.0
        for v in vals[len(xs):] or vals:
            total = total + np.sum(v)
        return total

    desc = f"inputs {[np.shape(x) for x in inputs]}: " + ", ".join(
        f"v{len(inputs) + k} = {name}({', '.join(f'v{a}' for a in args)})" for k, (name, args, _) in enumerate(steps))
    return desc, program, inputs


def _same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)
    return a == b or (a != a and b != b)


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
            compiled = tapegrad.compiled_grad(program)
            for _ in range(2):  # the first call traces, the second replays the compiled program
                cvalue, cgrads = compiled(*inputs)
                assert _same(cvalue, value)
                assert all(_same(c, g) for c, g in zip(cgrads[1:], grads[1:]))
            _, back = tapegrad.pullback(program, *inputs)
            back(1.0)
            ins = back.tape.inputs
            outs = [back.derivatives[v] for v in ins[1:] if v in back.derivatives]
            replayed = back.tape.replay(*[back.tape[v].val for v in ins], outputs=outs)
            assert all(_same(r, d._op.val) for r, d in zip(replayed, outs))
        except Exception as exc:  # name the program that failed, so it can be replayed
            raise AssertionError(f"{where}\n{type(exc).__name__}: {exc}") from exc
