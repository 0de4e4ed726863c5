"""Rules for the factorizations of numpy.linalg: cholesky, eigh, eigvalsh, svd, qr.

Symmetric inputs (cholesky, eigh, eigvalsh): LAPACK reads only one triangle of the matrix
(the lower one by default; the upper one for ``cholesky(a, upper=True)`` and ``UPLO="U"``) and
never looks at the other. The gradient is that of the function numpy computes, as autograd's
is: the entries of the triangle read get their derivative, the others zero, and it matches
central differences on any square matrix, symmetric or not (`read_triangle`). The symmetric
gradient (the same derivative spread evenly over both triangles, what JAX returns) is an
opt-in: symmetrize the input inside the function, ``np.linalg.cholesky((a + a.T) / 2)``,
and the chain rule gives it, exactly.

Complex matrices, under autograd's convention (the cotangent of z is ∂f/∂Re z − i ∂f/∂Im z,
df = Re Σ c·dz): none of these factorizations is holomorphic (Lᴴ, Vᴴ, Qᴴ appear), and each
pullback is derived at its rule. A Hermitian input's triangle is read with the imaginary
part of its diagonal ignored (`read_triangle`). Complex eigenvectors and singular vectors
carry a free phase per column, LAPACK's choice: only functions that do not depend on it
(|V|², V diag(w) Vᴴ, U diag(s) Vh) have a gradient, and a cotangent that depends on it
raises (`check_phase_free`). QR's R has a real diagonal, so Q and R are unique.

Functions returning several arrays (eigh, svd, qr) return numpy's named tuples, which the
tracer splits into one traced value per element (so ``res.eigenvalues`` works on traced
values too); their pullbacks receive one cotangent per element, any of which may be ZERO.

Complex values (the rules declared with ``complex=True``): complex (Hermitian / unitary)
inputs: derived at each rule; complex eigenvectors and singular vectors are differentiated only
through functions that do not depend on their phases (`check_phase_free`).
"""
from __future__ import annotations

import numpy as np

from ..context import primitive
from ..errors import TapegradError, user_location
from ..onimport import OnFirstUse
from ..dual import derived_frule
from ..registry import frule, rrule, stand_in, whole
from ..scipy.linalg import solve_triangular
from ..tangents import NO_TANGENT, ZERO
from ._shapes import col, conj, dtype_of, like, mH, mT, row, sum_of, tangent_float

_blas = OnFirstUse("scipy.linalg.blas")  # (imported when a rule first needs it: see tapegrad.onimport)


def _eye_like(a, n=None):
    return np.eye(np.shape(a)[-1] if n is None else n, dtype=tangent_float(a))


def _inverse_gaps(v, eye):
    """F with F_ij = 1 / (v_j - v_i) off the diagonal and 0 on it; inf where two v are equal."""
    gaps = row(v) - col(v)
    return (1 - eye) / (gaps + eye)


def read_triangle(g, lower):
    """The gradient of a function of one triangle of A, given `g`, a matrix whose symmetric
    part ½(g + gᵀ) is the symmetric gradient (the derivative along symmetric perturbations).

    LAPACK's symmetric routines compute f(A) = F(T(A)) with T(A) = tril(A) + tril(A, -1)ᵀ (for
    the lower triangle), the symmetric matrix made of the triangle read. With G = ½(g + gᵀ),
    dF = ⟨G, dT⟩ = ⟨G, tril(dA)⟩ + ⟨Gᵀ, tril(dA, -1)⟩, so Ā = tril(G) + tril(G, -1): the
    diagonal of G, twice G below it, zero above. That is tril(g + gᵀ) with its diagonal
    halved; `lower=False` gives the upper triangle the same way.

    Complex (Hermitian) inputs: LAPACK reads T(A) = tril(A, -1) + tril(A, -1)ᴴ + diag(Re A),
    the imaginary part of the diagonal ignored. With dT Hermitian and autograd's pairing
    Re⟨G, dT⟩ (⟨P, Q⟩ = Σ P∘Q), an entry below the diagonal is met twice, as dA_ij and as
    conj(dA_ij) above it: Re(G_ij dA_ij + G_ji conj(dA_ij)) = Re((G_ij + conj(G_ji)) dA_ij); the
    diagonal gives Re(G_ii) Re(dA_ii). So Ā = tril(g + gᴴ) with its diagonal halved, which for
    the diagonal is Re(g_ii): the same formula with the conjugate transpose.
    """
    s = g + mH(g)
    s = s - 0.5 * _eye_like(g) * s
    return np.tril(s) if lower else np.triu(s)


