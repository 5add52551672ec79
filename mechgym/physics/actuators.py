"""Actuators with MJCF semantics (MuJoCo's mj_transmission + mj_fwdActuation): the force law, and the
wrenches of free-joint and site transmissions (hinge and slide transmissions act through their coordinate,
``forces.coordinate_wrench``).

Actuator i with gear g = (g_f, g_t) acts at a point p of its body along world directions
  f = A_f g_f  and  t = A_t g_t:
  joint transmission (free joint)   p = body origin, A_f = I (world axes),  A_t = R_b (body axes)
  jointinparent                     p = body origin, A_f = I,               A_t = I
  site transmission (no refsite)    p = site,        A_f = A_t = R_site = R_b R(site_quat)
These are MuJoCo's moment rows: the free joint's translational dofs are world-frame and its rotational
dofs body-frame; a site's wrench is the gear in the site frame pushed through the site Jacobian.
  velocity             v = f . v_p + t . w   (v_p: velocity of the point p, w: world angular velocity)
  control              u = clamp(ctrl, ctrlrange) when ctrllimited
  force (N or N m)     a = (gain0 + gain_len l + gain_vel v) u + bias0 + bias_len l + bias_vel v, clamped to
                       forcerange when forcelimited (``actuator_force``)
  wrench on the body   force a f at p, torque a t.
The transmission length l is 0 for all three (see ``model.Actuators``).
"""

from __future__ import annotations

from .jit import kernel
from .kinematics import BODY_QUAT, OFFSET, OMEGA, ORIGIN_VEL, add_wrench_at
from .vectors import mul, rot

JOINT_AXES, PARENT_AXES, SITE_AXES = 0, 1, 2


@kernel
def _clamp(value, limited, low, high):
    if limited:
        return min(max(value, low), high)
    return value


@kernel(inline=True)
def actuator_force(actuators, i, ctrl, length, velocity):
    """MuJoCo's force of actuator i (N or N m) for the controls ``ctrl``, the transmission length (m or rad)
    and velocity (m/s or rad/s): a = clamp((gain0 + gain_len l + gain_vel v) u + bias0 + bias_len l
    + bias_vel v) with u = clamp(ctrl[i])."""
    u = _clamp(ctrl[i], actuators.ctrl_limited[i], actuators.ctrl_range[i, 0], actuators.ctrl_range[i, 1])
    force = (actuators.gain0[i] + actuators.gain_len[i] * length + actuators.gain_vel[i] * velocity) * u
    force += actuators.bias0[i] + actuators.bias_len[i] * length + actuators.bias_vel[i] * velocity
    return _clamp(force, actuators.force_limited[i], actuators.force_range[i, 0], actuators.force_range[i, 1])


@kernel(inline=True)
def actuator_wrench(actuators, ctrl, frames, wrench):
    """Add every free-joint and site actuator's wrench about its body's COM (N, N m, world) to ``wrench``
    (B, 6), given each body's derived frame row. Actuators on static bodies and hinge/slide actuators (engine
    index -1) are skipped."""
    gear = actuators.gear
    for i in range(actuators.body.size):
        b = actuators.body[i]
        if b < 0:
            continue
        q = BODY_QUAT
        bw, bx, by, bz = frames[b, q], frames[b, q + 1], frames[b, q + 2], frames[b, q + 3]
        # world directions f = A_f g_f, t = A_t g_t
        fx, fy, fz = gear[i, 0], gear[i, 1], gear[i, 2]
        tx, ty, tz = gear[i, 3], gear[i, 4], gear[i, 5]
        if actuators.axes[i] == JOINT_AXES:
            tx, ty, tz = rot(bw, bx, by, bz, tx, ty, tz)
        elif actuators.axes[i] == SITE_AXES:
            sq = actuators.site_quat
            sw, sx, sy, sz = mul(bw, bx, by, bz, sq[i, 0], sq[i, 1], sq[i, 2], sq[i, 3])
            fx, fy, fz = rot(sw, sx, sy, sz, fx, fy, fz)
            tx, ty, tz = rot(sw, sx, sy, sz, tx, ty, tz)
        # arm p - origin = R_b site_pos (0 for joints); velocity v = f . (v_o + w x arm) + t . w
        ax, ay, az = rot(bw, bx, by, bz, actuators.site_pos[i, 0], actuators.site_pos[i, 1], actuators.site_pos[i, 2])
        wx, wy, wz = frames[b, OMEGA], frames[b, OMEGA + 1], frames[b, OMEGA + 2]
        velocity = (fx * (frames[b, ORIGIN_VEL] + wy * az - wz * ay)
                    + fy * (frames[b, ORIGIN_VEL + 1] + wz * ax - wx * az)
                    + fz * (frames[b, ORIGIN_VEL + 2] + wx * ay - wy * ax)
                    + tx * wx + ty * wy + tz * wz)
        a = actuator_force(actuators, i, ctrl, 0.0, velocity)
        # the force acts at p: lever p - c = arm + (origin - c)
        add_wrench_at(wrench, b, ax + frames[b, OFFSET], ay + frames[b, OFFSET + 1], az + frames[b, OFFSET + 2],
                      a * fx, a * fy, a * fz, a * tx, a * ty, a * tz)
