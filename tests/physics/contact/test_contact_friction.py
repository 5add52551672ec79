"""Coulomb friction with static and kinetic coefficients, decided per point."""

from __future__ import annotations

import math

import numpy as np

from .driver import ContactScene
from .scenes import GRAVITY, box_on_floor, downhill, on_slope, run

SLOPE = 20.0  # deg; tan 20 deg = 0.364


def test_block_on_slope_held_by_static_friction():
    """mu_s = 0.5 > tan 20 deg > mu_k = 0.3: the block does not creep (< 1e-9 m in 10 s; MuJoCo ~1e-2 m)."""
    scene = ContactScene.build(on_slope('type="box" size="0.05 0.05 0.05"', 0.05, SLOPE, 0.3, 0.5))
    start = scene.state.com[0, 0].copy()
    com, _, _, active = run(scene, 1e-3, 10.0)
    assert np.abs(com[:, 0] - start).max() < 1e-9
    assert np.all(active == 4)


def test_sliding_block_stops_where_and_when_the_closed_form_says_to_second_order():
    """A block sliding at 2 m/s with mu_k = 0.3 decelerates at a = mu_k g and stops at t* = v0 / a after
    v0^2 / (2 a). Velocity Verlet is exact under a constant force, so the only error is the stop itself: the
    block comes to rest at the end of the step that contains t*, and its distance is short by at most
    a h^2 / 2 (the deceleration's travel over that step's remainder), a second-order bound."""
    a = 0.3 * GRAVITY
    exact, t_stop = 2.0 ** 2 / (2.0 * a), 2.0 / a
    for h in (4e-3, 2e-3, 1e-3, 5e-4):
        scene = ContactScene.build(box_on_floor((0.05, 0.05, 0.05), (0.0, 0.0, 0.05), friction=0.3))
        scene.state.vel[0, 0, 0] = 2.0
        com, vel, momentum, _ = run(scene, h, 1.0)
        assert np.abs(vel[-1]).max() < 1e-9 and np.abs(momentum).max() < 1e-12
        rest = np.flatnonzero(np.abs(vel[:, 0, 0]) > 1e-9)[-1] + 1  # the first sample at rest
        assert t_stop <= (rest + 1) * h < t_stop + h, (h, (rest + 1) * h, t_stop)  # sample k: after step k + 1
        assert 0.0 <= exact - com[-1, 0, 0] <= 0.5 * a * h * h * (1 + 1e-6), (h, exact - com[-1, 0, 0])


def test_sphere_rolls_down_slope_at_five_sevenths_g_sin():
    """A solid sphere rolling without slipping (mu = 1) covers (5/7) g sin(theta) t^2 / 2 along the slope."""
    scene = ContactScene.build(on_slope('type="sphere" size="0.1"', 0.1, SLOPE, 1.0, 1.0))
    start = scene.state.com[0, 0].copy()
    com, _, _, active = run(scene, 1e-3, 1.0)
    distance = (com[-1, 0] - start) @ downhill(SLOPE)
    assert abs(distance / (0.5 * 5.0 / 7.0 * GRAVITY * math.sin(math.radians(SLOPE))) - 1.0) < 1e-12
    assert np.all(active == 1)


def test_a_resting_cube_stays_at_rest_while_its_thrust_changes_inside_the_friction_cone():
    """A 5 cm, 100 g cube resting on a plane (mu = 1) under world-frame thrusts at its centre that change every
    20 ms (a policy's control period), each well inside the friction cone and short of tipping it (|F_t| at
    most half the normal force, the cube as wide as its centre is high): static friction holds. The opening
    kick of the first step after a change applies the contacts' reactions to the previous thrust, so the
    cube slips in that step's drift by h^2 |dF_t| / (2 m) (second order: 2.7 um for 0.13 N at 2 ms); after
    that step it must be at rest again, turning not at all. It used to slide and rock from corner to corner
    for the whole control period, at up to 9 mm/s and 0.26 rad/s."""
    import mechgym

    h, mass = 2e-3, 0.1
    sim = mechgym.load("""<mujoco><worldbody><geom type="plane" size="1 1 0.1"/>
        <body pos="0 0 0.025"><freejoint name="free"/><geom type="box" size="0.025 0.025 0.025" mass="0.1"/></body>
        </worldbody><actuator>
        <motor joint="free" gear="1 0 0 0 0 0"/><motor joint="free" gear="0 1 0 0 0 0"/>
        <motor joint="free" gear="0 0 1 0 0 0"/></actuator></mujoco>""", dt=h)
    start = sim.qpos.copy()
    rng = np.random.default_rng(0)
    slip_bound, push = 0.0, np.zeros(2)
    for _ in range(100):
        down = rng.uniform(-1.0, 0.5)  # N along z: the normal force is m g - down
        angle = rng.uniform(0.0, 2.0 * math.pi)
        new_push = rng.uniform(0.0, 0.5 * (mass * GRAVITY - down)) * np.array([math.cos(angle), math.sin(angle)])
        slip_bound += h * h * np.linalg.norm(new_push - push) / (2.0 * mass)
        push = new_push
        sim.ctrl[:] = (push[0], push[1], down)
        sim.step(10)
        assert np.abs(sim.qvel).max() < 1e-9, sim.qvel
        assert np.linalg.norm(sim.qpos[:2] - start[:2]) <= slip_bound * (1.0 + 1e-6)
        assert np.abs(sim.qpos[2:] - start[2:]).max() < 1e-12, sim.qpos - start
