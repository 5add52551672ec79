"""MJCF joints, equalities and tendons as RATTLE constraint rows, and MuJoCo's qpos/qvel from the bodies.

Every MuJoCo body that moves is an engine body with 6 degrees of freedom (maximal coordinates); a joint
removes the freedoms it does not have with rows (``constraints.Rows``) between the body (b) and its parent
(a; the world when the parent is static). MuJoCo places a body at qpos by composing, in joint order, on
the parent frame moved by (body_pos, body_quat): a hinge turns the body by qpos - qpos0 about jnt_axis
through jnt_pos; a slide moves it by (qpos - qpos0) along jnt_axis; a ball turns it by the quaternion
qpos about jnt_pos. Rows per body, with the child's qpos0 pose relative to its parent as the reference:

  hinge    3 POINT (anchor to anchor, along the parent's axes) + 2 ALIGN (the axis, u in b, against two
           normals w fixed in a); a range adds ANGLE rows (lower, upper) measured from qpos0
  slide    3 ALIGN (relative rotation locked) + 2 POINT normal to the axis; a range adds POINT rows along
           the axis
  ball     3 POINT (a ball range is not supported)
  planar   slide, slide, hinge in that order, the slides orthogonal and the hinge normal to both: 1 POINT
           along the hinge axis + 2 ALIGN; ranges as for slides and hinges
  free     no rows

Equalities: ``connect`` (bodies or sites) 3 POINT rows; ``weld`` (bodies) 3 POINT + 3 ALIGN rows at the
relative pose in eq_data (compiled from qpos0 when relpose is not given). Spatial tendons between exactly
two sites: a tendon equality with no second tendon is a rod (DISTANCE, length = length0 + polycoef[0]); a
limited tendon is a rope (DISTANCE <= range[1], and >= range[0] when that is positive).

Generalised coordinates: each hinge angle and slide displacement is the value of a measuring row (ANGLE or
POINT along the axis, zero at qpos0) and its velocity is that row's G v, so qpos = qpos0 + g, qvel = G v.
Hinge angles are unwrapped across turns against the previous angle (caller-owned ``turns``). A ball's qpos
is the child's body-frame quaternion relative to the parent's frame moved by body_quat, and its qvel the
relative angular velocity in the child's body frame. A generalised force on a hinge or slide coordinate
(a joint actuator's output) acts on the two bodies as the wrench Q G of its measuring row (virtual work).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import mujoco
import numpy as np

from ..errors import SceneError
from ..scene import name_of
from .constraints import (
    ALIGN,
    ANGLE,
    DISTANCE,
    EQUALITY,
    LOWER,
    POINT,
    UPPER,
    Rows,
    Solver,
    copy_into,
    evaluate_row,
    make_rows,
    row_rate,
)
from .jit import kernel
from .kinematics import BODY_QUAT, FRAME_SIZE, OFFSET, OMEGA, OMEGA_LOCAL, ORIGIN_VEL, derive_frame
from .state import angular_velocity
from .vectors import quat_mul, quat_mul_conj, rotate, rotate_inverse

_OBJ = mujoco.mjtObj
_JNT = mujoco.mjtJoint
_EQ = mujoco.mjtEq
_AXES = np.eye(3)


class Coordinates(NamedTuple):
    """Maps from the bodies to MuJoCo's qpos/qvel for hinge, slide and ball joints, and to the lengths of the
    tendons with a spring.

    Hinge and slide coordinates (C,): one measuring row each in ``rows``. Ball joints (K,). Spring tendons (S,):
    one DISTANCE row each in ``tendon_rows``, whose value is the tendon's length (MuJoCo's ten_length)."""

    rows: Rows  # (C,) measuring rows: ANGLE (hinge, rad) or POINT along the axis (slide, m), 0 at qpos0
    qposadr: np.ndarray  # (C,) int64
    dofadr: np.ndarray  # (C,) int64
    qpos0: np.ndarray  # (C,)
    hinge: np.ndarray  # (C,) bool: unwrap across turns
    damping: np.ndarray  # (C,) joint damping: N s/m (slide), N m s/rad (hinge); force -damping qvel
    armature: np.ndarray  # (C,) joint armature: kg (slide), kg m^2 (hinge); force -armature qacc
    stiffness: np.ndarray  # (C,) joint stiffness: N/m (slide), N m/rad (hinge); force -stiffness (qpos - springref)
    springref: np.ndarray  # (C,) the spring's rest qpos (MuJoCo's qpos_spring), m or rad
    ball_parent: np.ndarray  # (K,) int64 engine body, -1 = static parent
    ball_child: np.ndarray  # (K,) int64 engine body
    ball_left: np.ndarray  # (K, 4) conj(body_quat) (x) P, P = iquat of the parent (conj(xquat) if static)
    ball_right: np.ndarray  # (K, 4) child principal -> child body frame: conj(iquat)
    ball_qposadr: np.ndarray  # (K,) int64
    ball_dofadr: np.ndarray  # (K,) int64
    tendon_rows: Rows  # (S,) DISTANCE rows, L = 0: g is the length, m
    tendon_stiffness: np.ndarray  # (S,) N/m
    # (S, 2) m: MuJoCo's tendon_lengthspring, the spring's rest lengths: force -stiffness (length - rest[1]) above the
    # second, -stiffness (length - rest[0]) below the first, none between (a dead band when they differ)
    tendon_rest: np.ndarray


class Linkage(NamedTuple):
    """What the stepping kernel needs to enforce the joints: the rows, the coordinates and the projection
    settings (``constraints.Solver``)."""

    rows: Rows
    coordinates: Coordinates
    solver: Solver


class Constraints(NamedTuple):
    """Everything ``build_constraints`` derives from a model."""

    rows: Rows
    owner: list  # (R,) per row: (MJCF element kind "joint" | "equality" | "tendon", MuJoCo id)
    coordinates: Coordinates


def _quat(q):
    return np.asarray(q, dtype=float)


def _conj(q):
    return _quat(q) * [1.0, -1.0, -1.0, -1.0]


def _mul(a, b):
    out = np.zeros(4)
    quat_mul(_quat(a), _quat(b), out)
    return out


def _rot(q, v):
    out = np.zeros(3)
    rotate(_quat(q), np.asarray(v, dtype=float), out)
    return out


def _normals(axis):
    """Two unit vectors completing ``axis`` to a right-handed orthonormal basis (axis, n1, n2)."""
    helper = _AXES[int(np.argmin(np.abs(axis)))]
    n1 = np.cross(axis, helper)
    n1 /= np.linalg.norm(n1)
    return n1, np.cross(axis, n1)


class _Frames:
    """Vectors and points given in a MuJoCo body's frame, expressed where the rows need them: in the
    engine body's principal frame relative to its COM, or in the world for a static body (at qpos0)."""

    def __init__(self, model: mujoco.MjModel, body_index: np.ndarray):
        self.model, self.body_index = model, body_index
        data = mujoco.MjData(model)
        mujoco.mj_kinematics(model, data)
        self.xpos, self.xquat = data.xpos.copy(), data.xquat.copy()

    def engine(self, body: int) -> int:
        return int(self.body_index[body])

    def direction(self, body: int, v) -> np.ndarray:
        if self.body_index[body] < 0:
            return _rot(self.xquat[body], v)
        return _rot(_conj(self.model.body_iquat[body]), v)

    def point(self, body: int, p) -> np.ndarray:
        if self.body_index[body] < 0:
            return self.xpos[body] + _rot(self.xquat[body], p)
        return _rot(_conj(self.model.body_iquat[body]), np.asarray(p, dtype=float) - self.model.body_ipos[body])

    def parent_turn(self, body: int) -> np.ndarray:
        """P with conj(q_body) = P (x) conj(q_rows): iquat for an engine body (q_body = q_p (x) conj(iquat)),
        conj(xquat) for a static body (its rows' frame is the world)."""
        if self.body_index[body] < 0:
            return _conj(self.xquat[body])
        return _quat(self.model.body_iquat[body])


