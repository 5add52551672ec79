"""The three bundled scenes say what their issues and seeds say (numbers from the seeds, not from us)."""

import math

import mujoco
import numpy as np
import pytest

import mechgym
from mechgym.scene import compile_model, contact_material


def geom(model, name):
    return model.geom(mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, name))


def body(model, name):
    return model.body(mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, name))


class TestCubeDrop:
    model = compile_model("cube_drop")

    def test_geometry_is_seed_003s(self):
        slab, cube = geom(self.model, "slab"), geom(self.model, "cube")
        np.testing.assert_allclose(slab.size, [0.12, 0.12, 0.005])  # 24 x 24 x 1 cm
        assert slab.pos[2] + slab.size[2] == pytest.approx(0.30)  # top at 30 cm
        np.testing.assert_allclose(cube.size, [0.025] * 3)  # 5 cm cube
        assert body(self.model, "cube").mass[0] == pytest.approx(0.1)
        assert body(self.model, "cube").pos[2] == pytest.approx(1.30)
        assert geom(self.model, "floor").type[0] == mujoco.mjtGeom.mjGEOM_PLANE

    def test_thrust_actuators_push_along_the_world_axes(self):
        sim = mechgym.load("cube_drop", backend="mujoco", dt=0.001)
        sim.ctrl = [0.5, -0.25, 1.5]  # N
        sim.step(100)
        a = np.array([0.5, -0.25, 1.5]) / 0.1 + sim.model.opt.gravity  # m/s^2
        np.testing.assert_allclose(sim.body("cube").linvel, a * sim.time, rtol=1e-12, atol=1e-15)


class TestSliderCrank:
    model = compile_model("slider_crank")
    l1, l2, a, b, c = 0.1530, 0.3060, 0.05, 0.025, 0.001

    def test_links_and_masses_are_table_1(self):
        assert body(self.model, "rod").pos[0] == pytest.approx(self.l1)
        assert body(self.model, "slider").pos[0] == pytest.approx(self.l2)
        for name, mass, inertia in (("crank", 0.038, 7.4e-5), ("rod", 0.038, 5.9e-4), ("slider", 0.076, 2.7e-6)):
            b = body(self.model, name)
            assert b.mass[0] == pytest.approx(mass)
            # inertia about the out-of-plane (z) axis through the centre of mass
            rotation = np.zeros(9)
            mujoco.mju_quat2Mat(rotation, b.iquat)
            z_inertia = rotation.reshape(3, 3)[2] ** 2 @ b.inertia
            assert z_inertia == pytest.approx(inertia)
        assert body(self.model, "crank").ipos[0] == pytest.approx(self.l1 / 2)
        assert body(self.model, "rod").ipos[0] == pytest.approx(self.l2 / 2)
        np.testing.assert_allclose(self.model.opt.gravity, [0, -9.81, 0])

    def test_notch_height_is_2_b_plus_c_with_frictionless_restitutive_walls(self):
        top, bottom, slider = (geom(self.model, n) for n in ("wall_top", "wall_bottom", "slider"))
        np.testing.assert_allclose(slider.size[:2], [self.a, self.b])
        d = (top.pos[1] - top.size[1]) - (bottom.pos[1] + bottom.size[1])
        assert d == pytest.approx(2 * (self.b + self.c))
        stroke = (self.l2 - self.l1 - self.a, self.l1 + self.l2 + self.a)
        assert top.pos[0] - top.size[0] < stroke[0] and top.pos[0] + top.size[0] > stroke[1]
        material = contact_material(self.model)
        for wall in (top, bottom):
            assert wall.condim[0] == 1 and slider.condim[0] == 1
            assert material.pair_restitution(wall.id, slider.id) == pytest.approx(0.4)

    def test_initial_absolute_angular_velocities_are_150_minus_75_0(self):
        sim = mechgym.load("slider_crank", backend="mujoco")
        np.testing.assert_array_equal(sim.qpos, [0, 0, 0])
        omegas = [sim.body(name).angvel[2] for name in ("crank", "rod", "slider")]
        np.testing.assert_allclose(omegas, [150.0, -75.0, 0.0], atol=1e-12)
        # the slider's centre moves along x only: v = l1 w1 + l2 w2 perpendicular to the horizontal links
        np.testing.assert_allclose(sim.body("slider").linvel[1], self.l1 * 150 - self.l2 * 75, atol=1e-12)

    def test_on_the_in_house_engine_the_passive_slider_jammed_across_its_notch_at_1_ms_goes_on(self):
        """At dt = 1 ms the slider strikes both walls within one step at t = 0.238 s (its two corners driven 2 and
        17 mm into opposite walls): no correction meets both rebound gaps, so they are dropped and the
        penetration alone is removed; the position correction ran out of sweeps there before."""
        sim = mechgym.load("slider_crank", backend="mechgym", dt=1e-3)
        sim.step(400)
        walls = {frozenset((e.geom1, e.geom2)) - {"slider"} for e in sim.events if e.time > 0.2}
        assert sim.step_count == 400 and walls == {frozenset({"wall_top"}), frozenset({"wall_bottom"})}

    def test_only_the_slider_can_touch_the_walls(self):
        m = self.model
        can_touch = {(geom(m, g1).name, geom(m, g2).name) for g1 in ("crank", "rod", "slider")
                     for g2 in ("wall_top", "wall_bottom")
                     if (m.geom_contype[geom(m, g1).id] & m.geom_conaffinity[geom(m, g2).id])
                     or (m.geom_contype[geom(m, g2).id] & m.geom_conaffinity[geom(m, g1).id])}
        assert can_touch == {("slider", "wall_top"), ("slider", "wall_bottom")}


