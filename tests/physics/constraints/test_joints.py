"""MJCF joints, equalities and tendons as rows, checked against MuJoCo's own kinematics: for any qpos and qvel
MuJoCo produces, the joint rows hold (g = 0, G v = 0), the measured coordinates give back MuJoCo's qpos and
qvel, and equality/tendon rows vanish exactly where MuJoCo's equality residuals do."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest

import mechgym
from mechgym.errors import SceneError
from mechgym.physics import constraints as rattle
from mechgym.physics.joints import build_constraints, state_from_mujoco, store_coordinates, turns_from_qpos
from mechgym.physics.state import State

from .helpers import make_bodies

NO_CONTACT = '<option><flag contact="disable"/></option>'
JOINTS = f"""<mujoco>{NO_CONTACT}<worldbody>
  <body name="static" pos="0.2 0 0.1" euler="0 10 0"><geom size=".05"/>
    <body name="arm" pos="0.1 0.2 0.3" euler="10 20 30">
      <joint name="hinge" type="hinge" axis="0.3 0.4 1" pos="0.05 0 0" limited="true" range="-100 120" ref="12"/>
      <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.03"/>
      <body name="slider" pos="0.4 0 0" euler="5 -10 15">
        <joint name="slide" type="slide" axis="1 0.2 0" pos="0.01 0.02 0" limited="true" range="-0.2 0.3" ref="0.05"/>
        <geom type="box" size=".05 .03 .02" pos="0.02 0.01 0" euler="3 4 5"/>
        <body name="ball" pos="0.1 0.1 0" euler="20 30 40">
          <joint name="ball" type="ball" pos="0.02 0 0.01"/>
          <geom type="ellipsoid" size=".04 .03 .02" pos="0.01 0 0.03" euler="7 8 9"/>
        </body>
      </body>
    </body>
  </body>
  <body name="planar" pos="1 0 0.5" euler="0 0 30">
    <joint name="px" type="slide" axis="1 0 0" limited="true" range="-1 1"/>
    <joint name="pz" type="slide" axis="0 0 1"/>
    <joint name="py" type="hinge" axis="0 1 0" pos="0.05 0 0" limited="true" range="-90 90"/>
    <geom type="box" size=".1 .05 .02" pos="0.02 0 0.01" euler="10 0 0"/>
  </body>
  <body name="free" pos="0 1 0"><freejoint/><geom size=".1"/></body>