def check_phase_free(vtdv, fn, what):
    """Refuse the cotangent of complex singular vectors or eigenvectors that depends on their
    phases, which LAPACK picks arbitrarily: each column may be multiplied by e^{iθ}, and a
    function f that does not depend on θ has Im((Vᵀ V̄)ⱼⱼ) = 0 (Re⟨V̄, i V⟩ = 0). Checked on
    concrete values only (a traced pullback, in a second derivative, is not)."""
    if type(vtdv) is not np.ndarray or vtdv.dtype.kind != "c":
        return
    d = np.diagonal(vtdv, axis1=-2, axis2=-1)
    if np.any(np.abs(d.imag) > 1e-8 * (1 + np.abs(vtdv).max())):
        raise TapegradError(
            f"the gradient through the complex {what} of numpy.linalg.{fn} (at {user_location()}) "
            f"depends on their phases, which LAPACK chooses arbitrarily (each column may be "
            f"multiplied by e^(iθ)): differentiate a function that does not depend on them, such "
            f"as np.real(v * np.conj(v)) or v @ v.conj().T")


# --- cholesky ---


def cholesky_grad(l, dl, solve_lt=None, triangle=None):
    """Ā of A = L Lᵀ (L lower) given L̄ (Murray, arXiv:1602.07527).

    With Φ(X) the lower triangle of X with its diagonal halved, S = L⁻ᵀ Φ(Lᵀ L̄) L⁻¹ (Φ keeps
    only the cotangent of the entries of L that vary). Derivation: from A = L Lᵀ,
    dA = dL Lᵀ + L dLᵀ, so L⁻¹ dA L⁻ᵀ = L⁻¹dL + (L⁻¹dL)ᵀ, and L⁻¹dL, lower triangular, is
    Φ(L⁻¹ dA L⁻ᵀ); then dF = ⟨L̄, dL⟩ = ⟨L̄, L Φ(L⁻¹ dA L⁻ᵀ)⟩ = ⟨Φ(Lᵀ L̄), L⁻¹ dA L⁻ᵀ⟩
    = ⟨L⁻ᵀ Φ(Lᵀ L̄) L⁻¹, dA⟩ (Φ is self-adjoint). So the symmetric gradient is (S + Sᵀ) / 2,
    and `triangle` ("lower" or "upper": the one the factorization read) gives the gradient of
    the function of that triangle, `read_triangle` of S, instead.

    Complex A = L Lᴴ (Hermitian, L with a real positive diagonal): L⁻¹ dA L⁻ᴴ = L⁻¹dL +
    (L⁻¹dL)ᴴ, and L⁻¹dL, lower triangular with a real diagonal, is Φ(L⁻¹ dA L⁻ᴴ). Under
    autograd's convention df = Re⟨L̄, dL⟩ (⟨P, Q⟩ = Σ P∘Q, no conjugate) = Re⟨Lᵀ L̄, Φ(Y)⟩ =
    Re⟨Φ(Lᵀ L̄), Y⟩ with Y = L⁻¹ dA L⁻ᴴ Hermitian (the imaginary part of Φ's halved diagonal
    meets a real Yᵢᵢ and drops out), = Re⟨L⁻ᵀ Φ(Lᵀ L̄) conj(L)⁻¹, dA⟩: S = L⁻ᵀ Φ(Lᵀ L̄) L̄⁻¹
    where L̄⁻¹ is conj(L)⁻¹ (L⁻ᵀ and L⁻¹ for a real L), then the Hermitian `read_triangle`
    (or (S + Sᴴ)/2 when `triangle` is None).

    The work is one triangular product and one pair of triangular solves with L, no inverse.
    `solve_lt(L, B)` computes L⁻ᵀ B (a triangular solve where one is at hand; a general solve
    by default, which works on stacks).
    """
    if _blas_ready(l, dl):
        return _cholesky_grad_blas(l, dl, triangle)
    if _real_matrices(l, dl):
        # traced (a gradient of a gradient, a compiled program): one op of the tape, whose
        # value is computed on BLAS, in the program too; the other triangles follow from it
        a = cholesky_lower_grad(l, dl)
        if triangle == "lower":
            return a
        return mT(a) if triangle == "upper" else 0.5 * (a + mT(a))
    if solve_lt is None:
        solve_lt = lambda l, b: np.linalg.solve(mT(l), b)
    eye = _eye_like(l)
    # only the lower triangle of L varies: the cotangent of the zeros above it is dropped
    p = np.tril(np.matmul(mT(l), np.tril(dl)))
    p = p - 0.5 * eye * p
    s = solve_lt(l, mT(solve_lt(conj(l), mT(p))))  # L⁻ᵀ P conj(L)⁻¹ = L⁻ᵀ (L⁻ᴴ Pᵀ)ᵀ
    return 0.5 * (s + mH(s)) if triangle is None else read_triangle(s, triangle == "lower")


