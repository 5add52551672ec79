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

Kernels release the GIL (``nogil``) while they run: simulators in different Python threads step at once
(the vector env steps its worlds so, one thread per core).

Both are typed by their arguments' types only (``_typed_by_type``): numba would otherwise compile a separate
copy of a function, with everything it calls, for each literal constant a compiled caller passes (a flag
``True`` or ``False``, an index ``0`` or ``3``), which was a fifth of the engine's functions compiled twice
or more. The constants still fold where LLVM inlines the call; a large function that is not inlined and
whose flags prune much of it keeps its copies (``kernel(literal_arguments=True)``).
"""

from __future__ import annotations

from numba import literal_unroll, njit, types


def kernel(function=None, literal_arguments=False, **options):
    """``njit(cache=True)`` without numba's runtime: no allocation, no reference counting (module
    docstring). ``options`` are njit's (``inline="always"``). ``literal_arguments``: keep numba's copy per
    literal constant passed (module docstring), for a function whose constant flags pay for their copy."""
    return _compiler(function, njit(cache=True, _nrt=False, nogil=True, **options), literal_arguments)


def allocating(function=None, **options):
    """``njit(cache=True)`` with numba's runtime, for the functions that allocate (module docstring)."""
    return _compiler(function, njit(cache=True, _nrt=True, **options), False)


def _compiler(function, decorate, literal_arguments):
    """``decorate`` (an njit decorator), its dispatchers typed by type (``_typed_by_type``) unless
    ``literal_arguments``; applied to ``function`` if given."""
    def compile_function(function):
        dispatcher = decorate(function)
        return dispatcher if literal_arguments else _typed_by_type(dispatcher)
    return compile_function if function is None else compile_function(function)


def _typed_by_type(dispatcher):
    """``dispatcher``, whose calls from compiled code resolve its arguments' literal types (``Literal[int](0)``)
    to their plain types (``int64``) before numba picks or compiles an overload (module docstring). Under
    ``NUMBA_DISABLE_JIT=1`` (numba's debugging mode) njit returns the Python function itself: kept as it is."""
    if not hasattr(dispatcher, "get_call_template"):
        return dispatcher
    resolve = dispatcher.get_call_template

    def get_call_template(args, kws):
        return resolve(tuple(types.unliteral(a) for a in args), {k: types.unliteral(v) for k, v in kws.items()})

    dispatcher.get_call_template = get_call_template
    return dispatcher


@kernel
def zero_arrays(arrays):
    """Set every array of the tuple (or named tuple) ``arrays`` to zero (False for booleans)."""
    for array in literal_unroll(arrays):
        array.fill(0)
