"""Reliability: every failure is clear, nothing is silently wrong, and it holds under threads and scale."""
import copy
import gc
import pathlib
import threading
import warnings

import numpy as np
import scipy.special
import pytest
import scipy.signal

import tapegrad
from tapegrad import (
    ConcreteValueError,
    EscapedTracerError,
    RuleError,
    grad,
    gradient,
    primitive,
    pullback,
    rrule,
)

HERE = "test_reliability.py:"


def test_scipy_function_without_replacement_names_itself():
    """A scipy function that cannot see traced values is named, with its argument and the line."""
    with pytest.raises(ConcreteValueError) as err:
        grad(lambda x: np.sum(scipy.signal.detrend(x)), np.ones(3))
    msg = str(err.value)
    assert "scipy.signal.detrend cannot see traced values and tapegrad has no replacement" in msg
    assert "%2::float64[3]" in msg and HERE in msg and "use numpy functions" in msg


def test_wrt_on_a_value_that_holds_nothing_differentiable():
    """Asking for the gradient w.r.t. a string names the argument, its type, the line and what works."""
    with pytest.raises(TypeError, match=r"wrt names argument 1 \(mode\) at test_reliability.py:\d+, a str, "
                                        r"which holds nothing differentiable.*pass a number or a float array"):
        grad(lambda x, mode: x * 2, 1.0, "fast", wrt=(0, 1))


KEPT = []


class Holder:
    value = None


@pytest.mark.parametrize("where", ["global", "list", "attribute"])
def test_tracer_used_after_its_trace_ended(where):
    """A traced value kept in a global, a list or an attribute raises when used later."""
    global LEAK
    holder = Holder()

    def f(x):
        global LEAK
        LEAK = x
        KEPT.append(x)
        holder.value = x
        return x * 2

    grad(f, 1.5)
    kept = {"global": LEAK, "list": KEPT[-1], "attribute": holder.value}[where]
    with pytest.raises(EscapedTracerError, match=r"the traced value %2::float64 was used at "
                                                 r"test_reliability.py:\d+ after the trace .* return it"):
        np.sin(kept)


@primitive
def broken_square(x):
    return x * x


def test_pullback_with_the_wrong_number_of_tangents_is_caught_at_the_step():
    """A pullback returning too few tangents raises RuleError naming the rule, its arguments and the fix."""
    @rrule(broken_square)
    def broken_square_rrule(x):
        return broken_square(x), lambda dy: (2 * x * dy,)

    with pytest.raises(RuleError, match=r"pullback of .*broken_square\(%2::float64\) \(for %3, in the "
                                        r"gradient taken at test_reliability.py:\d+\) returned tuple of length 1; "
                                        r"fix the rule .* a tuple of 2"):
        grad(lambda x: broken_square(x), 3.0)


def test_pullback_with_a_tangent_of_the_wrong_shape_is_caught():
    """A tangent shaped unlike its argument raises RuleError naming the rule and the shapes."""
    @rrule(broken_square)
    def broken_square_rrule(x):
        return broken_square(x), lambda dy: (tapegrad.NO_TANGENT, np.sum(2 * x * dy))

    with pytest.raises(RuleError, match=r"pullback of test_reliability.broken_square \(for %3, in the gradient "
                                        r"taken at test_reliability.py:\d+\) returned a tangent of shape \(\) "
                                        r"for argument 1, %2::float64\[3\]; fix the rule.*unbroadcast"):
        grad(lambda x: np.sum(broken_square(x)), np.ones(3))


def test_array_tangent_of_the_wrong_shape_is_caught():
    """An array tangent that would broadcast silently ((3, 1) for a (3,) argument) is refused too."""
    @rrule(broken_square)
    def broken_square_rrule(x):
        return broken_square(x), lambda dy: (tapegrad.NO_TANGENT, (2 * x * dy)[:, None])

    with pytest.raises(RuleError, match=r"pullback of test_reliability.broken_square \(for %3, .*\) "
                                        r"returned a tangent of shape \(3, 1\) for argument 1, "
                                        r"%2::float64\[3\]"):
        grad(lambda x: np.sum(broken_square(x)), np.ones(3))


