"""The in-house engine behind the Simulator interface: MuJoCo's layout and semantics, clear failures."""

from __future__ import annotations

import math
import re
import warnings

import mujoco
import numpy as np
import pytest

import mechgym
from mechgym import SimulationError
from mechgym.robustness import cube_drop
from tests.physics.scenes import free_body, key, scene

OFFSET_BOX = 'type="box" size="0.15 0.1 0.05" mass="1.3" pos="0.1 0.02 -0.03" euler="10 20 30"'
STATIC = ('<body name="post" pos="0.5 0 0" euler="0 30 0">'
          '<geom size="0.05" mass="2" contype="0" conaffinity="0"/></body>')
# A motor with force and torque gear (body axes, ctrl clamped), a position servo with damping, a velocity
# servo, a world-axes (jointinparent) torque motor with a force limit and a thruster at a turned site, on a
# body whose centre of mass is off its origin: every frame convention of MuJoCo's free joint is exercised.
ACTUATORS = (
    '<motor name="thrust" joint="b_free" gear="0.3 -0.2 1 0.1 0.2 0.3" ctrllimited="true" ctrlrange="-2 2"/>'
    '<position name="servo" joint="b_free" gear="1 0 0 0 0 0" kp="5" kv="2"/>'
    '<velocity name="spin" joint="b_free" gear="0 0 0 0 1 0" kv="0.05"/>'
    '<motor name="twist" jointinparent="b_free" gear="0 0 0 0.2 0 -0.1" forcelimited="true" forcerange="-0.5 0.5"/>'
    '<motor name="jet" site="jet" gear="0 0 1 0 0 0.05"/>'
)
JET = '<site name="jet" pos="-0.1 0.05 0.02" euler="20 10 -30"/>'
QPOS, QVEL = [0.3, -0.2, 1.1, 0.9, 0.1, 0.3, 0.2], [1.5, -0.7, 4.0, 0.4, -2.5, 0.8]
CTRL = [3.0, 0.4, 2.0, 1.0, 2.5]


def driven(integrator: str = "Euler") -> str:
    return scene(free_body(geom=OFFSET_BOX, joint='damping="0.05"', children=JET) + STATIC, actuators=ACTUATORS,
                 option=f'integrator="{integrator}"', keyframe=key(QPOS, QVEL, CTRL))


