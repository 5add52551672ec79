"""A reset whose start an equality (connect, weld, rod) or a rope does not hold, on the in-house engine: the bodies are
moved onto the rows, the least move in the kinetic-energy metric, their velocities projected onto them, with a
StartWarning that names each row and how far off it started (MuJoCo's soft rows pull such a start together over the
first steps; the engine's hard rows failed every step of it, in every part)."""

from __future__ import annotations

import warnings

import mujoco
import numpy as np
import pytest

import mechgym

# Two free spheres (1 kg and 3 kg, no gravity) joined at the first one's centre: MJCF takes the second body's anchor
# from qpos0, 0.2 m behind its centre along x.
SPHERES = ('<mujoco><option gravity="0 0 0"/><worldbody>'
           '<body name="a"><freejoint/><geom type="sphere" size="0.05" mass="1" contype="0" conaffinity="0"/></body>'
           '<body name="b" pos="0.2 0 0"><freejoint/><geom type="sphere" size="0.05" mass="3" contype="0" '
           'conaffinity="0"/></body></worldbody><equality><connect name="pin" body1="a" body2="b" anchor="0 0 0"/>'
           '</equality></mujoco>')
# A parallelogram four-bar in the x-z plane: crank and rocker 0.1 m, coupler and ground 0.3 m, the loop closed by a
# connect of the rocker's tip to the world.
FOUR_BAR = ('<mujoco><worldbody><body name="crank"><joint type="hinge" axis="0 1 0"/><geom type="capsule" '
            'fromto="0 0 0 0.1 0 0" size="0.01" mass="0.1"/><body name="coupler" pos="0.1 0 0"><joint type="hinge" '
            'axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0 0 0.3" size="0.01" mass="0.1"/><body name="rocker" '
            'pos="0 0 0.3"><joint type="hinge" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 -0.1 0 0" '
            'size="0.01" mass="0.1"/></body></body></body></worldbody><equality><connect name="loop" body1="rocker" '
            'body2="world" anchor="-0.1 0 0"/></equality></mujoco>')


def _mujoco_equality_residual(sim) -> float:
    """The largest |efc_pos| of the equality rows by MuJoCo's own measure at the simulator's qpos."""
    data = mujoco.MjData(sim.model)
    data.qpos[:] = sim.qpos
    mujoco.mj_fwdPosition(sim.model, data)
    rows = data.efc_type[:data.nefc] == mujoco.mjtConstraint.mjCNSTR_EQUALITY
    return float(np.abs(data.efc_pos[:data.nefc][rows]).max())


def _loaded_warned(xml: str, match: str):
    """The scene loaded on the engine at dt = 1 ms, whose reset warned (StartWarning) as ``match`` says."""
    with pytest.warns(mechgym.StartWarning, match=match):
        return mechgym.load(xml, backend="mechgym", dt=1e-3)


def _reset_warned(sim, **start) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sim.reset(**start)
    return [str(w.message) for w in caught if issubclass(w.category, mechgym.StartWarning)]


def test_two_bodies_pinned_apart_meet_at_their_centre_of_mass_with_their_momentum():
    """Sphere b started 0.3 m further along x than the pin allows, sphere a moving at 1 m/s along x: the pin's x row
    has no angular part there, so the least move in the kinetic-energy metric is a translation that keeps the centre
    of mass, m_a dx_a + m_b dx_b = 0 with dx_a - dx_b = 0.3 m: a moves 0.225 m, b -0.075 m; the projection of the
    velocities keeps the momentum, both 1 kg x 1 m/s / 4 kg = 0.25 m/s. Then the pair moves on together, exactly."""
    sim = mechgym.load(SPHERES, backend="mechgym", dt=1e-3)
    qpos = sim.qpos
    qpos[7] = 0.5
    qvel = np.zeros(12)
    qvel[0] = 1.0
    (message,) = _reset_warned(sim, qpos=qpos, qvel=qvel)
    assert message.startswith("equality 'pin' (connect) off by 0.3 m at the start: the in-house engine starts the "
                              "bodies moved onto it")
    expected = np.array([0.225, 0, 0, 1, 0, 0, 0, 0.425, 0, 0, 1, 0, 0, 0])
    np.testing.assert_allclose(sim.qpos, expected, rtol=0, atol=1e-14)
    np.testing.assert_allclose(sim.qvel, [0.25, 0, 0, 0, 0, 0] * 2, rtol=0, atol=1e-14)
    sim.step(100)
    np.testing.assert_allclose(sim.qpos[[0, 7]], [0.25, 0.45], rtol=0, atol=1e-13)
    assert not _reset_warned(sim, qpos=qpos, qvel=qvel)  # (once per simulator and row)


