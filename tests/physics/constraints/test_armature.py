"""Joint armature (MJCF's ``armature`` on hinges and slides: MuJoCo adds it to the joint-space inertia's diagonal) on
the in-house engine: a damper row of the coordinate's inertia (``constraints.damper_compliance``), exact under a
constant force, and second order against MuJoCo's RK4 on a chain whose wrist hinge turns with the arm (where the
coordinate's rate measured with the gradient at either end of a step differs by about h v^T H v: with the wrong one
the arm gained energy without bound, or was first order)."""

from __future__ import annotations

import os

import gymnasium
import mujoco
import numpy as np
import pytest

import mechgym

CARRIAGE = ('<mujoco><option gravity="0 0 0"/><worldbody><body name="carriage"><joint name="rail" type="slide" '
            'axis="1 0 0" armature="{armature}"/><geom type="box" size=".05 .05 .05" mass="2"/></body></worldbody>'
            '<actuator><motor joint="rail"/></actuator></mujoco>')
# Shoulder and elbow about y, the wrist about x (its axis turns with the arm), each with an armature; the arm swings
# and the wrist spins from the keyframe.
ARM = ('<mujoco><option gravity="0 0 -9.81" timestep="{dt}" integrator="{integrator}"/><worldbody>'
       '<body><joint type="hinge" axis="0 1 0" armature="0.02" damping="{damping}"/><geom type="capsule" '
       'fromto="0 0 0 0.3 0 0" size="0.02" mass="1"/><body pos="0.3 0 0"><joint type="hinge" axis="0 1 0" '
       'armature="0.01"/><geom type="capsule" fromto="0 0 0 0.3 0 0.1" size="0.02" mass="0.5"/><body pos="0.3 0 0.1">'
       '<joint type="hinge" axis="1 0 0" armature="0.005" damping="{damping}"/><geom type="capsule" '
       'fromto="0 0 0 0 0.2 0" size="0.02" mass="0.3"/></body></body></body></worldbody><keyframe>'
       '<key qpos="0.3 -0.5 0.8" qvel="1 0 -2"/></keyframe></mujoco>')
DURATION = 0.5  # s


def _reference(damping: float) -> np.ndarray:
    """qpos after DURATION by MuJoCo's RK4 at dt = 1e-5."""
    model = mujoco.MjModel.from_xml_string(ARM.format(dt=1e-5, integrator="RK4", damping=damping))
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, 0)
    for _ in range(round(DURATION / 1e-5)):
        mujoco.mj_step(model, data)
    return data.qpos.copy()


@pytest.mark.parametrize("dt", [1e-3, 1e-2])
def test_a_carriage_with_armature_accelerates_as_its_mass_plus_armature(dt):
    """F = 3 N on a 2 kg carriage with a 0.5 kg armature: x = F t^2 / (2 (m + a)), exactly (velocity Verlet is exact
    for a constant acceleration); without the armature, F t^2 / 2m."""
    for armature in (0.0, 0.5):
        sim = mechgym.load(CARRIAGE.format(armature=armature), backend="mechgym", dt=dt)
        sim.ctrl = [3.0]
        sim.step(round(1.0 / dt))
        assert sim.qpos[0] == pytest.approx(3.0 / (2.0 * (2.0 + armature)), abs=1e-13)
        assert sim.qvel[0] == pytest.approx(3.0 / (2.0 + armature), abs=1e-13)


@pytest.mark.parametrize("damping", [0.0, 0.05])
def test_an_arm_with_armature_follows_mujoco_rk4_at_second_order_and_keeps_its_energy(damping):
    """The three-hinge arm against MuJoCo's RK4 at 1e-5 s (the same ODE: MuJoCo's armature is the joint-space inertia's
    diagonal): the error after 0.5 s quarters when dt halves (1.7e-5 rad at 1 ms measured, where MuJoCo's own Euler
    is 4.5e-3 rad off); undamped, the energy (the armature's 1/2 a qvel^2 included, as MuJoCo's) stays within an
    O(dt^2) band (5.3e-5 J at 1 ms measured), with the damping too."""
    reference = _reference(damping)
    errors, drifts = [], []
    for dt in (1e-3, 5e-4):
        sim = mechgym.load(ARM.format(dt=dt, integrator="Euler", damping=damping), backend="mechgym")
        assert sim.energy() == pytest.approx(mechgym.load(ARM.format(dt=dt, integrator="Euler", damping=damping),
                                                          backend="mujoco").energy(), rel=1e-12)
        start, drift = sim.energy(), 0.0
        for _ in range(round(DURATION / dt)):
            sim.step(1)
            drift = max(drift, abs(sim.energy() - start))
        errors.append(np.abs(sim.qpos - reference).max())
        drifts.append(drift)
    assert errors[0] < 5e-5 and 3.5 < errors[0] / errors[1] < 4.5
    if not damping:
        assert drifts[0] < 1e-4 and 3.5 < drifts[0] / drifts[1] < 4.5


@pytest.mark.parametrize("scene", ["hopper.xml", "half_cheetah.xml", "walker2d.xml", "swimmer.xml"])
def test_gymnasium_scenes_with_armature_run_under_random_controls(scene):
    """Gymnasium's MuJoCo scenes whose every joint has an armature (the reason they were refused): 1 s of uniform
    random controls, at their own timestep and at four times it, without a failure."""
    xml = open(os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets", scene)).read()
    timestep = mujoco.MjModel.from_xml_string(xml).opt.timestep
    for dt in (timestep, 4 * timestep):
        sim = mechgym.load(xml, backend="mechgym", dt=dt)
        rng = np.random.default_rng(0)
        low, high = sim.model.actuator_ctrlrange.T
        while sim.time < 1.0:
            sim.ctrl = rng.uniform(low, high)
            sim.step(5)
        assert np.isfinite(sim.qpos).all()
