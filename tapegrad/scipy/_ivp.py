"""The op `tapegrad.scipy.integrate.solve_ivp` records: scipy's solve_ivp on plain values, its
forward solution kept as scipy's dense output for the adjoint.

`ivp_solution(problem, y0, *leaves)` is the state at the output times, ``(n, T)`` as scipy's
``sol.y``; `leaves` are the traced values the right-hand side captures or its `args` hold
(`tapegrad.scipy._implicit.Captured`). Its rules (``tapegrad.rules.ivp``): reverse mode by the
adjoint method, integrated backward with scipy from the last output time and taking each output's
cotangent as a jump, the forward state read from the dense output of the forward solve (never
integrated backward, which is unstable for a stiff problem); forward mode by forward sensitivities.
"""
from __future__ import annotations

import numpy as np
import scipy.integrate as _si

from ..context import primitive
from ..errors import user_location
from ._implicit import SolverError, plain

__all__ = ["IvpProblem", "ivp_solution"]


class IvpProblem:
    """fun, t_span, t_eval, method and options of one solve_ivp call, with the captured values
    taken out (`captured`). `solve` keeps scipy's result (`result`), the output times (`times`)
    and the dense forward solution (`dense`) of the last solve."""

    def __init__(self, captured, t_span, t_eval, method, options):
        self.captured, self.t_span, self.t_eval, self.method, self.options = \
            captured, t_span, t_eval, method, options
        self.where = user_location()
        self.result = self.times = self.dense = self.point = None

    def __getstate__(self):
        """The problem without the last solve (a copy, as a compiled gradient's program made in
        another process carries, solves afresh: the last point may be a traced value)."""
        state = dict(self.__dict__)
        state["result"] = state["times"] = state["dense"] = state["point"] = None
        return state

    def rhs(self, leaves):
        """fun(t, y) with the captured values bound to `leaves` (and its args appended)."""
        fun, args = self.captured.bind(leaves)
        return lambda t, y: fun(t, y, *args)

    def solve(self, y0, leaves):
        """scipy's solve_ivp on plain values, dense output kept; a failure raises `SolverError`."""
        res = _si.solve_ivp(self.rhs([plain(v) for v in leaves]), self.t_span, np.ravel(plain(y0)),
                            method=self.method, t_eval=self.t_eval, dense_output=True, **self.options)
        if not res.success:
            raise self.fail(f"scipy's solve_ivp ({self.method}) failed: {res.message}",
                            "loosen rtol/atol, pick a stiff method (Radau, BDF, LSODA) for a stiff problem, or "
                            "shorten t_span: a solution that was not computed has no derivative")
        return res

    def dense_at(self, y0, leaves):
        """(times, dense output) of the forward solve at plain `y0` and `leaves`: the last solve's
        when it was at these values (what a pullback reads), else a solve of its own (a
        replayed or compiled tape that runs a pullback's op with values of its own)."""
        point = [np.asarray(plain(v)) for v in (y0, *leaves)]
        if self.point is None or len(point) != len(self.point) or not all(
                a.shape == b.shape and np.array_equal(a, b) for a, b in zip(point, self.point)):
            ivp_solution(self, plain(y0), *(plain(v) for v in leaves))
        return self.times, self.dense

    def fail(self, what, fix):
        return SolverError(f"solve_ivp at {self.where}: {what}; {fix}")

    def __repr__(self):
        return f"<solve_ivp ({self.method}) problem at {self.where}>"


@primitive(traceable=False)
def ivp_solution(problem, y0, *leaves):
    """The state at the output times, (n, T), from scipy's solve_ivp on plain values."""
    res = problem.solve(y0, leaves)
    problem.result, problem.times, problem.dense = res, res.t, res.sol
    problem.point = [np.array(plain(v)) for v in (y0, *leaves)]
    return np.array(res.y)
