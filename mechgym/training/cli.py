"""``python training/train.py``: train one policy into a run folder (flags override the hyperparameter file)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..backends import BACKENDS
from .config import ALGORITHMS
from .runs import RunFolderError
from .train import VEC_CHOICES, TrainSettings, train


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="train.py", description=__doc__)
    parser.add_argument("--env", required=True, help="environment id, e.g. mechgym/CubeDrop-v0")
    parser.add_argument("--algo", choices=ALGORITHMS, default="ppo")
    parser.add_argument("--backend", choices=sorted(BACKENDS), help="default: the hyperparameter entry's, "
                                                                    "else mechgym")
    parser.add_argument("--physics-dt", type=float, help="physics step (s)")
    parser.add_argument("--decimation", type=int, help="physics steps per action")
    parser.add_argument("--time-limit", type=float, help="episode length (s)")
    parser.add_argument("--timesteps", type=int, help="control steps in all (default: n_timesteps of the entry)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-envs", type=int, help="parallel envs (default: n_envs of the entry)")
    parser.add_argument("--out", type=Path, required=True, help="run folder")
    parser.add_argument("--trained-agent", metavar="RUN",
                        help="start from this run folder's or shipped policy's model and observation statistics "
                             "(rl-zoo3's --trained-agent), e.g. one trained on the other backend")
    parser.add_argument("--resume", action="store_true", help="continue the run in --out from its last checkpoint")
    parser.add_argument("--tensorboard", action="store_true", help="log to <out>/tensorboard (needs tensorboard)")
    parser.add_argument("--hyperparams", type=Path, help="a hyperparameter file in rl-zoo3's format "
                                                         "(default: the shipped training/hyperparams/<algo>.yml)")
    parser.add_argument("--checkpoint-every", type=int, default=20_000, help="timesteps between checkpoints")
    parser.add_argument("--vec", choices=VEC_CHOICES, default="native",
                        help="SB3 vector env: native (the envs' physics at once on this process's threads), sync "
                             "(one env after the other) or subproc (one process per env)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    given = {"backend": args.backend, "physics_dt": args.physics_dt, "decimation": args.decimation,
             "time_limit": args.time_limit}
    if args.resume and any(value is not None for value in given.values()):
        print("train.py: error: --resume continues the run with its own env settings; drop "
              + ", ".join(f"--{k.replace('_', '-')}" for k, v in given.items() if v is not None), file=sys.stderr)
        return 2
    if args.resume and args.trained_agent is not None:
        print("train.py: error: --resume continues the run from its own checkpoint; drop --trained-agent",
              file=sys.stderr)
        return 2
    if args.tensorboard:
        try:
            import tensorboard  # noqa: F401
        except ImportError:
            print("train.py: error: --tensorboard needs the tensorboard package (pip install tensorboard)",
                  file=sys.stderr)
            return 2
    settings = TrainSettings(env_id=args.env, algo=args.algo, out=args.out, timesteps=args.timesteps,
                             seed=args.seed, n_envs=args.n_envs, env_settings=given,
                             hyperparams_file=args.hyperparams, checkpoint_every=args.checkpoint_every,
                             vec=args.vec, tensorboard=args.tensorboard, progress=not args.no_progress,
                             trained_agent=args.trained_agent)
    try:
        run = train(settings, resume=args.resume)
    except (RunFolderError, ValueError) as error:
        print(f"train.py: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    stats = run.record.get("statistics", {})
    print(f"{run.path}: {run.record['timesteps_done']} timesteps in {run.record['wall_time_s']:.0f} s; "
          + ", ".join(f"{k} {v:.3g}" for k, v in stats.items()))
    return 0
