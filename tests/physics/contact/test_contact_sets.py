"""The per-body bookkeeping of a world's contact set (``contact.sets``): the counts at each body that answer
"is another contact of this kind on one of my bodies" in constant time, and the chains of each body's contacts,
checked against the direct scans over the whole set that they replace, on random sets."""

from __future__ import annotations

import numpy as np
import pytest

from mechgym.physics.contact import ContactSet, Scratch
from mechgym.physics.contact.sets import IMPACTS, TOUCHING, add_at_bodies, beside, chain_by_body, count_at_bodies


def _random_set(seed: int):
    """A random world 1 of two (1-12 bodies, up to 24 contacts between bodies or with static geometry, each
    active or not, impact or not, near or not) and its scratch; returns (contacts, scratch, base, end)."""
    rng = np.random.default_rng(seed)
    bodies, capacity = int(rng.integers(1, 13)), 24
    contacts, scratch = ContactSet.empty(2, capacity, 4), Scratch.empty(3, bodies, capacity)
    count = int(rng.integers(0, capacity + 1))
    contacts.count[1] = count
    base = capacity
    for i in range(base, base + count):
        a, b = rng.integers(-1, bodies, size=2)
        while a == b:
            a, b = rng.integers(-1, bodies, size=2)
        contacts.body_a[i], contacts.body_b[i] = a, b
        contacts.active[i] = rng.uniform() < 0.7
        contacts.impact[i] = rng.uniform() < 0.3
        contacts.near[i] = rng.uniform() < 0.3
    return contacts, scratch, base, base + count


def _scan(contacts, base, end, i, counted) -> bool:
    """Another contact in [base, end) for which ``counted(j)`` holds acts on a moving body of contact i."""
    mine = {int(contacts.body_a[i]), int(contacts.body_b[i])} - {-1}
    return any(j != i and counted(j) and mine & {int(contacts.body_a[j]), int(contacts.body_b[j])}
               for j in range(base, end))


@pytest.mark.parametrize("seed", range(30))
def test_beside_answers_as_a_scan_of_the_whole_set(seed):
    """``beside`` after ``count_at_bodies``, for every contact and both kinds (an active impact; an active contact
    that is not near), as the scan over every other contact; and still so after contacts become active impacts one
    by one, each counted with ``add_at_bodies`` (as ``detect._join_closing_contacts`` does)."""
    contacts, scratch, base, end = _random_set(seed)
    counts = scratch.body_contacts
    kinds = {IMPACTS: lambda j: contacts.active[j] and contacts.impact[j],
             TOUCHING: lambda j: contacts.active[j] and not contacts.near[j]}
    count_at_bodies(contacts, base, end, counts)
    for i in range(base, end):
        for column, counted in kinds.items():
            assert beside(contacts, counts, i, column) == _scan(contacts, base, end, i, counted)
    for i in range(base, end):
        if not contacts.active[i]:
            contacts.active[i], contacts.impact[i] = True, True
            add_at_bodies(contacts, i, counts)
            for k in range(base, end):
                assert beside(contacts, counts, k, IMPACTS) == _scan(contacts, base, end, k, kinds[IMPACTS])


@pytest.mark.parametrize("seed", range(30))
def test_a_contacts_chain_holds_every_later_contact_of_its_key_body_in_order(seed):
    """``chain_by_body``: walking from contact i visits, in ascending index, every later contact whose key body
    (body b, body a where b is static) is i's, and only those."""
    contacts, scratch, base, end = _random_set(seed)
    chain_by_body(contacts, base, end, scratch.chain_head, scratch.chain_next)

    def key(j):
        return int(contacts.body_b[j]) if contacts.body_b[j] >= 0 else int(contacts.body_a[j])

    for i in range(base, end):
        walked, j = [], i
        while j >= 0:
            walked.append(j)
            j = int(scratch.chain_next[j - base])
        assert walked == [j for j in range(i, end) if key(j) == key(i)]
