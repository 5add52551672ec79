"""Running one cell: its seeded episodes, their statistics, and a GIF of the first failing episode."""

from __future__ import annotations

import time
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ..training.runs import RunFolder, TrainedPolicy
from .grid import BASELINES, Cell, Policy
from .stats import wilson

GIF_SIZE = (320, 240)
GIF_FPS = 25.0


def run_policy(run: str) -> Policy:
    """The :class:`Policy` of a run folder (or a shipped policy's name), from its ``run.json``."""
    folder = RunFolder.open(run)
    kwargs = folder.env_kwargs
    return Policy(folder.name, "run", str(folder.path.resolve()), folder.fingerprint(), folder.env_id,
                  tuple(sorted(kwargs.items())), kwargs["backend"], float(kwargs["physics_dt"]),
                  int(kwargs["decimation"]))


def baseline_policy(kind: str, env_id: str) -> Policy:
    """A baseline (a key of BASELINES) on ``env_id``, with the env's default settings as its reference."""
    import gymnasium

    env = gymnasium.make(env_id).unwrapped
    policy = Policy(f"{kind}:{env_id}", kind, None, kind, env_id, (("time_limit", env.time_limit),), None,
                    env.physics_dt, env.decimation)
    env.close()
    return policy


@lru_cache(maxsize=8)
def _trained(path: str, fingerprint: str) -> TrainedPolicy:
    """One loaded network per run and worker process (the fingerprint keys a retrained run apart)."""
    policy = TrainedPolicy(RunFolder.open(path))
    import torch

    torch.set_num_threads(1)  # one small MLP per worker process: more threads only contend for the cores
    return policy


def _actor(cell: Cell, env):
    if cell.policy.kind in BASELINES:
        from ..rollout import make_policy

        return make_policy(BASELINES[cell.policy.kind], env)
    return _trained(cell.policy.path, cell.policy.fingerprint)


def _most_frequent(outcomes: list[str]) -> str | None:
    return Counter(outcomes).most_common(1)[0][0] if outcomes else None


def run_cell(cell: Cell, gif_folder: str | None = None) -> dict[str, Any]:
    """Run the cell's episodes; the summary and one record per episode (JSON-ready).

    With ``gif_folder``, the first failing episode (a named failure) is run again with rendering and written
    there as ``<cell key>.gif``.
    """
    import gymnasium

    from ..rollout import run_episode

    env = gymnasium.make(cell.policy.env_id, **cell.env_kwargs())
    actor = _actor(cell, env)
    start = time.perf_counter()
    episodes = [run_episode(env, actor, cell.seed + i) for i in range(cell.episodes)]
    wall = time.perf_counter() - start
    env.close()
    returns = np.array([e.total_reward for e in episodes])
    successes = sum(e.success for e in episodes)
    failures = Counter(e.failure for e in episodes if e.failure is not None)
    low, high = wilson(successes, len(episodes))
    simulated = sum(e.time for e in episodes)
    failing = next((e for e in episodes if e.failure is not None), None)
    gif = None
    if failing is not None and gif_folder is not None:
        gif = _failure_gif(cell, actor, failing.seed, Path(gif_folder))
    return {
        "episodes": len(episodes),
        "successes": successes,
        "success_rate": successes / len(episodes),
        "success_low": low,
        "success_high": high,
        "return_mean": float(returns.mean()),
        "return_std": float(returns.std()),
        "failures": dict(sorted(failures.items())),
        "outside_outcome": _most_frequent([e.outcome for e in episodes if not e.success]),
        "mean_length_s": simulated / len(episodes),
        "sim_per_wall": simulated / wall if wall > 0 else float("inf"),
        "wall_time_s": wall,
        "first_failure": None if failing is None else {"seed": failing.seed, "failure": failing.failure,
                                                       "time_s": failing.time, "error": failing.error},
        "gif": gif,
        "episode_records": [{"seed": e.seed, "outcome": e.outcome, "return": e.total_reward, "time_s": e.time,
                             "steps": e.steps, "error": e.error} for e in episodes],
    }


def _failure_gif(cell: Cell, actor, seed: int, folder: Path) -> str:
    """Re-run episode ``seed`` (bit-identical: the env is deterministic given its seed) with frames."""
    import gymnasium

    from ..files import write_atomic
    from ..record import encode_gif, record_episode

    env = gymnasium.make(cell.policy.env_id, **cell.env_kwargs(), render_mode="rgb_array", render_size=GIF_SIZE)
    frames, _ = record_episode(env, actor, seed, GIF_FPS)
    env.close()
    name = f"{cell.key()}.gif"
    write_atomic(folder / name, encode_gif(frames, GIF_FPS))
    return name