def test_the_state_reads_like_mujocos():
    ours, theirs = (mechgym.load(driven(), backend=b) for b in ("mechgym", "mujoco"))
    np.testing.assert_allclose(ours.qpos, theirs.qpos, rtol=0, atol=1e-15)
    np.testing.assert_allclose(ours.qvel, theirs.qvel, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(ours.ctrl, theirs.ctrl)
    for name in ("b", "post", "world"):
        a, b = ours.body(name), theirs.body(name)
        for field in ("pos", "quat", "linvel", "angvel"):
            np.testing.assert_allclose(getattr(a, field), getattr(b, field), rtol=0, atol=1e-14, err_msg=field)
    assert ours.energy() == pytest.approx(theirs.energy(), rel=1e-14)
    assert ours.contacts() == [] and ours.events == []


def test_actuated_trajectories_agree_with_mujoco_at_second_order():
    """MuJoCo's RK4 at dt = 1e-4 is exact to ~1e-13 here; our error after 1 s must fall ~4x per halving."""
    reference = mechgym.load(driven("RK4"), backend="mujoco", dt=1e-4)
    reference.step(10_000)
    errors = []
    for dt in (0.02, 0.01, 0.005):
        sim = mechgym.load(driven(), backend="mechgym", dt=dt)
        sim.step(round(1.0 / dt))
        turn = np.zeros(3)
        mujoco.mju_subQuat(turn, sim.qpos[3:], reference.qpos[3:])
        errors.append([np.abs(sim.qpos[:3] - reference.qpos[:3]).max(), np.abs(turn).max(),
                       np.abs(sim.qvel - reference.qvel).max()])
    errors = np.array(errors)
    ratios = errors[:-1] / errors[1:]
    assert np.all((3.5 < ratios) & (ratios < 4.5)), ratios
    assert errors[-1].max() < 0.01  # and the constant is small: 5 ms is within 3e-3 of MuJoCo


def test_ctrl_is_a_writable_view_and_bad_controls_are_refused():
    sim = mechgym.load(driven(), backend="mechgym", dt=0.01)
    sim.ctrl[0] = 0.0
    sim.ctrl = [0.0] * 5
    sim.step(3)
    sim.ctrl[1] = np.nan
    with pytest.raises(ValueError, match="servo"):
        sim.step(1)
    with pytest.raises(ValueError, match="shape"):
        sim.ctrl = [1.0, 2.0]
    with pytest.raises(ValueError):
        sim.apply_force("b", [np.inf, 0.0, 0.0])
    with pytest.raises(ValueError, match="unknown body"):
        sim.apply_force("nobody", [1.0, 0.0, 0.0])


def test_a_non_finite_state_is_refused_and_never_exposed():
    sim = mechgym.load(scene(free_body(geom='type="sphere" size="0.01" mass="1e-3"')), backend="mechgym", dt=0.01)
    sim.step(4)
    good = sim.qpos
    sim.apply_force("b", [1e308, 0.0, 0.0], start=0.05, stop=0.06)
    with pytest.raises(SimulationError, match="non-finite"):
        sim.step(10)
    assert sim.step_count == 5  # the fifth step ran clean; the sixth overflowed and was rolled back
    assert np.isfinite(sim.qpos).all() and np.isfinite(sim.qvel).all()
    assert not np.array_equal(sim.qpos, good)
    with pytest.raises(SimulationError, match="failed earlier"):
        sim.step(1)
    sim.reset()
    sim.step(1)


def damped_spheres(*damping: float) -> str:
    """1 kg spheres 1 m apart, each on a free joint with the given damping (N s/m), moving along x at 1 m/s."""
    bodies = "".join(free_body(f"s{i}", geom='type="sphere" size="0.1" mass="1"', joint=f'damping="{d}"',
                               pos=f"{i} 0 0") for i, d in enumerate(damping))
    qpos = [x for i in range(len(damping)) for x in (i, 0, 0, 1, 0, 0, 0)]
    return scene(bodies, keyframe=key(qpos, [1, 0, 0, 0, 0, 0] * len(damping)))


def test_damping_stiff_along_one_direction_gives_the_trapezoidal_rule():
    """h d / (2 m) = 0.01 x 1000 / 2 = 5: the plain fixed-point map of the closing kick diverges (factor 5), its
    Anderson acceleration is exact on a map linear along one direction: v' = v (1 - 5) / (1 + 5)."""
    sim = mechgym.load(damped_spheres(1000), backend="mechgym", dt=0.01)
    sim.step(1)
    assert sim.qvel[0] == pytest.approx(-2.0 / 3.0, rel=1e-12)


def dyadic_tilings(size: float, smallest: float):
    """Every tiling of an interval of length ``size`` by aligned halves, down to parts of ``smallest``: the
    interval whole, or each half tiled (the parts of a step taken in parts, ``physics.tolerances.MAX_SUBDIVISION``)."""
    yield (size,)
    if size > smallest:
        for first in dyadic_tilings(size / 2, smallest):
            for second in dyadic_tilings(size / 2, smallest):
                yield first + second


def test_damping_too_stiff_for_the_fixed_point_at_dt_is_integrated_in_parts():
    """Factors 5 and 15 along two directions: depth-1 acceleration cancels one of them at a time and diverges at
    dt, so the step is taken in parts, each the trapezoidal rule: v' = v prod((1 - a_i) / (1 + a_i)),
    a_i = h_i d / 2m, over the parts h_i of a dyadic tiling of dt, the same one for both spheres."""
    sim = mechgym.load(damped_spheres(1000, 3000), backend="mechgym", dt=0.01)
    sim.step(1)
    assert sim.subdivided_steps == 1

    def rule(d, parts):
        return math.prod((1.0 - h * d / 2.0) / (1.0 + h * d / 2.0) for h in parts)

    assert any(sim.qvel[0] == pytest.approx(rule(1000, parts), rel=1e-12)
               and sim.qvel[6] == pytest.approx(rule(3000, parts), rel=1e-12)
               for parts in dyadic_tilings(0.01, 0.01 / 16) if len(parts) > 1)


def test_damping_too_stiff_for_the_fixed_point_even_in_parts_is_reported():
    """Factors 1,280 and 3,840 at dt: still 1.25 and 3.75 in parts of dt / 1024 (``MAX_SUBDIVISION``)."""
    sim = mechgym.load(damped_spheres(256000, 768000), backend="mechgym", dt=0.01)
    with pytest.raises(SimulationError, match="too stiff"):
        sim.step(1)
    assert sim.step_count == 0 and np.array_equal(sim.qvel, [1, 0, 0, 0, 0, 0] * 2)


# A double pendulum whose elbow is a damped, position-servoed hinge: constraint rows, warm-start impulses, hinge
# turns and an implicit closing kick all enter the state.
JOINTED = """<mujoco><option gravity="0 0 -9.81"><flag contact="disable"/></option><worldbody>
  <body name="upper"><joint name="shoulder" type="hinge" axis="0 1 0"/>
    <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.04" mass="1"/>
    <body name="lower" pos="0 0 -0.5"><joint name="elbow" type="hinge" axis="0 1 0" damping="0.1"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.03" mass="0.6"/></body></body>
</worldbody><actuator><position joint="elbow" kp="3"/></actuator>
<keyframe><key qpos="1.6 -0.8" qvel="4 0" ctrl="0.5"/></keyframe></mujoco>"""


def test_get_state_and_set_state_continue_bit_for_bit_with_constraints():
    sim = mechgym.load(JOINTED, backend="mechgym", dt=1e-3)
    sim.step(123)
    saved = sim.get_state()
    warm_starts = saved.physics[0].impulse_position, saved.physics[0].impulse_velocity, saved.physics[0].chord_rate
    assert all(np.any(array) for array in warm_starts)
    sim.apply_force("lower", [0.5, 0, 0], start=0.2, stop=0.3)
    sim.step(400)
    first = (sim.qpos, sim.qvel, sim.energy(), sim.constraint_forces(), sim.body("lower"))
    sim.set_state(saved)
    assert sim.time == 123 * 1e-3
    sim.apply_force("lower", [0.5, 0, 0], start=0.2, stop=0.3)
    sim.step(400)
    second = (sim.qpos, sim.qvel, sim.energy(), sim.constraint_forces(), sim.body("lower"))
    assert sim.time == 523 * 1e-3 and sim.step_count == 523
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])
    assert first[2] == second[2]
    assert first[3].keys() == second[3].keys()
    for key_ in first[3]:
        np.testing.assert_array_equal(first[3][key_], second[3][key_])
    np.testing.assert_array_equal(first[4].pos, second[4].pos)
    # A fresh load continues exactly like a reset one.
    sim.reset()
    assert all(not np.any(values) for values in sim.constraint_forces().values())
    fresh = mechgym.load(JOINTED, backend="mechgym", dt=1e-3)
    sim.step(50)
    fresh.step(50)
    np.testing.assert_array_equal(sim.qpos, fresh.qpos)


