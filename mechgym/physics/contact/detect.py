"""Contact detection after the drift: broad and narrow phase, continuous collision of fast bodies against static
geometry and of fast pairs of moving bodies, contact rows, matching with the previous step and impact estimates
(see :mod:`mechgym.physics.contact`).

Continuous collision of two moving bodies. A candidate pair of geoms g1, g2 on two different bodies a, b moves
relative to itself by at most  motion = (|v_a - v_b| + w_a reach_1 + w_b reach_2) h  in the step (``_pair_touch``).
When that exceeds CCD_FRACTION of the smaller extent of the two geoms, the pair is advanced conservatively from
s = 0 on a lower bound of its distance (``_pair_advance``, ``_pair_gap``) to its first touch s; its contacts are
then taken at both bodies' poses at s (``_pose_at``), never from the overlap after the drift, with their gaps
extrapolated to the end of the drift, dist_end = dist_s + (1 - s) h J_n v_half (``_add_contact``), as for a
body swept against static geometry. They are speculative: the narrow phase at s runs with the margin
MARGIN + (1 - s) motion, so every point pair that the rest of the drift can bring into contact is in the set, and
the ones whose extrapolated gap closes act (a plate that hits with one corner while it turns brings its other
corners in within the step; from the first corner alone the position correction would turn it into the other
body). A fast pair that touches already at s = 0 (a plate that hit with a corner in the previous step and keeps
turning in) takes its contacts at s = 0 the same way: after the drift it may have passed through. The AABBs of
fast geoms cover their whole sweep (``_swept_aabbs``), so that the broad phase proposes a pair that has passed
through each other by the end of the drift.

The sweeps follow the drift only. The position correction moves bodies too (a struck body by up to the
penetration of the extrapolated gaps), and that move is not swept; instead the contacts of every body a pass of
the correction moved by more than the margin are found again after it (``recheck_contacts``, a pair new to the set
at the poses before the pass), and the correction runs again while one is below its target: a body at rest,
struck by a fast one, is held in front of the thin geometry it would reach within the same step (a chain of
impacts inside one step), and a fast-turning body's linearised correction is iterated to its true gaps. A
contact so found rests (no rebound); where it would have to be pushed, the step is taken in parts first
(``position.correct_positions``), so that it rests only in a part of h/64 or shorter
(``tolerances.CONTACT_SUBDIVISION``)."""

from __future__ import annotations

import math

from ..collision import (
    BOX,
    PLANE,
    collide,
    geom_aabbs,
    sweep_axis,
    sweep_pairs,
    toi_box,
    toi_plane,
)
from ..collision.broad import can_collide
from ..collision.toi import box_gap, rotation_radius
from ..constraints import ANG_A, ANG_B, LIN_A, LIN_B, row_rate
from ..jit import kernel
from ..rotation import free_rotor_drift
from ..state import world_spin
from ..tolerances import (
    CCD_FRACTION,
    CCD_ITERATIONS,
    KICK_ACCELERATION,
    MARGIN,
    MATCH_RADIUS,
    RESTING_TOUCH,
    TOUCH,
    VELOCITY_TOLERANCE,
)
from ..vectors import cross
from .sets import (
    FILTER_PARENT,
    IMPACTS,
    TOUCHING,
    add_at_bodies,
    along,
    beside,
    body_geoms_at,
    count_at_bodies,
    geom_poses,
    row_change,
)


@kernel(inline=True)
def _tangents(nx, ny, nz):
    """Two unit tangents (t1, t2) with (n, t1, t2) right-handed, a fixed function of n (so a persistent
    contact keeps its tangent directions)."""
    if abs(nx) < 0.57735:
        ax, ay, az = 1.0, 0.0, 0.0
    elif abs(ny) < 0.57735:
        ax, ay, az = 0.0, 1.0, 0.0
    else:
        ax, ay, az = 0.0, 0.0, 1.0
    # t1 = (a x n) / |a x n|, t2 = n x t1
    tx, ty, tz = ay * nz - az * ny, az * nx - ax * nz, ax * ny - ay * nx
    s = 1.0 / math.sqrt(tx * tx + ty * ty + tz * tz)
    tx, ty, tz = tx * s, ty * s, tz * s
    return tx, ty, tz, ny * tz - nz * ty, nz * tx - nx * tz, nx * ty - ny * tx


@kernel
def _write_row(row, d, ra, rb):
    """row = [-d, -(r_a x d), d, r_b x d] for the direction d and levers r_a, r_b (3-tuples)."""
    ta, tb = cross(ra, d), cross(rb, d)
    for i in range(3):
        row[LIN_A + i] = -d[i]
        row[ANG_A + i] = -ta[i]
        row[LIN_B + i] = d[i]
        row[ANG_B + i] = tb[i]


@kernel
def _com_at(state, world, body, com0, sweep, h, i):
    """Component i of body's COM at the pose where a contact was found: after the drift (sweep < 0) or at
    the fraction ``sweep`` of the linear drift from c_n (``com0``)."""
    if sweep < 0.0:
        return state.com[world, body, i]
    return com0[body, i] + sweep * h * state.vel[world, body, i]


@kernel
def _lever(state, world, body, com0, sweep, h, p):
    """p - c of the body at the pose where the contact was found; (0, 0, 0) for static geometry."""
    if body < 0:
        return 0.0, 0.0, 0.0
    return (p[0] - _com_at(state, world, body, com0, sweep, h, 0),
            p[1] - _com_at(state, world, body, com0, sweep, h, 1),
            p[2] - _com_at(state, world, body, com0, sweep, h, 2))


