"""Forces on the free bodies, as world-frame wrenches (force N, torque N m) about each centre of mass.

Gravity is not here: it is a constant acceleration that the kicks add directly (so a projectile is
exact). Everything else that acts continuously is summed by :func:`smooth_wrench`; applied force windows
are integrated exactly over a half-step by :func:`window_impulse`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .actuators import actuator_force, actuator_wrench
from .constraints import evaluate_row, row_rate
from .jit import kernel
from .joints import add_coordinate_forces, add_row_force, coordinate_value, unwrapped
from .kinematics import BODY_QUAT, OFFSET, OMEGA_LOCAL, ORIGIN_VEL, add_wrench_at, derive_frame
from .vectors import rot


class Windows(NamedTuple):
    """Applied force windows: world index, engine body, wrench (force N, torque N m), active [start, stop) s."""

    world: np.ndarray  # (K,) int64
    body: np.ndarray  # (K,) int64
    wrench: np.ndarray  # (K, 6)
    start: np.ndarray  # (K,)
    stop: np.ndarray  # (K,)

    @staticmethod
    def empty() -> Windows:
        """No windows."""
        index = np.zeros(0, dtype=np.int64)
        return Windows(index, index, np.zeros((0, 6)), np.zeros(0), np.zeros(0))


@kernel(inline=True)
def _fluid(bodies, env, state, world, b, wrench):
    """MuJoCo's inertia-box fluid force (see model._fluid_coefficients), in principal axes:
    F_i = -(c_lin + k_i |u_i|) u_i with u = R_p^T (v_c - wind);  T_i = -(c_ang + k_{3+i} |w_i|) w_i."""
    qw, qx, qy, qz = state.quat[world, b, 0], state.quat[world, b, 1], state.quat[world, b, 2], state.quat[world, b, 3]
    lin, quad = bodies.fluid_linear, bodies.fluid_quadratic
    ux, uy, uz = rot(qw, -qx, -qy, -qz, state.vel[world, b, 0] - env.wind[0], state.vel[world, b, 1] - env.wind[1],
                     state.vel[world, b, 2] - env.wind[2])
    fx, fy, fz = rot(qw, qx, qy, qz, -(lin[b, 0] + quad[b, 0] * abs(ux)) * ux,
                     -(lin[b, 0] + quad[b, 1] * abs(uy)) * uy, -(lin[b, 0] + quad[b, 2] * abs(uz)) * uz)
    px, py, pz = rot(qw, -qx, -qy, -qz, state.momentum[world, b, 0], state.momentum[world, b, 1],
                     state.momentum[world, b, 2])
    wx, wy, wz = px * bodies.inv_inertia[b, 0], py * bodies.inv_inertia[b, 1], pz * bodies.inv_inertia[b, 2]
    tx, ty, tz = rot(qw, qx, qy, qz, -(lin[b, 1] + quad[b, 3] * abs(wx)) * wx,
                     -(lin[b, 1] + quad[b, 4] * abs(wy)) * wy, -(lin[b, 1] + quad[b, 5] * abs(wz)) * wz)
    add_wrench_at(wrench, b, 0.0, 0.0, 0.0, fx, fy, fz, tx, ty, tz)


@kernel(inline=True)
def _damping(bodies, b, frames, wrench):
    """Free-joint dof damping, MuJoCo's qfrc_damper = -d * qvel: f = -d_{0:3} v_o (world axes) at the
    origin, torque -d_{3:6} w_body in body axes."""
    d = bodies.damping
    tx, ty, tz = rot(frames[b, BODY_QUAT], frames[b, BODY_QUAT + 1], frames[b, BODY_QUAT + 2],
                     frames[b, BODY_QUAT + 3], -d[b, 3] * frames[b, OMEGA_LOCAL],
                     -d[b, 4] * frames[b, OMEGA_LOCAL + 1], -d[b, 5] * frames[b, OMEGA_LOCAL + 2])
    add_wrench_at(wrench, b, frames[b, OFFSET], frames[b, OFFSET + 1], frames[b, OFFSET + 2],
                  -d[b, 0] * frames[b, ORIGIN_VEL], -d[b, 1] * frames[b, ORIGIN_VEL + 1],
                  -d[b, 2] * frames[b, ORIGIN_VEL + 2], tx, ty, tz)


class CoordinateScratch(NamedTuple):
    """Scratch of ``coordinate_wrench`` for C hinge/slide coordinates."""

    force: np.ndarray  # (C,) generalised force, N m or N
    grad: np.ndarray  # (12,)
    omega: np.ndarray  # (3,)

    @staticmethod
    def zeros(coordinates: int) -> CoordinateScratch:
        """A zeroed ``CoordinateScratch`` for ``coordinates`` hinge/slide coordinates."""
        return CoordinateScratch(np.zeros(coordinates), np.zeros(12), np.zeros(3))


@kernel(inline=True)
def coordinate_wrench(bodies, actuators, coordinates, state, world, ctrl, scratch, wrench):
    """Add the springs' forces (``_add_springs``) and the hinge/slide actuator forces (MuJoCo's qfrc_spring and
    qfrc_actuator) to the bodies' wrenches (B, 6), less what the damper rows apply implicitly
    (``constraints.damper_compliance``): the joint damping (qfrc_damper) and the velocity term of each
    ``actuators.damper``. Per coordinate c: q = qpos0 + g (unwrapped against state.turns) and qvel = G v of its
    measuring row; Q_c = the sum over its actuators of gear0 a with a = actuator_force(l = gear0 q, v = gear0 qvel),
    q and qvel taken only for an actuator whose force law reads them (l = 0, v = 0 for the others: a motor's force
    is gear0 ctrl); Q acts on the two bodies as Q G (virtual work, ``joints.add_coordinate_forces``)."""
    rows = coordinates.rows
    springs = coordinates.tendon_rows.kind.size > 0
    for c in range(rows.kind.size):
        scratch.force[c] = 0.0
        springs = springs or coordinates.stiffness[c] != 0.0
    if springs:
        _add_springs(coordinates, state, world, scratch.grad, wrench)
    for i in range(actuators.coordinate.size):
        c = actuators.coordinate[i]
        if c < 0:
            continue
        gear = actuators.gear[i, 0]
        length, rate = 0.0, 0.0
        reads_length = actuators.gain_len[i] != 0.0 or actuators.bias_len[i] != 0.0
        if reads_length:
            length = gear * (coordinates.qpos0[c] + coordinate_value(coordinates, c, state, world,
                                                                      state.turns[world], scratch.grad))
        if not actuators.damper[i] and (actuators.gain_vel[i] != 0.0 or actuators.bias_vel[i] != 0.0):
            if not reads_length:  # (else coordinate_value left the row's gradient in grad)
                evaluate_row(rows, c, state, world, scratch.grad)
            rate = gear * row_rate(rows, bodies, state, world, c, scratch.grad, scratch.omega)
        scratch.force[c] += gear * actuator_force(actuators, i, ctrl, length, rate)
    add_coordinate_forces(coordinates, state, world, scratch.force, scratch.grad, wrench)


@kernel
def _add_springs(coordinates, state, world, grad, wrench):
    """Add each spring's force along its row to the wrenches of the row's bodies (MuJoCo's qfrc_spring): a hinge's or
    slide's, -stiffness (q - springref) (q unwrapped against state.turns), and a spring tendon's, -stiffness
    (length - rest) beyond its rest lengths (``Coordinates.tendon_rest``), along its sites' line. ``grad`` (12,):
    scratch. (Not inlined, and one row evaluation for both kinds: a rare path, which ``applied_wrench``'s four callers
    would each compile again.)"""
    joints = coordinates.rows.kind.size
    for k in range(joints + coordinates.tendon_rows.kind.size):
        if k < joints and coordinates.stiffness[k] == 0.0:
            continue
        rows, r = (coordinates.rows, k) if k < joints else (coordinates.tendon_rows, k - joints)
        value = evaluate_row(rows, r, state, world, grad)
        if k < joints:
            stiffness = coordinates.stiffness[k]
            q = coordinates.qpos0[k] + unwrapped(coordinates, k, value, state.turns[world])
            stretch = q - coordinates.springref[k]
        else:
            stiffness = coordinates.tendon_stiffness[r]
            low, high = coordinates.tendon_rest[r, 0], coordinates.tendon_rest[r, 1]
            stretch = value - high if value > high else (value - low if value < low else 0.0)
        if stretch != 0.0:
            add_row_force(rows, r, grad, -stiffness * stretch, wrench)


@kernel(inline=True)
def applied_wrench(bodies, actuators, env, coordinates, state, world, ctrl, frames, scratch, wrench):
    """wrench (B, 6) = the smooth forces (N, N m about each COM) at the state of ``world`` under ``ctrl``: those on
    the bodies (``smooth_wrench``, in a scene with any: ``Environment.smooth``; else 0) and the hinge/slide
    actuators' (``coordinate_wrench``, in a scene with any: ``Environment.coordinate_forces``). ``frames``
    (B, FRAME_SIZE) and ``scratch`` (a CoordinateScratch) are scratch."""
    if env.smooth:
        smooth_wrench(bodies, actuators, env, state, world, ctrl, frames, wrench)
    else:
        for b in range(wrench.shape[0]):
            for i in range(6):
                wrench[b, i] = 0.0
    if env.coordinate_forces:
        coordinate_wrench(bodies, actuators, coordinates, state, world, ctrl, scratch, wrench)


@kernel(inline=True)
def smooth_wrench(bodies, actuators, env, state, world, ctrl, frames, wrench):
    """wrench[b] = sum of fluid, free-joint damping and free-joint/site actuator wrenches (N, N m) about each
    COM at the state of ``world``; ``frames`` (B, FRAME_SIZE) holds each body's derived frame afterwards.
    Hinge/slide damping and actuators are added by ``coordinate_wrench`` (``applied_wrench`` calls both)."""
    for b in range(wrench.shape[0]):
        for i in range(6):
            wrench[b, i] = 0.0
        derive_frame(bodies, state, world, b, frames)
        if env.fluid:
            _fluid(bodies, env, state, world, b, wrench)
        _damping(bodies, b, frames, wrench)
    actuator_wrench(actuators, ctrl, frames, wrench)


@kernel(inline=True)
def window_impulse(windows, world, t0, t1, impulse):
    """impulse[b] = sum over ``world``'s windows of wrench x |[t0, t1) n [start, stop)| (N s, N m s).

    Windows on static bodies (engine index -1) act on nothing.
    """
    impulse[:, :] = 0.0
    for k in range(windows.world.size):
        b = windows.body[k]
        if windows.world[k] != world or b < 0:
            continue
        overlap = min(t1, windows.stop[k]) - max(t0, windows.start[k])
        if overlap > 0.0:
            for i in range(6):
                impulse[b, i] += windows.wrench[k, i] * overlap