def test_exception_in_f_carries_the_partial_tape():
    """An error raised by f keeps its type and message and carries the tape recorded so far."""
    def f(x):
        y = np.sin(x)
        raise ZeroDivisionError("custom")

    with pytest.raises(ZeroDivisionError, match="^custom$") as err:
        grad(f, 1.0)
    # (grad's private tape records a primitive as fn(*args), its pullback kept on the op)
    assert "%3 = sin(%2)::float64" in str(err.value.tapegrad_tape)
    assert tapegrad.tracer.active_tapes() == []


def test_a_million_op_tape_without_recursion_errors():
    """A 100k-primitive chain is a tape of a million ops: traced, differentiated, summarized, pruned."""
    def chain(x, n):
        for _ in range(n):
            x = np.sin(x) * 0.999
        return x

    # the cyclic collector is off while the tape lives: its passes over a million live objects
    # were 3 s of the test's 8, and it has no part in what is tested (no walk recurses)
    gc.disable()
    try:
        y, back = pullback(chain, 0.3, 100_000)
        (_, dx, dn) = back(1.0)
        tape = back.tape
        assert len(tape) > 1_000_000
        assert tape.summary().startswith(f"Tape of {len(tape)} ops: 600000 reads, 200000 primitives (rrule)")
        # d/dx of sin∘...: the product of 0.999 cos(x_k), checked against a plain loop
        expected, x = 1.0, 0.3
        for _ in range(100_000):
            expected *= 0.999 * np.cos(x)
            x = np.sin(x) * 0.999
        assert dx == pytest.approx(expected, rel=1e-9) and y == pytest.approx(x, rel=1e-12)
        assert len(tapegrad.program.prune(tape)) <= len(tape)
    finally:
        gc.enable()


def test_threads_trace_independently():
    """Eight threads differentiating different functions at once get what one thread gets."""
    fns = [lambda x, k=k: np.sum(np.sin(x * (k + 1)) ** 2) + k * np.prod(x) for k in range(8)]
    xs = [np.linspace(0.1, 1.0, 5) + k for k in range(8)]
    expected = [gradient(f, x)[0] for f, x in zip(fns, xs)]
    results = [None] * 8
    barrier = threading.Barrier(8)

    def work(i):
        barrier.wait()
        out = []
        for _ in range(20):
            out.append(gradient(fns[i], xs[i])[0])
        results[i] = out

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(8):
        for r in results[i]:
            np.testing.assert_array_equal(r, expected[i])


def test_repeated_grad_calls_are_identical(rng):
    """grad on the same objects twice gives identical results: nothing accumulates between calls."""
    params = {"w": rng.standard_normal(4), "b": 0.3}
    x = rng.standard_normal(4)
    f = lambda p, x: np.sum(np.tanh(p["w"] * x + p["b"]) ** 2)  # noqa: E731
    first = grad(f, params, x)
    for _ in range(3):
        again = grad(f, params, x)
        np.testing.assert_array_equal(again[1][1]["w"], first[1][1]["w"])
        assert again[1][1]["b"] == first[1][1]["b"]
    _, back = pullback(f, params, x)
    a, b = back(1.0), back(1.0)
    np.testing.assert_array_equal(a[1]["w"], b[1]["w"])


def test_nan_and_inf_propagate_as_ieee_says():
    """NaN inputs give NaN gradients; an infinite derivative stays infinite, not NaN."""
    with np.errstate(all="ignore"):
        _, (_, d) = grad(lambda x: np.sin(x) * 2, np.nan)
        assert np.isnan(d)
        _, (_, d) = grad(lambda x: np.sqrt(x), 0.0)
        assert d == np.inf
        _, (_, d) = grad(lambda x: np.exp(x) + x, 800.0)
        assert d == np.inf