def test_the_projected_velocities_keep_the_momentum_of_an_armature_too():
    """A 2 kg carriage on a rail with a 0.5 kg armature, pinned to a 1 kg free sphere 0.2 m ahead of it (no gravity);
    reset with the sphere 0.1 m further ahead, moving at 1 m/s along the rail, the carriage at rest: the pin holds
    only if both move together, at the momentum's velocity 1 kg m/s / (2 + 0.5 + 1) kg = 0.2857 m/s (the armature is
    the carriage's coordinate's inertia, as in MuJoCo's joint-space inertia), and then they move on so, exactly."""
    xml = ('<mujoco><option gravity="0 0 0"/><worldbody><body name="carriage"><joint type="slide" axis="1 0 0" '
           'armature="0.5"/><geom type="box" size=".05 .05 .05" mass="2" contype="0" conaffinity="0"/></body>'
           '<body name="ball" pos="0.2 0 0"><freejoint/><geom size="0.05" mass="1" contype="0" conaffinity="0"/>'
           '</body></worldbody><equality><connect name="pin" body1="ball" body2="carriage" anchor="0 0 0"/>'
           '</equality></mujoco>')
    sim = mechgym.load(xml, backend="mechgym", dt=1e-3)
    (message,) = _reset_warned(sim, qpos=[0, 0.3, 0, 0, 1, 0, 0, 0], qvel=[0, 1, 0, 0, 0, 0, 0])
    assert message.startswith("equality 'pin' (connect) off by 0.1 m")
    velocity = 1.0 / 3.5
    np.testing.assert_allclose(sim.qvel, [velocity, velocity, 0, 0, 0, 0, 0], rtol=0, atol=1e-14)
    moved = sim.qpos[[0, 1]]
    sim.step(100)
    np.testing.assert_allclose(sim.qpos[[0, 1]], moved + 0.1 * velocity, rtol=0, atol=1e-13)


@pytest.mark.parametrize("start", [(0.3, 0.1, -0.2), (-1.0, 0.4, 0.5), (2.0, -1.7, 2.2)])
def test_a_four_bar_started_off_its_loop_closes_it_and_keeps_a_parallelogram(start):
    """A parallelogram four-bar reset at joint angles that open its loop, up to 0.3 m (a random start, as an RL task
    draws one; each nearer the parallelogram than the crossed branch of the loop): the reset closes it, to MuJoCo's
    measure within 1e-9 m; then, swinging under gravity for 1 s, the crank and rocker stay
    parallel and the coupler level-parallel to the ground, q_coupler = -q_crank and q_rocker = q_crank, and the energy
    stays within the step's O(dt^2) oscillation: halving dt quarters it."""
    drifts = []
    for dt in (1e-3, 5e-4):
        sim = mechgym.load(FOUR_BAR, backend="mechgym", dt=dt)
        (message,) = _reset_warned(sim, qpos=start, qvel=[1.0, 0.0, 0.0])
        assert message.startswith("equality 'loop' (connect) off by ")
        assert _mujoco_equality_residual(sim) < 1e-9
        energy, drift = sim.energy(), 0.0
        for _ in range(round(1.0 / dt)):
            sim.step(1)
            q = sim.qpos
            assert abs(q[1] + q[0]) < 1e-10 and abs(q[2] - q[0]) < 1e-10
            drift = max(drift, abs(sim.energy() - energy))
        drifts.append(drift)
    assert drifts[0] < 2e-5 and 3.5 < drifts[0] / drifts[1] < 4.5


def test_a_weld_off_at_the_start_is_moved_onto():
    """A weld whose relpose puts the box 0.2 m along x and 0.2 m below where it starts, turned 20 degrees from it: the
    warning names the weld with both offsets by MuJoCo's measure (sqrt(0.2^2 + 0.2^2) = 0.283 m, 20 degrees =
    0.349 rad); after the reset MuJoCo measures the weld within 1e-9, and it holds while the arm swings. A weld that
    holds at the start (its relpose from qpos0) is not warned of."""
    weld = ('<mujoco><worldbody><body name="arm" pos="0 0 1"><joint type="hinge" axis="0 1 0"/><geom type="capsule" '
            'fromto="0 0 0 .3 0 0" size=".02" mass="1"/></body><body name="box" pos="0.5 0 0.8" euler="0 0 20">'
            '<freejoint/><geom type="box" size=".05 .05 .05" mass="1" contype="0" conaffinity="0"/></body>'
            '</worldbody><equality><weld name="grip" body1="arm" body2="box"{relpose}/></equality></mujoco>')
    sim = _loaded_warned(weld.format(relpose=' relpose="0.3 0 0 1 0 0 0"'),
                         r"equality 'grip' \(weld\) off by 0\.283 m, turned by 0\.349 rad at the start")
    assert _mujoco_equality_residual(sim) < 1e-9
    sim.step(100)
    assert sim.qpos[0] != 0.0 and _mujoco_equality_residual(sim) < 1e-9
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mechgym.load(weld.format(relpose=""), backend="mechgym", dt=1e-3).step(10)


def test_a_rope_stretched_at_the_start_is_pulled_to_its_length():
    """A bob 0.6 m below the rope's anchor, the rope 0.5 m long: the reset lifts it straight up to 0.5 m (only the bob
    can move, along the rope), at rest, with a warning naming the tendon, its length and range; it then hangs there."""
    xml = ('<mujoco><worldbody><site name="top" pos="0 0 1"/><body name="bob" pos="0 0 0.4"><freejoint/>'
           '<geom type="sphere" size="0.05" mass="1"/><site name="s"/></body></worldbody><tendon>'
           '<spatial name="rope" limited="true" range="0 0.5"><site site="top"/><site site="s"/></spatial></tendon>'
           '</mujoco>')
    sim = _loaded_warned(xml, r"tendon 'rope' at length 0\.6 m, beyond its range \[0, 0\.5\] m at the start")
    np.testing.assert_allclose(sim.qpos, [0, 0, 0.5, 1, 0, 0, 0], rtol=0, atol=1e-14)
    np.testing.assert_allclose(sim.qvel, 0.0, rtol=0, atol=1e-14)
    sim.step(100)
    assert sim.qpos[2] == pytest.approx(0.5, abs=1e-12)