</worldbody></mujoco>"""


def engine_bodies(model):
    """Every MuJoCo body with a joint is an engine body, in body order."""
    moving = np.nonzero(model.body_jntnum > 0)[0]
    body_index = np.full(model.nbody, -1, dtype=np.int64)
    body_index[moving] = np.arange(moving.size)
    return body_index, make_bodies(model.body_mass[moving], model.body_inertia[moving])


def random_configuration(model, rng):
    """qpos inside every joint range, unit ball/free quaternions; any qvel."""
    qpos = model.qpos0.copy()
    for j in range(model.njnt):
        adr = model.jnt_qposadr[j]
        kind = int(model.jnt_type[j])
        if kind in (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE):
            low, high = model.jnt_range[j] if model.jnt_limited[j] else (-3.0, 3.0)
            qpos[adr] = rng.uniform(low, high)
        else:
            start = adr + (3 if kind == mujoco.mjtJoint.mjJNT_FREE else 0)
            qpos[adr:start] = rng.normal(size=start - adr)
            quat = rng.normal(size=4)
            qpos[start:start + 4] = quat / np.linalg.norm(quat)
    return qpos, rng.normal(size=model.nv)


def forward(model, qpos, qvel):
    data = mujoco.MjData(model)
    data.qpos[:], data.qvel[:] = qpos, qvel
    mujoco.mj_forward(model, data)
    return data


def row_values(rows, bodies, state):
    grad = np.zeros(12)
    values, rates = np.zeros(rows.kind.size), np.zeros(rows.kind.size)
    for r in range(rows.kind.size):
        values[r] = rattle.evaluate_row(rows, r, state, 0, grad)
        rates[r] = rattle.row_rate(rows, bodies, state, 0, r, grad, np.zeros(3))
    return values, rates


def test_joint_rows_hold_and_the_coordinates_come_back_for_any_mujoco_configuration():
    model = mujoco.MjModel.from_xml_string(JOINTS)
    body_index, bodies = engine_bodies(model)
    constraints = build_constraints(model, body_index)
    rows, coordinates = constraints.rows, constraints.coordinates
    # hinge 3+2+2 (limits), slide 3+2+2, ball 3, planar 1+2 + 2 (x range) + 2 (hinge range; z has none)
    assert rows.kind.size == 24
    assert coordinates.rows.kind.size == 5 and coordinates.ball_child.size == 1
    rng = np.random.default_rng(3)
    for _ in range(20):
        qpos, qvel = random_configuration(model, rng)
        data = forward(model, qpos, qvel)
        state = State.zeros(1, bodies.mass.size)
        state_from_mujoco(model, data, body_index, state, 0)
        values, rates = row_values(rows, bodies, state)
        equality = rows.sense == rattle.EQUALITY
        assert np.max(np.abs(values[equality])) <= 1e-12
        assert np.max(np.abs(rates[equality])) <= 1e-12
        assert np.all(rows.sense[~equality] * values[~equality] >= -1e-12)  # inside every range

        turns = np.zeros(coordinates.rows.kind.size)
        turns_from_qpos(coordinates, qpos, turns)
        out_qpos, out_qvel = np.full(model.nq, np.nan), np.full(model.nv, np.nan)
        store_coordinates(coordinates, bodies, state, 0, turns, np.zeros((8, 3)), np.zeros(12), out_qpos, out_qvel)
        free = slice(model.jnt_qposadr[-1], model.nq), slice(model.jnt_dofadr[-1], model.nv)
        ball = slice(model.jnt_qposadr[3], model.jnt_qposadr[3] + 4)
        sign = math.copysign(1.0, out_qpos[ball] @ qpos[ball])
        out_qpos[ball] *= sign  # q and -q are the same rotation
        np.testing.assert_allclose(out_qpos[:free[0].start], qpos[:free[0].start], atol=1e-12)
        np.testing.assert_allclose(out_qvel[:free[1].start], qvel[:free[1].start], atol=1e-12)


def test_hinge_angles_unwrap_across_turns():
    model = mujoco.MjModel.from_xml_string(
        '<mujoco><worldbody><body><joint type="hinge" axis="0 0 1"/><geom size=".1" pos=".2 0 0"/></body>'
        "</worldbody></mujoco>")
    body_index, bodies = engine_bodies(model)
    coordinates = build_constraints(model, body_index).coordinates
    turns = np.zeros(1)
    qpos, qvel = np.zeros(1), np.zeros(1)
    for angle in np.arange(0.0, 20.0, 0.9):  # several turns, less than pi between calls
        state = State.zeros(1, 1)
        state_from_mujoco(model, forward(model, [angle], [0.0]), body_index, state, 0)
        store_coordinates(coordinates, bodies, state, 0, turns, np.zeros((8, 3)), np.zeros(12), qpos, qvel)
        assert qpos[0] == pytest.approx(angle, abs=1e-12)


_WHEEL = ('<mujoco><option gravity="0 0 0"/><worldbody><body name="wheel"><joint name="j" type="hinge" axis="0 0 1"/>'
          '<geom type="cylinder" size="0.1 0.01" mass="1"/></body></worldbody>{}</mujoco>')


@pytest.mark.parametrize("rate", [100.0, 400.0, 1000.0, -3000.0])
def test_a_hinge_turning_more_than_half_a_turn_a_step_reads_the_turns_it_made(rate):
    """A free wheel at ``rate`` rad/s, dt = 10 ms: 1, 4, 10 and 30 rad a step. Its angle was unwrapped to the one
    nearest the last step's, so that beyond pi a step (314 rad/s) the wheel read as turning backwards (400 rad/s:
    qpos -228 rad after 1 s); the reference is now advanced by the step's turn (``joints.advance_turns``).
    Closed form: qpos = rate t (a free spin about a principal axis)."""
    sim = mechgym.load(_WHEEL.format(""), backend="mechgym", dt=0.01)
    sim.reset(qvel=[rate])
    sim.step(100)
    assert sim.qpos[0] == pytest.approx(rate * 1.0, rel=1e-12)


def test_a_position_servo_on_a_fast_wheel_converges_at_second_order():
    """A weak position servo (kp 0.01 N m/rad) slows a wheel spun at 400 rad/s over 0.5 s; at dt = 10 ms (4 rad a
    step) it read the aliased angle, and its torque pumped the wheel to 455 rad/s instead of slowing it to 304. The
    speed's error against dt = 0.1 ms now falls by four as dt halves from 10 to 5 ms (velocity Verlet's order)."""
    speeds = {}
    for dt in (0.01, 0.005, 1e-4):
        sim = mechgym.load(_WHEEL.format('<actuator><position joint="j" kp="0.01"/></actuator>'), backend="mechgym",
                           dt=dt)
        sim.reset(qvel=[400.0])
        sim.step(round(0.5 / dt))
        speeds[dt] = sim.qvel[0]
    assert 300.0 < speeds[1e-4] < 310.0
    assert 3.5 < abs(speeds[0.01] - speeds[1e-4]) / abs(speeds[0.005] - speeds[1e-4]) < 4.5


EQUALITIES = f"""<mujoco>{NO_CONTACT}<worldbody>
  <site name="hook" pos="0 0 2"/>
  <body name="a" pos="0.1 0.2 0.3" euler="10 20 30"><freejoint/><geom size=".1" pos="0.05 0 0"/>
    <site name="s1" pos="0.1 0 0"/></body>
  <body name="b" pos="1 0.5 0.2" euler="40 0 10"><freejoint/><geom type="box" size=".1 .2 .3" euler="5 6 7"/>
    <site name="s2" pos="0 0.1 0"/></body>
