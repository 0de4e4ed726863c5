"""tapegrad.arraylike: traced values behave like the arrays they hold (operators, attributes,
methods, iteration), and in-place writes keep numpy's semantics and give the right gradients."""
import numpy as np
import pytest

import tapegrad
from tapegrad import ConcreteValueError, check_grad, grad, gradient, trace
from tapegrad.arraylike import updated

# rules these tests drive through check_grad (see tests/rules/test_coverage.py)
EXERCISED = {updated}


def test_attributes_read_the_value(rng):
    """shape, dtype, ndim, size and len answer from the traced value without recording."""
    seen = {}

    def f(x):
        seen.update(shape=x.shape, dtype=x.dtype, ndim=x.ndim, size=x.size, len=len(x),
                    npshape=np.shape(x))
        return np.sum(x)

    _, tape = trace(f, np.ones((2, 3), dtype=np.float32))
    assert seen == dict(shape=(2, 3), dtype=np.float32, ndim=2, size=6, len=2, npshape=(2, 3))
    assert len(tape) == 3

    def g(s):  # a traced number: numpy's answers for a number
        seen.update(shape=s.shape, ndim=s.ndim, size=s.size)
        return s * s

    seen.clear()
    trace(g, 1.5)
    assert seen == dict(shape=(), ndim=0, size=1)


def test_reflected_and_unary_operators(rng):
    """Every operator works with the Tracer on either side; gradients match central differences."""
    def f(x):
        return np.sum(2.0 - x + (3.0 / (x + 4)) * x ** 2 + 2 ** x - (-x) + (+x))

    check_grad(f, rng.uniform(0.5, 1.5, 4))


def test_methods_forward_to_numpy(rng):
    """x.T, x.sum(axis), x.reshape, x.dot, x.transpose behave as on arrays."""
    def f(x):
        return x.T.dot(x).sum(axis=0).reshape(1, 3).transpose().sum()

    x = rng.standard_normal((2, 3))
    (dx,) = gradient(f, x)
    # the entries of xᵀx sum to Σ_k (Σ_i x_ki)², so d/dx_ki = 2 Σ_j x_kj
    np.testing.assert_allclose(dx, 2 * x.sum(axis=1, keepdims=True) * np.ones((1, 3)), atol=1e-12)


X23 = np.array([[0.3, -1.2, 0.7], [1.5, 0.2, -0.4]])

#: ndarray methods and attributes a traced or dual value lacked (AttributeError) or sent to a
#: function with no rule (x.compress: NoRuleError), each with a program that uses it
METHODS = {
    "argpartition": lambda a: np.sum(a.ravel()[a.ravel().argpartition(2)[:2]] ** 2),
    "searchsorted": lambda a: np.sum(a ** 2) * a.ravel()[[1, 2, 0]].searchsorted(0.0),
    "partition": lambda a: (lambda b: (b.partition(1, axis=1), np.sum(b[:, :2] * [[1.0, 2.0]]))[1])(a.copy()),
    "compress": lambda a: np.sum(a.compress([True, False], axis=0) ** 2),
    "view": lambda a: np.sum(a.view() * a),
    "flat": lambda a: np.sum(a.flat[2:4] ** 2) + sum(v for v in a.flat),
    "put": lambda a: (lambda b: (b.put([0, 5], [1.0, 2.0]), np.sum(b ** 2))[1])(a.copy()),
    "put into a buffer": lambda a: (lambda b: (b.put([0, 1], a[0, :2]), np.sum(b ** 2))[1])(np.zeros(4)),
    "itemsize, nbytes, strides": lambda a: np.sum(a) * (a.itemsize + a.nbytes + len(a.strides)),
}


@pytest.mark.parametrize("name", METHODS)
def test_more_array_methods_in_both_modes(name):
    """Each works on traced and dual values as on arrays, with derivatives that match central
    differences to second order in both modes."""
    check_grad(METHODS[name], X23, order=2)


