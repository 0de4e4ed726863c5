"""autograd's ``unary_to_nary``: an operator on a function of one argument made into one that
takes ``argnum`` (an int, or a tuple of positions differentiated together as one tuple)."""
import functools
import inspect

__all__ = ["unary_to_nary", "subvals", "wraps", "Unary", "get_name", "get_doc"]


def subvals(x, ivs):
    """The tuple `x` with ``x[i]`` replaced by `v` for each ``(i, v)`` of `ivs`."""
    x = list(x)
    for i, v in ivs:
        x[i] = v
    return tuple(x)


def get_name(f):
    """`f`'s ``__name__``, or ``"[unknown name]"``."""
    return getattr(f, "__name__", "[unknown name]")


def get_doc(f):
    """`f`'s ``__doc__``, or ``""``."""
    return getattr(f, "__doc__", "")


def wraps(fun, namestr="{fun}", docstr="{doc}", **kwargs):
    """Name and document `f` after `fun`, as autograd's ``wraps`` does."""
    def _wraps(f):
        try:
            f.__name__ = namestr.format(fun=getattr(fun, "__name__", "[unknown name]"), **kwargs)
            f.__doc__ = docstr.format(fun=getattr(fun, "__name__", "[unknown name]"),
                                      doc=getattr(fun, "__doc__", "") or "", **kwargs)
        except Exception:  # (a name that cannot be set leaves f as it is, as in autograd)
            pass
        return f
    return _wraps


class Unary:
    """`fun` as a function of its argument(s) `argnum` alone, the others fixed.

    A class of tapegrad's own, so a trace does not walk into it: the other arguments are
    constants of the differentiation, as in autograd (a closure's values would be inputs)."""

    __slots__ = ("fun", "argnum", "args", "kwargs", "__name__")
    #: (read by a trace for the note on its input; inspecting __call__ would cost more than a gradient)
    __signature__ = inspect.Signature([inspect.Parameter("x", inspect.Parameter.POSITIONAL_OR_KEYWORD)])

    def __init__(self, fun, argnum, args, kwargs):
        self.fun, self.argnum, self.args, self.kwargs = fun, argnum, args, kwargs
        self.__name__ = getattr(fun, "__name__", "f")

    def __call__(self, x):
        if isinstance(self.argnum, int):
            subargs = subvals(self.args, [(self.argnum, x)])
        else:
            subargs = subvals(self.args, zip(self.argnum, x))
        return self.fun(*subargs, **self.kwargs)


def unary_to_nary(unary_operator):
    """``op(fun, x, *extra)`` as ``op(fun, argnum=0, *extra)(*args, **kwargs)``.

    Examples
    --------
    >>> from tapegrad.autograd.wrap_util import unary_to_nary
    >>> at = unary_to_nary(lambda f, x: (x, f(x)))
    >>> at(lambda a, b: a - b, 1)(5.0, 2.0)
    (2.0, 3.0)
    """
    @functools.wraps(unary_operator)
    def nary_operator(fun, argnum=0, *nary_op_args, **nary_op_kwargs):
        if type(argnum) not in (int, tuple, list):
            raise TypeError(f"argnum must be an int or a tuple of ints, not {type(argnum).__name__}")

        def nary_f(*args, **kwargs):
            x = args[argnum] if isinstance(argnum, int) else tuple(args[i] for i in argnum)
            return unary_operator(Unary(fun, argnum, args, kwargs), x, *nary_op_args, **nary_op_kwargs)

        name = getattr(unary_operator, "__name__", "op")
        return wraps(fun, "{op}_of_{fun}_wrt_argnum_{argnum}",
                     "{op} of function {fun} with respect to argument number {argnum}.",
                     op=name, argnum=argnum)(nary_f)

    return nary_operator
