"""Views: which traced values share memory with which, as numpy's results would, so that a
write into one reaches the other.

numpy answers ``x[1:]``, ``x.T``, ``np.flip(x)``, the parts of ``np.split(x, 2)`` and a
``reshape`` it need not copy with views of x; a write into a view changes x, and x's later
writes show through the view. Traced values are immutable (each write records a new value),
so a traced view remembers its base and how it was made (`note_view`); a write into it
writes its new value back into the base at the positions of its elements
(`view_positions`: the view's own function applied to an array of positions, which is what
numpy's strides say), and the base's other views are taken again from the new base when
next used (`view_again`). numpy's read-only views (diagonal, broadcast_to, ``.imag`` of a
real array) raise numpy's error on a write.
"""
from __future__ import annotations

import operator

import numpy as np

from .structures import Boxed, concrete  # (concrete: views' name for it, as its importers know it)
from .registry import READ_ONLY, VIEWS  # declared with each rule: @rrule(fn, view=True)

__all__ = ["VIEWS", "READ_ONLY", "concrete", "note_view", "view_positions", "view_again"]


def _is_basic_index(index):
    """Basic indexing (ints, slices, None, Ellipsis): numpy returns a view that writes through."""
    items = index if type(index) is tuple else (index,)
    return all(type(i) in (int, slice, type(None)) or i is Ellipsis or isinstance(i, np.integer)
               for i in items)


def note_view(out, fn, args, kwargs):
    """Remember that `out` shares memory with ``args[0]`` where numpy's result would, so that a
    write into either one reaches the other, as in numpy.

    A view made by basic indexing writes back through ``base[index] = view``. Any other view
    (a transpose, a flip, a part of a split, a reshape that numpy does not copy) writes back
    through the positions of its elements in the base, found by applying the same function
    to an array of positions when a write first needs them (`view_positions`). A reshape or
    ravel that numpy answers with a copy is no view; diagonal and broadcast_to are read-only.
    """
    base = args[0]
    base_val = concrete(base)
    if not isinstance(base_val, np.ndarray):
        return
    if type(out) is list or type(out) is tuple:  # np.split and its family: each part is a view
        rest = (args[1:], kwargs)
        for i, part in enumerate(out):
            if isinstance(part, Boxed):
                _link(part, base, (None, fn, rest, i, None))
        return
    if not isinstance(out, Boxed) or not isinstance(concrete(out), np.ndarray):
        return
    if fn is operator.getitem:
        if _is_basic_index(args[1]):
            _link(out, base, (args[1], fn, ((), None), None, None))
        return  # advanced indexing copies
    if fn in READ_ONLY or (fn is np.imag and not np.iscomplexobj(base_val)):
        name = READ_ONLY.get(fn, "x.imag of a real array")
        error = (ValueError, f"{name} returns a read-only view in numpy: assignment destination "
                             f"is read-only; take a copy first with x.copy()")
    elif (fn is np.real or fn is np.imag) and np.iscomplexobj(base_val):
        error = (TypeError, f"{fn.__name__} of a complex array is a view of half of each "
                            f"element, which tapegrad does not write through; update the "
                            f"original array instead (x = re + 1j * im)")
    elif not np.may_share_memory(concrete(out), base_val):
        return  # numpy copied (a reshape or ravel of an array that is not contiguous)
    else:
        error = None
    _link(out, base, (None, fn, (args[1:], kwargs), None, error))


def _link(view, base, how):
    """view._base = (base, index, fn, (args, kwargs), item, error); base._views gets view."""
    view._base = (base, *how)
    views = getattr(base, "_views", None)
    if views is None:
        base._views = [view]
    else:
        views.append(view)


def view_positions(view):
    """The index at which `view`'s elements sit in its base: ``base[index]`` reads the view.

    The view's own function, applied to an array that holds each position of the base,
    gives the positions; this is what numpy's strides mean, in numpy's own words.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> def f(x):
    ...     np.flip(x)[0] = 10.0
    ...     return x
    >>> tapegrad.trace(f, np.zeros(3))[0]
    array([ 0.,  0., 10.])
    """
    base, index, fn, (args, kwargs), item, _ = view._base
    if index is not None:
        return index
    shape = np.shape(base)
    positions = fn(np.arange(np.size(base)).reshape(shape), *args, **(kwargs or {}))
    if item is not None:
        positions = positions[item]
    return np.unravel_index(positions, shape)


def view_again(view):
    """The value of `view` taken again from its base (after the base was written)."""
    base, index, fn, (args, kwargs), item, _ = view._base
    if index is not None:
        return base[index]
    out = fn(base, *args, **(kwargs or {}))
    return out if item is None else out[item]
