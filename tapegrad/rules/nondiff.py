"""The table of non-differentiable functions: recorded on tapes, derivatives stop at them."""
from __future__ import annotations

import numpy as np

from ..registry import nondifferentiable

nondifferentiable(
    # comparisons and logic
    np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal,
    np.logical_and, np.logical_or, np.logical_xor, np.logical_not,
)
