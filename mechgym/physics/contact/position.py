"""Position correction of the contacts: penetration removed by moving the poses, velocities left alone (see
:mod:`mechgym.physics.contact`)."""

from __future__ import annotations

import math

from ..constraints import (
    EQUALITY,
    LIN_A,
    LIN_B,
    coupling,
    evaluate_row,
    is_damper,
    take_mobilities,
    take_spins,
)
from ..jit import kernel
from ..linalg import proximal_lcp
from ..state import tensor_spin
from ..tolerances import (
    CORRECTION_TURN,
    LINE_SEARCH_HALVINGS,
    MARGIN,
    MAX_SWEEPS,
    POSITION_DIRECT_EVERY,
    POSITION_PASSES,
    POSITION_SLOW_SWEEPS,
    POSITION_TOLERANCE,
    PUSHING_GAP,
    RESTING_TOUCH,
    SLOW_GAIN,
    SLOW_GAP,
    TOUCH,
)
from ..vectors import mul, normalize
from .detect import moved_bodies, recheck_contacts
from .islands import find_islands, sweeps_before_direct
from .joined import contacts_touch_rows, factor_rows, join_rows, solve_factored, touches_rows
from .sets import IMPACTS, beside, carried_load, count_at_bodies, row_change


@kernel(inline=True)
def _shift(bodies, spin, motion, body, row, column, amount):
    """(dx, dtheta) += W J^T amount for one body: dx += amount J_x / m, dtheta += S amount J_theta, S its world
    inverse inertia in ``spin`` (B, 6)."""
    if body < 0:
        return
    wx, wy, wz = tensor_spin(spin[body], row[column + 3], row[column + 4], row[column + 5])
    for k in range(3):
        motion[body, k] += amount * row[column + k] * bodies.inv_mass[body]
    motion[body, 3] += amount * wx
    motion[body, 4] += amount * wy
    motion[body, 5] += amount * wz


@kernel(inline=True)
def _shift_along(motion, body, mobility, column, amount):
    """motion[body] += amount W G^T for one body's 6 columns of a row's W G^T (``mobility``, 12 numbers)."""
    if body < 0:
        return
    for k in range(6):
        motion[body, k] += amount * mobility[column + k]


@kernel
def add_response(rows, bodies, spin, motion, a, b, row, amount, mobility, joined, response):
    """motion (B, 6) += the joined response (``contact.joined``) to ``amount`` along ``row`` on the bodies (a, b):
    W J^T amount (W at the orientations of ``spin`` (B, 6)), and with equality rows their shares
    -amount A^{-1} y (``response``: A^{-1} y of the row) along their W G^T (``mobility`` (R, 12)). For an impulse
    (N s) the velocity changes (dv, omega); for a position-correction multiplier (kg m) the pose changes
    (dx, dtheta)."""
    _shift(bodies, spin, motion, a, row, LIN_A, amount)
    _shift(bodies, spin, motion, b, row, LIN_B, amount)
    for r in range(rows.kind.size):
        share = -amount * response[r]
        if share != 0.0 and not joined.dependent[r]:
            _shift_along(motion, rows.body_a[r], mobility[r], LIN_A, share)
            _shift_along(motion, rows.body_b[r], mobility[r], LIN_B, share)


