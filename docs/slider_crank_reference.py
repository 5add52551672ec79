"""An event-driven reference for the passive clearance slider-crank (seed 002), independent of the in-house engine:
its impacts one by one, to compare a time-stepper's impacts with (times, approach speeds, energy lost).

    python docs/slider_crank_reference.py --restitution 0.5 --until 0.2 --impacts

Smooth motion between impacts: MuJoCo's rigid-body dynamics of the `slider_crank` scene with its contacts disabled
(hinges exact, crank motor off), integrated by DOP853 at rtol 1e-12 up to the first time a slider corner reaches a
wall (scipy's event location). Impact: Newton's law on the corners touching that wall, the multi-contact problem
P >= 0, J v+ + e J v- >= 0, P (J v+ + e J v-) = 0 solved by enumerating the active sets. A sequence of ever smaller
bounces ends when the approach falls below PERSISTENT (m/s): the corners then stay on the wall (an index-1 DAE, the
normal forces from M qdd = f + J^T lambda, J qdd + dJ/dt v = 0) until their force falls to 0.

Checked against issue 14's reference (its figures in tests/physics/contact/test_contact_slider_crank_energy.py):
E(0.1, 0.2, 0.5 s) agree to 1e-5 J for e = 0.1, 0.3 and 0.5, and E(1 s) for e = 0.1 and 0.5; for e = 0.3 E(1 s) is
5.9124 J against 5.8829 J (not traced: a grazing contact between 0.5 and 1 s decided differently is the likely cause).
"""

from __future__ import annotations

import argparse
import itertools

import mujoco
import numpy as np
from scipy.integrate import solve_ivp

from mechgym.scene import compile_model

HALF_LENGTH, HALF_HEIGHT, WALL = 0.05, 0.025, 0.026  # m: the slider's half sizes, the walls' inner faces at +-WALL
CORNERS = [(sx * HALF_LENGTH, sy * HALF_HEIGHT, sy) for sy in (1, -1) for sx in (1, -1)]  # (x, y) local, wall side
PERSISTENT = 1e-5  # m/s: a bounce slower than this ends its sequence (the rest of its energy is ~1e-12 J)
TOUCHING = 1e-9  # m: corners this close to the wall at an impact take part in it
PAST_EVENT = 2e-5  # s per m/s of approach: events of the impact's corners wait this long (the gap opens ~1e-9 u^2)
KEYFRAME_VELOCITY = (150.0, -225.0, 75.0)  # rad/s, the scene's keyframe (relative hinge rates)


class Mechanism:
    """The scene's smooth dynamics and the corners' gaps, from MuJoCo with contacts off."""

    def __init__(self, restitution: float):
        self.e = restitution
        self.model = compile_model("slider_crank")
        self.model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
        self.model.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
        self.data = mujoco.MjData(self.model)
        self.slider = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_BODY, "slider")
        self.nv = self.model.nv

    def _set(self, q, v=None):
        self.data.qpos[:] = q
        self.data.qvel[:] = 0.0 if v is None else v
        mujoco.mj_forward(self.model, self.data)

    def gaps(self, q):
        """(gaps (4,) m, rows (4, nv)): each corner's distance to its wall and the gradient of that distance."""
        self._set(q)
        gaps, rows, point_jacobian = np.zeros(4), np.zeros((4, self.nv)), np.zeros((3, self.nv))
        rotation = self.data.xmat[self.slider].reshape(3, 3)
        for k, (x, y, side) in enumerate(CORNERS):
            point = self.data.xpos[self.slider] + rotation @ np.array([x, y, 0.0])
            mujoco.mj_jac(self.model, self.data, point_jacobian, None, point, self.slider)
            gaps[k] = WALL - side * point[1]
            rows[k] = -side * point_jacobian[1]
        return gaps, rows

    def mass(self, q):
        self._set(q)
        matrix = np.zeros((self.nv, self.nv))
        mujoco.mj_fullM(self.model, self.data, matrix)
        return matrix

    def free_acceleration(self, q, v):
        self._set(q, v)
        return self.data.qacc.copy()

    def held(self, q, v, held):
        """(qdd, normal forces (N)) with the corners ``held`` kept on their wall."""
        rows = self.gaps(q)[1][held]
        eps = 1e-6  # dJ/dt v by central differences along v (error ~eps^2)
        curvature = ((self.gaps(q + eps * v)[1] - self.gaps(q - eps * v)[1]) @ v / (2 * eps))[held]
        mass, free = self.mass(q), self.free_acceleration(q, v)
        coupling = rows @ np.linalg.solve(mass, rows.T)
        force = np.linalg.solve(coupling, -(rows @ free + curvature))
        return free + np.linalg.solve(mass, rows.T @ force), force

    def energy(self, q, v):
        self._set(q, v)
        return self.data.energy[0] + self.data.energy[1]

    def impact(self, q, v, corners):
        """Velocities after Newton's impact on ``corners``, and their approach speeds before (m/s)."""
        inverse = np.linalg.inv(self.mass(q))
        rows = self.gaps(q)[1][corners]
        rate = rows @ v
        target = np.where(rate < 0.0, -self.e * rate, 0.0)
        coupling = rows @ inverse @ rows.T
        for size in range(len(corners) + 1):
            for active in map(list, itertools.combinations(range(len(corners)), size)):
                impulse = np.zeros(len(corners))
                if active:
                    impulse[active] = np.linalg.lstsq(coupling[np.ix_(active, active)], target[active] - rate[active],
                                                      rcond=None)[0]
                if (impulse >= -1e-14).all() and (rate + coupling @ impulse >= target - 1e-12).all():
                    return v + inverse @ rows.T @ impulse, -rate
        raise RuntimeError("Newton's impact problem has no solution")