def test_zero_share_never_turns_an_infinite_value_into_nan():
    """A branch no path reaches adds nothing (ZeroTangent), so an inf share stays inf."""
    def f(x, y):
        unused = y * 0.0  # recorded, but its derivative never flows back into x
        return np.exp(x) + unused * 0

    with np.errstate(over="ignore"):
        _, (_, dx, dy) = grad(f, 800.0, 1.0)
    assert dx == np.inf and dy == 0.0


def test_nothing_is_serialized_with_pickle():
    """No module of tapegrad uses pickle (tapes are never loaded from untrusted bytes), but the
    one that reads a program from the child it forked, through a pipe only the two processes
    hold: it opens no file, and unpickles nothing but what it read from that pipe."""
    package = pathlib.Path(tapegrad.__file__).parent
    offenders = [p.relative_to(package).as_posix() for p in package.rglob("*.py")
                 if "import pickle" in p.read_text() or "pickle.load" in p.read_text()]
    assert offenders == ["program/background.py"]
    source = (package / "program" / "background.py").read_text()
    assert "open(" not in source.replace("os.open(os.devnull", "").replace("fdopen(write_end", "")
    assert "tempfile" not in source and source.count("loads(") == 2  # its definition, and poll's one call
    assert "self.result = loads(data[1:])" in source and "chunk = os.read(self.fd, 1 << 20)" in source


@pytest.mark.parametrize("f, x, made_by", [
    (lambda x: np.sum(np.clip(x + 1j * x, 0.0, 1.0).real), np.ones(2),
     r"numpy.clip\(%\d+::complex128\[2\], 0.0, 1.0\) at test_reliability.py:\d+ gives complex128\[2\]"),
    (lambda z: np.real(scipy.special.erf(z)), 1.0 + 2.0j,
     r"scipy.special.erf\(%\d+::complex128\) at test_reliability.py:\d+ gives complex128"),
    (lambda z: np.sum(np.sign(z).real), np.ones(2, complex),
     r"numpy.sign\(%\d+::complex128\[2\]\) at test_reliability.py:\d+ gives complex128\[2\]"),
    (lambda z: np.sum(np.fmax(np.abs(z), z.real) + np.cbrt(z.real) + np.clip(z, 0, 1).real), np.ones(2, complex),
     r"numpy.clip\(%\d+::complex128\[2\], 0, 1\) at test_reliability.py:\d+ gives complex128\[2\]"),
])
def test_a_complex_value_reaching_a_rule_not_written_for_it_is_refused(f, x, made_by):
    """A complex value made or met by a rule not written for complex values (outside
    registry.COMPLEX) raises, naming the call, the line, which rules take complex values and how
    to declare one; so does a non-differentiable function with a complex result (np.sign(z) is
    z/|z|, not piecewise constant). Nothing is silently wrong."""
    fix = (r": complex values are differentiated only through the rules written and tested for them "
           r"\(elementwise arithmetic and functions, .*declare it with tapegrad.extend.complex_rules\(fn\)$")
    with pytest.raises(tapegrad.ComplexValueError, match=made_by + fix):
        grad(f, x)
    with pytest.raises(tapegrad.ComplexValueError, match=made_by):
        pullback(f, x)


def test_a_complex_value_reaching_a_rule_not_written_for_it_is_refused_in_forward_mode():
    """jvp refuses as grad does: a complex dual value reaching a rule outside registry.COMPLEX."""
    with pytest.raises(tapegrad.ComplexValueError, match=r"numpy.clip\(.*\) at test_reliability.py:\d+ takes complex128\[2\]: "):
        tapegrad.jvp(lambda z: np.clip(z, 0.0, 1.0), (np.ones(2, complex),), (np.ones(2, complex),))
    with pytest.raises(tapegrad.ComplexValueError, match=r"numpy.sign\(.*\) at test_reliability.py:\d+ gives complex128: "):
        tapegrad.jvp(lambda z: np.sign(z), (1j,), (1.0 + 0j,))
    # a comparison of complex values is not differentiated and has no derivative to lose
    assert tapegrad.jvp(lambda z: z * (z == 1j), (1j,), (1.0 + 0j,)) == (1j, 1.0 + 0j)


