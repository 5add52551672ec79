"""A point-like bob on a hinge, the most common pendulum there is: a sphere of radius r a metre below the
pivot, whose rotational inertia about its own centre (0.4 m r^2) is 1e-6 of m l^2 or less. RATTLE must
hold it at every step a user may choose, with the energy error of the compound pendulum at second order:
the conditioning of the rows (their angular part weighs l^2 / I against the linear part's 1 / m) must not
stop SHAKE or the projection."""

from __future__ import annotations

import math

import numpy as np
import pytest

import mechgym

GRAVITY = 9.81  # m/s^2
LENGTH = 1.0  # m
MASS = 1.0  # kg
DURATION = 2.0  # s: past the first bottom crossing, where the radial row's angular part changes sign


def bob(radius: float) -> str:
    return (f'<mujoco><option gravity="0 0 -{GRAVITY}"/><worldbody><body name="pendulum">'
            f'<joint name="hinge" type="hinge" axis="0 1 0"/><geom type="sphere" size="{radius}" '
            f'pos="0 0 -{LENGTH}" mass="{MASS}" contype="0" conaffinity="0"/></body></worldbody></mujoco>')


@pytest.mark.parametrize("radius", [1e-3, 1e-2])
@pytest.mark.parametrize("dt", [1e-4, 1e-3, 4e-3, 1e-2])
@pytest.mark.parametrize("theta0", [0.5, 2.0])
def test_a_point_like_bob_swings_at_every_step_with_a_second_order_energy_error(radius, dt, theta0):
    sim = mechgym.load(bob(radius), dt=dt)
    sim.reset(qpos=[theta0])
    initial = sim.energy()
    assert initial == pytest.approx(MASS * GRAVITY * LENGTH * (1.0 - math.cos(theta0)) - MASS * GRAVITY * LENGTH)
    # Compound pendulum about the pivot: omega0^2 = m g l / (m l^2 + 0.4 m r^2). Velocity Verlet's energy
    # error oscillates with amplitude of order (h omega0)^2 m g l and does not drift.
    omega0 = math.sqrt(MASS * GRAVITY * LENGTH / (MASS * LENGTH**2 + 0.4 * MASS * radius**2))
    bound = 2.0 * (dt * omega0) ** 2 * MASS * GRAVITY * LENGTH
    chunk = max(1, round(0.01 / dt))
    errors, pivot = [], []
    for _ in range(round(DURATION / (chunk * dt))):
        sim.step(chunk)
        errors.append(abs(sim.energy() - initial))
        pivot.append(np.linalg.norm(sim.body("pendulum").pos))
    assert max(errors) <= bound
    assert max(pivot) <= 1e-10  # the body frame's origin is the pivot