@kernel
def _add_contact(geoms, bodies, state, world, contacts, g1, g2, k, scratch, com0, sweep, h):
    """Append narrow-phase output k of the pair (g1, g2) to world ``world``'s set (``_write_geometry``) with the
    pair's material; returns its flat index, or -1 when the set is full (its count still grows)."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    c = contacts.count[world]
    contacts.count[world] = c + 1
    if c >= capacity:
        return -1
    i = world * capacity + c
    contacts.geom1[i], contacts.geom2[i] = g1, g2
    contacts.body_a[i], contacts.body_b[i] = geoms.body[g1], geoms.body[g2]
    contacts.feature[i] = scratch.out_feature[k]
    _write_geometry(bodies, state, world, contacts, i, k, scratch, com0, sweep, h)
    contacts.restitution[i] = max(geoms.restitution[g1], geoms.restitution[g2])
    # MuJoCo's pair: the larger condim and the larger friction of the two geoms; condim 1 is frictionless
    frictionless = max(geoms.condim[g1], geoms.condim[g2]) == 1
    contacts.static_friction[i] = 0.0 if frictionless else max(geoms.static_friction[g1], geoms.static_friction[g2])
    contacts.friction[i] = 0.0 if frictionless else max(geoms.friction[g1], geoms.friction[g2])
    return i


@kernel
def _write_geometry(bodies, state, world, contacts, i, k, scratch, com0, sweep, h):
    """Contact i's point, rows and gap from narrow-phase output k: rows with the levers at the pose where it was
    found (after the drift, or at the fraction ``sweep`` of it for a swept body or pair: both bodies at s), and the
    gap at the end of the drift: dist_end = dist_s + (1 - s) h J_n v_half for a swept contact (the drift is linear
    in the COM; the rotation term uses the drifted orientation)."""
    a, b = contacts.body_a[i], contacts.body_b[i]
    p = scratch.out_pos[k]
    n = (scratch.out_normal[k, 0], scratch.out_normal[k, 1], scratch.out_normal[k, 2])
    for j in range(3):
        contacts.point[i, j] = p[j]
    ra = _lever(state, world, a, com0, sweep, h, p)
    rb = _lever(state, world, b, com0, sweep, h, p)
    t = _tangents(n[0], n[1], n[2])
    _write_row(contacts.rows[i, 0], n, ra, rb)
    _write_row(contacts.rows[i, 1], (t[0], t[1], t[2]), ra, rb)
    _write_row(contacts.rows[i, 2], (t[3], t[4], t[5]), ra, rb)
    dist = scratch.out_dist[k]
    if sweep >= 0.0:
        dist += (1.0 - sweep) * h * row_rate(contacts, bodies, state, world, i, contacts.rows[i, 0], scratch.normal)
    contacts.dist[i] = dist


@kernel
def _collide_pair(geoms, scratch, g1, g2, margin):
    """Narrow phase of geoms g1 < g2 at the poses in ``scratch``; returns the contact count (-1: unsupported)."""
    return collide(geoms.type[g1], geoms.size[g1], scratch.pos[g1], scratch.mat[g1], geoms.type[g2], geoms.size[g2],
                   scratch.pos[g2], scratch.mat[g2], margin, scratch.out_pos, scratch.out_normal, scratch.out_dist,
                   scratch.out_feature)


@kernel
def _sweepable(geoms, g, s):
    """Static geom s can be swept against by geom g: a static plane or box that g may collide with."""
    return (geoms.body[s] < 0 and (geoms.type[s] == PLANE or geoms.type[s] == BOX)
            and can_collide(g, s, geoms.weld, geoms.parent, geoms.contype, geoms.conaffinity, FILTER_PARENT))


@kernel
def _pose_at(geoms, bodies, state, world, b, s, h, com0, quat0, scratch):
    """Put body b's geoms (scratch.pos/mat) at the fraction s of this step's drift: c_n + s h v_half and the
    free-rotor flow of s h from q_n (the drift of step.drift, cut short)."""
    com = scratch.vectors[0]
    for i in range(3):
        com[i] = com0[b, i] + s * h * state.vel[world, b, i]
        scratch.quat[i] = quat0[b, i]
    scratch.quat[3] = quat0[b, 3]
    free_rotor_drift(scratch.quat, bodies.inv_inertia[b], state.momentum[world, b], s * h)
    body_geoms_at(geoms, b, com, scratch.quat, scratch)


@kernel
def _end_pose(geoms, state, world, b, scratch):
    """Put body b's geoms (scratch.pos/mat) back at the pose after the drift."""
    body_geoms_at(geoms, b, state.com[world, b], state.quat[world, b], scratch)


@kernel(inline=True)
def _spin_bound(bodies, state, world, b):
    """w_max = max(1/I) |L| (rad/s), a bound of body b's angular speed during the drift:
    |w| = |R diag(1/I) R^T L| <= max(1/I) |L|, and L is constant during the drift."""
    spin, inv = state.momentum, bodies.inv_inertia
    return max(inv[b, 0], inv[b, 1], inv[b, 2]) * math.sqrt(
        spin[world, b, 0] ** 2 + spin[world, b, 1] ** 2 + spin[world, b, 2] ** 2)


@kernel(inline=True)
def _turn_reach(geoms, bodies, state, world, g1, g2, h):
    """How far (m) the turns of the bodies of geoms g1, g2 can move their points in a step: h (w_a reach_1 +
    w_b reach_2) (``_spin_bound``, ``_reach``; 0 for static geometry)."""
    total = 0.0
    for g in (g1, g2):
        b = geoms.body[g]
        if b >= 0:
            total += _spin_bound(bodies, state, world, b) * _reach(geoms, g)
    return h * total


@kernel
def _mark_stale(geoms, bodies, state, world, b, duration, margin, scratch):
    """Mark body b in ``scratch.stale`` when its gaps, carried over the last ``duration`` (s) of the drift as
    dist + duration J_n v_half (first order in the turn, ``_add_contact``), may miss the true gaps at the end of the
    drift by more than ``margin`` (m): a turn by phi = w_max duration (``_spin_bound``) moves a point at ``_reach``
    from the centre off its first-order path by about reach phi^2 / 2."""
    phi = _spin_bound(bodies, state, world, b) * duration
    for g in range(geoms.type.size):
        if geoms.body[g] == b and 0.5 * _reach(geoms, g) * phi * phi > margin:
            scratch.stale[b] = True


@kernel(inline=True)
def _reach(geoms, g):
    """|c - x| + rho (m): how far from its body's centre of mass a point of geom g whose position depends on the
    body's orientation can lie (c the geom's centre, rho = toi.rotation_radius), so that a turn of the body by
    the angle phi moves every point of the geom, relative to the COM's motion, by at most phi (|c - x| + rho)."""
    lp = geoms.local_pos
    return math.sqrt(lp[g, 0] ** 2 + lp[g, 1] ** 2 + lp[g, 2] ** 2) + rotation_radius(geoms.type[g], geoms.size[g])


