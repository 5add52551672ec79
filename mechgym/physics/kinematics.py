"""Per-body kinematics derived from the engine state, and wrenches given at a point of a body.

The per-step code works on scalars and indexes arrays in place (see :mod:`mechgym.physics.vectors`).
"""

from __future__ import annotations

from .jit import kernel
from .state import world_spin
from .vectors import mul, rot

# Columns of the per-body frame scratch (B, FRAME_SIZE) filled by derive_frame.
OMEGA, BODY_QUAT, OFFSET, ORIGIN_VEL, OMEGA_LOCAL, FRAME_SIZE = 0, 3, 7, 10, 13, 16


@kernel
def derive_frame(bodies, state, world, b, frames):
    """Fill row b of ``frames``: world angular velocity w (rad/s), body quaternion
    q_b = q_p (x) conj(iquat), offset r = origin - c = -R_b ipos (m), origin velocity
    v_o = v_c + w x r (m/s) and body-frame angular velocity R_b^T w (rad/s)."""
    qw, qx, qy, qz = state.quat[world, b, 0], state.quat[world, b, 1], state.quat[world, b, 2], state.quat[world, b, 3]
    wx, wy, wz = world_spin(qw, qx, qy, qz, bodies.inv_inertia[b, 0], bodies.inv_inertia[b, 1],
                            bodies.inv_inertia[b, 2], state.momentum[world, b, 0], state.momentum[world, b, 1],
                            state.momentum[world, b, 2])
    iq = bodies.iquat
    bw, bx, by, bz = mul(qw, qx, qy, qz, iq[b, 0], -iq[b, 1], -iq[b, 2], -iq[b, 3])
    rx, ry, rz = rot(bw, bx, by, bz, -bodies.ipos[b, 0], -bodies.ipos[b, 1], -bodies.ipos[b, 2])
    lx, ly, lz = rot(bw, -bx, -by, -bz, wx, wy, wz)
    row = frames[b]
    row[OMEGA], row[OMEGA + 1], row[OMEGA + 2] = wx, wy, wz
    row[BODY_QUAT], row[BODY_QUAT + 1], row[BODY_QUAT + 2], row[BODY_QUAT + 3] = bw, bx, by, bz
    row[OFFSET], row[OFFSET + 1], row[OFFSET + 2] = rx, ry, rz
    row[ORIGIN_VEL] = state.vel[world, b, 0] + wy * rz - wz * ry
    row[ORIGIN_VEL + 1] = state.vel[world, b, 1] + wz * rx - wx * rz
    row[ORIGIN_VEL + 2] = state.vel[world, b, 2] + wx * ry - wy * rx
    row[OMEGA_LOCAL], row[OMEGA_LOCAL + 1], row[OMEGA_LOCAL + 2] = lx, ly, lz


@kernel
def add_wrench_at(wrench, b, rx, ry, rz, fx, fy, fz, tx, ty, tz):
    """Add a force f (N, world) acting at the point c + r of body b plus a torque t (N m, world) to
    wrench[b] as the equivalent wrench about the COM c: F += f, T += t + r x f."""
    wrench[b, 0] += fx
    wrench[b, 1] += fy
    wrench[b, 2] += fz
    wrench[b, 3] += tx + ry * fz - rz * fy
    wrench[b, 4] += ty + rz * fx - rx * fz
    wrench[b, 5] += tz + rx * fy - ry * fx