def _conflicting_rods() -> str:
    """Two rods between the same two sites with lengths 1 m and 1.1 m: no pose satisfies both."""
    return scene('<site name="anchor"/><body name="ball" pos="0 0 -1"><freejoint/><site name="knot"/>'
                '<geom size="0.05" mass="1" contype="0" conaffinity="0"/></body>',
                extra='<tendon><spatial name="a"><site site="anchor"/><site site="knot"/></spatial>'
                      '<spatial name="b"><site site="anchor"/><site site="knot"/></spatial></tendon>'
                      '<equality><tendon tendon1="a"/><tendon tendon1="b" polycoef="0.1 0 0 0 0"/></equality>')


def test_rods_that_cannot_all_hold_are_reported_and_the_state_is_kept():
    sim = mechgym.load(_conflicting_rods(), backend="mechgym", dt=1e-3)
    before = sim.qpos
    with pytest.raises(SimulationError, match=r"constraint projection did not converge.*at the step's start equality "
                                              r"'<equality #1>' \(tendon\) off by 0\.1 m \(the engine's equalities"):
        sim.step(5)
    assert sim.step_count == 0 and np.array_equal(sim.qpos, before)
    with pytest.raises(SimulationError, match="failed earlier"):
        sim.step(1)


def test_a_failure_names_the_fastest_turning_body_and_its_rate():
    """A step that fails names the body that turns fastest at the state it started from, with its rate and the
    angle it turns in a step: the usual cause is a rate the step cannot follow (an undamped motor spinning a light
    link to thousands of rad/s). The ball spins at (3, 4, 0) rad/s: 5 rad/s, 0.005 rad a step of 1 ms."""
    sim = mechgym.load(_conflicting_rods(), backend="mechgym", dt=1e-3)
    sim.reset(qvel=[0, 0, 0, 3, 4, 0])
    with pytest.raises(SimulationError, match=r"the fastest-turning body, 'ball', turns at 5 rad/s, 0\.005 rad a step"):
        sim.step(1)


