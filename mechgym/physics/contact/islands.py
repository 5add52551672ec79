"""Islands: the touching contacts of a world split into sets that share no moving body.

Two touching contacts are in one island when a chain of touching contacts and constraint rows links their
moving bodies (static geometry links nothing: a floor under two boxes does not join them). The velocity
solve of one island changes no velocity of another's bodies, and no rate of another's rows, so the islands
are solved one after the other, each to its own convergence (``solve.solve_contacts``): sweeps cost the
island's contacts, not the world's, and an island small enough for the contact-space solve (``contact.dense``)
gets it whatever the size of the others (sixteen boxes landing side by side are sixteen islands of four
contacts, not one set of 64).

``find_islands`` writes the members of the islands, each in ascending flat contact index, island after
island, to ``scratch.island_members`` and the islands' bounds to ``scratch.island_start``: island k holds
``island_members[island_start[k]:island_start[k + 1]]``. A world of one island keeps its contacts' order.
"""

from __future__ import annotations

from ..jit import kernel
from ..tolerances import SMALL_DIRECT_EVERY, SMALL_ISLAND


@kernel(inline=True)
def _root(parent, body):
    """The representative body of ``body``'s component (path halving)."""
    while parent[body] != body:
        parent[body] = parent[parent[body]]
        body = parent[body]
    return body


@kernel(inline=True)
def _link(parent, a, b):
    """Put moving bodies ``a`` and ``b`` in one component (an index -1, static geometry, links nothing)."""
    if a < 0 or b < 0:
        return
    a, b = _root(parent, a), _root(parent, b)
    if a != b:
        parent[max(a, b)] = min(a, b)


@kernel(inline=True)
def component(scratch, body):
    """The component of body ``body`` that the last ``find_islands`` found (its smallest body), -1 for static
    geometry."""
    return _root(scratch.island_parent, body) if body >= 0 else -1


@kernel(inline=True)
def contact_component(scratch, contacts, i):
    """The component of contact i: its moving body's (body b's unless it is static geometry)."""
    return component(scratch, contacts.body_b[i] if contacts.body_b[i] >= 0 else contacts.body_a[i])


@kernel
def find_islands(rows, world, contacts, scratch, every):
    """Split world ``world``'s touching contacts (``every``: all its contacts, touching or not, as the position
    correction takes them) into islands (module docstring); returns their number."""
    parent, first = scratch.island_parent, scratch.island_first
    for b in range(parent.size):
        parent[b] = b
        first[b] = 0
    for r in range(rows.kind.size):
        _link(parent, rows.body_a[r], rows.body_b[r])
    capacity = contacts.prev_geom1.size // contacts.count.size
    base = world * capacity
    end = base + min(contacts.count[world], capacity)
    for i in range(base, end):
        if every or contacts.active[i]:
            _link(parent, contacts.body_a[i], contacts.body_b[i])
    for i in range(base, end):  # contacts per component, counted at its root
        if every or contacts.active[i]:
            first[contact_component(scratch, contacts, i)] += 1
    islands, total = 0, 0
    for b in range(parent.size):  # each component's first slot in island_members, components by root body
        size = first[b]
        if size > 0:
            scratch.island_start[islands] = total
            islands += 1
        first[b] = total
        total += size
    scratch.island_start[islands] = total
    for i in range(base, end):
        if every or contacts.active[i]:
            root = contact_component(scratch, contacts, i)
            scratch.island_members[first[root]] = i
            first[root] += 1
    return islands


@kernel(inline=True)
def sweeps_before_direct(rows, m, usual):
    """The sweeps an island of m contacts takes before its first direct solve (the position correction's direct step,
    the velocity solve's contact-space one): SMALL_DIRECT_EVERY in a scene with rows ``rows`` for an island of at
    most SMALL_ISLAND contacts (its matrix is cheap, each sweep through the joined responses dear), else ``usual``."""
    return SMALL_DIRECT_EVERY if rows.kind.size > 0 and m <= SMALL_ISLAND else usual
