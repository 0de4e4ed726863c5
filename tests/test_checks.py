"""tapegrad.checks: central differences, and check_grad comparing reverse and forward mode against them."""
import collections

import numpy as np
import pytest

import tapegrad
from tapegrad import check_grad, frule, ngradient, primitive, rrule


def test_check_grad_catches_a_wrong_rule():
    """check_grad fails, with both numbers, when a rule is wrong: the checks can fail."""
    @primitive
    def cube(x):
        return x ** 3

    @rrule(cube)
    def cube_rrule(x):
        return cube(x), lambda dy: (tapegrad.NO_TANGENT, 2 * x ** 2 * dy)  # should be 3x²

    with pytest.raises(AssertionError, match="reverse mode gives .* central differences give"):
        check_grad(lambda x: cube(x), 1.3)


def test_ngradient_gives_one_central_difference_per_argument():
    """A number gets a float, an array an array of its shape, an integer a float; a string gets None."""
    da, db, ds, dn = ngradient(lambda a, b, s, n: a * np.sum(b * b) * n, 2.0, np.array([1.0, 3.0]), "s", 3)
    assert type(da) is float and da == pytest.approx(30.0, rel=1e-8)
    assert db.shape == (2,) and db == pytest.approx([12.0, 36.0], rel=1e-8)
    assert ds is None
    assert type(dn) is float and dn == pytest.approx(20.0, rel=1e-8)


def test_check_grad_passes_silently_on_structures_and_array_results():
    """A right gradient of a dict argument with an array result (checked through a random seed) raises nothing."""
    assert check_grad(lambda p: np.sin(p["w"]) * p["b"], {"w": np.linspace(0.0, 1.0, 3), "b": 2.0}) is None


@primitive
def slightly_off_sin(x):
    return np.sin(x)


@rrule(slightly_off_sin)
def slightly_off_sin_rrule(x):
    return np.sin(x), lambda dy: (tapegrad.NO_TANGENT, dy * np.cos(x) * 1.01)  # 1% off


@pytest.mark.parametrize("result", ["tuple", "dict", "namedtuple"])
def test_check_grad_of_a_result_of_several_values(result):
    """A result of several values (a tuple, a dict, a NamedTuple) is paired with its seed value
    by value, given or drawn in its structure, at first and second order (the whole result was
    made one array: a tuple of shapes (2,) and () raised "inhomogeneous shape", a dict
    "unsupported operand"); a rule 1% off inside one value is still caught."""
    Pair = collections.namedtuple("Pair", "wave corner")
    pack = {"tuple": lambda a, b: (a, b), "dict": lambda a, b: {"wave": a, "corner": b},
            "namedtuple": Pair}[result]
    x = np.array([0.3, 0.4])
    good = lambda x: pack(np.sin(x) * x[1], x[0] * 2.0)  # noqa: E731
    assert check_grad(good, x, order=2) is None
    assert check_grad(good, x, seed=pack(np.ones(2), 1.0)) is None
    with pytest.raises(AssertionError, match="reverse mode gives"):
        check_grad(lambda x: pack(slightly_off_sin(x), x[0] * 2.0), x)


@primitive
def third_power(x):
    return x ** 3


@rrule(third_power)
def third_power_rrule(x):
    return third_power(x), lambda dy: (tapegrad.NO_TANGENT, 3 * x ** 2 * dy)


@frule(third_power)
def third_power_frule(dargs, x):
    return third_power(x), 2 * x ** 2 * dargs[0]  # should be 3x²


def test_check_grad_catches_a_wrong_forward_rule():
    """With a right reverse rule and a wrong forward one, check_grad fails on forward mode, with both numbers."""
    with pytest.raises(AssertionError, match=r"^forward mode gives .* along a random direction, central "
                                             r"differences give .* \(rtol=1e-06, atol=1e-07\)$"):
        check_grad(lambda x: third_power(x), 1.3)
    assert check_grad(lambda x: third_power(x), 1.3, modes=("rev",)) is None


def test_check_grad_of_order_two_catches_a_rule_right_only_at_first_order():
    """A rule whose pullback computes its slope from the plain value (dropping what the value
    depends on) is right at first order and wrong at the second: order=2 fails, naming the mode."""
    @primitive
    def wave(x):
        return np.sin(x)

    @rrule(wave)
    def wave_rrule(x):
        # wrong: a traced or dual x (the rule inside a derivative) gets the slope at 0.7 as a constant
        slope = np.cos(x) if isinstance(x, float) else np.cos(0.7)
        return wave(x), lambda dy: (tapegrad.NO_TANGENT, dy * slope)

    check_grad(wave, 0.7)
    with pytest.raises(AssertionError, match="of the reverse-mode derivative: reverse mode gives"):
        check_grad(wave, 0.7, order=2)
    check_grad(np.sin, 0.7, order=2)


