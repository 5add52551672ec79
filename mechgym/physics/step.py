"""The velocity Verlet (RATTLE) step as named stages, and the compiled kernel that runs many steps for many
worlds.

One step of length h from t_k = k h (k = the global step index, so time is never accumulated):

  begin_step     store x_k, the start-of-step constraint gradients G(x_k) and the dampers' rates
                                                                                  (constraints.begin_step)
  opening kick   v <- v + h/2 (g + F(x_k, v_k)/m) + J[t_k, t_k + h/2)/m,   L <- L + h/2 T(x_k, v_k) + J_T[...]
  predict        impulses along G(x_k) that make the drift's linear prediction meet the rows
                                                                                  (constraints.predict_shake)
  open contacts  impulses along the touching contacts at x_k that start the drift at relative rest or
                 separating, within the friction cones                      (contact.open_contacts)
  drift          c <- c + h v;  q <- free-rotor flow of h with L fixed (rotation.free_rotor_drift)
  shake          impulses along G(x_k) on the half-step (v, L) until x_{k+1} satisfies every row
  advance turns  each hinge's reference angle += h x its rate, for unwrapping its angle at x_{k+1}
                                                                                  (joints.advance_turns)
  damper rates   the dampers' rates at x_{k+1} and the half-step (v, L)     (constraints.start_damper_rates)
  closing kick   v' = v + h/2 (g + F(x_{k+1}, v')/m) + J[t_k + h/2, t_{k+1})/m  (and L' likewise)
  project        impulses along G(x_{k+1}) until G(x_{k+1}) v' = 0              (constraints.project_velocity)
  confine        each confined free body held on its surface's free side, its velocity changed by its rule
                                                                                 (confinement.confine)

The constraint stages run only when the scene has rows (joints, equalities, rods, ropes); without rows the step is
Engine I's velocity Verlet unchanged. When geoms can collide the contact stages of :mod:`mechgym.physics.contact`
run too: warm_start after the opening kick, open_contacts after predict; find_contacts (at the poses SHAKE left),
correct_positions and join_near after the drift; solve_contacts and settle_contacts after the closing kick. In a
step that finds no contact, after one that had none, and with no body whose gaps the sweep carried over a large turn
(``contact.Scratch.stale``), correct_positions, join_near, solve_contacts and settle_contacts are no-ops and are
skipped (a body in flight; the implicit closing kick still calls its solve). With rows too, contacts and constraints
are coupled at both levels: the position correction moves the poses along the contact normals and the rows'
gradients together, so that it removes penetration without breaking a joint (``contact.correct_positions``), and
after the velocity projection of the rows the contact solve sweeps the contacts and the rows' blocks in turn until
both are converged: one velocity-level solve (``contact.solve_contacts``).

A step whose solve fails (SHAKE, the velocity projection, the contact solve, the implicit kick, a
confinement, or a non-finite state), or whose position correction would turn a body by more than
``tolerances.CORRECTION_TURN`` or meets a second impact (``contact.correct_positions``), is taken again as two steps
of h/2 from the same start, and so on down to h / 2**MAX_SUBDIVISION (h/1024)
(``_subdivided_step``; after each part that succeeds the next part grows back as far as its position
allows); each part is this same step with its own length, so the step stays consistent and its parts'
boundaries are exact binary fractions of h. Only a failure of a part of h/1024 fails the step. In parts of
h / 2**CONTACT_SUBDIVISION (h/64) and shorter the contact stages take any turn of the correction, let a second
impact rest and may end a stalled contact-space solve at its best inexact point (``tolerances.CONTACT_SUBDIVISION``).

F, T: smooth (fluid, free-joint damping, joint spring, actuator) wrenches about the COM; J: exact impulses of the
applied force windows over the half-step each kick serves; g: gravity. The closing kick is implicit in the velocity
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
started from the previous iterate's impulses; the iteration stops when u changes by less than CLOSING_KICK_TOLERANCE
of its terms plus the projection's own resolution (``Solver.velocity_tolerance`` on v, and times the sum
of the principal moments on L), below which successive projections cannot agree. With contacts the
contact solve is part of that projection (each iterate's contact impulses solved anew, joined with the
rows), so that the velocity-dependent forces see the contact impulses of the same step: a servo that
holds a load through friction keeps it at rest instead of letting it creep.

Performance: the step's functions are kernels (``jit.kernel``): compiled without numba's runtime, they allocate
nothing and do no reference counting of the arrays they receive; ``advance`` works in a ``StepScratch`` its
caller allocates once. A simulator calls the engine through ``run`` (``advance``, or ``start_contacts`` at a
reset): one entry point, so one compile of the engine's code; ``start_on_rows``, a reset's move onto rows that the
start does not hold, is a second one, compiled only for a scene whose start needs it.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .confinement import confine
from .constraints import (
    Workspace,
    begin_step,
    clear_workspace,
    forget_matrix,
    predict_shake,
    project_velocity,
    shake,
    start_damper_rates,
)
from .contact import (
    HELD_FLOATS,
    HELD_INTS,
    Joined,
    clear_joined,
    correct_positions,
    find_contacts,
    join_near,
    keep_contacts,
    open_contacts,
    place_on_rows,
    prime_contacts,
    settle_contacts,
    solve_contacts,
    sweep_setup,
    warm_start,
)
from .forces import CoordinateScratch, applied_wrench, window_impulse
from .jit import kernel, zero_arrays
from .joints import advance_turns, read_state, update_turns
from .kinematics import FRAME_SIZE
from .lazy import unpack_lazy
from .rotation import free_rotor_drift
from .state import kinetic_energy
from .tolerances import (
    CLOSING_KICK_ITERATIONS,
    CLOSING_KICK_TOLERANCE,
    CONTACT_SUBDIVISION,
    MARGIN,
    MAX_SUBDIVISION,
    SHAKE_HEATING,
    SHAKE_HEATING_FLOOR,
    VELOCITY_TOLERANCE,
)

# Step outcomes: NOT_CONVERGED = the implicit closing kick did not converge; NOT_PROJECTED = SHAKE or the
# velocity projection did not meet its tolerance in Solver.max_sweeps sweeps; TOO_MANY_CONTACTS = more
# contacts than the ContactSet holds per world, or more candidate pairs than the broad phase's scratch
# holds; CONTACTS_NOT_SOLVED = the position correction or the velocity solve of the contacts did not converge
# (or the correction would turn a body by more than tolerances.CORRECTION_TURN, or meets a second impact);
# NOT_CONFINED = a confinement's hold or velocity rule did not converge (confinement.confine).
OK, NON_FINITE, NOT_CONVERGED, NOT_PROJECTED, TOO_MANY_CONTACTS, CONTACTS_NOT_SOLVED, NOT_CONFINED = 0, 1, 2, 3, 4, 5, 6
# (inside ``advance`` only: a subdivided step met a nearly full impact-event buffer)
_EVENTS_FULL = -1


class Snapshot(NamedTuple):
    """One world's state at the start of a step (or of a part of a subdivided step), for taking it again:
    the bodies, the contact set (``contact.keep_contacts``), the rows' warm starts and the hinges' turns."""

    bodies: np.ndarray  # (B, 13): c, v, L, q
    held: np.ndarray  # (2,) int64: the contact and event counts
    held_ints: np.ndarray  # (K, HELD_INTS) int64: the contact set
    held_floats: np.ndarray  # (K, HELD_FLOATS)
    rows: np.ndarray  # (R, 3): impulse_position, impulse_velocity, chord_rate
    turns: np.ndarray  # (C,) rad

    @staticmethod
    def empty(bodies: int, rows: int, coordinates: int, capacity: int) -> Snapshot:
        return Snapshot(np.empty((bodies, 13)), np.zeros(2, dtype=np.int64),
                        np.empty((capacity, HELD_INTS), dtype=np.int64), np.empty((capacity, HELD_FLOATS)),
                        np.empty((rows, 3)), np.empty(coordinates))


class StepScratch(NamedTuple):
    """The work arrays of ``advance`` for B bodies, R rows, C hinge/slide coordinates and K contacts per
    world: allocated once by its caller (``StepScratch.empty``), so that a call allocates nothing, and set to
    their initial values at the start of every call (``clear_step_scratch``), so that no call depends on an
    earlier one."""

    step_start: Snapshot  # the world before the step
    part_start: Snapshot  # the world before the current part of a subdivided step
    frames: np.ndarray  # (B, FRAME_SIZE) body frames of the smooth forces
    wrench: np.ndarray  # (B, 6) the opening kick's smooth forces F (N), T (N m); 0 in a scene without any
    impulse: np.ndarray  # (B, 6) the force windows' impulses over a half-step, N s and N m s
    start: np.ndarray  # (B, 6) closing kick: the half-step (v, L)
    previous: np.ndarray  # (B, 6) closing kick: the last unprojected iterate
    history: np.ndarray  # (B, 12) closing kick: the last image and residual (Anderson)
    saved_impulses: np.ndarray  # (R,) settle_contacts' scratch
    rule_scratch: np.ndarray  # (P, 6) the confinements' velocity rules' scratch (confinement.confine)
    coordinates: CoordinateScratch
    work: Workspace
    joined: Joined

    @staticmethod
    def empty(bodies: int, rows: int, coordinates: int, capacity: int, points: int) -> StepScratch:
        """For ``bodies`` bodies, ``rows`` constraint rows, ``coordinates`` hinge/slide coordinates,
        ``capacity`` contacts per world and ``points`` held points of confinements, zeros: ``advance`` and
        ``resting_forces`` (the kernels that take it) begin with ``clear_step_scratch``."""
        scratch = StepScratch(
            Snapshot.empty(bodies, rows, coordinates, capacity), Snapshot.empty(bodies, rows, coordinates, capacity),
            np.zeros((bodies, FRAME_SIZE)),
            np.zeros((bodies, 6)), np.zeros((bodies, 6)), np.zeros((bodies, 6)), np.zeros((bodies, 6)),
            np.zeros((bodies, 12)), np.zeros(rows), np.zeros((points, 6)), CoordinateScratch.zeros(coordinates),
            Workspace.empty(bodies, rows, cleared=False), Joined.empty(capacity, rows, bodies, cleared=False))
        return scratch

    @staticmethod
    def fitting(state, linkage, contacts, confinements) -> StepScratch:
        """For the bodies of ``state`` (a State), the rows and coordinates of ``linkage`` (a Linkage), the
        capacity per world of ``contacts`` (a contact.ContactSet) and the held points of ``confinements`` (a
        confinement.Confinements)."""
        return StepScratch.empty(state.com.shape[1], linkage.rows.kind.size, linkage.coordinates.rows.kind.size,
                                 contacts.prev_geom1.size // contacts.count.size, confinements.points.shape[0])


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
    if env.smooth or env.coordinate_forces:
        applied_wrench(bodies, actuators, env, linkage.coordinates, state, world, ctrl, scratch.frames,
                       scratch.coordinates, scratch.wrench)


@kernel(inline=True)
def drift(bodies, state, world, h):
    """c += h v; the principal frame turns by the free-rotor flow of ``h`` seconds at fixed L."""
    for b in range(state.com.shape[1]):
        for i in range(3):
            state.com[world, b, i] += h * state.vel[world, b, i]
        free_rotor_drift(state.quat[world, b], bodies.inv_inertia[b], state.momentum[world, b], h)


@kernel(inline=True)
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
                VELOCITY_TOLERANCE if env.contacts else 0.0)
    for b in range(start.shape[0]):
        for i in range(3):
            start[b, i] = state.vel[world, b, i]
            start[b, 3 + i] = state.momentum[world, b, i]
    for iteration in range(CLOSING_KICK_ITERATIONS):
        if iteration > 0:
            applied_wrench(bodies, actuators, env, linkage.coordinates, state, world, ctrl, frames, scratch, wrench)
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
                converged &= abs(r) <= CLOSING_KICK_TOLERANCE * (abs(start[b, i]) + abs(dv)) + slack
                state.vel[world, b, i] = new
                dr = r - history[b, 6 + i]
                along, across = along + mass * r * dr, across + mass * dr * dr
                dl = half * wrench[b, 3 + i] + impulse[b, 3 + i]
                new = start[b, 3 + i] + dl
                r = new - previous[b, 3 + i]
                converged &= abs(r) <= CLOSING_KICK_TOLERANCE * (abs(start[b, 3 + i]) + abs(dl)) + spin_slack
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


@kernel(inline=True)
def _finite(state, world):
    for b in range(state.com.shape[1]):
        for i in range(3):
            if not (math.isfinite(state.com[world, b, i]) and math.isfinite(state.vel[world, b, i])
                    and math.isfinite(state.momentum[world, b, i]) and math.isfinite(state.quat[world, b, i])):
                return False
        if not math.isfinite(state.quat[world, b, 3]):
            return False
    return True


@kernel(inline=True)
def _snapshot(state, contacts, world, contacting, snapshot, back):
    """Copy world ``world``'s bodies, contact set (when ``contacting``), rows' warm starts and hinge turns into
    ``snapshot`` (a Snapshot; back=False) or restore them from it (back=True)."""
    target = snapshot.bodies
    for b in range(state.com.shape[1]):
        for i in range(3):
            if back:
                state.com[world, b, i] = target[b, i]
                state.vel[world, b, i] = target[b, 3 + i]
                state.momentum[world, b, i] = target[b, 6 + i]
            else:
                target[b, i] = state.com[world, b, i]
                target[b, 3 + i] = state.vel[world, b, i]
                target[b, 6 + i] = state.momentum[world, b, i]
        for i in range(4):
            if back:
                state.quat[world, b, i] = target[b, 9 + i]
            else:
                target[b, 9 + i] = state.quat[world, b, i]
    if contacting:
        keep_contacts(contacts, world, snapshot.held, snapshot.held_ints, snapshot.held_floats, back)
    for r in range(snapshot.rows.shape[0]):
        if back:
            state.impulse_position[world, r] = snapshot.rows[r, 0]
            state.impulse_velocity[world, r] = snapshot.rows[r, 1]
            state.chord_rate[world, r] = snapshot.rows[r, 2]
        else:
            snapshot.rows[r, 0] = state.impulse_position[world, r]
            snapshot.rows[r, 1] = state.impulse_velocity[world, r]
            snapshot.rows[r, 2] = state.chord_rate[world, r]
    for c in range(snapshot.turns.size):
        if back:
            state.turns[world, c] = snapshot.turns[c]
        else:
            snapshot.turns[c] = state.turns[world, c]


@kernel
def _restore(state, contacts, world, contacting, snapshot, work):
    """Put world ``world`` back as ``snapshot`` holds it, and the rows' warm starts in ``work`` with it."""
    _snapshot(state, contacts, world, contacting, snapshot, True)
    _keep_impulses(state, world, work, False)
    forget_matrix(work)


