"""The ``mechgym`` command line."""

from __future__ import annotations

import argparse
import sys

from .backends import BACKENDS
from .errors import SceneError
from .evaluation.runner import default_workers
from .registration import ENVIRONMENTS
from .rollout import POLICIES


def _sweep_cube_drop(args: argparse.Namespace) -> int:
    from .robustness import cube_drop, report

    log = report.CsvLog(args.out) if args.out else None
    done = log.read() if log else []
    if done:
        print(f"resuming: {len(done)} finished runs read from {args.out}", file=sys.stderr)
    results = cube_drop.sweep(args.backend, [ms / 1000 for ms in args.dt_ms], done=done,
                              on_result=log.append if log else None, workers=args.workers, ray=args.ray,
                              progress=True)
    print(report.format_table(results), flush=True)
    if args.plot:
        report.plot(results, args.plot)
        print(f"plot written to {args.plot}", file=sys.stderr)
    return 0


def _env_id(name: str) -> str:
    """A registered id, with or without its ``mechgym/`` namespace."""
    env_id = name if name.startswith("mechgym/") else f"mechgym/{name}"
    if env_id not in ENVIRONMENTS:
        raise argparse.ArgumentTypeError(f"unknown environment {name!r}; environments are {sorted(ENVIRONMENTS)}")
    return env_id


def _make_env(args: argparse.Namespace, backend: str, **extra):
    import gymnasium

    settings = {key: getattr(args, key) for key in ("physics_dt", "decimation", "time_limit")
                if getattr(args, key) is not None}
    return gymnasium.make(args.env, backend=backend, **settings, **extra)


def _rollout(args: argparse.Namespace) -> int:
    from .rollout import make_policy, run_episodes, summary

    print(f"{args.env}, policy {args.policy}, seeds from {args.seed}")
    for backend in args.backend:
        env = _make_env(args, backend)
        policy = make_policy(args.policy, env, args.seed)
        episodes = []
        count = {"episodes": args.episodes} if args.steps is None else {"steps": args.steps}
        for episode in run_episodes(env, policy, args.seed, **count):
            episodes.append(episode)
            if args.verbose:
                detail = f"  ({episode.error})" if episode.error else ""
                print(f"  {backend} seed {episode.seed}: {episode.outcome} at t = {episode.time:.3f} s, "
                      f"return {episode.total_reward:.3f}{detail}", flush=True)
        result = summary(episodes)
        failures = ", ".join(f"{name} {n}" for name, n in result["failures"].items()) or "none"
        unwrapped = env.unwrapped
        print(f"{backend:>8} (physics_dt {unwrapped.physics_dt:g} s, decimation {unwrapped.decimation}): "
              f"{result['successes']}/{result['episodes']} successes in {result['steps']} steps; failures: "
              f"{failures}; mean return {result['mean_return']:.3f}, mean length {result['mean_length']:.3f} s; "
              f"{result['wall_time']:.1f} s wall", flush=True)
        env.close()
    return 0