@kernel(inline=True)
def _geom_motion(geoms, bodies, state, world, b, g, h):
    """How far (m) a point of geom g of moving body b can move in the step: h (|v_half| + w_max reach)
    (``_spin_bound``, ``_reach``)."""
    vel = state.vel[world, b]
    return h * (math.sqrt(vel[0] ** 2 + vel[1] ** 2 + vel[2] ** 2)
                + _spin_bound(bodies, state, world, b) * _reach(geoms, g))


@kernel(inline=True)
def _fast(geoms, g1, g2, motion):
    """Geoms g1, g2 move by ``motion`` (m, a bound) relative to each other in the step: more than CCD_FRACTION of
    the smaller extent of the two, so that the state after the drift alone may miss their first touch."""
    return motion > CCD_FRACTION * min(geoms.extent[g1], geoms.extent[g2])


@kernel(inline=True)
def _swept_aabbs(geoms, bodies, state, world, h, scratch):
    """Grow the AABB after the drift (scratch.lo/hi) of every geom that moves by more than CCD_FRACTION of its own
    extent in the step so that it covers the geom's whole sweep. A body point at the offset y from the COM is at
    p(s) = p(1) - (1 - s) h v + (R(s) - R(1)) y at the fraction s of the drift, |(R(s) - R(1)) y| <=
    (1 - s) h w_max |y|, and only the points within ``_reach`` of the COM depend on the orientation (a sphere's
    or capsule's round surface does not), so the geom at s lies within [min(0, -h v_i), max(0, -h v_i)] widened
    by h w_max reach of the geom at the end, along each world axis i. Two geoms too slow for this cannot pass
    through each other in a step (each moves by less than a quarter of its half thickness), and the AABBs after
    the drift find them as before."""
    for g in range(geoms.type.size):
        b = geoms.body[g]
        if b < 0:
            continue
        vel = state.vel[world, b]
        turn = h * _spin_bound(bodies, state, world, b) * _reach(geoms, g)
        if h * math.sqrt(vel[0] ** 2 + vel[1] ** 2 + vel[2] ** 2) + turn <= CCD_FRACTION * geoms.extent[g]:
            continue
        for i in range(3):
            scratch.lo[g, i] += min(0.0, -h * vel[i]) - turn
            scratch.hi[g, i] += max(0.0, -h * vel[i]) + turn


@kernel(inline=True)
def _pair_gap(geoms, scratch, g1, g2, within):
    """A lower bound of the distance (m; < 0: overlap) between geoms g1 < g2 at the poses in scratch, or inf when
    they are ``within`` (m) or more apart. The narrow phase run with the margin ``within`` reports every separated
    pair closer than that with its distance; for the supported pairs other than box-box (a sphere with a sphere,
    capsule, cylinder or box; capsule-capsule; capsule-box; a plane on a body with anything) that is the exact
    distance between the surfaces (closest points), whose minimum over the contacts is taken. Two boxes use
    ``toi.box_gap`` (the separating-axis bound): the heights of their clipped face points are no lower bound.
    An unsupported pair gives inf (its narrow phase fails after the drift)."""
    if geoms.type[g1] == BOX and geoms.type[g2] == BOX:
        gap = box_gap(geoms.size[g1], scratch.pos[g1], scratch.mat[g1], geoms.size[g2], scratch.pos[g2],
                      scratch.mat[g2])
        return gap if gap < within else math.inf
    gap = math.inf
    for k in range(_collide_pair(geoms, scratch, g1, g2, within)):
        gap = min(gap, scratch.out_dist[k])
    return gap


@kernel(inline=True)
def _pair_advance(geoms, bodies, state, world, g1, g2, motion, h, com0, quat0, scratch, margin):
    """Conservative advancement of the pair (g1, g2) of geoms on two moving bodies a, b whose surfaces move by at
    most ``motion`` (m) relative to each other over the step, i.e. by at most (s' - s) motion between the fractions
    s and s' (the drift is linear in s for the COMs and the rotation bound w_max h s for the turns). From the
    poses at s with the distance lower bound gap (``_pair_gap``) they cannot touch before s' = s + gap / motion:
    step there until the gap is within ``margin``. Returns that s (0: touching at the start), -1 when they do not
    touch within the step, or the last s (before the touch) after CCD_ITERATIONS steps. Leaves the bodies' geoms
    at the last pose tried."""
    a, b = geoms.body[g1], geoms.body[g2]
    s = 0.0
    for _ in range(CCD_ITERATIONS):
        _pose_at(geoms, bodies, state, world, a, s, h, com0, quat0, scratch)
        _pose_at(geoms, bodies, state, world, b, s, h, com0, quat0, scratch)
        gap = _pair_gap(geoms, scratch, g1, g2, (1.0 - s) * motion + margin)
        if gap <= margin:
            return s
        s += gap / motion
        if s >= 1.0:
            return -1.0
    return s


@kernel(inline=True)
def _pair_motion(geoms, bodies, state, world, g1, g2, h):
    """How far (m) the surfaces of geoms g1, g2 on two different moving bodies a, b can move relative to each other
    in the step, motion = (|v_a - v_b| + w_a reach_1 + w_b reach_2) h (w the bodies' ``_spin_bound``, reach the
    geoms' ``_reach``); 0 for a pair with static geometry (swept by ``_first_touch`` instead)."""
    a, b = geoms.body[g1], geoms.body[g2]
    if a < 0 or b < 0 or a == b:
        return 0.0
    vel = state.vel
    return h * (math.sqrt((vel[world, a, 0] - vel[world, b, 0]) ** 2 + (vel[world, a, 1] - vel[world, b, 1]) ** 2
                          + (vel[world, a, 2] - vel[world, b, 2]) ** 2)
                + _spin_bound(bodies, state, world, a) * _reach(geoms, g1)
                + _spin_bound(bodies, state, world, b) * _reach(geoms, g2))


@kernel(inline=True)
def _pair_touch(geoms, bodies, state, world, g1, g2, motion, h, com0, quat0, scratch, margin):
    """Fraction s in [0, 1) of this step's drift at which geoms g1 < g2 of two different moving bodies, a pair that
    moves by ``motion`` (``_pair_motion``) in the step, first come within ``margin`` of each other (0: already
    at the start); -1: no touch within the step. The geoms are left at the poses after the drift."""
    s = _pair_advance(geoms, bodies, state, world, g1, g2, motion, h, com0, quat0, scratch, margin)
    _end_pose(geoms, state, world, geoms.body[g1], scratch)
    _end_pose(geoms, state, world, geoms.body[g2], scratch)
    return s


