"""Continuous collision between two moving bodies: a 1 mm plate at 20 m/s never passes another body, whatever
the time step, and head-on impacts of free bodies give Newton's closed form (gravity off throughout)."""

from __future__ import annotations

import numpy as np
import pytest

import mechgym
from mechgym.physics.contact.sets import geom_poses

from .driver import ContactScene
from .scenes import run

HALF = 0.0005  # m: half thickness of a 1 mm plate
PLATE = f'type="box" size="{HALF} 0.1 0.1"'
RADIUS = 0.05  # m: sphere radius and cube half size
SHAPES = {"plate": (PLATE, HALF), "sphere": (f'type="sphere" size="{RADIUS}"', RADIUS),
          "cube": (f'type="box" size="{RADIUS} {RADIUS} {RADIUS}"', RADIUS)}
DTS_MS = [1, 5, 20, 50]


def pair_shot(first: str, second: str, distance: float, restitution: float, m1: float, m2: float) -> str:
    """Two free bodies on the x axis, no gravity: geom "one" (``first``'s MJCF attributes, mass m1, kg) at the
    origin and "two" (``second``, m2) at x = ``distance`` (m); restitution on "one"."""
    return ('<mujoco><option gravity="0 0 0"/><custom>'
            f'<numeric name="restitution:one" data="{restitution}"/></custom><worldbody>'
            f'<body pos="0 0 0"><freejoint/><geom name="one" {SHAPES[first][0]} mass="{m1}"/></body>'
            f'<body pos="{distance} 0 0"><freejoint/><geom name="two" {SHAPES[second][0]} mass="{m2}"/></body>'
            '</worldbody></mujoco>')


def newton(m1: float, v1: float, m2: float, v2: float, e: float) -> tuple[float, float]:
    """Velocities after a central 1D impact with restitution e: v1' = (m1 v1 + m2 v2 - m2 e (v1 - v2)) / (m1 + m2),
    v2' = (m1 v1 + m2 v2 + m1 e (v1 - v2)) / (m1 + m2)."""
    total = m1 * v1 + m2 * v2
    return (total - m2 * e * (v1 - v2)) / (m1 + m2), (total + m1 * e * (v1 - v2)) / (m1 + m2)


def shoot(first: str, second: str, distance: float, e: float, m1: float, v1: float, m2: float, v2: float,
          dt_ms: int, seconds: float):
    """Run the pair shot with the bodies' x velocities v1, v2 (m/s); returns (scene, com, vel, momentum)."""
    scene = ContactScene.build(pair_shot(first, second, distance, e, m1, m2))
    scene.state.vel[0, 0, 0] = v1
    scene.state.vel[0, 1, 0] = v2
    com, vel, momentum, _ = run(scene, dt_ms / 1000.0, seconds)
    return scene, com, vel, momentum


@pytest.mark.parametrize("restitution", [0.0, 1.0])
@pytest.mark.parametrize("target", ["sphere", "cube"])
@pytest.mark.parametrize("dt_ms", DTS_MS)
def test_thin_plate_never_passes_a_body_at_rest(dt_ms, target, restitution):
    """A 1 mm plate (1 kg) at 20 m/s hits a 2 kg sphere or cube at rest 0.5 m away: at dt = 50 ms it moves 1 m a
    step, 1000 thicknesses. It never gets past the body's near face, the impact is reported at the exact instant
    (0.5 - 0.5 mm - 5 cm) / 20 m/s with the approach speed 20 m/s, and the velocities after are Newton's."""
    m1, v1, m2 = 1.0, 20.0, 2.0
    scene, com, vel, momentum = shoot("plate", target, 0.5, restitution, m1, v1, m2, 0.0, dt_ms, 0.1)
    assert (com[:, 1, 0] - com[:, 0, 0]).min() >= HALF + RADIUS - 1e-12
    events = scene.events()
    assert len(events) == 1
    assert events[0, 0] == pytest.approx((0.5 - HALF - RADIUS) / v1, abs=1e-12)
    assert events[0, 1:3].tolist() == [0, 1]
    assert events[0, 3] == pytest.approx(v1, rel=1e-12)
    after = newton(m1, v1, m2, 0.0, restitution)
    assert vel[-1, :, 0] == pytest.approx(after, rel=1e-12, abs=1e-12)
    assert m1 * vel[-1, 0, 0] + m2 * vel[-1, 1, 0] == pytest.approx(m1 * v1, rel=1e-14)
    assert np.abs(vel[-1, :, 1:]).max() <= 1e-12 and np.abs(momentum[-1]).max() <= 1e-12