@kernel(inline=True)
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
def _predict_and_open(linkage, bodies, state, world, h, work, contacts, contact_scratch, joined, constrained,
                      contacting):
    """The stages between the opening kick's warm start and the drift: the rows' prediction
    (``constraints.predict_shake``), then the opening half's contact solve (``contact.open_contacts``), which
    starts from the velocities the prediction left (the dampers' half-step impulses among them)."""
    if constrained:
        predict_shake(linkage.rows, bodies, linkage.solver, state, world, h, work)
    if contacting:
        open_contacts(linkage, bodies, state, world, h, contacts, contact_scratch, work, joined)


@kernel(inline=True)
def _step(bodies, actuators, env, linkage, geoms, confinements, windows, state, contacts, contact_scratch, ctrl, world,
          t0, t1, h, short_part, step_scratch):
    """One step of world ``world`` from t0 to t1 = t0 + h (s; both given, each an integer times a power-of-two fraction
    of the physics step, so consecutive steps share their boundaries exactly) under the controls ``ctrl`` (U,), the
    stages of the module docstring; returns OK or the first failure, leaving the world as the failure found it (the
    caller restores it). ``short_part``: the step is a part of h / 2**CONTACT_SUBDIVISION or shorter, so the position
    correction takes any turn of a body and any second impact (``contact.correct_positions``), and a contact-space solve
    whose tries all stalled its best point within INEXACT_VELOCITY (``contact.dense.sweep_contact_space``). On success
    the rows' warm starts and the hinges' turns are written back to ``state``."""
    rows, solver = linkage.rows, linkage.solver
    constrained = rows.kind.size > 0
    contacting = env.contacts
    capacity = contacts.prev_geom1.size // contacts.count.size
    frames, wrench, impulse = step_scratch.frames, step_scratch.wrench, step_scratch.impulse
    scratch, work, joined = step_scratch.coordinates, step_scratch.work, step_scratch.joined
    half = 0.5 * h
    t_mid = t0 + half
    contact_scratch.inexact[0] = short_part
    if constrained or contacting:
        begin_step(rows, bodies, state, world, h, work)
    # Scenes without smooth forces keep wrench = 0 and skip its evaluation.
    if env.smooth or env.coordinate_forces:
        applied_wrench(bodies, actuators, env, linkage.coordinates, state, world, ctrl, frames, scratch, wrench)
    window_impulse(windows, world, t0, t_mid, impulse)
    opening_kick(bodies, env, state, world, half, wrench, impulse)
    if contacting:
        warm_start(bodies, state, world, h, contacts)
    kinetic = kinetic_energy(bodies, state, world) if constrained else 0.0
    if constrained or contacting:
        _predict_and_open(linkage, bodies, state, world, h, work, contacts, contact_scratch, joined, constrained,
                          contacting)
    drift(bodies, state, world, h)
    if constrained and (shake(rows, bodies, solver, state, world, h, work) < 0
                        or kinetic_energy(bodies, state, world) > SHAKE_HEATING * kinetic + SHAKE_HEATING_FLOOR):
        return NOT_PROJECTED
    if constrained:
        advance_turns(linkage.coordinates, bodies, state, world, state.turns[world], h, scratch.grad, scratch.omega)
    engaged = False  # contact stages past find_contacts needed (module docstring)
    if contacting:
        found = find_contacts(geoms, bodies, env, state, world, t1, h, work.com0, work.quat0, work.vel0,
                              work.momentum0, contacts, contact_scratch, MARGIN, True, False)
        if found < 0 or found > capacity:
            return TOO_MANY_CONTACTS
        engaged = found > 0 or contacts.prev_count[world] > 0 or contact_scratch.stale.any()
    if engaged:
        corrected = correct_positions(geoms, linkage, bodies, state, world, contacts, contact_scratch, work, joined,
                                      not short_part)
        if corrected == -2:
            return TOO_MANY_CONTACTS
        if corrected < 0:
            return CONTACTS_NOT_SOLVED
        join_near(bodies, env, state, world, h, work.vel0, work.momentum0, contacts, contact_scratch)
    if constrained:
        start_damper_rates(rows, bodies, state, world, work, True)
    window_impulse(windows, world, t_mid, t1, impulse)
    if env.implicit:
        code = closing_kick(bodies, actuators, env, linkage, constrained, state, world, ctrl, half, h, impulse,
                            step_scratch.start, step_scratch.previous, step_scratch.history, frames, scratch, work,
                            wrench, contacts, contact_scratch, joined)
        if code != OK:
            return code
    else:
        if env.smooth or env.coordinate_forces:
            applied_wrench(bodies, actuators, env, linkage.coordinates, state, world, ctrl, frames, scratch, wrench)
        opening_kick(bodies, env, state, world, half, wrench, impulse)
        if constrained and project_velocity(rows, bodies, solver, state, world, h, work) < 0:
            return NOT_PROJECTED
        if engaged and solve_contacts(linkage, bodies, state, world, h, contacts, contact_scratch, work, joined,
                                      False) < 0:
            return CONTACTS_NOT_SOLVED
    if engaged and settle_contacts(geoms, linkage, bodies, env, state, world, h, wrench, contacts, contact_scratch,
                                   work, joined, step_scratch.saved_impulses) < 0:
        return CONTACTS_NOT_SOLVED
    if confinements.body.size > 0:
        forget_matrix(work)  # (the poses the projection's matrix was assembled at may move)
        if not confine(confinements, bodies.inv_mass, bodies.inv_inertia, state.com[world], state.vel[world],
                       state.momentum[world], state.quat[world], step_scratch.rule_scratch):
            return NOT_CONFINED
    if not _finite(state, world):
        return NON_FINITE
    if constrained:
        _keep_impulses(state, world, work, True)
        update_turns(linkage.coordinates, state, world, state.turns[world], scratch.grad)
    return OK


