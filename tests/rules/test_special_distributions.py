"""Rules of scipy.special's distribution functions in their variable (stdtr, chdtr, chdtrc,
gdtr, gdtrc, pdtr, pdtrc, bdtr, bdtrc, nbdtr, nbdtrc, fdtr, fdtrc): the slope is the density;
the shape parameters are refused with the function to write instead; the counts are integers."""
import numpy as np
import pytest
import scipy.special as sp
import scipy.stats

from tapegrad import NO_TANGENT, NoRuleError, gradient, rrule

from _special_rows import CASES, check_row, exercised, order2_rows, row

TABLE = [
    row(sp.stdtr, [(-3, 3)], lambda t: sp.stdtr(3.5, t)),
    row(sp.chdtr, [(0.3, 5)], lambda x: sp.chdtr(3.5, x)), row(sp.chdtrc, [(0.3, 5)], lambda x: sp.chdtrc(2.5, x)),
    row(sp.gdtr, [(0.5, 2), (0.3, 3)], lambda a, x: sp.gdtr(a, 2.5, x)),
    row(sp.gdtrc, [(0.5, 2), (0.3, 3)], lambda a, x: sp.gdtrc(a, 2.5, x)),
    row(sp.pdtr, [(0.5, 4)], lambda m: sp.pdtr(3, m)), row(sp.pdtrc, [(0.5, 4)], lambda m: sp.pdtrc(3, m)),
    row(sp.bdtr, [(0.1, 0.9)], lambda p: sp.bdtr(3, 7, p)), row(sp.bdtrc, [(0.1, 0.9)], lambda p: sp.bdtrc(3, 7, p)),
    row(sp.nbdtr, [(0.1, 0.9)], lambda p: sp.nbdtr(3, 7, p)), row(sp.nbdtrc, [(0.1, 0.9)], lambda p: sp.nbdtrc(3, 7, p)),
    row(sp.fdtr, [(0.2, 4)], lambda x: sp.fdtr(3.0, 5.5, x)), row(sp.fdtrc, [(0.2, 4)], lambda x: sp.fdtrc(3.0, 5.5, x)),
]

#: scipy's float32 loop of these takes the counts as floats and warns that they are deprecated:
#: their float32 case runs in float64
FLOAT64_LOOPS_ONLY = {sp.bdtr, sp.bdtrc}

EXERCISED = exercised(TABLE)
#: (rule's function, function differentiated, float64 arguments): run by tests/conformance
ORDER2 = order2_rows(TABLE, 14)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("fn, f, domains", TABLE)
def test_rule(fn, f, domains, case, rng):
    """Each rule matches central differences in both modes: at Python floats (float gradients),
    on arrays, and in float32."""
    if case == "float32" and fn in FLOAT64_LOOPS_ONLY:
        case = "vector"
    check_row(f, domains, case, rng)


def test_slopes_are_scipy_stats_densities():
    """Each slope is the density scipy.stats computes (minus it for the complements)."""
    stats = scipy.stats
    assert gradient(lambda t: sp.stdtr(4.5, t), 0.7)[0] == pytest.approx(stats.t.pdf(0.7, 4.5), rel=1e-13)
    assert gradient(lambda x: sp.chdtrc(3.0, x), 2.2)[0] == pytest.approx(-stats.chi2.pdf(2.2, 3.0), rel=1e-13)
    da, dx = gradient(lambda a, x: sp.gdtr(a, 2.5, x), 1.5, 2.0)
    assert dx == pytest.approx(stats.gamma.pdf(2.0, 2.5, scale=1 / 1.5), rel=1e-13)
    assert da == pytest.approx(2.0 / 1.5 * dx, rel=1e-13)
    assert gradient(lambda m: sp.pdtr(3, m), 2.5)[0] == pytest.approx(-stats.poisson.pmf(3, 2.5), rel=1e-13)
    assert gradient(lambda p: sp.bdtr(3, 7, p), 0.3)[0] == pytest.approx(-7 * stats.binom.pmf(3, 6, 0.3), rel=1e-13)
    assert gradient(lambda p: sp.nbdtr(3, 7, p), 0.4)[0] == pytest.approx(stats.beta.pdf(0.4, 7, 4), rel=1e-13)
    assert gradient(lambda x: sp.fdtr(3.0, 5.5, x), 1.3)[0] == pytest.approx(stats.f.pdf(1.3, 3.0, 5.5), rel=1e-13)


@pytest.mark.parametrize("fn, args, name, through", [
    (sp.stdtr, (3.0, 1.0), "df", "betainc"), (sp.chdtr, (3.0, 1.0), "v", "gammainc"),
    (sp.chdtrc, (3.0, 1.0), "v", "gammaincc"), (sp.gdtr, (1.0, 3.0, 1.0), "b", "gammainc"),
    (sp.gdtrc, (1.0, 3.0, 1.0), "b", "gammaincc"), (sp.fdtr, (3.0, 4.0, 1.0), "dfn", "betainc"),
    (sp.fdtrc, (3.0, 4.0, 1.0), "dfn", "betaincc"),
])
def test_shape_parameter_is_refused_with_the_way_out(fn, args, name, through):
    """A gradient that reaches a shape parameter raises NoRuleError naming the function, the
    parameter and the incomplete function to write instead; a constant one costs nothing."""
    position = {"df": 0, "v": 0, "b": 1, "dfn": 0}[name]

    def f(s):
        full = list(args)
        full[position] = s
        return fn(*full)
    with pytest.raises(NoRuleError, match=rf"scipy\.special\.{fn.__name__} with respect to its argument {name} "
                                          rf"\(float64\).*scipy\.special\.{through}\("):
        gradient(f, args[position])


def test_counts_get_no_tangent():
    """k and n are counts (scipy truncates a float): their tangents are NoTangent."""
    _, back = rrule(sp.bdtr, 3, 7, 0.4)
    assert back(1.0)[1] is NO_TANGENT and back(1.0)[2] is NO_TANGENT
    _, back = rrule(sp.pdtr, 3, 2.0)
    assert back(1.0)[1] is NO_TANGENT
