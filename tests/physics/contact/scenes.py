"""MJCF scenes and helpers for the contact tests (gravity 9.81 m/s^2 along -z unless stated)."""

from __future__ import annotations

import math

import numpy as np

from .driver import COM, MOMENTUM, VEL, ContactScene

GRAVITY = 9.81


def ball_drop(height: float, radius: float, restitution: float) -> str:
    """A 1 kg ball with its lowest point ``height`` m above a floor plane, restitution on the ball."""
    return (f'<mujoco><custom><numeric name="restitution:ball" data="{restitution}"/></custom><worldbody>'
            '<geom name="floor" type="plane" size="5 5 0.1"/>'
            f'<body pos="0 0 {height + radius}"><freejoint/><geom name="ball" type="sphere" size="{radius}" mass="1"/>'
            '</body></worldbody></mujoco>')


def box_on_floor(half, pos, euler="0 0 0", restitution=0.0, friction=1.0, static_friction=None, mass=1.0) -> str:
    """A box (half extents ``half``, m) at ``pos`` over a floor plane; MJCF sliding friction on both geoms."""
    static = '' if static_friction is None else f'<numeric name="static_friction:box" data="{static_friction}"/>'
    return (f'<mujoco><custom><numeric name="restitution:box" data="{restitution}"/>{static}</custom><worldbody>'
            f'<geom name="floor" type="plane" size="50 50 0.1" friction="{friction} 0 0"/>'
            f'<body pos="{pos[0]} {pos[1]} {pos[2]}" euler="{euler}"><freejoint/>'
            f'<geom name="box" type="box" size="{half[0]} {half[1]} {half[2]}" friction="{friction} 0 0" '
            f'mass="{mass}"/></body></worldbody></mujoco>')


def on_slope(geom: str, offset: float, angle_deg: float, friction: float, static_friction: float) -> str:
    """A body whose geom ``geom`` (named "body") rests on a plane tilted by ``angle_deg`` about y, its centre
    ``offset`` m along the plane's normal; MJCF sliding friction ``friction`` on both geoms."""
    angle = math.radians(angle_deg)
    pos = offset * np.array([math.sin(angle), 0.0, math.cos(angle)])
    return (f'<mujoco><custom><numeric name="static_friction:body" data="{static_friction}"/></custom><worldbody>'
            f'<geom name="slope" type="plane" size="50 50 0.1" euler="0 {angle_deg} 0" friction="{friction} 0 0"/>'
            f'<body pos="{pos[0]} {pos[1]} {pos[2]}" euler="0 {angle_deg} 0"><freejoint/>'
            f'<geom name="body" {geom} friction="{friction} 0 0" mass="1"/></body></worldbody></mujoco>')


def downhill(angle_deg: float) -> np.ndarray:
    """The unit vector down the slope of ``on_slope`` (the plane's local x axis)."""
    angle = math.radians(angle_deg)
    return np.array([math.cos(angle), 0.0, -math.sin(angle)])


def stack(count: int, half: float) -> str:
    """``count`` equal 1 kg cubes (half size ``half``) stacked exactly on a floor plane."""
    bodies = "".join(f'<body pos="0 0 {half * (2 * k + 1)}"><freejoint/>'
                     f'<geom name="cube{k}" type="box" size="{half} {half} {half}" mass="1"/></body>'
                     for k in range(count))
    return f'<mujoco><worldbody><geom name="floor" type="plane" size="5 5 0.1"/>{bodies}</worldbody></mujoco>'


def wall_shot(thickness: float, restitution: float) -> str:
    """A 2 cm ball (100 g) 1 m in front of a static wall ``thickness`` m thick, no gravity."""
    return ('<mujoco><option gravity="0 0 0"/><custom>'
            f'<numeric name="restitution:ball" data="{restitution}"/></custom><worldbody>'
            f'<geom name="wall" type="box" size="{thickness / 2} 1 1" pos="1 0 1"/>'
            '<body pos="0 0 1"><freejoint/><geom name="ball" type="sphere" size="0.02" mass="0.1"/></body>'
            '</worldbody></mujoco>')


def run(scene: ContactScene, h: float, seconds: float):
    """Prime the contacts and run ``seconds``; returns (com, vel, momentum) per step (n, B, 3) and the touching
    contact count per step, after checking that every step succeeded."""
    assert scene.prime(h) >= 0
    n = int(round(seconds / h))
    trace, active, status = scene.run(h, n)
    assert tuple(status) == (n, 0), status
    return trace[..., COM:COM + 3], trace[..., VEL:VEL + 3], trace[..., MOMENTUM:MOMENTUM + 3], active