def _blas_ready(l, dl):
    """Two plain real matrices of one BLAS dtype: the pullback can call BLAS itself."""
    return (type(l) is np.ndarray and type(dl) is np.ndarray and l.ndim == 2 and dl.ndim == 2
            and l.size > 0 and l.dtype == dl.dtype and l.dtype in (np.float64, np.float32))


def _real_matrices(l, dl):
    """Two real matrices of one BLAS dtype, plain or traced: `cholesky_lower_grad` takes them."""
    return (np.ndim(l) == 2 and np.ndim(dl) == 2 and np.size(l) > 0
            and dtype_of(l) == dtype_of(dl) and dtype_of(l) in (np.float64, np.float32))


@primitive(traceable=False)
def cholesky_lower_grad(l, dl):
    """`cholesky_grad(l, dl, triangle="lower")` of one real matrix as one primitive: the
    gradient of a function of the lower triangle of A = L Lᵀ, lower triangular.

    On concrete matrices it calls BLAS (`_cholesky_grad_blas`, blocked from n = 65); a traced
    pullback records it as one op, so that a compiled gradient program calls BLAS too and a
    second derivative uses `cholesky_lower_grad_rrule`.
    """
    if _blas_ready(l, dl):
        return _cholesky_grad_blas(l, dl, "lower")
    return cholesky_grad(l[None], dl[None], None, "lower")[0]  # (not a BLAS dtype: numpy's form)


def _cholesky_grad_blas(l, dl, triangle=None):
    """`cholesky_grad` on concrete matrices, calling BLAS's triangular routines directly: Lᵀ L̄
    as a triangular product (half a matmul's work), then the two solves in place; above
    64 x 64, a block of columns at a time (`_cholesky_grad_blocked`).

    BLAS reads arrays in Fortran order, where a C-ordered M is Mᵀ: so the work is done on
    transposes, which costs no copies, and gives S + Sᵀ, symmetric. A traced pullback calls
    it through `cholesky_lower_grad`; stacks and complex matrices take the traceable form.
    """
    if l.shape[0] > _BLOCK:
        a = _cholesky_grad_blocked(l, dl)
        if triangle is None:
            out = np.add(a, a.T)
            out *= 0.5
            return out
        return a if triangle == "lower" else a.T
    trmm, trsm = _blas.get_blas_funcs(("trmm", "trsm"), (l, dl))
    lt = np.ascontiguousarray(l).T  # Lᵀ, upper triangular, Fortran-ordered
    # only the lower triangle of L varies: the cotangent of the zeros above it is dropped
    pt = trmm(1.0, lt, np.tril(dl).T, side=1, lower=0, trans_a=1, overwrite_b=1)  # (Lᵀ L̄)ᵀ = L̄ᵀ L
    phi = np.tril(pt.T)
    phi.flat[::phi.shape[0] + 1] *= 0.5  # Φ: the lower triangle with its diagonal halved
    # both solves from the right, which OpenBLAS does faster than from the left, with one
    # transposed copy between them: Φᵀ L⁻¹, then (L⁻ᵀ Φ) L⁻¹ = S
    x = trsm(1.0, lt, phi.T, side=1, lower=0, trans_a=1, overwrite_b=1)
    st = trsm(1.0, lt, np.asfortranarray(x.T), side=1, lower=0, trans_a=1, overwrite_b=1)
    # S + Sᵀ into the buffer of pt, which is no longer needed: a large matrix fewer to
    # allocate (each fresh one costs page faults, here more than the arithmetic)
    out = np.add(st, st.T, out=pt)
    if triangle is None:
        out *= 0.5
        return out.T  # symmetric: the C-ordered view of the same matrix
    # `read_triangle`: S + Sᵀ with its diagonal halved, the other triangle zeroed, in place
    out.flat[::out.shape[0] + 1] *= 0.5
    keep = np.tri(out.shape[0], dtype=bool)  # the lower triangle of out.T is the upper of out
    np.multiply(out, keep.T if triangle == "lower" else keep, out=out)
    return out.T


#: the width of a column block of `_cholesky_grad_blocked` (timed from n = 128 to 600: 48 to 64 do best)
_BLOCK = 64