@pytest.mark.parametrize("restitution", [0.0, 0.5, 1.0])
@pytest.mark.parametrize(("first", "second"), [("sphere", "sphere"), ("cube", "cube"), ("plate", "sphere")])
@pytest.mark.parametrize("dt_ms", [1, 20, 50])
def test_head_on_impact_of_two_moving_bodies_is_newtons(dt_ms, first, second, restitution):
    """Body 1 (1 kg, +15 m/s) and body 2 (3 kg, -5 m/s), their centres 1 m apart: they touch after
    d0 / |v1 - v2| = (1 - h1 - h2) / 20 s (h the half widths along x) at 20 m/s, and leave with Newton's
    v1' = (m1 v1 + m2 v2 - m2 e (v1 - v2)) / (m1 + m2), v2' likewise, momentum conserved to round-off; they never
    overlap."""
    m1, v1, m2, v2 = 1.0, 15.0, 3.0, -5.0
    reach = SHAPES[first][1] + SHAPES[second][1]
    scene, com, vel, momentum = shoot(first, second, 1.0, restitution, m1, v1, m2, v2, dt_ms, 0.15)
    assert (com[:, 1, 0] - com[:, 0, 0]).min() >= reach - 1e-12
    events = scene.events()
    assert len(events) == 1
    assert events[0, 0] == pytest.approx((1.0 - reach) / (v1 - v2), abs=1e-12)
    assert events[0, 3] == pytest.approx(v1 - v2, rel=1e-12)
    assert vel[-1, :, 0] == pytest.approx(newton(m1, v1, m2, v2, restitution), rel=1e-12, abs=1e-12)
    assert m1 * vel[-1, 0, 0] + m2 * vel[-1, 1, 0] == pytest.approx(m1 * v1 + m2 * v2, abs=1e-13)
    assert np.abs(vel[-1, :, 1:]).max() <= 1e-12 and np.abs(momentum[-1]).max() <= 1e-12


@pytest.mark.parametrize("dt_ms", DTS_MS)
def test_thin_plates_meeting_head_on_stick_together(dt_ms):
    """Two 1 mm plates (1 kg at +20 m/s, 2 kg at -20 m/s) 0.5 m apart, e = 0: at dt = 50 ms they close 2 m a step.
    They meet at (0.5 - 1 mm) / 40 s and move on face to face at the common velocity (m1 v1 + m2 v2) / (m1 + m2)
    = -20/3 m/s, the gap between them 0 from then on (never negative)."""
    m1, v1, m2, v2 = 1.0, 20.0, 2.0, -20.0
    scene, com, vel, _ = shoot("plate", "plate", 0.5, 0.0, m1, v1, m2, v2, dt_ms, 0.1)
    gap = com[:, 1, 0] - com[:, 0, 0] - 2.0 * HALF
    assert gap.min() >= -1e-12
    touch = (0.5 - 2.0 * HALF) / (v1 - v2)
    events = scene.events()
    assert len(events) == 1
    assert events[0, 0] == pytest.approx(touch, abs=1e-12)
    after = np.arange(1, gap.size + 1) * dt_ms / 1000.0 >= touch
    assert np.abs(gap[after]).max() <= 1e-12
    common = (m1 * v1 + m2 * v2) / (m1 + m2)
    np.testing.assert_allclose(vel[after][:, :, 0], common, rtol=1e-12)


@pytest.mark.parametrize("dt_ms", [1, 5, 20, 50])
def test_ball_drives_a_thin_plate_into_a_thin_wall(dt_ms):
    """A 2 cm ball (0.1 kg, 20 m/s) hits a free 1 mm plate (0.1 kg) at rest 0.9 m away in front of a static 1 mm
    wall (near face at 0.9995 m), all e = 0: the pair's first touch at (0.9 - 0.5 mm - 2 cm) / 20 m/s, then, 0.099 m
    / 10 m/s later, the plate's static first touch with the wall. Nothing passes anything: the ball stays behind
    the plate and the plate in front of the wall at every step, and the perfectly inelastic chain ends at rest
    with ball, plate and wall touching. At dt >= 20 ms both impacts fall in one step: the ball's sweep stops it at
    the wall, and the position correction pushes the plate, which did not move in the drift, into the wall; the
    correction's second pass finds that contact, and the step is taken in parts that meet the impacts one at a
    time (at a496275, before that, the second pass held the plate in front of the wall within the whole step)."""
    face = 1.0 - HALF
    scene = ContactScene.build(
        '<mujoco><option gravity="0 0 0"/><worldbody>'
        f'<geom name="wall" type="box" size="{HALF} 1 1" pos="1 0 0"/>'
        f'<body pos="0.9 0 0"><freejoint/><geom name="plate" {PLATE} mass="0.1"/></body>'
        '<body pos="0 0 0"><freejoint/><geom name="ball" type="sphere" size="0.02" mass="0.1"/></body>'
        '</worldbody></mujoco>')
    scene.state.vel[0, 1, 0] = 20.0
    com, vel, _, _ = run(scene, dt_ms / 1000.0, 0.2)
    assert (com[:, 0, 0] - com[:, 1, 0]).min() >= HALF + 0.02 - 1e-12
    assert com[:, 0, 0].max() <= face - HALF + 1e-12
    assert com[-1, 0, 0] == pytest.approx(face - HALF, abs=1e-12)
    assert com[-1, 1, 0] == pytest.approx(face - 2.0 * HALF - 0.02, abs=1e-12)
    assert np.abs(vel[-1]).max() <= 1e-12
    events = scene.events()
    assert events[0, 1:3].tolist() == [1, 2]  # plate, ball
    assert events[0, 0] == pytest.approx((0.9 - HALF - 0.02) / 20.0, abs=1e-12)


