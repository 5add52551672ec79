"""Microseconds per physics step: the mechgym engine next to MuJoCo on the same MJCF, in the same run.

    python benchmarks/bench_engine.py [--steps N]

Scenes: a torque-free asymmetric box (the Dzhanibekov top), a spinning projectile under gravity, the same
box driven by two motors and a damped position servo (velocity-dependent: implicit closing kick), a double
pendulum on two hinges and the bundled slider-crank with its walls removed (three hinges, crank at
150 rad/s): RATTLE rows, SHAKE and the velocity projection; and three contact scenes: a box resting on a
plane (four contact points), a stack of three boxes at rest and the bundled cube-drop scene (seed 003: a 5 cm
cube falls 1 m onto a 1 cm slab and rests there; contacts, continuous collision and an impact); and, with
joints and contacts together, the bundled slider-crank with its walls (the slider rattling in its notch) and
the bundled gripper at rest. Every scene runs at dt = 1 ms except the slider-crank, which runs at its own
0.1 ms. Last, the gripper lifting the card
it squeezes (the hardest contact set: eight contacts on a 1 mm card between two servoed pads), on both
backends.
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
from mechgym.scene import load_spec

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
    "double pendulum": '<mujoco><option><flag contact="disable"/></option><worldbody>'
                       '<body><joint type="hinge" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0 0 -0.5" '
                       'size="0.04" mass="1"/><body pos="0 0 -0.5"><joint type="hinge" axis="0 1 0"/>'
                       '<geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.03" mass="0.6"/></body></body>'
                       '</worldbody><keyframe><key qpos="1.6 -0.8"/></keyframe></mujoco>',
    "slider-crank": "slider_crank",
    "box on a plane": '<mujoco><worldbody><geom type="plane" size="1 1 0.1"/><body pos="0 0 0.05"><freejoint/>'
                      '<geom type="box" size="0.1 0.1 0.05" mass="1"/></body></worldbody></mujoco>',
    "3-box stack": '<mujoco><worldbody><geom type="plane" size="1 1 0.1"/>' + "".join(
        f'<body pos="0 0 {0.05 + 0.1 * k:g}"><freejoint/><geom type="box" size="0.05 0.05 0.05" mass="1"/></body>'
        for k in range(3)) + '</worldbody></mujoco>',
    "cube drop": "cube_drop",
    "slider-crank, walls": "slider_crank",
    "gripper": "gripper",
}
DT = {"slider-crank": 1e-4, "slider-crank, walls": 1e-4}  # s; every other scene: 1e-3


def spec_of(name: str) -> mujoco.MjSpec:
    """The scene's MjSpec; the bundled slider-crank loses its two walls (no contacts) except in "..., walls"."""
    spec = load_spec(SCENES[name])
    for geom in [g for g in spec.geoms if g.name.startswith("wall_") and not name.endswith("walls")]:
        spec.delete(geom)
    return spec


def model_of(name: str) -> mujoco.MjModel:
    model = spec_of(name).compile()
    model.opt.timestep = DT.get(name, 1e-3)
    return model


def best_of(repeats: int, run) -> float:
    """Smallest wall time (s) of ``repeats`` calls of ``run``."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def engine_us(name: str, steps: int, per_call: int) -> float:
    sim = mechgym.load(spec_of(name), backend="mechgym", dt=DT.get(name, 1e-3))
    sim.step(per_call)  # warm-up: compile or load the numba cache

    def run():
        for _ in range(steps // per_call):
            sim.step(per_call)

    return best_of(3, run) / steps * 1e6


def initial_data(model: mujoco.MjModel) -> mujoco.MjData:
    """MjData at the scene's first keyframe, else at qpos0 (what the simulators reset to)."""
    data = mujoco.MjData(model)
    if model.nkey:
        mujoco.mj_resetDataKeyframe(model, data, 0)
    return data


def mj_step_us(name: str, steps: int) -> float:
    model = model_of(name)
    data = initial_data(model)
    step = mujoco.mj_step

    def run():
        for _ in range(steps):
            step(model, data)

    return best_of(3, run) / steps * 1e6


def rollout_us(name: str, steps: int) -> float:
    model = model_of(name)
    data = initial_data(model)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    initial = np.empty(mujoco.mj_stateSize(model, spec))
    mujoco.mj_getState(model, data, initial, spec)
    rollout.rollout(model, data, initial, nstep=steps)  # warm-up
    return best_of(3, lambda: rollout.rollout(model, data, initial, nstep=steps)) / steps * 1e6


def squeezing_gripper(backend: str):
    """The bundled gripper on ``backend``, lowered (0.5 s) and closed (0.5 s) on its card."""
    sim = mechgym.load("gripper", backend=backend)
    sim.ctrl = [-0.07, 0.0, 0.0]
    sim.step(500)
    sim.ctrl = [-0.07, 0.035, 0.035]
    sim.step(500)
    return sim


def lift(sim, steps: int) -> None:
    """``steps`` steps of a lift whose servo target ramps at 0.12 m/s, one ``sim.step(1)`` per control update."""
    for k in range(steps):
        sim.ctrl = [-0.07 + 0.12e-3 * (k + 1), 0.035, 0.035]
        sim.step(1)


def gripper_lift_us(backend: str, steps: int = 500) -> float:
    """µs per physics step while the bundled gripper lifts the card it squeezes (``squeezing_gripper``, then
    ``lift``) on ``backend``: the Python call of each step included on both backends."""
    sim = squeezing_gripper(backend)
    start = time.perf_counter()
    lift(sim, steps)
    return (time.perf_counter() - start) / steps * 1e6


def measure(steps: int):
    """Yield one row per scene: µs per step of the engine (``step(N)``, ``step(1)``), of an ``mj_step`` loop and
    of ``mujoco.rollout``; then the gripper's lift, step(1) per control update on both backends."""
    for name in SCENES:
        yield {"scene": name, "mechgym step(N)": engine_us(name, steps, steps),
               "mechgym step(1)": engine_us(name, steps // 10, 1), "mj_step loop": mj_step_us(name, steps),
               "mj rollout": rollout_us(name, steps)}
    yield {"scene": "gripper lifting its card, step(1)", "mechgym step(1)": gripper_lift_us("mechgym"),
           "mj_step loop": gripper_lift_us("mujoco")}


def print_rows(rows, steps: int) -> None:
    columns = ("mechgym step(N)", "mechgym step(1)", "mj_step loop", "mj rollout")
    header = f"{'scene':<34} " + " ".join(f"{c:>15}" for c in columns) + f" {'mj/mechgym':>11}"
    print(f"µs per physics step, N = {steps}")
    print(header)
    print("-" * len(header))
    for row in rows:
        cells = " ".join(f"{row[c]:15.3f}" if c in row else f"{'':15}" for c in columns)
        # MuJoCo's fastest way against the engine's: rollout over step(N), else the two step(1) loops
        ratio = (row["mj rollout"] / row["mechgym step(N)"] if "mj rollout" in row
                 else row["mj_step loop"] / row["mechgym step(1)"])
        print(f"{row['scene']:<34} {cells} {ratio:10.3g}x", flush=True)
    print("mj/mechgym: MuJoCo's time over the engine's (rollout over step(N); the lift: step(1) on both)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000, help="steps per timing (default 100000)")
    steps = parser.parse_args().steps
    print_rows(measure(steps), steps)


if __name__ == "__main__":
    main()
