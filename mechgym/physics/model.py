"""The engine's own struct-of-arrays model, read from a compiled ``mujoco.MjModel``.

Engine body b is MuJoCo body ``mj_body[b]``: every body with a joint (free, hinge, slide, ball or planar), in
MuJoCo's body order; a body that is not free is held to its parent by RATTLE rows (``joints.build_constraints``).
Its state lives in the principal frame:
centre of mass c (world, m), orientation q_p of the principal axes (world <- principal), COM velocity
(m/s) and world-frame angular momentum about the COM (kg m^2/s). The MJCF body frame is related by
q_b = q_p (x) conj(iquat) and origin = c - R(q_b) ipos (``body_ipos``/``body_iquat``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import mujoco
import numpy as np

from .actuators import JOINT_AXES, PARENT_AXES, SITE_AXES
from .confinement import Confinements, build_confinements
from .constraints import Rows, Solver
from .contact import Geoms, contact_geoms
from .joints import Coordinates, Linkage, build_constraints, damper_rows
from .support import check_supported, colliding_pairs

_DISABLE = mujoco.mjtDisableBit


class Bodies(NamedTuple):
    """Per free body (B,) arrays; SI units."""

    mass: np.ndarray  # (B,) kg
    inv_mass: np.ndarray  # (B,) 1/kg
    inertia: np.ndarray  # (B, 3) principal moments, kg m^2
    inv_inertia: np.ndarray  # (B, 3) 1/(kg m^2)
    ipos: np.ndarray  # (B, 3) COM in the body frame, m
    iquat: np.ndarray  # (B, 4) principal frame in the body frame
    # (B, 6) free-joint dof damping: N s/m (world axes), N m s/rad (body axes); 0 for the other bodies (their
    # joints' damping is Coordinates.damping)
    damping: np.ndarray
    fluid_linear: np.ndarray  # (B, 2) viscous drag: force N s/m, torque N m s/rad
    fluid_quadratic: np.ndarray  # (B, 6) density drag in principal axes: force N s^2/m^2, torque N m s^2/rad^2


class Actuators(NamedTuple):
    """Per actuator (U,) arrays: MJCF joint transmissions on free, hinge and slide joints, and site
    transmissions without a reference site (see :mod:`mechgym.physics.actuators` for the frames).

    force = (gain0 + gain_len l + gain_vel v) u + bias0 + bias_len l + bias_vel v, with l and v the
    transmission length and velocity. On a hinge or slide (``coordinate`` >= 0) l = gear[0] qpos and
    v = gear[0] qvel, and the joint receives gear[0] force; on free joints and sites l = 0 (mj_transmission:
    "cannot compute meaningful length" for a free joint; no refsite for a site).
    """

    body: np.ndarray  # (U,) engine body index (-1: a site on a static body or a hinge/slide transmission)
    coordinate: np.ndarray  # (U,) hinge/slide coordinate (index into Coordinates) or -1
    axes: np.ndarray  # (U,) JOINT_AXES, PARENT_AXES or SITE_AXES (actuators.py)
    site_pos: np.ndarray  # (U, 3) point of action in the body frame, m (0: the body origin)
    site_quat: np.ndarray  # (U, 4) site frame in the body frame (identity for joints)
    gear: np.ndarray  # (U, 6) force gear (N per unit force), torque gear (N m per unit force)
    gain0: np.ndarray  # (U,)
    gain_len: np.ndarray  # (U,) per m or rad
    gain_vel: np.ndarray  # (U,) per m/s or rad/s
    bias0: np.ndarray  # (U,) N or N m
    bias_len: np.ndarray  # (U,) N/m or N m/rad
    bias_vel: np.ndarray  # (U,) N s/m or N m s/rad
    ctrl_limited: np.ndarray  # (U,) bool
    ctrl_range: np.ndarray  # (U, 2)
    force_limited: np.ndarray  # (U,) bool
    # (U,) bool: a hinge/slide actuator whose force is linear in the velocity, with slope bias_vel < 0 (a servo's
    # kv, no force limit, gain_vel = 0): its gear0^2 |bias_vel| is damping of the coordinate's damper row
    damper: np.ndarray
    force_range: np.ndarray  # (U, 2) N or N m


class Environment(NamedTuple):
    """Scene-wide settings."""

    gravity: np.ndarray  # (3,) m/s^2 (zero when gravity is disabled)
    wind: np.ndarray  # (3,) m/s, for the fluid forces
    fluid: bool  # any fluid force
    smooth: bool  # any fluid, free-joint damping, free-joint or site actuator (else forces.smooth_wrench is 0)
    implicit: bool  # a force depends on velocity other than through damper rows: fixed-point closing kick
    coordinate_forces: bool  # any hinge/slide actuator, joint spring or tendon spring (on the coordinates' rows)
    contacts: bool  # some geoms can collide: the step finds and solves contacts (contact.py)


@dataclass(frozen=True)
class EngineModel:
    """Everything the engine needs from a compiled scene, plus the maps back to MuJoCo's layout."""

    bodies: Bodies
    actuators: Actuators
    env: Environment
    linkage: Linkage  # constraint rows, hinge/slide/ball coordinates and the projection settings
    geoms: Geoms  # every geom, for the contacts (none when env.contacts is off)
    confinements: Confinements  # the scene's confinements (confinement.py)
    owner: list  # (R,) per row: (MJCF element kind "joint" | "equality" | "tendon", MuJoCo id)
    mj_body: np.ndarray  # (B,) MuJoCo body id of each engine body
    body_index: np.ndarray  # (nbody,) engine index of each MuJoCo body, -1 for static bodies
    free: np.ndarray  # (F,) engine index of each body with a free joint
    qposadr: np.ndarray  # (F,) address of its free joint in qpos (7 numbers)
    dofadr: np.ndarray  # (F,) address of its free joint in qvel (6 numbers)
    static_pos: np.ndarray  # (nbody, 3) world pose of every body frame at qpos0 (valid for static bodies)
    static_quat: np.ndarray  # (nbody, 4)
    static_potential: float  # J: -sum over static bodies of m g . c (a constant)
    nq: int
    nv: int
    nu: int


