"""physics.dispatch: ``Direct``, the compiled kernel called without the dispatcher's typing, gives exactly what the
dispatcher gives and falls back to the dispatcher whenever an argument's type may have changed; ``Packed`` objects
are unpacked in compiled code as the very arrays and values packed."""

from __future__ import annotations

import copy
from typing import NamedTuple

import numpy as np
import pytest
from numba import njit

import mechgym
from mechgym.physics.dispatch import Direct, Packed, unpack
from mechgym.physics.step import run

SCENES = {
    "contact": '<mujoco><worldbody><geom type="plane" size="1 1 0.1"/>' + "".join(
        f'<body name="b{k}" pos="0 0 {0.05 + 0.1 * k:g}"><freejoint/>'
        f'<geom type="box" size="0.05 0.05 0.05" mass="1"/></body>' for k in range(3)) + "</worldbody></mujoco>",
    "jointed": '<mujoco><option><flag contact="disable"/></option><worldbody><body name="b0">'
               '<joint type="hinge" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.04" mass="1"/>'
               '<body pos="0 0 -0.5"><joint type="hinge" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0 0 -0.4" '
               'size="0.03" mass="0.6"/></body></body></worldbody><keyframe><key qpos="1.6 -0.8"/></keyframe>'
               '</mujoco>',
}


@pytest.mark.parametrize("scene", sorted(SCENES))
def test_direct_steps_are_bit_identical_to_the_dispatchers(scene):
    direct, plain = (mechgym.load(SCENES[scene], backend="mechgym", dt=1e-3) for _ in range(2))
    plain._run = run  # the numba dispatcher itself
    assert isinstance(direct._run, Direct)
    for sim in (direct, plain):
        # force windows: a new Windows object per call while they are open, the shared empty one after
        sim.apply_force("b2" if scene == "contact" else "b0", (0.5, 0.0, 0.2), (0.0, 0.01, 0.0), start=0.01,
                        stop=0.05)
        for n in (1, 1, 3, *([1] * 60), 40):
            sim.step(n)
    assert direct.step_count == plain.step_count == 105
    for mine, theirs in zip((*direct._state, *direct._contacts), (*plain._state, *plain._contacts), strict=True):
        np.testing.assert_array_equal(mine, theirs)
    assert [e.time for e in direct.events] == [e.time for e in plain.events]


def test_direct_falls_back_to_the_dispatcher_when_a_type_changes():
    @njit
    def scaled(values, factor, count):  # not cached: compiled by this test, as on a cold cache
        total = 0.0
        for i in range(count):
            total += factor * values[i]
        return total

    call = Direct(scaled)
    values = np.arange(4.0)
    assert call(values, 2.0, 3) == 6.0 and len(scaled.overloads) == 1
    assert call(values, 0.5, 4) == 3.0  # same objects or same types: the kept entry point
    assert call(np.arange(4.0), 1.0, 2) == 1.0
    assert call(np.arange(4), 1.0, 4) == 6.0 and len(scaled.overloads) == 2  # int64 array: a new overload
    assert call(values[::2], 1.0, 2) == 2.0 and len(scaled.overloads) == 3  # non-contiguous layout
    assert call(values, 1, 4) == 6.0 and len(scaled.overloads) == 4  # an int factor
    assert call(values, 1.0, np.int32(4)) == 6.0 and len(scaled.overloads) == 5  # an int32 count
    frozen = np.arange(4.0)
    frozen.setflags(write=False)
    assert call(frozen, 1.0, 4) == 6.0 and len(scaled.overloads) == 6  # a read-only array
    assert call(np.arange(6.0).reshape(2, 3)[0], 1.0, 3) == 3.0 and len(scaled.overloads) == 6  # writable again
    assert call(np.ones(9), 1.0, 9) == 9.0 and len(scaled.overloads) == 6  # another shape: the same type


def test_direct_calls_the_entry_point_it_checked_when_another_call_overtakes_it(monkeypatch):
    """Threads share a ``Direct`` (the simulators' ``step_many``): a call of other types that lands between a call's
    check of its arguments and its call of the kept entry point must not hand it that call's entry point."""
    from mechgym.physics import dispatch

    @njit
    def total(values, count):  # not cached: compiled by this test
        result = 0.0
        for i in range(count):
            result += values[i]
        return result

    call = Direct(total)
    assert call(np.arange(4.0), 3) == 3.0
    check, overtaken = dispatch._same_type, []

    def overtaking_check(arg, last, kind):  # another thread's call of int64 arrays, in the middle of this check
        if not overtaken:
            overtaken.append(None)
            overtaken[0] = call(np.arange(10, 14), 4)
        return check(arg, last, kind)

    monkeypatch.setattr(dispatch, "_same_type", overtaking_check)
    assert call(np.array([0.25, 0.5, 8.0]), 2) == 0.75
    assert overtaken == [46.0] and len(total.overloads) == 2


