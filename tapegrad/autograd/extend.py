"""autograd's ``extend``: primitives and their derivatives, said autograd's way, registered as
tapegrad's rules.

`primitive(f)` is `tapegrad.primitive` with one `tapegrad.rrule` that asks the makers given
to `defvjp` & co.; `defjvp` & co. register a `tapegrad.frule` (without one, forward mode
derives it from the reverse makers). A maker is autograd's: ``defvjp(f, maker_0, maker_1)``
with ``maker_i(ans, *args, **kwargs) -> (g -> tangent of argument i)``; `None` for an argument
without a derivative (differentiating through it raises `tapegrad.NoRuleError`).

`VSpace.register(cls)` makes a vector-like type of the user's own differentiable, as
autograd's ``VSpace.register`` does: it is `tapegrad.extend.register_structure` by the
object's attributes, so the gradient with respect to such an object is an object of its type.
`Box.register` has nothing to do: tapegrad traces any value without a box type.

In autograd's spelling (docs/guide/autograd.rst runs this example)::

    @primitive
    def logsumexp(x):
        return np.log(np.sum(np.exp(x)))

    defvjp(logsumexp, lambda ans, x: lambda g: g * np.exp(x - ans))
    grad(logsumexp)(np.array([0.0, 0.0]))       # array([0.5, 0.5])
"""
import itertools

from ..context import primitive as _tg_primitive
from ..errors import NoRuleError
from ..grad import pullback
from ..registry import frule, nondifferentiable, rrule
from ..structures import register_structure
from ..tangents import NO_TANGENT, ZERO, Thunk, accum
from .wrap_util import Unary, subvals

__all__ = ["primitive", "defvjp", "defvjp_argnum", "defvjp_argnums", "defjvp", "defjvp_argnum",
           "defjvp_argnums", "def_linear", "notrace_primitive", "VSpace", "Box", "vspace",
           "SparseObject", "register_notrace"]

#: per primitive: its original function, and how its vjps and jvps were given
_MAKERS = {}


def primitive(f_raw):
    """`f_raw` as one op of the tape, its derivatives given later by `defvjp` and `defjvp`."""
    wrapped = _tg_primitive(f_raw)
    wrapped.fun = f_raw
    _MAKERS[wrapped] = {"raw": f_raw, "vjp": None, "jvp": None}

    @rrule(wrapped)
    def autograd_rrule(*args, **kwargs):
        ans = f_raw(*args, **kwargs)
        vjp_all = _MAKERS[wrapped]["vjp"]

        def autograd_pullback(g):
            if vjp_all is None:
                raise NoRuleError(f"no vjp defined for {_name(f_raw)}: give one with "
                                  f"tapegrad.autograd.extend.defvjp({_name(f_raw)}, ...)")
            return (NO_TANGENT, *vjp_all(g, ans, args, kwargs))

        return ans, autograd_pullback

    # the rule is the user's, said autograd's way: it lists (tapegrad.show.listing) as theirs
    autograd_rrule.__module__ = getattr(f_raw, "__module__", None)
    return wrapped


def _name(f):
    return getattr(f, "__name__", repr(f))


def _missing(f, argnum):
    def refuse():
        raise NoRuleError(f"VJP of {_name(f)} wrt argnum {argnum} not defined; give one with "
                          f"tapegrad.autograd.extend.defvjp")
    return Thunk(refuse)


def defvjp_argnums(fun, vjpmaker):
    """``vjpmaker(argnums, ans, args, kwargs) -> (g -> tangents of all arguments)``."""
    def vjp_all(g, ans, args, kwargs):
        return tuple(vjpmaker(tuple(range(len(args))), ans, args, kwargs)(g))

    _MAKERS[fun]["vjp"] = vjp_all


def defvjp_argnum(fun, vjpmaker):
    """``vjpmaker(argnum, ans, args, kwargs) -> (g -> tangent of argument argnum)``."""
    def vjp_all(g, ans, args, kwargs):
        return tuple(Thunk(lambda i=i: vjpmaker(i, ans, args, kwargs)(g)) for i in range(len(args)))

    _MAKERS[fun]["vjp"] = vjp_all


def defvjp(fun, *vjpmakers, argnums=None):
    """One maker per argument: ``maker(ans, *args, **kwargs) -> (g -> tangent)``; None for an
    argument without one. `argnums` says which arguments the makers are for (default 0, 1, ...)."""
    makers = dict(zip(itertools.count() if argnums is None else argnums, vjpmakers))
    raw = _MAKERS[fun]["raw"]

    def vjp_all(g, ans, args, kwargs):
        out = []
        for i in range(len(args)):
            maker = makers.get(i)
            if maker is None:
                out.append(_missing(raw, i))
            else:
                out.append(Thunk(lambda maker=maker: maker(ans, *args, **kwargs)(g)))
        return tuple(out)

    _MAKERS[fun]["vjp"] = vjp_all