def test_check_grad_order_needs_an_argument_to_differentiate():
    """order > 1 differentiates the positional arguments that hold numbers; with none it says so."""
    with pytest.raises(ValueError, match="needs an argument to differentiate: a float, a complex number, "
                                         "a float array, or a structure holding them"):
        check_grad(lambda s, k: float(len(s)) * k, "ab", True, order=2)


def test_check_grad_of_order_two_takes_a_structure_of_parameters():
    """A dict of parameters (with a count and a label in it) is checked at order 2 and 3, each
    leaf along a direction of its own (it raised "needs a positional float or complex
    argument"), and a rule right only at first order is caught through it."""
    def f(p):
        y = p["x"]
        for _ in range(p["n"]):
            y = np.sin(y) * p["w"]
        return np.sum(y ** 2) if p["act"] == "squares" else np.sum(y)

    p = {"x": np.array([0.3, 0.6]), "n": 2, "w": 1.5, "act": "squares"}
    check_grad(f, p, order=2)
    check_grad(f, p, order=3, modes=("fwd",))

    @primitive
    def wave(x):
        return np.sin(x)

    @rrule(wave)
    def wave_rrule(x):
        slope = np.cos(x) if isinstance(x, np.ndarray) and type(x) is np.ndarray else np.cos(0.7)
        return wave(x), lambda dy: (tapegrad.NO_TANGENT, dy * slope)

    g = lambda q: np.sum(wave(q["x"]) * q["w"])  # noqa: E731
    check_grad(g, p, modes=("rev",))
    with pytest.raises(AssertionError, match="of the reverse-mode derivative: reverse mode gives"):
        check_grad(g, p, order=2, modes=("rev",))


def test_check_grad_of_cyclic_arguments():
    """check_grad walks a list or a dict that holds itself, and moves each number once."""
    c = [1.5]
    c.append(c)
    check_grad(lambda c: c[0] * 2 + c[1][0] * np.sin(c[1][1][0]), c)
    d = {"a": np.array([0.5, 2.0])}
    d["self"] = d
    check_grad(lambda d: np.sum(d["self"]["a"] ** 2 * d["a"]), d)


def test_check_grad_of_a_cycle_through_a_tuple_is_refused():
    """A tuple is built after its contents, so a cycle through one cannot be copied: the error names the argument."""
    t = [1.0]
    tt = (t, 2.0)
    t.append(tt)
    with pytest.raises(TypeError, match=r"check_grad cannot rebuild argument 0 at \[0, 1\]: it holds itself "
                                        r"through a tuple.*make the cycle go through a list or a dict"):
        check_grad(lambda t: t[0][0] * t[1], tt)


@pytest.mark.parametrize("kind", [collections.OrderedDict, lambda **kw: collections.defaultdict(float, **kw)])
def test_check_grad_keeps_dict_subclasses(kind):
    """An OrderedDict or defaultdict argument is rebuilt as its own type."""
    check_grad(lambda d: d["a"] ** 3 * d["b"], kind(a=2.0, b=0.5))


def test_check_grad_moves_complex_arguments_in_both_parts():
    """A complex argument is checked along a random complex direction, with the pairing
    Re Σ g·v of autograd's convention: a rule that conjugates (PyTorch's convention) fails,
    the right one passes, and a complex result is checked through its seed."""
    from tapegrad.extend import NO_TANGENT, complex_rules, primitive, rrule
    from tapegrad.registry import COMPLEX, RULES

    z = np.array([1 + 2j, 0.5 - 1j])
    tapegrad.check_grad(lambda z: np.sum(np.abs(z) ** 2 + np.real(z ** 3)), z)
    tapegrad.check_grad(lambda z: np.abs(z) ** 2, 1 + 2j)
    tapegrad.check_grad(lambda z, x: np.exp(z) * x, z, np.array([0.3, 2.0]))
    # and at second order, in the four combinations of modes
    tapegrad.check_grad(lambda z: np.sum(np.abs(z) ** 2 + np.real(z ** 3) + np.imag(np.sin(z))), z, order=2)

    @primitive
    def cube(z):
        return z ** 3

    @rrule(cube)
    def cube_rrule(z):
        def cube_pullback(g):
            return NO_TANGENT, g * np.conj(3 * z ** 2)  # conjugated: wrong under this convention
        return cube(z), cube_pullback

    complex_rules(cube)
    try:
        with pytest.raises(AssertionError, match="^reverse mode gives .* along a random direction, central differences give"):
            tapegrad.check_grad(lambda z: np.sum(np.real(cube(z))), z, modes=("rev",))
    finally:
        RULES.pop(cube, None)
        COMPLEX.discard(cube)
