"""Engine state for W worlds and its conversion to and from MuJoCo's free-joint layout.

State (struct of arrays, leading world axis):
  com (W, B, 3)      centre of mass, world, m
  quat (W, B, 4)     principal-axes orientation, world <- principal
  vel (W, B, 3)      COM velocity, world, m/s
  momentum (W, B, 3) angular momentum about the COM, world, kg m^2/s
  turns (W, C)       unwrapped angle of each hinge coordinate at the last step, rad (``joints.coordinate_value``;
                     0 for slide coordinates)
  impulse_position (W, R), impulse_velocity (W, R)
                     each constraint row's SHAKE and velocity-projection impulse of the last step (N s or
                     N m s): the reaction forces (P_position + P_velocity)/h, and the projection's warm start
  chord_rate (W, R)  each row's rate along its start gradient at the last step's SHAKE solution (m/s or rad/s):
                     the aim of the next step's first SHAKE iterate (``constraints.Workspace.chord_rate``)

The last four make the continuation of a saved state bit-exact (warm starts included).

MuJoCo's free joint: qpos = (body-frame origin, body quaternion); qvel = (origin velocity in the world
frame, angular velocity in the BODY frame). ``load_generalized`` reads that layout here;
``joints.read_state`` writes it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .jit import allocating, kernel
from .vectors import basis, normalize, quat_mul, rot, rotate, rotate_inverse


class State(NamedTuple):
    com: np.ndarray
    quat: np.ndarray
    vel: np.ndarray
    momentum: np.ndarray
    turns: np.ndarray
    impulse_position: np.ndarray
    impulse_velocity: np.ndarray
    chord_rate: np.ndarray

    @staticmethod
    def zeros(worlds: int, bodies: int, coordinates: int = 0, rows: int = 0) -> State:
        quat = np.zeros((worlds, bodies, 4))
        quat[..., 0] = 1.0
        return State(np.zeros((worlds, bodies, 3)), quat, np.zeros((worlds, bodies, 3)),
                     np.zeros((worlds, bodies, 3)), np.zeros((worlds, coordinates)), np.zeros((worlds, rows)),
                     np.zeros((worlds, rows)), np.zeros((worlds, rows)))

    def copy(self) -> State:
        return State(*(a.copy() for a in self))

    def assign(self, other: State) -> None:
        """Overwrite this state's arrays in place with ``other``'s values."""
        for mine, theirs in zip(self, other, strict=True):
            mine[...] = theirs


@kernel
def world_spin(qw, qx, qy, qz, i0, i1, i2, lx, ly, lz):
    """w = R diag(1/I) R^T L (rad/s) for the principal frame q, inverse principal moments i (1/(kg m^2)) and
    the world angular momentum L (kg m^2/s), all scalars; returns (x, y, z)."""
    px, py, pz = rot(qw, -qx, -qy, -qz, lx, ly, lz)
    return rot(qw, qx, qy, qz, px * i0, py * i1, pz * i2)


@kernel
def world_inverse_inertia(quat, inv_inertia, out):
    """out (6,) = R diag(1/I) R^T (1/(kg m^2)), the world inverse inertia of the principal frame ``quat`` (4,) with
    the inverse principal moments ``inv_inertia`` (3,), as (xx, yy, zz, xy, xz, yz): sum over the principal axes
    e_k = R u_k of (1/I_k) e_k e_k^T. With it, w = out L costs 15 operations where ``world_spin`` costs about 60:
    the stages that read many rates at fixed orientations take it once per body (``constraints.Workspace.spin``)."""
    for i in range(6):
        out[i] = 0.0
    for k in range(3):
        ex, ey, ez = rot(quat[0], quat[1], quat[2], quat[3], *basis(k, 1.0))
        inv = inv_inertia[k]
        out[0] += inv * ex * ex
        out[1] += inv * ey * ey
        out[2] += inv * ez * ez
        out[3] += inv * ex * ey
        out[4] += inv * ex * ez
        out[5] += inv * ey * ez


@kernel(inline=True)
def tensor_spin(tensor, x, y, z):
    """T v for a symmetric 3 x 3 T given as (xx, yy, zz, xy, xz, yz) (``world_inverse_inertia``); returns (x, y, z)."""
    return (tensor[0] * x + tensor[3] * y + tensor[4] * z, tensor[3] * x + tensor[1] * y + tensor[5] * z,
            tensor[4] * x + tensor[5] * y + tensor[2] * z)


@kernel
def angular_velocity(inv_inertia, quat, momentum, out):
    """out = R diag(1/I) R^T L: world angular velocity (rad/s) from the world angular momentum."""
    out[0], out[1], out[2] = world_spin(quat[0], quat[1], quat[2], quat[3], inv_inertia[0], inv_inertia[1],
                                        inv_inertia[2], momentum[0], momentum[1], momentum[2])


@allocating
def load_generalized(bodies, free, qposadr, dofadr, qpos, qvel, state, world):
    """Set the free bodies ``free`` (F,) of world ``world`` from MuJoCo qpos/qvel at their free joints'
    addresses (F,) (quaternions are normalised)."""
    body_quat = np.empty(4)
    offset = np.empty(3)
    omega = np.empty(3)
    for k in range(qposadr.size):
        b, p, d = free[k], qposadr[k], dofadr[k]
        body_quat[:] = qpos[p + 3:p + 7]
        normalize(body_quat)
        quat_mul(body_quat, bodies.iquat[b], state.quat[world, b])
        # c = origin + R_b ipos;  v_c = v_origin + w x (c - origin);  L = R_p I R_p^T w
        rotate(body_quat, bodies.ipos[b], offset)
        rotate(body_quat, qvel[d + 3:d + 6], omega)
        for i in range(3):
            state.com[world, b, i] = qpos[p + i] + offset[i]
        state.vel[world, b, 0] = qvel[d] + omega[1] * offset[2] - omega[2] * offset[1]
        state.vel[world, b, 1] = qvel[d + 1] + omega[2] * offset[0] - omega[0] * offset[2]
        state.vel[world, b, 2] = qvel[d + 2] + omega[0] * offset[1] - omega[1] * offset[0]
        rotate_inverse(state.quat[world, b], omega, omega)
        for i in range(3):
            omega[i] *= bodies.inertia[b, i]
        rotate(state.quat[world, b], omega, state.momentum[world, b])


@kernel(inline=True)
def kinetic_energy(bodies, state, world):
    """1/2 m |v|^2 + 1/2 sum_i pi_i^2 / I_i (J) of one world, pi = R^T L the angular momentum in the principal
    frame."""
    total = 0.0
    for b in range(state.com.shape[1]):
        q, L = state.quat[world, b], state.momentum[world, b]
        local = rot(q[0], -q[1], -q[2], -q[3], L[0], L[1], L[2])
        for i in range(3):
            v = state.vel[world, b, i]
            total += 0.5 * bodies.mass[b] * v * v + 0.5 * local[i] * local[i] * bodies.inv_inertia[b, i]
    return total


@kernel
def energy(bodies, gravity, state, world):
    """Kinetic energy (``kinetic_energy``) plus potential -m g . c (J) of one world."""
    total = kinetic_energy(bodies, state, world)
    for b in range(state.com.shape[1]):
        for i in range(3):
            total -= bodies.mass[b] * gravity[i] * state.com[world, b, i]
    return total