@pytest.mark.parametrize("compiler", ["", '<compiler angle="radian"/>'])
def test_a_keyframe_beyond_a_limit_starts_at_the_bound_with_a_warning(compiler):
    """range="-0.5 0.5" is +-0.5 degrees unless the compiler reads angles in radians: a keyframe at 0.4 rad is then
    0.39 rad past the limit, which no step can take back without spinning the arm up to 390 rad/s within it (1 ms):
    every step failed, in every part. The engine's limits are hard, so the reset starts the arm at the bound, with a
    StartWarning that names the joint, its value and range and the degrees (once per simulator); the arm then
    starts at rest there, its energy the closed form -m g (l/2) cos(theta), and swings within its range. In
    radians the keyframe is inside its range: no warning, and the arm swings down from it."""
    xml = (f'<mujoco>{compiler}<worldbody><body name="arm"><joint name="j" type="hinge" axis="0 1 0" limited="true" '
           'range="-0.5 0.5"/><geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.02" mass="1"/></body>'
           '</worldbody><keyframe><key qpos="0.4"/></keyframe></mujoco>')
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sim = mechgym.load(xml, backend="mechgym", dt=1e-3)
        sim.reset()
    bound = 0.5 if compiler else math.radians(0.5)
    start = 0.4 if compiler else bound
    assert sim.qpos[0] == pytest.approx(start, abs=1e-15)
    assert sim.energy() == pytest.approx(-9.81 * 0.25 * math.cos(start), rel=1e-12)
    starts = [w for w in caught if issubclass(w.category, mechgym.StartWarning)]
    if compiler:
        assert not starts
    else:
        assert len(starts) == 1
        assert re.search(r"joint 'j' starts at 0\.4 rad, beyond its range \[-0\.00872665, 0\.00872665\] rad: the "
                         r"in-house engine starts it at 0\.00872665 .*MJCF reads a hinge's range in degrees",
                         str(starts[0].message))
    tolerance = sim.engine.linkage.solver.tolerance
    for _ in range(100):
        sim.step(1)
        assert -bound - tolerance <= sim.qpos[0] <= min(start, bound) + tolerance
    assert sim.qpos[0] < start