@kernel(inline=True)
def _events_nearly_full(contacts, world, capacity):
    """Whether the impact-event buffer of ``world`` has less room than one step (or part) may fill: one impact
    per contact of the ``capacity``."""
    return contacts.event_count[world] > contacts.event_time.shape[1] - capacity


@kernel
def _as_whole_step(state, world, ratio, work):
    """After a subdivided step whose last part lasted h / ``ratio``: the rows' impulses and chord rates of that
    part, scaled by ``ratio``, stand for the step's (the same mean reaction force over h, and the warm starts of
    the next whole step), in ``state`` and ``work``."""
    for r in range(state.impulse_position.shape[1]):
        state.impulse_position[world, r] *= ratio
        state.impulse_velocity[world, r] *= ratio
        state.chord_rate[world, r] *= ratio
    _keep_impulses(state, world, work, False)


@kernel(inline=True)
def _subdivided_step(bodies, actuators, env, linkage, geoms, confinements, windows, state, contacts, contact_scratch,
                     ctrl, world, step, h, guard_events, step_scratch):
    """Global step ``step`` of world ``world`` (from t = step h to (step + 1) h), taken whole if it succeeds and
    otherwise in parts of h/2, h/4, ... down to h / 2**MAX_SUBDIVISION: a part that fails is taken again as two
    halves, and after each part that succeeds the next one is as long as its position allows (up to h). The
    times stay integers times h / 2**MAX_SUBDIVISION, so the step ends at exactly (step + 1) h. Returns
    (code, whether the step was subdivided): OK, the failure of a part that could not be halved again
    (TOO_MANY_CONTACTS is never retried: a part meets the same contacts), or, when ``guard_events``, _EVENTS_FULL
    before a part that could overflow the impact-event buffer. A failed step leaves the world as some part of it
    found it (the caller restores the step's start)."""
    finest = 1 << MAX_SUBDIVISION
    short = finest >> CONTACT_SUBDIVISION  # parts of h / 2**CONTACT_SUBDIVISION, in units
    unit = h / finest  # exact: a power of two
    contacting = env.contacts
    capacity = contacts.prev_geom1.size // contacts.count.size
    part_start = step_scratch.part_start
    position, size = 0, finest
    subdivided = False
    while position < finest:
        if position > 0 and guard_events and _events_nearly_full(contacts, world, capacity):
            return _EVENTS_FULL, subdivided
        if size < finest:
            _snapshot(state, contacts, world, contacting, part_start, False)
        first = step * finest + position
        code = _step(bodies, actuators, env, linkage, geoms, confinements, windows, state, contacts, contact_scratch,
                     ctrl, world, first * unit, (first + size) * unit, size * unit, size <= short, step_scratch)
        if code == OK:
            position += size
            if position == finest and subdivided:
                _as_whole_step(state, world, finest / size, step_scratch.work)
            while size < finest and position % (2 * size) == 0:
                size *= 2
            continue
        if size == 1 or code == TOO_MANY_CONTACTS:
            return code, subdivided
        _restore(state, contacts, world, contacting, step_scratch.step_start if size == finest else part_start,
                 step_scratch.work)
        size //= 2
        subdivided = True
    return OK, subdivided


