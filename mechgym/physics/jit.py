"""The engine's two ways of compiling a function, ``kernel`` and ``allocating``, and ``zero_arrays``.

``@kernel`` (or ``@kernel(inline=True)``) compiles without numba's runtime (NRT): the function cannot
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

Kernels are compiled without the two wrappers numba adds to every compiled function so that Python (the
CPython wrapper: unboxing each argument, array by array for a named tuple of arrays) and C (the cfunc
wrapper) can call it. Compiled callers do not use them, but each was code to generate, optimize and link
into every caller: without them the engine's first compile takes 40 % less time (93 s instead of 156 s for
the three environments on 2 cores). A call from Python goes to the kernel's twin (``from_python``): the same
function compiled, with its wrapper, only for the kernels Python calls (a few entry points, and what tests
call), with its own cache files; what it calls is the wrapperless kernels.

A kernel's code is only ever linked into its callers' code, so numba does not optimize it and compile it to
machine code on its own. numba finalizes each compiled function's code as a whole: its callees' code linked in,
LLVM's module passes over all of it, then machine code for all of it; the engine's code went through LLVM again at
every level of its call tree, for kernels whose own machine code nothing runs (compiled callers run the copy in
their own code, Python the twin). A kernel's code goes into a ``_LinkedLibrary`` (numba's ``pipeline_class``),
whose finalizing only links its callees' code in (each function gets LLVM's function passes once, when its code is
added, at level 1: the clean-up that shrinks numba's code, the full level-3 pipeline running on the twin's module);
LLVM optimizes and compiles the engine's code once for each twin, with all it calls. Kernels are
therefore not cached on their own (they have no machine code to cache): their twins' cache files hold their
code, and a warm start loads only twins, as it did before (numba loads a cached function without its callees).
Since a twin's machine code holds every kernel it calls, from any module of the engine, its cache files (and an
allocating function's) are stamped with the source of the whole engine (``engine_source_stamp``), beside numba's stamp
of the function's own file: an edit of any engine module compiles them anew.

``kernel(inline=True)`` marks a kernel's code ``alwaysinline``: LLVM inlines it into every compiled caller when it
optimizes the twin's module (the step's stages into ``advance``). A call that is not inlined passes every array of
a named tuple as its pointers, size, shape and strides, most of them on the stack: a helper handed the constraint
rows and the state receives about 150 numbers, one handed the contact set and the workspaces several thousand,
whatever few arrays it reads. The engine's entry point therefore hands its named tuples down as ``lazy.Lazy``
views of its packed block (one pointer each, its members read where they are used), and the kernels run with
those; a kernel called from Python or from a test with named tuples themselves is compiled for them too. The kernels
that run on every step in tight loops (a row's evaluation and rate, a contact sweep and its parts, the step's
stages) are inline, those of the rare paths (a reset's resting reactions, a new contact pair, the direct solves) are
not, where inlining would only lengthen the first compile. numba's own inlining (``njit(inline="always")``)
deep-copies the callee's IR into each caller, then types and lowers each copy again: 38 s of the first compile on 2
cores went to those copies, most of them of the step's stages. (An inlined kernel is still a kernel: it may return
an array only if it is one of its arguments.)

Both are typed by their arguments' types only (``_typed_by_type``): numba would otherwise compile a separate
copy of a function, with everything it calls, for each literal constant a compiled caller passes (a flag
``True`` or ``False``, an index ``0`` or ``3``), which was a fifth of the engine's functions compiled twice
or more. The constants still fold where LLVM inlines the call; a large function that is not inlined and
whose flags prune much of it keeps its copies (``kernel(literal_arguments=True)``).
"""

from __future__ import annotations

import functools
import hashlib
import types as python_types
from pathlib import Path

from numba import literal_unroll, njit, types
from numba.core.codegen import JITCodeLibrary
from numba.core.compiler import Compiler
from numba.core.registry import CPUDispatcher

from .lazy import whole

# The twin's cache files are told apart from the kernel's by this suffix of its qualified name.
_TWIN_SUFFIX = "__from_python"


def kernel(function=None, literal_arguments=False, inline=False, **options):
    """``njit(cache=True)`` without numba's runtime: no allocation, no reference counting, and without the
    wrappers for calls from Python, which go to a twin (module docstring). ``inline``: LLVM inlines the kernel
    into every compiled caller (module docstring). ``literal_arguments``: keep numba's copy per literal constant
    passed (module docstring), for a function whose constant flags pay for their copy. ``options`` are njit's."""
    options = {"cache": True, "_nrt": False, "nogil": True, **options}
    pipeline = _InlinedInto if inline else _LinkedOnly

    def wrapperless(function):
        dispatcher = njit(no_cpython_wrapper=True, no_cfunc_wrapper=True, pipeline_class=pipeline,
                          **{**options, "cache": False})(function)
        if isinstance(dispatcher, CPUDispatcher):  # not under NUMBA_DISABLE_JIT
            dispatcher.__class__ = _Kernel
            dispatcher.twin_options = options
        return dispatcher

    return _compiler(function, wrapperless, literal_arguments)


