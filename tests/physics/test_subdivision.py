"""A step whose solve fails is taken again in parts (``tolerances.MAX_SUBDIVISION``): the run goes on, near an
independent reference, and a state saved around such a step continues bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import mechgym

# A chain hanging from a ball joint: a 1.8 kg bob, then a 100 g link of rotational inertia 1.7e-5 kg m^2 on a
# second ball joint, then an 8.65 kg capsule on a hinge driven by a motor. Pushed sideways by 131 N from
# t = 0.101 s, the light link whips round (the hinge reaches about 120 rad/s at t = 0.124 s), and at dt = 1 ms
# SHAKE's equations have no solution near the prediction: |g| stalls at 5e-5 with dg/dlambda of condition 1e8
# (exact Newton included). Before subdivision the engine raised "the constraint projection did not converge".
CHAIN = """<mujoco><worldbody><body name="top" pos="0 0 0.9">
  <body name="heavy"><joint type="ball"/><geom type="sphere" size="0.0145" mass="1.817" pos="0 0 -0.112"/>
    <body name="light" pos="0 0 -0.09"><joint type="ball"/>
      <geom type="sphere" size="0.0204" mass="0.1" pos="0 0 -0.045"/>
      <body name="tip" pos="0 0 -0.277"><joint name="hinge" type="hinge" axis="1.45 0 -1.42"/>
        <geom type="capsule" size="0.0031 0.01" mass="8.65" pos="0 0 -0.139"/></body></body></body></body></worldbody>
  <actuator><motor joint="hinge" ctrlrange="-1 1"/></actuator></mujoco>"""
SCHEDULE = (0.125, -0.759, 0.268)  # N m, each held 50 ms
LONG_SCHEDULE = SCHEDULE + (0.07, 0.702, -0.611, -0.307, -0.691, 0.055, -0.701, 0.618, -0.225, -0.662, 0.911, -0.895,
                            0.639, -0.02, 0.713, -0.339, 0.878)


def whip(backend: str, dt: float, schedule=SCHEDULE):
    """The chain driven by ``schedule``: (its energy J at the end of each 50 ms, the hinge angle rad at the end,
    the simulator)."""
    sim = mechgym.load(CHAIN, backend=backend, dt=dt)
    sim.apply_force("heavy", [118.4, 57.4, -31.8], start=0.101, stop=0.8)
    energies = []
    for torque in schedule:
        sim.ctrl = [torque]
        sim.step(round(0.05 / dt))
        energies.append(sim.energy())
    return energies, sim.qpos[-1], sim


@pytest.mark.parametrize("dt", [1e-3, 2e-3])
def test_a_whipping_chain_is_taken_in_parts_where_its_step_fails_and_stays_near_the_reference(dt):
    """MuJoCo at 10 us is the reference (its own 1 ms step ends 0.78 J and 0.30 rad off it); the engine's
    largest steps stay within 0.15 J and 0.05 rad of it, one step taken in parts."""
    energy, angle, sim = whip("mechgym", dt)
    reference_energy, reference_angle, _ = whip("mujoco", 1e-5)
    assert sim.subdivided_steps >= 1
    assert abs(energy[-1] - reference_energy[-1]) < 0.15
    assert abs(angle - reference_angle) < 0.05


def test_a_state_saved_before_a_step_taken_in_parts_continues_bit_for_bit():
    sim = mechgym.load(CHAIN, backend="mechgym", dt=1e-3)
    sim.apply_force("heavy", [118.4, 57.4, -31.8], start=0.101, stop=0.8)
    for torque, steps in zip(SCHEDULE, (50, 50, 20), strict=True):
        sim.ctrl = [torque]
        sim.step(steps)
    saved = sim.get_state()
    sim.step(10)
    assert sim.subdivided_steps == 1  # the step from 0.124 s
    first = (sim.qpos, sim.qvel, sim.get_state().physics[0].impulse_velocity.copy())
    sim.set_state(saved)
    sim.step(10)
    again = (sim.qpos, sim.qvel, sim.get_state().physics[0].impulse_velocity.copy())
    for mine, theirs in zip(first, again, strict=True):
        np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize("dt", [1e-3, 2e-3, 5e-3])
def test_a_whipping_chain_gains_no_energy_from_spurious_shake_roots(dt):
    """Over 1 s of the schedule, the engine's energy stays within 12 J of MuJoCo's at 10 us (measured: 10.7 J at
    1 ms, 5.8 at 2 ms, 8.2 at 5 ms; MuJoCo's own 1 ms step 3.4 J). SHAKE's iteration at 125 us met the rows on
    spurious roots that raised the kinetic energy 90-fold (the light link spun round), and the 1 ms run, taking
    its failed steps in such parts, ended at 655 J; such a SHAKE is now rejected (``tolerances.SHAKE_HEATING``)."""
    reference, _, _ = whip("mujoco", 1e-5, LONG_SCHEDULE)
    mine, _, _ = whip("mechgym", dt, LONG_SCHEDULE)
    assert max(abs(a - b) for a, b in zip(mine, reference, strict=True)) < 12.0