def test_real_arguments_get_real_gradients_through_complex_intermediates():
    """A real argument gets a real gradient, however complex values pass between it and the
    result, also through a rule of the user's own that forgets the real part: the sweep takes
    it, so the real rules before it (np.maximum here) see real cotangents, also when their
    pullbacks are recorded (pullback) or traced (second order)."""
    def f(x, w):
        z = np.exp(1j * x) * w + x.astype(complex)
        return np.sum(np.abs(z) ** 2 + np.angle(z))

    x, w = np.array([0.3, -1.2]), np.array([1.0 + 0.5j, -0.2 + 2j])
    for g in (gradient(f, x, w)[0], pullback(f, x, w)[1](1.0)[1], tapegrad.compiled_grad(f)(x, w)[1][1]):
        assert g.dtype == np.float64 and g.shape == (2,)
    tapegrad.check_grad(lambda x: f(x, w), x, order=2)

    from tapegrad.extend import NO_TANGENT, complex_rules, primitive, rrule
    from tapegrad.registry import COMPLEX, RULES

    @primitive
    def rotate(x):
        return x * np.exp(0.5j)

    @rrule(rotate)
    def rotate_rrule(x):
        def rotate_pullback(dz):
            return NO_TANGENT, dz * np.exp(0.5j)  # the holomorphic formula, its real part forgotten
        return rotate(x), rotate_pullback

    complex_rules(rotate)
    try:
        # the complex cotangent rotate gives the real maximum(x, 0.1) must reach maximum's
        # pullback real: traced at second order, its np.where takes no complex value
        h = lambda x: np.sum(np.real(rotate(np.maximum(x, 0.1))) + np.imag(rotate(x)) ** 2)  # noqa: E731
        want = np.where(x > 0.1, np.cos(0.5), 0.0) + 2 * x * np.sin(0.5) ** 2
        for g in (gradient(h, x)[0], pullback(h, x)[1](1.0)[1]):
            assert g.dtype == np.float64
            np.testing.assert_allclose(g, want)
        tapegrad.check_grad(h, x, order=2)
    finally:
        RULES.pop(rotate, None)
        COMPLEX.discard(rotate)


def test_numpy_warnings_inside_rules_point_at_the_users_line():
    """log(0) warns at the user's line, naming the operation or its derivative (in a compiled
    program, the operation of the program's line); ignore and raise are kept."""
    import warnings

    f = lambda x: np.sum(np.log(x))  # noqa: E731
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        grad(f, np.zeros(2))
        pullback(f, np.zeros(2))[1](1.0)
        g = tapegrad.compiled_grad(f)
        g(np.zeros(2))  # an eager grad
        g(np.zeros(2))  # the trace of its program
        g(np.zeros(2))  # an eager grad (the program optimized)
        g(np.zeros(2))  # an eager grad (its source written)
        g(np.zeros(2))  # the program
    here = pathlib.Path(__file__).name
    assert [(pathlib.Path(w.filename).name, str(w.message), w.category) for w in caught] == [
        (here, "divide by zero encountered in log", RuntimeWarning),
        (here, "divide by zero encountered in the derivative of log", RuntimeWarning)] * 6 + [
        (here, "divide by zero encountered in log, in a compiled gradient program", RuntimeWarning),
        (here, "divide by zero encountered in divide, in a compiled gradient program", RuntimeWarning)]  # (1/x)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with np.errstate(divide="ignore"):
            grad(f, np.zeros(2))
    assert caught == []
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        grad(f, np.zeros(2))


