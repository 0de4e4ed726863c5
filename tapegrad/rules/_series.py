"""Taylor series for the slopes of rules near a removable singularity (sinc at 0, spence at 1,
the Bessel and elliptic functions at 0), where the closed form divides one small number by
another: evaluated by `horner` on ``np.where(near, u, 0.0)``, so that the series is read only
near the point and its powers never overflow far from it, and differentiable in u, so that the
higher derivatives there are right too."""
from __future__ import annotations

__all__ = ["horner"]


def horner(coefficients, u):
    """Σⱼ cⱼ uʲ, from the highest power down."""
    total = coefficients[-1]
    for c in coefficients[-2::-1]:
        total = total * u + c
    return total