class _Kernel(CPUDispatcher):
    """The dispatcher of a kernel: what compiled callers type and call has no wrapper for Python; a call from
    Python goes to ``from_python(self)``."""

    def __call__(self, *args, **kws):
        return from_python(self)(*args, **kws)


def from_python(dispatcher):
    """The dispatcher that Python calls of ``dispatcher`` should go to: for a kernel its twin (module
    docstring), made on first use; any other dispatcher (or plain function) itself."""
    if not isinstance(dispatcher, _Kernel):
        return dispatcher
    twin = dispatcher.__dict__.get("twin")
    if twin is None:
        function = dispatcher.py_func
        copy = python_types.FunctionType(function.__code__, function.__globals__, function.__name__,
                                         function.__defaults__, function.__closure__)
        copy.__qualname__, copy.__module__ = function.__qualname__ + _TWIN_SUFFIX, function.__module__
        copy.__kwdefaults__, copy.__doc__ = function.__kwdefaults__, function.__doc__
        twin = dispatcher.twin = _stamped(njit(**dispatcher.twin_options)(copy))
    return twin


@functools.cache
def engine_source_stamp(root: Path = Path(__file__).parent) -> str:
    """sha256 of the engine's source: every ``.py`` file under ``root`` (``mechgym/physics``), by relative path
    and content; computed once per process."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _stamped(dispatcher):
    """``dispatcher`` (njit with ``cache=True``), its cache files valid for this engine source only. numba
    stamps a cached function with its own source file, but a twin's (or an allocating function's) machine code
    holds the code of every kernel it calls, from any module of the engine, which that stamp does not see change.
    The stamp of the whole engine (``engine_source_stamp``) goes beside numba's. Under NUMBA_DISABLE_JIT, or where
    numba keeps no cache file, the dispatcher is returned as it is."""
    cache_file = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    if cache_file is not None:
        cache_file._source_stamp = (cache_file._source_stamp, engine_source_stamp())
    return dispatcher


class _LinkedOnly(Compiler):
    """numba's compiler, putting the function's code in a ``_LinkedLibrary`` (module docstring)."""

    inline = False

    def compile_extra(self, func):
        if self.state.library is None:
            self.state.library = _LinkedLibrary(self.state.targetctx.codegen(), func.__qualname__, self.inline)
        return super().compile_extra(func)


class _InlinedInto(_LinkedOnly):
    """``_LinkedOnly`` for a kernel that LLVM inlines into every caller."""

    inline = True


class _LinkedLibrary(JITCodeLibrary):
    """The code of a kernel, only ever linked into its callers' code: finalizing it links its callees' code in
    and does no more (no module passes, no machine code); it has no function to call, and no environment to
    set (module docstring). ``inline``: its functions are marked ``alwaysinline`` for LLVM."""

    def __init__(self, codegen, name: str, inline: bool) -> None:
        super().__init__(codegen, name)
        self._inline = inline

    def finalize(self):
        self._raise_if_finalized()
        if self._inline:
            for function in self._final_module.functions:
                if not function.is_declaration:
                    function.add_function_attribute("alwaysinline")
        for library in dict.fromkeys(self._linking_libraries):
            self._reload_init.update(library._reload_init)
            self._final_module.link_in(library._get_module_for_linking(), preserve=True)
        self._finalized = True

    def get_pointer_to_function(self, name):
        return 0

    def _optimize_functions(self, ll_module):
        ll_module.data_layout = self._codegen._data_layout
        manager, builder = self._codegen._function_pass_manager(opt=1)
        for function in ll_module.functions:
            if not function.is_declaration:
                manager.run(function, builder)

    @property
    def codegen(self):
        return _WithoutEnvironments(self._codegen)


class _WithoutEnvironments:
    """A codegen whose ``set_env`` does nothing: a ``_LinkedLibrary``'s functions are not in the execution
    engine, so neither are their environments (nor are they read: the callers' code is compiled)."""

    def __init__(self, codegen) -> None:
        self._codegen = codegen

    def __getattr__(self, name):
        return getattr(self._codegen, name)

    def set_env(self, env_name, env) -> None:
        pass


def allocating(function=None, **options):
    """``njit(cache=True)`` with numba's runtime, for the functions that allocate (module docstring)."""
    return _compiler(function, lambda f: _stamped(njit(cache=True, _nrt=True, **options)(f)), False)


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
    """Set every array of the tuple (or named tuple, or ``lazy.Lazy``) ``arrays`` to zero (False for booleans)."""
    for array in literal_unroll(whole(arrays)):
        array.fill(0)
