"""Calling a compiled kernel again without the numba dispatcher's per-call typing.

Each call of a numba dispatcher types every argument to choose the compiled overload. For the engine's
kernel (``step.run``) that is about 250 arrays in named tuples, typed one by one in Python (numba's C
fingerprint does not cover named tuples): tens of µs per ``sim.step(1)``, more than the step itself.
``Direct`` keeps the overload chosen by the last call and calls its compiled entry point (the C wrapper that
the dispatcher itself calls, so the results are bit-identical) as long as every argument is either the very
object of that call or a new object of the same numba type; otherwise it goes through the dispatcher (which
compiles or loads the cache as usual) and keeps that call's overload instead.

Identity stands for the type: an argument that is the same object as in the last call is taken to have the
same numba type. That holds for the arrays a simulator owns and updates in place (named tuples cannot be
rebound; an array's dtype, shape, layout and writeability must not be changed in place between calls).
"""

from __future__ import annotations

from itertools import compress
from operator import is_not
from typing import Any

from numba import typeof

from .jit import from_python

_INT64 = range(-(2**63), 2**63)


def _same_type(arg, last, kind) -> bool:
    """Whether ``arg`` has the numba type ``kind`` of ``last``: Python floats are float64 and Python ints in
    int64's range int64 (numba's typeof), found without typing them; other objects are typed."""
    if type(arg) is float and type(last) is float:
        return True
    if type(arg) is int and type(last) is int:
        return arg in _INT64 and last in _INT64
    return typeof(arg) == kind


class Direct:
    """``Direct(dispatcher)(*args)``: ``dispatcher(*args)``, skipping the per-call typing where it can (see
    the module docstring). Positional arguments only."""

    def __init__(self, dispatcher) -> None:
        self._dispatcher = from_python(dispatcher)
        self._args: tuple[Any, ...] = ()
        self._types: tuple[Any, ...] = ()
        self._entry = None

    def __call__(self, *args):
        last = self._args
        if self._entry is not None and len(args) == len(last):
            # only the arguments that are not the last call's objects are typed (found by a C-level loop)
            for i in compress(range(len(args)), map(is_not, args, last)):
                if not _same_type(args[i], last[i], self._types[i]):
                    break
            else:
                self._args = args
                return self._entry(*args)
        result = self._dispatcher(*args)
        if not hasattr(self._dispatcher, "overloads"):  # NUMBA_DISABLE_JIT: a plain Python function
            return result
        types = tuple(self._dispatcher.typeof_pyval(arg) for arg in args)
        compiled = self._dispatcher.overloads.get(types)
        self._args, self._types = args, types
        self._entry = None if compiled is None else compiled.entry_point
        return result