def test_a_reset_beyond_a_slide_range_starts_at_the_bound():
    """A slide reset 5 cm beyond its 0.1 m range starts at the bound (in m), warned once per simulator: a second reset
    beyond it warns no more; a reset within tolerance of the bound does not warn."""
    xml = ('<mujoco><worldbody><body name="carriage"><joint name="s" type="slide" axis="1 0 0" limited="true" '
           'range="-0.1 0.1"/><geom type="box" size="0.02 0.02 0.02" mass="1"/></body></worldbody></mujoco>')
    sim = mechgym.load(xml, backend="mechgym", dt=1e-3)
    with pytest.warns(mechgym.StartWarning, match=r"joint 's' starts at 0\.15 m, beyond its range \[-0\.1, 0\.1\] m"):
        sim.reset(qpos=[0.15], qvel=[1.0])
    assert sim.qpos[0] == pytest.approx(0.1, abs=1e-15) and sim.qvel[0] == pytest.approx(1.0, abs=1e-15)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sim.reset(qpos=[-0.3])
        assert sim.qpos[0] == pytest.approx(-0.1, abs=1e-15)
        sim.step(10)  # (gravity along the slide's normal: it rests at the bound)
        assert sim.qpos[0] == pytest.approx(-0.1, abs=sim.engine.linkage.solver.tolerance)


def _contacts_equal(first, second):
    assert [(c.geom1, c.geom2) for c in first] == [(c.geom1, c.geom2) for c in second]
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a.pos, b.pos)
        np.testing.assert_array_equal(a.normal, b.normal)
        assert a.normal_force == b.normal_force
        np.testing.assert_array_equal(a.friction_force, b.friction_force)


def test_get_state_and_set_state_continue_bit_for_bit_through_an_impact():
    # The cube is released 1 m above the slab and lands at about 0.45 s: save mid-fall, continue through the
    # impact to rest, restore, continue again.
    sim = mechgym.load(cube_drop.scene_spec(None), backend="mechgym", dt=2e-3)
    sim.step(150)
    saved = sim.get_state()
    assert not sim.events and not sim.contacts()
    sim.step(200)
    first = (sim.qpos, sim.qvel, sim.events, sim.contacts())
    assert [(e.geom1, e.geom2) for e in first[2]] == [("slab", "cube")]
    sim.set_state(saved)
    assert not sim.events
    sim.step(200)
    second = (sim.qpos, sim.qvel, sim.events, sim.contacts())
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])
    assert first[2] == second[2]
    _contacts_equal(first[3], second[3])
    # A reset one continues exactly like a fresh load.
    sim.reset()
    fresh = mechgym.load(cube_drop.scene_spec(None), backend="mechgym", dt=2e-3)
    sim.step(300)
    fresh.step(300)
    np.testing.assert_array_equal(sim.qpos, fresh.qpos)
    assert sim.events == fresh.events


BALL_DROP = scene('<geom name="floor" type="plane" size="1 1 0.1"/>'
                  '<body name="ball" pos="0 0 1.1"><freejoint/><geom name="ball" size="0.1" mass="1"/></body>')


@pytest.mark.parametrize("dt", [1e-3, 1e-2])
def test_a_dropped_ball_lands_at_the_closed_form_instant_and_rests_on_its_reaction(dt):
    sim = mechgym.load(BALL_DROP, backend="mechgym", dt=dt)
    sim.step(round(1.0 / dt))
    (event,) = sim.events
    g = 9.81
    assert (event.geom1, event.geom2) == ("floor", "ball")
    assert event.time == pytest.approx(math.sqrt(2.0 / g), abs=1e-6)
    assert event.speed == pytest.approx(math.sqrt(2.0 * g), rel=1e-9)
    assert sim.body("ball").pos[2] == pytest.approx(0.1, abs=1e-12)
    (contact,) = sim.contacts()
    assert (contact.geom1, contact.geom2) == ("floor", "ball")
    np.testing.assert_allclose(contact.normal, [0, 0, 1], atol=1e-15)
    np.testing.assert_allclose(contact.pos[:2], [0, 0], atol=1e-12)
    # the solve stops at tolerances.VELOCITY_TOLERANCE (1e-12 m/s): forces resolve to about m 1e-12 / dt
    assert contact.normal_force == pytest.approx(g, abs=1e-8)
    np.testing.assert_allclose(contact.friction_force, 0, atol=1e-12)


