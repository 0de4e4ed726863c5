"""Every entry point of tapegrad, as a check of one case against its `Reference`.

Each function here takes a `Reference` and raises AssertionError when the entry point's
result differs from the central differences, or is not plain (floats, numpy scalars and
ndarrays in the argument's or the result's structure). `ENTRY_POINTS` names them all; a new
entry point of tapegrad gets a function here, and so runs on every case of the layer.
"""
import traceback
from unittest import mock

import numpy as np

import tapegrad
import tapegrad.autograd as autograd
from tapegrad import NO_TANGENT, ZERO, Tangent
from tapegrad.program import background
from tapegrad.tape import Input

from tapegrad.checks import _substitute

from _layer import assert_plain_tangent, assert_plain_value, at, close, close_arrays, out_leaves, pair, registered


def _check_value(value, ref, where):
    """The value is f's own, to a few units in its last place (a forward rule may take the value
    by another road, as a solve of the value and its variation together)."""
    assert_plain_value(value, where)
    for p in ref.paths:
        want = at(ref.y, p)
        eps = np.finfo(np.result_type(want, np.float16)).eps  # (of float32 for float32 and complex64)
        np.testing.assert_allclose(at(value, p), want, rtol=max(1e-12, 64 * eps), atol=1e-300,
                                   err_msg=f"{where}: the value at {list(p)}")


def _check_grads(grads, ref, where, with_f=True):
    """`grads` is ``(df, *dargs)``: plain, in the arguments' structures, and right along v."""
    assert type(grads) is tuple and len(grads) == len(ref.args) + 1, f"{where}: {type(grads).__name__} of {len(grads)}"
    for i, a in enumerate(ref.args):
        assert_plain_tangent(grads[i + 1], a, f"{where}: the gradient of argument {i}")
    close(ref.along(grads, ref.v, ref.arg_keys), ref.d1, f"{where}: <gradient, v>")
    if with_f and ref.f_keys:
        assert_plain_tangent(grads[0], ref.f, f"{where}: the gradient of f's captured values")
        close(ref.along(grads, ref.v, ref.f_keys), ref.d1f, f"{where}: <df, v>")


def tangent_leaves(t, path=()):
    """``[(path, leaf)]`` of a tangent: sequences, dicts and Tangents walked into."""
    if isinstance(t, Tangent):
        return [p for k, v in t.fields.items() for p in tangent_leaves(v, path + (k,))]
    if isinstance(t, dict):
        return [p for k, v in t.items() for p in tangent_leaves(v, path + (k,))]
    if isinstance(t, (tuple, list)):
        return [p for i, v in enumerate(t) for p in tangent_leaves(v, path + (i,))]
    parts = registered(t)
    if parts is not None:
        return [p for k, v in zip(parts[1], parts[2]) for p in tangent_leaves(v, path + (k,))]
    return [(path, t)]


def _same(a, b, where, exact=True):
    la, lb = tangent_leaves(a), tangent_leaves(b)
    assert [p for p, _ in la] == [p for p, _ in lb], f"{where}: the structures differ"
    for (p, x), (_, y) in zip(la, lb):
        if x is ZERO or x is NO_TANGENT or y is ZERO or y is NO_TANGENT:
            assert x is y, f"{where} at {list(p)}: {x!r} and {y!r}"
        elif exact:
            assert type(x) is type(y) and np.array_equal(x, y, equal_nan=True), f"{where} at {list(p)}: {x!r} != {y!r}"
        else:
            np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-12 * max(1.0, float(np.max(np.abs(y)))),
                                       err_msg=f"{where} at {list(p)}")


# --- reverse mode ---


def grad(ref):
    """``grad(f, *args, seed=u)``: value and gradients, the unrecorded sweep."""
    value, grads = tapegrad.grad(ref.f, *ref.args, seed=ref.seed)
    _check_value(value, ref, "grad")
    _check_grads(grads, ref, "grad")


def gradient(ref):
    """``gradient(f, *args, seed=u)``: the gradients of the arguments alone."""
    dargs = tapegrad.gradient(ref.f, *ref.args, seed=ref.seed)
    _check_grads((ZERO, *dargs), ref, "gradient", with_f=False)