def _sequential_chain(speed: float, e: float) -> tuple[float, float, int]:
    """(ball, plate) velocities (m/s) and the number of impacts after a ball of speed ``speed`` hits a plate of the
    same mass at rest in front of a fixed wall, every impact Newton's with ``e``, one at a time: ball on plate
    (equal masses: the centre-of-mass velocity plus or minus e times half the approach), plate on wall (reversed,
    times e), again while either pair still closes."""
    ball, plate, impacts = speed, 0.0, 0
    while True:
        if ball > plate:
            mean, half = 0.5 * (ball + plate), 0.5 * e * (ball - plate)
            ball, plate = mean - half, mean + half
        elif plate > 0.0:
            plate = -e * plate
        else:
            return ball, plate, impacts
        impacts += 1


@pytest.mark.parametrize("dt_ms", [1, 20, 50])
@pytest.mark.parametrize("restitution", [0.5, 1.0])
def test_a_chain_of_impacts_inside_one_step_takes_them_one_at_a_time(restitution, dt_ms):
    """The ball of the test above (0.1 kg, 20 m/s) drives the plate (0.1 kg) into the wall, every geom with the
    restitution e: the plate reaches the wall 4.95 ms after the ball hits it, comes back and meets the ball again.
    At 20 and 50 ms all of it falls in one step; the contact that the position correction's recheck finds (plate
    on wall) fails the step, whose parts then meet the impacts one at a time, as at 1 ms: the final velocities and
    the number of impact events are those of Newton's impacts in sequence (closed form), to round-off. (Taken as
    one simultaneous impact in the step, e = 0.5 left the ball at -10 m/s and the plate at rest, 5 J of 20 where
    the sequence leaves 1.0 J.)"""
    materials = "".join(f'<numeric name="restitution:{g}" data="{restitution}"/>' for g in ("wall", "plate", "ball"))
    sim = mechgym.load(
        f'<mujoco><option gravity="0 0 0"/><custom>{materials}</custom><worldbody>'
        f'<geom name="wall" type="box" size="{HALF} 1 1" pos="1 0 0"/>'
        f'<body name="plate" pos="0.9 0 0"><freejoint/><geom name="plate" {PLATE} mass="0.1"/></body>'
        '<body name="ball"><freejoint/><geom name="ball" type="sphere" size="0.02" mass="0.1"/></body>'
        '</worldbody></mujoco>', backend="mechgym", dt=dt_ms / 1000.0)
    qvel = np.zeros(sim.model.nv)
    qvel[6] = 20.0
    sim.reset(qvel=qvel)
    sim.step(round(0.2 / (dt_ms / 1000.0)))
    ball, plate, impacts = _sequential_chain(20.0, restitution)
    np.testing.assert_allclose([sim.qvel[6], sim.qvel[0]], [ball, plate], atol=1e-9)
    assert len(sim.events) == impacts


def test_spinning_plate_never_passes_a_free_slab():
    """A 1 mm plate (1 kg, 0.2 m square) shot at 20 m/s with random sideways velocities (sigma 2 m/s) and random
    angular momenta (sigma 0.03 N m s: up to ~20 rad/s) at a free 10 cm slab (2 kg, 1 m square) at rest 0.5 m
    away, dt = 20 ms: 0.4 m a step. Whatever corner hits first, the plate's centre never gets past the slab's
    mid-plane and ends in front of its near face (in the slab's frame), and the linear momentum is conserved to
    round-off at every step (contact impulses are equal and opposite)."""
    rng = np.random.default_rng(7)
    h = 0.02
    for _ in range(12):
        scene = ContactScene.build(
            '<mujoco><option gravity="0 0 0"/><worldbody>'
            f'<body pos="0 0 0"><freejoint/><geom name="plate" {PLATE} mass="1"/></body>'
            '<body pos="0.5 0 0"><freejoint/><geom name="slab" type="box" size="0.05 0.5 0.5" mass="2"/></body>'
            '</worldbody></mujoco>')
        scene.state.vel[0, 0] = [20.0, rng.normal(0.0, 2.0), rng.normal(0.0, 2.0)]
        scene.state.momentum[0, 0] = rng.normal(0.0, 0.03, 3)
        start = scene.state.vel[0, 0].copy()
        assert scene.prime(h) >= 0
        depth = []
        for k in range(8):
            _, _, status = scene.run(h, 1, k)
            assert tuple(status) == (1, 0)
            geom_poses(scene.geoms, scene.state, 0, scene.scratch)
            pos, mat = scene.scratch.pos, scene.scratch.mat
            depth.append((mat[1].T @ (pos[0] - pos[1]))[0])  # plate centre along the slab's normal, m
            total = scene.state.vel[0, 0] + 2.0 * scene.state.vel[0, 1]
            np.testing.assert_allclose(total, start, rtol=0, atol=1e-12)
        assert max(depth) < 0.0 and depth[-1] <= -0.05