class TestGripper:
    model = compile_model("gripper")

    def test_card_is_thin_and_light_and_stands_in_its_fixture(self):
        card = geom(self.model, "card")
        np.testing.assert_allclose(2 * card.size, [0.001, 0.06, 0.08])
        assert body(self.model, "card").mass[0] == pytest.approx(0.01)
        slot = (geom(self.model, "fixture_right").pos[0] - geom(self.model, "fixture_right").size[0]) - (
            geom(self.model, "fixture_left").pos[0] + geom(self.model, "fixture_left").size[0])
        assert 2 * card.size[0] < slot < 2 * card.size[0] + 0.001
        sim = mechgym.load("gripper", backend="mujoco")
        sim.step(1000)
        assert sim.body("card").pos[2] == pytest.approx(card.size[2], abs=2e-4)  # standing on the table
        assert math.degrees(2 * math.acos(min(1.0, abs(sim.body("card").quat[0])))) < 1.0

    def test_the_gripper_can_pinch_and_lift_the_card_out_on_mujoco(self):
        sim = mechgym.load("gripper", backend="mujoco")
        sim.ctrl = [-0.07, 0.0, 0.0]
        sim.step(500)
        sim.ctrl = [-0.07, 0.035, 0.035]
        sim.step(500)
        sim.ctrl = [0.05, 0.035, 0.035]
        sim.step(1500)
        card_bottom = sim.body("card").pos[2] - geom(self.model, "card").size[2]
        fixture_top = geom(self.model, "fixture_left").pos[2] + geom(self.model, "fixture_left").size[2]
        assert card_bottom > fixture_top + 0.05

    @pytest.mark.parametrize("dt", [0.0005, 0.002, 0.005, 0.01])
    def test_on_the_in_house_engine_the_servos_settle_where_their_springs_balance_gravity(self, dt):
        """Fingers held part-closed above the card by the three position servos (kp = 2000 N/m, joint damping 20 and
        60 N s/m). At rest the fingers sit at their targets (their slides are horizontal) and the lift below its
        target by the carriage's and fingers' weight over kp."""
        sim = mechgym.load("gripper", backend="mechgym", dt=dt)
        target = np.array([0.05, 0.01, 0.02])  # m: lift, left finger, right finger
        sim.ctrl = target
        sim.step(round(2.0 / dt))
        moving = sim.model.body("carriage").subtreemass[0] * -sim.model.opt.gravity[2]  # N: with both fingers
        joints = [sim.model.joint(name).qposadr[0] for name in ("lift", "left_finger", "right_finger")]
        np.testing.assert_allclose(sim.qpos[joints], target - [moving / 2000.0, 0.0, 0.0], atol=1e-9)