def _floats(text: str) -> list[float]:
    try:
        return [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None


def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _evaluate(args: argparse.Namespace) -> int:
    from .evaluation.evaluate import evaluate

    result = evaluate(args.runs, [_env_id(e) for e in args.passive], args.backends, args.physics_dt, args.hold,
                      args.episodes, args.seed, args.out, scripted=[_env_id(e) for e in args.scripted],
                      workers=args.workers, ray=args.ray,
                      gifs=not args.no_gifs, command=["mechgym", *sys.argv[1:]])
    print(result.table)
    print(f"report: {result.out / 'report.md'} ({result.computed} cells run now, "
          f"{len(result.cells) - result.computed} read back)", file=sys.stderr)
    return 0


def _demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    run_demo(args.out, args.episodes, args.workers, args.ray, args.train)
    return 0


def _record(args: argparse.Namespace) -> int:
    from .record import record_episode, write_video
    from .rollout import make_policy

    env = _make_env(args, args.backend, render_mode="rgb_array", render_size=(args.width, args.height))
    frames, episode = record_episode(env, make_policy(args.policy, env, args.seed), args.seed, args.fps,
                                     args.slow_motion)
    env.close()
    write_video(frames, args.out, args.fps)
    print(f"{len(frames)} frames of {episode.time:.3f} s ({episode.outcome}) written to {args.out}")
    return 0


def _env_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("env", type=_env_id, help=f"environment id, one of {sorted(ENVIRONMENTS)}")
    parser.add_argument("--policy", choices=POLICIES, default="scripted",
                        help="the task's hand-written controller, zero actions, or uniform random actions")
    parser.add_argument("--seed", type=int, default=0, help="reset seed of the first episode")
    parser.add_argument("--physics-dt", type=float, help="physics step in s (default: the env's)")
    parser.add_argument("--decimation", type=int, help="physics steps per action (default: the env's)")
    parser.add_argument("--time-limit", type=float, help="episode length in s (default: the env's)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mechgym", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="the main job: the shipped policies across physics steps on both "
                                            "backends, with tables and a report")
    demo.add_argument("--out", default="mechgym-demo", help="report folder (an existing one is resumed)")
    demo.add_argument("--episodes", type=int, default=10, help="seeded episodes per cell")
    demo.add_argument("--workers", type=int, default=default_workers(), help="local worker processes")
    demo.add_argument("--ray", metavar="ADDRESS", help="run the cells on Ray ('local' starts it here)")
    demo.add_argument("--train", action="store_true", help="first train a small CubeDrop policy, and evaluate "
                                                           "it too")
    demo.set_defaults(run=_demo)
    rollout = commands.add_parser("rollout", help="run episodes of an environment with a hand-written, zero or "
                                                  "random policy and count successes and failures")
    _env_arguments(rollout)
    rollout.add_argument("--backend", nargs="+", choices=sorted(BACKENDS), default=["mechgym"])
    rollout.add_argument("--episodes", type=int, default=10, help="number of episodes (seeds seed, seed + 1, ...)")
    rollout.add_argument("--steps", type=int, help="run episodes until this many control steps instead")
    rollout.add_argument("--verbose", action="store_true", help="one line per episode")
    rollout.set_defaults(run=_rollout)
    record = commands.add_parser("record", help="write one episode as a GIF or MP4")
    _env_arguments(record)
    record.add_argument("--backend", choices=sorted(BACKENDS), default="mechgym")
    record.add_argument("--out", required=True, help="output file, .gif or .mp4")
    record.add_argument("--fps", type=float, default=30.0, help="frames per second of the video")
    record.add_argument("--slow-motion", type=float, default=1.0, help="video seconds per simulated second")
    record.add_argument("--width", type=int, default=640)
    record.add_argument("--height", type=int, default=480)
    record.set_defaults(run=_record)
    evaluate = commands.add_parser(
        "evaluate", help="dt-robustness: run policies on a grid of backends x physics steps, with a report")
    evaluate.add_argument("runs", nargs="*", help="run folders or shipped policy names")
    evaluate.add_argument("--passive", action="append", default=[], metavar="ENV_ID",
                          help="also evaluate zero actions on this environment (repeatable)")
    evaluate.add_argument("--scripted", action="append", default=[], metavar="ENV_ID",
                          help="also evaluate this environment's hand-written controller (repeatable)")
    evaluate.add_argument("--backends", type=_names, default=["mechgym", "mujoco"],
                          help="comma-separated evaluation backends (default mechgym,mujoco)")
    evaluate.add_argument("--physics-dt", type=_floats, default=[0.0005, 0.001, 0.002, 0.004],
                          help="comma-separated physics steps in s (default 0.0005,0.001,0.002,0.004)")
    evaluate.add_argument("--hold", choices=("control", "decimation"), default="control",
                          help="keep the trained control period (decimation = period / physics_dt) or the "
                               "trained decimation")
    evaluate.add_argument("--episodes", type=int, default=20, help="seeded episodes per cell")
    evaluate.add_argument("--seed", type=int, default=0, help="seed of each cell's first episode")
    evaluate.add_argument("--workers", type=int, default=default_workers(), help="local worker processes")
    evaluate.add_argument("--ray", metavar="ADDRESS", help="run the cells as Ray tasks on this cluster, or "
                                                          "'local' to start Ray here")
    evaluate.add_argument("--no-gifs", action="store_true", help="no GIF of each cell's first failing episode")
    evaluate.add_argument("--out", required=True, help="output folder (an existing one is resumed)")
    evaluate.set_defaults(run=_evaluate)
    sweep = commands.add_parser("sweep", help="dt sweeps of passive scenes")
    scenes = sweep.add_subparsers(dest="scene", required=True)
    drop = scenes.add_parser("cube-drop", help="seed 003: a 5 cm cube dropped onto a 1 cm slab")
    drop.add_argument("--backend", nargs="+", choices=sorted(BACKENDS), default=["mujoco"],
                      help="one or more backends, shown side by side")
    drop.add_argument("--dt-ms", nargs="+", type=float, default=list(_dt_default()),
                      help="physics steps in ms (default: seed 003's 15 values)")
    drop.add_argument("--out", help="CSV file; finished runs are appended as they end, and an existing file "
                                    "is resumed")
    drop.add_argument("--plot", help="PNG file for the plot")
    drop.add_argument("--workers", type=int, default=1, help="local worker processes (default 1)")
    drop.add_argument("--ray", metavar="ADDRESS", help="run on Ray ('local' starts it here)")
    drop.set_defaults(run=_sweep_cube_drop)
    return parser


def _dt_default():
    from .robustness.cube_drop import DT_MS

    return DT_MS


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (SceneError, NotImplementedError, ValueError) as error:
        print(f"mechgym: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nmechgym: interrupted; finished cells and runs are kept, and the same command resumes",
              file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