def _register_jvp(fun, jvp_all):
    _MAKERS[fun]["jvp"] = jvp_all
    raw = _MAKERS[fun]["raw"]

    @frule(fun)
    def autograd_frule(dargs, *args, **kwargs):
        ans = raw(*args, **kwargs)
        return ans, jvp_all(dargs, ans, args, kwargs)


def _sum(terms):
    total = ZERO
    for t in terms:
        total = accum(total, t)
    return total


def defjvp_argnums(fun, jvpmaker):
    """``jvpmaker(argnums, gs, ans, args, kwargs) -> tangent of the result``."""
    def jvp_all(dargs, ans, args, kwargs):
        argnums = tuple(i for i, d in enumerate(dargs) if d is not ZERO)
        return jvpmaker(argnums, tuple(dargs[i] for i in argnums), ans, args, kwargs)

    _register_jvp(fun, jvp_all)


def defjvp_argnum(fun, jvpmaker):
    """``jvpmaker(argnum, g, ans, args, kwargs) -> this argument's share of the result's tangent``."""
    def jvp_all(dargs, ans, args, kwargs):
        return _sum(jvpmaker(i, d, ans, args, kwargs) for i, d in enumerate(dargs) if d is not ZERO)

    _register_jvp(fun, jvp_all)


def defjvp(fun, *jvpfuns, argnums=None):
    """One function per argument: ``jvp(g, ans, *args, **kwargs) -> share of the result's
    tangent``; ``"same"`` for an argument in which `fun` is linear, None for none."""
    raw = _MAKERS[fun]["raw"]
    jvps = dict(zip(itertools.count() if argnums is None else argnums, jvpfuns))

    def share(i, g, ans, args, kwargs):
        jvpfun = jvps.get(i)
        if jvpfun is None:
            raise NoRuleError(f"JVP of {_name(raw)} wrt argnum {i} not defined; give one with "
                              f"tapegrad.autograd.extend.defjvp")
        if jvpfun == "same":
            return raw(*subvals(args, [(i, g)]), **kwargs)
        return jvpfun(g, ans, *args, **kwargs)

    defjvp_argnum(fun, share)


def def_linear(fun):
    """`fun` is linear in each argument: its derivatives are `fun` of the tangents."""
    raw = _MAKERS[fun]["raw"]
    defjvp_argnum(fun, lambda i, g, ans, args, kwargs: raw(*subvals(args, [(i, g)]), **kwargs))
    defvjp_argnum(fun, lambda i, ans, args, kwargs: _linear_vjp(raw, i, args, kwargs))


def _linear_vjp(raw, i, args, kwargs):
    # the transpose of a linear map: a pullback of the map itself
    _, back = pullback(Unary(raw, i, args, kwargs), args[i])
    return lambda g: back(g)[1]


def notrace_primitive(f_raw):
    """A function whose result carries no derivative: recorded as one op, its gradient zero."""
    wrapped = _tg_primitive(f_raw, traceable=False)
    nondifferentiable(wrapped)
    return wrapped


register_notrace = notrace_primitive


class VSpace:
    """autograd's vector spaces, kept for their ``register``: tapegrad adds tangents part by part."""

    @classmethod
    def register(cls, value_type, vspace_maker=None):
        """Make `value_type` differentiable by its attributes (`tapegrad.extend.register_structure`)."""
        register_structure(value_type, _attributes, lambda parts: _rebuilt(value_type, parts))


def _attributes(x):
    return dict(vars(x))


def _rebuilt(value_type, parts):
    obj = value_type.__new__(value_type)
    obj.__dict__.update(parts)
    return obj


def vspace(value):
    """autograd's ``vspace(x)``: tapegrad has none; a clear error instead of a wrong answer."""
    raise NotImplementedError("tapegrad.autograd has no vector spaces: tangents have the "
                              "structure of their values; use numpy (np.zeros_like) on them")


class Box:
    """autograd's box of a traced value; tapegrad's traced values need no box type."""

    @classmethod
    def register(cls, value_type):
        """Nothing to do: tapegrad traces a value of any type."""


class SparseObject:
    """autograd's sparse tangent (a ``(vs, mut_add)`` pair); kept as a name for ported code."""

    __slots__ = ("vs", "mut_add")

    def __init__(self, vs, mut_add):
        self.vs, self.mut_add = vs, mut_add
