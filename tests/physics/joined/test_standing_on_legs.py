"""A body standing on jointed legs comes to rest on the floor and stays there: the contacts and the joints' rows
(limits, dampers, springs) balance it in one velocity solve, and the weight goes to the floor. Both legs touch, so
the body is statically determinate vertically: at rest the contacts' normal forces sum to its weight."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import mechgym

G = 9.81
MASS = 8.0  # kg: the torso's 6 and two legs of 1


def standing(dt: float, joint: str) -> str:
    """A 0.8 m capsule torso (6 kg, free) on two 1 kg capsule legs, each on a hinge about y (``joint``: its MJCF
    attributes) at an end of the torso, their feet 1 cm above the floor."""
    leg = ('<body pos="{x} 0 0"><joint type="hinge" axis="0 1 0" {joint}/>'
           '<geom type="capsule" fromto="0 0 0 0.05 0 -0.25" size="0.04" mass="1"/></body>')
    return (f'<mujoco><option timestep="{dt}"/><worldbody><geom type="plane" size="5 5 .1"/>'
            '<body pos="0 0 0.3"><freejoint/><geom type="capsule" fromto="-.4 0 0 .4 0 0" size="0.04" mass="6"/>'
            + "".join(leg.format(x=x, joint=joint) for x in (-0.4, 0.4)) + '</body></worldbody></mujoco>')


def assert_still(sim, steps: int) -> None:
    """Over ``steps`` more steps, no velocity above 1e-9 (m/s, rad/s) and the first coordinate (the root's x) within
    1e-9 m of where it was."""
    x = sim.qpos[0]
    fastest = 0.0
    for _ in range(steps):
        sim.step(1)
        fastest = max(fastest, np.abs(sim.qvel).max())
    assert fastest < 1e-9
    assert abs(sim.qpos[0] - x) < 1e-9


def assert_at_rest(sim, seconds: float) -> None:
    """Still over ``seconds`` more (``assert_still``), and the floor carrying the weight (the contacts' mean normal
    forces, to 1e-9 of it)."""
    assert_still(sim, int(round(seconds / sim.dt)))
    contacts = sim.contacts()
    assert len(contacts) >= 2  # a foot each at least
    assert sum(c.normal_force for c in contacts) == pytest.approx(MASS * G, rel=1e-9)


@pytest.mark.parametrize("dt", [0.01, 0.002])
def test_legs_held_at_their_limits_stand_still(dt):
    """Each leg pressed against its hinge's lower limit by the floor. The contact-space solve, which keeps the joints'
    equality rows only, let the legs turn through their limits; the rows' sweep put them back, which moved the
    contacts off their solution, and that was accepted: the feet were left approaching the floor at 8 mm/s and
    sliding, and the body walked backwards at 3 cm/s for ever (0.3 cm/s at 1 ms)."""
    sim = mechgym.load(standing(dt, 'range="0 0.3"'), backend="mechgym")
    sim.step(int(round(2.0 / dt)))
    assert_at_rest(sim, 1.0)


@pytest.mark.parametrize(("stiffness", "dt"), [(60, 0.01), (60, 0.002), (1000, 0.01)])
def test_legs_on_springs_come_to_rest(stiffness, dt):
    """Each leg on a damped spring (60 or 1000 N m/rad, 1.5 N m s/rad), free to flex. Two ways the body hopped from
    foot to foot for ever (7-8 cm/s sideways): the position correction of a 1 mm landing, turning the legs, left the
    foot 4 um open by its second order; and a drift that flexed the legs left both feet open by 2e-7 m, where no foot
    touched to hold the other, so the body fell for a step and landed 0.5 mm deep (at 1000 N m/rad the feet, joined
    to the solve while open by less than 1 um, drifted past it in three steps)."""
    sim = mechgym.load(standing(dt, f'stiffness="{stiffness}" damping="1.5" armature="0.1"'), backend="mechgym")
    sim.step(int(round(12.0 / dt)))
    assert_at_rest(sim, 1.0)


def gymnasium_scene(name: str) -> str:
    """The MJCF text of one of Gymnasium's MuJoCo scenes (``name``: its file); the test is skipped without Gymnasium."""
    gymnasium = pytest.importorskip("gymnasium")
    return (Path(gymnasium.__file__).parent / "envs" / "mujoco" / "assets" / name).read_text()


def test_gymnasiums_half_cheetah_settles_on_its_sprung_legs():
    """Gymnasium's half-cheetah (sprung, damped hinges) released at its dt of 10 ms settles on its feet; it walked at
    6 cm/s for ever (|qvel| 1.2), hopping as the sprung legs above."""
    sim = mechgym.load(gymnasium_scene("half_cheetah.xml"), backend="mechgym")
    sim.step(800)
    x = sim.qpos[0]
    fastest = 0.0
    for _ in range(100):
        sim.step(1)
        fastest = max(fastest, np.abs(sim.qvel).max())
    assert fastest < 1e-4  # decaying by about 3.7 a second: 1.4e-5 here
    assert abs(sim.qpos[0] - x) < 1e-5


@pytest.mark.parametrize("scene", ["hopper.xml", "walker2d.xml"])
def test_gymnasiums_hopper_and_walker_lie_still_once_fallen(scene):
    """Gymnasium's hopper and walker (limited hinges) released at their own dt of 2 ms topple and come to rest on the
    floor: their legs lie against their limits, and 20 s on they were still creeping (|qvel| up to 5e-3 and 2e-2)."""
    sim = mechgym.load(gymnasium_scene(scene), backend="mechgym")
    sim.step(6000)
    assert_still(sim, 500)