def simulate(restitution: float, until: float, times: list[float]):
    """(E at each of ``times`` (J), impacts as (t s, approach m/s, energy lost J))."""
    mech = Mechanism(restitution)
    q, v, t = np.zeros(mech.nv), np.array(KEYFRAME_VELOCITY), 0.0
    held, waiting, wait_until = [], [], -1.0
    energies, impacts = [], []
    stops = sorted(x for x in times if x <= until)
    while t < until - 1e-15:
        if t >= wait_until:
            waiting = []
        current = list(held)

        def rhs(_, y, current=current):
            acceleration = mech.held(y[:mech.nv], y[mech.nv:], current)[0] if current else mech.free_acceleration(
                y[:mech.nv], y[mech.nv:])
            return np.concatenate([y[mech.nv:], acceleration])

        events = [_event(mech, k, current, waiting) for k in range(4)]
        end = min([x for x in stops if x > t + 1e-15] + [until] + ([wait_until] if waiting else []))
        solution = solve_ivp(rhs, (t, end), np.concatenate([q, v]), method="DOP853", rtol=1e-12, atol=1e-14,
                             events=events)
        q, v, t = solution.y[:mech.nv, -1].copy(), solution.y[mech.nv:, -1].copy(), solution.t[-1]
        hit = [k for k in range(4) if len(solution.t_events[k])]
        if not hit:
            if any(abs(t - x) < 1e-13 for x in stops):
                energies.append(mech.energy(q, v))
            continue
        if hit[0] in held:  # lift-off: every held corner whose force has reached 0 (level corners together)
            force = mech.held(q, v, held)[1]
            held = [j for j, f in zip(held, force, strict=True) if j != hit[0] and f > 1e-9]
            continue
        gaps, rows = mech.gaps(q)
        corners = [j for j in range(4) if gaps[j] < TOUCHING and CORNERS[j][2] == CORNERS[hit[0]][2]]
        if (rows[corners] @ v).min() >= 0.0:  # touching but not closing (a segment's first instant): step past
            waiting, wait_until = corners, t + 1e-9
            continue
        before = mech.energy(q, v)
        v, approach = mech.impact(q, v, corners)
        impacts.append((t, approach.max(), before - mech.energy(q, v)))
        waiting, wait_until = corners, t + PAST_EVENT * approach.max()
        if approach.max() < PERSISTENT:
            force = mech.held(q, v, corners)[1]
            held = [j for j, f in zip(corners, force, strict=True) if f > 0.0]
            if held:  # on the wall: the velocity projected onto its constraints
                inverse, rows = np.linalg.inv(mech.mass(q)), mech.gaps(q)[1][held]
                v = v - inverse @ rows.T @ np.linalg.solve(rows @ inverse @ rows.T, rows @ v)
    return energies, impacts


def _event(mech: Mechanism, corner: int, held: list[int], waiting: list[int]):
    """Corner ``corner``'s event: its gap reaching 0, or (held) its normal force reaching 0."""
    if corner in waiting:
        def event(_, y):
            return 1.0
    elif corner in held:
        def event(_, y):
            return mech.held(y[:mech.nv], y[mech.nv:], held)[1][held.index(corner)]
    else:
        def event(_, y):
            return mech.gaps(y[:mech.nv])[0][corner]
    event.terminal, event.direction = True, -1
    return event


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--restitution", type=float, default=0.5)
    parser.add_argument("--until", type=float, default=0.5, help="s")
    parser.add_argument("--impacts", action="store_true", help="list every impact that loses over 1e-7 J")
    args = parser.parse_args()
    times = [x for x in (0.1, 0.2, 0.5, 1.0, 2.0, 4.0) if x <= args.until]
    energies, impacts = simulate(args.restitution, args.until, times)
    for t, energy in zip(times, energies, strict=True):
        print(f"E({t:g} s) = {energy:.6f} J")
    if args.impacts:
        for t, approach, lost in impacts:
            if lost > 1e-7:
                print(f"impact at {t:.6f} s, approach {approach:.5f} m/s, {lost:.7f} J lost")


if __name__ == "__main__":
    main()
