"""autograd's ``numpy_jvps`` holds its rules for numpy; tapegrad's are in `tapegrad.rules`
(`tapegrad.extend.registered_rules()` lists them), so this module only keeps the name.

Examples
--------
>>> import tapegrad.autograd.numpy.numpy_jvps as m
>>> m.__name__
'tapegrad.autograd.numpy.numpy_jvps'
"""
