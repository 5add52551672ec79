"""Contact-space problems that the gripper met, stored as the solve saw them (``contact.dense``: the matrix D of
the touching contacts' rows, the free rates u_0, the impulses the sweeps started from, the friction), and solved
in contact space alone: seconds instead of a gripper episode.

``card_tipping_on_its_fixture``: the Gripper's scripted pinch and lift from seed 0, then servo targets drawn at
random every 20 ms (lift in [-0.12, 0.10] m, fingers in [0.030, 0.035] m), dt = 2 ms: at t = 1.802 s the dropped
card stands on two corners 1 mm apart on the table and leans on the right fixture's edge, all three points
sliding in the sweeps (mu = 1). The solve failed there before the global search of parts
(``active_set.search_parts``)."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np

from mechgym.physics.contact import ContactSet, Scratch
from mechgym.physics.contact.dense import sweep_contact_space

DATA = Path(__file__).parent / "data"
TOLERANCE = 1e-12  # m/s: rates the solution must meet (the solve's own is 1e-12)


def _load(name: str) -> dict:
    with np.load(DATA / f"{name}.npz") as data:
        return {key: data[key] for key in data.files}


def coulomb_violation(problem: dict, impulse: np.ndarray) -> float:
    """The largest violation (m/s, or N s scaled to m/s by the contact's K_nn) of the Coulomb conditions by the
    impulses (m, 3) at the rates u = u_0 + D P: P_n >= 0, u_n >= 0, P_n u_n = 0; |P_t| <= mu P_n; inside the cone
    u_t = 0, on its edge u_t antiparallel to P_t. mu is kinetic for a point that slides, static otherwise."""
    rate = problem["free_rate"] + problem["matrix"] @ impulse.ravel()
    mu = np.where(problem["sliding"], problem["friction"], problem["static_friction"])
    worst = 0.0
    for c, (p, u) in enumerate(zip(impulse, rate.reshape(-1, 3), strict=True)):
        k = problem["coupling"][c, 0, 0]
        size, slip = np.hypot(p[1], p[2]), np.hypot(u[1], u[2])
        worst = max(worst, -p[0] * k, -u[0], min(p[0] * k, abs(u[0])), (size - mu[c] * p[0]) * k)
        if size < mu[c] * p[0] * (1.0 - 1e-9):
            worst = max(worst, slip)
        elif size > 0.0:
            worst = max(worst, slip + (u[1] * p[1] + u[2] * p[2]) / size)  # 0 when antiparallel
    return worst


def _enumerated_solutions(problem: dict) -> list[tuple[str, np.ndarray]]:
    """Every solution, found independently of the engine: each assignment of open (o), sticking (k) or sliding
    (s) to the contacts, its equations (u = 0 sticking; u_n = 0 and P_t = -mu P_n u_t / |u_t| sliding) solved by
    least squares with the sliding directions iterated from the slip (from 8 starting directions each), kept if
    it meets the Coulomb conditions."""
    d, u0 = problem["matrix"], problem["free_rate"]
    mu = np.where(problem["sliding"], problem["friction"], problem["static_friction"])
    m = mu.size
    found = []
    compass = [np.array([np.cos(a), np.sin(a)]) for a in np.arange(8) * np.pi / 4]
    for parts in itertools.product("oks", repeat=m):
        sliding = [c for c in range(m) if parts[c] == "s"]
        for start in itertools.product(compass, repeat=len(sliding)):  # the directions the iteration starts from
            impulse = _solve_parts(d, u0, mu, parts, dict(zip(sliding, start, strict=True)))
            if coulomb_violation(problem, impulse) <= TOLERANCE:
                found.append(("".join(parts), impulse))
                break
    return found


def _solve_parts(d, u0, mu, parts, directions):
    """The impulses (m, 3) of one assignment of parts, the sliding directions iterated from ``directions``."""
    m = mu.size
    for _ in range(100):
        columns, equations = [], []
        for c in range(m):
            if parts[c] == "k":
                columns += [d[:, 3 * c + k] for k in range(3)]
                equations += [3 * c, 3 * c + 1, 3 * c + 2]
            elif parts[c] == "s":
                s = directions[c]
                columns.append(d[:, 3 * c] + mu[c] * (s[0] * d[:, 3 * c + 1] + s[1] * d[:, 3 * c + 2]))
                equations.append(3 * c)
        impulse = np.zeros(3 * m)
        if columns:
            x = iter(np.linalg.lstsq(np.column_stack(columns)[equations], -u0[equations], rcond=1e-12)[0])
            for c in range(m):
                if parts[c] == "k":
                    impulse[3 * c:3 * c + 3] = [next(x), next(x), next(x)]
                elif parts[c] == "s":
                    impulse[3 * c] = next(x)
                    impulse[3 * c + 1:3 * c + 3] = mu[c] * impulse[3 * c] * directions[c]
        rate = u0 + d @ impulse
        turned = 0.0
        for c in directions:
            slip = -rate[3 * c + 1:3 * c + 3]
            if np.hypot(*slip) > 0.0:
                turned = max(turned, np.abs(slip / np.hypot(*slip) - directions[c]).max())
                directions[c] = slip / np.hypot(*slip)
        if turned < 1e-12:
            break
    return impulse.reshape(m, 3)


def _engine_solve(problem: dict) -> tuple[int, np.ndarray]:
    """The engine's contact-space sweeps (with their direct steps and search) from the stored start."""
    start = problem["start"]
    m = start.shape[0]
    contacts, scratch = ContactSet.empty(1, m), Scratch.empty(0, 0, m)
    contacts.count[0] = m
    contacts.active[:m] = True
    contacts.impulse[:m] = start
    contacts.coupling[:m] = problem["coupling"]
    contacts.sliding[:m] = problem["sliding"]
    contacts.friction[:m] = problem["friction"]
    contacts.static_friction[:m] = problem["static_friction"]
    scratch.dense[:3 * m, :3 * m] = problem["matrix"]
    scratch.dense_rate[:3 * m] = problem["free_rate"] + problem["matrix"] @ start.ravel()
    scratch.dense_index[:m] = np.arange(m)
    scratch.dense_ready[0] = True
    result = sweep_contact_space(contacts, scratch, m)
    return result, contacts.impulse[:m].copy()


def test_the_tipping_card_has_one_solution_and_the_sweeps_did_not_start_from_it():
    """The stored problem is feasible: exactly one assignment of parts has a solution (corner 1 sticks, corner 2
    slides, the fixture's point opens), and the sweeps' start is far from it (all three pushing and sliding)."""
    problem = _load("card_tipping_on_its_fixture")
    solutions = _enumerated_solutions(problem)
    assert [parts for parts, _ in solutions] == ["kso"]
    assert coulomb_violation(problem, problem["start"]) > 1e-9


def test_the_contact_space_solve_finds_the_tipping_cards_solution():
    """From the sweeps' start, the engine's contact-space solve converges to the enumerated solution: the same
    rates to 1e-12 m/s, the Coulomb conditions met to 1e-12 m/s."""
    problem = _load("card_tipping_on_its_fixture")
    (_, expected), = _enumerated_solutions(problem)
    result, impulse = _engine_solve(problem)
    assert result == impulse.shape[0]
    assert coulomb_violation(problem, impulse) <= TOLERANCE
    rates = problem["matrix"] @ (impulse - expected).ravel()
    assert np.abs(rates).max() <= TOLERANCE
