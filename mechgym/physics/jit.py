"""The engine's two ways of compiling a function, ``kernel`` and ``allocating``, and ``zero_arrays``.

``@kernel`` (or ``@kernel(inline="always")``) compiles without numba's runtime (NRT): the function cannot
allocate arrays, and it does no reference counting. With the runtime, every call of a compiled function
that is not inlined increments and decrements, with an atomic instruction, the reference count of every
array it receives, and an argument that is a named tuple of arrays counts for all its members: on the
double pendulum, 77 % of the step's time went to those two instructions. The caller owns every array for
the whole call, so a kernel has nothing to count. numba refuses to compile a kernel that allocates or returns
a new array.

``@allocating`` is numba's default (``njit`` with the runtime) for the few functions that allocate (the
simulator's conversions, the block solve of the trap variants). It is set explicitly because numba's CPU
target otherwise inherits the ``nrt`` flag from the function that first calls it
(``CPUTargetOptions.finalize``: ``inherit_if_not_set("nrt")``), so an allocating helper first reached
through a kernel would compile without the runtime and fail.

A kernel must not receive a new array from an allocating function (nothing would free it): allocating
functions return scalars or fill their arguments. Scratch arrays are allocated in Python, once, by their
named tuple's constructor (``step.StepScratch.empty``).
"""

from __future__ import annotations

from numba import literal_unroll, njit


def kernel(function=None, **options):
    """``njit(cache=True)`` without numba's runtime: no allocation, no reference counting (module
    docstring). ``options`` are njit's (``inline="always"``)."""
    decorate = njit(cache=True, _nrt=False, **options)
    return decorate if function is None else decorate(function)


def allocating(function=None, **options):
    """``njit(cache=True)`` with numba's runtime, for the functions that allocate (module docstring)."""
    decorate = njit(cache=True, _nrt=True, **options)
    return decorate if function is None else decorate(function)


@kernel
def zero_arrays(arrays):
    """Set every array of the tuple (or named tuple) ``arrays`` to zero (False for booleans)."""
    for array in literal_unroll(arrays):
        array.fill(0)
