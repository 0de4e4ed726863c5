"""The recorded program as a program: guards, Python source, rewriting passes, compiled gradients.

Nothing is imported here, so that the tracer can import `guards` without the rest.
"""