@kernel(inline=True)
def advance(bodies, actuators, env, linkage, geoms, confinements, windows, state, contacts, contact_scratch, ctrl,
            first_step, n, h, status, step_scratch):
    """Advance every world of ``state`` by ``n`` steps of ``h`` seconds, starting at global step
    ``first_step``; ``ctrl`` (W, U) is held. status[w] = (steps completed, OK | NON_FINITE | NOT_CONVERGED |
    NOT_PROJECTED | TOO_MANY_CONTACTS | CONTACTS_NOT_SOLVED | NOT_CONFINED, steps taken in parts, inexact contact
    solves in their parts of h / 2**CONTACT_SUBDIVISION or shorter, ``contact.dense.sweep_contact_space``): a step that
    fails is taken again in parts (``_subdivided_step``); a world stops at its first step that fails even so and
    is left as that step found it (bodies, hinge turns, warm-start impulses and contact set), so no failed
    (non-finite or unconverged) state is ever kept. A world also stops early, with status OK and fewer than ``n`` steps
    completed, when its impact-event buffer (``contacts.event_*``) is nearly full.

    With contacts (``env.contacts``) ``contacts`` (contact.ContactSet of W worlds) is the per-world contact
    state carried from step to step and ``contact_scratch`` (contact.Scratch) the broad and narrow phases' work
    arrays; the stages of :mod:`mechgym.physics.contact` run around the kick-drift-kick (module docstring).
    ``step_scratch``: a StepScratch for the scene's bodies, rows, coordinates and contact capacity."""
    contacting = env.contacts
    capacity = contacts.prev_geom1.size // contacts.count.size
    clear_step_scratch(step_scratch)
    start, work = step_scratch.step_start, step_scratch.work
    for world in range(state.com.shape[0]):
        status[world, 0] = n
        status[world, 1] = OK
        status[world, 2] = 0
        status[world, 3] = 0
        _keep_impulses(state, world, work, False)
        for k in range(n):
            _snapshot(state, contacts, world, contacting, start, False)
            contact_scratch.inexact[1] = 0
            guard_events = contacting and contacts.event_count[world] > 0
            code, subdivided = _subdivided_step(bodies, actuators, env, linkage, geoms, confinements, windows, state,
                                                contacts, contact_scratch, ctrl[world], world, first_step + k, h,
                                                guard_events, step_scratch)
            if code != OK:
                _restore(state, contacts, world, contacting, start, work)
                status[world, 0] = k
                status[world, 1] = OK if code == _EVENTS_FULL else code
                break
            status[world, 2] += subdivided
            status[world, 3] += contact_scratch.inexact[1]
            # A step records at most one impact per contact (``capacity``) per part; stop this world early, status
            # OK, before the event buffer could overflow, so the caller can collect the events and call again.
            if contacting and _events_nearly_full(contacts, world, capacity):
                status[world, 0] = k + 1
                break


