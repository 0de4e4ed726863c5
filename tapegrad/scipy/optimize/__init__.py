"""scipy.optimize's solvers, their solutions differentiable: `tapegrad.scipy.optimize`.

Each function has scipy's name, signature and result (a float, a tuple with full_output, a
RootResults or an OptimizeResult). When the functions it is given capture traced values (in a
closure, a bound object, a partial) or their `args` hold them, scipy solves on plain values
and the solution is recorded as one op whose derivative is the implicit function theorem's:
``dx*/dθ = -(∂r/∂x)⁻¹ ∂r/∂θ`` at the solution of ``r(x*, θ) = 0`` (r the function for a root,
∇f for a minimum), never the derivative of the solver's iterations. It composes: reverse and
forward mode, second and higher order. Otherwise the call is scipy's, unchanged.

A solver that did not converge, or a solution without a derivative (∂f/∂x = 0 at a root, a
singular Hessian at a minimum), raises `SolverError` naming the call's line and what to do.
"""
from .._implicit import SolverError
from ._roots import bisect, brenth, brentq, newton, ridder, root_scalar, toms748
from ._vector import fixed_point, fsolve, root
from ._minimize import least_squares, minimize, minimize_scalar

__all__ = ["root_scalar", "brentq", "brenth", "bisect", "ridder", "toms748", "newton", "root", "fsolve",
           "fixed_point", "minimize", "minimize_scalar", "least_squares", "SolverError"]
