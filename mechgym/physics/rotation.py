"""The free-rotor drift: torque-free rotation of a body's principal frame (quaternions as in ``vectors``)."""

from __future__ import annotations

import math

from .jit import kernel
from .vectors import axis_component, normalize


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
