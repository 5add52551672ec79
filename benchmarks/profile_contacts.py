"""Per-stage cost of the contact scenes of ``bench_engine``: µs per step and solver sweeps per step.

    python benchmarks/profile_contacts.py [--steps N]

An instrumented copy of ``step.advance``'s path for scenes of free bodies with contacts and nothing else
(no constraint rows, no velocity-dependent forces, no force windows) runs N steps and reads the CPU's cycle
counter (``llvm.readcyclecounter``) between the stages; cycles become µs by the wall time of the whole run.
The stages are those of ``step.advance``; find_contacts is split into its parts (previous set and geom poses,
continuous collision, AABBs, broad phase, narrow phase and rows, classification) by running them one by one
as find_contacts does. Not a test, nothing is asserted; the numbers are for finding hot spots.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from bench_engine import SCENES, spec_of
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

import mechgym
from mechgym.physics.collision import geom_aabbs, sweep_pairs
from mechgym.physics.collision.broad import can_collide
from mechgym.physics.constraints import new_workspace
from mechgym.physics.contact import HELD_FLOATS, HELD_INTS, MARGIN, correct_positions, keep_contacts, warm_start
from mechgym.physics.contact.detect import _add_contact, _classify, _collide_pair, _first_touch, _pose_at
from mechgym.physics.contact.sets import FILTER_PARENT, body_geoms_at, geom_poses
from mechgym.physics.contact.solve import settle_impacts, solve_contacts
from mechgym.physics.forces import smooth_wrench
from mechgym.physics.kinematics import FRAME_SIZE
from mechgym.physics.step import _copy_world, _finite, drift, opening_kick

STAGES = ("save", "opening kick", "warm start", "begin step", "drift", "prev set + poses", "ccd (_first_touch)",
          "aabbs", "broad phase", "narrow + rows", "classify", "correct positions", "closing kick", "solve contacts",
          "settle impacts", "finite check")
DT = 1e-3  # s, as bench_engine
CONTACT_SCENES = ("box on a plane", "3-box stack", "cube drop")


@intrinsic
def _cycles(typingctx):
    """The CPU's cycle counter (``llvm.readcyclecounter``)."""
    def codegen(context, builder, signature, args):
        function = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(64), []),
                                                  "llvm.readcyclecounter")
        return builder.call(function, [])
    return types.uint64(), codegen


@njit
def _find_contacts(geoms, bodies, state, world, h, com0, quat0, contacts, scratch, env, t_end, clock, cycles):
    """detect.find_contacts (sweep=True, settled=False), timed part by part into ``cycles``[5:11]."""
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
            contacts.prev_force[i, k] = contacts.force[i, k]
    contacts.prev_count[world] = kept
    contacts.count[world] = 0
    geom_poses(geoms, state, world, scratch)
    now = _cycles()
    cycles[5] += now - clock
    clock = now
    for b in range(scratch.sweep_s.size):
        scratch.sweep_s[b] = _first_touch(geoms, bodies, state, world, b, h, com0, quat0, scratch, MARGIN)
        body_geoms_at(geoms, b, state.com[world, b], state.quat[world, b], scratch)
    now = _cycles()
    cycles[6] += now - clock
    clock = now
    geom_aabbs(geoms.type, geoms.size, scratch.pos, scratch.mat, MARGIN, scratch.lo, scratch.hi)
    now = _cycles()
    cycles[7] += now - clock
    clock = now
    pairs = sweep_pairs(scratch.lo, scratch.hi, scratch.axis[0], scratch.order, geoms.weld, geoms.parent,
                        geoms.contype, geoms.conaffinity, FILTER_PARENT, scratch.pairs)
    now = _cycles()
    cycles[8] += now - clock
    clock = now
    for p in range(pairs):
        g1, g2 = scratch.pairs[p, 0], scratch.pairs[p, 1]
        a, b = geoms.body[g1], geoms.body[g2]
        if (a < 0 and scratch.sweep_s[b] >= 0.0) or (b < 0 and scratch.sweep_s[a] >= 0.0):
            continue
        found = _collide_pair(geoms, scratch, g1, g2, MARGIN)
        for k in range(found):
            _add_contact(geoms, bodies, state, world, contacts, g1, g2, k, scratch, com0, -1.0, h)
    for b in range(scratch.sweep_s.size):
        s = scratch.sweep_s[b]
        if s < 0.0:
            continue
        _pose_at(geoms, bodies, state, world, b, s, h, com0, quat0, scratch)
        for g in range(geoms.type.size):
            if geoms.body[g] != b:
                continue
            for t in range(geoms.type.size):
                if geoms.body[t] >= 0 or not can_collide(g, t, geoms.weld, geoms.parent, geoms.contype,
                                                         geoms.conaffinity, FILTER_PARENT):
                    continue
                g1, g2 = min(g, t), max(g, t)
                for k in range(_collide_pair(geoms, scratch, g1, g2, MARGIN)):
                    _add_contact(geoms, bodies, state, world, contacts, g1, g2, k, scratch, com0, s, h)
        body_geoms_at(geoms, b, state.com[world, b], state.quat[world, b], scratch)
    now = _cycles()
    cycles[9] += now - clock
    clock = now
    _classify(bodies, env, state, world, t_end, h, contacts, scratch, False)
    now = _cycles()
    cycles[10] += now - clock
    return now


