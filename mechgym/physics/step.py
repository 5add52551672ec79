"""The velocity Verlet (RATTLE) step as named stages, and the compiled kernel that runs many steps for many
worlds.

One step of length h from t_k = k h (k = the global step index, so time is never accumulated):

  begin_step     store x_k, the start-of-step constraint gradients G(x_k) and the dampers' rates
                                                                                  (constraints.begin_step)
  opening kick   v <- v + h/2 (g + F(x_k, v_k)/m) + J[t_k, t_k + h/2)/m,   L <- L + h/2 T(x_k, v_k) + J_T[...]
  predict        impulses along G(x_k) that make the drift's linear prediction meet the rows
                                                                                  (constraints.predict_shake)
  drift          c <- c + h v;  q <- free-rotor flow of h with L fixed (rotation.free_rotor_drift)
  shake          impulses along G(x_k) on the half-step (v, L) until x_{k+1} satisfies every row
  damper rates   the dampers' rates at x_{k+1} and the half-step (v, L)     (constraints.start_damper_rates)
  closing kick   v' = v + h/2 (g + F(x_{k+1}, v')/m) + J[t_k + h/2, t_{k+1})/m  (and L' likewise)
  project        impulses along G(x_{k+1}) until G(x_{k+1}) v' = 0              (constraints.project_velocity)

The constraint stages run only when the scene has rows (joints, equalities, rods, ropes); without rows the
step is Engine I's velocity Verlet unchanged. When geoms can collide the contact stages of
:mod:`mechgym.physics.contact` run too: warm_start after the opening kick; find_contacts (at the poses SHAKE
left) and correct_positions after the drift; solve_contacts and settle_contacts after the closing kick. With
rows too, contacts and constraints are coupled at both levels: the position correction moves the poses along
the contact normals and the rows' gradients together, so that it removes penetration without breaking a
joint (``contact.correct_positions``), and after the velocity projection of the rows the contact solve sweeps
the contacts and the rows' blocks in turn until both are converged: one velocity-level solve
(``contact.solve_contacts``).

F, T: smooth (fluid, free-joint damping, actuator) wrenches about the COM; J: exact impulses of the applied force
windows over the half-step each kick serves; g: gravity. The closing kick is implicit in the velocity
when any force depends on it. Hinge and slide joint damping and the kv of their servos (``Actuators.damper``),
linear in v, are solved exactly with the joints and the contacts, and are left out of F: each damped coordinate
has a damper row whose impulse over each half-step is the trapezoidal rule's, implicit in the half-step's end
velocity (``constraints.damper_compliance``), in SHAKE for the opening half and in the velocity projection for
the closing one. Every other velocity-dependent force (fluid, free-joint damping, free-joint and site actuators' kv,
force-limited servos) is solved by fixed-point iteration: the map
v' -> v + h/2 F(v')/m contracts with factor about h |dF/dv| / (2m), and each iteration gains that factor, so
iterating to round-off keeps the step second order (trapezoidal in the velocity-dependent forces). From the third
iterate on, Anderson's acceleration of depth 1 mixes the last two images, u <- T(u_k) - gamma (T(u_k) -
T(u_{k-1})), gamma = r_k . (r_k - r_{k-1}) / |r_k - r_{k-1}|^2 (r = T(u) - u, in the kinetic-energy
metric), which is exact when the map is linear along one direction (a servo's kv on a light body), and which
makes the iteration converge where the plain one cannot (factor 1 and more). Without
velocity-dependent forces one evaluation is exact, and a constant acceleration is integrated exactly:
c_{k+1} = c_k + h v_k + h^2 a / 2.

With constraints the closing kick and the velocity projection are one implicit system,
  v' = v + h/2 (g + F(x_{k+1}, v')/m) + W G^T mu,   G(x_{k+1}) v' = 0,
solved by alternating them: each fixed-point iterate u = v + h/2 (g + F(v'_prev)/m) + J/m is projected,
v' = P u, and F is evaluated at the projected v' (F at the unprojected u would be off by the constraint
impulse, O(h), and make the step first order). The projection is linear in u at fixed x_{k+1} and warm
started from the previous iterate's impulses; the iteration stops when u changes by less than TOLERANCE
of its terms plus the projection's own resolution (``Solver.velocity_tolerance`` on v, and times the sum
of the principal moments on L), below which successive projections cannot agree. With contacts the
contact solve is part of that projection (each iterate's contact impulses solved anew, joined with the
rows), so that the velocity-dependent forces see the contact impulses of the same step: a servo that
holds a load through friction keeps it at rest instead of letting it creep.

Performance: the step's functions are kernels (``jit.kernel``): compiled without numba's runtime, they allocate
nothing and do no reference counting of the arrays they receive; ``advance`` works in a ``StepScratch`` its
caller allocates once.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .constraints import (
    Workspace,
    begin_step,
    clear_workspace,
    predict_shake,
    project_velocity,
    shake,
    start_damper_rates,
)
from .contact import (
    CONTACT_VELOCITY_TOLERANCE,
    HELD_FLOATS,
    HELD_INTS,
    MARGIN,
    Joined,
    clear_joined,
    correct_positions,
    find_contacts,
    keep_contacts,
    settle_contacts,
    solve_contacts,
    warm_start,
)
from .forces import CoordinateScratch, coordinate_wrench, smooth_wrench, window_impulse
from .jit import kernel, zero_arrays
from .joints import update_turns
from .kinematics import FRAME_SIZE
from .rotation import free_rotor_drift

# Fixed-point iteration of the closing kick: stop when every update is below TOLERANCE times the size of
# the terms summed (|v_half| + |dv|), i.e. at round-off; give up after MAX_ITERATIONS (too stiff for h).
TOLERANCE = 1e-14
MAX_ITERATIONS = 100

# Step outcomes: NOT_CONVERGED = the implicit closing kick did not converge; NOT_PROJECTED = SHAKE or the
# velocity projection did not meet its tolerance in Solver.max_sweeps sweeps; TOO_MANY_CONTACTS = more
# contacts than the ContactSet holds per world, or more candidate pairs than the broad phase's scratch
# holds; CONTACTS_NOT_SOLVED = the position correction or the velocity solve of the contacts did not converge.
OK, NON_FINITE, NOT_CONVERGED, NOT_PROJECTED, TOO_MANY_CONTACTS, CONTACTS_NOT_SOLVED = 0, 1, 2, 3, 4, 5


class StepScratch(NamedTuple):
    """The work arrays of ``advance`` for B bodies, R rows, C hinge/slide coordinates and K contacts per
    world: allocated once by its caller (``StepScratch.empty``), so that a call allocates nothing, and set to
    their initial values at the start of every call (``clear_step_scratch``), so that no call depends on an
    earlier one."""

    held: np.ndarray  # (2,) int64: the contact and event counts before the step (contact.keep_contacts)
    held_ints: np.ndarray  # (K, HELD_INTS) int64: the contact set before the step
    held_floats: np.ndarray  # (K, HELD_FLOATS)
    saved: np.ndarray  # (B, 13) the bodies before the step: c, v, L, q
    frames: np.ndarray  # (B, FRAME_SIZE) body frames of the smooth forces
    wrench: np.ndarray  # (B, 6) the opening kick's smooth forces F (N), T (N m); 0 in a scene without any
    impulse: np.ndarray  # (B, 6) the force windows' impulses over a half-step, N s and N m s
    start: np.ndarray  # (B, 6) closing kick: the half-step (v, L)
    previous: np.ndarray  # (B, 6) closing kick: the last unprojected iterate
    history: np.ndarray  # (B, 12) closing kick: the last image and residual (Anderson)
    saved_impulses: np.ndarray  # (R,) settle_contacts' scratch
    coordinates: CoordinateScratch
    work: Workspace
    joined: Joined

    @staticmethod
    def empty(bodies: int, rows: int, coordinates: int, capacity: int) -> StepScratch:
        """For ``bodies`` bodies, ``rows`` constraint rows, ``coordinates`` hinge/slide coordinates and
        ``capacity`` contacts per world, as ``clear_step_scratch`` leaves it."""
        scratch = StepScratch(
            np.empty(2, dtype=np.int64), np.empty((capacity, HELD_INTS), dtype=np.int64),
            np.empty((capacity, HELD_FLOATS)), np.empty((bodies, 13)), np.empty((bodies, FRAME_SIZE)),
            np.empty((bodies, 6)), np.empty((bodies, 6)), np.empty((bodies, 6)), np.empty((bodies, 6)),
            np.empty((bodies, 12)), np.empty(rows), CoordinateScratch.zeros(coordinates),
            Workspace.empty(bodies, rows), Joined.empty(capacity, rows, bodies))
        clear_step_scratch(scratch)
        return scratch

    @staticmethod
    def fitting(state, linkage, contacts) -> StepScratch:
        """For the bodies of ``state`` (a State), the rows and coordinates of ``linkage`` (a Linkage) and the
        capacity per world of ``contacts`` (a contact.ContactSet)."""
        return StepScratch.empty(state.com.shape[1], linkage.rows.kind.size, linkage.coordinates.rows.kind.size,
                                 contacts.prev_geom1.size // contacts.count.size)


@kernel
def clear_step_scratch(scratch):
    """Set what ``advance`` and ``contact.prime_contacts`` read before they write: no smooth force, no
    acceleration history, zero held impulses, and the coordinates', rows' and joined solves' scratch as their
    constructors leave it."""
    scratch.wrench.fill(0.0)
    scratch.history.fill(0.0)
    scratch.saved_impulses.fill(0.0)
    zero_arrays(scratch.coordinates)
    clear_workspace(scratch.work)
    clear_joined(scratch.joined)


@kernel
def opening_kick(bodies, env, state, world, half, wrench, impulse):
    """v += half (g + F/m) + J/m;  L += half T + J_T  (``half`` = h/2 s). Also the closing kick when no
    force depends on the velocity."""
    for b in range(wrench.shape[0]):
        inv_mass = bodies.inv_mass[b]
        for i in range(3):
            state.vel[world, b, i] += half * (env.gravity[i] + wrench[b, i] * inv_mass) + impulse[b, i] * inv_mass
            state.momentum[world, b, i] += half * wrench[b, 3 + i] + impulse[b, 3 + i]


@kernel
def resting_forces(bodies, actuators, env, linkage, state, world, ctrl, scratch):
    """The smooth forces (N, N m about each COM) that the opening kick applies at the state of ``world`` under
    the controls ``ctrl`` (U,), for the resting reactions of the contacts at a reset
    (``contact.prime_contacts``), in ``scratch.wrench`` (B, 6) (``scratch``: a StepScratch, cleared first); the
    dampers are rows, not forces (``constraints.damper_compliance``). (``advance`` evaluates the same two terms
    itself, and only in scenes with smooth forces.)"""
    clear_step_scratch(scratch)
    if env.smooth:
        smooth_wrench(bodies, actuators, env, state, world, ctrl, scratch.frames, scratch.wrench)
        if env.coordinate_forces:
            coordinate_wrench(bodies, actuators, linkage.coordinates, state, world, ctrl, scratch.coordinates,
                              scratch.wrench)


@kernel
def drift(bodies, state, world, h):
    """c += h v; the principal frame turns by the free-rotor flow of ``h`` seconds at fixed L."""
    for b in range(state.com.shape[1]):
        for i in range(3):
            state.com[world, b, i] += h * state.vel[world, b, i]
        free_rotor_drift(state.quat[world, b], bodies.inv_inertia[b], state.momentum[world, b], h)


@kernel(inline="always")
def closing_kick(bodies, actuators, env, linkage, constrained, state, world, ctrl, half, h, impulse, start, previous,
                 history, frames, scratch, work, wrench, contacts, contact_scratch, joined):
    """Solve v' = v + half (g + F(v')/m) + J/m (and L' likewise) by fixed-point iteration, each iterate
    projected onto G(x_{k+1}) v' = 0 when the scene has rows and solved with the contacts when it has contacts
    (``contact.solve_contacts``, joined with the rows), so that F is evaluated at velocities that honour both:
    a servo that holds a load through a contact sees the load in the same step (see the module docstring).

    On entry ``wrench`` holds the opening kick's F_k: the first iterate v + half (g + F_k/m) + J/m is
    v_k + h a_k (up to the windows), off by O(h^2) instead of the O(h) of starting from v, which saves an
    iteration. ``start`` (B, 6) is scratch for the half-step (v, L), ``previous`` (B, 6) for the last
    unprojected iterate, ``history`` (B, 12) for the last image T(u) and residual T(u) - u of the
    acceleration; ``constrained``: the scene has rows. Returns OK, NOT_CONVERGED, NOT_PROJECTED or
    CONTACTS_NOT_SOLVED."""
    slack = max(linkage.solver.velocity_tolerance if constrained else 0.0,
                CONTACT_VELOCITY_TOLERANCE if env.contacts else 0.0)
    for b in range(start.shape[0]):
        for i in range(3):
            start[b, i] = state.vel[world, b, i]
            start[b, 3 + i] = state.momentum[world, b, i]
    for iteration in range(MAX_ITERATIONS):
        if iteration > 0:
            smooth_wrench(bodies, actuators, env, state, world, ctrl, frames, wrench)
            if env.coordinate_forces:
                coordinate_wrench(bodies, actuators, linkage.coordinates, state, world, ctrl, scratch, wrench)
        converged = iteration > 0
        along, across = 0.0, 0.0  # r . dr, dr . dr in the kinetic-energy metric
        for b in range(start.shape[0]):
            inv_mass = bodies.inv_mass[b]
            mass = 1.0 / inv_mass if inv_mass > 0.0 else 0.0
            inv_inertia = (bodies.inv_inertia[b, 0] + bodies.inv_inertia[b, 1] + bodies.inv_inertia[b, 2]) / 3.0
            spin_slack = slack * (bodies.inertia[b, 0] + bodies.inertia[b, 1] + bodies.inertia[b, 2])
            for i in range(3):
                dv = half * (env.gravity[i] + wrench[b, i] * inv_mass) + impulse[b, i] * inv_mass
                new = start[b, i] + dv
                r = new - previous[b, i]
                converged &= abs(r) <= TOLERANCE * (abs(start[b, i]) + abs(dv)) + slack
                state.vel[world, b, i] = new
                dr = r - history[b, 6 + i]
                along, across = along + mass * r * dr, across + mass * dr * dr
                dl = half * wrench[b, 3 + i] + impulse[b, 3 + i]
                new = start[b, 3 + i] + dl
                r = new - previous[b, 3 + i]
                converged &= abs(r) <= TOLERANCE * (abs(start[b, 3 + i]) + abs(dl)) + spin_slack
                state.momentum[world, b, i] = new
                dr = r - history[b, 9 + i]
                along += inv_inertia * r * dr
                across += inv_inertia * dr * dr
        # Anderson acceleration (depth 1) from the third iterate on: u <- T(u) - gamma (T(u) - T(u_prev)), gamma
        # the least-squares weight that cancels the residual's change.
        gamma = along / across if iteration > 1 and not converged and across > 0.0 else 0.0
        for b in range(start.shape[0]):
            for i in range(6):
                image = state.vel[world, b, i] if i < 3 else state.momentum[world, b, i - 3]
                history[b, 6 + i] = image - previous[b, i]
                value = image - gamma * (image - history[b, i])
                history[b, i] = image
                previous[b, i] = value
                if i < 3:
                    state.vel[world, b, i] = value
                else:
                    state.momentum[world, b, i - 3] = value
        if constrained and project_velocity(linkage.rows, bodies, linkage.solver, state, world, h, work) < 0:
            return NOT_PROJECTED
        if env.contacts and solve_contacts(linkage, bodies, state, world, h, contacts, contact_scratch, work,
                                           joined, iteration > 0) < 0:
            return CONTACTS_NOT_SOLVED
        if converged:
            return OK
    return NOT_CONVERGED


@kernel
def _finite(state, world):
    for b in range(state.com.shape[1]):
        for i in range(3):
            if not (math.isfinite(state.com[world, b, i]) and math.isfinite(state.vel[world, b, i])
                    and math.isfinite(state.momentum[world, b, i]) and math.isfinite(state.quat[world, b, i])):
                return False
        if not math.isfinite(state.quat[world, b, 3]):
            return False
    return True


@kernel
def _copy_world(source, target, world, back):
    """Copy one world's state to the (B, 13) scratch ``target`` (back=False) or from it (back=True)."""
    for b in range(source.com.shape[1]):
        for i in range(3):
            if back:
                source.com[world, b, i] = target[b, i]
                source.vel[world, b, i] = target[b, 3 + i]
                source.momentum[world, b, i] = target[b, 6 + i]
            else:
                target[b, i] = source.com[world, b, i]
                target[b, 3 + i] = source.vel[world, b, i]
                target[b, 6 + i] = source.momentum[world, b, i]
        for i in range(4):
            if back:
                source.quat[world, b, i] = target[b, 9 + i]
            else:
                target[b, 9 + i] = source.quat[world, b, i]


@kernel
def _keep_impulses(state, world, work, back):
    """Copy the world's warm starts (impulses and chord rates) into the workspace (back=False) or the step's
    out of it."""
    for r in range(work.impulse_position.size):
        if back:
            state.impulse_position[world, r] = work.impulse_position[r]
            state.impulse_velocity[world, r] = work.impulse_velocity[r]
            state.chord_rate[world, r] = work.chord_rate[r]
        else:
            work.impulse_position[r] = state.impulse_position[world, r]
            work.impulse_velocity[r] = state.impulse_velocity[world, r]
            work.chord_rate[r] = state.chord_rate[world, r]


@kernel
def advance(bodies, actuators, env, linkage, geoms, windows, state, contacts, contact_scratch, ctrl, first_step, n, h,
            status, step_scratch):
    """Advance every world of ``state`` by ``n`` steps of ``h`` seconds, starting at global step
    ``first_step``; ``ctrl`` (W, U) is held. status[w] = (steps completed, OK | NON_FINITE | NOT_CONVERGED |
    NOT_PROJECTED | TOO_MANY_CONTACTS | CONTACTS_NOT_SOLVED): a world stops at its first failing step and is
    left as that step found it (bodies, hinge turns, warm-start impulses and contact set), so no failed
    (non-finite or unconverged) state is ever kept. A world also stops early, with status OK and fewer than
    ``n`` steps completed, when its impact-event buffer (``contacts.event_*``) is nearly full.

    With contacts (``env.contacts``) ``contacts`` (contact.ContactSet of W worlds) is the per-world contact
    state carried from step to step and ``contact_scratch`` (contact.Scratch) the broad and narrow phases' work
    arrays; the stages of :mod:`mechgym.physics.contact` run around the kick-drift-kick (module docstring).
    ``step_scratch``: a StepScratch for the scene's bodies, rows, coordinates and contact capacity."""
    rows, solver = linkage.rows, linkage.solver
    constrained = rows.kind.size > 0
    contacting = env.contacts
    capacity = contacts.prev_geom1.size // contacts.count.size
    clear_step_scratch(step_scratch)
    held, held_ints, held_floats = step_scratch.held, step_scratch.held_ints, step_scratch.held_floats
    saved, frames, wrench, impulse = step_scratch.saved, step_scratch.frames, step_scratch.wrench, step_scratch.impulse
    start, previous, history = step_scratch.start, step_scratch.previous, step_scratch.history
    scratch, work, joined = step_scratch.coordinates, step_scratch.work, step_scratch.joined
    saved_impulses = step_scratch.saved_impulses
    half = 0.5 * h
    for world in range(state.com.shape[0]):
        status[world, 0] = n
        status[world, 1] = OK
        _keep_impulses(state, world, work, False)
        for k in range(n):
            t0 = (first_step + k) * h
            t_mid = t0 + half
            t1 = (first_step + k + 1) * h
            _copy_world(state, saved, world, False)
            if contacting:
                keep_contacts(contacts, world, held, held_ints, held_floats, False)
            if constrained or contacting:
                begin_step(rows, bodies, state, world, h, work)
            # Scenes without smooth forces keep wrench = 0 and skip its evaluation. The hinge/slide forces are
            # added here and not inside the inlined smooth_wrench: there, their call (never made without such
            # forces) measurably doubled the step time of scenes without them.
            if env.smooth:
                smooth_wrench(bodies, actuators, env, state, world, ctrl[world], frames, wrench)
                if env.coordinate_forces:
                    coordinate_wrench(bodies, actuators, linkage.coordinates, state, world, ctrl[world], scratch,
                                      wrench)
            window_impulse(windows, world, t0, t_mid, impulse)
            opening_kick(bodies, env, state, world, half, wrench, impulse)
            if contacting:
                warm_start(bodies, state, world, h, contacts)
            if constrained:
                predict_shake(rows, bodies, solver, state, world, h, work)
            drift(bodies, state, world, h)
            code = OK
            if constrained and shake(rows, bodies, solver, state, world, h, work) < 0:
                code = NOT_PROJECTED
            if contacting:
                found = find_contacts(geoms, bodies, env, state, world, t1, h, work.com0, work.quat0, contacts,
                                      contact_scratch, MARGIN, True, False)
                if found < 0 or found > capacity:
                    code = TOO_MANY_CONTACTS
                elif correct_positions(linkage, bodies, state, world, contacts, contact_scratch, work, joined) < 0:
                    code = CONTACTS_NOT_SOLVED
            if code == OK:
                if constrained:
                    start_damper_rates(rows, bodies, state, world, work)
                window_impulse(windows, world, t_mid, t1, impulse)
                if env.implicit:
                    code = closing_kick(bodies, actuators, env, linkage, constrained, state, world, ctrl[world], half,
                                        h, impulse, start, previous, history, frames, scratch, work, wrench, contacts,
                                        contact_scratch, joined)
                else:
                    if env.smooth:
                        smooth_wrench(bodies, actuators, env, state, world, ctrl[world], frames, wrench)
                        if env.coordinate_forces:
                            coordinate_wrench(bodies, actuators, linkage.coordinates, state, world, ctrl[world],
                                              scratch, wrench)
                    opening_kick(bodies, env, state, world, half, wrench, impulse)
                    if constrained and project_velocity(rows, bodies, solver, state, world, h, work) < 0:
                        code = NOT_PROJECTED
                    elif contacting and solve_contacts(linkage, bodies, state, world, h, contacts, contact_scratch,
                                                       work, joined, False) < 0:
                        code = CONTACTS_NOT_SOLVED
            if code == OK and contacting:
                if settle_contacts(linkage, bodies, env, state, world, h, wrench, contacts, contact_scratch, work,
                                   joined, saved_impulses) < 0:
                    code = CONTACTS_NOT_SOLVED
            if code == OK and not _finite(state, world):
                code = NON_FINITE
            if code != OK:
                _copy_world(state, saved, world, True)
                if contacting:
                    keep_contacts(contacts, world, held, held_ints, held_floats, True)
                status[world, 0] = k
                status[world, 1] = code
                break
            if constrained:
                _keep_impulses(state, world, work, True)
                update_turns(linkage.coordinates, state, world, state.turns[world], scratch.grad)
            # A step records at most one impact per contact (``capacity``); stop this world early, status OK,
            # before the event buffer could overflow, so the caller can collect the events and call again.
            if contacting and contacts.event_count[world] > contacts.event_time.shape[1] - capacity:
                status[world, 0] = k + 1
                break