def _cholesky_grad_blocked(l, dl):
    """`_cholesky_grad_blas` with ``triangle="lower"`` for a large L, a block of columns at a
    time, from the last (Murray, arXiv:1602.07527, section 4): the reverse of the blocked
    Cholesky factorization, whose step for the columns j:k is D = chol(A_D − R Rᵀ) and
    C = (A_C − B Rᵀ) D⁻ᵀ, with D = L[j:k, j:k], C = L[k:, j:k], R = L[j:k, :j], B = L[k:, :j].
    Reversed: Ā_C = C̄ D⁻¹, D̄ −= Ā_Cᵀ C, B̄ −= Ā_C R, R̄ −= Ā_Cᵀ B; then Ā_D is the pullback of
    the block's own factorization (the dense formula, on a 64 x 64 matrix) and R̄ −= (Ā_D + Ā_Dᵀ) R.

    Its cost is mostly products of the panels, about 2n³/3 flops, where the dense formula's
    triangular product and two triangular solves of n x n matrices cost 3n³ (and OpenBLAS's
    solves are slow per flop; benchmarks/README.md has the measurement). Returns Ā as a new
    C-ordered matrix, lower triangular.
    """
    n = l.shape[0]
    a = dl.copy()  # becomes Ā in place; the blocks above the diagonal are zeroed on the way
    trsm = _blas.get_blas_funcs("trsm", (l, dl))
    for j in reversed(range(0, n, _BLOCK)):
        k = min(j + _BLOCK, n)
        d = l[j:k, j:k]
        if k < n:
            a[j:k, k:] = 0.0  # the cotangent of the zeros above L's diagonal is dropped
            # Ā_C = C̄ D⁻¹, solved from the right (faster than from the left, as D⁻ᵀ C̄ᵀ)
            ac = trsm(1.0, d.T, a[k:, j:k], side=1, lower=0, trans_a=1)
            a[j:k, j:k] -= ac.T @ l[k:, j:k]
            if j > 0:
                a[k:, :j] -= ac @ l[j:k, :j]
                a[j:k, :j] -= ac.T @ l[k:, :j]
            a[k:, j:k] = ac
        ad = _cholesky_grad_blas(d, a[j:k, j:k], "lower")
        a[j:k, j:k] = ad
        if j > 0:
            a[j:k, :j] -= (ad + ad.T) @ l[j:k, :j]
    return a


def _triangular_lt(l, b):
    """L⁻ᵀ B for a lower-triangular L, through the traceable triangular solve."""
    return solve_triangular(l, b, trans=1, lower=True)


def _phi(x):
    """Φ(X): the lower triangle of X with its diagonal halved (self-adjoint)."""
    p = np.tril(x)
    return p - 0.5 * _eye_like(x) * p


def _solve_lower(l, b):
    """L⁻¹ B for a lower-triangular L, through the traceable triangular solve."""
    return solve_triangular(l, b, lower=True)


@rrule(cholesky_lower_grad, formula=whole(
    "tril(tril({a[1]}) · Q̄ᵀ - ({y} + {y}ᵀ) · L · P̄), P̄ = L⁻¹ · S̄ · L⁻ᵀ, S̄ = Φ({dy}) + Φ({dy})ᵀ, Q̄ = Φ(P̄) (L = {a[0]})",
    "tril({a[0]} · Φ(P̄)), P̄ = L⁻¹ · (Φ({dy}) + Φ({dy})ᵀ) · L⁻ᵀ (L = {a[0]})",
))
def cholesky_lower_grad_rrule(l, dl):
    """The pullback of the Cholesky pullback (second derivatives through cholesky).

    The value is Ā = T(S), S = L⁻ᵀ P L⁻¹, P = Φ(Q), Q = Lᵀ G with G = tril(L̄), and
    T(S) = Φ(S + Sᵀ); it depends on the lower triangles of L and L̄ only. Given the cotangent
    C of Ā: S̄ = Φ(C) + Φ(C)ᵀ (T's adjoint), P̄ = L⁻¹ S̄ L⁻ᵀ and Q̄ = Φ(P̄); then
    Ḡ = tril(L Q̄), and L̄ = tril(G Q̄ᵀ − Y L P̄), where the first term comes through Q and
    the second through L⁻¹ (dL⁻¹ = −L⁻¹ dL L⁻¹ in S = L⁻ᵀ P L⁻¹ gives −L⁻ᵀ (P + Pᵀ) L⁻¹ S̄ L⁻ᵀ,
    with L⁻ᵀ (P + Pᵀ) L⁻¹ = S + Sᵀ = Y = Ā + Āᵀ and S̄ L⁻ᵀ = L P̄)."""
    a = cholesky_lower_grad(l, dl)
    # the value reads the lower triangle of L only: so must its derivative (a traced pullback
    # differentiated again moves the zeros above it too)
    l = np.tril(l)

    def cholesky_lower_grad_pullback(da):
        sbar = _phi(da)
        sbar = sbar + mT(sbar)
        pbar = _solve_lower(l, mT(_solve_lower(l, sbar)))  # L⁻¹ (L⁻¹ S̄)ᵀ = L⁻¹ S̄ L⁻ᵀ
        qbar = _phi(pbar)
        ddl = np.tril(np.matmul(l, qbar))
        dl_l = np.tril(np.matmul(np.tril(dl), mT(qbar)) - np.matmul(a + mT(a), np.matmul(l, pbar)))
        return NO_TANGENT, dl_l, ddl

    return a, cholesky_lower_grad_pullback


