"""A bead in a slot rotating at a fixed rate, through ``mechgym.load(..., backend="mechgym")``: a turntable on
a vertical hinge spins at omega, a bead slides without friction in a radial slot (a slide joint on the
table). In the rotating frame r'' = omega^2 r (the Coriolis force is normal to the slot and taken by the
slide's rows; gravity is along the hinge, normal to the slot), so from rest in the slot r = r0 cosh(omega t),
and the engine converges to it at second order.

Fixed omega: the table's moment of inertia I = 1e6 kg m^2 dwarfs the bead's m r^2 <= 1e-3 x 0.4^2 kg m^2,
so angular momentum conservation lets omega drop by at most m r^2 / I = 1.6e-10 of itself (and r by about
omega t times that, 4e-10 m) -- far below the discretisation errors measured here (>= 1e-7 m)."""

from __future__ import annotations

import math

import numpy as np

import mechgym

OMEGA, R0, DURATION = 2.0, 0.1, 1.0  # rad/s, m, s: r grows to r0 cosh(2) = 0.376 m
SCENE = f"""<mujoco><option gravity="0 0 -9.81"><flag contact="disable"/></option><worldbody>
  <body name="table"><joint name="spin" type="hinge" axis="0 0 1"/>
    <inertial pos="0 0 0" mass="100" diaginertia="1e6 1e6 1e6"/>
    <body name="bead" pos="{R0} 0 0"><joint name="slot" type="slide" axis="1 0 0"/>
      <geom type="sphere" size="0.01" mass="1e-3"/></body></body>
</worldbody><keyframe><key qpos="0 0" qvel="{OMEGA} 0"/></keyframe></mujoco>"""


def radius_error(dt):
    sim = mechgym.load(SCENE, backend="mechgym", dt=dt)
    sim.step(round(DURATION / dt))
    assert abs(sim.qvel[0] - OMEGA) <= 1e-9 * OMEGA  # the table keeps its rate
    assert abs(sim.qpos[0] - OMEGA * DURATION) <= 1e-8
    exact = R0 * math.cosh(OMEGA * DURATION)
    np.testing.assert_allclose(np.linalg.norm(sim.body("bead").pos[:2]), R0 + sim.qpos[1], rtol=1e-12)
    return R0 + sim.qpos[1] - exact


def test_the_bead_follows_r0_cosh_omega_t_at_second_order():
    errors = [radius_error(dt) for dt in (4e-3, 2e-3, 1e-3)]
    ratios = np.array(errors[:-1]) / np.array(errors[1:])
    assert np.all((3.8 < ratios) & (ratios < 4.2)), (errors, ratios)
    assert abs(errors[-1]) <= 1e-5