@kernel(inline=True)
def _first_touch(geoms, bodies, state, world, b, h, com0, quat0, scratch, margin):
    """Fraction s in (0, 1] of this step's drift at which body b first comes within ``margin`` of static
    geometry it moves fast against (see the module docstring), or -1: not fast, touching already at the start,
    or no touch within the step. Conservative advancement: from the pose at s, the closed-form lower bound
    tau of the time of impact over the rest of the step (collision.toi_plane / toi_box) moves s to
    s + (1 - s) tau, until the narrow phase finds the hit geom within the margin."""
    vel = state.vel[world, b]
    omega = _spin_bound(bodies, state, world, b)
    fast = False
    for g in range(geoms.type.size):
        if geoms.body[g] != b:
            continue
        motion = _geom_motion(geoms, bodies, state, world, b, g, h)
        for s in range(geoms.type.size):
            if _sweepable(geoms, g, s) and _fast(geoms, g, s, motion):
                fast = True
    if not fast:
        return -1.0
    s = 0.0
    for iteration in range(CCD_ITERATIONS):
        _pose_at(geoms, bodies, state, world, b, s, h, com0, quat0, scratch)
        first, hit = math.inf, -1
        for g in range(geoms.type.size):
            if geoms.body[g] != b:
                continue
            lp = geoms.local_pos[g]
            lever = math.sqrt(lp[0] ** 2 + lp[1] ** 2 + lp[2] ** 2)
            for t in range(geoms.type.size):
                if not _sweepable(geoms, g, t) or (iteration > 0 and scratch.touching[t]):
                    continue
                if geoms.type[t] == PLANE:
                    tau = toi_plane(geoms.type[g], geoms.size[g], scratch.pos[g], scratch.mat[g], vel, omega, lever,
                                    (1.0 - s) * h, scratch.pos[t], scratch.mat[t], scratch.normal)
                else:
                    tau = toi_box(geoms.type[g], geoms.size[g], scratch.pos[g], scratch.mat[g], vel, omega, lever,
                                  (1.0 - s) * h, geoms.size[t], scratch.pos[t], scratch.mat[t], scratch.normal)
                # static geometry already touched at the start (a floor slid on) is the narrow phase's business
                if iteration == 0:
                    scratch.touching[t] = tau == 0.0
                if tau < first and not (iteration == 0 and tau == 0.0):
                    first, hit = tau, t
        if hit < 0 or first == math.inf:
            return -1.0
        s += (1.0 - s) * first
        _pose_at(geoms, bodies, state, world, b, s, h, com0, quat0, scratch)
        for g in range(geoms.type.size):
            if geoms.body[g] == b and _sweepable(geoms, g, hit) and _collide_pair(
                    geoms, scratch, min(g, hit), max(g, hit), margin) > 0:
                return s
        if first == 0.0:
            return -1.0
    return s


@kernel
def _event(contacts, world, first, time, g1, g2, speed):
    """Record an impact (one per geom pair and step: ``first`` is the step's first event index)."""
    stored = min(contacts.event_count[world], contacts.event_time.shape[1])
    for e in range(first, stored):
        if contacts.event_geom[world, e, 0] == g1 and contacts.event_geom[world, e, 1] == g2:
            return
    if stored < contacts.event_time.shape[1]:
        contacts.event_time[world, stored] = time
        contacts.event_geom[world, stored, 0] = g1
        contacts.event_geom[world, stored, 1] = g2
        contacts.event_speed[world, stored] = speed
    contacts.event_count[world] += 1


@kernel(inline=True)
def _chain_previous(contacts, base, count, head, following):
    """Link the previous step's contacts [base, base + count) into one chain per geom2, in ascending index: ``head``
    (G,) each geom's first, ``following`` (C,) each contact's next (at j - base), -1 ending a chain."""
    for g in range(head.size):
        head[g] = -1
    for j in range(base + count - 1, base - 1, -1):
        following[j - base] = head[contacts.prev_geom2[j]]
        head[contacts.prev_geom2[j]] = j


