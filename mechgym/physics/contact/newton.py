"""Semismooth Newton on the contact-space problem (``contact.dense``): the touching contacts' Coulomb conditions
as one system of equations, for the sets whose sweeps stall and whose active set the direct step
(``contact.active_set``) cannot repair.

For contact c with impulses P = (P_n, P_t), rates u = u_0 + D P and rho = 1 / D_nn (its rows 3c .. 3c + 2),
Alart and Curnier's equations are

    F_n = (P_n - max(0, P_n - rho u_n)) / rho
    F_t = (P_t - proj_r(P_t - rho u_t)) / rho,     r = mu max(0, P_n - rho u_n),

proj_r the radial projection onto the disc |t| <= r, mu the contact's cone (kinetic if it slides, else static).
F = 0 exactly when the Coulomb conditions hold: P_n >= 0, u_n >= 0, P_n u_n = 0; |P_t| <= mu P_n with u_t = 0
inside the disc and u_t antiparallel to P_t on its edge. Divided by rho, F is in m/s. Where the contact pushes
(P_n - rho u_n > 0) F_n = u_n, else F_n = P_n / rho; inside the disc F_t = u_t, outside
F_t = (P_t - r z / |z|) / rho with z = P_t - rho u_t. F is piecewise smooth, and each Newton step solves
J dP = -F with J the Jacobian of the current piece (an element of F's generalised Jacobian), by
``linalg.eliminate``: where the contacts' rows depend on each other (four corners of a face, a card squeezed
between two pads) the dependent equations' unknowns keep their value. Each step is backtracked (Armijo) against
a non-monotone reference, R_k = max(|F_k|^2, DECAY R_{k-1}): where the pieces of F meet, the Newton direction
of one piece can be no descent for |F|^2 at all, and a monotone line search then stalls there (measured on
five stalled sets of the gripper: a monotone search stopped at 1e-7 m/s on one and at 9e-4 m/s on another,
full steps without a search cycled on two; this rule solved all five, to 1e-14 m/s, in 2 to 30 steps).

The solve starts from the impulses the sweeps left: where the contacts' rows depend on each other the split of the
impulses among them is not unique, and each step keeps the dependent unknowns where they are, so the split the warm
start carries from step to step survives (from zero, the elimination's basic solution leaves some corners of a face
without force: the gripper's lift, which holds the card without an impact, rattled with 138 impacts in 0.2 s). From
there the search solved one of the five stalled sets above, from zero all five; so a failure from the sweeps'
impulses starts again from zero, and then from both with full steps (the path across the pieces depends on
round-off: on one of the five, a card standing on the table against a pad, eight contacts, the search from zero
converged or not with the last bits of D, where full steps from either start converged). Then the search from the
impulses the sweeps started from (``scratch.dense_start``, the solve's warm start): on a card on two corners between
a pad and a fixture (ten contacts, D of rank 8 in 30 rows), the sweeps' impulses after 50 sweeps and zero were
starts from which every try stalled (at 1e-5 to 2 m/s), the step's parts failing down to dt / 16, where the search
from the warm start converges. Then Levenberg-Marquardt steps (``_levenberg``) from the sweeps' impulses: slower
where the pieces change, but a descent whatever the piece. Last, in a part of h / 2**CONTACT_SUBDIVISION or shorter,
from the best end of those tries (the least |F|), Levenberg-Marquardt steps again and proximal-point iterations
(``_proximal``; a 64-box bin ran 4.3 times slower with them in every solve): where D is singular (a card standing on
two corners and pressed by a pad: 12 rows of rank 7) Newton's steps can stall at a point whose piece has no descent
left. Of six such sets of the Gripper (random servo targets after the pinch, dt = 1 and 10 ms), on which every
earlier try stalled between 1e-13 and 3e-1 m/s, these solved one; on the others every try still stalls, their best
ends between 1.6e-13 and 2.1e-9 m/s, although the enumeration of each contact's part (open, sticking or sliding)
finds exact solutions of two of the three four-contact ones. So there the best end of all the tries is taken if it
meets the conditions to INEXACT_VELOCITY, where the step would fail otherwise.
"""

from __future__ import annotations

import math

