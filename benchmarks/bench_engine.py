"""Microseconds per physics step: the mechgym engine next to MuJoCo on the same MJCF, in the same run.

    python benchmarks/bench_engine.py [--steps N]

Scenes: a torque-free asymmetric box (the Dzhanibekov top), a spinning projectile under gravity, and the
same box driven by two motors and a damped position servo (velocity-dependent: implicit closing kick).
Columns:
  mechgym sim.step(N)   the in-house engine, N steps in one compiled call (numba compile excluded by a warm-up)
  mechgym sim.step(1)   the same engine called once per step (Python overhead included)
  mj_step loop          ``mujoco.mj_step`` called N times from Python (what the MuJoCo backend does)
  mj rollout            ``mujoco.rollout``: N steps of mj_step in one C call
Best of three repeats; not a test, nothing is asserted.
"""

from __future__ import annotations

import argparse
import time

import mujoco
import numpy as np
from mujoco import rollout

import mechgym
from mechgym.scene import compile_model

_BOX = ('<body name="b"><freejoint name="b_free"/><geom type="box" size="0.15 0.1 0.05" mass="1" contype="0" '
        'conaffinity="0"/></body>')
SCENES = {
    "free body (top)": f'<mujoco><option gravity="0 0 0"/><worldbody>{_BOX}</worldbody><keyframe>'
                       '<key qpos="0 0 0 1 0 0 0" qvel="0 0 0 0.01 10 0.01"/></keyframe></mujoco>',
    "projectile": f'<mujoco><worldbody>{_BOX}</worldbody><keyframe>'
                  '<key qpos="0 0 1 1 0 0 0" qvel="3 0 4 0 2 0"/></keyframe></mujoco>',
    "thrusters + servo": f'<mujoco><worldbody>{_BOX}</worldbody><actuator>'
                         '<motor joint="b_free" gear="1 0 0 0 0 0" ctrllimited="true" ctrlrange="-2 2"/>'
                         '<motor joint="b_free" gear="0 0 1 0 0 0" ctrllimited="true" ctrlrange="-2 2"/>'
                         '<position joint="b_free" gear="0 1 0 0 0 0" kp="5" kv="1"/></actuator><keyframe>'
                         '<key qpos="0 0 1 1 0 0 0" qvel="3 0 4 0 2 0" ctrl="0.5 1 0.2"/></keyframe></mujoco>',
}
DT = 0.001


def best_of(repeats: int, run) -> float:
    """Smallest wall time (s) of ``repeats`` calls of ``run``."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def engine_us(xml: str, steps: int, per_call: int) -> float:
    sim = mechgym.load(xml, backend="mechgym", dt=DT)
    sim.step(per_call)  # warm-up: compile or load the numba cache

    def run():
        for _ in range(steps // per_call):
            sim.step(per_call)

    return best_of(3, run) / steps * 1e6


def mj_step_us(xml: str, steps: int) -> float:
    model = compile_model(xml)
    model.opt.timestep = DT
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, 0)
    step = mujoco.mj_step

    def run():
        for _ in range(steps):
            step(model, data)

    return best_of(3, run) / steps * 1e6


def rollout_us(xml: str, steps: int) -> float:
    model = compile_model(xml)
    model.opt.timestep = DT
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, 0)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    initial = np.empty(mujoco.mj_stateSize(model, spec))
    mujoco.mj_getState(model, data, initial, spec)
    rollout.rollout(model, data, initial, nstep=steps)  # warm-up
    return best_of(3, lambda: rollout.rollout(model, data, initial, nstep=steps)) / steps * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000, help="steps per timing (default 100000)")
    steps = parser.parse_args().steps
    header = (f"{'scene':<18} {'mechgym step(N)':>16} {'mechgym step(1)':>16} {'mj_step loop':>13} "
              f"{'mj rollout':>11} {'mj_step/mechgym':>16}")
    print(f"µs per step, dt = {DT} s, N = {steps}")
    print(header)
    print("-" * len(header))
    for name, xml in SCENES.items():
        batched = engine_us(xml, steps, steps)
        single = engine_us(xml, steps // 10, 1)
        looped = mj_step_us(xml, steps)
        rolled = rollout_us(xml, steps)
        print(f"{name:<18} {batched:>16.3f} {single:>16.3f} {looped:>13.3f} {rolled:>11.3f} "
              f"{rolled / batched:>15.1f}x")
    print("mj_step/mechgym: MuJoCo's C-loop time (rollout) over the engine's batched time")


if __name__ == "__main__":
    main()