@kernel(inline=True)
def _match(contacts, world, scratch):
    """scratch.match[c] = the predecessor of contact c of world ``world`` in the previous step's set (flat index),
    or -1, one to one: first the contact of the same geom pair with the same feature id, then, for the rest (a
    clipping label can change with round-off where edges of the two geoms coincide, as in a stack of equal
    boxes), the nearest unclaimed one of the pair within MATCH_RADIUS. A predecessor claimed twice would
    carry its force into the next step twice. Claimed predecessors get prev_geom1 = -1. The candidates are those of
    the contact's geom2 (``_chain_previous``), in ascending index."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    base = world * capacity
    count = min(contacts.count[world], capacity)
    head, following = scratch.chain_head, scratch.chain_next
    _chain_previous(contacts, base, contacts.prev_count[world], head, following)
    for c in range(count):
        i = base + c
        scratch.match[c] = -1
        j = head[contacts.geom2[i]]
        while j >= 0:
            if contacts.prev_geom1[j] == contacts.geom1[i] and contacts.prev_feature[j] == contacts.feature[i]:
                scratch.match[c] = j
                contacts.prev_geom1[j] = -1
                break
            j = following[j - base]
    for c in range(count):
        i = base + c
        if scratch.match[c] >= 0:
            continue
        best = MATCH_RADIUS * MATCH_RADIUS
        j = head[contacts.geom2[i]]
        while j >= 0:
            if contacts.prev_geom1[j] == contacts.geom1[i]:
                d = 0.0
                for k in range(3):
                    d += (contacts.prev_point[j, k] - contacts.point[i, k]) ** 2
                if d < best:
                    scratch.match[c], best = j, d
            j = following[j - base]
        if scratch.match[c] >= 0:
            contacts.prev_geom1[scratch.match[c]] = -1


@kernel
def _classify(bodies, env, state, world, t_end, h, vel0, momentum0, contacts, scratch, settled):
    """Match each new contact with the previous step's (``_match``), then set its targets:
    a touching contact that touched before (or any, when ``settled``) rests or slides: gap 0, normal speed 0;
    a new touching contact that approaches faster than |g| h is an impact (module docstring): impact time,
    approach speed, rebound targets and an event. ``opened`` gets the warm-start impulse h/2 F that the
    predecessor applied in the opening kick, and ``sliding`` its friction state."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    base = world * capacity
    first_event = contacts.event_count[world]
    scratch.first_event[0] = first_event
    _match(contacts, world, scratch)
    for i in range(base, base + min(contacts.count[world], capacity)):
        persistent = settled
        contacts.sliding[i] = False
        for k in range(3):
            contacts.opened[i, k] = 0.0
        j = scratch.match[i - base]
        if j >= 0:
            persistent = persistent or contacts.prev_active[j]
            contacts.sliding[i] = contacts.prev_sliding[j]
            for k in range(3):
                contacts.opened[i, k] = 0.5 * h * contacts.prev_force[j, k]
        scratch.persistent[i - base] = persistent
        dist = contacts.dist[i]
        contacts.active[i] = dist <= TOUCH
        contacts.impact[i] = contacts.active[i] and not persistent
        contacts.near[i] = False
        contacts.gap_target[i] = 0.0
        contacts.rebound[i] = 0.0
        if not contacts.impact[i]:
            continue
        a_n, u_end = _free_approach(bodies, env, state, world, h, vel0, momentum0, contacts, i, scratch)
        # gap(tau) = dist + u_end tau + a_n tau^2 / 2 = 0, tau seconds before the end of the step
        disc = u_end * u_end - 2.0 * a_n * dist
        tau = 0.0
        if disc >= 0.0 and u_end + math.sqrt(disc) > 0.0:
            tau = min(h, max(0.0, -2.0 * dist / (u_end + math.sqrt(disc))))
        approach = u_end + a_n * tau
        if approach <= resting_speed(env, h):  # a resting contact forms
            contacts.impact[i] = False
            continue
        e = contacts.restitution[i]
        contacts.approach[i] = u_end
        contacts.rebound[i] = max(0.0, e * approach + a_n * tau)
        contacts.gap_target[i] = max(0.0, e * approach * tau + 0.5 * a_n * tau * tau)
        _event(contacts, world, first_event, t_end - tau, contacts.geom1[i], contacts.geom2[i], approach)
    _join_closing_contacts(bodies, env, state, world, t_end, h, vel0, momentum0, contacts, scratch, first_event)


@kernel
def resting_speed(env, h):
    """The approach speed (m/s) up to which a contact that closes rests rather than impacts: no faster than gravity
    brings a body to rest on a support in one step, |g| h (nor than the velocity solve resolves,
    VELOCITY_TOLERANCE, for bodies that move on together without gravity)."""
    return max(math.sqrt(env.gravity[0] ** 2 + env.gravity[1] ** 2 + env.gravity[2] ** 2) * h, VELOCITY_TOLERANCE)


@kernel(inline=True)
def _start_rate(bodies, state, world, body, row, column, vel0, momentum0):
    """Body ``body``'s part of the rate J v of ``row`` (its block at ``column``) at the start-of-step velocities
    v_n, w = R diag(1/I) R^T L_n with the current orientation R (m/s; 0 for static geometry)."""
    if body < 0:
        return 0.0
    inv = bodies.inv_inertia[body]
    q = state.quat[world, body]
    w = world_spin(q[0], q[1], q[2], q[3], inv[0], inv[1], inv[2], momentum0[body, 0], momentum0[body, 1],
                   momentum0[body, 2])
    total = 0.0
    for k in range(3):
        total += row[column + k] * vel0[body, k] + row[column + 3 + k] * w[k]
    return total


@kernel
def _free_approach(bodies, env, state, world, h, vel0, momentum0, contacts, i, scratch):
    """(a_n, u_end) of contact i: the relative normal acceleration of its gap over the step (m/s^2) and the
    approach speed at the end of the step without contact, u_end = u_half - a_n h/2 (u = -r, r = J_n v; r_half
    at the half-step velocities, r_n at the start velocities v_n, L_n (``vel0``, ``momentum0`` (B, 3)), both at
    the drifted poses). a_n is the one the opening kick gave the gap, a_k = (r_half - r_n) / (h/2): it holds every
    force of the step's start, gravity, the smooth forces, the joints' SHAKE impulses (a slider that its crank
    presses into a wall: hundreds of m/s^2, not g) and the other contacts' warm starts. It is taken where it
    presses the gap shut harder than free flight's a_f = n . (g_b - g_a) (g on moving bodies), by no more than
    KICK_ACCELERATION allows; a_f elsewhere: forces that pull the bodies apart would raise the rebound and the gap
    target above Newton's e u* (with them, a chain's light link hit by its heavy neighbour as it lands on the floor
    at 5 ms made the contact solve fail: tests/physics/test_random_scenes.py, scene 52)."""
    row = contacts.rows[i, 0]
    r_half = row_rate(contacts, bodies, state, world, i, row, scratch.normal)
    r_start = (_start_rate(bodies, state, world, contacts.body_a[i], row, LIN_A, vel0, momentum0)
               + _start_rate(bodies, state, world, contacts.body_b[i], row, LIN_B, vel0, momentum0))
    a_kick = (r_half - r_start) / (0.5 * h)
    a_free = 0.0
    for k in range(3):
        if contacts.body_b[i] >= 0:
            a_free += row[LIN_B + k] * env.gravity[k]
        if contacts.body_a[i] >= 0:
            a_free -= row[LIN_B + k] * env.gravity[k]
    a_n = a_kick if a_free - KICK_ACCELERATION * abs(r_half) / h <= a_kick <= a_free else a_free
    return a_n, -r_half - 0.5 * h * a_n


