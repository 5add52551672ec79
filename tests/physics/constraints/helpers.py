"""Scenes and a recording driver for the RATTLE tests, built directly as engine arrays and stepped by the
engine's kernel (``step.advance``)."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from mechgym.physics import OK, Linkage, StepScratch, Windows, advance
from mechgym.physics import constraints as rattle
from mechgym.physics.confinement import Confinements
from mechgym.physics.contact import ContactSet, Geoms, Scratch
from mechgym.physics.joints import Coordinates
from mechgym.physics.model import Actuators, Bodies, Environment
from mechgym.physics.state import State, energy

GRAVITY = 9.81
# Gravity along -z, no wind; every other (boolean) setting off: no fluid, damping or actuator forces.
ENV = Environment(**{name: False for name in Environment._fields} | {"gravity": np.array([0.0, 0.0, -GRAVITY]),
                                                                      "wind": np.zeros(3)})

DEFAULT = rattle.Solver()

# Columns of the trace written by ``record``.
ENERGY, X, VX, RESIDUAL, FORCE = range(5)


_INDEX, _VECTOR = np.zeros(0, dtype=np.int64), np.zeros((0, 3))
NO_ACTUATORS = Actuators(body=_INDEX, coordinate=_INDEX, axes=_INDEX, site_pos=_VECTOR, site_quat=np.zeros((0, 4)),
                         gear=np.zeros((0, 6)), gain0=np.zeros(0), gain_len=np.zeros(0), gain_vel=np.zeros(0),
                         bias0=np.zeros(0), bias_len=np.zeros(0), bias_vel=np.zeros(0),
                         ctrl_limited=np.zeros(0, dtype=np.bool_), ctrl_range=np.zeros((0, 2)),
                         force_limited=np.zeros(0, dtype=np.bool_), force_range=np.zeros((0, 2)),
                         damper=np.zeros(0, dtype=np.bool_))
NO_COORDINATES = Coordinates(rows=rattle.Rows.empty(), qposadr=_INDEX, dofadr=_INDEX, qpos0=np.zeros(0),
                             hinge=np.zeros(0, dtype=np.bool_), damping=np.zeros(0), armature=np.zeros(0),
                             stiffness=np.zeros(0),
                             springref=np.zeros(0), ball_parent=_INDEX,
                             ball_child=_INDEX, ball_left=np.zeros((0, 4)), ball_right=np.zeros((0, 4)),
                             ball_qposadr=_INDEX, ball_dofadr=_INDEX, tendon_rows=rattle.Rows.empty(),
                             tendon_stiffness=np.zeros(0), tendon_rest=np.zeros((0, 2)))
NO_WINDOWS = Windows.empty()
NO_CONFINEMENTS = Confinements.empty()


def no_contacts(worlds: int = 1) -> tuple[Geoms, ContactSet, Scratch]:
    """(geoms, contact set, scratch) for ``step.advance`` in scenes without contacts (ENV.contacts is off)."""
    return Geoms.empty(), ContactSet.empty(worlds, 0, 0), Scratch.empty(0, 0, 0)


def with_rows(state: State, rows) -> State:
    """``state``'s body arrays (shared, not copied) with zero warm starts (impulses, chord rates) for ``rows``."""
    worlds = state.com.shape[0]
    return State(*state[:4], np.zeros((worlds, 0)), *(np.zeros((worlds, rows.kind.size)) for _ in range(3)))


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
def record(bodies, env, linkage, state, h, n, out, geoms, contacts, scratch, step_scratch):
    """Run ``n`` RATTLE steps of world 0 (``step.advance``) and write per step: total energy (J), x and v_x of
    body 0, the largest constraint violation (|g| of equality rows, the violated part of one-sided rows) and
    the reported force of row 0. Returns the number of steps completed."""
    rows = linkage.rows
    grad = np.zeros(12)
    forces = np.zeros(rows.kind.size)
    status = np.zeros((1, 4), dtype=np.int64)
    ctrl = np.zeros((1, 0))
    for k in range(n):
        advance(bodies, NO_ACTUATORS, env, linkage, geoms, NO_CONFINEMENTS, NO_WINDOWS, state, contacts, scratch, ctrl,
                k, 1, h, status, step_scratch)
        if status[0, 1] != OK:
            return k
        residual = 0.0
        for r in range(rows.kind.size):
            value = rattle.evaluate_row(rows, r, state, 0, grad)
            if rows.sense[r] == rattle.EQUALITY:
                residual = max(residual, abs(value))
            else:
                residual = max(residual, -rows.sense[r] * value)
        rattle.reaction_forces(state, 0, h, forces)
        out[k, 0] = energy(bodies, env.gravity, state, 0)
        out[k, 1] = state.com[0, 0, 0]
        out[k, 2] = state.vel[0, 0, 0]
        out[k, 3] = residual
        out[k, 4] = forces[0]
    return n


def run(bodies, rows, state, h, n, solver=DEFAULT):
    """(steps completed, trace (n, 5), the stepped state with its last impulses) of ``n`` steps of ``h`` s;
    the body arrays of ``state`` are stepped in place."""
    stepped = with_rows(state, rows)
    out = np.zeros((n, 5))
    linkage = Linkage(rows, NO_COORDINATES, solver)
    geoms, contacts, scratch = no_contacts()
    done = record(bodies, ENV, linkage, stepped, h, n, out, geoms, contacts, scratch,
                  StepScratch.fitting(stepped, linkage, contacts, NO_CONFINEMENTS))
    return done, out, stepped


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