def pullback(ref):
    """``pullback(f, *args)`` then ``back(u)`` (and ``back()`` for a number): the recorded sweep."""
    value, back = tapegrad.pullback(ref.f, *ref.args)
    _check_value(value, ref, "pullback")
    grads = back(ref.u)
    _check_grads(grads, ref, "back(u)")
    if ref.scalar:
        _same(back(), grads, "back() and back(1.0)")


def sweeps(ref):
    """The recorded sweep (`pullback`) and the unrecorded one (`grad`) agree bit for bit."""
    _, back = tapegrad.pullback(ref.f, *ref.args)
    _same(back(ref.u), tapegrad.grad(ref.f, *ref.args, seed=ref.seed)[1], "pullback and grad")


def _seeded(ref, back):
    """``s -> <back(s), v>``: a pullback's result as a function of its cotangent (linear in s)."""
    def along_v(s, _c=(ref, back)):
        ref, back = _c
        b = back if back is not None else tapegrad.pullback(ref.f, *ref.args)[1]
        return ref.along(b(s), ref.v, ref.arg_keys)
    return along_v


def _check_jv(jv, ref, where):
    """`jv` is ``J v`` in the result's structure: plain (ZeroTangent where no path reaches), and
    right leaf by leaf."""
    if jv is not ZERO:
        assert_plain_value(jv, where)
    for p in ref.paths:
        got = at(jv, p)
        close_arrays(np.zeros(np.shape(ref.jv[p])) if got is ZERO else got, ref.jv[p], f"{where} at {list(p)}")


def traced_seed(ref):
    """``back(s)`` with `s` traced by an enclosing ``grad``: differentiating a pullback with
    respect to its cotangent gives ``J v`` (autograd's higher order, a VJP of a VJP)."""
    _, (_, jv) = tapegrad.grad(_seeded(ref, None), ref.u)
    assert_plain_tangent(jv, ref.u, "the gradient of a pullback with respect to its seed")
    _check_jv(jv, ref, "the gradient of a pullback with respect to its seed")


def traced_seed_outer(ref):
    """The same with the pullback made before, outside the enclosing trace, and called in it."""
    _, back = tapegrad.pullback(ref.f, *ref.args)
    _, (_, jv) = tapegrad.grad(_seeded(ref, back), ref.u)
    _check_jv(jv, ref, "the gradient of an outside pullback with respect to its seed")


def traced_seed_again(ref):
    """That differentiated again, with respect to the arguments: ``x -> <u, J(x) v>`` has the
    gradient ``H v`` of ``Re Σ u·f`` (reverse over a pullback differentiated by its seed)."""
    # (an argument with nothing differentiable in it, a mode string or a flag, is not named)
    wrt = tuple(i for i, a in enumerate(ref.args) if tapegrad.pytree.flatten(a, argument=True)[1])

    def twice(*xs, _c=ref):
        ref = _c

        def along_v(s):
            return ref.along(tapegrad.pullback(ref.f, *xs)[1](s), ref.v, ref.arg_keys)
        jv = tapegrad.gradient(along_v, ref.u, wrt=0)[0]
        return pair(ref.u, jv, ref.paths)

    _, grads = tapegrad.grad(twice, *ref.args, wrt=wrt)
    for i, a in enumerate(ref.args):
        assert_plain_tangent(grads[i + 1], a, f"the second derivative through a traced seed, argument {i}")
    close(ref.along(grads, ref.r, ref.arg_keys), ref.d2, "<r, H v> through a traced seed", rtol=1e-4, atol=1e-5)


# --- forward mode and matrices ---


def jvp(ref):
    """``jvp(f, args, v)``: the value and ``J v``."""
    value, jv = tapegrad.jvp(ref.f, ref.args, ref.v_args)
    _check_value(value, ref, "jvp")
    _check_jv(jv, ref, "jvp")


def _of_tuple(ref):
    """`f` as a function of one value, for jacobian and hessian (the tuple of its arguments,
    or its one argument), and how to read a leaf's block from a result of theirs."""
    if len(ref.args) == 1:
        return ref.f, ref.args[0], lambda p: p[1:]
    return (lambda xs, _f=ref.f: _f(*xs)), ref.args, lambda p: (p[0] - 1,) + p[1:]