@rrule(np.linalg.cholesky, complex=True, formula=whole(
    "L⁻ᵀ · Φ(Lᵀ · {dy}) · L⁻¹, symmetrized (L = {y}, Φ: lower half, diagonal halved)",
))
def cholesky_rrule(a, **kwargs):
    """``cholesky(a)`` reads the lower triangle of `a`, ``cholesky(a, upper=True)`` the upper
    one; the gradient is that of this function of one triangle (`read_triangle`): zero on
    the triangle never read. For the symmetric gradient, factor ``(a + a.T) / 2``."""
    upper = kwargs.get("upper", False)
    c = np.linalg.cholesky(a, **kwargs)
    a = stand_in(a)  # only its shape and dtype are needed: the factor carries the rest

    def cholesky_pullback(dc):
        # upper=True returns U = Lᴴ: Re⟨Ū, dU⟩ = Re⟨Ū, conj(dL)ᵀ⟩ = Re⟨Ūᴴ, dL⟩, so L̄ = Ūᴴ
        l, dl = (mH(c), mH(dc)) if upper else (c, dc)
        # one matrix: triangular solves (O(n²) a column), not general ones (an LU each)
        solve_lt = _triangular_lt if np.ndim(l) == 2 else None
        triangle = "upper" if upper else "lower"
        return NO_TANGENT, like(cholesky_grad(l, dl, solve_lt, triangle), a)

    return c, cholesky_pullback


_CHOLESKY = np.linalg.cholesky  # (the registered function: a trace may swap numpy's names while it runs)


@frule(_CHOLESKY)
def cholesky_frule(dargs, a, **kwargs):
    """dL = L Φ(L⁻¹ S L⁻ᵀ), S the symmetric variation the read triangle of dA stands for
    (from dA = dL Lᵀ + L dLᵀ, with L⁻¹dL lower triangular: see `cholesky_grad`); for
    ``upper=True``, dU = dLᵀ. Complex matrices take the rule derived from the reverse one."""
    da = dargs[0]
    if da is ZERO or dtype_of(a).kind == "c" or dtype_of(da).kind == "c":
        return derived_frule(_CHOLESKY, (a,), dargs, kwargs)
    upper = kwargs.get("upper", False)
    c = np.linalg.cholesky(a, **kwargs)
    l = mT(c) if upper else c
    part = np.triu(da, 1) if upper else np.tril(da, -1)
    s = part + mT(part) + _eye_like(da) * da  # the symmetric matrix of the triangle read
    if np.ndim(l) == 2:
        x = _solve_lower(l, mT(_solve_lower(l, s)))  # L⁻¹ (L⁻¹ S)ᵀ = L⁻¹ S L⁻ᵀ (S symmetric)
    else:
        x = np.linalg.solve(l, mT(np.linalg.solve(l, s)))
    dl = np.matmul(l, _phi(x))
    return c, mT(dl) if upper else dl


# --- symmetric eigenproblems ---


def _reads_lower(rest, kwargs):
    """True when eigh / eigvalsh read the lower triangle (UPLO="L", numpy's default)."""
    uplo = rest[0] if rest else kwargs.get("UPLO", "L")
    return str(uplo).upper() != "U"