@kernel
def start_contacts(bodies, actuators, env, linkage, geoms, state, contacts, contact_scratch, ctrl, h, step_scratch):
    """At a reset of a scene whose geoms can collide: the broad phase's sweep axis from world 0's poses
    (``contact.sweep_setup``), then each world's smooth forces under ``ctrl`` (W, U) (``resting_forces``) and its
    contacts with their resting reactions (``contact.prime_contacts``). Returns -1 if a world's resting reactions
    did not converge, else 0."""
    sweep_setup(geoms, contact_scratch, state, 0)
    contact_scratch.inexact[0] = False  # (a reset's resting reactions are solved exactly or not at all)
    work = step_scratch.work
    for world in range(state.com.shape[0]):
        resting_forces(bodies, actuators, env, linkage, state, world, ctrl[world], step_scratch)
        if prime_contacts(geoms, linkage, bodies, env, state, world, h, step_scratch.wrench, contacts,
                          contact_scratch, work, step_scratch.joined, step_scratch.saved_impulses, MARGIN) < 0:
            return -1
    return 0


@kernel
def start_on_rows(blocks, kind):
    """At a reset whose start an equality (connect, weld, rod) or a rope does not hold (the simulator finds which): each
    world's poses moved onto its rows (``contact.place_on_rows``), its velocities projected onto them at the new poses,
    G v = 0 (``constraints.project_velocity`` over a step of length 0, where no damping acts; the kinetic-energy metric,
    the joints' armature included, keeps the momentum), and its hinges' turns taken at the new angles. ``blocks``,
    ``kind``: as ``run``'s. Returns 0, or -1 if a world's rows did not settle (that world is left as it started). An
    entry point of its own, beside ``run``: compiled only for a scene that needs it."""
    result = 0
    for s in range(len(blocks)):
        (bodies, actuators, env, linkage, geoms, confinements, state, contacts, contact_scratch, ctrl, status,
         step_scratch, reading) = unpack_lazy(blocks[s], kind)
        clear_step_scratch(step_scratch)
        work, start = step_scratch.work, step_scratch.step_start
        for world in range(state.com.shape[0]):
            _snapshot(state, contacts, world, False, start, False)
            if _moved_onto_rows(linkage, bodies, state, world, contact_scratch, work, step_scratch.joined):
                update_turns(linkage.coordinates, state, world, state.turns[world], step_scratch.coordinates.grad)
            else:
                _restore(state, contacts, world, False, start, work)
                result = -1
    return result


