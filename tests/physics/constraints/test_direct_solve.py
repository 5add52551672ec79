"""The direct solves of ``constraints``: SHAKE's quasi-Newton iteration and the velocity projection's LU solve
over all rows at once need a few iterations per step where Gauss-Seidel sweeps needed tens (counts asserted,
not times), and the rank-revealing LU behind them solves consistent systems with dependent rows."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numba import njit

import mechgym
from mechgym.physics import constraints as rattle
from mechgym.physics.step import drift, opening_kick

from .test_limits import SCENE as LIMIT_SCENE
from .test_slider_crank import without_walls

RNG = np.random.default_rng(7)
DOUBLE_PENDULUM = """<mujoco><option><flag contact="disable"/></option><worldbody>
  <body><joint type="hinge" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.04" mass="1"/>
    <body pos="0 0 -0.5"><joint type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.03" mass="0.6"/></body></body>
</worldbody><keyframe><key qpos="1.6 -0.8"/></keyframe></mujoco>"""


@njit(cache=True)
def _counts(bodies, env, linkage, state, h, out, wrench, impulse, work):
    """Step world 0 (no smooth forces: the closing kick is the opening one) for out.shape[0] steps and write
    per step SHAKE's iterations and the velocity projection's passes. Returns the steps completed."""
    rows, solver = linkage.rows, linkage.solver
    for k in range(out.shape[0]):
        rattle.begin_step(rows, bodies, state, 0, h, work)
        opening_kick(bodies, env, state, 0, 0.5 * h, wrench, impulse)
        rattle.predict_shake(rows, bodies, solver, state, 0, h, work)
        drift(bodies, state, 0, h)
        out[k, 0] = rattle.shake(rows, bodies, solver, state, 0, h, work)
        opening_kick(bodies, env, state, 0, 0.5 * h, wrench, impulse)
        out[k, 1] = rattle.project_velocity(rows, bodies, solver, state, 0, h, work)
        if out[k, 0] < 0 or out[k, 1] < 0:
            return k
    return out.shape[0]


def iteration_counts(scene, h, steps):
    """(steps, 2) SHAKE iterations and projection passes of each step of ``scene`` (MJCF or MjSpec)."""
    sim = mechgym.load(scene, backend="mechgym", dt=h)
    engine, state = sim.engine, sim._state
    bodies = state.com.shape[1]
    out = np.zeros((steps, 2), dtype=np.int64)
    done = _counts(engine.bodies, engine.env, engine.linkage, state, h, out, np.zeros((bodies, 6)),
                   np.zeros((bodies, 6)), rattle.Workspace.empty(bodies, engine.linkage.rows.kind.size))
    assert done == steps
    return out


def test_shake_converges_in_a_few_quasi_newton_iterations_and_the_projection_in_one_solve():
    # Each count includes the final evaluation that finds the tolerance met: a projection of equality rows
    # is one exact solve and one check (block Gauss-Seidel needed ~80 / ~130 sweeps on the slider-crank).
    for scene, h in ((without_walls(), 1e-4), (DOUBLE_PENDULUM, 1e-3)):
        counts = iteration_counts(scene, h, 2000)
        assert np.max(counts[:, 0]) <= 5
        assert np.max(counts[:, 1]) <= 2


def test_a_hinge_limit_is_met_by_the_active_set_in_a_few_iterations():
    # The rod of test_limits from 60 degrees above the horizontal: it reaches its limit after about 0.4 s.
    scene = LIMIT_SCENE.replace("</worldbody>", f'</worldbody><keyframe><key qpos="{-math.radians(60.0)!r}"/>'
                                                '</keyframe>')
    counts = iteration_counts(scene, 1e-3, 2000)
    assert np.max(counts[:, 0]) <= 5
    assert np.max(counts[:, 1]) <= 4


@njit(cache=True)
def _predicted_impulses(bodies, env, linkage, state, h, wrench, impulse, work, poison, forget, out):
    """One step of world 0 up to its velocity projection, then the next step's opening kick and ``predict_shake``
    (its impulses into ``out``). ``poison``: the projection's matrix and LU factors set to NaN before that;
    ``forget``: then ``forget_matrix``, as every stage that moves the poses after the projection calls it."""
    rows, solver = linkage.rows, linkage.solver
    rattle.begin_step(rows, bodies, state, 0, h, work)
    opening_kick(bodies, env, state, 0, 0.5 * h, wrench, impulse)
    rattle.predict_shake(rows, bodies, solver, state, 0, h, work)
    drift(bodies, state, 0, h)
    rattle.shake(rows, bodies, solver, state, 0, h, work)
    opening_kick(bodies, env, state, 0, 0.5 * h, wrench, impulse)
    rattle.project_velocity(rows, bodies, solver, state, 0, h, work)
    if poison:
        work.matrix[:, :] = np.nan
        work.factored[:, :] = np.nan
    if forget:
        rattle.forget_matrix(work)
    rattle.begin_step(rows, bodies, state, 0, h, work)
    opening_kick(bodies, env, state, 0, 0.5 * h, wrench, impulse)
    rattle.predict_shake(rows, bodies, solver, state, 0, h, work)
    out[:] = work.impulse_position


def test_shakes_first_iterate_takes_up_the_velocity_projections_matrix_of_the_same_poses():
    # The projection's K = G W G^T + c at q_{n+1} is the next prediction's matrix at q_n: taken up with its LU
    # factors (poisoned, the prediction is not finite) unless forgotten (assembled again: the same impulses).
    sim = mechgym.load(DOUBLE_PENDULUM, backend="mechgym", dt=1e-3)
    engine, bodies, count = sim.engine, sim._state.com.shape[1], sim.engine.linkage.rows.kind.size
    results = {}
    for poison, forget in ((False, False), (True, False), (True, True)):
        out = np.zeros(count)
        _predicted_impulses(engine.bodies, engine.env, engine.linkage, sim._state.copy(), 1e-3, np.zeros((bodies, 6)),
                            np.zeros((bodies, 6)), rattle.Workspace.empty(bodies, count), poison, forget, out)
        results[poison, forget] = out
    assert np.all(np.isfinite(results[False, False])) and np.any(results[False, False] != 0.0)
    assert not np.all(np.isfinite(results[True, False]))
    np.testing.assert_array_equal(results[True, True], results[False, False])


@pytest.mark.parametrize("scene", ["double pendulum", "hinge limit", "gripper"])
def test_one_call_of_many_steps_equals_one_call_per_step_bit_for_bit(scene):
    # Each call assembles the prediction's first matrix anew; within a call each step takes up the previous
    # step's projection (a hinge limit's one-sided rows joining it when they do not act; the gripper's dampers
    # and contacts): the same trajectory either way.
    source = {"double pendulum": DOUBLE_PENDULUM, "gripper": "gripper",
              "hinge limit": LIMIT_SCENE.replace("</worldbody>", f'</worldbody><keyframe><key qpos='
                                                 f'"{-math.radians(60.0)!r}"/></keyframe>')}[scene]
    whole, single = (mechgym.load(source, backend="mechgym", dt=2e-3) for _ in range(2))
    whole.step(300)
    for _ in range(300):
        single.step(1)
    assert whole._step_scratch.work.held[0] == rattle.HELD_PROJECTION
    for name in ("com", "quat", "vel", "momentum", "impulse_position", "impulse_velocity"):
        np.testing.assert_array_equal(getattr(whole._state, name), getattr(single._state, name), err_msg=name)
