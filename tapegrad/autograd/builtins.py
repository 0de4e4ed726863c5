"""autograd's ``builtins``: containers and type tests that see through traced values.

tapegrad differentiates through Python's own tuples, lists and dicts, so `tuple`, `list` and
`dict` are Python's. `isinstance` and `type` answer for the value a traced or dual value
stands for (``isinstance(x, np.ndarray)`` is True for a traced array), as autograd's do for
its boxes.

Examples
--------
>>> import numpy as np
>>> from tapegrad.autograd import grad
>>> from tapegrad.autograd.builtins import isinstance, tuple
>>> grad(lambda x: x[0] * 2.0 if isinstance(x, np.ndarray) else x)(np.array([1.0]))
array([2.])
>>> tuple((1, 2)) == (1, 2)
True
"""
import builtins

from ..second_order import inner_value

__all__ = ["tuple", "list", "dict", "isinstance", "type", "SequenceBox", "DictBox"]

tuple = builtins.tuple
list = builtins.list
dict = builtins.dict


def isinstance(x, classinfo):
    """Python's ``isinstance`` of the value `x` stands for."""
    return builtins.isinstance(inner_value(x), classinfo)


def type(x):
    """Python's ``type`` of the value `x` stands for."""
    return builtins.type(inner_value(x))


#: autograd's boxes of containers: tapegrad never boxes a container (it traces their items),
#: so no value is ever one of these; they exist for ``isinstance`` tests in ported code
SequenceBox = builtins.type("SequenceBox", (), {})
DictBox = builtins.type("DictBox", (), {})
