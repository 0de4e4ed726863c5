"""tapegrad.show.formulas: every rule of tapegrad declares the formula explain prints for it."""
import json

import numpy as np

import tapegrad
from tapegrad.registry import REFERENCES, RULES, declaration
from tapegrad.show.explain import explain_text, generic_formula
from tapegrad.show.formulas import FORMULAS, missing_formula_lines


def test_every_registered_rule_has_a_formula():
    """No rule of tapegrad falls back to the generic "pullback of ... applied to" text in explain."""
    missing = [fn for fn, rule in RULES.items()
               if (rule.__module__ or "").startswith("tapegrad") and fn not in FORMULAS]
    assert missing == [], (
        "these rules have no formula for tapegrad.explain; declare one with the rule:\n"
        + "\n".join(missing_formula_lines(missing)))


def test_every_formula_can_be_written():
    """Each template uses only the placeholders explain fills in (dy, y, a[i], ix[i], over)."""
    names = ["y1", "y2", "y3", "y4", "y5"]
    values = [np.ones(3), 2.0, (slice(1, None), 0), np.ones(3), np.ones(3)]
    fields = {"dy": "ȳ9", "y": "y9", "a": names, "ix": ["i0", "i1", "i2", "i3", "i4"], "over": "axis 0"}
    for fn, entry in FORMULAS.items():
        for i in range(4):
            template = entry.template(i, names, values, {})
            if template is not None:
                text = template.format(**fields)
                assert "{" not in text and "pullback of" not in text, (fn, text)


def test_missing_formula_message_names_the_line_to_add():
    """The failure message gives the decorator to write, with the rule's file and the
    function's importable name."""
    assert missing_formula_lines([np.sin, np.linalg.solve, json.dumps]) == [
        'tapegrad/rules/unary.py: @rrule(np.sin, formula=whole("<tangent of x, written with {dy}>"))  '
        '# or formula=partials(<∂y/∂arg>, ...) if elementwise',
        'tapegrad/rules/linalg.py: @rrule(np.linalg.solve, formula=whole("<tangent of a, written with {dy}>", '
        '"<tangent of b, written with {dy}>"))  # or formula=partials(<∂y/∂arg>, ...) if elementwise',
        '@rrule(json.dumps, formula=whole("<tangent of x, written with {dy}>"))  # or formula=partials(<∂y/∂arg>, '
        '...) if elementwise']


def test_a_formula_is_declared_with_its_rule():
    """A rule's formula is a fact of its declaration: declaration(fn) gives it back, with the
    rest of what the registry knows of fn."""
    d = declaration(np.multiply)
    assert d.rule is REFERENCES[np.multiply] and d.fast_path is RULES[np.multiply] and d.formula is FORMULAS[np.multiply]
    assert d.formula.kind == "partial" and d.formula.templates == ("{a[1]}", "{a[0]}")
    assert d.complex and d.forward.__name__ == "multiply_frule" and not d.view


def test_generic_text_is_what_a_rule_without_formula_gets():
    """A user's rule with no formula still explains, with the generic text."""
    @tapegrad.primitive
    def twice(x):
        return 2 * x

    @tapegrad.rrule(twice)
    def twice_rrule(x):
        return twice(x), lambda dy: (tapegrad.NO_TANGENT, 2 * dy)

    text = explain_text(twice, 1.5)
    assert f"  d%2 = {generic_formula(twice, 'd%3', 0)} = 2\n" in text
    FORMULAS.pop(twice, None)
    tapegrad.explain_formula(twice, "2·{dy}")
    try:
        assert "  d%2 = 2·d%3 = 2\n" in explain_text(twice, 1.5)
    finally:
        FORMULAS.pop(twice, None)
        RULES.pop(twice, None)


def layer(W, b, x):
    h = np.tanh(x @ W - b)
    m = np.max(h, axis=1, keepdims=True)
    return np.sum(h[:, 1:] - m)