def test_bytes_of_a_traced_value_are_refused_with_the_way():
    """x.tobytes() and x.view(dtype) would drop the gradient: refused, saying what to write."""
    for how in (lambda f: tapegrad.grad(f, X23), lambda f: tapegrad.jvp(f, (X23,), (X23,))):
        with pytest.raises(TypeError, match=r"^tobytes\(\) of the (traced|dual) value .* carry no gradient"):
            how(lambda a: a.tobytes())
        with pytest.raises(TypeError, match=r"^x\.view\(int64\) of the (traced|dual) value .* use "
                                            r"x\.astype\(np\.int64\) to convert values$"):
            how(lambda a: a.view(np.int64))
        with pytest.raises(TypeError, match=r"^x\.view\(matrix\) of the (traced|dual) value"):
            how(lambda a: a.view(type=np.matrix))
    with pytest.raises(TypeError, match=r"^partition\(\) of the scalar %\d+ at test_arraylike\.py:\d+$"):
        tapegrad.grad(lambda a: a[0, 0].partition(0), X23)


def test_iteration_over_first_axis(rng):
    """Iterating over a Tracer yields one traced row per element of the first axis."""
    x = rng.standard_normal((3, 2))

    def f(x):
        total = 0.0
        for row in x:
            total = total + np.sum(row * row)
        return total

    (dx,) = gradient(f, x)
    np.testing.assert_allclose(dx, 2 * x, atol=1e-12)


# --- in-place writes ---


def test_item_slice_mask_and_augmented_writes(rng):
    """x[i] = v, x[mask] = v, x[1:3] += v, x += y and x *= y flow to x's earlier value and to v."""
    def f(x, v, y):
        x = x.copy()
        x[0] = v
        x[x > 0.5] = 0.25 * v
        x[1:3] += v
        x += y
        x *= y
        return np.sum(x ** 2)

    x, y = rng.uniform(-1, 1, 4), rng.uniform(0.5, 1.5, 4)
    check_grad(f, x, 0.7, y)
    value = f(x.copy(), 0.7, y)
    assert grad(f, x, 0.7, y)[0] == pytest.approx(value, rel=1e-15)


def test_write_into_an_input_leaves_the_users_array_alone():
    """Writing into a traced argument never changes the caller's array."""
    x = np.arange(3.0)

    def f(x):
        x[1] = 10.0
        return np.sum(x)

    value, (_, dx) = grad(f, x)
    assert value == 12.0 and dx.tolist() == [1.0, 0.0, 1.0]
    np.testing.assert_array_equal(x, [0.0, 1.0, 2.0])


def test_write_through_a_sliced_view_reaches_the_base():
    """As in numpy, y = x[1:]; y[0] = 7 changes x, and the gradient follows."""
    def f(x):
        y = x[1:]
        y[0] = 7.0
        return np.sum(x * x)

    value, (_, dx) = grad(f, np.ones(3))
    assert value == 51.0 and dx.tolist() == [2.0, 0.0, 2.0]


def test_augmented_assignment_on_a_slice_view_writes_through():
    """x[1:3] += v, written as y = x[1:3]; y += v, also reaches x."""
    def f(x, v):
        y = x[1:3]
        y += v
        return np.sum(x ** 2)

    check_grad(f, np.arange(4.0), 0.3)
    assert f(np.arange(4.0), 0.3) == grad(f, np.arange(4.0), 0.3)[0]


def test_view_read_after_its_base_was_written_shows_the_write():
    """A view taken before its base was written shows the write, as in numpy, and its next use
    records the view once again."""
    def f(x):
        y = x[1:]
        x[2] = 5.0
        return np.sum(y)

    value, tape = trace(f, np.ones(3))
    assert value == 6.0
    assert str(tape) == (
        "Tape\n"
        "  inp %1::function f\n"
        "  inp %2::float64[3]   # x\n"
        "  %3 = getitem(%2, 1:)::float64[2]\n"
        "  %4 = updated(%2, 2, 5.0)::float64[3]\n"
        "  %5 = getitem(%4, 1:)::float64[2]\n"
        "  %6 = sum(%5)::float64"
    )


def test_write_into_a_reshaped_view_reaches_the_base():
    """Writing into a reshape view (numpy did not copy) changes the base, and the gradient follows."""
    def f(x):
        y = x.reshape(3, 1)
        y[0] = 1.0
        return np.sum(x * x)

    value, (_, dx) = grad(f, np.full(3, 2.0))
    assert value == 9.0 and dx.tolist() == [0.0, 4.0, 4.0]


