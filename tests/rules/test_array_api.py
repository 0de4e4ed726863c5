"""numpy 2's array-API names: the gufuncs vecdot, matvec and vecmat have rules; the aliases in
np.linalg and np are traced through to the functions with rules that compute them, with
numpy's values, in both modes, to second order."""
import numpy as np
import pytest

from _rule_tables import assert_traced_value_is_numpys, label
from tapegrad import check_grad, trace

_rng = np.random.default_rng(7)
A = _rng.normal(size=(3, 3))
B = _rng.normal(size=(2, 3, 3))
V = _rng.normal(size=3)

#: (rule's function, f, args): the gufuncs' rules, with broadcasting
ORDER2 = [
    (np.vecdot, lambda a, b: np.vecdot(a, b), (B[0], V)),
    (np.matvec, lambda m, x: np.matvec(m, x), (B, V)),
    (np.vecmat, lambda x, m: np.vecmat(x, m), (V, B)),
]
EXERCISED = {fn for fn, _, _ in ORDER2}

#: (label, f, args): each goes through an alias, traced through
TABLE = [
    ("vecdot axis=0", lambda a, b: np.vecdot(a, b, axis=0), (A, V[:, None])),
    ("linalg.matmul", lambda a, b: np.linalg.matmul(a, b), (A, B)),
    ("linalg.outer", lambda a, b: np.linalg.outer(a, b), (V, V[:2])),
    ("linalg.vecdot axis=0", lambda a, b: np.linalg.vecdot(a, b, axis=0), (A, V[:, None])),
    ("linalg.trace offset", lambda a: np.linalg.trace(a, offset=1), (B,)),
    ("linalg.diagonal offset", lambda a: np.linalg.diagonal(a, offset=-1), (B,)),
    ("linalg.cross", lambda a, b: np.linalg.cross(a, b), (A, V)),
    ("linalg.tensordot", lambda a, b: np.linalg.tensordot(a, b, axes=1), (A, B.T)),
    ("linalg.matrix_transpose", lambda a: np.linalg.matrix_transpose(a), (B[:, :2],)),
    ("matrix_transpose", lambda a: np.matrix_transpose(a), (B[:, :2],)),
    # the property: it met no rule (it called np.matrix_transpose's dispatch, not its function)
    ("x.mT", lambda a: a.mT * a.mT.mT[..., :1, :].mT, (B,)),
    ("linalg.matrix_norm", lambda a: np.linalg.matrix_norm(a), (B,)),
    ("linalg.matrix_norm nuc keepdims", lambda a: np.linalg.matrix_norm(a, ord="nuc", keepdims=True), (B,)),
    ("linalg.matrix_norm 1", lambda a: np.linalg.matrix_norm(a, ord=1), (A,)),
    ("linalg.vector_norm", lambda a: np.linalg.vector_norm(a), (B,)),
    ("linalg.vector_norm axes keepdims ord=3",
     lambda a: np.linalg.vector_norm(a, axis=(0, 2), keepdims=True, ord=3), (B,)),
    ("linalg.vector_norm inf", lambda a: np.linalg.vector_norm(a, axis=1, ord=np.inf), (B,)),
    ("linalg.svdvals", lambda a: np.linalg.svdvals(a), (B,)),
    ("cumulative_sum", lambda a: np.cumulative_sum(a), (V,)),
    ("cumulative_sum include_initial", lambda a: np.cumulative_sum(a, axis=1, include_initial=True), (B,)),
    ("cumulative_prod include_initial", lambda a: np.cumulative_prod(a, axis=0, include_initial=True), (A,)),
    ("unstack", lambda a: np.unstack(a, axis=1)[1], (B,)),
]



@pytest.mark.parametrize("label, f, args", TABLE, ids=label)
def test_alias_gradient(label, f, args):
    """The alias's derivatives match central differences to second order, in both modes."""
    check_grad(f, *args, order=2)


@pytest.mark.parametrize("label, f, args", TABLE, ids=label)
def test_alias_value_is_numpys(label, f, args):
    """Traced, the alias gives numpy's own value, shape and dtype."""
    assert_traced_value_is_numpys(f, args, rtol=1e-13, atol=1e-13)


def test_svdvals_tape_holds_svd():
    """np.linalg.svdvals is recorded as the call numpy documents it as: svd(x, compute_uv=False)."""
    _, tape = trace(lambda a: np.linalg.svdvals(a), A)
    assert [getattr(op, "fn", None) for op in tape.ops][-1] is np.linalg.svd


def test_vecdot_axes_keyword_is_refused():
    """A gufunc keyword the rule does not cover is refused naming it, not differentiated wrongly."""
    with pytest.raises(NotImplementedError, match=r"numpy.vecdot with axes="):
        check_grad(lambda a: np.vecdot(a, a, axes=[(0,), (0,), ()]), A)
