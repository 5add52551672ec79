"""The velocity-level contact solve: warm start, projected Gauss-Seidel with restitution and Coulomb friction,
impact stages, reaction forces and resting reactions (see :mod:`mechgym.physics.contact`)."""

from __future__ import annotations

import math

from ..constraints import (
    LIN_A,
    LIN_B,
    apply_impulse,
    begin_projection,
    copy_into,
    coupling,
    projection_sweep,
    rate_with,
    start_damper_rates,
    take_spins,
)
from ..jit import kernel
from ..linalg import cholesky_solve, ridge_cholesky
from ..state import kinetic_energy, tensor_spin
from ..tolerances import (
    DENSE_AFTER,
    DENSE_RETRIES,
    DENSE_RETRY_AFTER,
    INEXACT_VELOCITY,
    MAX_SWEEPS,
    OPEN_CONTACTS,
    SHAKE_HEATING,
    SHAKE_HEATING_FLOOR,
    SLIP,
    SLOW_VELOCITY,
    UNBALANCED,
    VELOCITY_SLOW_SWEEPS,
    VELOCITY_TOLERANCE,
)
from .dense import solve_dense
from .detect import find_contacts
from .friction import at_limit, cone_mu, disc, friction_step, normal_coupling
from .islands import component, contact_component, find_islands
from .joined import apply_joined, contacts_touch_rows, factor_rows, join_rows, take_acting, take_pushes
from .sets import IMPACTS, along, beside, chain_by_body, count_at_bodies

# settle_contacts' marks of a component: an event happened there; a body of it still moves; its contacts' impulses
# changed between the kicks but moved no body (``_split_only``)
EVENT, MOVING, SPLIT_ONLY = 1, 2, 4
KEEP, ASIDE, SETTLE = 0, 1, 2  # a contact in _rest_reactions: its force kept; kept, touching but left out; settled


