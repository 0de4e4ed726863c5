"""autograd's ``scipy.signal.convolve(A, B, axes=None, dot_axes=[(), ()], mode="full")``: a
convolution along `axes` (pairs of axes of `A` and `B`) that also sums over `dot_axes`, as
autograd's convnet example uses it. The result's axes are `A`'s other axes, then `B`'s, then
the convolved ones. It is written with numpy calls (one ``einsum`` per position of `A`
along the convolved axes), so tapegrad differentiates it to any order.

Examples
--------
>>> import numpy as np
>>> from tapegrad.autograd.scipy.signal import convolve
>>> convolve(np.array([1.0, 2.0]), np.array([1.0, 1.0, 1.0]))
array([1., 3., 3., 2.])
>>> convolve(np.ones((2, 3)), np.ones((4, 3)), axes=([0], [0]), dot_axes=([1], [1]), mode="valid")
array([6., 6., 6.])
"""
import itertools
import string

import numpy as np

__all__ = ["convolve"]


def convolve(A, B, axes=None, dot_axes=((), ()), mode="full"):
    """Convolve `A` with `B` along ``axes = (axes of A, axes of B)``, summing over ``dot_axes``."""
    if mode not in ("valid", "full", "same"):
        raise ValueError(f"Mode {mode} undefined, it can be one of 'valid', 'full', and 'same'")
    if axes is None:
        axes = [list(range(np.ndim(A))), list(range(np.ndim(A)))]
    ax_a, ax_b = [list(a) for a in axes]
    dot_a, dot_b = [list(d) for d in dot_axes]
    shape_a, shape_b = np.shape(A), np.shape(B)
    n_a = [shape_a[i] for i in ax_a]
    n_b = [shape_b[i] for i in ax_b]
    n_full = [p + q - 1 for p, q in zip(n_a, n_b)]
    # B padded with len(A)-1 zeros on each side: full[n] = Σ_j A[len(A)-1-j] · Bp[n + j]
    pad = [(0, 0)] * np.ndim(B)
    for i, p in zip(ax_b, n_a):
        pad[i] = (p - 1, p - 1)
    Bp = np.pad(B, pad)
    letters = iter(string.ascii_letters)
    sub_a = [next(letters) for _ in range(np.ndim(A))]
    sub_b = [next(letters) for _ in range(np.ndim(B))]
    for i, k in zip(dot_a, dot_b):
        sub_b[k] = sub_a[i]
    keep_a = [sub_a[i] for i in range(np.ndim(A)) if i not in ax_a and i not in dot_a]
    keep_b = [sub_b[i] for i in range(np.ndim(B)) if i not in ax_b and i not in dot_b]
    a_left = [s for i, s in enumerate(sub_a) if i not in ax_a]
    spec = f"{''.join(a_left)},{''.join(sub_b)}->{''.join(keep_a + keep_b + [sub_b[i] for i in ax_b])}"
    full = 0.0
    for j in itertools.product(*[range(p) for p in n_a]):
        index_a = [slice(None)] * np.ndim(A)
        window = [slice(None)] * np.ndim(B)
        for i, k, jj, p, n in zip(ax_a, ax_b, j, n_a, n_full):
            index_a[i] = p - 1 - jj
            window[k] = slice(jj, jj + n)
        full = full + np.einsum(spec, A[tuple(index_a)], Bp[tuple(window)])
    conv = np.ndim(full) - len(ax_a)
    index = [slice(None)] * np.ndim(full)
    for d, (p, q) in enumerate(zip(n_a, n_b)):
        if mode == "valid":
            index[conv + d] = slice(min(p, q) - 1, max(p, q))
        elif mode == "same":
            index[conv + d] = slice((q - 1) // 2, (q - 1) // 2 + p)
    return full[tuple(index)]
