"""Quaternion helpers and the free-rotor drift.

Quaternions are (w, x, y, z) unit quaternions; ``q`` maps body (or principal) coordinates to world
coordinates: ``v_world = R(q) v_body``. All functions are numba kernels that write into caller-owned
arrays or return scalars, so they allocate nothing in the integrator's inner loop.
"""

from __future__ import annotations

import math

from numba import njit


@njit(cache=True)
def quat_mul(a, b, out):
    """out = a (x) b (Hamilton product); ``out`` may not alias ``a`` or ``b``."""
    out[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3]
    out[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2]
    out[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1]
    out[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]


@njit(cache=True)
def quat_mul_conj(a, b, out):
    """out = a (x) conj(b); ``out`` may not alias ``a`` or ``b``."""
    out[0] = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]
    out[1] = -a[0] * b[1] + a[1] * b[0] - a[2] * b[3] + a[3] * b[2]
    out[2] = -a[0] * b[2] + a[1] * b[3] + a[2] * b[0] - a[3] * b[1]
    out[3] = -a[0] * b[3] - a[1] * b[2] + a[2] * b[1] + a[3] * b[0]


@njit(cache=True)
def rotate(q, v, out):
    """out = R(q) v. With u = (x, y, z): R v = v + 2 w (u x v) + 2 u x (u x v). ``out`` may alias ``v``."""
    w, x, y, z = q[0], q[1], q[2], q[3]
    tx = 2.0 * (y * v[2] - z * v[1])
    ty = 2.0 * (z * v[0] - x * v[2])
    tz = 2.0 * (x * v[1] - y * v[0])
    ox = v[0] + w * tx + (y * tz - z * ty)
    oy = v[1] + w * ty + (z * tx - x * tz)
    oz = v[2] + w * tz + (x * ty - y * tx)
    out[0], out[1], out[2] = ox, oy, oz


@njit(cache=True)
def rotate_inverse(q, v, out):
    """out = R(q)^T v (rotation by conj(q)). ``out`` may alias ``v``."""
    w, x, y, z = q[0], -q[1], -q[2], -q[3]
    tx = 2.0 * (y * v[2] - z * v[1])
    ty = 2.0 * (z * v[0] - x * v[2])
    tz = 2.0 * (x * v[1] - y * v[0])
    ox = v[0] + w * tx + (y * tz - z * ty)
    oy = v[1] + w * ty + (z * tx - x * tz)
    oz = v[2] + w * tz + (x * ty - y * tx)
    out[0], out[1], out[2] = ox, oy, oz


@njit(cache=True)
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


@njit(cache=True)
def normalize(q):
    """Scale ``q`` in place to unit length."""
    s = 1.0 / math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    for i in range(4):
        q[i] *= s


@njit(cache=True)
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


@njit(cache=True)
def _principal_flow(q, axis, inv_inertia, momentum, tau):
    """Exact flow of H_i = pi_i^2 / (2 I_i) for ``tau`` seconds.

    pi_i = (R e_i) . L is constant under this flow, the body turns about its own axis i at the rate
    pi_i / I_i, and the world-frame angular momentum L is untouched.
    """
    rate = axis_component(q, axis, momentum) * inv_inertia[axis]
    _rotate_about_axis(q, axis, rate * tau)


@njit(cache=True)
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