def _lock_rotation(frames, a, b, relative, owner):
    """3 ALIGN rows holding body b's frame at ``relative`` (b's MJCF frame in a's MJCF frame) against a:
    (R_b x_b) . (R_a R_rel y) = (R_b x_b) . (R_a R_rel z) = (R_b y_b) . (R_a R_rel z) = 0."""
    u = [frames.direction(b, _AXES[i]) for i in (0, 0, 1)]
    w = [frames.direction(a, _rot(relative, _AXES[j])) for j in (1, 2, 2)]
    return make_rows(ALIGN, frames.engine(a), frames.engine(b), axis_a=w, axis_b=u), [owner] * 3


def _anchor_rows(frames, a, b, anchor_a, anchor_b, directions, owner, offset=0.0, sense=EQUALITY):
    """POINT rows e . (p_b - p_a) - offset along ``directions`` (in a's MJCF frame)."""
    axes = [frames.direction(a, e) for e in directions]
    rows = make_rows(POINT, frames.engine(a), frames.engine(b), anchor_a=frames.point(a, anchor_a),
                     anchor_b=frames.point(b, anchor_b), axis_a=axes, offset=offset, sense=sense)
    return rows, [owner] * len(axes)


def _axis_rows(frames, a, b, axis_parent, axis_child, owner):
    """2 ALIGN rows keeping the child's axis normal to the two normals of the parent's axis."""
    normals = _normals(axis_parent)
    rows = make_rows(ALIGN, frames.engine(a), frames.engine(b), axis_a=[frames.direction(a, n) for n in normals],
                     axis_b=frames.direction(b, axis_child))
    return rows, [owner] * 2