@kernel(inline=True)
def _moved_onto_rows(linkage, bodies, state, world, contact_scratch, work, joined):
    """``start_on_rows``' two moves of one world, the poses and then the velocities; whether both converged."""
    if not place_on_rows(linkage, bodies, state, world, contact_scratch, work, joined):
        return False
    start_damper_rates(linkage.rows, bodies, state, world, work, False)
    return project_velocity(linkage.rows, bodies, linkage.solver, state, world, 0.0, work) >= 0


# What ``run`` does: its first argument.
ADVANCE, START_CONTACTS, READ = 0, 1, 2


@kernel
def run(operation, blocks, kind, windows, first_steps, n, h):
    """The simulators' one entry point into the engine: ``advance`` then ``joints.read_state`` (ADVANCE: the
    state that the steps leave read into the simulator's reading; returns 0), ``start_contacts`` (START_CONTACTS, at
    a reset; returns the lowest result) or ``read_state`` alone (READ; returns 0), so that the engine's code is
    compiled once for all (Python calls a kernel through a twin, which compiles everything the kernel calls:
    ``physics.jit``), for each simulator in turn: ``blocks`` (S, K) holds one simulator's arguments per row, those
    it passes as the same objects at every call packed into one array (``dispatch.Packed(bodies, actuators, env,
    linkage, geoms, confinements, state, contacts, contact_scratch, ctrl, status, step_scratch, reading)``; ``kind``
    their common ``Packed.kind``, ``dispatch.stack`` the rows), so that a call from Python unboxes one array instead
    of ~250 per simulator, and releases the GIL once for all of them. ``first_steps`` (S,): each simulator's global
    step count; ``windows`` act on every simulator (the empty Windows where more than one is stepped)."""
    result = 0
    for s in range(len(blocks)):
        (bodies, actuators, env, linkage, geoms, confinements, state, contacts, contact_scratch, ctrl, status,
         step_scratch, reading) = unpack_lazy(blocks[s], kind)
        if operation == START_CONTACTS:
            result = min(result, start_contacts(bodies, actuators, env, linkage, geoms, state, contacts,
                                                contact_scratch, ctrl, h, step_scratch))
            continue
        if operation == ADVANCE:
            advance(bodies, actuators, env, linkage, geoms, confinements, windows, state, contacts, contact_scratch,
                    ctrl, first_steps[s], n, h, status, step_scratch)
        read_state(bodies, linkage.coordinates, state, 0, reading)
    return result
