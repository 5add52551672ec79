"""Contact-space problems (``contact.dense``: the matrix D of the touching contacts' rows, the free rates u_0, the
impulses the sweeps started from, the friction), solved in contact space alone: seconds instead of a gripper
episode. The reference is the Coulomb conditions themselves (``coulomb_violation``), and for one stored problem
an independent enumeration of its solutions.

Stored problems, each a set whose sweeps did not converge in the Gripper (dt = 2 ms where no other is given):

- ``card_tipping_on_its_fixture``: the scripted pinch and lift from seed 0, then servo targets drawn at random
  every 20 ms (lift in [-0.12, 0.10] m, fingers in [0.030, 0.035] m): at t = 1.802 s the dropped card stands on
  two corners 1 mm apart on the table and leans on the right fixture's edge, all three points sliding in the
  sweeps (mu = 1).
- ``card_on_the_table_leaning_on_a_fixture``: random servo targets after the pinch of seed 4, t = 1.512 s: the
  card on two corners on the table and one point on the left fixture.
- ``card_on_the_table_between_the_fixtures``: random servo targets, seed 2: two points each on the table and
  on both fixtures.
- ``card_on_the_table_against_the_left_pad``: the scripted episode of seed 9: four corners on the table, four
  points on the left pad.
- ``card_pressed_by_a_pad_against_both_fixtures``: the scripted episode of seed 0 at its pinch, t = 1.152 s:
  four points on the right pad and three on the fixtures, D of rank 8 (21 rows).
- ``card_sliding_along_the_right_pad``: random servo targets after the pinch of seed 79 at dt = 1 ms, t = 1.132 s:
  two corners on the table, two points on the right pad sliding at 0.25 m/s, D of rank 7; every try of Newton's
  method but the last halving's proximal-point iterations stalls (one solution, ``kkos`` by enumeration).
- ``card_on_two_corners_between_the_right_pad_and_the_left_fixture``: random servo targets after the pinch of seed
  494 at dt = 5 ms, t = 3.435 s: two corners on the table, four points each on the right pad and the left fixture
  (ten contacts, D of rank 8 in 30 rows). From the impulses of 50 sweeps (the engine's choice for an island of ten)
  every try of Newton's method that starts there or from zero stalls, at 1e-5 to 2 m/s; the search from the
  sweeps' start converges. The step failed, compiled, in parts down to dt / 16.

Sets on which every try of ``newton.newton_solve`` stalls (``INEXACT``), each from a step that failed even in parts of
dt / 16 with random servo targets after the pinch (dt, seed, t): ``card_on_two_corners_against_the_right_pad`` (1 ms,
49, 1.352 s; D of rank 7, 12 rows), ``card_on_two_corners_against_the_left_pad`` (1 ms, 65, 3.109 s),
``card_on_the_table_between_the_left_pad_and_the_right_fixture`` (1 ms, 0, 1.268 s; 8 contacts),
``card_on_two_corners_between_the_left_pad_and_the_right_fixture`` (10 ms, 41, 4.91 s; 10 contacts),
``card_on_a_corner_against_the_left_fixture`` (10 ms, 45, 3.13 s).

Random problems: bodies of random mass and inertia (1 to 3, inertia down to 1e-6 m^2 times the mass), half of
them with joints (their mobility W^(1/2) Q Q^T W^(1/2) for a random subspace Q of the motions), up to eight
contacts between them or with static geometry at random points and normals, mu in {0, 0.3, 1, 2} (static up to
1.5 times the kinetic), and free rates u_0 = J v_0 of a random motion v_0 the joints allow (|u_0| <= 1 m/s), so
that a solution exists (Anitescu and Potra: the velocity-level problem with a positive semidefinite D is always
solvable)."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from mechgym.physics.contact import ContactSet, Scratch
from mechgym.physics.contact.dense import sweep_contact_space
from mechgym.physics.contact.newton import _newton_step, newton_solve
from mechgym.physics.tolerances import INEXACT_VELOCITY, NEWTON_TOLERANCE, SMALL_DIRECT_EVERY, VELOCITY_DIRECT_EVERY

DATA = Path(__file__).parent / "data"
TOLERANCE = 1e-12  # m/s: rates the solution must meet (the solve's own is 1e-12)
STALLED = ["card_on_the_table_leaning_on_a_fixture", "card_on_the_table_between_the_fixtures",
           "card_on_the_table_against_the_left_pad", "card_pressed_by_a_pad_against_both_fixtures",
           "card_tipping_on_its_fixture", "card_on_two_corners_between_the_right_pad_and_the_left_fixture"]
INEXACT = ["card_on_two_corners_against_the_right_pad", "card_on_two_corners_against_the_left_pad",
           "card_on_the_table_between_the_left_pad_and_the_right_fixture",
           "card_on_two_corners_between_the_left_pad_and_the_right_fixture",
           "card_on_a_corner_against_the_left_fixture"]


def _load(name: str) -> dict:
    with np.load(DATA / f"{name}.npz") as data:
        return {key: data[key] for key in data.files}


def _cone_mu(problem: dict) -> np.ndarray:
    """Each contact's friction coefficient: kinetic where the problem's point slides, else static."""
    return np.where(problem["sliding"], problem["friction"], problem["static_friction"])


def coulomb_violation(problem: dict, impulse: np.ndarray) -> float:
    """The largest violation (m/s, or N s scaled to m/s by the contact's K_nn) of the Coulomb conditions by the
    impulses (m, 3) at the rates u = u_0 + D P: P_n >= 0, u_n >= 0, P_n u_n = 0; |P_t| <= mu P_n; inside the cone
    u_t = 0, on its edge u_t antiparallel to P_t. mu is kinetic for a point that slides, static otherwise."""
    rate = problem["free_rate"] + problem["matrix"] @ impulse.ravel()
    mu = _cone_mu(problem)
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
    mu = _cone_mu(problem)
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


def _contact_space(problem: dict) -> tuple[ContactSet, Scratch, int]:
    """A one-world contact set and scratch holding the stored problem, its contacts at the stored start."""
    start = problem["start"]
    m = start.shape[0]
    contacts, scratch = ContactSet.empty(1, m), Scratch.empty(0, 0, m)
    contacts.count[0] = m
    contacts.active[:m] = True
    contacts.impulse[:m] = start
    scratch.dense_start[:3 * m] = start.ravel()
    contacts.coupling[:m] = problem["coupling"]
    contacts.sliding[:m] = problem["sliding"]
    contacts.friction[:m] = problem["friction"]
    contacts.static_friction[:m] = problem["static_friction"]
    scratch.dense[:3 * m, :3 * m] = problem["matrix"]
    scratch.dense_rate[:3 * m] = problem["free_rate"] + problem["matrix"] @ start.ravel()
    scratch.dense_index[:m] = np.arange(m)
    scratch.dense_ready[0] = True
    return contacts, scratch, m


# sweeps before the first direct solve: the engine's for these sets (small islands of a scene with rows), and for
# the other islands
EVERY = [SMALL_DIRECT_EVERY, VELOCITY_DIRECT_EVERY]


def _engine_solve(problem: dict, every: int) -> tuple[int, np.ndarray, dict]:
    """The engine's contact-space solve (sweeps, Newton, direct steps after ``every`` sweeps) from the stored start:
    its result, the impulses (m, 3), and the problem with the sliding flags the solve ended with (they decide each
    cone)."""
    contacts, scratch, m = _contact_space(problem)
    result = sweep_contact_space(contacts, scratch, m, every)
    return result, contacts.impulse[:m].copy(), {**problem, "sliding": contacts.sliding[:m].copy()}


def test_the_tipping_card_has_one_solution_and_the_sweeps_did_not_start_from_it():
    """The stored problem is feasible: exactly one assignment of parts has a solution (corner 1 sticks, corner 2
    slides, the fixture's point opens), and the sweeps' start is far from it (all three pushing and sliding)."""
    problem = _load("card_tipping_on_its_fixture")
    solutions = _enumerated_solutions(problem)
    assert [parts for parts, _ in solutions] == ["kso"]
    assert coulomb_violation(problem, problem["start"]) > 1e-9


@pytest.mark.parametrize("every", EVERY)
def test_the_contact_space_solve_finds_the_tipping_cards_solution(every):
    """From the sweeps' start, the engine's contact-space solve converges to the enumerated solution: the same
    rates to 1e-12 m/s, the Coulomb conditions met to 1e-12 m/s."""
    problem = _load("card_tipping_on_its_fixture")
    (_, expected), = _enumerated_solutions(problem)
    result, impulse, solved = _engine_solve(problem, every)
    assert result == impulse.shape[0]
    assert coulomb_violation(solved, impulse) <= TOLERANCE
    rates = problem["matrix"] @ (impulse - expected).ravel()
    assert np.abs(rates).max() <= TOLERANCE


@pytest.mark.parametrize("every", EVERY)
@pytest.mark.parametrize("name", STALLED)
def test_each_stalled_set_of_the_gripper_is_solved_in_contact_space(name, every):
    """Each stored set starts far from a solution, and the contact-space solve ends at one: the Coulomb
    conditions met to 1e-12 m/s. (Before Newton's method, the sweeps and direct steps failed on all but the
    tipping card, and on that only the search over every assignment of parts found it.)"""
    problem = _load(name)
    assert coulomb_violation(problem, problem["start"]) > 1e-9
    result, impulse, solved = _engine_solve(problem, every)
    assert result == impulse.shape[0]
    assert coulomb_violation(solved, impulse) <= TOLERANCE


@pytest.mark.parametrize("name", STALLED)
def test_newtons_method_alone_solves_each_stalled_set(name):
    """``newton.newton_solve`` from the stored start (no sweeps): a solution to 1e-12 m/s, taken as the contacts'
    impulses, and the rates it leaves are those of the impulses."""
    problem = _load(name)
    contacts, scratch, m = _contact_space(problem)
    assert newton_solve(contacts, scratch, m, False)
    impulse = contacts.impulse[:m]
    assert coulomb_violation(problem, impulse) <= TOLERANCE
    _assert_rates_of(problem, impulse, scratch.dense_rate[:3 * m])


def test_the_last_halvings_proximal_iterations_solve_the_card_sliding_along_the_right_pad():
    """``newton.newton_solve`` in the part of a step that cannot be halved again: the proximal-point iterations from
    the best end of the other tries solve the set exactly (the Coulomb conditions to 1e-12 m/s), and count no
    inexact solve."""
    problem = _load("card_sliding_along_the_right_pad")
    contacts, scratch, m = _contact_space(problem)
    assert newton_solve(contacts, scratch, m, True)
    assert scratch.inexact[1] == 0
    assert coulomb_violation(problem, contacts.impulse[:m]) <= TOLERANCE


@pytest.mark.parametrize("name", INEXACT)
def test_where_every_try_stalls_newton_takes_its_best_end_within_the_inexact_tolerance(name):
    """``newton.newton_solve`` in the part of a step that cannot be halved again takes the best end of its tries and
    counts it: impulses on the cones that meet the Alart-Curnier equations to INEXACT_VELOCITY, computed here
    independently, and the rates it leaves are those of the impulses. (Each set failed its step before, in parts down
    to dt / 16.)"""
    problem = _load(name)
    contacts, scratch, m = _contact_space(problem)
    assert newton_solve(contacts, scratch, m, True)
    assert scratch.inexact[1] == 1
    impulse = contacts.impulse[:m]
    mu = _cone_mu(problem)
    assert (impulse[:, 0] >= 0.0).all()
    assert (np.hypot(impulse[:, 1], impulse[:, 2]) <= mu * impulse[:, 0] * (1 + 1e-12)).all()
    assert alart_curnier(problem, impulse) <= INEXACT_VELOCITY
    _assert_rates_of(problem, impulse, scratch.dense_rate[:3 * m])


def _assert_rates_of(problem: dict, impulse: np.ndarray, rates: np.ndarray):
    """``rates`` (3m, m/s) are u_0 + D P at the impulses (m, 3), to the round-off of that sum."""
    expected = problem["free_rate"] + problem["matrix"] @ impulse.ravel()
    summed = np.abs(problem["free_rate"]) + np.abs(problem["matrix"]) @ np.abs(impulse.ravel())
    np.testing.assert_allclose(rates, expected, rtol=0.0, atol=16 * np.finfo(float).eps * summed.max())


@pytest.mark.parametrize("name", INEXACT)
def test_an_exact_newton_solve_takes_a_solution_or_changes_nothing(name):
    """In every part of a step but the last halving ``newton.newton_solve`` takes no inexact point: either a
    solution to NEWTON_TOLERANCE, or the impulses and rates left as they were."""
    problem = _load(name)
    contacts, scratch, m = _contact_space(problem)
    rates = scratch.dense_rate[:3 * m].copy()
    if newton_solve(contacts, scratch, m, False):
        assert alart_curnier(problem, contacts.impulse[:m]) <= NEWTON_TOLERANCE * (1 + 1e-6) + 1e-15
    else:
        np.testing.assert_array_equal(contacts.impulse[:m], problem["start"])
        np.testing.assert_array_equal(scratch.dense_rate[:3 * m], rates)


@pytest.mark.parametrize("name", INEXACT)
def test_the_contact_space_solve_of_a_last_halving_ends_and_counts_its_inexact_solves(name):
    """The contact-space solve (sweeps, Newton, direct steps) of each set in the part of a step that cannot be
    halved again (``scratch.inexact[0]``) converges, its impulses meeting the Coulomb conditions, under the cones of
    the sliding flags it ended with, to INEXACT_VELOCITY, and to 1e-12 m/s unless it counted an inexact solve."""
    problem = _load(name)
    contacts, scratch, m = _contact_space(problem)
    scratch.inexact[0] = 1
    assert sweep_contact_space(contacts, scratch, m, VELOCITY_DIRECT_EVERY) == m
    solved = {**problem, "sliding": contacts.sliding[:m].copy()}
    violation = coulomb_violation(solved, contacts.impulse[:m])
    assert violation <= (INEXACT_VELOCITY if scratch.inexact[1] else TOLERANCE), (violation, scratch.inexact[1])


def _frame(normal: np.ndarray) -> list[np.ndarray]:
    """The normal and two unit tangents completing it to a right-handed frame."""
    helper = np.array([1.0, 0.0, 0.0]) if abs(normal[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    first = np.cross(normal, helper)
    first /= np.linalg.norm(first)
    return [normal, first, np.cross(normal, first)]


def _random_problem(seed: int) -> dict:
    """A random contact-space problem of jointed or free bodies (module docstring), at zero impulses."""
    rng = np.random.default_rng(seed)
    bodies, m = int(rng.integers(1, 4)), int(rng.integers(1, 9))
    mobility = np.zeros((6 * bodies, 6 * bodies))
    for b in range(bodies):
        mass = 10 ** rng.uniform(-2, 1)
        inertia = mass * (10 ** rng.uniform(-3, -1, size=3)) ** 2
        axes, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        mobility[6 * b:6 * b + 3, 6 * b:6 * b + 3] = np.eye(3) / mass
        mobility[6 * b + 3:6 * b + 6, 6 * b + 3:6 * b + 6] = axes @ np.diag(1 / inertia) @ axes.T
    if rng.random() < 0.5:
        free, _ = np.linalg.qr(rng.normal(size=(6 * bodies, int(rng.integers(1, 6 * bodies + 1)))))
        root = np.linalg.cholesky(mobility)
        mobility = root @ free @ free.T @ root.T
    jacobian = np.zeros((3 * m, 6 * bodies))
    for c in range(m):
        a, b = int(rng.integers(-1, bodies)), int(rng.integers(0, bodies))  # (a = -1: static geometry)
        a = -1 if a == b else a
        point, normal = rng.normal(size=3) * 0.05, rng.normal(size=3)
        for k, direction in enumerate(_frame(normal / np.linalg.norm(normal))):
            for body, sign in ((a, -1.0), (b, 1.0)):
                if body >= 0:
                    jacobian[3 * c + k, 6 * body:6 * body + 3] += sign * direction
                    jacobian[3 * c + k, 6 * body + 3:6 * body + 6] += sign * np.cross(point, direction)
    matrix = jacobian @ mobility @ jacobian.T
    free_rate = jacobian @ mobility @ rng.normal(size=6 * bodies)
    friction = rng.choice([0.0, 0.3, 1.0, 2.0], size=m)
    return dict(matrix=matrix, free_rate=free_rate / max(np.abs(free_rate).max(), 1e-300),
                start=np.zeros((m, 3)), coupling=np.array([matrix[3 * c:3 * c + 3, 3 * c:3 * c + 3] for c in range(m)]),
                sliding=np.zeros(m, dtype=bool), friction=friction,
                static_friction=friction * rng.choice([1.0, rng.uniform(1.0, 1.5)], size=m))


@pytest.mark.parametrize("every", EVERY)
@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.integers(0, 10**9))
def test_random_contact_space_problems_are_solved(every, seed):
    """Every random problem (module docstring) whose contacts' normals the joints do not block is solved: the
    contact-space solve converges, and its impulses meet the Coulomb conditions, under the cones of the sliding
    flags it ended with, to 1e-11 m/s (measured: at most 4.4e-12 m/s over 5000 problems; the sweeps stop at
    changes of 1e-12 m/s per sweep)."""
    problem = _random_problem(seed)
    assume((np.diag(problem["matrix"])[0::3] > 0.0).all())
    result, impulse, solved = _engine_solve(problem, every)
    assert result == impulse.shape[0]
    assert coulomb_violation(solved, impulse) <= 1e-11


def alart_curnier(problem: dict, impulse: np.ndarray) -> float:
    """max |F| (m/s) of Alart and Curnier's equations (``contact.newton``'s module docstring) at the impulses (m, 3),
    rho = 1 / D_nn, mu kinetic where the problem's point slides, else static."""
    d = problem["matrix"]
    rate = (problem["free_rate"] + d @ impulse.ravel()).reshape(-1, 3)
    mu = _cone_mu(problem)
    worst = 0.0
    for c, (p, u) in enumerate(zip(impulse, rate, strict=True)):
        rho = 1.0 / d[3 * c, 3 * c]
        pushed = p[0] - rho * u[0]
        f_n = u[0] if pushed > 0.0 else p[0] / rho
        z = p[1:] - rho * u[1:]
        radius = mu[c] * max(pushed, 0.0)
        size = np.hypot(*z)
        f_t = u[1:] if size <= radius else (p[1:] - radius * z / size) / rho
        worst = max(worst, abs(f_n), *np.abs(f_t))
    return worst


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.integers(0, 10**9))
def test_what_newton_reports_solved_is_a_solution_on_the_cones(seed):
    """From zero impulses (no sweeps before it), a set that ``newton.newton_solve`` reports solved holds impulses on
    the cones that meet the Alart-Curnier equations to NEWTON_TOLERANCE, computed here independently (the
    projection onto the cones can move a solution off its equations)."""
    problem = _random_problem(seed)
    assume((np.diag(problem["matrix"])[0::3] > 0.0).all())
    contacts, scratch, m = _contact_space(problem)
    if newton_solve(contacts, scratch, m, False):
        impulse = contacts.impulse[:m]
        mu = _cone_mu(problem)
        assert (impulse[:, 0] >= 0.0).all()
        assert (np.hypot(impulse[:, 1], impulse[:, 2]) <= mu * impulse[:, 0] * (1 + 1e-12)).all()
        assert alart_curnier(problem, impulse) <= NEWTON_TOLERANCE * (1 + 1e-6) + 1e-15


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.integers(0, 10**9))
def test_a_newton_step_solves_the_explicit_equations_apart_and_eliminates_the_rest(seed):
    """``newton._newton_step`` on a random J (3m x 3m, m up to 8) of which none, some or all rows hold only their
    diagonal entry (the rows of a contact that does not push): each such unknown is rhs / J_rr exactly, and the
    step solves J step = rhs as numpy does; where one of the other rows repeats another (dependent contacts, a
    consistent right-hand side) it still meets every equation."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 9))
    n = 3 * m
    jacobian = rng.normal(size=(n, n)) + n * np.eye(n)
    explicit = rng.random(n) < rng.choice([0.0, 0.3, 1.0])
    for r in np.flatnonzero(explicit):
        jacobian[r] = 0.0
        jacobian[r, r] = rng.uniform(0.5, 2.0)
    kept = np.flatnonzero(~explicit)
    repeated = kept.size >= 2 and rng.random() < 0.5
    if repeated:
        jacobian[kept[1]] = jacobian[kept[0]]
    rhs = jacobian @ rng.normal(size=n) if repeated else rng.normal(size=n)
    scratch = Scratch.empty(0, 0, m)
    scratch.system[:n, :n] = jacobian
    step, reduced = np.zeros(n), np.zeros(n)
    _newton_step(scratch, n, rhs.copy(), step, reduced)
    np.testing.assert_array_equal(step[explicit], rhs[explicit] / np.diag(jacobian)[explicit])
    scale = np.abs(rhs).max()
    if repeated:
        np.testing.assert_allclose(jacobian @ step, rhs, rtol=0.0, atol=1e-10 * scale)
    else:
        np.testing.assert_allclose(step, np.linalg.solve(jacobian, rhs), rtol=0.0, atol=1e-12 * scale)