</worldbody>
<tendon><spatial name="rod"><site site="s1"/><site site="s2"/></spatial>
  <spatial name="rope" limited="true" range="0 2.5"><site site="hook"/><site site="s2"/></spatial></tendon>
<equality><connect name="connect" body1="a" body2="b" anchor="0.3 0.1 0.2"/>
  <weld name="weld" body1="a" body2="b" anchor="0.2 0.1 0" relpose="0.1 0.2 0.3 0.9 0.1 -0.3 0.2"/>
  <tendon name="length" tendon1="rod" polycoef="0.05 0 0 0 0"/></equality></mujoco>"""


def equality_residuals(data):
    """MuJoCo's residual rows (efc_pos) of each equality constraint, by equality id."""
    equality = data.efc_type == int(mujoco.mjtConstraint.mjCNSTR_EQUALITY)
    return {i: data.efc_pos[equality & (data.efc_id == i)] for i in range(3)}


def test_equality_and_tendon_rows_vanish_where_mujoco_residuals_do():
    model = mujoco.MjModel.from_xml_string(EQUALITIES)
    body_index, bodies = engine_bodies(model)
    constraints = build_constraints(model, body_index)
    rows, owner = constraints.rows, constraints.owner
    assert rows.kind.size == 3 + 6 + 1 + 1
    rng = np.random.default_rng(5)
    weld = [r for r, o in enumerate(owner) if o == ("equality", 1)]
    for _ in range(10):
        qpos, qvel = random_configuration(model, rng)
        data = forward(model, qpos, qvel)
        state = State.zeros(1, 2)
        state_from_mujoco(model, data, body_index, state, 0)
        values, _ = row_values(rows, bodies, state)
        residual = equality_residuals(data)
        # connect: MuJoCo's residual is the world vector between the anchors, ours its body-a components
        assert np.linalg.norm(values[:3]) == pytest.approx(np.linalg.norm(residual[0][:3]), rel=1e-12)
        # tendon rod: ten_length - (length0 + polycoef[0]); rope: ten_length - range[1]
        assert values[owner.index(("equality", 2))] == pytest.approx(residual[2][0], abs=1e-12)
        assert values[owner.index(("tendon", 1))] == pytest.approx(data.ten_length[1] - 2.5, abs=1e-12)
        assert np.linalg.norm(values[weld][:3]) == pytest.approx(np.linalg.norm(residual[1][:3]), rel=1e-12)

        # Move b onto the weld target (q_b = q_a (x) relpose, p_a + R_a data[3:6] = p_b + R_b data[0:3]):
        # MuJoCo's weld residual and our weld rows vanish together.
        eq = model.eq_data[1]
        qa, qb = qpos[3:7], np.zeros(4)
        mujoco.mju_mulQuat(qb, qa, eq[6:10] / np.linalg.norm(eq[6:10]))
        pa, pb = np.zeros(3), np.zeros(3)
        mujoco.mju_rotVecQuat(pa, eq[3:6], qa)
        mujoco.mju_rotVecQuat(pb, eq[0:3], qb)
        qpos[7:10], qpos[10:14] = qpos[0:3] + pa - pb, qb
        data = forward(model, qpos, qvel)
        assert np.max(np.abs(equality_residuals(data)[1])) <= 1e-12
        state_from_mujoco(model, data, body_index, state, 0)
        values, _ = row_values(rows, bodies, state)
        assert np.max(np.abs(values[weld])) <= 1e-12


@pytest.mark.parametrize(("joints", "code"), [
    ('<joint type="hinge"/><joint type="hinge" axis="1 0 0"/>', "joint.unsupported"),
    ('<joint type="ball" limited="true" range="0 30"/>', "joint.unsupported"),
    ('<joint type="slide"/><joint type="slide" axis="1 0 1"/><joint type="hinge" axis="0 1 0"/>', "joint.unsupported"),
])
def test_unsupported_joint_combinations_raise_scene_error_naming_the_body(joints, code):
    model = mujoco.MjModel.from_xml_string(
        f'<mujoco><worldbody><body name="odd">{joints}<geom size=".1"/></body></worldbody></mujoco>')
    body_index, _ = engine_bodies(model)
    with pytest.raises(SceneError) as error:
        build_constraints(model, body_index)
    assert error.value.code == code and "odd" in error.value.message