@kernel(inline=True)
def _join_closing_contacts(bodies, env, state, world, t_end, h, vel0, momentum0, contacts, scratch,
                           first_event):
    """Nearly simultaneous impacts: a contact that does not touch yet (dist > TOUCH) on a body that has an impact
    in this step, and whose gap closes within the next step at its approach speed (dist < u_end h), hits while
    the impact's impulse is still being shared out (a plate landing flat, one corner a hair ahead of the other:
    solved one corner at a time, the first corner's rebound spins the plate and slams the other corner in
    faster, and each bounce pumps the spin). It joins the impact now, with the rebound target e u_end and the
    gap target 0, and its event is recorded at the instant it would touch, t_end + dist / u_end."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    base = world * capacity
    count = min(contacts.count[world], capacity)
    counts = scratch.body_contacts
    count_at_bodies(contacts, base, base + count, counts)
    for i in range(base, base + count):
        if contacts.active[i]:
            continue
        if not beside(contacts, counts, i, IMPACTS):
            continue
        _, u_end = _free_approach(bodies, env, state, world, h, vel0, momentum0, contacts, i, scratch)
        if not contacts.dist[i] < u_end * h:
            continue
        contacts.active[i] = True
        contacts.impact[i] = True
        add_at_bodies(contacts, i, counts)
        contacts.approach[i] = u_end
        contacts.rebound[i] = contacts.restitution[i] * u_end
        _event(contacts, world, first_event, t_end + contacts.dist[i] / u_end, contacts.geom1[i], contacts.geom2[i],
               u_end)


@kernel(inline=True)
def join_near(bodies, env, state, world, h, vel0, momentum0, contacts, scratch):
    """After ``position.correct_positions`` (the contacts that pushed in it in ``scratch.pressed``), open contacts of a
    body with static geometry that join the velocity solve as touching, when they close no faster than a resting contact
    forms (u_end <= |g| h, ``resting_speed``) on a body without an impact in this step: one that the correction pushed
    (lambda > 0: its gap is now 0), and one open by no more than RESTING_TOUCH on a body that touches elsewhere or that
    carried load into the step (it pushed in the opening kick, ``carried_load``). A box resting on some of its corners
    after a step that turned it slightly (a rocking landing, set level by the correction, or an unbalanced warm start)
    has the others open by the second order of the turn (1e-7-4e-7 m for the 5 cm cube at 5 and 20 ms); without them in
    the solve, the closing kick's gravity tips the box about the corners that touch, the next drift digs the others in,
    and the box rocks in a cycle of two or three steps that never comes to rest. A body on sprung legs had both feet
    open by 2e-7 m after a drift that flexed the legs, fell freely for the step and landed 0.5 mm deep, hopping for
    ever. Contacts between two moving bodies (a stack, a card squeezed between servoed pads) are left as they were: the
    cycle was seen on fixed supports, and near contacts between moving bodies are untested. A near contact that ends the
    solve without pushing leaves the touching set (``solve.settle_contacts``)."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    base = world * capacity
    end = base + min(contacts.count[world], capacity)
    limit = resting_speed(env, h)
    counts = scratch.body_contacts  # (the contacts it makes active are near: they change no count)
    count_at_bodies(contacts, base, end, counts)
    for i in range(base, end):
        if contacts.active[i] or (contacts.body_a[i] >= 0 and contacts.body_b[i] >= 0):
            continue
        pressed = scratch.pressed[i - base]
        if not (pressed or (contacts.dist[i] <= RESTING_TOUCH
                            and (scratch.resting_open[i - base] or beside(contacts, counts, i, TOUCHING)))):
            continue
        u_end = _free_approach(bodies, env, state, world, h, vel0, momentum0, contacts, i, scratch)[1]
        if u_end <= limit and not beside(contacts, counts, i, IMPACTS):
            contacts.active[i] = True
            contacts.near[i] = True


@kernel(inline=True)
def _same_feature(contacts, base, end, g1, g2, feature):
    """The flat index in [base, end) of the contact of the pair (g1, g2) with this feature id, or -1."""
    for j in range(base, end):
        if contacts.geom1[j] == g1 and contacts.geom2[j] == g2 and contacts.feature[j] == feature:
            return j
    return -1


@kernel(inline=True)
def _pair_in_set(contacts, base, end, g1, g2):
    """Whether a contact of the pair (g1, g2) is in [base, end)."""
    for j in range(base, end):
        if contacts.geom1[j] == g1 and contacts.geom2[j] == g2:
            return True
    return False


@kernel(inline=True)
def _same_side(contacts, base, end, g1, g2, normal):
    """No contact of the pair (g1, g2) in [base, end) has a normal against ``normal`` (3,): a point that the
    narrow phase finds deep inside a thin geom may be given the normal of its far side."""
    for j in range(base, end):
        if contacts.geom1[j] == g1 and contacts.geom2[j] == g2:
            if along(normal, contacts.rows[j, 0]) < 0.0:
                return False
    return True


@kernel
def _moved_by(geoms, scratch, g):
    """How far (m) the position correction's last pass (``scratch.displacement``: dx m, dtheta rad) may have moved a
    point of geom g: |dx| + |dtheta| ``_reach`` (0 for static geometry)."""
    b = geoms.body[g]
    if b < 0:
        return 0.0
    d = scratch.displacement[b]
    return (math.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
            + math.sqrt(d[3] * d[3] + d[4] * d[4] + d[5] * d[5]) * _reach(geoms, g))


@kernel(inline=True)
def moved_bodies(geoms, scratch, margin):
    """Mark in ``scratch.moved`` (B,) the bodies of which the position correction's last pass may have moved a point
    by more than ``margin`` (m) (``_moved_by``); returns whether there is one. A body moved by less cannot touch
    anything that was not in the set (found within the margin)."""
    scratch.moved[:] = False
    found = False
    for g in range(geoms.type.size):
        if geoms.body[g] >= 0 and _moved_by(geoms, scratch, g) > margin:
            scratch.moved[geoms.body[g]] = True
            found = True
    return found


@kernel
def _pose_before(geoms, scratch, b):
    """Put body b's geoms (scratch.pos/mat) at its pose before the position correction's last pass."""
    if b >= 0:
        body_geoms_at(geoms, b, scratch.com_before[b], scratch.quat_before[b], scratch)


@kernel
def _new_pair(geoms, bodies, state, world, contacts, scratch, g1, g2, margin):
    """The contacts of a pair that has none in the set and that the correction's last pass moved: found at the
    poses before the pass, where the pair was apart by more than the margin (so their normals face the right way,
    however deep the pass then drove one geom into the other), with the margin widened by how far the pass moved
    either geom, and with their gaps carried to the poses after it, dist + J_n (dx, dtheta) (as a swept body's,
    ``_add_contact``). Returns the number added, or -1 if the set is full or the pair unsupported."""
    a, b = geoms.body[g1], geoms.body[g2]
    _pose_before(geoms, scratch, a)
    _pose_before(geoms, scratch, b)
    reach = margin + _moved_by(geoms, scratch, g1) + _moved_by(geoms, scratch, g2)
    found = _collide_pair(geoms, scratch, g1, g2, reach)
    for body in (a, b):
        if body >= 0:
            _end_pose(geoms, state, world, body, scratch)
    for k in range(found):
        # the levers from the centres before the pass: a sweep of length 0 from those poses
        i = _add_contact(geoms, bodies, state, world, contacts, g1, g2, k, scratch, scratch.com_before, 0.0, 0.0)
        if i < 0:
            return -1
        contacts.dist[i] += row_change(scratch.displacement, a, b, contacts.rows[i, 0])
        _rest_new(contacts, scratch, i)
    return found


