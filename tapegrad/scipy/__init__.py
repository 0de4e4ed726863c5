"""Traceable replacements for scipy functions that convert their inputs with ``np.asarray``.

``tapegrad.scipy.linalg`` and ``tapegrad.scipy.special`` have scipy's names and signatures; on
plain values each calls scipy, on traced or dual values it is recorded as one primitive.
"""
from . import linalg, special

__all__ = ["linalg", "special"]