def _angle_row(frames, a, b, axis_parent, body_quat, offset=0.0, sense=EQUALITY):
    """ANGLE row of the hinge ``axis_parent`` (a's MJCF frame): zero at qpos0, measured from the first normal."""
    ref = _normals(axis_parent)[0]
    return make_rows(ANGLE, frames.engine(a), frames.engine(b), axis_a=frames.direction(a, axis_parent),
                     ref_a=frames.direction(a, ref), axis_b=frames.direction(b, _rot(_conj(body_quat), ref)),
                     offset=offset, sense=sense)


def _range_rows(row_maker, model, j):
    """Lower and upper limit rows of a limited joint, measured from qpos0 (``row_maker(offset, sense)``)."""
    if not model.jnt_limited[j]:
        return []
    ref = model.qpos0[model.jnt_qposadr[j]]
    low, high = model.jnt_range[j]
    return [row_maker(low - ref, LOWER), row_maker(high - ref, UPPER)]


class _Builder:
    def __init__(self, model, body_index):
        self.model, self.frames = model, _Frames(model, body_index)
        self.parts, self.owner = [], []
        self.measure, self.measure_adr = [], []
        self.balls = []
        self.springs, self.spring_tendons = [], []  # the tendons with a stiffness: a row measuring each one's length

    def add(self, rows, owner):
        self.parts.append(rows)
        self.owner += owner if isinstance(owner, list) else [owner] * rows.kind.size

    def coordinate(self, rows, j):
        self.measure.append(rows)
        self.measure_adr.append(j)

    def body(self, b):
        model, frames = self.model, self.frames
        first, count = model.body_jntadr[b], model.body_jntnum[b]
        joints = list(range(first, first + count))
        kinds = [int(model.jnt_type[j]) for j in joints]
        a = int(model.body_parentid[b])
        pos, quat = model.body_pos[b], model.body_quat[b]
        name = name_of(model, _OBJ.mjOBJ_BODY, b)
        if (frames.engine(b) >= 0) != bool(kinds):
            raise ValueError(f"body_index: body '{name}' must be an engine body exactly when it has joints")
        if kinds in ([], [_JNT.mjJNT_FREE]):
            return
        if kinds == [_JNT.mjJNT_HINGE]:
            self.hinge(a, b, joints[0], pos, quat)
        elif kinds == [_JNT.mjJNT_SLIDE]:
            self.slide(a, b, joints[0], pos, quat)
        elif kinds == [_JNT.mjJNT_BALL]:
            j = joints[0]
            if model.jnt_limited[j]:
                raise SceneError("joint.unsupported",
                                 f"<body name='{name}'>: a ball joint range (cone limit) is not supported")
            anchor = model.jnt_pos[j]
            self.add(*_anchor_rows(frames, a, b, pos + _rot(quat, anchor), anchor, _AXES, ("joint", j)))
            self.balls.append((a, b, j))
        elif kinds == [_JNT.mjJNT_SLIDE, _JNT.mjJNT_SLIDE, _JNT.mjJNT_HINGE]:
            self.planar(a, b, joints, pos, quat, name)
        else:
            names = ", ".join(_JNT(k).name[6:].lower() for k in kinds)
            raise SceneError("joint.unsupported",
                             f"<body name='{name}'> has joints ({names}); supported: one hinge, slide, ball or free "
                             "joint, or slide, slide, hinge (planar)")

    def hinge(self, a, b, j, pos, quat):
        model, frames, owner = self.model, self.frames, ("joint", j)
        anchor, axis = model.jnt_pos[j], model.jnt_axis[j]
        axis_parent = _rot(quat, axis)
        self.add(*_anchor_rows(frames, a, b, pos + _rot(quat, anchor), anchor, _AXES, owner))
        self.add(*_axis_rows(frames, a, b, axis_parent, axis, owner))
        self.hinge_limits(a, b, j, axis_parent, quat)

    def hinge_limits(self, a, b, j, axis_parent, quat):
        limits = _range_rows(lambda offset, sense: _angle_row(self.frames, a, b, axis_parent, quat, offset, sense),
                             self.model, j)
        for rows in limits:
            if not -math.pi < rows.offset[0] < math.pi:
                raise SceneError("joint.unsupported", f"<joint name='{name_of(self.model, _OBJ.mjOBJ_JOINT, j)}'>: "
                                 "a hinge range must lie within (-180, 180) degrees of the joint's ref")
            self.add(rows, ("joint", j))
        self.coordinate(_angle_row(self.frames, a, b, axis_parent, quat), j)

    def slide(self, a, b, j, pos, quat):
        model, frames, owner = self.model, self.frames, ("joint", j)
        anchor = model.jnt_pos[j]
        anchor_parent, axis_parent = pos + _rot(quat, anchor), _rot(quat, model.jnt_axis[j])
        self.add(*_lock_rotation(frames, a, b, quat, owner))
        self.add(*_anchor_rows(frames, a, b, anchor_parent, anchor, _normals(axis_parent), owner))
        self.slide_limits(a, b, j, anchor_parent, anchor, axis_parent)

    def slide_limits(self, a, b, j, anchor_parent, anchor, axis_parent):
        def along(offset, sense):
            return _anchor_rows(self.frames, a, b, anchor_parent, anchor, [axis_parent], None, offset, sense)[0]

        for rows in _range_rows(along, self.model, j):
            self.add(rows, ("joint", j))
        self.coordinate(along(0.0, EQUALITY), j)

    def planar(self, a, b, joints, pos, quat, name):
        model, frames = self.model, self.frames
        s1, s2, h = joints
        axes = [_rot(quat, model.jnt_axis[j]) for j in joints]
        if max(abs(axes[0] @ axes[1]), abs(axes[0] @ axes[2]), abs(axes[1] @ axes[2])) > 1e-9:
            raise SceneError("joint.unsupported", f"<body name='{name}'>: slide, slide, hinge is supported only as "
                             "a planar joint (orthogonal slides, hinge normal to both)")
        anchor = model.jnt_pos[h]
        anchor_parent = pos + _rot(quat, anchor)
        self.add(*_anchor_rows(frames, a, b, anchor_parent, anchor, [axes[2]], ("joint", h)))
        self.add(*_axis_rows(frames, a, b, axes[2], model.jnt_axis[h], ("joint", h)))
        for j, axis in ((s1, axes[0]), (s2, axes[1])):
            self.slide_limits(a, b, j, anchor_parent, anchor, axis)
        self.hinge_limits(a, b, h, axes[2], quat)

    def equality(self, e):
        model, frames, owner = self.model, self.frames, ("equality", e)
        kind, data = int(model.eq_type[e]), model.eq_data[e]
        name = name_of(model, _OBJ.mjOBJ_EQUALITY, e)
        objtype, ids = int(model.eq_objtype[e]), (int(model.eq_obj1id[e]), int(model.eq_obj2id[e]))
        if kind == _EQ.mjEQ_CONNECT:
            if objtype == _OBJ.mjOBJ_SITE:
                bodies = [int(model.site_bodyid[s]) for s in ids]
                anchors = [model.site_pos[s] for s in ids]
            else:
                bodies, anchors = list(ids), [data[0:3], data[3:6]]
            self.add(*_anchor_rows(frames, bodies[0], bodies[1], anchors[0], anchors[1], _AXES, owner))
        elif kind == _EQ.mjEQ_WELD and objtype == _OBJ.mjOBJ_BODY:
            # Target: p1 + R1 data[3:6] = p2 + R2 data[0:3] and q1 (x) data[6:10] = q2 (MJCF body frames).
            a, b = ids
            self.add(*_anchor_rows(frames, a, b, data[3:6], data[0:3], _AXES, owner))
            self.add(*_lock_rotation(frames, a, b, data[6:10] / np.linalg.norm(data[6:10]), owner))
        elif kind == _EQ.mjEQ_TENDON and model.eq_obj2id[e] < 0:
            t = ids[0]
            self.distance(t, model.tendon_length0[t] + data[0], EQUALITY, owner)
        else:
            raise SceneError("equality.unsupported", f"<equality name='{name}'>: only connect, body welds and "
                             "single-tendon (rod) equalities are supported")

    def tendon_sites(self, t):
        model = self.model
        first, count = model.tendon_adr[t], model.tendon_num[t]
        wraps = range(first, first + count)
        if (count != 2 or any(int(model.wrap_type[w]) != mujoco.mjtWrap.mjWRAP_SITE for w in wraps)):
            raise SceneError("tendon.unsupported", f"<tendon name='{name_of(model, _OBJ.mjOBJ_TENDON, t)}'>: only "
                             "spatial tendons between two sites are supported")
        return [int(model.wrap_objid[w]) for w in wraps]

    def distance_row(self, t, length, sense):
        """The DISTANCE row of tendon t's two sites: g = |p_b - p_a| - ``length``."""
        model, frames = self.model, self.frames
        sites = self.tendon_sites(t)
        a, b = (int(model.site_bodyid[s]) for s in sites)
        anchor_a, anchor_b = frames.point(a, model.site_pos[sites[0]]), frames.point(b, model.site_pos[sites[1]])
        return make_rows(DISTANCE, frames.engine(a), frames.engine(b), anchor_a=anchor_a, anchor_b=anchor_b,
                         offset=length, sense=sense)

    def distance(self, t, length, sense, owner):
        self.add(self.distance_row(t, length, sense), owner)

    def tendon(self, t):
        model = self.model
        if model.tendon_stiffness[t] != 0.0:
            self.springs.append(self.distance_row(t, 0.0, EQUALITY))  # (its value is the length)
            self.spring_tendons.append(t)
        if model.tendon_limited[t]:
            low, high = model.tendon_range[t]
            self.distance(t, high, UPPER, ("tendon", t))
            if low > 0.0:
                self.distance(t, low, LOWER, ("tendon", t))
        else:
            self.tendon_sites(t)

    def coordinates(self) -> Coordinates:
        model, frames = self.model, self.frames
        joints = np.array(self.measure_adr, dtype=np.int64)
        qposadr = model.jnt_qposadr[joints].astype(np.int64)
        left, right = np.zeros((len(self.balls), 4)), np.zeros((len(self.balls), 4))
        for k, (a, b, _) in enumerate(self.balls):
            left[k] = _mul(_conj(model.body_quat[b]), frames.parent_turn(a))
            right[k] = _conj(model.body_iquat[b])
        balls = np.array([j for _, _, j in self.balls], dtype=np.int64)
        return Coordinates(
            rows=_concatenate(self.measure),
            qposadr=qposadr,
            dofadr=model.jnt_dofadr[joints].astype(np.int64),
            qpos0=model.qpos0[qposadr].copy(),
            hinge=model.jnt_type[joints] == int(_JNT.mjJNT_HINGE),
            damping=model.dof_damping[model.jnt_dofadr[joints]].copy(),
            armature=model.dof_armature[model.jnt_dofadr[joints]].copy(),
            stiffness=model.jnt_stiffness[joints].copy(),
            springref=model.qpos_spring[qposadr].copy(),
            ball_parent=np.array([frames.engine(a) for a, _, _ in self.balls], dtype=np.int64),
            ball_child=np.array([frames.engine(b) for _, b, _ in self.balls], dtype=np.int64),
            ball_left=left,
            ball_right=right,
            ball_qposadr=model.jnt_qposadr[balls].astype(np.int64),
            ball_dofadr=model.jnt_dofadr[balls].astype(np.int64),
            tendon_rows=_concatenate(self.springs),
            tendon_stiffness=model.tendon_stiffness[self.spring_tendons].astype(float),
            tendon_rest=model.tendon_lengthspring[self.spring_tendons].reshape(-1, 2).astype(float),
        )