from ..jit import kernel
from ..linalg import cholesky_solve, eliminate, ridge_cholesky
from ..tolerances import (
    ARMIJO,
    DAMPING_LEAST,
    DAMPING_MOST,
    DAMPING_START,
    DECAY,
    INEXACT_VELOCITY,
    NEWTON_ITERATIONS,
    NEWTON_PROXIMAL,
    NEWTON_PROXIMAL_ITERATIONS,
    NEWTON_TOLERANCE,
    SHORTEST_STEP,
)
from .friction import cone_mu, disc

# newton_solve's tries, in order: (where it starts, what it runs). Starts: the current impulses, zero, the impulses
# the sweeps started from (``scratch.dense_start``), the best end of the tries so far; runs: Newton's steps with the
# non-monotone search or full steps (``_from``), Levenberg-Marquardt steps, proximal-point iterations. The last two
# tries run only in a part of h / 2**CONTACT_SUBDIVISION or shorter (``tolerances.CONTACT_SUBDIVISION``).
_CURRENT, _ZERO, _SWEEPS_START, _BEST = 0, 1, 2, 3
_SEARCH, _FULL, _LEVENBERG, _PROXIMAL = 0, 1, 2, 3
_TRIES = ((_CURRENT, _SEARCH), (_ZERO, _SEARCH), (_CURRENT, _FULL), (_ZERO, _FULL), (_SWEEPS_START, _SEARCH),
          (_CURRENT, _LEVENBERG), (_BEST, _LEVENBERG), (_BEST, _PROXIMAL))
_EXACT_TRIES = 6


@kernel
def _rates(scratch, m, impulse, rate):
    """rate = u_0 + D P over the 3m rows (u_0: ``scratch.newton_vectors[0]``)."""
    matrix, free = scratch.dense, scratch.newton_vectors[0]
    for r in range(3 * m):
        total = free[r]
        for s in range(3 * m):
            total += matrix[r, s] * impulse[s]
        rate[r] = total


@kernel
def _residual(contacts, scratch, m, impulse, rate, residual, jacobian, with_jacobian):
    """F (3m, m/s) at the impulses and rates (module docstring), and its Jacobian into ``jacobian`` (3m, 3m)
    when ``with_jacobian``. Returns max |F|."""
    matrix = scratch.dense
    worst = 0.0
    for c in range(m):
        n = 3 * c
        rho = 1.0 / matrix[n, n]
        mu = cone_mu(contacts, scratch.dense_index[c])
        pushed = impulse[n] - rho * rate[n]
        residual[n] = rate[n] if pushed > 0.0 else impulse[n] / rho
        z1, z2 = impulse[n + 1] - rho * rate[n + 1], impulse[n + 2] - rho * rate[n + 2]
        size = math.sqrt(z1 * z1 + z2 * z2)
        radius = mu * max(pushed, 0.0)
        inside = size <= radius
        s1, s2 = 0.0, 0.0
        if inside:
            residual[n + 1], residual[n + 2] = rate[n + 1], rate[n + 2]
        else:
            s1, s2 = z1 / size, z2 / size
            residual[n + 1] = (impulse[n + 1] - radius * s1) / rho
            residual[n + 2] = (impulse[n + 2] - radius * s2) / rho
        for k in range(3):
            worst = max(worst, abs(residual[n + k]))
        if not with_jacobian:
            continue
        for j in range(3 * m):
            jacobian[n, j] = matrix[n, j] if pushed > 0.0 else 0.0
            if inside:
                jacobian[n + 1, j] = matrix[n + 1, j]
                jacobian[n + 2, j] = matrix[n + 2, j]
                continue
            # d(P_t - r s) / rho, s = z / |z|: ds = (I - s s^T) dz / |z|, dz = dP_t - rho D_t dP,
            # dr = mu (dP_n - rho D_n dP) where the contact pushes
            dz1 = (1.0 if j == n + 1 else 0.0) - rho * matrix[n + 1, j]
            dz2 = (1.0 if j == n + 2 else 0.0) - rho * matrix[n + 2, j]
            dr = mu * ((1.0 if j == n else 0.0) - rho * matrix[n, j]) if pushed > 0.0 else 0.0
            along = s1 * dz1 + s2 * dz2
            turn = radius / size
            jacobian[n + 1, j] = (dz1 + rho * matrix[n + 1, j] - s1 * dr - turn * (dz1 - s1 * along)) / rho
            jacobian[n + 2, j] = (dz2 + rho * matrix[n + 2, j] - s2 * dr - turn * (dz2 - s2 * along)) / rho
        if not pushed > 0.0:
            jacobian[n, n] = 1.0 / rho
    return worst


