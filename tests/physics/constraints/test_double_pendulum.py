"""A double pendulum of two capsules on hinges, through ``mechgym.load(..., backend="mechgym")``: RATTLE keeps
its energy bounded with no drift over 100 s at dt = 1 ms (about 20 s of test time: the engine takes ~0.2 ms
per step on this scene), keeps the hinges to round-off, and follows MuJoCo's RK4 trajectory with
a second-order error (MuJoCo solves the same ODE in generalised coordinates)."""

from __future__ import annotations

import numpy as np

import mechgym
from mechgym.physics import constraints as rattle

# No contacts, damping or armature, so both engines solve the same ODE.
SCENE = """<mujoco><option gravity="0 0 -9.81" integrator="RK4"><flag contact="disable"/></option><worldbody>
  <body name="upper"><joint name="shoulder" type="hinge" axis="0 1 0"/>
    <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.04" mass="1"/>
    <body name="lower" pos="0 0 -0.5"><joint name="elbow" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.03" mass="0.6"/></body></body>
</worldbody><keyframe><key qpos="1.6 -0.8"/></keyframe></mujoco>"""  # qpos: a large swing, from rest


def largest_residual(sim) -> float:
    """Largest |g| over the engine's constraint rows (m or rad)."""
    rows, grad = sim.engine.linkage.rows, np.zeros(12)
    return max(abs(rattle.evaluate_row(rows, r, sim._state, 0, grad)) for r in range(rows.kind.size))


def test_energy_stays_bounded_without_drift():
    sim = mechgym.load(SCENE, backend="mechgym", dt=1e-3)
    e0 = mechgym.load(SCENE, backend="mujoco").energy()  # at rest: potential only
    assert sim.energy() == e0
    scale = 1.6 * 9.81 * 0.9  # J: the energy scale m g l
    error, residual = [], 0.0
    for _ in range(1000):  # 100 s, sampled every 0.1 s
        sim.step(100)
        error.append(abs(sim.energy() - e0) / scale)
        residual = max(residual, largest_residual(sim))
    error = np.array(error)
    assert np.max(error) <= 1e-3
    # No drift: the last ten seconds stay within the error band of the first ten.
    assert np.max(error[-100:]) <= 2.0 * np.max(error[:100]) + 1e-9
    assert residual <= 1e-10


def test_trajectory_follows_mujoco_rk4_with_second_order_error():
    duration = 1.0  # s, before the onset of chaos
    reference = mechgym.load(SCENE, backend="mujoco", dt=1e-4)
    reference.step(round(duration / 1e-4))
    errors = []
    for h in (2e-3, 1e-3):
        sim = mechgym.load(SCENE, backend="mechgym", dt=h)
        sim.step(round(duration / h))
        errors.append(np.max(np.abs(sim.qpos - reference.qpos)))
    assert errors[1] < 1e-3
    assert 3.5 < errors[0] / errors[1] < 4.5