def build_model(model: mujoco.MjModel) -> EngineModel:
    """Check the scene (``SceneError`` for unsupported features) and build the engine's arrays."""
    check_supported(model)
    mj_body = np.flatnonzero(model.body_jntnum > 0).astype(np.int64)
    body_index = np.full(model.nbody, -1, dtype=np.int64)
    body_index[mj_body] = np.arange(mj_body.size)
    constraints = build_constraints(model, body_index)
    free_joints = np.flatnonzero(model.jnt_type == int(mujoco.mjtJoint.mjJNT_FREE))
    free = body_index[model.jnt_bodyid[free_joints]]
    qposadr = model.jnt_qposadr[free_joints].astype(np.int64)
    dofadr = model.jnt_dofadr[free_joints].astype(np.int64)

    mass = model.body_mass[mj_body].copy()
    inertia = model.body_inertia[mj_body].copy()
    damping = np.zeros((mj_body.size, 6))
    for b, a in zip(free, dofadr, strict=True):
        damping[b] = model.dof_damping[a:a + 6]
    fluid_linear, fluid_quadratic = _fluid_coefficients(model, mass, inertia)
    bodies = Bodies(mass, 1.0 / mass, inertia, 1.0 / inertia, model.body_ipos[mj_body].copy(),
                    model.body_iquat[mj_body].copy(), damping, fluid_linear, fluid_quadratic)

    disabled = model.opt.disableflags
    coordinates = constraints.coordinates
    actuators = _actuators(model, body_index, coordinates, active=not (disabled & _DISABLE.mjDSBL_ACTUATION),
                           clamp=not (disabled & _DISABLE.mjDSBL_CLAMPCTRL))
    gravity = np.zeros(3) if disabled & _DISABLE.mjDSBL_GRAVITY else model.opt.gravity.copy()
    fluid = bool(model.opt.density > 0 or model.opt.viscosity > 0) and mj_body.size > 0
    # Hinge/slide damping and the servos' kv act through damper rows (constraints.damper_compliance), not as
    # forces; the other velocity-dependent forces make the closing kick a fixed-point iteration (step.closing_kick).
    coordinate_damping = coordinates.damping.copy()
    for i in np.flatnonzero(actuators.damper):
        coordinate_damping[actuators.coordinate[i]] -= actuators.gear[i, 0] ** 2 * actuators.bias_vel[i]
    undamped = ~actuators.damper
    implicit = fluid or bool(np.any(damping)) or bool(np.any(actuators.gain_vel[undamped])
                                                        or np.any(actuators.bias_vel[undamped]))
    smooth = fluid or bool(np.any(damping)) or bool(np.any(actuators.body >= 0))
    coordinate_forces = bool(np.any(actuators.coordinate >= 0) or np.any(coordinates.stiffness)
                             or coordinates.tendon_stiffness.size > 0)
    contacts = colliding_pairs(model)[0].size > 0
    env = Environment(gravity, model.opt.wind.copy(), fluid, smooth, implicit, coordinate_forces, contacts)
    rows = Rows.concatenate([constraints.rows, damper_rows(coordinates, coordinate_damping)])
    linkage = Linkage(rows, coordinates, Solver())

    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    joined = {int(b) for b in np.concatenate((constraints.rows.body_a, constraints.rows.body_b)) if b >= 0}
    confinements = build_confinements(model, data, body_index, joined)
    static = body_index < 0
    static_potential = -float(model.body_mass[static] @ (data.xipos[static] @ gravity))
    geoms = contact_geoms(model, body_index) if contacts else Geoms.empty()
    if model.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_FILTERPARENT:
        # no parent weld body: MuJoCo's parent-child filter (collision.broad.can_collide) never applies
        geoms = geoms._replace(parent=np.full_like(geoms.parent, -1))
    return EngineModel(bodies, actuators, env, linkage, geoms, confinements, constraints.owner, mj_body,
                       body_index, free, qposadr, dofadr, data.xpos.copy(), data.xquat.copy(), static_potential,
                       model.nq, model.nv, model.nu)