@kernel
def _from(contacts, scratch, m, impulse, search):
    """Newton steps from ``impulse`` (3m, overwritten by the iterates), backtracked against the non-monotone
    reference (module docstring) if ``search``, else full steps. Returns max |F| at the last iterate (converged when
    at most NEWTON_TOLERANCE)."""
    vectors = scratch.newton_vectors
    rate, residual, rhs, step, trial, trial_rate, trial_residual = (vectors[1], vectors[2], vectors[3], vectors[4],
                                                                   vectors[5], vectors[6], vectors[7])
    n = 3 * m
    _rates(scratch, m, impulse, rate)
    worst = _residual(contacts, scratch, m, impulse, rate, residual, scratch.system, True)
    reference = 0.0
    for _ in range(NEWTON_ITERATIONS):
        if worst <= NEWTON_TOLERANCE:
            return worst
        merit = 0.0
        for r in range(n):
            rhs[r] = -residual[r]
            merit += residual[r] * residual[r]
        reference = max(merit, DECAY * reference) if search else math.inf
        _newton_step(scratch, n, rhs, step, trial)
        fraction = 1.0
        while True:
            for r in range(n):
                trial[r] = impulse[r] + fraction * step[r]
            _rates(scratch, m, trial, trial_rate)
            _residual(contacts, scratch, m, trial, trial_rate, trial_residual, scratch.system, False)
            trial_merit = 0.0
            for r in range(n):
                trial_merit += trial_residual[r] * trial_residual[r]
            if trial_merit <= (1.0 - 2.0 * ARMIJO * fraction) * reference:
                break
            fraction *= 0.5
            if fraction < SHORTEST_STEP:
                return worst
        for r in range(n):
            impulse[r] = trial[r]
            rate[r] = trial_rate[r]
        worst = _residual(contacts, scratch, m, impulse, rate, residual, scratch.system, True)
    return worst


@kernel
def _newton_step(scratch, n, rhs, step, reduced):
    """step (n) solving J step = rhs for the Jacobian J in ``scratch.system`` (``_residual``; rhs is overwritten):
    an equation whose row of J holds only its diagonal entry (each row of a contact that does not push: F = P / rho)
    gives its unknown at once, and the others are solved by ``linalg.eliminate`` on J over the remaining rows and
    columns (into ``scratch.factor``), their right-hand sides less the known unknowns' columns: the elimination is
    cubic in the unknowns, and in a pile a sixth of the touching contacts do not push. ``reduced`` (n): scratch."""
    jacobian, kept, matrix = scratch.system, scratch.pivots[1], scratch.factor
    count = 0
    for r in range(n):
        row = jacobian[r, :n]
        explicit = row[r] != 0.0
        for j in range(n):
            if j != r and row[j] != 0.0:
                explicit = False
                break
        step[r] = rhs[r] / row[r] if explicit else 0.0
        if not explicit:
            kept[count] = r
            count += 1
    if count == n:
        eliminate(jacobian, rhs, n, scratch.pivots[0], step)
        return
    for k in range(count):
        r = kept[k]
        value = rhs[r]
        for j in range(n):
            if step[j] != 0.0:
                value -= jacobian[r, j] * step[j]
        reduced[k] = value
        for c in range(count):
            matrix[k, c] = jacobian[r, kept[c]]
    for k in range(count):
        rhs[k] = reduced[k]
    eliminate(matrix, rhs, count, scratch.pivots[0], reduced)
    for k in range(count):
        step[kept[k]] = reduced[k]


