"""The MuJoCo backend through the Simulator interface: closed forms for MuJoCo's semi-implicit Euler."""

import math

import mujoco
import numpy as np
import pytest

import mechgym
from tests.conftest import mjcf

FREE_BOX = mjcf('<body name="box" pos="0 0 1"><freejoint/>'
                '<geom type="box" size="0.1 0.2 0.3" mass="1.5" contype="0" conaffinity="0"/></body>')
ZERO_G = '<option gravity="0 0 0"/>'


def load(xml=FREE_BOX, dt=0.001, backend="mujoco"):
    return mechgym.load(xml, backend=backend, dt=dt)


def slide(actuator: str, joint_extra: str = "") -> str:
    return mjcf(f'<body name="cart"><joint name="x" type="slide" axis="1 0 0" {joint_extra}/>'
                '<geom type="box" size="0.1 0.1 0.1" mass="2" contype="0" conaffinity="0"/></body>',
                actuator, options=ZERO_G)


class TestTime:
    def test_time_is_step_count_times_dt_over_a_million_steps(self):
        dt = 0.001
        sim = load(mjcf('<body name="b"><freejoint/><geom size="0.1" contype="0" conaffinity="0"/></body>',
                        options=ZERO_G), dt=dt)
        for _ in range(10):
            sim.step(100_000)
        assert sim.step_count == 1_000_000
        assert sim.time == 1_000_000 * dt
        accumulated = math.fsum([dt] * 0) + sum([dt] * 1_000_000)  # what adding dt every step gives
        assert abs(sim.time - 1000.0) <= 1e-12 * 1000 < abs(accumulated - 1000.0)

    def test_dt_none_keeps_the_scenes_timestep(self):
        assert mechgym.load("slider_crank", backend="mujoco").dt == 1e-4
        assert load(dt=0.0025).dt == 0.0025


class TestStateRoundTrip:
    def test_restoring_a_state_repeats_the_continuation_bit_for_bit(self):
        sim = mechgym.load("cube_drop", backend="mujoco", dt=0.002)
        sim.apply_force("cube", [0.3, 0, 0], torque=[0, 0.01, 0], start=0.1, stop=0.5)
        sim.step(200)  # falling, push active
        state = sim.get_state()
        sim.step(300)  # through the impact
        first = (sim.qpos, sim.qvel, sim.time, sim.events, sim.energy())
        sim.step(10)
        sim.set_state(state)
        sim.step(300)
        second = (sim.qpos, sim.qvel, sim.time, sim.events, sim.energy())
        np.testing.assert_array_equal(first[0], second[0])
        np.testing.assert_array_equal(first[1], second[1])
        assert first[2:] == second[2:]

    def test_looking_at_the_state_does_not_change_the_trajectory(self):
        quiet, watched = (mechgym.load("cube_drop", backend="mujoco", dt=0.004) for _ in range(2))
        quiet.step(250)
        for _ in range(250):
            watched.step()
            watched.body("cube"), watched.contacts(), watched.energy()
        np.testing.assert_array_equal(quiet.qpos, watched.qpos)
        np.testing.assert_array_equal(quiet.qvel, watched.qvel)

    def test_reset_returns_to_the_keyframe_and_clears_forces_and_events(self):
        sim = mechgym.load("slider_crank", backend="mujoco")
        start = (sim.qpos, sim.qvel)
        sim.apply_force("slider", [1, 0, 0])
        sim.step(3000)
        assert sim.events
        sim.reset()
        assert sim.time == 0 and sim.events == []
        np.testing.assert_array_equal(sim.qvel, start[1])
        sim.step(3000)
        fresh = mechgym.load("slider_crank", backend="mujoco")
        fresh.step(3000)
        np.testing.assert_array_equal(sim.qpos, fresh.qpos)

    def test_a_state_from_another_backend_is_refused(self):
        sim = load()
        state = sim.get_state()
        with pytest.raises(ValueError, match="mujoco"):
            sim.set_state(state.__class__("mechgym", *list(state.__dict__.values())[1:]))