def test_advanced_index_copy_does_not_write_through():
    """x[[0, 2]] is a copy in numpy: writing into it leaves x alone."""
    def f(x):
        y = x[np.array([0, 2])]
        y[0] = 5.0
        return np.sum(x) + np.sum(y)

    value, (_, dx) = grad(f, np.ones(3))
    assert value == 9.0 and dx.tolist() == [1.0, 1.0, 2.0]


def test_in_place_on_numbers_rebinds_only():
    """x += 1 on a traced number does not change another name for the same number."""
    def f(x):
        y = x
        x += 1.0
        x *= 2.0
        return x * y

    assert gradient(f, 3.0) == (pytest.approx(2 * 3.0 + 2 * (3.0 + 1.0)),)


def test_in_place_dtype_and_shape_rules_follow_numpy():
    """x += y keeps x's dtype (same_kind casting) and refuses a result of another shape."""
    def cast(x):
        x += np.float64(0.5)
        return np.sum(x)

    (dx,) = gradient(cast, np.ones(2, dtype=np.float32))
    assert dx.dtype == np.float32
    with pytest.raises(ValueError, match="non-broadcastable output operand"):
        grad(lambda x: np.sum(x.__iadd__(np.ones((2, 2)))), np.ones(2))


PLAIN = np.zeros(3)


def test_writing_a_traced_value_into_a_plain_array_says_how_to_fix_it():
    """Writing into an array made outside the traced function raises an error that names the
    constructors to use inside it and np.stack."""
    def f(t):
        out = PLAIN.copy()  # a global: a closure's arrays would be traced
        out[0] = t
        return np.sum(out)

    with pytest.raises(ConcreteValueError, match=r"at test_arraylike.py:\d+: a traced value cannot be "
                                                 r"written into a plain ndarray.*np.zeros, np.empty, np.ones, "
                                                 r"np.full or their _like forms.*np.stack"):
        grad(f, 1.0)


def test_item_assignment_on_a_traced_number_is_refused():
    """x[0] = v on a traced scalar raises, naming the value and the line."""
    def f(x):
        x[0] = 1.0
        return x

    with pytest.raises(TypeError, match=r"item assignment on the scalar %2 at test_arraylike.py:\d+"):
        grad(f, 2.0)


def test_in_place_cast_that_numpy_refuses_is_refused():
    """x += 0.5 on an integer array fails as numpy's same_kind rule says."""
    def f(x, y):
        n = (0 * x).astype(np.int64)  # a traced integer array
        n += y
        return np.sum(y)

    with pytest.raises(TypeError, match=r"cannot cast float64 to int64 \(numpy's same_kind rule\)"):
        grad(f, np.ones(2), np.ones(2))


def test_sort_method_sorts_in_place_and_differentiates():
    """x.sort() sorts the traced array in place, as numpy's method does: later reads see the
    sorted values, each gradient entry goes back to where its element came from, and sorting a
    basic-slice view sorts that part of its base."""
    def head(x):
        x.sort()
        return x[0] * 10.0 + x[1]

    x = np.array([3.0, 1.0])
    assert grad(head, x) == (head(x.copy()), (tapegrad.ZeroTangent(), pytest.approx([1.0, 10.0])))

    def tail_sorted(x):
        tail = x[1:]
        tail.sort()
        return np.sum(x * np.arange(3.0))

    value, (_, dx) = grad(tail_sorted, np.array([0.0, 3.0, 1.0]))
    assert value == tail_sorted(np.array([0.0, 3.0, 1.0])) == 7.0
    assert dx.tolist() == [0.0, 2.0, 1.0]
    check_grad(tail_sorted, np.array([0.5, 3.0, 1.0]))


def test_sort_of_a_traced_number_is_refused_as_numpy_refuses_it():
    """A traced scalar has no sort() in place (a float has none); the error names it and the line."""
    def f(x):
        x.sort()
        return x

    with pytest.raises(TypeError, match=r"^sort\(\) of the scalar %2 at test_arraylike\.py:\d+$"):
        grad(f, 1.5)


# --- second order: the rows of tests/rules/test_higher_order.py ---


def _written(x, v):
    """x with a slice overwritten and an entry scaled in place, then used again: `updated` twice."""
    y = x * 1.0
    y[1:3] = v ** 2
    y[0] *= x[3]
    return y * x


#: (rule's function, function differentiated, float64 arguments)
ORDER2 = [(updated, _written, (np.linspace(0.5, 1.5, 4), np.array([0.7, -1.2])))]