def _concatenate(parts) -> Rows:
    return Rows.concatenate(parts) if parts else Rows.empty()


def damper_rows(coordinates: Coordinates, damping: np.ndarray) -> Rows:
    """A damper row (``constraints.damper_compliance``) for every hinge/slide coordinate with a damping ``damping``
    (C,) > 0 (N s/m, N m s/rad) or an armature: a copy of its measuring row, carrying both."""
    damped = np.flatnonzero((damping > 0.0) | (coordinates.armature > 0.0))
    rows = Rows(*(np.asarray(field)[damped] for field in coordinates.rows))
    return rows._replace(damping=damping[damped].astype(float), armature=coordinates.armature[damped].astype(float))


def build_constraints(model: mujoco.MjModel, body_index: np.ndarray) -> Constraints:
    """Rows for every joint, active equality and limited or rod tendon of ``model``; ``body_index`` (nbody,)
    maps each MuJoCo body to its engine body (-1 for the world and static bodies). Raises ``SceneError``
    (joint/equality/tendon.unsupported) naming the element for anything else."""
    builder = _Builder(model, np.asarray(body_index))
    for b in range(1, model.nbody):
        builder.body(b)
    for e in range(model.neq):
        if model.eq_active0[e]:
            builder.equality(e)
    for t in range(model.ntendon):
        builder.tendon(t)
    return Constraints(_concatenate(builder.parts), builder.owner, builder.coordinates())