class TestForceWindows:
    """Semi-implicit Euler kicks v by dt * F/m each step, so the impulse of a window is exact."""

    @pytest.mark.parametrize("dt", [0.001, 0.003, 0.007, 0.3])
    def test_3_newtons_for_2_seconds_on_1_5_kg_gives_4_m_per_s(self, dt):
        sim = load(mjcf('<body name="box"><freejoint/><geom type="box" size="0.1 0.1 0.1" mass="1.5" '
                        'contype="0" conaffinity="0"/></body>', options=ZERO_G), dt=dt)
        sim.apply_force("box", [3.0, 0.0, 0.0], start=0.0, stop=2.0)
        sim.step(math.ceil(2.5 / dt))
        assert sim.body("box").linvel[0] == pytest.approx(4.0, rel=1e-12, abs=0)

    def test_an_odd_window_delivers_force_times_its_length(self):
        sim = load(mjcf('<body name="box"><freejoint/><geom type="box" size="0.1 0.1 0.1" mass="1.5" '
                        'contype="0" conaffinity="0"/></body>', options=ZERO_G), dt=0.01)
        sim.apply_force("box", [0.0, -2.0, 0.5], start=0.1234, stop=0.5678)
        sim.step(100)
        np.testing.assert_allclose(sim.body("box").linvel, np.array([0, -2.0, 0.5]) * 0.4444 / 1.5, rtol=1e-12)

    def test_a_torque_window_changes_angular_momentum_by_torque_times_overlap(self):
        sim = load(mjcf('<body name="ball"><freejoint/><geom type="sphere" size="0.1" mass="2" '
                        'contype="0" conaffinity="0"/></body>', options=ZERO_G), dt=0.004)
        sim.apply_force("ball", [0, 0, 0], torque=[0, 0, 0.3], start=0.01, stop=0.0333)
        sim.step(20)
        inertia = 0.4 * 2 * 0.1**2  # solid sphere
        assert sim.body("ball").angvel[2] == pytest.approx(0.3 * 0.0233 / inertia, rel=1e-12)

    @pytest.mark.parametrize("force, torque, start, stop", [
        ([1, 2], (0, 0, 0), 0, 1), ([1, 2, math.nan], (0, 0, 0), 0, 1), ([1, 2, 3], (0, 0, 0), 1, 1),
        ([1, 2, 3], (0, math.inf, 0), 0, 1), ([1, 2, 3], (0, 0, 0), math.nan, 1), ([1, 2, 3], (0, 0, 0), 0, math.nan),
    ])
    def test_bad_windows_are_refused(self, force, torque, start, stop):
        with pytest.raises(ValueError):
            load().apply_force("box", force, torque, start, stop)


class TestActuators:
    """One step from rest: semi-implicit Euler gives qvel = dt * force / m with force from the actuator law."""

    dt, mass = 0.002, 2.0

    def first_velocity(self, actuator, ctrl, joint_extra="", qpos=0.0):
        sim = load(slide(actuator, joint_extra), dt=self.dt)
        if qpos:
            sim.set_state(_with_qpos(sim, qpos))
        sim.ctrl = [ctrl]
        sim.step()
        return sim.qvel[0]

    def test_motor_force_is_gear_times_ctrl(self):
        v = self.first_velocity('<motor joint="x" gear="3"/>', 0.7)
        assert v == pytest.approx(self.dt * 3 * 0.7 / self.mass, rel=1e-12)

    def test_position_servo_force_is_kp_times_error(self):
        v = self.first_velocity('<position joint="x" kp="50"/>', 0.2, qpos=0.05)
        assert v == pytest.approx(self.dt * 50 * (0.2 - 0.05) / self.mass, rel=1e-12)

    def test_velocity_servo_force_is_kv_times_velocity_error(self):
        v = self.first_velocity('<velocity joint="x" kv="4"/>', 1.5)
        assert v == pytest.approx(self.dt * 4 * 1.5 / self.mass, rel=1e-12)

    def test_general_actuator_is_gain_times_ctrl_plus_bias(self):
        v = self.first_velocity('<general joint="x" gainprm="5" biasprm="1 -10 0" biastype="affine"/>',
                                0.3, qpos=0.02)
        assert v == pytest.approx(self.dt * (5 * 0.3 + 1 - 10 * 0.02) / self.mass, rel=1e-12)

    def test_ctrlrange_clamps_the_control(self):
        clamped = self.first_velocity('<motor joint="x" ctrllimited="true" ctrlrange="-1 1"/>', 5.0)
        assert clamped == pytest.approx(self.dt * 1.0 / self.mass, rel=1e-12)

    def test_forcerange_clamps_the_actuator_force_before_the_gear(self):
        clamped = self.first_velocity('<motor joint="x" gear="10" forcelimited="true" forcerange="-4 4"/>', 6.0)
        assert clamped == pytest.approx(self.dt * 10 * 4.0 / self.mass, rel=1e-12)


def _with_qpos(sim, qpos):
    """A state whose joint position is ``qpos``: set it through MuJoCo, then take the state."""
    sim.data.qpos[0] = qpos
    return sim.get_state()


