"""The velocity Verlet step as named stages, and the compiled kernel that runs many steps for many worlds.

One step of length h from t_k = k h (k = the global step index, so time is never accumulated):

  opening kick   v <- v + h/2 (g + F(x_k, v_k)/m) + J[t_k, t_k + h/2)/m,   L <- L + h/2 T(x_k, v_k) + J_T[...]
  drift          c <- c + h v;  q <- free-rotor flow of h with L fixed (rotation.free_rotor_drift)
  closing kick   v' = v + h/2 (g + F(x_{k+1}, v')/m) + J[t_k + h/2, t_{k+1})/m  (and L' likewise)

F, T: smooth (fluid, damping, actuator) wrenches about the COM; J: exact impulses of the applied force
windows over the half-step each kick serves; g: gravity. The closing kick is implicit in the velocity
when any force depends on it, and is solved by fixed-point iteration: the map v' -> v + h/2 F(v')/m
contracts with factor about h |dF/dv| / (2m), and each iteration gains that factor, so iterating to
round-off keeps the step second order (trapezoidal in the velocity-dependent forces). Without
velocity-dependent forces one evaluation is exact, and a constant acceleration is integrated exactly:
c_{k+1} = c_k + h v_k + h^2 a / 2.

Performance: a compiled call that receives the model's named tuples of arrays pays reference counting
per array (~15 ns each, ~0.4 us per call for Engine I's tuples), and so does every array slice, so the
per-step functions that take the tuples and that LLVM would not inline by itself (closing_kick,
smooth_wrench and the force terms) are inlined at Numba IR level (``inline="always"``), and the force
code works on scalars (``rotation.rot``/``mul``) rather than on slices.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .forces import smooth_wrench, window_impulse
from .kinematics import FRAME_SIZE
from .rotation import free_rotor_drift

# Fixed-point iteration of the closing kick: stop when every update is below TOLERANCE times the size of
# the terms summed (|v_half| + |dv|), i.e. at round-off; give up after MAX_ITERATIONS (too stiff for h).
TOLERANCE = 1e-14
MAX_ITERATIONS = 100

OK, NON_FINITE, NOT_CONVERGED = 0, 1, 2


@njit(cache=True)
def opening_kick(bodies, env, state, world, half, wrench, impulse):
    """v += half (g + F/m) + J/m;  L += half T + J_T  (``half`` = h/2 s). Also the closing kick when no
    force depends on the velocity."""
    for b in range(wrench.shape[0]):
        inv_mass = bodies.inv_mass[b]
        for i in range(3):
            state.vel[world, b, i] += half * (env.gravity[i] + wrench[b, i] * inv_mass) + impulse[b, i] * inv_mass
            state.momentum[world, b, i] += half * wrench[b, 3 + i] + impulse[b, 3 + i]


@njit(cache=True)
def drift(bodies, state, world, h):
    """c += h v; the principal frame turns by the free-rotor flow of ``h`` seconds at fixed L."""
    for b in range(state.com.shape[1]):
        for i in range(3):
            state.com[world, b, i] += h * state.vel[world, b, i]
        free_rotor_drift(state.quat[world, b], bodies.inv_inertia[b], state.momentum[world, b], h)


@njit(cache=True, inline="always")
def closing_kick(bodies, actuators, env, state, world, ctrl, half, impulse, start, frames, wrench):
    """Solve v' = v + half (g + F(v')/m) + J/m (and L' likewise) by fixed-point iteration.

    On entry ``wrench`` holds the opening kick's F_k: the first iterate v + half (g + F_k/m) + J/m is
    v_k + h a_k (up to the windows), off by O(h^2) instead of the O(h) of starting from v, which saves an
    iteration. ``start`` (B, 6) is scratch for the half-step (v, L). Returns False if it did not converge.
    """
    for b in range(start.shape[0]):
        for i in range(3):
            start[b, i] = state.vel[world, b, i]
            start[b, 3 + i] = state.momentum[world, b, i]
    for iteration in range(MAX_ITERATIONS):
        if iteration > 0:
            smooth_wrench(bodies, actuators, env, state, world, ctrl, frames, wrench)
        converged = iteration > 0
        for b in range(start.shape[0]):
            inv_mass = bodies.inv_mass[b]
            for i in range(3):
                dv = half * (env.gravity[i] + wrench[b, i] * inv_mass) + impulse[b, i] * inv_mass
                new = start[b, i] + dv
                converged &= abs(new - state.vel[world, b, i]) <= TOLERANCE * (abs(start[b, i]) + abs(dv))
                state.vel[world, b, i] = new
                dl = half * wrench[b, 3 + i] + impulse[b, 3 + i]
                new = start[b, 3 + i] + dl
                converged &= abs(new - state.momentum[world, b, i]) <= TOLERANCE * (abs(start[b, 3 + i]) + abs(dl))
                state.momentum[world, b, i] = new
        if converged:
            return True
    return False


@njit(cache=True)
def _finite(state, world):
    for b in range(state.com.shape[1]):
        for i in range(3):
            if not (math.isfinite(state.com[world, b, i]) and math.isfinite(state.vel[world, b, i])
                    and math.isfinite(state.momentum[world, b, i]) and math.isfinite(state.quat[world, b, i])):
                return False
        if not math.isfinite(state.quat[world, b, 3]):
            return False
    return True


@njit(cache=True)
def _copy_world(source, target, world, back):
    """Copy one world's state to the (B, 13) scratch ``target`` (back=False) or from it (back=True)."""
    for b in range(source.com.shape[1]):
        for i in range(3):
            if back:
                source.com[world, b, i] = target[b, i]
                source.vel[world, b, i] = target[b, 3 + i]
                source.momentum[world, b, i] = target[b, 6 + i]
            else:
                target[b, i] = source.com[world, b, i]
                target[b, 3 + i] = source.vel[world, b, i]
                target[b, 6 + i] = source.momentum[world, b, i]
        for i in range(4):
            if back:
                source.quat[world, b, i] = target[b, 9 + i]
            else:
                target[b, 9 + i] = source.quat[world, b, i]


@njit(cache=True)
def advance(bodies, actuators, env, windows, state, ctrl, first_step, n, h, status):
    """Advance every world of ``state`` by ``n`` steps of ``h`` seconds, starting at global step
    ``first_step``; ``ctrl`` (W, U) is held. status[w] = (steps completed, OK | NON_FINITE | NOT_CONVERGED):
    a world stops at its first failing step and is left as that step found it, so no failed (non-finite
    or unconverged) state is ever kept."""
    nbody = state.com.shape[1]
    saved = np.empty((nbody, 13))
    frames = np.empty((nbody, FRAME_SIZE))
    wrench = np.zeros((nbody, 6))
    impulse = np.empty((nbody, 6))
    start = np.empty((nbody, 6))
    half = 0.5 * h
    for world in range(state.com.shape[0]):
        status[world, 0] = n
        status[world, 1] = OK
        for k in range(n):
            t0 = (first_step + k) * h
            t_mid = t0 + half
            t1 = (first_step + k + 1) * h
            _copy_world(state, saved, world, False)
            # Scenes without smooth forces keep wrench = 0 and skip its evaluation.
            if env.smooth:
                smooth_wrench(bodies, actuators, env, state, world, ctrl[world], frames, wrench)
            window_impulse(windows, world, t0, t_mid, impulse)
            opening_kick(bodies, env, state, world, half, wrench, impulse)
            drift(bodies, state, world, h)
            window_impulse(windows, world, t_mid, t1, impulse)
            converged = True
            if env.implicit:
                converged = closing_kick(bodies, actuators, env, state, world, ctrl[world], half, impulse, start,
                                         frames, wrench)
            else:
                if env.smooth:
                    smooth_wrench(bodies, actuators, env, state, world, ctrl[world], frames, wrench)
                opening_kick(bodies, env, state, world, half, wrench, impulse)
            code = OK if converged else NOT_CONVERGED
            if code == OK and not _finite(state, world):
                code = NON_FINITE
            if code != OK:
                _copy_world(state, saved, world, True)
                status[world, 0] = k
                status[world, 1] = code
                break
