"""tapegrad.explain_formula checks a template when it registers it: a placeholder explain does not
fill is refused there, naming it and the ones allowed, not met later as a KeyError inside explain."""
import pytest

import tapegrad
from tapegrad.registry import RULES
from tapegrad.show.formulas import FORMULAS, _check_template


@pytest.fixture
def cube():
    @tapegrad.primitive
    def cube(x):
        return x ** 3

    @tapegrad.rrule(cube)
    def cube_rrule(x):
        return cube(x), lambda dy: (tapegrad.NO_TANGENT, dy * 3 * x ** 2)

    yield cube
    FORMULAS.pop(cube, None)
    RULES.pop(cube, None)


ALLOWED = r"A template may use \{dy\}, \{y\}, \{a\[i\]\}, \{ix\[i\]\} and \{over\}"


@pytest.mark.parametrize("template, message", [
    ("3·{b[0]}²", r"the placeholder \{b\[0\]\} in the template '3·\{b\[0\]\}²' names nothing explain fills in\. "
                  + ALLOWED),
    ("3·{a}²", r"the placeholder \{a\} .* names nothing explain fills in; \{a\} needs an argument's position, "
               r"\{a\[0\]\}\. " + ALLOWED),
    ("{0}·{dy}", r"the placeholder \{0\} .*" + ALLOWED),
    ("{dy.real}", r"the placeholder \{dy\.real\} .*" + ALLOWED),
    ("{dy:{width}}", r"the placeholder \{width\} in the template '\{dy:\{width\}\}'"),
    ("3·{a[1]}²", r"the placeholder \{a\[1\]\} in the template '3·\{a\[1\]\}²' names argument 1, but cube takes "
                  r"1 positional argument \(\{a\[0\]\} is the first\)"),
    ("3·{a[0]", r"the template '3·\{a\[0\]' is not a format string .*write a brace meant as text as \{\{ or \}\}"),
], ids=["unknown name", "no position", "positional", "attribute", "nested", "past the last", "unclosed"])
def test_a_template_explain_cannot_fill_is_refused_when_registered(cube, template, message):
    """The error names explain_formula's call and line, the bad placeholder and the allowed ones
    (it was accepted, and explain raised KeyError: 'b' later)."""
    with pytest.raises(ValueError, match=r"tapegrad\.explain_formula\(.*cube, \.\.\.\) at "
                                         r"test_explain_formula\.py:\d+: " + message):
        tapegrad.explain_formula(cube, template, elementwise=True)
    assert cube not in FORMULAS


def test_a_template_that_is_not_a_string_is_refused(cube):
    """A number where a template goes is a TypeError naming what a template is."""
    with pytest.raises(TypeError, match=r"a template is a string, or None for an argument with no tangent"):
        tapegrad.explain_formula(cube, 3)


def test_a_good_template_still_registers_and_explains(cube):
    """The docstring's template registers and explain prints it."""
    tapegrad.explain_formula(cube, "3·{a[0]}²", elementwise=True)
    assert "d%2 = d%3 · 3·%2² = 12" in tapegrad.show.explain_text(cube, 2.0)


def test_every_template_of_tapegrads_own_rules_passes_the_check():
    """The check accepts every string template in tapegrad's own formula table."""
    for fn, entry in FORMULAS.items():
        if not callable(entry.templates):
            for template in entry.templates:
                _check_template(fn, template, entry.kind == "partial")
