"""The bundled slider-crank (seed 002) with the slider's walls removed, through ``mechgym.load(...,
backend="mechgym")``: a planar chain of three hinges driven only by its initial spin (crank at 150 rad/s).
It starts in MuJoCo's coordinates, RATTLE conserves its energy to O(h^2) with no drift and keeps every hinge
to round-off, and the crank angle unwraps past 2 pi as MuJoCo's does."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest

import mechgym
from mechgym.scene import load_spec

from .test_double_pendulum import largest_residual


def without_walls() -> mujoco.MjSpec:
    spec = load_spec("slider_crank")
    walls = [geom for geom in spec.geoms if geom.name.startswith("wall_")]
    assert len(walls) == 2
    for geom in walls:
        spec.delete(geom)
    return spec


def test_the_engine_starts_in_mujocos_coordinates_and_body_frames():
    ours, theirs = (mechgym.load(without_walls(), backend=backend) for backend in ("mechgym", "mujoco"))
    np.testing.assert_allclose(ours.qpos, theirs.qpos, rtol=0, atol=1e-15)
    np.testing.assert_allclose(ours.qvel, theirs.qvel, rtol=0, atol=1e-12)
    assert ours.energy() == pytest.approx(theirs.energy(), rel=1e-14)
    for name in ("crank", "rod", "slider"):
        mine, reference = ours.body(name), theirs.body(name)
        for field in ("pos", "quat", "linvel", "angvel"):
            np.testing.assert_allclose(getattr(mine, field), getattr(reference, field), rtol=0, atol=1e-13,
                                       err_msg=f"{name}.{field}")


def energy_errors(h, duration):
    """Relative energy errors sampled every 10 steps, the largest hinge row error and the final qpos."""
    sim = mechgym.load(without_walls(), backend="mechgym", dt=h)
    initial = sim.energy()
    errors, residual = [], 0.0
    for _ in range(round(duration / h) // 10):
        sim.step(10)
        errors.append(abs(sim.energy() - initial) / initial)
        residual = max(residual, largest_residual(sim))
    return np.array(errors), residual, sim.qpos


def test_energy_is_conserved_to_second_order_and_the_hinges_hold():
    duration = 0.1  # s: 2.4 crank turns
    coarse, _, _ = energy_errors(2e-4, duration)
    fine, residual, qpos = energy_errors(1e-4, duration)
    assert residual <= 1e-10
    assert np.max(fine) <= 2e-4  # (omega h)^2 = 2.3e-4 at 150 rad/s
    assert 3.5 < np.max(coarse) / np.max(fine) < 4.5
    tenth = fine.size // 10
    assert np.max(fine[-tenth:]) <= 1.1 * np.max(fine[:tenth])  # no drift
    # The crank has turned more than once: its angle unwraps like MuJoCo's (RK4, close to exact here).
    spec = without_walls()
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_RK4
    reference = mechgym.load(spec, backend="mujoco", dt=1e-4)
    reference.step(round(duration / 1e-4))
    assert qpos[0] > 2 * math.pi and reference.qpos[0] > 2 * math.pi
    assert np.max(np.abs(qpos - reference.qpos)) < 2e-3  # (measured 1e-3: the O(h^2) error of the engine)