@rrule(np.linalg.eigh, complex=True, formula=whole(
    "conj(V) · (diag(ȳw) + F ∘ Vᵀ·ȳV) · Vᵀ, Fᵢⱼ = 1/(wⱼ - wᵢ) ((w, V) = {y})",
))
def eigh_rrule(a, *rest, **kwargs):
    """eigh reads one triangle of `a` (UPLO, "L" by default): the gradient is that of this
    function of one triangle (`read_triangle`), zero on the other. For the symmetric
    gradient, take the eigenvectors of ``(a + a.T) / 2``."""
    res = np.linalg.eigh(a, *rest, **kwargs)
    lower = _reads_lower(rest, kwargs)
    w, v = res
    a = stand_in(a)  # only its shape and dtype are needed

    def eigh_pullback(dy):
        dw, dv = (ZERO, ZERO) if dy is ZERO else dy
        eye = _eye_like(a)
        # Ā = V (diag(w̄) + F ∘ (Vᵀ V̄)) Vᵀ with F_ij = 1/(w_j - w_i): the eigenvectors' part
        # is infinite where eigenvalues repeat (their eigenvectors are not unique), as in
        # autograd and JAX; the eigenvalues' part alone is finite there.
        # Complex Hermitian A = V diag(w) Vᴴ: with P = Vᴴ dA V (Hermitian), dw = diag(P) and
        # dV = V (F ∘ P) + V diag(iφ), the last term the eigenvectors' free phases. Under
        # autograd's convention, Re⟨V̄, V (F ∘ P)⟩ = Re⟨F ∘ (Vᵀ V̄), P⟩ and w̄ adds diag(w̄);
        # Re⟨Q, Vᴴ dA V⟩ = Re⟨conj(V) Q Vᵀ, dA⟩, so g = conj(V) (diag(w̄) + F ∘ (Vᵀ V̄)) Vᵀ, then
        # the Hermitian `read_triangle`. The phase term pairs to Σ φⱼ Im((VᵀV̄)ⱼⱼ), zero for a
        # function of the eigenvectors that does not depend on their phases (|V|², V Vᴴ, ...):
        # only such functions have a gradient (`check_phase_free`).
        inner = ZERO if dw is ZERO else col(dw) * eye
        if dv is not ZERO:
            vtdv = np.matmul(mT(v), dv)
            check_phase_free(vtdv, "eigh", "eigenvectors")
            inner = sum_of(inner, _inverse_gaps(w, eye) * vtdv)
        if inner is ZERO:
            return NO_TANGENT, ZERO, *(NO_TANGENT for _ in rest)
        g = np.matmul(np.matmul(conj(v), inner), mT(v))
        return NO_TANGENT, like(read_triangle(g, lower), a), *(NO_TANGENT for _ in rest)

    return res, eigh_pullback


@rrule(np.linalg.eigvalsh, complex=True, formula=whole(
    "conj(V) · diag({dy}) · Vᵀ (V the eigenvectors of {a[0]})",
))
def eigvalsh_rrule(a, *rest, **kwargs):
    """As eigh: the gradient of the function of the triangle read (UPLO), zero on the other."""
    w, v = np.linalg.eigh(a, *rest, **kwargs)  # the eigenvectors are the gradient's basis
    lower = _reads_lower(rest, kwargs)
    a = stand_in(a)  # only its shape and dtype are needed

    def eigvalsh_pullback(dw):
        # d wᵢ = vᵢᴴ dA vᵢ, finite also where eigenvalues repeat: g = conj(V) diag(w̄) Vᵀ
        g = np.matmul(conj(v) * row(dw), mT(v))
        return NO_TANGENT, like(read_triangle(g, lower), a), *(NO_TANGENT for _ in rest)

    return w, eigvalsh_pullback


# --- singular values ---


