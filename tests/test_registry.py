"""tapegrad.registry: the rule tables, registering and finding rules, `needs=` and stand-ins."""
import weakref

import numpy as np
import pytest

import tapegrad
from tapegrad import grad, gradient, primitive, rrule
from tapegrad.registry import (
    FRULES,
    NEEDS,
    NONDIFF,
    RULES,
    declarations_undone,
    find_rrule,
    frule,
    is_nondifferentiable,
    nondifferentiable,
    register_rrule,
    registered_rules,
)
from tapegrad.broadcasting import unbroadcast


def test_rule_for_a_marked_function_is_used_by_grad():
    """A marked function with an rrule is one primitive of the gradient tape, using that rule."""
    @primitive
    def square(x):
        return x * x

    calls = []

    @rrule(square)
    def square_rrule(x):
        calls.append(x)

        def square_pullback(dy):
            return tapegrad.NO_TANGENT, 2 * x * dy

        return square(x), square_pullback

    y, (_, dx) = grad(lambda x: square(x) + 1, 3.0)
    assert (y, dx, calls) == (10.0, 6.0, [3.0])


def test_multiply_by_a_constant_keeps_no_traced_partner():
    """c * a with a constant c needs c for a's tangent, and a only for c's, which is never read:
    with grad, a goes as soon as f drops it."""
    freed = []
    c = np.array([1.0, -2.0, 3.0])

    def f(x):
        a = x + 1.0  # add keeps only stand-ins
        ref = weakref.ref(a._val)
        b = c * a
        del a
        freed.append(ref() is None)
        return np.sum(b)

    # wrt=0: c, which f captures, stays a constant (without wrt it is differentiated too)
    value, (_, dx) = grad(f, np.zeros(3), wrt=0)
    assert freed == [True]
    assert value == 2.0 and np.array_equal(dx, c)


def test_a_rule_with_needs_learns_which_arguments_are_traced():
    """A rule that takes `needs` gets one bool per positional argument from a gradient when
    some array argument is a constant (True where it is traced), and None, meaning every
    tangent may be read, when all are traced, for numbers, and when called directly."""
    seen = []

    @primitive
    def scale(a, b):
        return a * b

    @rrule(scale)
    def scale_rrule(a, b, *, needs=None):
        seen.append(needs)

        def scale_pullback(dy):
            return tapegrad.NO_TANGENT, dy * b, dy * a

        return scale(a, b), scale_pullback

    one = np.ones(())  # a 0-d array: an array argument with a scalar result
    assert gradient(lambda x: scale(x, 3.0), one) == (3.0,)
    assert gradient(lambda c, x: scale(c, x), 2.0 * one, one, wrt=1) == (tapegrad.NO_TANGENT, 2.0)
    assert gradient(lambda x: scale(x, x), one) == (2.0,)
    assert gradient(lambda x: scale(x, 3.0), 1.0) == (3.0,)  # two numbers: nothing worth telling
    tapegrad.rrule(scale, one, one)
    assert seen == [(True, False), (False, True), None, None, None]


def test_stand_in_has_the_shape_and_dtype_and_no_memory(monkeypatch):
    x = np.ones((3, 4), dtype=np.float32)
    s = tapegrad.registry.stand_in(x)
    assert type(s) is np.ndarray and s.shape == (3, 4) and s.dtype == np.float32
    assert s.strides == (0, 0) and not s.flags.writeable
    assert np.isnan(s).all()  # a pullback that reads it gets NaN, not a plausible number
    assert tapegrad.registry.stand_in(2.5) == 2.5
    objects = np.array([1, "a"], dtype=object)
    assert tapegrad.registry.stand_in(objects) is objects
    monkeypatch.setattr(tapegrad.registry, "STAND_IN_BYTES", 1 << 14)
    assert tapegrad.registry.stand_in(x) is x  # 48 bytes: kept as it is
    big = np.ones(2048)
    assert tapegrad.registry.stand_in(big).strides == (0,)


@pytest.fixture
def tables():
    """The rule tables as they were before the test, restored after it."""
    with declarations_undone():
        yield


def double(x):
    return 2 * x


def double_rrule(x):
    return double(x), lambda dy: (tapegrad.NO_TANGENT, 2 * dy)


