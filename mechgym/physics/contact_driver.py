"""A test driver for the contact core (like ``constraints.rattle_advance``): one contact step is

  opening kick (gravity) -> warm start (h/2 of each contact's reaction) -> begin_step -> drift
  -> find_contacts (broad, narrow, continuous collision, impacts) -> correct_positions -> closing kick
  -> solve_contacts (restitution, friction) -> settle_impacts (resting reactions after impacts),

for scenes built from MJCF (``ContactScene.build``); the engine runs the same stages inside step.advance.
No smooth forces (actuators are left at zero control): gravity and contacts only.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np
from numba import njit

from ..scene import compile_model
from .constraints import Rows, Workspace, begin_step
from .contact import (
    MARGIN,
    ContactSet,
    Geoms,
    Scratch,
    contact_geoms,
    correct_positions,
    find_contacts,
    prime_contacts,
    settle_impacts,
    solve_contacts,
    sweep_setup,
    warm_start,
)
from .model import EngineModel, build_model
from .state import State, load_generalized
from .step import NON_FINITE, NOT_CONVERGED, OK, _finite, drift, opening_kick

# Trace columns per body written by ``contact_advance``: COM (m), velocity (m/s), world angular momentum.
COM, VEL, MOMENTUM = 0, 3, 6


@njit(cache=True)
def contact_step(bodies, env, geoms, state, world, step, h, wrench, impulse, rows, work, contacts, scratch):
    """Global step ``step`` (from t = step h to (step + 1) h) of world ``world``; ``wrench``/``impulse`` (B, 6)
    zeros. Returns OK, NOT_CONVERGED (a solve or the broad phase failed) or NON_FINITE."""
    half = 0.5 * h
    opening_kick(bodies, env, state, world, half, wrench, impulse)
    warm_start(bodies, state, world, h, contacts)
    begin_step(rows, state, world, work)
    drift(bodies, state, world, h)
    if find_contacts(geoms, bodies, env, state, world, (step + 1) * h, h, work.com0, work.quat0, contacts, scratch,
                     MARGIN, True, False) < 0:
        return NOT_CONVERGED
    if correct_positions(bodies, state, world, contacts, scratch) < 0:
        return NOT_CONVERGED
    opening_kick(bodies, env, state, world, half, wrench, impulse)  # the closing kick of gravity
    if solve_contacts(bodies, state, world, h, contacts, scratch) < 0:
        return NOT_CONVERGED
    if settle_impacts(bodies, env, state, world, h, contacts, scratch) < 0:
        return NOT_CONVERGED
    return OK if _finite(state, world) else NON_FINITE


@njit(cache=True)
def contact_advance(bodies, env, geoms, state, first_step, n, h, rows, work, contacts, scratch, trace, active,
                    status):
    """``contact_step`` n times for every world from global step ``first_step``; trace[w, k, b] = (COM, velocity,
    momentum) after step k, active[w, k] = touching contacts after step k; status[w] = (steps done, code)."""
    nbody = state.com.shape[1]
    wrench = np.zeros((nbody, 6))
    impulse = np.zeros((nbody, 6))
    capacity = contacts.prev_geom1.size // contacts.count.size
    for world in range(state.com.shape[0]):
        status[world, 0] = n
        status[world, 1] = OK
        for k in range(n):
            code = contact_step(bodies, env, geoms, state, world, first_step + k, h, wrench, impulse, rows, work,
                                contacts, scratch)
            for b in range(nbody):
                for i in range(3):
                    trace[world, k, b, COM + i] = state.com[world, b, i]
                    trace[world, k, b, VEL + i] = state.vel[world, b, i]
                    trace[world, k, b, MOMENTUM + i] = state.momentum[world, b, i]
            touching = 0
            for i in range(world * capacity, world * capacity + min(contacts.count[world], capacity)):
                touching += contacts.active[i]
            active[world, k] = touching
            if code != OK:
                status[world, 0] = k
                status[world, 1] = code
                break


@dataclass
class ContactScene:
    """A compiled MJCF scene as engine arrays for the contact driver (one world)."""

    model: mujoco.MjModel
    engine: EngineModel
    geoms: Geoms
    state: State
    contacts: ContactSet
    scratch: Scratch
    work: Workspace
    rows: Rows

    @staticmethod
    def build(scene, capacity: int = 64, events: int = 256) -> ContactScene:
        """Compile ``scene`` (anything ``scene.compile_model`` takes); the state starts at qpos0 at rest."""
        model = compile_model(scene)
        flags = model.opt.disableflags
        # build_model refuses colliding geoms until contacts are wired into the engine; read the bodies without
        model.opt.disableflags = flags | int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
        engine = build_model(model)
        model.opt.disableflags = flags
        nbody = engine.mj_body.size
        state = State.zeros(1, nbody)
        load_generalized(engine.bodies, engine.free, engine.qposadr, engine.dofadr, model.qpos0.copy(),
                         np.zeros(model.nv), state, 0)
        geoms = contact_geoms(model, engine.body_index)
        scratch = Scratch.empty(model.ngeom, nbody, capacity)
        sweep_setup(geoms, scratch, state)
        return ContactScene(model, engine, geoms, state, ContactSet.empty(1, capacity, events), scratch,
                            Workspace.empty(nbody, 0), Rows.empty())

    def prime(self, h: float) -> int:
        """Contacts and their resting reactions at the current poses (``contact.prime_contacts``)."""
        return prime_contacts(self.geoms, self.engine.bodies, self.engine.env, self.state, 0, h, self.work.com0,
                              self.work.quat0, self.contacts, self.scratch, MARGIN)

    def step(self, step: int, h: float) -> int:
        """One ``contact_step`` (global step index ``step``); returns its status code."""
        nbody = self.state.com.shape[1]
        return contact_step(self.engine.bodies, self.engine.env, self.geoms, self.state, 0, step, h,
                            np.zeros((nbody, 6)), np.zeros((nbody, 6)), self.rows, self.work, self.contacts,
                            self.scratch)

    def run(self, h: float, n: int, first_step: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """n steps; returns (trace (n, B, 9), touching contacts (n,), status (2,))."""
        nbody = self.state.com.shape[1]
        trace = np.zeros((1, n, nbody, 9))
        active = np.zeros((1, n), dtype=np.int64)
        status = np.zeros((1, 2), dtype=np.int64)
        contact_advance(self.engine.bodies, self.engine.env, self.geoms, self.state, first_step, n, h, self.rows,
                        self.work, self.contacts, self.scratch, trace, active, status)
        return trace[0], active[0], status[0]

    def events(self) -> np.ndarray:
        """Recorded impacts as rows (time s, geom1, geom2, approach speed m/s)."""
        count = min(int(self.contacts.event_count[0]), self.contacts.event_time.shape[1])
        c = self.contacts
        return np.column_stack([c.event_time[0, :count], c.event_geom[0, :count, 0], c.event_geom[0, :count, 1],
                                c.event_speed[0, :count]])