def state_from_mujoco(model: mujoco.MjModel, data: mujoco.MjData, body_index: np.ndarray, state, world: int):
    """Set world ``world`` of ``state`` from MuJoCo's bodies (after mj_forward, or mj_kinematics + mj_comPos +
    mj_comVel): c = xipos, q = xquat (x) iquat, v and w of the COM, L = R diag(I) R^T w."""
    velocity = np.zeros(6)
    local = np.zeros(3)
    for b in np.nonzero(np.asarray(body_index) >= 0)[0]:
        e = body_index[b]
        state.com[world, e] = data.xipos[b]
        quat_mul(data.xquat[b], model.body_iquat[b], state.quat[world, e])
        mujoco.mj_objectVelocity(model, data, _OBJ.mjOBJ_BODY, b, velocity, 0)  # (w, v) at the COM, world
        state.vel[world, e] = velocity[3:]
        rotate_inverse(state.quat[world, e], velocity[:3], local)
        rotate(state.quat[world, e], local * model.body_inertia[b], state.momentum[world, e])


def turns_from_qpos(coordinates: Coordinates, qpos: np.ndarray, turns: np.ndarray) -> None:
    """Seed the unwrapping state of one world from MuJoCo's qpos: turns = qpos - qpos0 (hinge angles, rad)."""
    turns[:] = qpos[coordinates.qposadr] - coordinates.qpos0