def test_a_box_placed_on_a_plane_carries_its_weight_from_the_start():
    xml = scene('<geom name="floor" type="plane" size="1 1 0.1"/>'
                '<body name="box" pos="0 0 0.05"><freejoint/><geom name="box" type="box" size="0.1 0.1 0.05" '
                'mass="2"/></body>')
    sim = mechgym.load(xml, backend="mechgym", dt=1e-3)
    for _ in range(2):
        contacts = sim.contacts()
        assert len(contacts) == 4 and {(c.geom1, c.geom2) for c in contacts} == {("floor", "box")}
        assert sum(c.normal_force for c in contacts) == pytest.approx(2 * 9.81, abs=1e-8)
        sim.step(100)
    assert sim.body("box").pos[2] == pytest.approx(0.05, abs=1e-12) and not sim.events


def test_too_many_contacts_are_reported_and_the_state_is_kept():
    """One body of 70 balls on a floor: 70 contacts, above the capacity of a one-body scene (64)."""
    balls = "".join(f'<geom pos="{0.3 * i} 0 0" size="0.1" mass="1"/>' for i in range(70))
    sim = mechgym.load(scene(f'<geom name="floor" type="plane" size="100 1 0.1"/>'
                             f'<body name="rake" pos="0 0 0.1"><freejoint/>{balls}</body>'), backend="mechgym", dt=1e-3)
    before = (sim.qpos, sim.contacts())
    with pytest.raises(SimulationError, match="more than 64 contacts"):
        sim.step(3)
    assert sim.step_count == 0 and np.array_equal(sim.qpos, before[0])
    _contacts_equal(sim.contacts(), before[1])


def test_the_contact_capacity_grows_with_the_bodies():
    """70 balls, each a body, resting on a floor: 70 contacts, more than a small scene's 64; each ball stays at
    its radius, each contact carries its weight."""
    balls = "".join(f'<body name="b{i}" pos="{0.3 * i} 0 0.1"><freejoint/><geom size="0.1" mass="1"/></body>'
                    for i in range(70))
    sim = mechgym.load(scene(f'<geom name="floor" type="plane" size="100 1 0.1"/>{balls}'), backend="mechgym",
                       dt=1e-3)
    sim.step(100)
    contacts = sim.contacts()
    assert len(contacts) == 70 and all(c.normal_force == pytest.approx(9.81, abs=1e-9) for c in contacts)
    assert all(sim.body(f"b{i}").pos[2] == pytest.approx(0.1, abs=1e-12) for i in range(70))


def test_a_long_step_call_keeps_every_impact_even_past_the_event_buffer():
    """An elastic ball dropped 1 mm bounces every 2 sqrt(2 h / g) s: over 1100 impacts in one step(n) call,
    more than the kernel's event buffer holds, and every one is reported at its closed-form time."""
    drop, radius, g = 0.001, 0.05, 9.81
    xml = (f'<mujoco><custom><numeric name="restitution:ball" data="1"/></custom><worldbody>'
           f'<geom name="floor" type="plane" size="1 1 0.1"/><body name="ball" pos="0 0 {radius + drop}">'
           f'<freejoint/><geom name="ball" type="sphere" size="{radius}" mass="0.2"/></body></worldbody></mujoco>')
    sim = mechgym.load(xml, backend="mechgym", dt=1e-3)
    duration = 32.0
    sim.step(round(duration / sim.dt))
    first, period = math.sqrt(2 * drop / g), 2 * math.sqrt(2 * drop / g)
    expected = [first + k * period for k in range(int((duration - first) / period) + 1)]
    assert len(expected) > 1024
    assert len(sim.events) == len(expected)
    np.testing.assert_allclose([e.time for e in sim.events], expected, atol=1e-6)
