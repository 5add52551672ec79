"""Quaternion helpers and the free-rotor drift.

Quaternions are (w, x, y, z) unit quaternions; ``q`` maps body (or principal) coordinates to world
coordinates: ``v_world = R(q) v_body``. All functions are numba kernels that write into caller-owned
arrays or take and return scalars (``mul``, ``rot``: the forms the per-step force code uses).
"""

from __future__ import annotations

import math

from .jit import kernel


@kernel
def mul(aw, ax, ay, az, bw, bx, by, bz):
    """Hamilton product a (x) b of two quaternions given as scalars; returns (w, x, y, z)."""
    return (aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw)


@kernel
def rot(w, x, y, z, vx, vy, vz):
    """R(q) v for q = (w, x, y, z) given as scalars; returns (x, y, z).

    With u = (x, y, z) and t = 2 u x v: R v = v + w t + u x t.
    """
    tx = 2.0 * (y * vz - z * vy)
    ty = 2.0 * (z * vx - x * vz)
    tz = 2.0 * (x * vy - y * vx)
    return vx + w * tx + (y * tz - z * ty), vy + w * ty + (z * tx - x * tz), vz + w * tz + (x * ty - y * tx)


@kernel
def quat_mul(a, b, out):
    """out = a (x) b; ``out`` may not alias ``a`` or ``b``."""
    out[0], out[1], out[2], out[3] = mul(a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3])


@kernel
def quat_mul_conj(a, b, out):
    """out = a (x) conj(b); ``out`` may not alias ``a`` or ``b``."""
    out[0], out[1], out[2], out[3] = mul(a[0], a[1], a[2], a[3], b[0], -b[1], -b[2], -b[3])


@kernel
def rotate(q, v, out):
    """out = R(q) v; ``out`` may alias ``v``."""
    out[0], out[1], out[2] = rot(q[0], q[1], q[2], q[3], v[0], v[1], v[2])


@kernel
def rotate_inverse(q, v, out):
    """out = R(q)^T v (rotation by conj(q)); ``out`` may alias ``v``."""
    out[0], out[1], out[2] = rot(q[0], -q[1], -q[2], -q[3], v[0], v[1], v[2])


@kernel
def axis_component(q, axis, v):
    """(R(q) e_axis) . v: the component of the world vector ``v`` along body axis ``axis`` (0, 1, 2)."""
    w, x, y, z = q[0], q[1], q[2], q[3]
    if axis == 0:
        cx, cy, cz = 1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y + w * z), 2.0 * (x * z - w * y)
    elif axis == 1:
        cx, cy, cz = 2.0 * (x * y - w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z + w * x)
    else:
        cx, cy, cz = 2.0 * (x * z + w * y), 2.0 * (y * z - w * x), 1.0 - 2.0 * (x * x + y * y)
    return cx * v[0] + cy * v[1] + cz * v[2]


@kernel
def normalize(q):
    """Scale ``q`` in place to unit length."""
    s = 1.0 / math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    for i in range(4):
        q[i] *= s


@kernel
def _rotate_about_axis(q, axis, angle):
    """q <- q (x) (cos(angle/2), sin(angle/2) e_axis): turn the body by ``angle`` (rad) about its own axis."""
    c = math.cos(0.5 * angle)
    s = math.sin(0.5 * angle)
    w, x, y, z = q[0], q[1], q[2], q[3]
    if axis == 0:
        q[0], q[1], q[2], q[3] = w * c - x * s, x * c + w * s, y * c + z * s, z * c - y * s
    elif axis == 1:
        q[0], q[1], q[2], q[3] = w * c - y * s, x * c - z * s, y * c + w * s, z * c + x * s
    else:
        q[0], q[1], q[2], q[3] = w * c - z * s, x * c + y * s, y * c - x * s, z * c + w * s


@kernel
def _principal_flow(q, axis, inv_inertia, momentum, tau):
    """Exact flow of H_i = pi_i^2 / (2 I_i) for ``tau`` seconds.

    pi_i = (R e_i) . L is constant under this flow, the body turns about its own axis i at the rate
    pi_i / I_i, and the world-frame angular momentum L is untouched.
    """
    rate = axis_component(q, axis, momentum) * inv_inertia[axis]
    _rotate_about_axis(q, axis, rate * tau)


@kernel
def free_rotor_drift(q, inv_inertia, momentum, h):
    """Advance the principal-frame orientation ``q`` by ``h`` seconds of torque-free rotation.

    Symmetric (Strang) splitting of H = sum_i pi_i^2 / (2 I_i) into exact rotations about the principal
    axes (Dullweber, Leimkuhler and McLachlan 1997; NO_SQUISH): R1(h/2) R2(h/2) R3(h) R2(h/2) R1(h/2).
    Each factor is a rotation, so |q| = 1 up to round-off (renormalised at the end) and the world-frame
    angular momentum ``momentum`` (kg m^2/s) is conserved exactly because it is never modified; the map is
    symplectic and time-reversible, so the energy error stays bounded (O(h^2), no drift).
    ``inv_inertia``: 1 / principal moments (1/(kg m^2)).
    """
    half = 0.5 * h
    _principal_flow(q, 0, inv_inertia, momentum, half)
    _principal_flow(q, 1, inv_inertia, momentum, half)
    _principal_flow(q, 2, inv_inertia, momentum, h)
    _principal_flow(q, 1, inv_inertia, momentum, half)
    _principal_flow(q, 0, inv_inertia, momentum, half)
    normalize(q)