class TestObservations:
    def test_energy_of_a_falling_box_is_kinetic_plus_potential(self):
        sim = load(dt=0.01)
        sim.step(37)
        v, z = sim.body("box").linvel, sim.body("box").pos[2]
        assert sim.energy() == pytest.approx(0.5 * 1.5 * v @ v + 1.5 * 9.81 * z, rel=1e-12)

    def test_body_velocity_is_the_free_joints_velocity_in_the_world_frame(self):
        """MuJoCo's free joint: qvel[:3] is the frame origin's velocity (world), qvel[3:] the angular one (local)."""
        sim = load(mjcf('<body name="b" pos="0 0 1"><freejoint/><geom type="box" size="0.1 0.1 0.1" '
                        'pos="0.5 0 0" mass="1" contype="0" conaffinity="0"/></body>', options=ZERO_G))
        sim.data.qvel[:] = [1.0, 0.0, 0.0, 0.3, 0.0, 2.0]
        sim.step(50)
        body, qvel = sim.body("b"), sim.qvel
        rotation = np.zeros(9)
        mujoco.mju_quat2Mat(rotation, body.quat)
        np.testing.assert_allclose(body.linvel, qvel[:3], atol=1e-14)
        np.testing.assert_allclose(body.angvel, rotation.reshape(3, 3) @ qvel[3:], atol=1e-14)
        np.testing.assert_allclose(body.pos, sim.qpos[:3], atol=1e-14)

    def test_a_resting_cube_carries_its_weight_through_the_contacts(self):
        sim = mechgym.load("cube_drop", backend="mujoco", dt=0.002)
        sim.step(1000)
        contacts = [c for c in sim.contacts() if {c.geom1, c.geom2} == {"cube", "slab"}]
        assert len(contacts) == 4
        assert sum(c.normal_force for c in contacts) == pytest.approx(0.1 * 9.81, rel=1e-6)
        for c in contacts:
            np.testing.assert_allclose(c.normal, [0, 0, 1], atol=1e-12)

    def test_friction_on_geom2_opposes_a_push_that_static_friction_holds(self):
        sim = mechgym.load("cube_drop", backend="mujoco", dt=0.002)
        sim.step(1000)
        sim.apply_force("cube", [0.5, 0, 0], start=sim.time)  # below mu m g = 0.981 N
        sim.step(250)
        friction = sum(c.friction_force for c in sim.contacts() if c.geom2 == "cube")
        np.testing.assert_allclose(friction, [-0.5, 0, 0], atol=1e-6)

    def test_the_landing_is_one_impact_event_at_the_closed_form_speed(self):
        dt = 0.002
        sim = mechgym.load("cube_drop", backend="mujoco", dt=dt)
        sim.step(1000)
        (event,) = sim.events
        assert {event.geom1, event.geom2} == {"cube", "slab"}
        # semi-implicit Euler free fall: after k steps z_k = z0 - g dt^2 k (k + 1) / 2 and v_k = -g dt k;
        # the impact is seen at the state of the first step k whose cube overlaps the slab
        k = next(k for k in range(1, 1000) if 1.30 - 9.81 * dt**2 * k * (k + 1) / 2 - 0.025 < 0.30)
        assert event.time == pytest.approx(k * dt, abs=1e-12)
        assert event.speed == pytest.approx(9.81 * dt * k, rel=1e-9)


class TestBadInput:
    def test_unknown_backend_lists_the_backends(self):
        with pytest.raises(ValueError, match=r"\['mechgym', 'mujoco'\]"):
            mechgym.load("cube_drop", backend="bullet")

    @pytest.mark.parametrize("dt", [0.0, -0.001, math.nan, math.inf, "0.01", True])
    def test_bad_dt(self, dt):
        with pytest.raises(ValueError, match="dt"):
            mechgym.load("cube_drop", backend="mujoco", dt=dt)

    def test_unknown_body_lists_the_bodies(self):
        sim = mechgym.load("cube_drop", backend="mujoco")
        with pytest.raises(ValueError, match="cube"):
            sim.body("cub")
        with pytest.raises(ValueError, match="cube"):
            sim.apply_force("table", [0, 0, 1])

    def test_nan_ctrl_is_refused_before_stepping(self):
        sim = mechgym.load("cube_drop", backend="mujoco")
        sim.ctrl[1] = math.nan
        with pytest.raises(ValueError, match="thrust_y"):
            sim.step()
        assert sim.time == 0.0

    @pytest.mark.parametrize("n", [-1, 1.5, True, "3"])
    def test_bad_step_counts(self, n):
        with pytest.raises(ValueError, match="n must be"):
            load().step(n)

    def test_ctrl_of_the_wrong_shape(self):
        with pytest.raises(ValueError, match=r"\(3,\)"):
            mechgym.load("cube_drop", backend="mujoco").ctrl = [1.0, 2.0]

    def test_a_diverging_simulation_raises_and_stays_failed_until_reset(self, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)  # MuJoCo writes its warning to MUJOCO_LOG.TXT in the working directory
        sim = load(slide('<motor joint="x"/>', 'stiffness="1e12"'), dt=0.01)
        sim.data.qpos[0] = 1.0
        with pytest.raises(mechgym.SimulationError, match="non-finite|unstable"):
            sim.step(1000)
        assert np.isfinite(sim.qpos).all()
        with pytest.raises(mechgym.SimulationError, match="reset"):
            sim.step()
        sim.reset()
        sim.step()