@rrule(np.linalg.svd, complex=True, formula=whole("U · diag(ȳs) · Vᵀ plus the terms of the singular vectors"))
def svd_rrule(a, *rest, **kwargs):
    opts = {"full_matrices": True, "compute_uv": True, "hermitian": False}
    opts.update(zip(opts, rest), **kwargs)
    m, n = np.shape(a)[-2:]
    k = min(m, n)
    full = opts["compute_uv"] and opts["full_matrices"] and m != n
    if full:
        y = np.linalg.svd(a, full_matrices=True, hermitian=opts["hermitian"])
        u, s, vh = y[0][..., :, :k], y[1], y[2][..., :k, :]  # the reduced SVD inside the full one
    else:
        res = np.linalg.svd(a, full_matrices=False, hermitian=opts["hermitian"])
        u, s, vh = res
        y = res if opts["compute_uv"] else s
    nothing = tuple(NO_TANGENT for _ in rest)

    cplx = dtype_of(a).kind == "c"

    def svd_pullback(dy):
        if not opts["compute_uv"]:
            du, ds, dvh = ZERO, dy, ZERO
        else:
            du, ds, dvh = (ZERO,) * 3 if dy is ZERO else dy
        # A complex A is worked in the conjugate convention (the cotangents conjugated: Ū* =
        # ∂f/∂Re U + i ∂f/∂Im U), where the real formulas below hold with every transpose a
        # conjugate transpose plus one diagonal term, and the result conjugated back (Wan and
        # Zhang, "Automatic differentiation for complex valued SVD", 2019). Derivation: with
        # dP = Uᴴ dA V, d s = Re diag(dP), and Uᴴ dU, Vᴴ dV skew-Hermitian, their off-diagonal
        # parts are F ∘ (dP S + S dPᴴ) and F ∘ (S dP + dPᴴ S); their diagonals, imaginary, are
        # tied only through Im diag(dP) = s ∘ (Im diag(Uᴴ dU) - Im diag(Vᴴ dV)): the pair of
        # phases e^(iθ) on uⱼ and vⱼ is free. Transposing, the diagonal adds
        # i Im diag(Uᴴ Ū*) / s, and a function that does not depend on the free phases has
        # Im diag(Uᴴ Ū*) = Im diag(Vᴴ V̄*) (`check_phase_free`); for a real A all this is zero.
        if cplx:
            du, dvh = (ZERO if du is ZERO else conj(du)), (ZERO if dvh is ZERO else conj(dvh))
        if full:
            # The columns U₂ that full_matrices adds (rows of Vh) only span the complement of
            # U₁ and are not unique: they are taken to move only as orthogonality to U₁
            # requires, dU₂ = -U₁ dU₁ᴴ U₂ (exact for functions of their span, U₂U₂ᴴ), which
            # folds Ū₂ into Ū₁ as -U₂ Ū₂ᴴ U₁. JAX and autograd raise here instead.
            if du is not ZERO and m > k:
                du = du[..., :, :k] - np.matmul(y[0][..., :, k:], np.matmul(mH(du[..., :, k:]), u))
            if dvh is not ZERO and n > k:
                dvh = dvh[..., :k, :] - np.matmul(np.matmul(vh, mH(dvh[..., k:, :])), y[2][..., k:, :])
        # Townsend, "Differentiating the singular value decomposition": with
        # F_ij = 1/(s_j² - s_i²), J = F ∘ (UᵀŪ - ŪᵀU), K = F ∘ (VᵀV̄ - V̄ᵀV),
        # Ā = U (J S + diag(s̄) + S K) Vᵀ + (I - UUᵀ) Ū S⁻¹ Vᵀ + U S⁻¹ V̄ᵀ (I - VVᵀ).
        # F is infinite where singular values repeat and S⁻¹ where one is 0: the vectors are
        # not unique there, and the gradient through U or Vh is inf/nan (as in autograd, JAX).
        eye = _eye_like(a, k)
        inner = ZERO if ds is ZERO else col(ds) * eye
        outer = ZERO
        if du is not ZERO or dvh is not ZERO:
            f = _inverse_gaps(s * s, eye)
        if du is not ZERO:
            utdu = np.matmul(mH(u), du)
            inner = sum_of(inner, f * (utdu - mH(utdu)) * row(s))
            if cplx:
                inner = inner + 1j * (eye * np.imag(utdu)) / row(s)
            if m > k:
                outer = np.matmul((du - np.matmul(u, utdu)) / row(s), vh)
        if dvh is not ZERO:
            vtdv = np.matmul(vh, mH(dvh))
            inner = sum_of(inner, col(s) * (f * (vtdv - mH(vtdv))))
            if n > k:
                outer = sum_of(outer, np.matmul(u, (dvh - np.matmul(np.matmul(dvh, mH(vh)), vh)) / col(s)))
        if cplx and (du is not ZERO or dvh is not ZERO):
            phases = sum_of(ZERO if du is ZERO else utdu, ZERO if dvh is ZERO else vtdv)
            check_phase_free(phases, "svd", "singular vectors")
        g = sum_of(ZERO if inner is ZERO else np.matmul(np.matmul(u, inner), vh), outer)
        if g is ZERO:
            return NO_TANGENT, ZERO, *nothing
        if opts["hermitian"]:  # the symmetric gradient; the Hermitian one, (g + gᴴ)/2, if complex
            g = 0.5 * (g + mH(g))
        return NO_TANGENT, like(conj(g) if cplx else g, a), *nothing

    return y, svd_pullback


# --- qr ---


def _copyutu(n):
    """The Hermitian matrix whose upper triangle is that of n, with the real part of its
    diagonal (the symmetric one, for a real n)."""
    upper = np.triu(n, 1)
    diag = _eye_like(n) * (np.real(n) if dtype_of(n).kind == "c" else n)
    return upper + mH(upper) + diag