def test_numpy_warnings_in_forward_mode_and_in_the_sweeps_sums_point_at_the_users_line():
    """jvp and forward-over-reverse Hessians warn at the user's line too, naming the forward rule;
    a sum of two shares of a derivative (inf + -inf) names the sum, not "numpy"."""
    import warnings

    def seen(run):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = run()
        return out, [(pathlib.Path(w.filename).name, str(w.message)) for w in caught]

    here = pathlib.Path(__file__).name
    out, caught = seen(lambda: tapegrad.jvp(np.log, (np.zeros(2),), (np.ones(2),)))
    assert caught == [(here, "divide by zero encountered in log or its derivative (forward mode)")] * 2
    np.testing.assert_array_equal(out[1], [np.inf, np.inf])
    out, caught = seen(lambda: grad(lambda x: np.log(x - x), 1.0))
    assert caught == [(here, "divide by zero encountered in log"),
                      (here, "divide by zero encountered in the derivative of log"),
                      (here, "invalid value encountered in the sum of the derivatives that reach one value")]
    assert np.isnan(out[1][1])
    _, caught = seen(lambda: tapegrad.hessian(lambda x: np.log(x - x), 1.0, mode="fwd-rev"))
    assert {name for name, _ in caught} == {here} and caught[-1][1] == (
        "invalid value encountered in add or its derivative (forward mode)")