@kernel(inline=True)
def coordinate_value(coordinates, c, state, world, turns, grad):
    """g of coordinate c's measuring row (rad or m, 0 at qpos0), its gradient into ``grad`` (12,); a hinge
    angle, which the row gives in (-pi, pi], is unwrapped to the turn nearest the reference turns[c]:
    g + 2 pi round((turns[c] - g) / (2 pi)), so the bodies must be within pi of it (the last step's angle, advanced
    by ``advance_turns`` after the drift)."""
    return unwrapped(coordinates, c, evaluate_row(coordinates.rows, c, state, world, grad), turns)


@kernel(inline=True)
def unwrapped(coordinates, c, value, turns):
    """Coordinate c's row value ``value`` (rad or m), a hinge's unwrapped to the turn nearest turns[c]
    (``coordinate_value``)."""
    if coordinates.hinge[c]:
        value += 2.0 * math.pi * round((turns[c] - value) / (2.0 * math.pi))
    return value


@kernel(inline=True)
def advance_turns(coordinates, bodies, state, world, turns, h, grad, omega):
    """turns[c] += h G v for every hinge coordinate (G v its rate at the current poses and velocities, rad/s): after a
    drift of h, the angle the hinge has about reached, as the reference of ``coordinate_value``, so that a hinge that
    turned by more than pi in the step (400 rad/s at dt = 10 ms) unwraps to the turn it made, not to the angle nearest
    the last one. ``grad`` (12,), ``omega`` (3,): scratch."""
    for c in range(coordinates.hinge.size):
        if coordinates.hinge[c]:
            evaluate_row(coordinates.rows, c, state, world, grad)
            turns[c] += h * row_rate(coordinates.rows, bodies, state, world, c, grad, omega)