@kernel(inline=True)
def warm_start(bodies, state, world, h, contacts):
    """Opening kick of the contact forces: each contact of the current (previous step's) set applies the
    impulse h/2 F along its rows (F: its reaction force, N; zero after impacts and for inactive contacts).
    The rows were built at the end of the previous step, which is this step's start: they are exact here."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    base = world * capacity
    for i in range(base, base + min(contacts.count[world], capacity)):
        f = contacts.force[i]
        if f[0] == 0.0 and f[1] == 0.0 and f[2] == 0.0:
            continue
        for k in range(3):
            row = contacts.rows[i, k]
            apply_impulse(bodies, state, world, contacts.body_a[i], contacts.body_b[i], row, 0.5 * h * along(f, row))


@kernel
def open_contacts(linkage, bodies, state, world, h, contacts, scratch, work, joined):
    """The opening half's contact solve (RATTLE's first multipliers, for contacts): after the opening kick and the
    warm start h/2 F, the contacts that touched at the end of the previous step, at its poses x_k, get the impulses
    that leave each at relative rest for the drift or separating, within its cone (the contact-space solve of
    ``contact.dense`` on the half-step velocities, from h/2 F). Friction then holds at the position level: a
    sticking contact does not slide in the drift, whatever the step, where the closing solve alone let it slide
    by what the warm start missed (the card lifted between two pads lagged them by O(h^2) per unit time: 40 um
    per 0.2 s at 1 ms, 7 mm at 10 ms). The changes dP are applied to the bodies (with constraint rows, joined:
    A factored on the start gradients G(x_k), the rows' shares into ``work.impulse_position``), and F takes
    2 dP / h, so that the step's mean force and the next step's ``opened`` include them. An island whose rates all
    meet VELOCITY_TOLERANCE (a box at rest: the warm start holds it) is left as it is, and so is one of more than
    OPEN_CONTACTS contacts (a pile of boxes in a bin), one whose sweeps do not converge, and one whose change more
    than doubles the kinetic energy (SHAKE_HEATING; undone): its closing solve acts alone, as before this stage. The
    change's impulses remove energy through the contacts, but the rows' shares work against the rows' rates, which
    the prediction leaves at their chord rates, O(h); where the joints nearly block a contact (a chain's sphere
    pressed against another link of the same chain: D of eigenvalues 1e-8 and 35 m/s per N s) its rest takes
    impulses of 1e5 N s whose shares raised the energy from 13 to 62 J (random scene 1955), and the step failed in
    every part."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    base = world * capacity
    rows = linkage.rows
    take_spins(bodies, state.quat[world], scratch.spin)
    factored = False
    islands = find_islands(rows, world, contacts, scratch, False)
    for island in range(islands):
        lo, hi = scratch.island_start[island], scratch.island_start[island + 1]
        m = hi - lo
        if m > OPEN_CONTACTS:
            continue
        worst = 0.0
        for n in range(lo, hi):
            i = scratch.island_members[n]
            for k in range(3):
                rate = rate_with(contacts, scratch.spin, state, world, i, contacts.rows[i, k])
                worst = max(worst, -rate if k == 0 else abs(rate))
                contacts.impulse[i, k] = 0.5 * h * along(contacts.force[i], contacts.rows[i, k])
        if worst <= VELOCITY_TOLERANCE:
            continue
        if not factored and rows.kind.size > 0 and contacts_touch_rows(rows, world, contacts, False):
            factor_rows(rows, work.start_gradient, work.mobility, work.compliance, joined, joined.rigid)
            factored = True
        for n in range(lo, hi):
            i = scratch.island_members[n]
            _couple(rows, bodies, contacts, scratch, work.start_gradient, work.mobility, joined, i, i - base)
        scratch.dense_ready[0] = False  # (D of this island, at x_k)
        if solve_dense(linkage, bodies, state, world, contacts, scratch, work, joined, lo, hi) <= 0:
            continue
        kinetic = kinetic_energy(bodies, state, world)
        _keep_motion(state, world, scratch.displacement, work.impulse_position, joined.value)
        for c in range(m):
            i = scratch.dense_index[c]
            for k in range(3):
                _apply_row(linkage, bodies, state, world, contacts, i, k,
                           contacts.impulse[i, k] - scratch.dense_start[3 * c + k], work.impulse_position,
                           work.impulse_position, joined)
        if kinetic_energy(bodies, state, world) > SHAKE_HEATING * kinetic + SHAKE_HEATING_FLOOR:
            _restore_motion(state, world, scratch.displacement, work.impulse_position, joined.value)
            continue
        for c in range(m):
            i = scratch.dense_index[c]
            for k in range(3):
                amount = contacts.impulse[i, k] - scratch.dense_start[3 * c + k]
                for j in range(3):
                    contacts.force[i, j] += 2.0 * amount * contacts.rows[i, k, LIN_B + j] / h


@kernel
def _apply_rows(linkage, bodies, state, world, contacts, i, p0, p1, p2, work, joined):
    """Impulses p0, p1, p2 (N s) along contact i's normal and tangent rows; with constraint rows, the joined
    response (``contact.joined``): the equality rows' impulses that keep them satisfied go with them, into
    ``work.impulse_velocity`` (the rows' impulses of the step), or for an impact into ``joined.impact_shares``
    (the dampers' shares always into ``work.impulse_velocity``: ``joined.apply_joined``)."""
    for k, amount in ((0, p0), (1, p1), (2, p2)):
        _apply_row(linkage, bodies, state, world, contacts, i, k, amount,
                   joined.impact_shares if contacts.impact[i] else work.impulse_velocity, work.impulse_velocity, joined)


@kernel(inline=True)
def _apply_row(linkage, bodies, state, world, contacts, i, k, amount, shares, damper_shares, joined):
    """An impulse ``amount`` (N s) along row k of contact i; with constraint rows, the joined response: the equality
    rows' impulses that keep them satisfied go with it, accumulated into ``shares`` (R,), the dampers' into
    ``damper_shares`` (``joined.apply_joined``)."""
    if amount == 0.0:
        return
    apply_impulse(bodies, state, world, contacts.body_a[i], contacts.body_b[i], contacts.rows[i, k], amount)
    rows = linkage.rows
    if rows.kind.size > 0:
        c = i % (contacts.prev_geom1.size // contacts.count.size)
        apply_joined(rows, bodies, state, world, joined, joined.response[c, k], joined.push[c, k], amount, shares,
                     damper_shares)


@kernel(inline=True)
def begin_solve(linkage, bodies, state, world, contacts, scratch, work, joined, again):
    """After the closing kick: the couplings K = J W J^T (3 x 3) of the touching contacts at the corrected
    poses (with constraint rows the joined couplings, ``contact.joined``, on the rows' gradients and W G^T that the
    velocity projection left in ``work``), and the warm start of the closing solve: each persistent contact's
    normal impulse starts from the normal part of what its predecessor applied in the opening kick (``opened``),
    applied to the bodies. The tangential impulses start from the least-norm split of the opening kick's friction
    wrench on each body pair (``_carry_friction``), which carries no self-equilibrated part.

    ``again``: the same contacts at the same poses were solved for an earlier iterate of the implicit closing
    kick (``step.closing_kick``), without impacts: the couplings stand, and each contact starts from that
    solve's impulses (normal and tangential), which differ from this iterate's by the small change of the
    smooth forces between iterates, so the sweeps only need to remove that change.
    """
    capacity = contacts.prev_geom1.size // contacts.count.size
    base = world * capacity
    take_spins(bodies, state.quat[world], scratch.spin)  # (the poses stay while the solve runs)
    scratch.dense_ready[0] = scratch.dense_ready[0] and again
    if again:
        for i in range(base, base + min(contacts.count[world], capacity)):
            if contacts.active[i]:
                p = contacts.impulse[i]
                _apply_rows(linkage, bodies, state, world, contacts, i, p[0], p[1], p[2], work, joined)
        return
    rows = linkage.rows
    if rows.kind.size > 0 and contacts_touch_rows(rows, world, contacts, False):
        take_acting(rows, work, joined.acting)
        factor_rows(rows, work.gradient, work.mobility, work.compliance, joined, joined.acting)
    for i in range(base, base + min(contacts.count[world], capacity)):
        for k in range(3):
            contacts.impulse[i, k] = 0.0
        if not contacts.active[i]:
            continue
        _couple(rows, bodies, contacts, scratch, work.gradient, work.mobility, joined, i, i - base)
        if contacts.impact[i]:
            continue
        p_n = max(0.0, along(contacts.opened[i], contacts.rows[i, 0]))
        contacts.impulse[i, 0] = p_n
        _apply_rows(linkage, bodies, state, world, contacts, i, p_n, 0.0, 0.0, work, joined)
    _carry_friction(linkage, bodies, state, world, contacts, scratch, work, joined, base,
                    base + min(contacts.count[world], capacity))


@kernel(inline=True)
def _couple(rows, bodies, contacts, scratch, gradient, mobility, joined, i, c):
    """Contact i's couplings K = J W J^T (3 x 3) at the orientations of ``scratch.spin``, with constraint rows
    joined (``contact.joined``: their gradients ``gradient`` and W G^T ``mobility``, A factored in ``joined``), its
    responses and pushes in ``joined`` at c (its index in the world's set)."""
    a, b = contacts.body_a[i], contacts.body_b[i]
    for j in range(3):  # K = J W J^T is symmetric: its upper triangle, mirrored
        for k in range(j, 3):
            contacts.coupling[i, j, k] = coupling(bodies, scratch.spin, a, b, contacts.rows[i, j], contacts.rows[i, k])
            contacts.coupling[i, k, j] = contacts.coupling[i, j, k]
    if rows.kind.size > 0:
        join_rows(rows, mobility, joined, a, b, contacts.rows[i], 3, contacts.coupling[i], joined.response[c])
        take_pushes(rows, gradient, joined, joined.response[c], joined.push[c])


@kernel(inline=True)
def _opening_friction(contacts, i):
    """The tangential impulses (N s) that contact i's opening kick applied along its tangent rows, held to its
    disc at its normal start (``begin_solve``)."""
    opened, limit = contacts.opened[i], cone_mu(contacts, i) * contacts.impulse[i, 0]
    return disc(along(opened, contacts.rows[i, 1]), along(opened, contacts.rows[i, 2]), limit)


@kernel
def _carry_friction(linkage, bodies, state, world, contacts, scratch, work, joined, base, end):
    """The tangential impulses the closing solve starts from (``begin_solve``, contacts ``base`` to ``end`` of the
    flat set), applied to the bodies: per body pair, the least-norm impulses of the pair's touching contacts that
    put on the pair the wrench of the friction its opening kick applied (``opened``'s tangential parts, each
    within its disc), each then held to its disc. They hold the pair as the opening kick did, so that a set whose
    shares are indeterminate (a card crushed at eight corners, squeezed between two pads) starts next to a
    solution; and they have no self-equilibrated part (a split that puts no wrench on the pair), which the sweeps
    never remove and which, carried from step to step through F = (P_open + P_close) / h, accumulated until it
    saturated the cones of a 5-box stack. A pair whose opening friction changes no contact's rate by more than
    VELOCITY_TOLERANCE (what the solve resolves: a box at rest on a plane carries 1e-29 N) starts from zero.

    Least norm: t = J^T (J J^T)^-1 w over the pair's tangent rows J (their body-b columns, or body a's where b is
    static geometry: the wrench on one body of the pair fixes it on the other), w their opening impulses' wrench,
    J J^T (6 x 6, rank 2 for one point) factored with a ridge of 1e-12 of its trace (``_least_norm_friction``).
    A pair's contacts are found on the chain of its body (``sets.chain_by_body``), not among all the world's.
    Scratch: ``scratch.kinds`` marks the contacts taken (1: in the current pair, 2: done), ``scratch.factor``,
    ``system_vectors[0]``, ``chain_head`` and ``chain_next``."""
    normal, wrench, taken, following = scratch.factor, scratch.system_vectors[0], scratch.kinds, scratch.chain_next
    chain_by_body(contacts, base, end, scratch.chain_head, following)
    for i in range(base, end):
        taken[i - base] = 0
    for i in range(base, end):
        if taken[i - base] or not contacts.active[i] or contacts.impact[i]:
            continue
        a, b = contacts.body_a[i], contacts.body_b[i]
        column = LIN_B if b >= 0 else LIN_A
        carried = False
        j = i
        while j >= 0:
            if (not taken[j - base] and contacts.active[j] and not contacts.impact[j] and contacts.body_a[j] == a
                    and contacts.body_b[j] == b):
                taken[j - base] = 1
                t1, t2 = _opening_friction(contacts, j)
                carried = carried or max(abs(t1) * contacts.coupling[j, 1, 1],
                                         abs(t2) * contacts.coupling[j, 2, 2]) > VELOCITY_TOLERANCE
            j = following[j - base]
        if carried:
            _least_norm_friction(linkage, bodies, state, world, contacts, work, joined, taken, base, i, following,
                                 column, normal, wrench)
        j = i
        while j >= 0:
            if taken[j - base] == 1:
                taken[j - base] = 2
            j = following[j - base]


@kernel(inline=True)
def _least_norm_friction(linkage, bodies, state, world, contacts, work, joined, taken, base, first, following,
                         column, normal, wrench):
    """``_carry_friction`` for one pair, its contacts those on the chain ``following`` from ``first`` marked 1 in
    ``taken``: the least-norm tangential impulses with the wrench (on the body whose columns start at ``column``) of
    their opening friction, held to their discs and applied. ``normal`` (6 x 6) and ``wrench`` (6) are scratch."""
    for r in range(6):
        wrench[r] = 0.0
        for c in range(6):
            normal[r, c] = 0.0
    j = first
    while j >= 0:
        if taken[j - base] == 1:
            t1, t2 = _opening_friction(contacts, j)
            for k, t in ((1, t1), (2, t2)):
                row = contacts.rows[j, k]
                for r in range(6):
                    wrench[r] += t * row[column + r]
                    for c in range(6):
                        normal[r, c] += row[column + r] * row[column + c]
        j = following[j - base]
    trace = normal[0, 0] + normal[1, 1] + normal[2, 2] + normal[3, 3] + normal[4, 4] + normal[5, 5]
    if not ridge_cholesky(normal, 6, 1e-12 * trace):
        return
    cholesky_solve(normal, 6, wrench)
    j = first
    while j >= 0:
        if taken[j - base] == 1:
            t1, t2 = 0.0, 0.0
            for r in range(6):
                t1 += contacts.rows[j, 1, column + r] * wrench[r]
                t2 += contacts.rows[j, 2, column + r] * wrench[r]
            t1, t2 = disc(t1, t2, cone_mu(contacts, j) * contacts.impulse[j, 0])
            contacts.impulse[j, 1], contacts.impulse[j, 2] = t1, t2
            _apply_rows(linkage, bodies, state, world, contacts, j, 0.0, t1, t2, work, joined)
        j = following[j - base]


@kernel(inline=True)
def contact_sweep(linkage, bodies, state, world, contacts, scratch, work, joined, lo, hi):
    """One projected Gauss-Seidel sweep over the touching contacts ``scratch.island_members[lo:hi]`` of world
    ``world`` (after ``begin_solve``).
    Per contact: the normal impulse increment -J_n v / K_nn (a sliding point's K_nn with its friction's share,
    ``friction.normal_coupling``), accumulated and clamped at 0; then the
    tangential impulse: a sticking point's stops the slip (within the static cone |P_t| <= mu_s P_n), a sliding
    point's is kinetic, mu_k P_n against the slip at convergence (see ``update_sliding``). Impulses go through
    ``_apply_rows`` (joined to the equality rows when there are any). Returns the largest velocity change
    |dP| K_kk (m/s) it made."""
    worst = 0.0
    for n in range(lo, hi):
        i = scratch.island_members[n]
        k = contacts.coupling[i]
        p = contacts.impulse[i]
        p_n = p[0]
        if k[0, 0] > 0.0:  # (0: the joints block the normal, see contact.joined)
            rate = rate_with(contacts, scratch.spin, state, world, i, contacts.rows[i, 0])
            p_n = max(0.0, p[0] - rate / normal_coupling(k, p, contacts.friction[i], contacts.sliding[i]))
        d_n = p_n - p[0]
        if d_n != 0.0:
            _apply_rows(linkage, bodies, state, world, contacts, i, d_n, 0.0, 0.0, work, joined)
        v1 = rate_with(contacts, scratch.spin, state, world, i, contacts.rows[i, 1])
        v2 = rate_with(contacts, scratch.spin, state, world, i, contacts.rows[i, 2])
        limit = cone_mu(contacts, i) * p_n
        t1, t2 = friction_step(k, p[1], p[2], v1, v2, limit, contacts.sliding[i])
        d1, d2 = t1 - p[1], t2 - p[2]
        _apply_rows(linkage, bodies, state, world, contacts, i, 0.0, d1, d2, work, joined)
        p[0], p[1], p[2] = p_n, t1, t2
        worst = max(worst, abs(d_n) * k[0, 0], abs(d1) * k[1, 1], abs(d2) * k[2, 2])
    return worst


@kernel
def _slip(state, world, contacts, i, spin):
    """|v_t| (m/s): the speed of the tangential slip at contact i (``spin``: ``Scratch.spin``)."""
    v1 = rate_with(contacts, spin, state, world, i, contacts.rows[i, 1])
    v2 = rate_with(contacts, spin, state, world, i, contacts.rows[i, 2])
    return math.sqrt(v1 * v1 + v2 * v2)


@kernel(inline=True)
def update_sliding(bodies, state, world, contacts, scratch, lo, hi):
    """Per point, static or kinetic friction: after the sweeps have converged, a sticking point whose friction
    is at the static limit (|P_t| = mu_s P_n) and still slips (faster than SLIP) cannot be held by static
    friction and slides from now on. (A point at the limit that does not slip is held: among coplanar points
    the split of the friction is not unique, and the sweeps' split may saturate one point of a body that
    sticks.) Returns True if any point changed, i.e. the sweeps must go on; the sliding points only grow within
    a solve, so the decisions cannot cycle. The contacts: ``scratch.island_members[lo:hi]``."""
    changed = False
    for n in range(lo, hi):
        i = scratch.island_members[n]
        p = contacts.impulse[i]
        if (not contacts.sliding[i] and at_limit(p, contacts.static_friction[i])
                and _slip(state, world, contacts, i, scratch.spin) > SLIP):
            contacts.sliding[i] = True
            changed = True
    return changed


@kernel(inline=True)
def finish_solve(bodies, state, world, h, contacts, scratch):
    """Reaction forces after the solve: F = (opened + sum_k P_k d_k) / h on body b (world vector, N), the mean
    over the step, for touching contacts that touched in the previous step too (``Scratch.persistent``), did not
    just impact and touch no body that another contact impacted; 0 otherwise (what the next warm start applies). An
    impact's impulse is no force to carry on, and the other contacts of its bodies may hold part of it: an impulse
    loop between the impact and a sticking contact, two friction cones at their limit with the body at rest, whose
    sticking half alone would kick the body in the next opening kick. A contact that forms at rest carries its force
    from its second step on: boxes of touching stacks whose contacts formed, pushed and opened again from step to
    step were kicked apart by the warm starts of the forces they had just carried, and chattered for ever (the bin of
    36 boxes, seed 1, at 2 ms: 8 boxes still moving after 3 s). A sliding point whose slip has stopped (below SLIP)
    sticks again in the next step."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    base = world * capacity
    end = base + min(contacts.count[world], capacity)
    count_at_bodies(contacts, base, end, scratch.body_contacts)
    for i in range(base, end):
        if contacts.sliding[i] and _slip(state, world, contacts, i, scratch.spin) <= SLIP:
            contacts.sliding[i] = False
        carried = (contacts.active[i] and not contacts.impact[i] and scratch.persistent[i - base]
                   and not beside(contacts, scratch.body_contacts, i, IMPACTS))
        for j in range(3):
            contacts.force[i, j] = (_closing(contacts, i, j, contacts.opened[i, j]) if carried else 0.0) / h


@kernel
def _converge(linkage, bodies, state, world, contacts, scratch, work, joined, lo, hi):
    """Sweeps over the island ``scratch.island_members[lo:hi]`` until none changes a contact velocity by more than
    VELOCITY_TOLERANCE and ``update_sliding`` finds no new sliding point. With constraint rows each sweep is one
    ``contact_sweep`` and one ``constraints.projection_sweep`` (block Gauss-Seidel over the contacts and the rows'
    blocks, on the rows' gradients, couplings and impulses that the velocity projection left in ``work``), and the
    rows must meet ``linkage.solver.velocity_tolerance`` too (or their round-off, ``constraints.projection_sweep``'s
    ``at_round_off``, once the contacts have converged): contacts and constraints are one velocity-level solve.
    Returns the sweeps used, or -1. Nearly dependent contacts (a thin card squeezed between two pads on joints) gain
    little per sweep near the solution: after VELOCITY_SLOW_SWEEPS sweeps, a sweep that changes no velocity by more than
    SLOW_VELOCITY counts as converged. A set still unconverged after DENSE_AFTER sweeps is solved in contact space
    (``_dense``); when that ends at a direct solution and the rows meet their tolerance, the solve is done (the
    sweeps on the bodies would not confirm a solution found by Newton's method: ``dense._solve_directly``; in a part
    of h / 2**CONTACT_SUBDIVISION or shorter the rows may take one correction first, ``_rows_met``). Where the rows
    miss it, their sweep corrects them and the sweeps go on; those still unconverged DENSE_RETRY_AFTER sweeps later
    are solved directly again, up to DENSE_RETRIES times."""
    rows, solver = linkage.rows, linkage.solver
    constrained = rows.kind.size > 0
    dense_at, retries = DENSE_AFTER, 0
    for sweep in range(MAX_SWEEPS):
        if sweep == dense_at or (sweep == 0 and scratch.dense_ready[0]):  # (ready: an earlier iterate's)
            solved = _dense(linkage, bodies, state, world, contacts, scratch, work, joined, lo, hi)
            if solved and scratch.dense_direct[0]:
                if not constrained or _rows_met(rows, bodies, solver, state, world, work, scratch.inexact[0]):
                    return sweep + 1
                if sweep >= DENSE_AFTER and retries < DENSE_RETRIES:  # (a ready start's call: DENSE_AFTER's follows)
                    retries += 1
                    dense_at = sweep + DENSE_RETRY_AFTER
        worst = contact_sweep(linkage, bodies, state, world, contacts, scratch, work, joined, lo, hi)
        rows_worst = projection_sweep(rows, bodies, state, world, work) if constrained else 0.0
        settled = worst <= VELOCITY_TOLERANCE or (sweep >= VELOCITY_SLOW_SWEEPS and worst <= SLOW_VELOCITY)
        if (settled and (rows_worst <= solver.velocity_tolerance or work.at_round_off[0])
                and not update_sliding(bodies, state, world, contacts, scratch, lo, hi)):
            return sweep + 1
    return -1


@kernel(inline=True)
def _rows_met(rows, bodies, solver, state, world, work, short_part):
    """Whether the constraint rows meet ``solver.velocity_tolerance`` after a direct solution of the contacts: at once
    or within their round-off (``constraints.projection_sweep``'s ``at_round_off``), or, in a part of
    h / 2**CONTACT_SUBDIVISION or shorter (``short_part``), after the one correction of a projection sweep that
    found them off by at most INEXACT_VELOCITY (an inexact contact solution, ``dense.sweep_contact_space``, left them
    1.2e-13 m/s off against a tolerance of 1e-13 in the Gripper, and the sweeps that follow a direct solution drift
    away). A larger correction moves the contacts off their solution, which the sweeps then go on from (the contact
    space keeps only the rows of A, ``joined.take_acting``: a one-sided row that its solution drives past its bound
    is put back by the rows' sweep. Accepted after that correction, two legs held at their hinges' limits on a floor
    were left approaching it at 8 mm/s, and the body walked at 3 cm/s at dt = 10 ms)."""
    worst = projection_sweep(rows, bodies, state, world, work)
    return (worst <= solver.velocity_tolerance or work.at_round_off[0]
            or (short_part and worst <= INEXACT_VELOCITY
                and projection_sweep(rows, bodies, state, world, work) <= solver.velocity_tolerance))


@kernel(inline=True)
def _dense(linkage, bodies, state, world, contacts, scratch, work, joined, lo, hi):
    """A set still unconverged after DENSE_AFTER sweeps goes on in contact space (``contact.dense``), and the
    impulses' change found there is applied to the bodies (and the equality rows' shares). Returns True if the
    contact-space solve converged."""
    result = solve_dense(linkage, bodies, state, world, contacts, scratch, work, joined, lo, hi)
    m = abs(result)
    start = scratch.dense_start
    for c in range(m):
        i = scratch.dense_index[c]
        _apply_rows(linkage, bodies, state, world, contacts, i, contacts.impulse[i, 0] - start[3 * c],
                    contacts.impulse[i, 1] - start[3 * c + 1], contacts.impulse[i, 2] - start[3 * c + 2], work,
                    joined)
    return result > 0


# the step's calls pass again=False; that copy, pruned of the check, is ~10 % faster on contact scenes
@kernel(literal_arguments=True)
def solve_contacts(linkage, bodies, state, world, h, contacts, scratch, work, joined, again):
    """The closing velocity solve of the contacts, together with the constraint rows of ``linkage`` (whose
    velocity projection has run: ``work`` holds its gradients and impulses, which the solve goes on
    accumulating): ``begin_solve``, then island by island (``contact.islands``) sweeps to convergence
    (``_converge``), if impacts rebound ``start_rebound``, sweeps again and ``end_rebound``; then ``finish_solve``.
    Returns the sweeps used (summed over the islands; 0 without touching contacts), or -1.
    ``again``: a later iterate of the implicit closing kick, at the same poses (``begin_solve``); honoured only
    when no contact is an impact (whose staged impulses are no warm start).

    Impacts with a rebound go in three stages (Poisson's form of the Newton targets, which cannot add energy
    when several points hit at once, where Newton's simultaneous targets can): compression, every impact
    stopped (target 0) with friction, impulses P_c; restitution, each impact's compression impulse (normal
    and friction) scaled by r = rebound / u_1 added again (a single point then leaves at exactly its Newton
    target e u* + a_n tau; the points of one geom pair share one r, ``_pair_ratio``); a final inelastic solve from
    zero impulses that only removes what the rebounds would drive into other contacts. One r per pair: a face that
    lands flat, its points a hair apart, bounces off flat, its spin before the impact reversed and scaled by r.
    Each point's own r differs with its impact time (by a_n delta tau / u_1), and on a light turning mode (a slider
    on its pin: J / a^2 = 1e-3 kg against 0.1 kg of the mechanism) that difference spins the body: a tilt would grow
    at every landing instead of shrinking by r. Energy: with u the velocity change of P_c, complementarity and friction
    opposing slip give <v_c, u>_M = J v_c . P_c <= 0, so KE(v_before) = KE(v_c - u) >= KE(v_c) + KE(u) while
    KE(v_c + r u) <= KE(v_c) + r^2 KE(u), r <= e <= 1 (exact for one point or a common r)."""
    islands = find_islands(linkage.rows, world, contacts, scratch, False)
    begin_solve(linkage, bodies, state, world, contacts, scratch, work, joined, again and not _impacts(world, contacts))
    sweeps = 0
    for island in range(islands):
        lo, hi = scratch.island_start[island], scratch.island_start[island + 1]
        if islands > 1:  # D holds one island's matrix at a time (contact.dense)
            scratch.dense_ready[0] = False
        used = _converge(linkage, bodies, state, world, contacts, scratch, work, joined, lo, hi)
        if used >= 0 and start_rebound(linkage, bodies, state, world, contacts, scratch, work, joined, lo, hi):
            last = _converge(linkage, bodies, state, world, contacts, scratch, work, joined, lo, hi)
            end_rebound(contacts, scratch, lo, hi)
            used = used + last if last >= 0 else -1
        if used < 0:
            sweeps = -1
            break
        sweeps += used
    finish_solve(bodies, state, world, h, contacts, scratch)
    return sweeps


@kernel(inline=True)
def _impacts(world, contacts):
    """Any touching contact of world ``world`` is an impact."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    for i in range(world * capacity, world * capacity + min(contacts.count[world], capacity)):
        if contacts.active[i] and contacts.impact[i]:
            return True
    return False


@kernel
def _rebounds(contacts, i):
    """Contact i is an impact that bounces off (rebound target > 0 on a positive approach)."""
    return contacts.active[i] and contacts.impact[i] and contacts.rebound[i] > 0.0 and contacts.approach[i] > 0.0


@kernel
def _pair_ratio(contacts, base, end, i):
    """The restitution ratio r of contact i's geom pair: its bouncing impacts' rebound targets over their approach
    speeds, summed (for one point its own rebound / u_1)."""
    rebound, approach = 0.0, 0.0
    for j in range(base, end):
        if _rebounds(contacts, j) and contacts.geom1[j] == contacts.geom1[i] and contacts.geom2[j] == contacts.geom2[i]:
            rebound += contacts.rebound[j]
            approach += contacts.approach[j]
    return rebound / approach


@kernel
def start_rebound(linkage, bodies, state, world, contacts, scratch, work, joined, lo, hi):
    """After the compression solve of the island ``scratch.island_members[lo:hi]`` has converged: keep its
    impulses in ``stage``, add each impact's rebound impulse (its pair's r times its compression impulse, see
    ``solve_contacts``) to the bodies and to ``stage``, and restart the accumulated impulses from zero for the
    final inelastic solve. Returns False (changing nothing but ``stage``) when no impact rebounds: the island's
    solve is then complete."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    base = world * capacity
    count = min(contacts.count[world], capacity)
    bounce = False
    for n in range(lo, hi):
        i = scratch.island_members[n]
        p = contacts.impulse[i]
        for k in range(3):
            contacts.stage[i, k] = p[k]
        if _rebounds(contacts, i) and p[0] > 0.0:
            ratio = _pair_ratio(contacts, base, base + count, i)
            _apply_rows(linkage, bodies, state, world, contacts, i, ratio * p[0], ratio * p[1], ratio * p[2], work,
                        joined)
            for k in range(3):
                contacts.stage[i, k] += ratio * p[k]
            bounce = True
    if bounce:
        for n in range(lo, hi):
            for k in range(3):
                contacts.impulse[scratch.island_members[n], k] = 0.0
    return bounce


@kernel
def end_rebound(contacts, scratch, lo, hi):
    """After the final inelastic solve of the island ``scratch.island_members[lo:hi]``: each contact's impulse is
    the sum of the three stages."""
    for n in range(lo, hi):
        i = scratch.island_members[n]
        for k in range(3):
            contacts.impulse[i, k] += contacts.stage[i, k]


@kernel
def _rest_reactions(linkage, bodies, env, state, world, h, wrench, contacts, scratch, work, joined, held, every):
    """The reaction forces that hold the touching contacts (``every``; else those of the components that
    ``settle_contacts`` marked EVENT alone: the others' forces are kept and their islands left out of the trial)
    against the next opening half-kick: F = 2 P / h from a trial solve of v + h/2 (g + F_s/m), L + h/2 T_s (F_s,
    T_s: the smooth forces in ``wrench`` (B, 6): servos, fluid) with every target at rest (friction as decided),
    together with the constraint rows (projected from zero impulses at the current poses) and the dampers as that
    half-step applies them (their trapezoidal impulse from the current rates, ``constraints.damper_compliance``);
    velocities, momenta and the rows' velocity impulses (kept in ``held`` (R,)) restored afterwards. Returns the
    trial's sweeps, or -1."""
    saved = scratch.displacement
    rows = linkage.rows
    capacity = contacts.prev_geom1.size // contacts.count.size
    base = world * capacity
    count = min(contacts.count[world], capacity)
    for c in range(count):
        i = base + c
        for j in range(3):
            scratch.kept_force[c, j] = contacts.force[i, j]
        scratch.rest_part[c] = SETTLE
        if not every and not _settles(scratch, contacts, i):
            scratch.rest_part[c] = ASIDE if contacts.active[i] else KEEP
            contacts.active[i] = False
    if rows.kind.size > 0:
        start_damper_rates(rows, bodies, state, world, work, False)
    _keep_motion(state, world, saved, work.impulse_velocity, held)
    for b in range(saved.shape[0]):
        for k in range(3):
            state.vel[world, b, k] += 0.5 * h * (env.gravity[k] + wrench[b, k] * bodies.inv_mass[b])
            state.momentum[world, b, k] += 0.5 * h * wrench[b, 3 + k]
    for r in range(rows.kind.size):
        work.impulse_velocity[r] = 0.0
    if rows.kind.size > 0:
        begin_projection(rows, bodies, linkage.solver, state, world, 0.5 * h, work)
    sweeps = solve_contacts(linkage, bodies, state, world, h, contacts, scratch, work, joined, False)
    for i in range(base, base + count):
        part = scratch.rest_part[i - base]
        for j in range(3):
            total = _closing(contacts, i, j, 0.0) if contacts.active[i] else 0.0
            contacts.force[i, j] = 2.0 * total / h if part == SETTLE else scratch.kept_force[i - base, j]
        contacts.active[i] = contacts.active[i] or part == ASIDE
    _restore_motion(state, world, saved, work.impulse_velocity, held)
    return sweeps


@kernel(inline=True)
def _keep_motion(state, world, saved, impulse, held):
    """Keep each body's velocity and momentum in ``saved`` (B, 6) and the rows' impulses ``impulse`` (R,) in ``held``
    (R,), for ``_restore_motion`` after a trial."""
    for b in range(saved.shape[0]):
        for k in range(3):
            saved[b, k] = state.vel[world, b, k]
            saved[b, 3 + k] = state.momentum[world, b, k]
    copy_into(impulse, held)


@kernel(inline=True)
def _restore_motion(state, world, saved, impulse, held):
    """Put back what ``_keep_motion`` kept."""
    for b in range(saved.shape[0]):
        for k in range(3):
            state.vel[world, b, k] = saved[b, k]
            state.momentum[world, b, k] = saved[b, 3 + k]
    copy_into(held, impulse)


@kernel
def _slow(state, world, body, limit):
    """|v| of a body's centre of mass at most ``limit`` (m/s; static geometry always is)."""
    if body < 0:
        return True
    v = state.vel[world, body]
    return v[0] * v[0] + v[1] * v[1] + v[2] * v[2] <= limit * limit


@kernel(inline=True)
def _moving(state, world, contacts, i, limit):
    """A body of contact i moves faster than ``limit`` (m/s, ``_slow``): its component keeps its mean forces
    (``settle_contacts``' MOVING)."""
    return not (_slow(state, world, contacts.body_a[i], limit) and _slow(state, world, contacts.body_b[i], limit))


@kernel
def _pushed(force):
    """A contact force (N, world vector) that the next opening kick would apply."""
    return force[0] != 0.0 or force[1] != 0.0 or force[2] != 0.0


@kernel(inline=True)
def _closing(contacts, i, j, start):
    """``start`` plus component j of contact i's closing impulse: its rows' accumulated impulses as a world vector
    (N s), added to ``start`` row by row."""
    total = start
    for k in range(3):
        total += contacts.impulse[i, k] * contacts.rows[i, k, LIN_B + j]
    return total


@kernel(inline=True)
def _load(contacts, i):
    """The largest squared component of contact i's closing and opening impulses (N^2 s^2)."""
    load = 0.0
    for j in range(3):
        load = max(load, _closing(contacts, i, j, 0.0) ** 2, contacts.opened[i, j] ** 2)
    return load


@kernel(inline=True)
def _unbalanced(contacts, i, load):
    """Contact i's closing impulse and the impulse its opening kick applied (``opened``) differ by more than
    UNBALANCED of the largest impulse of its component's touching contacts, ``load`` its square
    (``settle_contacts``)."""
    change = 0.0
    for j in range(3):
        change += (_closing(contacts, i, j, 0.0) - contacts.opened[i, j]) ** 2
    return change > UNBALANCED * UNBALANCED * load


@kernel(inline=True)
def _change_at(spin, state, world, saved, body, grad, column):
    """The change of one body's contribution to a row's rate G v (m/s) since its velocity and momentum were
    ``saved[body]`` (v, L), its world inverse inertia in ``spin`` (B, 6); 0 for static geometry."""
    if body < 0:
        return 0.0
    v, momentum = state.vel[world, body], state.momentum[world, body]
    wx, wy, wz = tensor_spin(spin[body], momentum[0] - saved[body, 3], momentum[1] - saved[body, 4],
                             momentum[2] - saved[body, 5])
    return (grad[column] * (v[0] - saved[body, 0]) + grad[column + 1] * (v[1] - saved[body, 1])
            + grad[column + 2] * (v[2] - saved[body, 2]) + grad[column + 3] * wx + grad[column + 4] * wy
            + grad[column + 5] * wz)


@kernel
def _split_only(linkage, bodies, state, world, contacts, scratch, work, joined, held, lo, hi):
    """Whether the touching contacts ``scratch.island_members[lo:hi]`` (a component) changed between the kicks
    only how they share their loads: their impulses' changes, closing less opening, applied to the bodies
    (through the rows as the solve applies them, ``_apply_rows``), change no contact's rate by more than
    VELOCITY_TOLERANCE, what the velocity solve resolves. Then the opening kick held the bodies as the closing solve
    did, and the step's mean forces hold them in the next (a card crushed at eight corners shifts its load between
    them every step while its net wrench stays to round-off; a carriage's contacts change tangentially where its
    slide's rows take it). The velocities, momenta and the rows' impulses are restored (``held`` (R,) keeps the
    rows'): only the answer is kept."""
    saved = scratch.displacement
    _keep_motion(state, world, saved, work.impulse_velocity, held)
    for n in range(lo, hi):
        i = scratch.island_members[n]
        opened, rows, p = contacts.opened[i], contacts.rows[i], contacts.impulse[i]
        _apply_rows(linkage, bodies, state, world, contacts, i, p[0] - along(opened, rows[0]),
                    p[1] - along(opened, rows[1]), p[2] - along(opened, rows[2]), work, joined)
    moved = False
    for n in range(lo, hi):
        i = scratch.island_members[n]
        for k in range(3):
            grad = contacts.rows[i, k]
            change = (_change_at(scratch.spin, state, world, saved, contacts.body_a[i], grad, LIN_A)
                      + _change_at(scratch.spin, state, world, saved, contacts.body_b[i], grad, LIN_B))
            moved = moved or not abs(change) <= VELOCITY_TOLERANCE
    _restore_motion(state, world, saved, work.impulse_velocity, held)
    return not moved


@kernel(inline=True)
def _mark_split_only(linkage, bodies, state, world, contacts, scratch, work, joined, held, islands, limit):
    """Mark SPLIT_ONLY each of the ``islands`` components (``find_islands``' islands of the touching contacts, after
    ``component_load``) that met no impact and has unbalanced contacts (``_unbalanced``), all on bodies slower than
    ``limit`` (m/s), but changed only how its contacts share their loads (``_split_only``). (A component with a
    faster body on an unbalanced contact keeps its mean forces whatever its shares did: ``settle_contacts``.)"""
    for island in range(islands):
        lo, hi = scratch.island_start[island], scratch.island_start[island + 1]
        root = contact_component(scratch, contacts, scratch.island_members[lo])
        unbalanced, moving = False, False
        for n in range(lo, hi):
            i = scratch.island_members[n]
            if contacts.impact[i]:
                unbalanced = False
                break
            if _unbalanced(contacts, i, scratch.component_load[root]):
                unbalanced = True
                moving = moving or _moving(state, world, contacts, i, limit)
        if unbalanced and not moving and _split_only(linkage, bodies, state, world, contacts, scratch, work, joined,
                                                     held, lo, hi):
            scratch.component_marks[root] = SPLIT_ONLY


@kernel(inline=True)
def settle_contacts(geoms, linkage, bodies, env, state, world, h, wrench, contacts, scratch, work, joined, held):
    """After ``solve_contacts``: where the step's mean reaction forces would make a wrong warm start, replace
    them by the resting reactions (``_rest_reactions``, against gravity and the smooth forces in ``wrench``
    (B, 6) at the end of the step). Three events call for it:

    - an impact: its impulse is no force to carry into the next opening kick, but a body that an impact brought
      to rest (e = 0) needs its support there, or it falls h^2 g / 2 and lands again. The impacts that bounce
      off (rebound > 0) leave the set's touching contacts; the others rest from now on.
    - a release: a contact whose predecessor's force the opening kick applied but that no longer touches (or
      left the margin). It held the body for part of the step only, and the other contacts' mean forces make
      up for the rest of its opening impulse: carried into the next step, that share acts without it. (A card
      pinched by two pads and lifted off a table: the table's share came back as a torque of 4e-6 N m that
      turned the card by 4e-7 rad in the next drift, opened one pad's contacts by 16 nm and let the card
      rattle between the pads.)
    - an unbalance: a touching contact whose closing impulse differs from its opening one (by UNBALANCED of
      the largest impulse among its component's touching contacts: a contact that carries round-off beside ones that
      carry the load is no event), so that the opening kick's forces did not hold the bodies against the step's loads (a
      servo target or a thrust changed, or a force shifted between the corners of a face). Carrying their
      mean on would leave the next opening kick out of balance too: the body moves in each drift, and the
      shifted shares rock a box from corner to corner in a two-step cycle. A component whose contacts' changes
      together move no body (``_split_only``: only the shares of a load that the contacts hold together changed)
      has no unbalance.

    Per component of the bodies (``contact.islands``: linked by the touching contacts and the rows, after this
    step's bounces and openings): if every body of its events' contacts is left slower than gravity makes it in a
    step (|v| <= |g| h), every touching contact of the component takes the resting reaction; a body still moving
    (a box pivoting on the edge it landed on) keeps its component's mean forces (an impact's: none), since the
    reaction that would hold it in this pose is no force of its motion; and a component without an event keeps
    them, whatever happens to bodies it does not touch. Returns 0 when there was nothing to settle, else the
    trial's sweeps (or -1).

    First, a near contact (``detect.join_near``) that did not push in the solve leaves the touching set: it carries
    no force, and the next step takes it as new (an impact if it then closes fast)."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    base = world * capacity
    end = base + min(contacts.count[world], capacity)
    limit = math.sqrt(env.gravity[0] ** 2 + env.gravity[1] ** 2 + env.gravity[2] ** 2) * h
    for i in range(base, end):  # the touching set after the step: near contacts that held nothing, bounces
        if contacts.near[i] and not contacts.impulse[i, 0] > 0.0:  # it held nothing: open again
            contacts.active[i] = False
            for k in range(3):
                contacts.force[i, k] = 0.0
        contacts.impact[i] = contacts.active[i] and contacts.impact[i]
        if contacts.impact[i]:
            contacts.active[i] = contacts.rebound[i] <= 0.0
    islands = find_islands(linkage.rows, world, contacts, scratch, False)
    scratch.component_marks[:] = 0
    scratch.component_load[:] = 0.0
    for i in range(base, end):
        if contacts.active[i]:
            root = contact_component(scratch, contacts, i)
            scratch.component_load[root] = max(scratch.component_load[root], _load(contacts, i))
    _mark_split_only(linkage, bodies, state, world, contacts, scratch, work, joined, held, islands, limit)
    for i in range(base, end):
        impact = contacts.impact[i]
        released = not contacts.active[i] and not impact and _pushed(contacts.opened[i])
        root = contact_component(scratch, contacts, i)
        unbalanced = (contacts.active[i] and not impact and not scratch.component_marks[root] & SPLIT_ONLY
                      and _unbalanced(contacts, i, scratch.component_load[root]))
        contacts.impact[i] = False
        if impact or released or unbalanced:
            a, b = contacts.body_a[i], contacts.body_b[i]
            mark = EVENT
            if (released or contacts.active[i]) and _moving(state, world, contacts, i, limit):
                mark |= MOVING  # (a bounce leaves its bodies free)
            _mark(scratch, a, mark)
            _mark(scratch, b, mark)
    for j in range(base, base + contacts.prev_count[world]):  # predecessors no contact matched (find_contacts)
        if contacts.prev_geom1[j] >= 0 and _pushed(contacts.prev_force[j]):
            _mark(scratch, geoms.body[contacts.prev_geom1[j]], EVENT)
            _mark(scratch, geoms.body[contacts.prev_geom2[j]], EVENT)
    for i in range(base, end):
        if contacts.active[i] and _settles(scratch, contacts, i):
            return _rest_reactions(linkage, bodies, env, state, world, h, wrench, contacts, scratch, work, joined,
                                   held, False)
    return 0


@kernel(inline=True)
def _settles(scratch, contacts, i):
    """Contact i's component met an event and no body of its events moves (``settle_contacts``' marks): it takes
    the resting reactions."""
    return scratch.component_marks[contact_component(scratch, contacts, i)] & (EVENT | MOVING) == EVENT


@kernel
def _mark(scratch, body, mark):
    """Add ``mark`` (EVENT, MOVING) to the component of ``body`` (none for static geometry)."""
    root = component(scratch, body)
    if root >= 0:
        scratch.component_marks[root] |= mark


@kernel
def prime_contacts(geoms, linkage, bodies, env, state, world, h, wrench, contacts, scratch, work, joined, held,
                   margin):
    """At a reset: the contacts of the initial poses, all taken as resting, with their resting reactions
    (``_rest_reactions`` against gravity and the smooth forces ``wrench`` (B, 6) of the initial state,
    constraint rows included), so that a body placed at rest on a support or a slope, or held by servos,
    stays there from the first step. ``work``: a constraints.Workspace (its start state is scratch here);
    ``joined`` (contact.Joined) and ``held`` (R,): scratch. Returns the trial's sweeps, or -1."""
    contacts.count[world] = 0
    if find_contacts(geoms, bodies, env, state, world, 0.0, h, work.com0, work.quat0, work.vel0, work.momentum0,
                     contacts, scratch, margin, False, True) < 0:
        return -1
    return _rest_reactions(linkage, bodies, env, state, world, h, wrench, contacts, scratch, work, joined, held, True)
