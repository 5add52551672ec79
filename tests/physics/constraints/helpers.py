"""Scenes and a recording driver for the RATTLE tests, built directly as engine arrays."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from mechgym.physics import constraints as rattle
from mechgym.physics.model import Bodies, Environment
from mechgym.physics.state import State, energy

GRAVITY = 9.81
# Gravity along -z, no wind; every other (boolean) setting off: no fluid, damping or actuator forces.
ENV = Environment(**{name: False for name in Environment._fields} | {"gravity": np.array([0.0, 0.0, -GRAVITY]),
                                                                      "wind": np.zeros(3)})

DEFAULT = rattle.Solver()

# Columns of the trace written by ``record``.
ENERGY, X, VX, RESIDUAL, FORCE = range(5)


def make_bodies(mass, inertia) -> Bodies:
    """Free bodies with the given masses (kg) and principal moments (kg m^2); no damping or fluid."""
    mass = np.atleast_1d(np.asarray(mass, dtype=float))
    inertia = np.asarray(inertia, dtype=float).reshape(mass.size, 3)
    iquat = np.zeros((mass.size, 4))
    iquat[:, 0] = 1.0
    return Bodies(mass=mass, inv_mass=1.0 / mass, inertia=inertia, inv_inertia=1.0 / inertia,
                  ipos=np.zeros((mass.size, 3)), iquat=iquat, damping=np.zeros((mass.size, 6)),
                  fluid_linear=np.zeros((mass.size, 2)), fluid_quadratic=np.zeros((mass.size, 6)))


def sphere(mass: float, radius: float) -> tuple[float, list[float]]:
    return mass, [0.4 * mass * radius * radius] * 3


@njit(cache=True)
def record(bodies, env, rows, solver, state, h, n, work, out):
    """Run ``n`` RATTLE steps of world 0 and write per step: total energy (J), x and v_x of body 0, the largest
    constraint violation (|g| of equality rows, the violated part of one-sided rows) and the reported
    force of row 0. Returns the number of steps completed."""
    wrench = np.zeros((state.com.shape[1], 6))
    impulse = np.zeros_like(wrench)
    grad = np.zeros(12)
    forces = np.zeros(rows.kind.size)
    for k in range(n):
        if rattle.rattle_step(bodies, env, rows, solver, state, 0, h, wrench, impulse, work) != rattle.OK:
            return k
        residual = 0.0
        for r in range(rows.kind.size):
            value = rattle.evaluate_row(rows, r, state, 0, grad)
            if rows.sense[r] == rattle.EQUALITY:
                residual = max(residual, abs(value))
            else:
                residual = max(residual, -rows.sense[r] * value)
        rattle.reaction_forces(work, h, forces)
        out[k, 0] = energy(bodies, env.gravity, state, 0)
        out[k, 1] = state.com[0, 0, 0]
        out[k, 2] = state.vel[0, 0, 0]
        out[k, 3] = residual
        out[k, 4] = forces[0]
    return n


def run(bodies, rows, state, h, n, solver=DEFAULT):
    """(steps completed, trace (n, 5), workspace) of ``n`` steps of ``h`` s."""
    work = rattle.Workspace.empty(state.com.shape[1], rows.kind.size)
    out = np.zeros((n, 5))
    done = record(bodies, ENV, rows, solver, state, h, n, work, out)
    return done, out, work


def rod_pendulum(theta0: float, length: float = 1.0):
    """A 1 kg ball (radius 1 cm) on a massless rod from the world origin, at rest at angle ``theta0`` from
    the downward vertical in the x-z plane."""
    bodies = make_bodies(*sphere(1.0, 0.01))
    rows = rattle.make_rows(rattle.DISTANCE, rattle.WORLD, 0, offset=length)
    state = State.zeros(1, 1)
    state.com[0, 0] = (length * math.sin(theta0), 0.0, -length * math.cos(theta0))
    return bodies, rows, state


def seesaw(tilt: float = 0.3, spin: float = 1.5):
    """A plank (1 kg, 2 m x 0.1 m x 0.05 m, body 0) on a hinge at its centre about the world y axis
    (3 POINT rows to the world origin, 2 ALIGN rows keeping its y axis along the world y), and two heavy
    balls pinned to it (3 POINT rows each): 1 kg at x = -0.8 m (body 1) and 2 kg at x = +0.6 m (body 2) in
    the plank's frame. Tilted by ``tilt`` rad about y and turning at ``spin`` rad/s as one rigid body."""
    plank_mass, sides = 1.0, np.array([2.0, 0.1, 0.05])
    plank_inertia = [plank_mass / 12.0 * (sides[(i + 1) % 3] ** 2 + sides[(i + 2) % 3] ** 2) for i in range(3)]
    ball1, ball2 = sphere(1.0, 0.05), sphere(2.0, 0.05)
    bodies = make_bodies([plank_mass, ball1[0], ball2[0]], [plank_inertia, ball1[1], ball2[1]])
    pins = np.array([[-0.8, 0.0, 0.0], [0.6, 0.0, 0.0]])
    eye = np.eye(3)
    rows = rattle.Rows.concatenate(
        [rattle.make_rows(rattle.POINT, rattle.WORLD, 0, axis_a=eye),
         rattle.make_rows(rattle.ALIGN, rattle.WORLD, 0, axis_a=eye[[0, 2]], axis_b=eye[1])]
        + [rattle.make_rows(rattle.POINT, 0, ball, anchor_a=pins[ball - 1], axis_a=eye) for ball in (1, 2)])
    state = State.zeros(1, 3)
    turn = np.array([math.cos(0.5 * tilt), 0.0, math.sin(0.5 * tilt), 0.0])  # about +y
    rotation = np.array([[math.cos(tilt), 0.0, math.sin(tilt)], [0.0, 1.0, 0.0], [-math.sin(tilt), 0.0,
                                                                                    math.cos(tilt)]])
    omega = np.array([0.0, spin, 0.0])
    state.quat[0, 0] = turn
    state.momentum[0, 0] = np.multiply(plank_inertia, rotation.T @ omega) @ rotation.T  # R diag(I) R^T w
    for ball in (1, 2):
        state.com[0, ball] = rotation @ pins[ball - 1]
        state.vel[0, ball] = np.cross(omega, state.com[0, ball])
        state.momentum[0, ball] = bodies.inertia[ball] * omega
    return bodies, rows, state
