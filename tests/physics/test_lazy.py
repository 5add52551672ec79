"""physics.lazy: a packed block's named tuples passed by reference (``Lazy``) read, in compiled code, as the very
arrays and values packed, nested ones too; ``whole`` gives the named tuple itself; and a compiled call that is not
inlined receives a ``Lazy`` as one pointer, where a named tuple passes every array's pointers, shape and strides."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from mechgym.physics.dispatch import Packed
from mechgym.physics.jit import kernel, zero_arrays
from mechgym.physics.lazy import Lazy, unpack_lazy, whole


class _Inner(NamedTuple):
    matrix: np.ndarray
    flag: bool
    count: int
    cube: np.ndarray


class _Pair(NamedTuple):
    first: np.ndarray
    second: np.ndarray


class _Outer(NamedTuple):
    values: np.ndarray
    inner: _Inner
    scale: float
    index: np.ndarray
    pair: _Pair


def _packed(seed: int = 3) -> tuple[_Outer, np.ndarray, Packed]:
    rng = np.random.default_rng(seed)
    outer = _Outer(rng.normal(size=5), _Inner(rng.normal(size=(3, 7)), True, 4, rng.normal(size=(2, 3, 4))), 0.25,
                   np.arange(4, dtype=np.int32), _Pair(rng.normal(size=3), np.ones((2, 2), dtype=np.bool_)))
    extra = np.zeros((2, 3, 4))
    return outer, extra, Packed(outer, extra)


@kernel
def _total(outer):
    """Read every member (a call that is not inlined: ``outer`` arrives as whatever its caller passed)."""
    inner = outer.inner
    total = outer.scale * (outer.values.sum() + inner.matrix.sum() + inner.count + inner.cube.sum())
    if inner.flag:
        total += 0.5
    return total


@njit
def _through_lazy(block, kind):
    """Read and write the packed objects through their ``Lazy`` views."""
    outer, extra = unpack_lazy(block, kind)
    total = _total(outer)
    for i in range(outer.index.size):
        outer.index[i] += 1
    extra[1, 2, 3] = total
    cube = outer.inner.cube
    return total, outer.inner.matrix.shape, cube.shape, cube[1, 2, 3], cube.strides, outer.inner.matrix[2, 1]


@njit
def _by_value(outer):
    return _total(outer)


def test_a_lazy_reads_the_packed_arrays_and_values():
    outer, extra, packed = _packed()
    total, matrix_shape, cube_shape, corner, strides, entry = _through_lazy(packed.block, packed.kind)
    expected = 0.25 * (outer.values.sum() + outer.inner.matrix.sum() + 4 + outer.inner.cube.sum()) + 0.5
    assert total == expected == _by_value(outer)  # (the same function on the named tuple itself)
    assert matrix_shape == (3, 7) and cube_shape == (2, 3, 4) and strides == outer.inner.cube.strides
    assert corner == outer.inner.cube[1, 2, 3] and entry == outer.inner.matrix[2, 1]
    assert extra[1, 2, 3] == total and outer.index.tolist() == [1, 2, 3, 4]  # written in place


@njit
def _whole_and_zeroed(block, kind):
    outer, extra = unpack_lazy(block, kind)
    inner = whole(outer.inner)
    read = (inner.matrix[0, 0], inner.flag, inner.count, inner.cube[1, 0, 2])
    zero_arrays(outer.pair)  # (through ``whole``: every array of the named tuple)
    return read, whole(extra)[0, 0, 0]


def test_whole_reads_every_member_and_zero_arrays_takes_a_lazy():
    outer, extra, packed = _packed(5)
    extra[0, 0, 0] = 7.0
    expected = (outer.inner.matrix[0, 0], True, 4, outer.inner.cube[1, 0, 2])
    assert _whole_and_zeroed(packed.block, packed.kind) == (expected, 7.0)  # (whole of an array: the array)
    assert not outer.pair.first.any() and not outer.pair.second.any()
    assert outer.values.all() and outer.inner.matrix.all()  # (only the pair was zeroed)


def _parameters(dispatcher, signature) -> int:
    """The parameters of the LLVM function that numba compiled ``dispatcher`` into for ``signature`` (each one
    named: ``%retptr``, ``%excinfo``, ``%arg...``)."""
    name = dispatcher.overloads[signature].fndesc.mangled_name
    (header,) = (line for line in dispatcher.inspect_llvm(signature).splitlines()
                 if line.startswith("define") and name in line)
    return header.count("%")


def test_a_call_passes_a_lazy_as_one_pointer():
    outer, _, packed = _packed()
    _through_lazy(packed.block, packed.kind)
    by_reference = next(s for s in _total.signatures if isinstance(s[0], Lazy))
    _by_value(outer)
    by_value = next(s for s in _total.signatures if not isinstance(s[0], Lazy))
    # numba's two leading parameters (the return slot and the exception info), then the arguments
    assert _parameters(_total, by_reference) == 3
    assert _parameters(_total, by_value) > 20