def _fluid_coefficients(model: mujoco.MjModel, mass: np.ndarray, inertia: np.ndarray):
    """MuJoCo's inertia-box fluid model (engine_passive.c, mj_inertiaBoxFluidModel).

    Box sides from the principal moments: b_i = sqrt(6 (I_j + I_k - I_i) / m). Viscous (Stokes) drag on a
    sphere of diameter d = (b_0 + b_1 + b_2)/3: F = -3 pi d mu v, T = -pi d^3 mu w. Quadratic drag:
    F_i = -1/2 rho b_j b_k |v_i| v_i,  T_i = -rho b_i (b_j^4 + b_k^4) |w_i| w_i / 64, in principal axes,
    with v the COM velocity relative to the wind.
    """
    rho, mu = model.opt.density, model.opt.viscosity
    linear = np.zeros((mass.size, 2))
    quadratic = np.zeros((mass.size, 6))
    for b in range(mass.size):
        i0, i1, i2 = inertia[b]
        box = [math.sqrt(max(mujoco.mjMINVAL, s) / mass[b] * 6.0) for s in (i1 + i2 - i0, i0 + i2 - i1, i0 + i1 - i2)]
        diameter = sum(box) / 3.0
        if mu > 0:
            linear[b] = (3.0 * math.pi * diameter * mu, math.pi * diameter ** 3 * mu)
        if rho > 0:
            for i in range(3):
                j, k = (i + 1) % 3, (i + 2) % 3
                quadratic[b, i] = 0.5 * rho * box[j] * box[k]
                quadratic[b, 3 + i] = rho * box[i] * (box[j] ** 4 + box[k] ** 4) / 64.0
    return linear, quadratic


def _actuators(model: mujoco.MjModel, body_index: np.ndarray, coordinates: Coordinates, active: bool,
               clamp: bool) -> Actuators:
    count = model.nu if active else 0
    gain, bias = model.actuator_gainprm[:count], model.actuator_biasprm[:count]
    affine_gain = model.actuator_gaintype[:count] == int(mujoco.mjtGain.mjGAIN_AFFINE)
    affine_bias = model.actuator_biastype[:count] == int(mujoco.mjtBias.mjBIAS_AFFINE)
    trn = model.actuator_trntype[:count]
    force_limited = model.actuator_forcelimited[:count].astype(bool)
    gain_vel = np.where(affine_gain, gain[:, 2], 0.0)
    bias_vel = np.where(affine_bias, bias[:, 2], 0.0)
    target = model.actuator_trnid[:count, 0]
    axes = np.full(count, JOINT_AXES, dtype=np.int64)
    axes[trn == int(mujoco.mjtTrn.mjTRN_JOINTINPARENT)] = PARENT_AXES
    mj_body = np.empty(count, dtype=np.int64)
    coordinate = np.full(count, -1, dtype=np.int64)
    site_pos, site_quat = np.zeros((count, 3)), np.tile([1.0, 0.0, 0.0, 0.0], (count, 1))
    for i in range(count):
        if trn[i] == int(mujoco.mjtTrn.mjTRN_SITE):
            axes[i] = SITE_AXES
            mj_body[i] = model.site_bodyid[target[i]]
            site_pos[i], site_quat[i] = model.site_pos[target[i]], model.site_quat[target[i]]
        elif model.jnt_type[target[i]] == int(mujoco.mjtJoint.mjJNT_FREE):
            mj_body[i] = model.jnt_bodyid[target[i]]
        else:  # hinge or slide (support.py refuses the rest): acts through the coordinate's measuring row
            mj_body[i] = 0
            coordinate[i] = int(np.flatnonzero(coordinates.qposadr == model.jnt_qposadr[target[i]])[0])
    return Actuators(
        body=body_index[mj_body],
        coordinate=coordinate,
        axes=axes,
        site_pos=site_pos,
        site_quat=site_quat,
        gear=model.actuator_gear[:count].copy(),
        gain0=gain[:, 0].copy(),
        gain_len=np.where(affine_gain, gain[:, 1], 0.0),
        gain_vel=gain_vel,
        bias0=np.where(affine_bias, bias[:, 0], 0.0),
        bias_len=np.where(affine_bias, bias[:, 1], 0.0),
        bias_vel=bias_vel,
        ctrl_limited=model.actuator_ctrllimited[:count].astype(bool) & clamp,
        ctrl_range=model.actuator_ctrlrange[:count].copy(),
        force_limited=force_limited,
        force_range=model.actuator_forcerange[:count].copy(),
        damper=(coordinate >= 0) & ~force_limited & (gain_vel == 0.0) & (bias_vel < 0.0),
    )