def test_register_rrule_makes_the_rule_found_and_applied(tables):
    """register_rrule returns the rule, find_rrule finds it, rrule(fn, *args) calls it; a second one replaces it."""
    assert find_rrule(double) is None and rrule(double, 1.5) is None
    assert register_rrule(double, double_rrule) is double_rrule
    assert find_rrule(double) is double_rrule
    y, pb = rrule(double, 1.5)
    assert (y, pb(1.0)) == (3.0, (tapegrad.NO_TANGENT, 2.0))

    def other_rrule(x):
        return double(x), lambda dy: (tapegrad.NO_TANGENT, 0.0)

    rrule(double)(other_rrule)
    assert find_rrule(double) is other_rrule and RULES[double] is other_rrule


def test_a_rule_taking_needs_is_listed_in_needs(tables):
    """A rule with a needs=None parameter puts its function in NEEDS; registering one without takes it out."""
    def double_needs_rrule(x, *, needs=None):
        return double_rrule(x)

    register_rrule(double, double_needs_rrule)
    assert double in NEEDS
    register_rrule(double, double_rrule)
    assert double not in NEEDS


def test_nondifferentiable_removes_the_rules(tables):
    """Marking a function non-differentiable drops its reverse and forward rules; registering a rule undoes it."""
    register_rrule(double, double_rrule)
    frule(double)(lambda dargs, x: (double(x), 2 * dargs[0]))
    assert nondifferentiable(double) is double
    assert find_rrule(double) is None and double not in FRULES and is_nondifferentiable(double)
    assert registered_rules()[double] is None
    register_rrule(double, double_rrule)
    assert not is_nondifferentiable(double) and find_rrule(double) is double_rrule


def test_nondifferentiable_takes_several_functions(tables):
    """nondifferentiable(f, g) marks both and returns them as a tuple."""
    def half(x):
        return x / 2

    assert nondifferentiable(double, half) == (double, half)
    assert is_nondifferentiable(double) and is_nondifferentiable(half)


def test_registered_rules_is_a_copy(tables):
    """registered_rules maps each function to its rule (None when non-differentiable); changing it changes no table."""
    register_rrule(double, double_rrule)
    listed = registered_rules()
    assert listed[double] is double_rrule and listed[np.floor] is None
    assert len(listed) == len(RULES) + len(NONDIFF)
    del listed[double]
    listed[np.sin] = None
    assert find_rrule(double) is double_rrule and not is_nondifferentiable(np.sin)
    assert registered_rules()[double] is double_rrule


def test_unbroadcast_sums_a_tangent_back_to_its_arguments_shape():
    """Leading axes that broadcasting added and axes of length 1 are summed; a scalar argument gets a scalar."""
    dx = np.arange(6.0).reshape(2, 3)
    assert unbroadcast(dx, np.ones(3)).tolist() == [3.0, 5.0, 7.0]
    assert unbroadcast(dx, np.ones((2, 1))).tolist() == [[3.0], [12.0]]
    assert unbroadcast(dx, np.ones((1, 3))).tolist() == [[3.0, 5.0, 7.0]]
    total = unbroadcast(dx, 2.0)
    assert total == 15.0 and type(total) is np.float64
    assert unbroadcast(dx, dx) is dx and unbroadcast(tapegrad.ZERO, 2.0) is tapegrad.ZERO


def test_complex_rules_lets_a_declared_rule_make_a_complex_value():
    """A rule's complex result is refused until the rule is declared with complex_rules; then
    the value flows on to the declared rules (np.real) and the gradient is the transpose's."""
    import tapegrad
    from tapegrad.extend import NO_TANGENT, complex_rules, primitive, rrule
    from tapegrad.registry import COMPLEX, RULES

    @primitive
    def rotate(x):
        return x * np.exp(0.5j)

    @rrule(rotate)
    def rotate_rrule(x):
        def rotate_pullback(dz):
            return NO_TANGENT, np.real(dz * np.exp(0.5j))  # the transpose, for a real x
        return rotate(x), rotate_pullback

    f = lambda x: np.sum(np.real(rotate(x)))  # noqa: E731
    try:
        with pytest.raises(tapegrad.ComplexValueError, match=r"rotate\(%2::float64\[2\]\) at test_registry.py:\d+ gives complex128\[2\]"):
            tapegrad.grad(f, np.ones(2))
        complex_rules(rotate)
        np.testing.assert_allclose(tapegrad.gradient(f, np.ones(2))[0], [np.cos(0.5)] * 2)
    finally:
        RULES.pop(rotate, None)
        COMPLEX.discard(rotate)