@kernel
def _rest_new(contacts, scratch, i):
    """A contact that the position correction brought into the set: no impact, no warm start, gap target 0,
    touching when its gap is within TOUCH."""
    scratch.pressed[i % scratch.pressed.size] = False  # its index in the world's set
    scratch.persistent[i % scratch.persistent.size] = False
    contacts.active[i] = contacts.dist[i] <= TOUCH
    contacts.impact[i] = False
    contacts.near[i] = False
    contacts.sliding[i] = False
    contacts.gap_target[i] = 0.0
    contacts.rebound[i] = 0.0
    for j in range(3):
        contacts.opened[i, j] = 0.0


@kernel
def _candidate_pairs(geoms, scratch):
    """The broad phase over the AABBs in ``scratch.lo/hi``: the candidate geom pairs into ``scratch.pairs``; returns
    their number (more than the array holds: it overflowed)."""
    return sweep_pairs(scratch.lo, scratch.hi, scratch.axis[0], scratch.order, geoms.weld, geoms.parent,
                       geoms.contype, geoms.conaffinity, FILTER_PARENT, scratch.pairs)



@kernel(inline=True)
def _candidate(geoms, scratch, p):
    """Candidate pair ``p`` of ``scratch.pairs``: its geoms and their bodies (-1 for static geometry)."""
    g1, g2 = scratch.pairs[p, 0], scratch.pairs[p, 1]
    return g1, g2, geoms.body[g1], geoms.body[g2]