@kernel
def newton_solve(contacts, scratch, m, short_part):
    """Solve the m touching contacts' Coulomb conditions on D (``scratch.dense``) and their rates
    (``scratch.dense_rate`` at ``contacts.impulse``), from the current impulses, then from zero, each with the
    non-monotone search and then with full steps, then with the search from the impulses the sweeps started from
    (``scratch.dense_start``), then by Levenberg-Marquardt from the current ones (module docstring). A try succeeds
    when its solution, put onto the cones (``_onto_cones``: an open contact's P of 1e-30 N s is no impulse), is
    still one (|F| at most NEWTON_TOLERANCE); it becomes the contacts' impulses and rates and True is returned;
    otherwise nothing changes. In a part of h / 2**CONTACT_SUBDIVISION or shorter (``short_part``), two more tries start
    from the best end of those (Levenberg-Marquardt steps, then proximal-point iterations, ``_proximal``: costly on
    a large island, so only where the step would fail otherwise), and where every try stalls, the best end of them
    all is taken if, on the cones, it misses F = 0 by at most INEXACT_VELOCITY (and counted in
    ``scratch.inexact[1]``). A contact whose normal the joints block (D_nn = 0) leaves the solve to the sweeps."""
    free, start = scratch.newton_vectors[0], scratch.newton_vectors[8]
    for c in range(m):
        if not scratch.dense[3 * c, 3 * c] > 0.0:
            return False
    for r in range(3 * m):
        start[r] = contacts.impulse[scratch.dense_index[r // 3], r % 3]
    for r in range(3 * m):
        total = scratch.dense_rate[r]
        for s in range(3 * m):
            total -= scratch.dense[r, s] * start[s]
        free[r] = total
    impulse, best = scratch.newton_vectors[9], scratch.newton_vectors[11]
    least = math.inf
    for attempt in range(len(_TRIES) if short_part else _EXACT_TRIES):
        origin, method = _TRIES[attempt]
        if origin == _BEST and not least < math.inf:
            break
        source = best if origin == _BEST else scratch.dense_start if origin == _SWEEPS_START else start
        for r in range(3 * m):
            impulse[r] = 0.0 if origin == _ZERO else source[r]
        if method == _SEARCH or method == _FULL:
            worst = _from(contacts, scratch, m, impulse, method == _SEARCH)
        elif method == _LEVENBERG:
            worst = _levenberg(contacts, scratch, m, impulse)
        else:
            worst = _proximal(contacts, scratch, m, impulse)
        if worst < least:
            least = worst
            for r in range(3 * m):
                best[r] = impulse[r]
        if worst <= NEWTON_TOLERANCE and _take(contacts, scratch, m, impulse, NEWTON_TOLERANCE):
            return True
    if short_part and least <= INEXACT_VELOCITY and _take(contacts, scratch, m, best, INEXACT_VELOCITY):
        scratch.inexact[1] += 1
        return True
    return False


@kernel
def _take(contacts, scratch, m, impulse, tolerance):
    """Put ``impulse`` (3m) onto the cones (``_onto_cones``) and, if it still misses F = 0 by at most ``tolerance``
    (m/s; the cones can move a solution off its equations: 1e-13 N s along a row of D_kt / D_nn ~ 1e3), make it the
    contacts' impulses and its rates ``scratch.dense_rate``. Returns whether it did."""
    _onto_cones(contacts, scratch, m, impulse)
    rate = scratch.newton_vectors[1]
    _rates(scratch, m, impulse, rate)
    if _residual(contacts, scratch, m, impulse, rate, scratch.newton_vectors[2], scratch.system, False) > tolerance:
        return False
    for r in range(3 * m):
        contacts.impulse[scratch.dense_index[r // 3], r % 3] = impulse[r]
        scratch.dense_rate[r] = rate[r]
    return True


@kernel
def _onto_cones(contacts, scratch, m, impulse):
    """Each contact's impulse (in ``impulse``, 3m) projected onto its cone: P_n >= 0, |P_t| <= mu P_n; a contact
    whose normal impulse moves its rate by no more than NEWTON_TOLERANCE (P_n D_nn, m/s) is open, P = 0."""
    for c in range(m):
        n = 3 * c
        if impulse[n] * scratch.dense[n, n] <= NEWTON_TOLERANCE:
            impulse[n] = 0.0
        limit = cone_mu(contacts, scratch.dense_index[c]) * impulse[n]
        impulse[n + 1], impulse[n + 2] = disc(impulse[n + 1], impulse[n + 2], limit)


@kernel
def _levenberg(contacts, scratch, m, impulse):
    """Levenberg-Marquardt steps from ``impulse`` (3m, overwritten by the iterates): (J^T J + lambda I) dP =
    -J^T F, a step taken if it lowers |F| (then lambda / 10), else lambda * 10; Returns max |F| at the last iterate.
    For the sets on which Newton's steps cycle whatever the start (a random set of four contacts, D of condition
    2e5: full steps and the non-monotone search stalled at 1e-3 m/s, these reached 1e-16 m/s in 13 steps).
    ``scratch.factor`` holds J^T J (upper triangle) and its factor (lower)."""
    vectors = scratch.newton_vectors
    rate, residual, gradient, step, trial, trial_rate, trial_residual, diagonal = (
        vectors[1], vectors[2], vectors[3], vectors[4], vectors[5], vectors[6], vectors[7], vectors[10])
    jacobian, normal = scratch.system, scratch.factor
    n = 3 * m
    _rates(scratch, m, impulse, rate)
    worst = _residual(contacts, scratch, m, impulse, rate, residual, jacobian, True)
    damping = -1.0
    for _ in range(NEWTON_ITERATIONS):
        if worst <= NEWTON_TOLERANCE:
            return worst
        merit, scale = 0.0, 0.0
        for i in range(n):
            gradient[i] = 0.0
            for j in range(i, n):
                normal[i, j] = 0.0
        for r in range(n):  # g = -J^T F, N = J^T J (upper), row by row of J (each sum in the order of r)
            for i in range(n):
                entry = jacobian[r, i]
                if entry == 0.0:
                    continue
                gradient[i] -= entry * residual[r]
                target, source = normal[i, i:n], jacobian[r, i:n]  # (1-D views: vectorized)
                for j in range(target.size):
                    target[j] += entry * source[j]
        for i in range(n):
            diagonal[i] = normal[i, i]
            scale = max(scale, normal[i, i])
            merit += residual[i] * residual[i]
        if damping < 0.0:
            damping = DAMPING_START * scale
        while True:
            for i in range(n):
                normal[i, i] = diagonal[i]
                for j in range(i + 1, n):
                    normal[j, i] = normal[i, j]
                step[i] = gradient[i]
            if not ridge_cholesky(normal, n, damping):
                return worst
            cholesky_solve(normal, n, step)
            for r in range(n):
                trial[r] = impulse[r] + step[r]
            _rates(scratch, m, trial, trial_rate)
            _residual(contacts, scratch, m, trial, trial_rate, trial_residual, jacobian, False)
            trial_merit = 0.0
            for r in range(n):
                trial_merit += trial_residual[r] * trial_residual[r]
            if trial_merit < merit:
                damping = max(0.1 * damping, DAMPING_LEAST * scale)
                break
            damping *= 10.0
            if damping > DAMPING_MOST * scale:
                return worst
        for r in range(n):
            impulse[r] = trial[r]
            rate[r] = trial_rate[r]
        worst = _residual(contacts, scratch, m, impulse, rate, residual, jacobian, True)
    return worst


@kernel
def _proximal(contacts, scratch, m, impulse):
    """Proximal-point iterations from ``impulse`` (3m, overwritten by the iterates): P_{k+1} solves, by Newton's
    steps with the search (``_from``), the problem of the rates u_0 + D P + eps (P - P_k), whose matrix D + eps I is
    positive definite where D is only semidefinite (dependent contacts: there Newton's steps on D can stall at a
    point from which no step of the current piece descends); a fixed point P_{k+1} = P_k solves the problem itself.
    eps = NEWTON_PROXIMAL times D's largest diagonal entry. Returns max |F| of the problem itself at the last
    iterate, after at most NEWTON_PROXIMAL_ITERATIONS of them (stopping at NEWTON_TOLERANCE)."""
    n = 3 * m
    matrix, vectors = scratch.dense, scratch.newton_vectors
    free, rate, residual, diagonal, free_rate = vectors[0], vectors[1], vectors[2], vectors[12], vectors[13]
    ridge = 0.0
    for r in range(n):
        diagonal[r], free_rate[r] = matrix[r, r], free[r]
        ridge = max(ridge, matrix[r, r])
    ridge *= NEWTON_PROXIMAL
    _rates(scratch, m, impulse, rate)
    worst = _residual(contacts, scratch, m, impulse, rate, residual, scratch.system, False)
    for _ in range(NEWTON_PROXIMAL_ITERATIONS):
        if worst <= NEWTON_TOLERANCE:
            break
        for r in range(n):
            matrix[r, r] = diagonal[r] + ridge
            free[r] = free_rate[r] - ridge * impulse[r]
        _from(contacts, scratch, m, impulse, True)
        for r in range(n):
            matrix[r, r], free[r] = diagonal[r], free_rate[r]
        _rates(scratch, m, impulse, rate)
        worst = _residual(contacts, scratch, m, impulse, rate, residual, scratch.system, False)
    return worst
