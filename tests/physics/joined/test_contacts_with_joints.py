"""Contacts solved together with joints (``contact.joined``): closed-form impacts of jointed bodies, and the
bundled slider-crank rattling in its notch without ever entering the walls."""

from __future__ import annotations

import math
from importlib import resources

import mujoco
import numpy as np
import pytest
from scipy.integrate import quad, solve_ivp

import mechgym

G = 9.81


def slide_block(e: float) -> str:
    """A 0.2 m cube on a vertical slide joint, its bottom 0.9 m above a plane."""
    return f"""<mujoco><custom><numeric name="restitution:block" data="{e}"/></custom><worldbody>
      <geom name="floor" type="plane" size="1 1 0.1"/>
      <body name="block" pos="0 0 1"><joint name="lift" type="slide" axis="0 0 1"/>
        <geom name="block" type="box" size="0.1 0.1 0.1" mass="1"/></body></worldbody></mujoco>"""


@pytest.mark.parametrize("dt", [1e-3, 1e-2])
def test_a_block_on_a_slide_joint_bounces_like_a_free_one(dt):
    """Landing at sqrt(2 H / g), the second landing 2 e v / g later (the apex ratio e^2), the block never in the
    floor: the slide joint's rows and the contacts are one solve."""
    e = 0.8
    sim = mechgym.load(slide_block(e), backend="mechgym", dt=dt)
    lowest = math.inf
    for _ in range(int(round(1.5 / dt))):
        sim.step(1)
        lowest = min(lowest, sim.qpos[0])
    first, second = sim.events[0], sim.events[1]
    v = math.sqrt(2 * G * 0.9)
    assert abs(first.time - math.sqrt(2 * 0.9 / G)) < 1e-6
    assert first.speed == pytest.approx(v, rel=1e-9)
    assert abs(second.time - first.time - 2 * e * v / G) < 1e-6
    assert second.speed == pytest.approx(e * v, rel=1e-9)
    assert lowest > -0.9 - 1e-9  # qpos is the joint's displacement from z = 1 m


def pendulum(e: float, theta0: float) -> str:
    """A 1 kg sphere (r = 5 cm) on a massless 0.5 m arm hinged about y at 1 m, released at theta0; a wall whose
    face x = 0.05 m touches the sphere when the arm hangs straight down."""
    return f"""<mujoco><custom><numeric name="restitution:bob" data="{e}"/></custom><worldbody>
      <geom name="wall" type="box" size="0.05 0.5 0.5" pos="0.1 0 0.5"/>
      <body name="arm" pos="0 0 1"><joint name="hinge" type="hinge" axis="0 1 0"/>
        <geom name="bob" type="sphere" size="0.05" pos="0 0 -0.5" mass="1"/></body></worldbody>
      <keyframe><key qpos="{theta0}"/></keyframe></mujoco>"""


def run_pendulum(dt: float, e: float, theta0: float):
    """(time of the impact event, omega just before the impact, omega at the end of the impact's step)."""
    sim = mechgym.load(pendulum(e, theta0), backend="mechgym", dt=dt)
    before = sim.qvel[0]
    while not sim.events:
        before = sim.qvel[0]
        sim.step(1)
    return sim.events[0].time, before, sim.qvel[0]


def test_a_pendulum_striking_a_wall_rebounds_with_newtons_law():
    """Hinged pendulum released at 0.5 rad onto a wall at the bottom of its swing: the impact comes at the quarter
    swing t* = int_0^theta0 dtheta / omega(theta) (omega^2 = 2 m g l (cos theta - cos theta0) / I), its error
    falls ~4x when dt halves, and the arm leaves at -e times its speed at the wall: at the end of the impact's step
    it swings as the exact pendulum does from the wall at -e omega* for the rest of the step."""
    e, theta0, m, arm = 0.5, 0.5, 1.0, 0.5
    inertia = 0.4 * m * 0.05 ** 2 + m * arm ** 2

    def omega(theta):
        return math.sqrt(2 * m * G * arm * (math.cos(theta) - math.cos(theta0)) / inertia)

    t_star = quad(lambda theta: 1.0 / omega(theta), 0.0, theta0, limit=200)[0]
    omega_star = omega(0.0)
    errors = []
    for dt in (2e-3, 1e-3, 5e-4):
        time, before, after = run_pendulum(dt, e, theta0)
        errors.append(abs(time - t_star))
        assert abs(before) <= omega_star * (1 + 1e-6)  # the arm swings toward the wall (negative omega)
        rest = math.ceil(time / dt - 1e-9) * dt - time  # s from the impact to the end of its step
        swing = solve_ivp(lambda _, y: (y[1], -m * G * arm * math.sin(y[0]) / inertia), (0.0, rest),
                          (0.0, e * omega_star), rtol=1e-12, atol=1e-14)
        # measured: 5e-5, 4e-6, 1.5e-6 of it (the gap's acceleration over the rest of the step is the one the
        # opening kick gave it, at the start of the step)
        assert after == pytest.approx(swing.y[1, -1], rel=1e-4)
    assert errors[-1] < 1e-6
    assert 3.0 < errors[0] / errors[1] < 5.0 and 3.0 < errors[1] / errors[2] < 5.0


def slider_corners(sim) -> np.ndarray:
    """y (m) of the slider's four corners in the x-y plane."""
    body = sim.body("slider")
    rotation = np.zeros(9)
    mujoco.mju_quat2Mat(rotation, body.quat)
    rotation = rotation.reshape(3, 3)
    return np.array([(body.pos + rotation @ np.array([sx * 0.05, sy * 0.025, 0.0]))[1]
                     for sx in (-1, 1) for sy in (-1, 1)])