@kernel(inline=True)
def recheck_contacts(geoms, bodies, state, world, contacts, scratch, margin):
    """After a pass of the position correction that moved some bodies by more than ``margin`` (``moved_bodies``),
    with every contact's ``dist`` set to its linearised gap after the pass: the contacts of every pair with a moved
    body, again. For a pair in the set, the narrow phase at the poses after the pass: a contact found again (same
    feature id) takes the new point, rows and gap, and a new one joins (``_rest_new``), each only with a normal on
    the side of the pair's others. A pair not in the set (a body the correction pushed into another: a plate
    driven into a wall by the ball that hit it, which did not approach the wall in the drift) is found at the poses
    before the pass (``_new_pair``). An open contact that now touches joins the touching set as resting; a touching
    one open by more than the margin beyond its target leaves it (``_open``). Returns
    the largest depth of a touching contact below its gap target (m, >= 0), or -1.0 if the broad phase or the
    contact set overflowed."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    base = world * capacity
    end = base + min(contacts.count[world], capacity)
    geom_poses(geoms, state, world, scratch)
    geom_aabbs(geoms.type, geoms.size, scratch.pos, scratch.mat, margin, scratch.lo, scratch.hi)
    for g in range(geoms.type.size):
        grow = _moved_by(geoms, scratch, g)
        for k in range(3):
            scratch.lo[g, k] -= grow
            scratch.hi[g, k] += grow
    pairs = _candidate_pairs(geoms, scratch)
    if pairs > scratch.pairs.shape[0]:
        return -1.0
    for p in range(pairs):
        g1, g2, a, b = _candidate(geoms, scratch, p)
        if not ((a >= 0 and scratch.moved[a]) or (b >= 0 and scratch.moved[b])):
            continue
        if not _pair_in_set(contacts, base, end, g1, g2):
            if _new_pair(geoms, bodies, state, world, contacts, scratch, g1, g2, margin) < 0:
                return -1.0
            continue
        found = _collide_pair(geoms, scratch, g1, g2, margin)
        if found < 0:
            return -1.0
        for k in range(found):
            if not _same_side(contacts, base, end, g1, g2, scratch.out_normal[k]):
                continue
            i = _same_feature(contacts, base, end, g1, g2, scratch.out_feature[k])
            if i >= 0:
                _write_geometry(bodies, state, world, contacts, i, k, scratch, scratch.com_before, -1.0, 0.0)
                contacts.active[i] = contacts.active[i] or contacts.dist[i] <= TOUCH
                continue
            i = _add_contact(geoms, bodies, state, world, contacts, g1, g2, k, scratch, scratch.com_before, -1.0, 0.0)
            if i < 0:
                return -1.0
            _rest_new(contacts, scratch, i)
    end = base + min(contacts.count[world], capacity)
    deepest = 0.0
    for i in range(base, end):
        if contacts.active[i] and contacts.dist[i] > contacts.gap_target[i] + margin:
            _open(contacts, world, base, end, i, scratch.first_event[0])
        if contacts.active[i]:
            deepest = max(deepest, contacts.gap_target[i] - contacts.dist[i])
    return deepest


@kernel
def _open(contacts, world, base, end, i, first_event):
    """Contact i, touching after the drift, is open by more than the margin beyond its gap target after the
    position correction (a ball swept against a wall through a plate that the correction then put between them):
    it leaves the touching set, and its impact event is taken back when no other impact of its pair remains."""
    contacts.active[i] = False
    contacts.impact[i] = False
    contacts.gap_target[i] = 0.0
    contacts.rebound[i] = 0.0
    g1, g2 = contacts.geom1[i], contacts.geom2[i]
    for j in range(base, end):
        if contacts.impact[j] and contacts.geom1[j] == g1 and contacts.geom2[j] == g2:
            return
    stored = min(contacts.event_count[world], contacts.event_time.shape[1])
    for e in range(first_event, stored):
        if contacts.event_geom[world, e, 0] == g1 and contacts.event_geom[world, e, 1] == g2:
            for f in range(e, stored - 1):
                contacts.event_time[world, f] = contacts.event_time[world, f + 1]
                contacts.event_geom[world, f, 0] = contacts.event_geom[world, f + 1, 0]
                contacts.event_geom[world, f, 1] = contacts.event_geom[world, f + 1, 1]
                contacts.event_speed[world, f] = contacts.event_speed[world, f + 1]
            contacts.event_count[world] -= 1
            return


@kernel
def find_contacts(geoms, bodies, env, state, world, t_end, h, com0, quat0, vel0, momentum0, contacts, scratch, margin,
                  sweep, settled):
    """Build world ``world``'s contact set after the drift (the previous set becomes ``prev_*``).

    ``t_end``: time at the end of the step (s); ``com0``/``quat0`` (B, 3)/(B, 4): the start-of-step poses
    (``constraints.Workspace.com0/quat0`` after ``constraints.begin_step``), ``vel0``/``momentum0`` (B, 3) the
    start-of-step velocities and world angular momenta (for the impacts' gap accelerations); ``margin``: MARGIN (m);
    ``sweep``: continuous collision of fast bodies against static geometry and of fast pairs of moving bodies
    (module docstring); ``settled``: every touching contact
    rests (no impacts; used by ``prime_contacts``). Velocities must be the half-step ones (v_half, L_half).
    Returns the number of contacts found (> C: the set overflowed) or -1 if the broad phase overflowed
    ``scratch.pairs`` or met an unsupported pair."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    base = world * capacity
    kept = min(contacts.count[world], capacity)
    for i in range(base, base + kept):
        contacts.prev_geom1[i] = contacts.geom1[i]
        contacts.prev_geom2[i] = contacts.geom2[i]
        contacts.prev_feature[i] = contacts.feature[i]
        contacts.prev_active[i] = contacts.active[i]
        contacts.prev_sliding[i] = contacts.sliding[i]
        for k in range(3):
            contacts.prev_point[i, k] = contacts.point[i, k]
        for k in range(3):
            contacts.prev_force[i, k] = contacts.force[i, k]
    contacts.prev_count[world] = kept
    contacts.count[world] = 0
    scratch.stale[:] = False
    geom_poses(geoms, state, world, scratch)
    for b in range(scratch.sweep_s.size):
        scratch.sweep_s[b] = -1.0
        if sweep:
            scratch.sweep_s[b] = _first_touch(geoms, bodies, state, world, b, h, com0, quat0, scratch, margin)
            _end_pose(geoms, state, world, b, scratch)
    geom_aabbs(geoms.type, geoms.size, scratch.pos, scratch.mat, margin, scratch.lo, scratch.hi)
    if sweep:
        _swept_aabbs(geoms, bodies, state, world, h, scratch)
    pairs = _candidate_pairs(geoms, scratch)
    if pairs > scratch.pairs.shape[0]:
        return -1
    for p in range(pairs):
        g1, g2, a, b = _candidate(geoms, scratch, p)
        # a swept body's contacts with static geometry come from its first-touch pose below
        if (a < 0 and scratch.sweep_s[b] >= 0.0) or (b < 0 and scratch.sweep_s[a] >= 0.0):
            continue
        # a fast pair of moving bodies that touches at s in [0, 1): its contacts at the poses at s, speculative
        # ones included: every point pair that the rest of the drift, (1 - s) motion at most, can bring into contact
        motion = _pair_motion(geoms, bodies, state, world, g1, g2, h) if sweep else 0.0
        s = -1.0
        if _fast(geoms, g1, g2, motion):
            s = _pair_touch(geoms, bodies, state, world, g1, g2, motion, h, com0, quat0, scratch, margin)
        # speculative: the points a turn of either body in the next step can bring into contact (a plate rocking
        # on one corner: its other corner, which the position correction must not dig in and which joins the
        # impact when it closes within the step, see _join_closing_contacts)
        ahead = _turn_reach(geoms, bodies, state, world, g1, g2, h) if sweep else 0.0
        if s >= 0.0:
            ahead = (1.0 - s) * motion
            _pose_at(geoms, bodies, state, world, a, s, h, com0, quat0, scratch)
            _pose_at(geoms, bodies, state, world, b, s, h, com0, quat0, scratch)
            _mark_stale(geoms, bodies, state, world, a, (1.0 - s) * h, margin, scratch)
            _mark_stale(geoms, bodies, state, world, b, (1.0 - s) * h, margin, scratch)
        found = _collide_pair(geoms, scratch, g1, g2, margin + ahead)
        if found < 0:
            return -1
        for k in range(found):
            _add_contact(geoms, bodies, state, world, contacts, g1, g2, k, scratch, com0, s, h)
        if s >= 0.0:
            _end_pose(geoms, state, world, a, scratch)
            _end_pose(geoms, state, world, b, scratch)
    for b in range(scratch.sweep_s.size):
        s = scratch.sweep_s[b]
        if s < 0.0:
            continue
        _mark_stale(geoms, bodies, state, world, b, (1.0 - s) * h, margin, scratch)
        _pose_at(geoms, bodies, state, world, b, s, h, com0, quat0, scratch)
        for g in range(geoms.type.size):
            if geoms.body[g] != b:
                continue
            # speculative, as for a fast pair: every point the rest of the drift can bring into contact
            ahead = (1.0 - s) * _geom_motion(geoms, bodies, state, world, b, g, h)
            for t in range(geoms.type.size):
                if geoms.body[t] >= 0 or not can_collide(g, t, geoms.weld, geoms.parent, geoms.contype,
                                                         geoms.conaffinity, FILTER_PARENT):
                    continue
                g1, g2 = min(g, t), max(g, t)
                found = _collide_pair(geoms, scratch, g1, g2, margin + ahead)
                if found < 0:
                    return -1
                for k in range(found):
                    _add_contact(geoms, bodies, state, world, contacts, g1, g2, k, scratch, com0, s, h)
        _end_pose(geoms, state, world, b, scratch)
    _classify(bodies, env, state, world, t_end, h, vel0, momentum0, contacts, scratch, settled)
    return contacts.count[world]


@kernel
def sweep_setup(geoms, scratch, state, world):
    """Choose the broad phase's sweep axis from the geoms' spread at the poses of ``world`` (call at load)."""
    geom_poses(geoms, state, world, scratch)
    geom_aabbs(geoms.type, geoms.size, scratch.pos, scratch.mat, MARGIN, scratch.lo, scratch.hi)
    scratch.axis[0] = sweep_axis(scratch.lo, scratch.hi)