def _contract(block, d):
    return np.tensordot(np.asarray(block), d, axes=np.ndim(d))


def _jacobian(mode):
    def jacobian(ref):
        fn, x, where = _of_tuple(ref)
        J = tapegrad.jacobian(fn, x, mode=mode)
        jv = {}
        for p in ref.paths:
            total = 0.0
            for k in ref.arg_keys:
                path = where(ref.leaves[k][0])
                block = at(at(J, p), path)
                assert type(block) is np.ndarray or isinstance(block, (float, np.generic)), \
                    f"jacobian(mode={mode!r}): the block at {list(p)}, {list(path)} is {type(block).__name__}"
                want = np.shape(at(ref.y, p)) + np.shape(ref.leaves[k][1])
                assert np.shape(block) == want, f"jacobian(mode={mode!r}): block shape {np.shape(block)}, not {want}"
                total = total + _contract(block, ref.v[k])
            jv[p] = total
        for p in ref.paths:
            close_arrays(jv[p], ref.jv[p], f"jacobian(mode={mode!r}) times v at {list(p)}")
    jacobian.__doc__ = f"``jacobian(f, x, mode={mode!r})``, contracted with v."
    return jacobian


def _phi(ref):
    """``Re Σ u·f``, a scalar function of the arguments (of their tuple for several)."""
    fn, x, where = _of_tuple(ref)

    def phi(x, _c=(ref, fn)):
        ref, fn = _c
        return pair(ref.u, fn(x), ref.paths)
    return phi, x, where


#: the most numbers a case's arguments may hold for `hessian` (a pass per number, in every
#: mode) and `hvp` with a forward-mode inner pass (a pass per number, inside a pass along v)
#: to run on them whole; a larger case is checked on the plane through x spanned by v and r,
#: ``psi(s) = phi(x + s0 v + s1 r)``, whose Hessian holds ``<r, H v>``
SMALL = 6


def _plane(ref):
    """``psi(s) = Re Σ u·f(x + s0 v + s1 r)``: the case on the plane of its two directions."""
    def psi(s, _c=ref):
        ref = _c
        new = {k: ref.leaves[k][1] + s[0] * ref.v[k] + s[1] * ref.r[k] for k in ref.arg_keys}
        fn, *a = _substitute((ref.f, *ref.args), new)
        return pair(ref.u, ref.f(*a), ref.paths)
    return psi


def _on_plane(ref, mode, whole=False):
    """Whether the check runs on the plane of v and r: a case of more than SMALL numbers, for
    every Hessian (`whole`) and for the Hessian-vector products with a forward inner pass."""
    return (whole or mode.endswith("fwd")) and sum(np.size(ref.leaves[k][1]) for k in ref.arg_keys) > SMALL


def _hessian(mode):
    def hessian(ref):
        if _on_plane(ref, mode, whole=True):
            H = tapegrad.hessian(_plane(ref), np.zeros(2), mode=mode)
            assert type(H) is np.ndarray and H.shape == (2, 2), f"hessian(mode={mode!r}) of the plane: {H!r}"
            close(H[1, 0], ref.d2, f"hessian(mode={mode!r}) on the plane of v and r: <r, H v>", rtol=1e-4, atol=1e-5)
            return
        phi, x, where = _phi(ref)
        H = tapegrad.hessian(phi, x, mode=mode)
        total = 0.0
        for k in ref.arg_keys:
            row = at(H, where(ref.leaves[k][0]))
            for m in ref.arg_keys:
                block = at(row, where(ref.leaves[m][0]))
                assert type(block) is np.ndarray or isinstance(block, (float, np.generic)), \
                    f"hessian(mode={mode!r}): a block is {type(block).__name__}"
                total = total + np.sum(np.real(ref.r[k] * _contract(block, ref.v[m])))
        close(total, ref.d2, f"hessian(mode={mode!r}): <r, H v>", rtol=1e-4, atol=1e-5)
    hessian.__doc__ = f"``hessian(phi, x, mode={mode!r})``, contracted with r and v."
    return hessian