def slider_crank(walls: bool) -> str:
    """The bundled slider-crank, or the same with contacts disabled."""
    xml = (resources.files("mechgym.envs") / "slider_crank.xml").read_text()
    return xml if walls else xml.replace('gravity="0 -9.81 0"/>',
                                         'gravity="0 -9.81 0"><flag contact="disable"/></option>')


def test_the_slider_rattles_in_its_notch_without_entering_the_walls():
    """Seed 002's slider-crank with clearance (e = 0.4, frictionless), 0.2 s from the Flores keyframe: the
    slider's corners stay inside the notch |y| <= d/2 = 0.026 m to 1e-9 m through hundreds of impacts, the
    impacts take energy out, and the energy never rises above its start by more than the integrator's own
    oscillation in the same run without walls (velocity Verlet's energy error is bounded, not zero)."""
    rises, losses = {}, {}
    for walls in (True, False):
        sim = mechgym.load(slider_crank(walls), backend="mechgym")
        start = sim.energy()
        deepest, rises[walls] = 0.0, -math.inf
        for _ in range(2000):
            sim.step(1)
            deepest = max(deepest, np.abs(slider_corners(sim)).max() - 0.026)
            rises[walls] = max(rises[walls], sim.energy() - start)
        if walls:
            assert len(sim.events) > 100
            assert deepest < 1e-9
        else:
            assert deepest > 1e-3  # without walls the slider leaves the notch: the walls are what holds it
        losses[walls] = start - sim.energy()
    assert rises[True] <= rises[False]
    assert losses[True] > 10 * rises[False]  # impacts with e = 0.4 take energy out, far beyond the oscillation


def _pinch_and_lift(dt: float, lift_time: float) -> tuple[float, int, float]:
    """The bundled gripper on the engine: lowered over the card (0.5 s), closed on it (0.5 s), then lifted by a
    ramp of the lift servo's target at 0.12 m/s for ``lift_time`` s (the target held within each step). Returns
    (the card's slip relative to the carriage during the lift (m), the impacts during the lift, the largest
    |x| of the card's centre during the lift (m))."""
    sim = mechgym.load("gripper", backend="mechgym", dt=dt)
    sim.ctrl = [-0.07, 0.0, 0.0]
    sim.step(round(0.5 / dt))
    sim.ctrl = [-0.07, 0.035, 0.035]
    sim.step(round(0.5 / dt))
    events = len(sim.events)
    start = sim.body("card").pos[2] - sim.body("carriage").pos[2]
    sideways = 0.0
    for k in range(round(lift_time / dt)):
        sim.ctrl = [-0.07 + 0.12 * (k + 1) * dt, 0.035, 0.035]
        sim.step(1)
        sideways = max(sideways, abs(sim.body("card").pos[0]))
    assert sim.body("card").pos[2] > 0.04 + 0.12 * lift_time - 0.01  # (it left the table with the carriage)
    return sim.body("card").pos[2] - sim.body("carriage").pos[2] - start, len(sim.events) - events, sideways


@pytest.mark.parametrize("dt", [5e-4, 1e-3, 5e-3, 1e-2])
def test_the_gripper_lifts_the_card_without_rattle_or_slip(dt):
    """Static friction (mu = 1 against a 1 N squeeze per pad) holds the 10 g card: over a 1 s lift it must not
    slip, rattle or move sideways, at any step. The card leaves the table in the first lift steps (the table's
    share of the opening kick, carried on, used to turn the card and let it rattle between the pads), and the
    carriage's acceleration jumps at every step (the servo's target is held within a step). Friction held at the
    velocity level only at the step's end let the card lag the pads by O(h^2) per unit time (40 um per 0.2 s at
    1 ms, 7 mm at 10 ms); the opening half's solve (``contact.open_contacts``) starts each drift at relative rest,
    so a sticking contact does not slide at all: the slip is round-off."""
    slip, impacts, sideways = _pinch_and_lift(dt, 1.0)
    assert impacts == 0
    assert sideways < 1e-9
    assert abs(slip) < 1e-12


def test_after_a_violent_lift_the_card_slides_then_holds_without_rattle():
    """The lift servo's target jumps by 12 cm at once: the carriage accelerates faster than the pads' friction
    (mu = 1, 1 N a pad: 2 N against 0.1 N of weight) can take the 10 g card along, so the card slides down the
    pads, and then sticks. The slide is the same to 1 % as the step halves (the kinetic phase converges), no impact
    occurs, and once stuck the card stays put: it used to rattle between the pads after such a slide."""
    slides = []
    for dt in (1e-3, 5e-4):
        sim = mechgym.load("gripper", backend="mechgym", dt=dt)
        sim.ctrl = [-0.07, 0.0, 0.0]
        sim.step(round(0.5 / dt))
        sim.ctrl = [-0.07, 0.035, 0.035]
        sim.step(round(0.5 / dt))
        start, events = sim.body("card").pos[2] - sim.body("carriage").pos[2], len(sim.events)
        sim.ctrl = [0.05, 0.035, 0.035]
        sim.step(round(0.2 / dt))
        slide = start - (sim.body("card").pos[2] - sim.body("carriage").pos[2])
        sim.step(round(0.8 / dt))
        assert sim.body("carriage").pos[2] > 0.24  # (it reached its new target with the card)
        assert abs(start - (sim.body("card").pos[2] - sim.body("carriage").pos[2]) - slide) < 1e-9
        assert len(sim.events) == events
        slides.append(slide)
    assert slides[0] > 0.005  # it slid
    assert abs(slides[0] - slides[1]) < 0.01 * slides[1]  # (measured 15.55 and 15.53 mm; 15.70 at 2 ms)
