"""3-vectors and quaternions: the engine's one module of small vector helpers, numba kernels.

Vectors are ``(x, y, z)`` tuples of floats (or the first three entries of an array); rotation matrices are (3, 3)
arrays ``mat`` with ``mat[i, j]`` = world component i of the frame's local axis j (MuJoCo's ``geom_xmat``
reshaped), so a local point x maps to the world point ``pos + mat @ x``. Quaternions are (w, x, y, z) unit
quaternions; ``q`` maps body (or principal) coordinates to world coordinates: ``v_world = R(q) v_body``. The
quaternion helpers write into caller-owned arrays or take and return scalars (``mul``, ``rot``: the forms the
per-step force code uses).
"""

from __future__ import annotations

import math

from .jit import kernel


@kernel
def vec(a):
    """The first three entries of the array ``a`` as a tuple."""
    return (a[0], a[1], a[2])


@kernel
def column(mat, j):
    """Local axis ``j`` of the frame ``mat`` in world coordinates (unit vector)."""
    return (mat[0, j], mat[1, j], mat[2, j])


@kernel
def row(mat, i):
    """Row ``i`` of the matrix ``mat``: the world axis ``i`` in the frame's local coordinates."""
    return (mat[i, 0], mat[i, 1], mat[i, 2])


@kernel
def add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@kernel
def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@kernel
def scale(a, s):
    return (a[0] * s, a[1] * s, a[2] * s)


@kernel
def axpy(s, a, b):
    """s a + b."""
    return (s * a[0] + b[0], s * a[1] + b[1], s * a[2] + b[2])


@kernel
def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@kernel
def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@kernel
def norm(a):
    return math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


@kernel
def to_local(mat, pos, p):
    """mat^T (p - pos): the world point ``p`` in the frame (pos, mat)."""
    return rotate_local(mat, sub(p, pos))


@kernel
def rotate_local(mat, v):
    """mat^T v: the world direction ``v`` in the frame ``mat``."""
    return (dot(column(mat, 0), v), dot(column(mat, 1), v), dot(column(mat, 2), v))


@kernel
def to_world(mat, pos, x):
    """pos + mat x: the local point ``x`` of the frame (pos, mat) in world coordinates."""
    return (pos[0] + mat[0, 0] * x[0] + mat[0, 1] * x[1] + mat[0, 2] * x[2],
            pos[1] + mat[1, 0] * x[0] + mat[1, 1] * x[1] + mat[1, 2] * x[2],
            pos[2] + mat[2, 0] * x[0] + mat[2, 1] * x[1] + mat[2, 2] * x[2])


@kernel
def rotate_world(mat, x):
    """mat x: the local direction ``x`` in world coordinates."""
    return (dot(row(mat, 0), x), dot(row(mat, 1), x), dot(row(mat, 2), x))


@kernel
def basis(axis, value):
    """value e_axis: the vector with ``value`` at index ``axis`` (0, 1, 2) and zeros elsewhere."""
    return (value if axis == 0 else 0.0, value if axis == 1 else 0.0, value if axis == 2 else 0.0)


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