def _hvp(mode):
    def hvp(ref):
        if _on_plane(ref, mode):
            hv = tapegrad.hvp(_plane(ref), np.zeros(2), np.array([1.0, 0.0]), mode=mode)
            assert type(hv) is np.ndarray and hv.shape == (2,), f"hvp(mode={mode!r}) of the plane: {hv!r}"
            close(hv[1], ref.d2, f"hvp(mode={mode!r}) on the plane of v and r: <r, H v>", rtol=1e-4, atol=1e-5)
            return
        phi, x, where = _phi(ref)
        v = ref.v_args[0] if len(ref.args) == 1 else ref.v_args
        hv = tapegrad.hvp(phi, x, v, mode=mode)
        hv_args = (hv,) if len(ref.args) == 1 else hv
        for i, a in enumerate(ref.args):
            assert_plain_tangent(hv_args[i], a, f"hvp(mode={mode!r}), argument {i}")
        close(ref.along((ZERO, *hv_args), ref.r, ref.arg_keys), ref.d2, f"hvp(mode={mode!r}): <r, H v>",
              rtol=1e-4, atol=1e-5)
    hvp.__doc__ = f"``hvp(phi, x, v, mode={mode!r})``, paired with r."
    return hvp


# --- programs: compiled, replayed, written out ---


def compiled_grad(ref):
    """``compiled_grad(f)`` through its tiers (eager, traced, optimized, written, compiled):
    every call gives grad's result, then the compiled program at a new point does too. (A
    program made by a child instead, as a long or slow one would be, is `compiled_grad_beside`'s.)"""
    cg = tapegrad.compiled_grad(ref.f, background=False)
    _calls_give_grads(cg, ref, 6, "compiled_grad")
    _at_a_new_point(cg, ref, "compiled_grad")


def _calls_give_grads(cg, ref, calls, what):
    """`calls` calls of the compiled gradient `cg` at the case's point each give grad's result."""
    want = tapegrad.grad(ref.f, *ref.args, seed=ref.seed)
    for call in range(calls):
        value, grads = cg(*ref.args, seed=ref.seed)
        _check_value(value, ref, f"{what}, call {call + 1}")
        _same(grads, want[1], f"{what}, call {call + 1}", exact=False)


def _at_a_new_point(cg, ref, what):
    """The compiled gradient's program (or the path traced for it) gives grad's result at a
    point away from the case's."""
    _, moved = ref.moved(ref.arg_keys, ref.v, 10 * ref.step())
    _same(cg(*moved, seed=ref.seed)[1], tapegrad.grad(ref.f, *moved, seed=ref.seed)[1],
          f"{what} at a new point", exact=False)


class _HereJob:
    """A forked child's stand-in (`tapegrad.program.background.Job`): the child's work done in
    this process when the call forks, its result sent through the same pickling and read back.
    What the fork adds (a process, its output, its end) is tested in
    tests/program/test_background.py; a fork per case would cost the layer ~50 s."""

    pid = None

    def __init__(self, work, limit):
        self.error = None
        try:
            self.result = background.loads(background.dumps(work()))
        except Exception:  # noqa: BLE001 - kept, as the child keeps its traceback
            self.result, self.error = False, traceback.format_exc(limit=-8)

    def poll(self, wait=False):
        return self.result

    wait = poll


def compiled_grad_beside(ref):
    """``compiled_grad(f, background=True)``: the program made by a child (its work here, its
    result through the child's pickling) while the calls are answered by eager grads; the
    child's program (or, for a function that draws random numbers, a trace on every call)
    gives grad's result, here and at a new point."""
    with mock.patch.object(background, "start", _HereJob):
        cg = tapegrad.compiled_grad(ref.f, background=True)
        _calls_give_grads(cg, ref, 3, "compiled_grad(background=True)")
    info = cg.cache_info()
    if info["background"] == 0 and info["traced"] == 0:
        # a program that names a function made inside f (a solver's lambda) cannot be sent from
        # the child: the calls make it, and run it
        assert "Can't pickle local object" in (cg.child_error or ""), (
            f"compiled_grad(background=True): the child made no program: {info}\n{cg.child_error}")
        assert info["retraces"] == 1, info
    else:
        assert info["background"] == 1 or info["traced"] == 1, info
        assert info["hits"] == (1 if info["background"] else 0), info
    _at_a_new_point(cg, ref, "compiled_grad(background=True)")