@njit
def profile(bodies, actuators, env, geoms, state, contacts, scratch, ctrl, first_step, n, h, cycles, sweeps):
    """advance's contact path for world 0, n steps; ``cycles`` (len(STAGES),) and ``sweeps`` (2,) (position,
    velocity solve) accumulate. Stops (returning the step) at a step advance would reject."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    held = np.empty(2, dtype=np.int64)
    held_ints = np.empty((capacity, HELD_INTS), dtype=np.int64)
    held_floats = np.empty((capacity, HELD_FLOATS))
    nbody = state.com.shape[1]
    saved = np.empty((nbody, 13))
    wrench = np.zeros((nbody, 6))
    frames = np.empty((nbody, FRAME_SIZE))
    impulse = np.zeros((nbody, 6))
    work = new_workspace(nbody, 0)
    half = 0.5 * h
    for k in range(n):
        t1 = (first_step + k + 1) * h
        clock = _cycles()
        _copy_world(state, saved, 0, False)
        keep_contacts(contacts, 0, held, held_ints, held_floats, False)
        now = _cycles()
        cycles[0] += now - clock
        clock = now
        if env.smooth:
            smooth_wrench(bodies, actuators, env, state, 0, ctrl[0], frames, wrench)
        opening_kick(bodies, env, state, 0, half, wrench, impulse)
        now = _cycles()
        cycles[1] += now - clock
        clock = now
        warm_start(bodies, state, 0, h, contacts)
        now = _cycles()
        cycles[2] += now - clock
        clock = now
        for b in range(nbody):
            for i in range(3):
                work.com0[b, i] = state.com[0, b, i]
            for i in range(4):
                work.quat0[b, i] = state.quat[0, b, i]
        now = _cycles()
        cycles[3] += now - clock
        clock = now
        drift(bodies, state, 0, h)
        now = _cycles()
        cycles[4] += now - clock
        clock = _find_contacts(geoms, bodies, state, 0, h, work.com0, work.quat0, contacts, scratch, env, t1, now,
                               cycles)
        if contacts.count[0] > capacity:
            return k
        used = correct_positions(bodies, state, 0, contacts, scratch)
        now = _cycles()
        cycles[11] += now - clock
        clock = now
        if used < 0:
            return k
        sweeps[0] += used
        if env.smooth:
            smooth_wrench(bodies, actuators, env, state, 0, ctrl[0], frames, wrench)
        opening_kick(bodies, env, state, 0, half, wrench, impulse)
        now = _cycles()
        cycles[12] += now - clock
        clock = now
        used = solve_contacts(bodies, state, 0, h, contacts, scratch)
        now = _cycles()
        cycles[13] += now - clock
        clock = now
        if used < 0:
            return k
        sweeps[1] += used
        used = settle_impacts(bodies, env, state, 0, h, contacts, scratch)
        now = _cycles()
        cycles[14] += now - clock
        clock = now
        if used < 0:
            return k
        sweeps[1] += used
        if not _finite(state, 0):
            return k
        cycles[15] += _cycles() - clock
    return n


def profile_scene(name: str, steps: int) -> tuple[np.ndarray, np.ndarray, float]:
    """(µs per step of each stage, sweeps per step (position, velocity), µs per step of sim.step(steps))."""
    sim = mechgym.load(spec_of(SCENES[name]), backend="mechgym", dt=DT)
    engine = sim.engine
    assert engine.env.contacts and not engine.env.implicit and engine.linkage.rows.kind.size == 0
    sim.step(steps)
    sim.reset()
    start = time.perf_counter()
    sim.step(steps)
    reference = (time.perf_counter() - start) / steps * 1e6
    best = None
    for _ in range(3):
        sim.reset()
        cycles, sweeps = np.zeros(len(STAGES), dtype=np.uint64), np.zeros(2, dtype=np.int64)
        start = time.perf_counter()
        done = profile(engine.bodies, engine.actuators, engine.env, engine.geoms, sim._state, sim._contacts,
                       sim._scratch, sim._ctrl, 0, steps, DT, cycles, sweeps)
        wall = time.perf_counter() - start
        assert done == steps, f"{name}: a step failed at {done}"
        per_cycle = wall / float(cycles.sum())
        us = cycles.astype(float) * per_cycle / steps * 1e6
        if best is None or us.sum() < best[0].sum():
            best = (us, sweeps / steps)
    return best[0], best[1], reference


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000, help="steps per scene (default 20000)")
    steps = parser.parse_args().steps
    results = {name: profile_scene(name, steps) for name in CONTACT_SCENES}
    print(f"µs per step, N = {steps}")
    print(f"{'stage':<20}" + "".join(f"{name:>16}" for name in CONTACT_SCENES))
    for s, stage in enumerate(STAGES):
        print(f"{stage:<20}" + "".join(f"{results[name][0][s]:>16.3f}" for name in CONTACT_SCENES))
    print(f"{'total (profiled)':<20}" + "".join(f"{results[name][0].sum():>16.3f}" for name in CONTACT_SCENES))
    print(f"{'sim.step(N)':<20}" + "".join(f"{results[name][2]:>16.3f}" for name in CONTACT_SCENES))
    print(f"{'position sweeps':<20}" + "".join(f"{results[name][1][0]:>16.2f}" for name in CONTACT_SCENES))
    print(f"{'velocity sweeps':<20}" + "".join(f"{results[name][1][1]:>16.2f}" for name in CONTACT_SCENES))


if __name__ == "__main__":
    main()