W = np.array([[0.5, -1.0, 0.75], [2.0, 0.25, -0.5]])
B = np.array([0.5, -0.5, 0.0])
X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])


def test_explain_of_array_code_names_keywords_broadcasts_matmul_and_getitem():
    """max shows axis/keepdims; a broadcast argument's adjoint says which axes were summed;
    matmul and getitem read as their formulas; the numbers are those of grad."""
    text = explain_text(layer, W, B, X)
    lines = [line.split(" = [")[0] if " = [" in line else line for line in text.splitlines()]
    assert lines[4:12] == [
        "  %5 = matmul(%4, %2)",
        "  %6 = subtract(%5, %3)",
        "  %7 = tanh(%6)",
        "  %8 = max(%7, axis=1, keepdims=True)",
        "  %9 = %7[:, 1:]",
        "  %10 = subtract(%9, %8)",
        f"  %11 = sum(%10) = {layer(W, B, X):.10g}",
        "Backward: d%k = ∂result/∂%k, from the seed back to the inputs",
    ]
    assert lines[12:] == [
        "  d%11 = 1   (seed)",
        "  d%10 = d%11 broadcast back over every axis",
        "  d%9 = d%10",
        "  d%8 = -d%10, summed over axis 1, broadcast in the forward pass",
        "  d%7 = d%9 scattered into zeros shaped like %7 at [:, 1:]",
        "  d%7 += d%8 sent to where %7 is largest over axis 1 (shared at a tie)",
        "  d%6 = d%7 · (1 - %7²)",
        "  d%5 = d%6",
        "  d%3 = -d%6, summed over axis 0, broadcast in the forward pass",
        "  d%4 = d%5 · %2ᵀ",
        "  d%2 = %4ᵀ · d%5",
        "Gradient: ∂f/∂W = d%2",
    ]
    _, (_, dW, db, dx) = tapegrad.grad(layer, W, B, X)
    assert f"∂f/∂b = d%3 = {np.array2string(db, precision=6, separator=', ')}" in text
    tapegrad.check_grad(layer, W, B, X)


def test_the_numbers_of_a_broadcast_sum_are_the_sums():
    """ȳ of a row vector added to each row of a matrix is the column sum of ȳ of the result."""
    text = explain_text(lambda a, v: np.sum((a + v) * a), np.arange(6.0).reshape(3, 2), np.array([1.0, 2.0]))
    assert "  d%3 = d%4, summed over axis 0, broadcast in the forward pass = [6., 9.]\n" in text


C = np.array([[1.0, 2.0], [3.0, 4.0]])


def test_a_constant_array_is_named_once_and_used_by_name():
    """An array the code holds (not an input) is listed once as c1 and named so in the formulas;
    the gradient of sum(X @ W + X) by W is Xᵀ times a matrix of ones (X a global: a closure's
    values would be inputs)."""
    assert explain_text(lambda W: np.sum(C @ W + C), np.eye(2)) == (
        "Forward\n"
        "  %2 = W = [[1., 0.], [0., 1.]]\n"
        "  c1 = constant [[1., 2.], [3., 4.]]\n"
        "  %3 = matmul(c1, %2) = [[1., 2.], [3., 4.]]\n"
        "  %4 = add(%3, c1) = [[2., 4.], [6., 8.]]\n"
        "  %5 = sum(%4) = 20\n"
        "Backward: d%k = ∂result/∂%k, from the seed back to the inputs\n"
        "  d%5 = 1   (seed)\n"
        "  d%4 = d%5 broadcast back over every axis = [[1., 1.], [1., 1.]]\n"
        "  d%3 = d%4 = [[1., 1.], [1., 1.]]\n"
        "  d%2 = c1ᵀ · d%3 = [[4., 4.], [6., 6.]]\n"
        "Gradient: ∂f/∂W = d%2 = [[4., 4.], [6., 6.]]"
    )
    np.testing.assert_array_equal(tapegrad.gradient(lambda W: np.sum(C @ W + C), np.eye(2))[0],
                                  C.T @ np.ones((2, 2)))