def test_direct_takes_a_single_row_for_a_c_contiguous_matrix():
    """A (1, k) array is C- and F-contiguous: numba types it as C, like any other C-contiguous matrix, and ``Direct``
    keeps the entry point (a vector env's groups of one and of several episodes); an F-ordered matrix is another
    type."""
    @njit
    def corner(rows):
        return rows[0, -1]

    call = Direct(corner)
    assert call(np.arange(12.0).reshape(4, 3)) == 2.0
    dispatcher, call._dispatcher = call._dispatcher, None  # a fall back to it would fail
    assert call(np.arange(3.0).reshape(1, 3)) == 2.0
    call._dispatcher = dispatcher
    assert call(np.asfortranarray(np.arange(12.0).reshape(4, 3))) == 2.0 and len(corner.overloads) == 2


class _Inner(NamedTuple):
    matrix: np.ndarray
    flag: bool
    count: int


class _Outer(NamedTuple):
    values: np.ndarray
    inner: _Inner
    scale: float
    index: np.ndarray


@njit
def _through_block(block, kind):
    """Read and write every packed object through the unpacked ones."""
    outer, extra = unpack(block, kind)
    total = outer.scale * (outer.values.sum() + outer.inner.matrix.sum() + outer.inner.count)
    if outer.inner.flag:
        total += 0.5
    for i in range(outer.index.size):
        outer.index[i] += 1
    extra[1, 2, 3] = total
    return total, outer.inner.matrix.shape[0], outer.inner.matrix.shape[1], extra.shape[2], outer.inner.matrix[2, 1]


def test_packed_objects_are_the_same_arrays_and_values_when_unpacked():
    rng = np.random.default_rng(3)
    outer = _Outer(rng.normal(size=5), _Inner(rng.normal(size=(3, 7)), True, 4), 0.25, np.arange(4, dtype=np.int32))
    extra = np.zeros((2, 3, 4))
    packed = Packed(outer, extra)
    total, rows, columns, depth, entry = _through_block(packed.block, packed.kind)
    assert total == 0.25 * (outer.values.sum() + outer.inner.matrix.sum() + 4) + 0.5
    assert (rows, columns, depth, entry) == (3, 7, 4, outer.inner.matrix[2, 1])
    assert extra[1, 2, 3] == total and outer.index.tolist() == [1, 2, 3, 4]  # written in place
    assert packed.is_current()
    outer.values[:] = 1.0  # in place: still current
    assert packed.is_current()
    assert not Packed(outer, np.zeros((2, 3, 5))).block.tolist() == packed.block.tolist()


def test_packing_a_non_contiguous_array_is_refused():
    with pytest.raises(ValueError, match="C-contiguous"):
        Packed(np.zeros((4, 4))[:, 1])


@pytest.mark.parametrize("scene", [*sorted(SCENES), "gripper"])
def test_a_simulators_packed_arguments_stay_its_arrays(scene):
    sim = mechgym.load(SCENES.get(scene, scene), backend="mechgym", dt=1e-3)
    state = sim.get_state()
    sim.ctrl = np.full(sim.model.nu, 0.01)
    named = [sim.model.body(b).name for b in range(1, sim.model.nbody) if sim.model.body(b).name]
    sim.apply_force(named[-1], (0.1, 0.0, 0.0), stop=0.005)
    sim.step(20)
    sim.set_state(state)
    sim.reset()
    sim.step(5)
    assert sim._packed.is_current()


def test_a_copied_simulator_steps_its_own_arrays():
    """The block holds addresses: a deep copy packs the copied arrays anew."""
    sim = mechgym.load(SCENES["contact"], backend="mechgym", dt=1e-3)
    sim.step(10)
    twin = copy.deepcopy(sim)
    assert twin._packed.is_current() and any(item is twin._state for item in twin._packed.objects)
    before = sim._state.com.copy()
    twin.step(40)
    np.testing.assert_array_equal(sim._state.com, before)
    sim.step(40)
    for mine, theirs in zip(sim._state, twin._state, strict=True):
        np.testing.assert_array_equal(mine, theirs)
