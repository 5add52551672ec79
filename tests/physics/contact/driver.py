"""A test driver for the contact stages of the engine's step (like the constraint tests' recording driver):
``contact_advance`` runs ``step.advance`` one step at a time for every world and records a trace, and
``ContactScene.build`` compiles an MJCF scene of free bodies and static geometry into the engine's arrays,
one world of state, a contact set and its scratch.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np
from numba import njit

from mechgym.physics.constraints import Rows, Workspace
from mechgym.physics.contact import ContactSet, Geoms, Joined, Scratch, prime_contacts, sweep_setup
from mechgym.physics.forces import Windows
from mechgym.physics.model import EngineModel, build_model
from mechgym.physics.state import State, load_generalized
from mechgym.physics.step import OK, StepScratch, advance
from mechgym.physics.tolerances import MARGIN
from mechgym.scene import compile_model

# Trace columns per body written by ``contact_advance``: COM (m), velocity (m/s), world angular momentum.
COM, VEL, MOMENTUM = 0, 3, 6


@njit(cache=True)
def contact_advance(bodies, actuators, env, linkage, geoms, confinements, windows, state, contacts, scratch, ctrl,
                    first_step, n, h, trace, active, status, step_scratch):
    """``step.advance`` one step at a time, n times, for every world from global step ``first_step``;
    trace[w, k, b] = (COM, velocity, momentum) after step k, active[w, k] = touching contacts after step k;
    status[w] = (steps done, code). Stops at the first step that fails in any world."""
    nbody = state.com.shape[1]
    worlds = state.com.shape[0]
    capacity = contacts.prev_geom1.size // contacts.count.size
    step_status = np.zeros((worlds, 4), dtype=np.int64)
    for world in range(worlds):
        status[world, 0] = n
        status[world, 1] = OK
    for k in range(n):
        advance(bodies, actuators, env, linkage, geoms, confinements, windows, state, contacts, scratch, ctrl,
                first_step + k, 1, h, step_status, step_scratch)
        failed = False
        for world in range(worlds):
            for b in range(nbody):
                for i in range(3):
                    trace[world, k, b, COM + i] = state.com[world, b, i]
                    trace[world, k, b, VEL + i] = state.vel[world, b, i]
                    trace[world, k, b, MOMENTUM + i] = state.momentum[world, b, i]
            touching = 0
            for i in range(world * capacity, world * capacity + min(contacts.count[world], capacity)):
                touching += contacts.active[i]
            active[world, k] = touching
            if step_status[world, 1] != OK:
                status[world, 0] = k
                status[world, 1] = step_status[world, 1]
                failed = True
        if failed:
            return


@dataclass
class ContactScene:
    """A compiled MJCF scene as engine arrays for the contact driver (one world). ``work`` and ``rows`` (none)
    serve tests that run the stages of contact.py by hand."""

    model: mujoco.MjModel
    engine: EngineModel
    geoms: Geoms
    state: State
    contacts: ContactSet
    scratch: Scratch
    work: Workspace
    rows: Rows
    joined: Joined
    held: np.ndarray  # (R,) scratch of prime_contacts / settle_impacts

    @staticmethod
    def build(scene, capacity: int = 64, events: int = 256) -> ContactScene:
        """Compile ``scene`` (anything ``scene.compile_model`` takes); the state starts at qpos0 at rest."""
        model = compile_model(scene)
        engine = build_model(model)
        nbody = engine.mj_body.size
        rows = engine.linkage.rows
        state = State.zeros(1, nbody, engine.linkage.coordinates.rows.kind.size, rows.kind.size)
        load_generalized(engine.bodies, engine.free, engine.qposadr, engine.dofadr, model.qpos0.copy(),
                         np.zeros(model.nv), state, 0)
        scratch = Scratch.empty(model.ngeom, nbody, capacity)
        sweep_setup(engine.geoms, scratch, state, 0)
        return ContactScene(model, engine, engine.geoms, state, ContactSet.empty(1, capacity, events), scratch,
                            Workspace.empty(nbody, rows.kind.size), rows, Joined.empty(capacity, rows.kind.size, nbody),
                            np.zeros(rows.kind.size))

    def prime(self, h: float) -> int:
        """Contacts and their resting reactions at the current poses (``contact.prime_contacts``)."""
        return prime_contacts(self.geoms, self.engine.linkage, self.engine.bodies, self.engine.env, self.state, 0, h,
                              np.zeros((self.state.com.shape[1], 6)), self.contacts, self.scratch, self.work,
                              self.joined, self.held, MARGIN)

    def run(self, h: float, n: int, first_step: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """n steps; returns (trace (n, B, 9), touching contacts (n,), status (2,))."""
        trace, active, status = advance_worlds(self.engine, self.state, self.contacts, self.scratch, h, n, first_step)
        return trace[0], active[0], status[0]

    def events(self) -> np.ndarray:
        """Recorded impacts as rows (time s, geom1, geom2, approach speed m/s)."""
        count = min(int(self.contacts.event_count[0]), self.contacts.event_time.shape[1])
        c = self.contacts
        return np.column_stack([c.event_time[0, :count], c.event_geom[0, :count, 0], c.event_geom[0, :count, 1],
                                c.event_speed[0, :count]])


def advance_worlds(engine: EngineModel, state: State, contacts: ContactSet, scratch: Scratch, h: float, n: int,
                   first_step: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``contact_advance`` for every world of ``state`` without applied forces or controls; returns (trace
    (W, n, B, 9), touching contacts (W, n), status (W, 2))."""
    worlds, nbody = state.com.shape[:2]
    trace = np.zeros((worlds, n, nbody, 9))
    active = np.zeros((worlds, n), dtype=np.int64)
    status = np.zeros((worlds, 2), dtype=np.int64)
    contact_advance(engine.bodies, engine.actuators, engine.env, engine.linkage, engine.geoms, engine.confinements,
                    Windows.empty(), state, contacts, scratch, np.zeros((worlds, engine.nu)), first_step, n, h, trace,
                    active, status,
                    StepScratch.fitting(state, engine.linkage, contacts, engine.confinements))
    return trace, active, status
