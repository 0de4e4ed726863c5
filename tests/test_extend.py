"""tapegrad.extend: the rule author's surface, one import away, and enough to write a working rule."""
import numpy as np
import pytest

import tapegrad
import tapegrad.extend
from tapegrad import arraylike, broadcasting, context, registry, structures, tangents
from tapegrad.extend import NO_TANGENT, Thunk, primitive, rrule, stand_in, unbroadcast

#: each name of tapegrad.extend and the module it is defined in
HOME = {
    "rrule": registry, "frule": registry, "register_rrule": registry, "find_rrule": registry,
    "registered_rules": registry, "nondifferentiable": registry, "is_nondifferentiable": registry,
    "unbroadcast": broadcasting, "stand_in": registry, "complex_rules": registry, "partials": registry,
    "whole": registry, "declaration": registry,
    "primitive": arraylike, "BaseContext": context,
    "Thunk": tangents, "ZERO": tangents, "NO_TANGENT": tangents, "Tangent": tangents, "accum": tangents,
    "register_structure": structures,
}


def test_every_name_is_importable_and_is_its_home_modules_object():
    """`from tapegrad.extend import *` gives exactly the names of __all__, each the very object its module defines."""
    namespace = {}
    exec("from tapegrad.extend import *", namespace)
    del namespace["__builtins__"]
    assert sorted(namespace) == sorted(tapegrad.extend.__all__) == sorted(HOME)
    for name, home in HOME.items():
        assert namespace[name] is getattr(home, name), name


@primitive
def scaled_softplus(x, s):
    return s * np.log1p(np.exp(x))


@rrule(scaled_softplus)
def scaled_softplus_rrule(x, s):
    softplus = np.log1p(np.exp(x))
    sigmoid = 1 / (1 + np.exp(-x))
    x_like, s_like = stand_in(x), stand_in(s)  # only their shapes are needed below

    def scaled_softplus_pullback(dy):
        return (NO_TANGENT, unbroadcast(dy * s * sigmoid, x_like),
                Thunk(lambda: unbroadcast(dy * softplus, s_like)))

    return s * softplus, scaled_softplus_pullback


def loss(x, s):
    return np.sum(scaled_softplus(x, s))


def test_a_rule_written_with_extend_alone_gives_the_closed_form():
    """Σ s_i softplus(x_j) over a broadcast (2, 1) x (3,) has dx = Σs · sigmoid(x) and ds_i = Σ softplus(x)."""
    x, s = np.array([-1.0, 0.5, 2.0]), np.array([[0.5], [1.5]])
    value, (_, dx, ds) = tapegrad.grad(loss, x, s)
    assert value == pytest.approx(2.0 * np.sum(np.log1p(np.exp(x))), rel=1e-14)
    np.testing.assert_allclose(dx, 2.0 / (1 + np.exp(-x)), rtol=1e-14)
    np.testing.assert_allclose(ds, np.full((2, 1), np.sum(np.log1p(np.exp(x)))), rtol=1e-14)
    # forward mode derives its rule from this one
    _, along_x = tapegrad.jvp(loss, (x, s), (np.ones(3), np.zeros((2, 1))))
    assert along_x == pytest.approx(np.sum(dx), rel=1e-14)


def test_a_rule_written_with_extend_is_one_op_of_the_gradient_tape():
    """The marked function with its rule is recorded as one rrule call, not as the numpy calls inside it."""
    _, back = tapegrad.pullback(loss, np.zeros(3), 2.0)
    assert tapegrad.show.format_tape(back.tape, compact=True) == (
        "Tape\n"
        "  inp %1::function loss\n"
        "  inp %2::float64[3]   # x\n"
        "  inp %3::float64      # s\n"
        "  %4, pb%4 = rrule(scaled_softplus, %2, %3)::float64[3]\n"
        "  %5, pb%5 = rrule(sum, %4)::float64"
    )


def test_a_users_rule_is_declared_in_one_place():
    """The decorator of a user's rule takes the facts tapegrad's own rules declare: the formula
    explain prints, the forward rule, complex support; each is used."""
    from tapegrad.extend import ZERO, declaration, partials

    @primitive
    def twice(x):
        return 2 * x

    def twice_frule(dargs, x):
        return twice(x), ZERO if dargs[0] is ZERO else 2 * dargs[0]

    @rrule(twice, formula=partials("2"), forward=twice_frule, complex=True)
    def twice_rrule(x):
        return twice(x), lambda dy: (NO_TANGENT, 2 * dy)

    try:
        assert "  d%2 = d%3 · 2 = 2\n" in tapegrad.show.explain_text(twice, 1.5)
        assert tapegrad.jvp(twice, (1.5,), (1.0,)) == (3.0, 2.0)
        np.testing.assert_allclose(tapegrad.gradient(lambda z: np.real(twice(z) * np.conj(twice(z))), 1 + 2j)[0],
                                   8 - 16j)
        assert declaration(twice).forward is twice_frule
    finally:
        tapegrad.extend.nondifferentiable(twice)
        tapegrad.registry.NONDIFF.discard(twice)
        tapegrad.registry.FORMULAS.pop(twice, None)
        tapegrad.registry.COMPLEX.discard(twice)