@kernel(inline=True)
def update_turns(coordinates, state, world, turns, grad):
    """turns[c] = the unwrapped angle of every hinge coordinate at the current poses (rad)."""
    for c in range(coordinates.hinge.size):
        if coordinates.hinge[c]:
            turns[c] = coordinate_value(coordinates, c, state, world, turns, grad)


@kernel
def store_coordinates(coordinates, bodies, state, world, turns, vectors, grad, qpos, qvel):
    """Write the hinge, slide and ball entries of MuJoCo's qpos/qvel for world ``world``.

    Hinge and slide: qpos = qpos0 + g, qvel = G v of the measuring row; a hinge angle g is unwrapped against
    ``turns`` (C,) (the previous angle, rad; updated here, see ``coordinate_value``).
    Ball: qpos = conj(body_quat) (x) conj(q_parent_body) (x) q_child_body
    = left (x) conj(q_a) (x) q_b (x) right; qvel = iquat R_b^T (w_b - w_a) (child body frame).
    ``vectors`` (8, 3), ``grad`` (12,): scratch."""
    rows = coordinates.rows
    for c in range(rows.kind.size):
        value = coordinate_value(coordinates, c, state, world, turns, grad)
        if coordinates.hinge[c]:
            turns[c] = value
        qpos[coordinates.qposadr[c]] = coordinates.qpos0[c] + value
        qvel[coordinates.dofadr[c]] = row_rate(rows, bodies, state, world, c, grad, vectors[0])
    relative, body = grad[0:4], grad[4:8]  # (the rows are done with it)
    omega, parent_omega = vectors[1], vectors[2]
    for k in range(coordinates.ball_child.size):
        a, b = coordinates.ball_parent[k], coordinates.ball_child[k]
        if a >= 0:
            # conj(q_a) (x) q_b = (w, R_a^T v) with (w, v) = q_b (x) conj(q_a) (conjugation by q_a rotates v)
            quat_mul_conj(state.quat[world, b], state.quat[world, a], body)
            rotate_inverse(state.quat[world, a], body[1:], body[1:])
            angular_velocity(bodies.inv_inertia[a], state.quat[world, a], state.momentum[world, a], parent_omega)
        else:
            copy_into(state.quat[world, b], body)
            parent_omega[:] = 0.0
        quat_mul(body, coordinates.ball_right[k], relative)
        quat_mul(coordinates.ball_left[k], relative, body)
        copy_into(body, qpos[coordinates.ball_qposadr[k]:coordinates.ball_qposadr[k] + 4])
        angular_velocity(bodies.inv_inertia[b], state.quat[world, b], state.momentum[world, b], omega)
        for i in range(3):
            omega[i] -= parent_omega[i]
        rotate_inverse(state.quat[world, b], omega, omega)  # child principal axes
        rotate_inverse(coordinates.ball_right[k], omega, omega)  # child body axes: rotate by iquat
        copy_into(omega, qvel[coordinates.ball_dofadr[k]:coordinates.ball_dofadr[k] + 3])


# Columns of ``Reading.bodies``: per body its origin, quaternion, origin velocity and angular velocity.
READ_POS, READ_QUAT, READ_LINVEL, READ_ANGVEL, READING_SIZE = 0, 3, 7, 10, 13