def _qr_grad(q, r, dq, dr):
    """Ā of A = QR (A m×n with m ≥ n, R square): N = R̄ Rᵀ - Qᵀ Q̄, Ā = (Q̄ + conj(Q) B) R⁻ᵀ
    with B = copyutu(N), the Hermitian matrix of N's upper triangle and the real part of its
    diagonal (for a real A, B = copyltu(R R̄ᵀ - Q̄ᵀ Q), the usual formula).

    Derivation (autograd's convention, ⟨P, Q⟩ = Σ P∘Q): LAPACK's R has a real diagonal. With
    X = Qᴴ dA R⁻¹ and C = Qᴴ dQ (skew-Hermitian), dR R⁻¹ = X - C is upper triangular with a
    real diagonal, so C = tril(X, -1) - tril(X, -1)ᴴ + i Im diag(X), and
    dQ = Q C + dA R⁻¹ - Q X. Then df = Re⟨Q̄, dQ⟩ + Re⟨R̄, dR⟩ = Re⟨Q̄ R⁻ᵀ, dA⟩ + Re⟨P, C - X⟩
    with P = Qᵀ Q̄ - R̄ Rᵀ = -N, and Re⟨P, C⟩ = Re⟨K, X⟩ for K lower triangular with
    K_ij = P_ij - conj(P_ji) below the diagonal and i Im P_ii on it: K - P = copyutu(N).
    Re⟨B, Qᴴ dA R⁻¹⟩ = Re⟨conj(Q) B R⁻ᵀ, dA⟩ gives the formula."""
    nn = sum_of(ZERO if dr is ZERO else np.matmul(dr, mT(r)), ZERO if dq is ZERO else -np.matmul(mT(q), dq))
    if nn is ZERO:
        return ZERO
    b = sum_of(dq, np.matmul(conj(q), _copyutu(nn)))
    return mT(np.linalg.solve(r, mT(b)))  # B R⁻ᵀ = (R⁻¹ Bᵀ)ᵀ


@rrule(np.linalg.qr, complex=True, formula=whole(
    "the QR pullback: (ȳQ + conj(Q)·B) · R⁻ᵀ, B Hermitian from the upper triangle of ȳR·Rᵀ - Qᵀ·ȳQ",
))
def qr_rrule(a, *rest, **kwargs):
    mode = rest[0] if rest else kwargs.get("mode", "reduced")
    y = np.linalg.qr(a, *rest, **kwargs)
    m, n = np.shape(a)[-2:]
    if mode in ("reduced", "complete"):
        q, r = y
    elif mode == "r":
        q, r = np.linalg.qr(a)
    differentiable = mode == "r" or mode == "reduced" or (mode == "complete" and m <= n)

    def qr_pullback(dy):
        if not differentiable:
            raise TapegradError(
                f"the gradient of qr(..., mode={mode!r}) is not defined for this shape; use "
                f"mode='reduced'"
            )
        dq, dr = (ZERO, dy) if mode == "r" else ((ZERO, ZERO) if dy is ZERO else dy)
        if m >= n:
            g = _qr_grad(q, r, dq, dr)
        else:
            # a wide A = [X | Y] is X = Q R₁ (square) and Y = Q R₂ with R = [R₁ | R₂]:
            # Ȳ = Q R̄₂ and X̄ = the square gradient with Q̄ + Y R̄₂ᵀ in place of Q̄; complex,
            # R₂ = Qᴴ Y: Re⟨R̄₂, Qᴴ dY⟩ gives Ȳ = conj(Q) R̄₂ and Re⟨R̄₂, dQᴴ Y⟩ adds conj(Y) R̄₂ᴴ to Q̄
            y2 = a[..., :, m:]
            dr1, dr2 = (ZERO, ZERO) if dr is ZERO else (dr[..., :, :m], dr[..., :, m:])
            dq1 = dq if dr2 is ZERO else sum_of(dq, np.matmul(conj(y2), mH(dr2)))
            gx = _qr_grad(q, r[..., :, :m], dq1, dr1)
            gy = ZERO if dr2 is ZERO else np.matmul(conj(q), dr2)
            if gx is ZERO and gy is ZERO:
                g = ZERO
            else:
                gx = np.zeros(np.shape(a)[:-1] + (m,), dtype=tangent_float(a)) if gx is ZERO else gx
                gy = np.zeros(np.shape(y2), dtype=tangent_float(a)) if gy is ZERO else gy
                g = np.concatenate([gx, gy], axis=-1)
        if g is ZERO:
            return NO_TANGENT, ZERO, *(NO_TANGENT for _ in rest)
        return NO_TANGENT, like(g, a), *(NO_TANGENT for _ in rest)

    return y, qr_pullback