def _gradient_tape(f, args, u):
    _, back = tapegrad.pullback(f, *args)
    back(u)
    tape = back.tape
    inputs = [op for op in tape.ops if type(op) is Input]
    return tape, inputs, [back.derivatives.get(op.var) for op in inputs[1:]]


def replay(ref):
    """The forward-and-backward tape of `pullback`, replayed at a new point and written out as
    Python source and run there: the derivatives a new `pullback` gives at that point."""
    tape, inputs, outs = _gradient_tape(ref.f, ref.args, ref.u)
    fn, moved = ref.moved(ref.arg_keys + ref.f_keys, ref.v, 10 * ref.step(ref.arg_keys + ref.f_keys))
    _, inputs2, outs2 = _gradient_tape(fn, moved, ref.u)
    new = [op.val for op in inputs2]
    keep = [i for i, o in enumerate(outs) if o is not None]
    want = [outs2[i]._op.val for i in keep]
    got = tape.replay(*new, outputs=[outs[i] for i in keep])
    src = tapegrad.program.compile_tape(tape, outputs=[outs[i] for i in keep])(*new)
    for i, w, g, s in zip(keep, want, got, src):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12, err_msg=f"replay: the derivative of input {i + 2}")
        np.testing.assert_allclose(s, w, rtol=1e-10, atol=1e-12, err_msg=f"compile_tape: the derivative of input {i + 2}")


#: name -> check, every entry point of tapegrad that gives derivatives
def autograd_layer(ref):
    """``tapegrad.autograd``'s ``make_vjp`` (and ``value_and_grad`` for a number) with respect to
    every argument: grad's gradients, with zeros where grad says ZeroTangent (autograd's
    convention: a gradient is always a value of its argument's space)."""
    n = len(ref.args)
    if n == 0:
        return
    want = tapegrad.fill_zeros(tapegrad.grad(ref.f, *ref.args, seed=ref.seed)[1][1:], ref.args)
    vjp, value = autograd.make_vjp(ref.f, tuple(range(n)))(*ref.args)
    _check_value(value, ref, "autograd.make_vjp")
    _same(tuple(vjp(1.0 if ref.scalar else ref.u)), want, "autograd.make_vjp", exact=False)
    if ref.scalar:
        value, grads = autograd.value_and_grad(ref.f, tuple(range(n)))(*ref.args)
        _check_value(value, ref, "autograd.value_and_grad")
        _same(tuple(grads), want, "autograd.value_and_grad", exact=False)


def check_grad(ref):
    """``check_grad(f, *args)`` passes, reverse and forward mode, with the case's seed and with
    one it draws itself (in the result's structure: a tuple, a dict, a registered type)."""
    tapegrad.check_grad(ref.f, *ref.args, seed=ref.seed)
    tapegrad.check_grad(ref.f, *ref.args)


ENTRY_POINTS = {
    "grad": grad,
    "gradient": gradient,
    "pullback": pullback,
    "sweeps": sweeps,
    "traced_seed": traced_seed,
    "traced_seed_outer": traced_seed_outer,
    "traced_seed_again": traced_seed_again,
    "jvp": jvp,
    "jacobian_fwd": _jacobian("fwd"),
    "jacobian_rev": _jacobian("rev"),
    **{f"hessian_{m}": _hessian(m) for m in ("rev-rev", "fwd-rev", "rev-fwd", "fwd-fwd")},
    **{f"hvp_{m}": _hvp(m) for m in ("rev-rev", "fwd-rev", "rev-fwd", "fwd-fwd")},
    "compiled_grad": compiled_grad,
    "compiled_grad_beside": compiled_grad_beside,
    "replay": replay,
    "autograd_layer": autograd_layer,
    "check_grad": check_grad,
}