class Reading(NamedTuple):
    """What ``read_state`` reads of a world, with its scratch."""

    free: np.ndarray  # (F,) engine index of each body with a free joint
    qposadr: np.ndarray  # (F,) its free joint's address in qpos
    dofadr: np.ndarray  # (F,) and in qvel
    qpos: np.ndarray  # (nq,) out: MuJoCo's generalized positions
    qvel: np.ndarray  # (nv,) out: and velocities
    bodies: np.ndarray  # (B, READING_SIZE) out: each body's origin (m), quaternion, origin velocity (m/s) and
    # angular velocity (rad/s), world frame
    turns: np.ndarray  # (C,) scratch: a copy of the state's, against which hinge angles are unwrapped
    frames: np.ndarray  # (B, FRAME_SIZE) scratch
    vectors: np.ndarray  # (8, 3) scratch
    grad: np.ndarray  # (12,) scratch

    @staticmethod
    def empty(free: np.ndarray, qposadr: np.ndarray, dofadr: np.ndarray, nq: int, nv: int, bodies: int,
              coordinates: int) -> Reading:
        return Reading(free, qposadr, dofadr, np.zeros(nq), np.zeros(nv), np.zeros((bodies, READING_SIZE)),
                       np.zeros(coordinates), np.zeros((bodies, FRAME_SIZE)), np.zeros((8, 3)), np.zeros(12))


@kernel
def read_state(bodies, coordinates, state, world, reading):
    """What a simulator hands out of world ``world``'s state, into ``reading``: MuJoCo's qpos and qvel, and each
    body's frame (``kinematics.derive_frame``). The free joints take MuJoCo's layout (the origin and body
    quaternion; the origin velocity, world frame, and angular velocity, body frame), the others'
    ``store_coordinates``'s, its hinge angles unwrapped against a copy of the state's turns (reading does not
    change the state)."""
    qpos, qvel, frames, readings = reading.qpos, reading.qvel, reading.frames, reading.bodies
    for i in range(qpos.size):
        qpos[i] = 0.0
    for i in range(qvel.size):
        qvel[i] = 0.0
    for b in range(readings.shape[0]):
        derive_frame(bodies, state, world, b, frames)
        frame, row = frames[b], readings[b]
        for i in range(3):
            row[READ_POS + i] = state.com[world, b, i] + frame[OFFSET + i]
            row[READ_LINVEL + i] = frame[ORIGIN_VEL + i]
            row[READ_ANGVEL + i] = frame[OMEGA + i]
        for i in range(4):
            row[READ_QUAT + i] = frame[BODY_QUAT + i]
    for k in range(reading.free.size):
        b, p, d = reading.free[k], reading.qposadr[k], reading.dofadr[k]
        for i in range(3):
            qpos[p + i] = readings[b, READ_POS + i]
            qvel[d + i] = frames[b, ORIGIN_VEL + i]
            qvel[d + 3 + i] = frames[b, OMEGA_LOCAL + i]
        for i in range(4):
            qpos[p + 3 + i] = frames[b, BODY_QUAT + i]
    for c in range(reading.turns.size):
        reading.turns[c] = state.turns[world, c]
    store_coordinates(coordinates, bodies, state, world, reading.turns, reading.vectors, reading.grad, qpos, qvel)


@kernel(inline=True)
def add_coordinate_forces(coordinates, state, world, forces, grad, wrench):
    """Add generalised forces on the hinge and slide coordinates to the bodies' wrenches (B, 6) (force N,
    torque N m about each COM, world frame): by virtual work, Q dq = Q G dx, so a force Q on coordinate c
    (N m for a hinge, N for a slide; ``forces`` (C,)) is the wrench Q dg/dx, Q dg/dtheta on each of the two
    bodies of its measuring row: a hinge torque +Q e on the child and -Q e on the parent; a slide force
    +Q e at the child's anchor and its reaction on the parent. ``grad`` (12,): scratch."""
    rows = coordinates.rows
    for c in range(rows.kind.size):
        if forces[c] != 0.0:
            evaluate_row(rows, c, state, world, grad)
            add_row_force(rows, c, grad, forces[c], wrench)


@kernel(inline=True)
def add_row_force(rows, r, grad, force, wrench):
    """Add the generalised force ``force`` (N or N m) along row r, whose gradient is ``grad`` (12,), to the
    wrenches (B, 6) of its two bodies: force dg/dx, force dg/dtheta (virtual work)."""
    for side, body in ((0, rows.body_a[r]), (1, rows.body_b[r])):
        if body >= 0:
            for i in range(6):
                wrench[body, i] += force * grad[6 * side + i]
