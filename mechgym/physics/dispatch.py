"""Calling a compiled kernel again without the numba dispatcher's per-call typing (``Direct``), and with the
arguments that stay the same objects packed into one array (``Packed``).

Each call of a numba dispatcher types every argument to choose the compiled overload. For the engine's
kernel (``step.run``) that is about 250 arrays in named tuples, typed one by one in Python (numba's C
fingerprint does not cover named tuples): tens of µs per ``sim.step(1)``, more than the step itself.
``Direct`` keeps the overload chosen by the last call and calls its compiled entry point (the C wrapper that
the dispatcher itself calls, so the results are bit-identical) as long as every argument is either the very
object of that call or a new object of the same numba type; otherwise it goes through the dispatcher (which
compiles or loads the cache as usual) and keeps that call's overload instead. The compiled entry point still
unboxes every array it is given (about 30 ns each); the simulator passes the ones that never change as one
``Packed`` array (``step.run``), which compiled code reads back whole (``unpack``) or as ``lazy.Lazy`` views of its
named tuples (``lazy.unpack_lazy``).

Identity stands for the type: an argument that is the same object as in the last call is taken to have the
same numba type. That holds for the arrays a simulator owns and updates in place (named tuples cannot be
rebound; an array's dtype, shape, layout and writeability must not be changed in place between calls).
"""

from __future__ import annotations

from itertools import compress
from operator import is_not
from typing import Any

import numpy as np
from numba import config, typeof
from numba.extending import intrinsic

from .jit import from_python
from .lazy import as_it_is, read_value, require_c_arrays

_INT64 = range(-(2**63), 2**63)


def _same_type(arg, last, kind) -> bool:
    """Whether ``arg`` has the numba type ``kind`` of ``last``: Python floats are float64, Python ints in int64's
    range int64, and NumPy arrays of the same dtype, dimensions, layout, writeability and alignment the same array
    type (numba's typeof, which takes about 6 µs an array), found without typing them; other objects are typed."""
    if type(arg) is float and type(last) is float:
        return True
    if type(arg) is int and type(last) is int:
        return arg in _INT64 and last in _INT64
    if type(arg) is np.ndarray and type(last) is np.ndarray:
        flags, last_flags = arg.flags, last.flags
        return (arg.dtype == last.dtype and arg.ndim == last.ndim and _layout(flags) == _layout(last_flags)
                and flags.writeable == last_flags.writeable and flags.aligned == last_flags.aligned)
    return typeof(arg) == kind


def _layout(flags) -> str:
    """numba's layout of an array with these flags: "C" if C-contiguous (a single row is F-contiguous too), else "F"
    if F-contiguous, else "A"."""
    return "C" if flags.c_contiguous else "F" if flags.f_contiguous else "A"


class Direct:
    """``Direct(dispatcher)(*args)``: ``dispatcher(*args)``, skipping the per-call typing where it can (see
    the module docstring). Positional arguments only."""

    def __init__(self, dispatcher) -> None:
        self._dispatcher = from_python(dispatcher)
        # (the last call's arguments, their types, the entry point compiled for them or None): one attribute, read
        # once per call, so that threads calling one Direct with arguments of different types each check and call
        # a consistent triple
        self._last: tuple[tuple[Any, ...], tuple[Any, ...], Any] = ((), (), None)

    def __call__(self, *args):
        last, types, entry = self._last
        if entry is not None and len(args) == len(last):
            # only the arguments that are not the last call's objects are typed (found by a C-level loop)
            for i in compress(range(len(args)), map(is_not, args, last)):
                if not _same_type(args[i], last[i], types[i]):
                    break
            else:
                self._last = (args, types, entry)
                return entry(*args)
        result = self._dispatcher(*args)
        if not hasattr(self._dispatcher, "overloads"):  # NUMBA_DISABLE_JIT: a plain Python function
            return result
        types = tuple(self._dispatcher.typeof_pyval(arg) for arg in args)
        compiled = self._dispatcher.overloads.get(types)
        self._last = (args, types, None if compiled is None else compiled.entry_point)
        return result


class Packed:
    """Arguments that a simulator passes as the very same objects at every call of a compiled function, packed into
    one int64 array, ``block``, of their arrays' data addresses and shapes and their scalars' bits, which the
    compiled function turns back into the arrays and named tuples with ``unpack(block, kind)``. numba unboxes each
    array argument of a call from Python (about 30 ns an array: 7 µs of the engine's ~250); the block is one array.

    The objects are kept alive by the ``Packed`` and must be updated in place only: the block holds their
    addresses, shapes and scalar values as they were when it was made. Arrays must be C-contiguous. Under
    ``NUMBA_DISABLE_JIT`` the block is the tuple of objects itself, which ``unpack`` returns."""

    def __init__(self, *objects) -> None:
        self.objects = objects
        self.kind = typeof(objects)
        self.block = objects if config.DISABLE_JIT else np.array(_packed(objects, []), dtype=np.int64)
        self.alone = stack([self])  # the block as a stack of one (``step.run``'s argument for this one)

    def __reduce__(self):
        # a copy (copy.deepcopy, pickle) packs the copied objects anew: the block holds addresses
        return Packed, self.objects

    def is_current(self) -> bool:
        """Whether the block still describes the objects (their arrays' addresses and shapes, their scalars)."""
        return config.DISABLE_JIT or np.array_equal(self.block, _packed(self.objects, []))


def stack(packs: list[Packed]):
    """The blocks of ``packs`` (of one ``kind``) one per row, as ``step.run`` takes them: an (S, K) int64 array
    (under ``NUMBA_DISABLE_JIT`` the list of the blocks, each the objects themselves)."""
    blocks = [pack.block for pack in packs]
    return blocks if config.DISABLE_JIT else np.array(blocks, dtype=np.int64)  # (np.stack: 2.5-4x the time)


def _packed(value, out: list[int]) -> list[int]:
    """Append ``value``'s entries of a block to ``out`` in ``unpack``'s order; returns ``out``."""
    if isinstance(value, np.ndarray):
        if not value.flags.c_contiguous:
            raise ValueError(f"a packed array must be C-contiguous (shape {value.shape}, strides {value.strides})")
        out.append(value.ctypes.data)
        out.extend(value.shape)
    elif isinstance(value, tuple):
        for item in value:
            _packed(item, out)
    elif isinstance(value, (bool, np.bool_)):
        out.append(int(value))
    elif isinstance(value, (float, np.floating)):
        out.append(int(np.float64(value).view(np.int64)))
    elif isinstance(value, (int, np.integer)):
        out.append(int(value))
    else:
        raise TypeError(f"cannot pack a {type(value).__name__}")
    return out


@intrinsic
def _unpack(typingctx, block, kind):
    """``unpack(block, kind)`` in compiled code: the value of type ``kind`` (a tuple of arrays, named tuples and
    scalars) that ``_packed`` wrote into the int64 array ``block`` (``lazy.read_value``)."""
    target = kind.instance_type

    def codegen(context, builder, signature, args):
        return read_value(context, builder, target, context.make_array(signature.args[0])(context, builder,
                                                                                           args[0]).data)

    require_c_arrays(target)
    return target(block, kind), codegen


# The objects of ``Packed(...).block`` (``kind``: its ``Packed.kind``). (Called directly, not through an overload:
# the overload's own function would return the whole tuple, which LLVM takes tens of seconds to compile.)
unpack = as_it_is if config.DISABLE_JIT else _unpack