@kernel(inline=True)
def correct_positions(geoms, linkage, bodies, state, world, contacts, scratch, work, joined, halvable):
    """Remove penetration without touching velocities or momenta (``_correct``), in passes: after a pass that moved a
    body by more than MARGIN (``detect.moved_bodies``; after the first pass also the bodies whose gaps ``find_contacts``
    carried over a large turn, ``scratch.stale``) every contact's gap is set to its linearised value after the pass and
    the contacts of the moved bodies are found again at their new poses (``detect.recheck_contacts``), and while one of
    them is still below its gap target by more than TOUCH (a body the correction pushed into something that was not in
    the set: a plate driven into a wall by the ball that hit it; a body turned by a large angle, whose linearised
    correction misses the true gap at second order), or one that the passes pushed is above it by more than TOUCH
    (``_pulled``), the correction runs again from there, up to POSITION_PASSES: Newton's method on the true gaps,
    each pass free to take back part of the earlier passes' push (``scratch.pushed``: their multipliers summed, which
    with the pass's own stay >= 0). A pushed contact so ends on its target, where one pass left it open by the second
    order of its move and the next step let the body fall (a body on sprung legs, a foot landing 1 mm deep: lifted 4 um
    off the floor, it hopped from foot to foot for ever). ``scratch.pressed`` marks the contacts that pushed in any
    pass. ``halvable``: the step is longer than h / 2**CONTACT_SUBDIVISION (``step._subdivided_step``); it then fails
    where a pass would turn a body by more than CORRECTION_TURN, and where a contact that a recheck brought into the set
    has to be pushed (a second impact inside the step: the plate that the ball drives into the wall), so that its parts
    meet the impacts one at a time. Returns the sweeps used, -1 if a pass did not converge, the last left a contact
    deeper than MARGIN or (``halvable``) as above, -2 if the contact set or the broad phase overflowed."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    base = world * capacity
    scratch.pressed[:] = False
    scratch.pushed[:] = 0.0
    _mark_pullable(linkage.rows, contacts, scratch, base, base + min(contacts.count[world], capacity))
    total, deepest = 0, 0.0
    for p in range(POSITION_PASSES):
        _copy_poses(state.com[world], state.quat[world], scratch.com_before, scratch.quat_before)
        sweeps = _correct(linkage, bodies, state, world, contacts, scratch, work, joined)
        if sweeps < 0 or (halvable and _largest_turn(scratch.displacement) > CORRECTION_TURN):
            return -1
        total += sweeps
        count = min(contacts.count[world], capacity)
        for c in range(count):
            scratch.pushed[c] += scratch.lam[c]
            scratch.pressed[c] = scratch.pressed[c] or scratch.pushed[c] > 0.0
        moved = moved_bodies(geoms, scratch, MARGIN)
        if p == 0:
            moved = _add_stale(scratch) or moved
        if not moved:
            return total
        for c in range(count):
            i = base + c
            contacts.dist[i] += row_change(scratch.displacement, contacts.body_a[i], contacts.body_b[i],
                                           contacts.rows[i, 0])
        deepest = recheck_contacts(geoms, bodies, state, world, contacts, scratch, MARGIN)
        if deepest < 0.0:
            return -2
        if halvable and _pushes_new(contacts, world, count):
            return -1
        if deepest <= TOUCH and not _any_pulled(contacts, scratch, base, count):
            return total
    return total if deepest <= MARGIN else -1


@kernel(inline=True)
def _mark_pullable(rows, contacts, scratch, base, end):
    """``scratch.pullable``: the contacts in [base, end) of a body that a row acts on with static geometry; of them,
    ``scratch.resting_open``: those open by more than TOUCH and at most RESTING_TOUCH after the drift that pushed in
    the opening kick (``sets.carried_load``), on a body without an impact in this step. The correction of a jointed
    body turns its joints, and leaves a pushed contact open by the second order of the turn, which a later pass takes
    back; a resting foot on a flexing leg drifts open by the second order of the flexing, step after step, until it
    leaves RESTING_TOUCH and the body falls for a step: the correction pulls it shut. Without either a body on sprung
    legs hopped from foot to foot for ever."""
    count_at_bodies(contacts, base, end, scratch.body_contacts)
    for i in range(base, end):
        c = i - base
        scratch.pullable[c] = ((contacts.body_a[i] < 0 or contacts.body_b[i] < 0)
                               and touches_rows(rows, contacts.body_a[i], contacts.body_b[i]))
        scratch.resting_open[c] = (scratch.pullable[c] and TOUCH < contacts.dist[i] <= RESTING_TOUCH
                                   and carried_load(contacts, i)
                                   and not beside(contacts, scratch.body_contacts, i, IMPACTS))


@kernel(inline=True)
def _floor(contacts, scratch, i, c):
    """The lower bound of contact i's (the world's c-th) multiplier in the current pass (kg m): 0, but for a
    ``scratch.pullable`` contact minus what the earlier passes pushed it (``scratch.pushed``), and if it is
    ``scratch.resting_open`` RESTING_TOUCH lower still (over its coupling k = J W J^T, 1/kg)."""
    if not scratch.pullable[c]:
        return 0.0
    floor = -scratch.pushed[c]
    if scratch.resting_open[c]:
        floor -= RESTING_TOUCH / contacts.coupling[i, 0, 0]
    return floor


@kernel(inline=True)
def _pulled(contacts, scratch, i, c):
    """Contact i (the world's c-th) is above its gap target by more than TOUCH where the next pass may pull it back:
    a ``scratch.pullable`` one that earlier passes pushed, or one ``scratch.resting_open``."""
    return (scratch.pullable[c] and (scratch.pushed[c] > 0.0 or scratch.resting_open[c])
            and contacts.dist[i] > contacts.gap_target[i] + TOUCH)


@kernel(inline=True)
def _any_pulled(contacts, scratch, base, count):
    """Whether one of the world's ``count`` contacts is ``_pulled``."""
    for c in range(count):
        if _pulled(contacts, scratch, base + c, c):
            return True
    return False


@kernel(inline=True)
def _add_stale(scratch):
    """Mark the stale bodies (``scratch.stale``: gaps carried over a large turn, ``detect.find_contacts``) as moved,
    so that their contacts are found again after the first pass; returns whether there is one."""
    found = False
    for b in range(scratch.stale.size):
        if scratch.stale[b]:
            scratch.moved[b] = True
            found = True
    return found


@kernel(inline=True)
def _pushes_new(contacts, world, known):
    """A touching contact past the first ``known`` of the world's set (one that a recheck added) is below its gap
    target by more than TOUCH: the correction would have to push it."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    base = world * capacity
    for i in range(base + known, base + min(contacts.count[world], capacity)):
        if contacts.active[i] and contacts.dist[i] < contacts.gap_target[i] - TOUCH:
            return True
    return False


@kernel(inline=True)
def _largest_turn(displacement):
    """The largest |dtheta| (rad) of the bodies' pose changes ``displacement`` (B, 6): dx m, dtheta rad."""
    largest = 0.0
    for b in range(displacement.shape[0]):
        d = displacement[b]
        largest = max(largest, math.sqrt(d[3] * d[3] + d[4] * d[4] + d[5] * d[5]))
    return largest


@kernel(inline=True)
def _correct(linkage, bodies, state, world, contacts, scratch, work, joined):
    """One pass of the position correction: remove penetration without touching velocities or momenta: find
    the pose changes (dx, dtheta) = W J^T lambda that bring every touching contact's linearised gap
    dist + J_n (dx, dtheta)  up to its target (0, or an impact's rebound gap, dropped where the gaps conflict:
    ``_drop_rebound_gaps``; lambda_n >= 0 summed with the earlier passes' ``scratch.pushed``) by
    projected Gauss-Seidel on the normals found after the drift (or at a swept body's first-touch pose), then
    move the centres by dx and turn the frames by dtheta (q <- exp(dtheta) q, world frame); converged when no
    sweep moves a gap by more than POSITION_TOLERANCE, when a direct step (every POSITION_DIRECT_EVERY sweeps,
    SMALL_DIRECT_EVERY on a small island with rows) leaves no gap below its target by more than its tolerance and
    no pushing one above it by more than PUSHING_GAP (``_within``), or, after POSITION_SLOW_SWEEPS, when the gaps
    are within SLOW_GAP of that.
    The contacts within the margin that do not touch take part with the target 0: they carry
    no correction of their own, but no correction may push them into penetration (a plate righted at one
    corner must not dig the other corner in). Returns the sweeps used, or -1 if not converged.

    With constraint rows (``linkage.rows``, which SHAKE has satisfied) a contact moves its bodies by the joined
    response (``contact.joined``): W (J^T - G^T A^{-1} y) lambda, which keeps the equality rows satisfied to
    first order, with the joined coupling k = J W J^T - y^T A^{-1} y; after the move the rows are evaluated
    again and their second-order error removed by Newton steps on the poses alone, dx = W G^T mu with
    A mu = -g (``_restore_rows``). One-sided rows (limits, ropes) are free to move off their bounds; one that the
    pass leaves violated by more than the rows' tolerance is held at its bound as an equality (``joined.held``)
    and the pass runs again from its start poses (``scratch.com_before``, ``scratch.quat_before``), until none is
    left violated. ``work.gradient``, ``work.mobility``, ``scratch.spin`` and ``joined`` are scratch.

    The contacts are corrected island by island (``contact.islands``, every contact of the set, touching or
    not): each island's sweeps and direct steps run to its own convergence (the sweeps returned are their sum),
    and the moves of them all are made at the end."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    base = world * capacity
    count = min(contacts.count[world], capacity)
    needed = False
    for c in range(count):
        i = base + c
        needed = needed or (contacts.active[i] and contacts.dist[i] < contacts.gap_target[i])
        needed = needed or _pulled(contacts, scratch, i, c)
    joined.held[:] = 0.0
    for _ in range(linkage.rows.kind.size + 1):  # (each rerun holds one more row)
        scratch.displacement[:] = 0.0
        scratch.lam[:count] = 0.0
        if not needed:
            return 0
        sweeps = _correct_holding(linkage, bodies, state, world, contacts, scratch, work, joined)
        if sweeps < 0 or not _hold_violated(linkage, joined):
            return sweeps
        _copy_poses(scratch.com_before, scratch.quat_before, state.com[world], state.quat[world])
    return -1


@kernel(inline=True)
def _correct_holding(linkage, bodies, state, world, contacts, scratch, work, joined):
    """``_correct``'s pass with the one-sided rows of ``joined.held`` held at their bounds; leaves the rows'
    values at the final poses in ``joined.value`` where the set moves bodies that rows act on (else zeros).
    ``scratch.displacement`` and ``scratch.lam`` start at zero."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    base = world * capacity
    count = min(contacts.count[world], capacity)
    displacement = scratch.displacement
    rows = linkage.rows
    joined.value[:] = 0.0
    # A set none of whose contacts is on a body that a row acts on moves no such body: A is not needed (every
    # response is the free one, join_rows), and the rows stay as SHAKE left them.
    joined_set = rows.kind.size > 0 and contacts_touch_rows(rows, world, contacts, True)
    take_spins(bodies, state.quat[world], scratch.spin)
    if joined_set:
        _evaluate_rows(rows, state, world, work.gradient, joined.value, joined.held)
        take_mobilities(rows, bodies, scratch.spin, work.gradient, work.mobility)
        factor_rows(rows, work.gradient, work.mobility, joined.rigid, joined, joined.held)
    for c in range(count):
        i = base + c
        row = contacts.rows[i, 0]
        a, b = contacts.body_a[i], contacts.body_b[i]
        contacts.coupling[i, 0, 0] = coupling(bodies, scratch.spin, a, b, row, row)
        if rows.kind.size > 0:
            join_rows(rows, work.mobility, joined, a, b, contacts.rows[i], 1, contacts.coupling[i],
                      joined.response[c])
    sweeps = 0
    for island in range(find_islands(rows, world, contacts, scratch, True)):
        used = _correct_island(linkage, bodies, state, world, contacts, scratch, work, joined,
                               scratch.island_start[island], scratch.island_start[island + 1])
        if used < 0:
            return -1
        sweeps += used
    for body in range(displacement.shape[0]):
        _move(state, world, body, displacement[body])
    if joined_set and not _restore_rows(linkage, bodies, state, world, scratch, work, joined):
        return -1
    return sweeps


@kernel(inline=True)
def _hold_violated(linkage, joined):
    """Mark in ``joined.held`` every one-sided row (not a damper) left violated, sense * g < -tolerance, by a pass
    (its values in ``joined.value``); returns whether there was one."""
    rows = linkage.rows
    found = False
    for r in range(rows.kind.size):
        if (rows.sense[r] != EQUALITY and not is_damper(rows, r) and joined.held[r] == 0.0
                and rows.sense[r] * joined.value[r] < -linkage.solver.tolerance):
            joined.held[r] = 1.0
            found = True
    return found


@kernel(inline=True)
def _copy_poses(com, quat, com_into, quat_into):
    """The bodies' poses into ``com_into`` (B, 3, m) and ``quat_into`` (B, 4) from ``com`` and ``quat``: a pass's
    start kept, and put back for its rerun."""
    for b in range(com.shape[0]):
        for k in range(4):
            if k < 3:
                com_into[b, k] = com[b, k]
            quat_into[b, k] = quat[b, k]


@kernel(inline=True)
def _correct_island(linkage, bodies, state, world, contacts, scratch, work, joined, lo, hi):
    """The sweeps and direct steps of ``_correct`` over the contacts ``scratch.island_members[lo:hi]``, to their
    convergence, into ``scratch.displacement`` and ``scratch.lam``; returns the sweeps used, or -1."""
    base = world * (contacts.prev_geom1.size // contacts.count.size)
    rows, displacement = linkage.rows, scratch.displacement
    every = sweeps_before_direct(rows, hi - lo, POSITION_DIRECT_EVERY)
    for sweep in range(MAX_SWEEPS):
        worst = 0.0
        for n in range(lo, hi):
            i = scratch.island_members[n]
            c = i - base
            k = contacts.coupling[i, 0, 0]
            if not k > 0.0:
                continue
            a, b, row = contacts.body_a[i], contacts.body_b[i], contacts.rows[i, 0]
            gap = contacts.dist[i] + row_change(displacement, a, b, row)
            new = max(_floor(contacts, scratch, i, c), scratch.lam[c] + (contacts.gap_target[i] - gap) / k)
            change = new - scratch.lam[c]
            if change == 0.0:
                continue
            scratch.lam[c] = new
            add_response(rows, bodies, scratch.spin, displacement, a, b, row, change, work.mobility, joined,
                         joined.response[c, 0])
            worst = max(worst, abs(change) * k)
        converged = worst <= POSITION_TOLERANCE or (sweep >= POSITION_SLOW_SWEEPS
                                                    and _within(contacts, world, scratch, SLOW_GAP, lo, hi))
        if not converged and sweep % every == every - 1:
            if sweep == every - 1:
                _build_matrix(linkage, bodies, state, world, contacts, scratch, work, joined, lo, hi)
            tolerance = POSITION_TOLERANCE if sweep < POSITION_SLOW_SWEEPS else SLOW_GAP
            if _direct_step(linkage, bodies, state, world, contacts, scratch, work, joined, lo, hi, tolerance):
                converged = _within(contacts, world, scratch, tolerance, lo, hi)
            else:
                _drop_rebound_gaps(contacts, scratch, lo, hi)
        if converged:
            return sweep + 1
    return -1


@kernel(inline=True)
def _drop_rebound_gaps(contacts, scratch, lo, hi):
    """Set the gap target of every contact of the island ``scratch.island_members[lo:hi]`` to 0: only penetration
    is removed, an impact's rebound is left to the velocities. For a set whose direct step found no multipliers:
    its rebound gaps conflict (a slider jammed across its notch, two corners driven into opposite walls, each
    wall's rebound gap forbidden by the other)."""
    for n in range(lo, hi):
        contacts.gap_target[scratch.island_members[n]] = 0.0


@kernel
def response_matrix(linkage, bodies, state, world, contacts, scratch, work, joined, m, directions):
    """scratch.dense[:dm, :dm] (d = ``directions``: 1, the normals, or 3, normal and tangents) = the change of
    each row's rate (or gap) per unit impulse (or multiplier) along each row, for the m contacts whose flat
    indices are in ``scratch.dense_index``: column by column, the joined response of a unit amount along row s
    into ``scratch.motion``, then J_r . motion for the rows r >= s, mirrored onto row s. D = J W J^T (less the
    joints' share, ``contact.joined``) is symmetric, and so the matrix is, exactly: column s is row s, which its
    users read contiguously. A row the joints block (zero coupling) gets a zero row and column."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    motion, matrix = scratch.motion, scratch.dense
    for cs in range(m):
        j = scratch.dense_index[cs]
        for ks in range(directions):
            s = directions * cs + ks
            blocked = not contacts.coupling[j, ks, ks] > 0.0
            motion[:] = 0.0
            if not blocked:
                add_response(linkage.rows, bodies, scratch.spin, motion, contacts.body_a[j], contacts.body_b[j],
                             contacts.rows[j, ks], 1.0, work.mobility, joined, joined.response[j % capacity, ks])
            for r in range(0 if blocked else s, directions * m):  # (left of the diagonal: mirrored before)
                i = scratch.dense_index[r // directions]
                value = 0.0 if blocked else row_change(motion, contacts.body_a[i], contacts.body_b[i],
                                                       contacts.rows[i, r % directions])
                matrix[r, s] = matrix[s, r] = value


@kernel(inline=True)
def _build_matrix(linkage, bodies, state, world, contacts, scratch, work, joined, lo, hi):
    """scratch.dense[:m, :m] = D, D[c, s] the change of contact c's gap per unit multiplier of contact s, over
    the m contacts of the island ``scratch.island_members[lo:hi]`` (``response_matrix`` on the normals, at the
    poses of the correction). The velocity solve's contact-space matrix shares the array: it is marked stale."""
    for n in range(lo, hi):
        scratch.dense_index[n - lo] = scratch.island_members[n]
    scratch.dense_ready[0] = False
    response_matrix(linkage, bodies, state, world, contacts, scratch, work, joined, hi - lo, 1)


@kernel(inline=True)
def _direct_step(linkage, bodies, state, world, contacts, scratch, work, joined, lo, hi, tolerance):
    """The gaps are linear in the multipliers, gap = dist + D lambda, D symmetric positive semidefinite, so the
    correction is the linear complementarity problem lambda >= 0, gap - target >= 0, lambda (gap - target) = 0
    (lambda: the pass's multipliers and the earlier passes' ``scratch.pushed`` summed, gap = dist + D (lambda -
    pushed)),
    solved here directly (``linalg.proximal_lcp``: D is singular where four coplanar corners of a face push, four
    normals and three motions, and nearly so for a squeezed card) to ``tolerance`` (m), from the sweeps'
    multipliers and, if that fails, from zero (a pad 5 mm into the card's edge: the iterations from the sweeps'
    multipliers ran out, from zero 17 met SLOW_GAP). A set whose targets conflict (a slider driven deep into one
    wall, its rebound target beyond the other wall: no multipliers meet both) has no solution and takes no step
    (``_correct`` then drops the rebound gaps). A pushing contact may end up to PUSHING_GAP open. Returns
    True if a step was taken (``_correct`` then checks it with ``_within``). The contacts: the island
    ``scratch.island_members[lo:hi]``, whose matrix ``_build_matrix`` made. Contacts the joints block (zero
    coupling) take no part."""
    base = world * (contacts.prev_geom1.size // contacts.count.size)
    matrix, system, unknowns = scratch.dense, scratch.system, scratch.unknowns
    target, multiplier = scratch.system_vectors[0], scratch.system_vectors[1]
    n = 0
    for member in range(hi - lo):
        i = scratch.island_members[lo + member]
        if contacts.coupling[i, 0, 0] > 0.0:
            unknowns[n] = member
            multiplier[n] = scratch.lam[i - base] - _floor(contacts, scratch, i, i - base)
            target[n] = contacts.dist[i] - contacts.gap_target[i]
            n += 1
    for f in range(n):
        j = scratch.island_members[lo + unknowns[f]]
        floor = _floor(contacts, scratch, j, j - base)
        for e in range(n):
            system[e, f] = matrix[unknowns[e], unknowns[f]]
            target[e] += system[e, f] * floor
    if n == 0:
        return False
    if proximal_lcp(system, n, target, multiplier, scratch.kinds, scratch.system_vectors[2:], scratch.factor,
                    scratch.pivots, tolerance, PUSHING_GAP) < 0:
        for e in range(n):
            multiplier[e] = 0.0
        if proximal_lcp(system, n, target, multiplier, scratch.kinds, scratch.system_vectors[2:], scratch.factor,
                        scratch.pivots, tolerance, PUSHING_GAP) < 0:
            return False
    for e in range(n):
        i = scratch.island_members[lo + unknowns[e]]
        c = i - base
        lam = multiplier[e] + _floor(contacts, scratch, i, c)
        change = lam - scratch.lam[c]
        if change != 0.0:
            add_response(linkage.rows, bodies, scratch.spin, scratch.displacement, contacts.body_a[i],
                         contacts.body_b[i], contacts.rows[i, 0], change, work.mobility, joined,
                         joined.response[c, 0])
        scratch.lam[c] = lam
    return True


@kernel
def _within(contacts, world, scratch, slack, lo, hi):
    """Every linearised gap of the island ``scratch.island_members[lo:hi]`` within ``slack`` (m) of
    complementarity: no gap below its target by more (no penetration left), and none that pushes (lambda > 0)
    above it by more than PUSHING_GAP."""
    base = world * (contacts.prev_geom1.size // contacts.count.size)
    displacement = scratch.displacement
    for n in range(lo, hi):
        i = scratch.island_members[n]
        c = i - base
        if not contacts.coupling[i, 0, 0] > 0.0:
            continue
        gap = contacts.dist[i] + row_change(displacement, contacts.body_a[i], contacts.body_b[i], contacts.rows[i, 0])
        if gap < contacts.gap_target[i] - slack or (scratch.lam[c] > _floor(contacts, scratch, i, c)
                                                    and gap > contacts.gap_target[i] + PUSHING_GAP):
            return False
    return True


@kernel
def _evaluate_rows(rows, state, world, gradient, value, held):
    """value[r] = g_r and gradient[r] = G_r at the current poses; returns the largest |g| of the equality rows and
    of the one-sided rows whose ``held`` (R,) is nonzero (dampers constrain nothing)."""
    worst = 0.0
    for r in range(rows.kind.size):
        value[r] = evaluate_row(rows, r, state, world, gradient[r])
        if (rows.sense[r] == EQUALITY or held[r] != 0.0) and not is_damper(rows, r):
            worst = max(worst, abs(value[r]))
    return worst


@kernel(inline=True)
def _restore_rows(linkage, bodies, state, world, scratch, work, joined):
    """After the contacts' move: Newton steps on the poses until every equality row, and every one-sided row held at its
    bound (``joined.held``), is back within ``linkage.solver.tolerance``: g and G at the moved poses, mu = -A^{-1} g (A
    as factored before the move: the poses moved by the small correction only, so each step still gains many digits; a
    step that gains less than SLOW_GAIN factors A again at the current poses), dx = W G^T mu (W at the moved poses: the
    world inverse inertias into ``scratch.spin``, W G^T into ``work.mobility``). Returns False if the rows do not settle
    in ``linkage.solver.max_sweeps`` steps."""
    rows = linkage.rows
    step = joined.moved
    previous = math.inf
    for _ in range(linkage.solver.max_sweeps):
        worst = _evaluate_rows(rows, state, world, work.gradient, joined.value, joined.held)
        if worst <= linkage.solver.tolerance:
            return True
        _newton_step(rows, bodies, state, world, scratch, work, joined, worst > SLOW_GAIN * previous)
        previous = worst
        for body in range(step.shape[0]):
            _move(state, world, body, step[body])
    return False


@kernel(inline=True)
def _newton_step(rows, bodies, state, world, scratch, work, joined, factor):
    """Newton's step on the poses for the rows held (the equality rows and those marked in ``joined.held``), their
    values in ``joined.value`` and gradients in ``work.gradient`` at the current poses: dx = W G^T mu, A mu = -g, into
    ``joined.moved`` (B, 6); A = G W G^T factored anew at the current poses where ``factor`` (``factor_rows``), else
    the factor ``joined`` holds. W at the current orientations: the world inverse inertias into ``scratch.spin``,
    W G^T into ``work.mobility``; ``joined.value`` is left holding mu."""
    take_spins(bodies, state.quat[world], scratch.spin)
    take_mobilities(rows, bodies, scratch.spin, work.gradient, work.mobility)
    if factor:
        factor_rows(rows, work.gradient, work.mobility, joined.rigid, joined, joined.held)
    for r in range(rows.kind.size):
        joined.value[r] = -joined.value[r]
    solve_factored(joined, joined.value)
    step = joined.moved
    step[:] = 0.0
    for r in range(rows.kind.size):
        if joined.value[r] != 0.0:
            _shift_along(step, rows.body_a[r], work.mobility[r], LIN_A, joined.value[r])
            _shift_along(step, rows.body_b[r], work.mobility[r], LIN_B, joined.value[r])


@kernel
def place_on_rows(linkage, bodies, state, world, scratch, work, joined):
    """Move world ``world``'s poses onto its rows (a reset's start that an equality or a rope does not hold) by damped
    Newton steps (``_newton_move``): the equality rows and the one-sided rows that are violated, held at their bounds
    (``_hold_violated``; one that a move leaves violated is held too, and the moves go on). Returns False if the rows
    do not settle in ``linkage.solver.max_sweeps`` moves (the poses are then wherever the last move left them)."""
    rows = linkage.rows
    joined.held[:] = 0.0
    for _ in range(linkage.solver.max_sweeps):
        worst = _evaluate_rows(rows, state, world, work.gradient, joined.value, joined.held)
        if _hold_violated(linkage, joined):
            worst = _evaluate_rows(rows, state, world, work.gradient, joined.value, joined.held)
        if worst <= linkage.solver.tolerance:
            return True
        _newton_move(linkage, bodies, state, world, scratch, work, joined)
    return False


@kernel
def _newton_move(linkage, bodies, state, world, scratch, work, joined):
    """One damped Newton step on the poses for the rows that ``place_on_rows`` holds (``_newton_step``, A factored at
    the current poses; each move the least in the kinetic-energy metric that meets the linearised rows, so it keeps the
    momentum: W times forces the rows exert on each other), taken whole where that lessens sum g^2, else halved until
    it does (a closed loop started far off its closure: whole steps wander to another branch of it, or do not
    settle)."""
    rows = linkage.rows
    start = _squared_error(rows, joined)
    _newton_step(rows, bodies, state, world, scratch, work, joined, True)
    step = joined.moved
    _copy_poses(state.com[world], state.quat[world], work.com0, work.quat0)
    for _ in range(LINE_SEARCH_HALVINGS):
        for body in range(step.shape[0]):
            _move(state, world, body, step[body])
        _evaluate_rows(rows, state, world, work.gradient, joined.value, joined.held)
        if _squared_error(rows, joined) < start:
            return
        _copy_poses(work.com0, work.quat0, state.com[world], state.quat[world])
        for body in range(step.shape[0]):
            for k in range(6):
                step[body, k] *= 0.5


@kernel
def _squared_error(rows, joined):
    """sum g^2 over the equality rows and the held one-sided rows (not the dampers), g from ``joined.value``."""
    total = 0.0
    for r in range(rows.kind.size):
        if (rows.sense[r] == EQUALITY or joined.held[r] != 0.0) and not is_damper(rows, r):
            total += joined.value[r] * joined.value[r]
    return total


@kernel
def _move(state, world, body, d):
    """c += d[:3]; q <- exp(d[3:]) q, the rotation by the angle |d[3:]| about d[3:] in the world frame."""
    for k in range(3):
        state.com[world, body, k] += d[k]
    angle = math.sqrt(d[3] * d[3] + d[4] * d[4] + d[5] * d[5])
    if angle == 0.0:
        return
    s = math.sin(0.5 * angle) / angle
    q = state.quat[world, body]
    q[0], q[1], q[2], q[3] = mul(math.cos(0.5 * angle), s * d[3], s * d[4], s * d[5], q[0], q[1], q[2], q[3])
    normalize(q)