@pytest.mark.parametrize("f", [np.log, lambda x: 1 / x, lambda x: x / x], ids=["log", "one-over", "x-over-x"])
def test_forward_mode_at_a_python_zero_follows_numpy_as_reverse_mode_does(f):
    """A Python float argument of jvp is numpy's float64 inside: 1/x at 0.0 is inf (with numpy's
    warning), not Python's ZeroDivisionError, and jvp agrees with grad."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        y, dy = tapegrad.jvp(f, (0.0,), (1.0,))
        want = grad(f, 0.0)
    np.testing.assert_array_equal([y, dy], [want[0], want[1][1]])
    assert type(y) is float and type(dy) is float


@pytest.mark.parametrize("f, expected", [
    (lambda x: np.sum(x, dtype=int) * 1.0, [0.0, 0.0, 0.0]),
    (lambda x: np.sum(np.cumsum(x, dtype=np.int32)) * 1.0, [0.0, 0.0, 0.0]),
    (lambda x: np.mean(x, dtype=int) * 1.0, [0.0, 0.0, 0.0]),
    (lambda x: np.sum(x.astype(np.int16)) * 1.0, [0.0, 0.0, 0.0]),
    (lambda x: np.sum(x + np.sum(x, dtype=int)), [1.0, 1.0, 1.0]),
])
def test_an_integer_result_of_a_float_argument_has_zero_derivative(f, expected):
    """dtype=int in sum, cumsum, mean and astype rounds to integers, which are piecewise constant."""
    x = np.array([1.5, 2.25, 3.75])
    _, (_, d) = grad(f, x)
    np.testing.assert_array_equal(tapegrad.fill_zeros(d, x) if d is tapegrad.ZERO else d, expected)
    assert tapegrad.gradient(lambda n: n ** 2, 3) == (6.0,)  # an int argument keeps the real derivative


@pytest.mark.parametrize("make_copy", [copy.copy, copy.deepcopy])
def test_a_copy_of_a_traced_value_is_traced(make_copy):
    """copy.copy and copy.deepcopy of a traced value give a traced value; a write into the copy leaves the original."""
    def f(x, s):
        y = make_copy(x)
        y[0] = 0.0
        t = make_copy(s)
        return np.sum(x * y) * t

    x = np.array([1.0, 2.0, 3.0])
    _, (_, dx, ds) = grad(f, x, 2.0)
    np.testing.assert_array_equal(dx, [0.0, 8.0, 12.0])
    assert ds == 13.0


@pytest.mark.parametrize("f", [lambda x: len({x, x * 1.0}) * x, lambda x: {x: 1.0}[x] * x])
def test_a_traced_value_in_a_set_or_as_a_dict_key_is_refused(f):
    """A traced value has no hash: {a, b} would keep two equal numbers apart, so it raises naming the line."""
    with pytest.raises(TypeError, match=r"the traced value %2::float64 was used in a set or as a dict key at "
                                        r"test_reliability.py:\d+; a traced value has no hash"):
        grad(f, 1.0)


def swallows_float(x):
    try:
        r = float(x)
    except TypeError:
        r = 0.0
    return x * 2.0 + r


def swallows_array(x):
    try:
        r = np.sum(np.asarray(x, dtype=float).tolist())
    except TypeError:
        r = 0.0
    return np.sum(x) + r


@pytest.mark.parametrize("f, x", [(swallows_float, 1.5), (swallows_array, np.ones(2))])
def test_an_error_the_function_catches_is_raised_again_when_it_returns(f, x):
    """try: float(x) except TypeError: r = 0.0 goes on with a constant: the trace raises at its end, naming the line."""
    for entry in (grad, pullback, tapegrad.compiled_grad(f)):
        with pytest.raises(ConcreteValueError, match=r"^(float|tolist)\(\) of the traced value .* at test_reliability.py:\d+ "
                                                     r"would drop its gradient.* \(this error, raised inside "
                                                     rf"{f.__name__}, was caught by it or by a library it called and "
                                                     r"the computation went on, so its result would silently lack a "
                                                     r"gradient: let it propagate and fix its cause\)$"):
            entry(f, x) if entry in (grad, pullback) else entry(x)


def test_a_pullback_whose_input_was_changed_in_place_refuses_to_run():
    """Writing into an argument (or a captured array) after pullback() makes back() raise, naming the input."""
    x, a = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    y, back = pullback(lambda x: np.sum(np.sin(x) * a), x)
    np.testing.assert_array_equal(back(1.0)[1], np.cos([1.0, 2.0]) * a)
    x[0] = 100.0
    with pytest.raises(tapegrad.StaleInputError, match=r"the input %3 \(x\)::float64\[2\] of this pullback was "
                                                       r"changed in place .* run at test_reliability.py:\d+ .*call "
                                                       r"pullback again"):
        back(1.0)
    x[0] = 1.0
    back(1.0)  # as recorded again
    a[1] = 0.0
    with pytest.raises(tapegrad.StaleInputError, match=r"the input %2 \(f.a\)"):
        back(1.0)


def nest(value, depth):
    for _ in range(depth):
        value = [value]
    return value


def test_deep_nesting_is_a_clear_error_or_a_loop_never_a_recursion_error():
    """5000 levels of lists: an argument or a result is refused naming it; walking call arguments needs no recursion."""
    with pytest.raises(TypeError, match=r"the argument v given at test_reliability.py:\d+ is nested too deeply"):
        grad(lambda v: 1.0, nest(1.0, 5000))
    with pytest.raises(TypeError, match=r"the argument v given at test_reliability.py:\d+ is nested too deeply"):
        tapegrad.compiled_grad(lambda v: 1.0)(nest(1.0, 5000))
    with pytest.raises(TypeError, match=r"^<lambda> returned a value nested too deeply to walk .* return its "
                                        r"numbers as an array"):
        grad(lambda x: nest(x, 5000), 1.0)
    deep = nest(2.0, 5000)
    assert list(tapegrad.pytree.nested([deep, (3.0, [deep])])) == [2.0, 3.0, 2.0]


def test_a_scipy_optimize_function_names_itself_not_the_objective():
    """scipy.optimize.minimize_scalar of a traced value is named (not the user's lambda it holds), with the line."""
    import scipy.optimize

    with pytest.raises(ConcreteValueError, match=r"^scipy.optimize.minimize_scalar cannot see traced values: use "
                                                 r"tapegrad.scipy.optimize.minimize_scalar .* at test_reliability.py:\d+"):
        grad(lambda x: scipy.optimize.minimize_scalar(lambda t: (t - x) ** 2).x, 1.5)


def test_a_refusal_scipy_swallows_leads_with_its_replacement():
    """scipy's brentq catches tapegrad's refusal in its C code and goes on: the error raised when the
    function returns opens with what to use instead, then says the refusal was caught."""
    import scipy.optimize

    with pytest.raises(ConcreteValueError, match=r"^scipy.optimize.brentq cannot see traced values: use "
                                                 r"tapegrad.scipy.optimize.brentq .* at test_reliability.py:\d+ .*"
                                                 r"\(this error, raised inside <lambda>, was caught by it or by a "
                                                 r"library it called .*\)$"):
        grad(lambda a: scipy.optimize.brentq(lambda t: t ** 3 - a, 0.0, 5.0), 2.0)


def test_the_einsum_sublist_form_is_differentiated():
    """np.einsum(x, [0], x, [0]) (the interleaved form) is differentiated as 'i,i->'."""
    x = np.array([1.0, -2.0, 3.0])
    np.testing.assert_allclose(gradient(lambda x: np.einsum(x, [0], x, [0]), x)[0], 2 * x)


@pytest.mark.parametrize("f", [lambda x: len({x, x * 1.0}) * x, lambda x: {x: 1.0}[x] * x])
def test_a_dual_value_in_a_set_or_as_a_dict_key_is_refused(f):
    """A dual value has no hash either: forward mode refuses sets and dict keys as reverse mode does."""
    with pytest.raises(TypeError, match=r"the dual value float64 was used in a set or as a dict key at "
                                        r"test_reliability.py:\d+; a dual value has no hash"):
        tapegrad.jvp(f, (1.0,), (1.0,))


@pytest.mark.parametrize("f, k", [(lambda x, k: np.sum(x[..., k] ** 2), 2),
                                  (lambda x, k: np.sum(x[..., k:] ** 2), 1),
                                  (lambda x, k: np.sum(x[k:, ::k] ** 2), 1)])
def test_replay_and_compiled_grad_resolve_traced_indices_in_tuples_and_slices(f, k):
    """A traced integer inside an index tuple or a slice is resolved on replay and in compiled gradients."""
    x = np.arange(6.0).reshape(2, 3)
    y, tape = tapegrad.trace(f, x, k)
    assert tape.replay(f, x + 1.0, k) == f(x + 1.0, k)
    g = tapegrad.compiled_grad(f)
    for x_new in (x, x * 2.0, x - 1.0):
        value, (_, dx, _) = g(x_new, k)
        assert value == f(x_new, k)
        plain_value, (_, plain_dx, _) = grad(f, x_new, k)
        np.testing.assert_array_equal(dx, plain_dx)
    tapegrad.check_grad(lambda x: f(x, k), x)


def test_compiled_grad_retraces_when_a_traced_slice_bound_changes():
    """A slice bound decides the shape of the result: a new bound takes a new trace, never a stale one."""
    f = lambda x, k: np.sum(x[k:] ** 2)
    g = tapegrad.compiled_grad(f)
    x = np.arange(4.0)
    for k in (1, 2, 1, 0):
        value, (_, dx, _) = g(x, k)
        assert value == f(x, k)
        np.testing.assert_array_equal(dx, np.where(np.arange(4) >= k, 2.0 * x, 0.0))


A3 = np.arange(3.0)


@pytest.mark.parametrize("f, closed_form", [
    (lambda c: np.sum(np.full_like(A3, c) * A3), lambda c: 3.0),
    (lambda c: np.sum(np.full_like(A3, c, shape=(2, 3)) ** 2), lambda c: 12.0 * c),
    (lambda c: np.sum(np.full(3, c) * A3), lambda c: 3.0),
    (lambda c: np.sum(np.full((2, 3), c, order="F") ** 2), lambda c: 12.0 * c),
    (lambda c: np.sum(np.full((3,), c, np.float32) * A3), lambda c: 3.0),
    (lambda c: np.sum(np.full((2, 2), [c, 1.0]) ** 2), lambda c: 4.0 * c),
])
def test_full_and_full_like_of_a_plain_shape_with_a_differentiable_fill_value(f, closed_form):
    """numpy asks only full_like's first argument about the call: a traced or dual fill value still gets its derivative."""
    c = 2.0
    value, (_, d) = grad(f, c)
    assert value == f(c) and d == closed_form(c)
    assert tapegrad.jvp(f, (c,), (1.0,)) == (f(c), closed_form(c))
    assert tapegrad.hessian(f, c) == tapegrad.hessian(f, c, mode="fwd")
    tapegrad.check_grad(lambda c: np.sum(np.full_like(A3, c, shape=(2, 3)) ** 3), c)


def test_full_like_with_a_dual_fill_value_outside_a_forward_call_names_full_like():
    """A dual value made by hand, used outside jvp, reaches numpy's full_like: the error names full_like and the fix."""
    with pytest.raises(ConcreteValueError, match=r"np.full_like\(a, fill_value\) at test_reliability.py:\d+ with a "
                                                 r"dual fill value.*fill_value \* np.ones_like\(a\)"):
        np.full_like(A3, tapegrad.Dual(2.0, 1.0))


def _nested(value, depth):
    for _ in range(depth):
        value = [value]
    return value


def _cyclic(value):
    c = [value]
    c.append(c)
    return c


def test_np_array_of_deeply_nested_traced_values_is_refused_clearly():
    """np.array of a list of traced values nested past numpy's 64 dimensions says so, as numpy does, never RecursionError."""
    with pytest.raises(ValueError, match=r"np.array of a list of traced values nested more than 64 levels deep at "
                                         r"test_reliability.py:\d+: an array has at most 64 dimensions"):
        grad(lambda x: np.sum(np.array(_nested(x, 1500))), 1.0)
    value, (_, d) = grad(lambda x: np.sum(np.array(_nested(x * x, 60))), 3.0)
    assert (value, d) == (9.0, 6.0)


@pytest.mark.parametrize("call, what", [
    (lambda v: tapegrad.fill_zeros(tapegrad.ZeroTangent(), v), "fill_zeros"),
    (lambda v: tapegrad.fill_zeros(v, v), "fill_zeros"),
    (lambda v: tapegrad.update(v, v, lr=0.1), "update"),
])
@pytest.mark.parametrize("make", [lambda: _nested(1.0, 1500), lambda: _cyclic(1.0)], ids=["deep", "cyclic"])
def test_tree_walkers_refuse_deep_and_cyclic_values_clearly(call, what, make):
    """fill_zeros and update name themselves, the line and the fix for a value too deep to walk or holding itself."""
    with pytest.raises(TypeError, match=rf"the value passed to {what} given at test_reliability.py:\d+ is nested "
                                        rf"too deeply to walk .* or holds itself"):
        call(make())


def test_forward_mode_follows_cyclic_arguments():
    """jvp takes an argument that holds itself, as grad does; a Hessian of one, an infinite block structure, is refused."""
    c = _cyclic(2.0)
    assert tapegrad.jvp(lambda c: c[0] ** 3 + c[1][0], (c,), (_cyclic(1.0),)) == (10.0, 13.0)
    with pytest.raises(TypeError, match=r"the Jacobian or Hessian at test_reliability.py:\d+ is taken with respect "
                                        r"to an argument that holds itself"):
        tapegrad.hessian(lambda c: c[0] ** 3, c)


def test_jvp_with_a_shared_array_argument_gives_it_one_tangent():
    """An array passed twice inside one argument is one leaf: its tangent is read once, the leaves stay aligned."""
    a, b = np.array([1.0, 2.0]), np.array([3.0])
    f = lambda p: np.sum(p[0] * p[1]) + np.sum(p[2] ** 2)
    assert tapegrad.jvp(f, ([a, a, b],), ([np.ones(2), np.ones(2), np.ones(1)],)) == (14.0, 12.0)


def test_compiled_grad_of_a_cyclic_argument_is_the_plain_gradient():
    """A compiled gradient cannot return a tangent that holds itself: such a call is traced afresh, as grad does it."""
    g = tapegrad.compiled_grad(lambda c: c[0] ** 2 * np.sum(c[1][1][1][0]))
    for v in (2.0, 3.0):
        value, (_, d) = g(_cyclic(v))
        assert value == v ** 3 and d[0] == 3 * v ** 2 and d[1] is d


def log_where_finite(x):
    with np.errstate(divide="ignore"):
        y = np.log(x)
    return np.sum(np.where(np.isfinite(y), y, 0.0))


def test_compiled_grad_honours_an_errstate_set_inside_f():
    """Warnings f silences with np.errstate stay silent on every call of its compiled gradient, and the values are grad's."""
    g = tapegrad.compiled_grad(log_where_finite)
    x = np.array([0.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            value, (_, d) = g(x)
            assert value == np.log(2.0)
            np.testing.assert_array_equal(d, [0.0, 0.5])