# --- one declaration per primitive ---


def test_one_declaration_fills_every_table_and_reads_back_as_one_record():
    """``@rrule(fn, formula=..., forward=..., complex=True, view=True)`` is the whole declaration:
    each fact lands in the table its question is asked of, and `declaration` gives them back."""
    from tapegrad.registry import COMPLEX, FORMULAS, VIEWS, declaration, partials

    @primitive
    def cube(x):
        return x ** 3

    def cube_frule(dargs, x):
        return cube(x), 3 * x ** 2 * dargs[0]

    @rrule(cube, formula=partials("3·{a[0]}²"), forward=cube_frule, complex=True, view=True)
    def cube_rrule(x):
        return cube(x), lambda dy: (tapegrad.NO_TANGENT, 3 * x ** 2 * dy)

    try:
        assert RULES[cube] is cube_rrule and FRULES[cube] is cube_frule
        assert cube in COMPLEX and cube in VIEWS and FORMULAS[cube].templates == ("3·{a[0]}²",)
        d = declaration(cube)
        assert (d.rule, d.forward, d.complex, d.view, d.nondifferentiable) == (cube_rrule, cube_frule, True, True, False)
        assert "d%2 = d%3 · 3·%2² = 12" in tapegrad.show.explain_text(cube, 2.0)
        assert tapegrad.jvp(cube, (2.0,), (1.0,)) == (8.0, 12.0)
        assert declaration(np.sin).forward.__name__ == "sin_frule" and declaration(np.cbrt).forward == "derived"
        assert declaration(np.floor).nondifferentiable and declaration(np.floor).rule is None
    finally:
        for table in (RULES, FRULES, FORMULAS):
            table.pop(cube, None)
        COMPLEX.discard(cube)
        VIEWS.discard(cube)


def test_a_declaration_refuses_what_it_cannot_mean():
    """A formula that is not partials(...)/whole(...) and a view that is not True, False or
    'read-only' are refused as they are declared, naming the function."""
    from tapegrad.registry import declare

    with pytest.raises(TypeError, match=r"formula= of numpy.sin is partials\(...\) or whole\(...\), not str"):
        declare(np.sin, formula="cos")
    with pytest.raises(ValueError, match=r"view= of numpy.sin is True, False or 'read-only', not 'yes'"):
        declare(np.sin, view="yes")


def test_a_read_only_view_is_refused_with_numpys_name_for_it():
    """view="read-only" (np.diagonal's declaration) makes a write into the view raise numpy's
    error, naming the function as the user wrote it."""
    from tapegrad.registry import READ_ONLY, declaration

    assert declaration(np.diagonal).view == "read-only" and READ_ONLY[np.diagonal] == "np.diagonal"

    def f(x):
        np.diagonal(x)[0] = 1.0
        return np.sum(x)

    with pytest.raises(ValueError, match=r"np.diagonal returns a read-only view in numpy"):
        tapegrad.grad(f, np.eye(2))


def test_the_warnings_of_rules_made_by_one_factory_name_each_primitive():
    """np.remainder and np.fmod share the code of one factory's rule: the warning names the one
    whose closure runs (the registry knows each rule's code and closure: no function's name is
    read), in the rule and in its pullback."""
    import warnings

    for fn, name in ((np.remainder, "remainder"), (np.fmod, "fmod")):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            grad(lambda x: np.sum(fn(x, 0.0)), np.ones(2))
        assert [str(w.message) for w in caught][:1] == [f"invalid value encountered in {name}"], fn


def test_declarations_undone_puts_every_table_back():
    """A declaration inside the block (a rule with a formula, complex support and a view) leaves
    no trace in any table after it, and an error inside the block does not keep it either."""
    from tapegrad.registry import TABLES, partials, rrule

    before = [table.copy() for table in TABLES]

    def shape(x):
        return x

    with pytest.raises(KeyError), declarations_undone():
        @rrule(shape, formula=partials("1"), complex=True, view=True)
        def shape_rrule(x):
            return x, lambda dy: (tapegrad.NO_TANGENT, dy)
        assert [table == was for table, was in zip(TABLES, before)].count(False) == 4
        raise KeyError("inside")
    assert [table == was for table, was in zip(TABLES, before)] == [True] * len(TABLES)
