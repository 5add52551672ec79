"""``mechgym evaluate``: plan the cells, run the ones not finished earlier, write the report."""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..backends import BACKENDS
from ..registration import ENVIRONMENTS
from . import report
from .cells import baseline_policy, run_cell, run_policy
from .grid import Cell, Policy, plan
from .runner import run_tasks
from .store import CellStore


@dataclass
class Evaluation:
    """What an evaluation produced: its cells, their results, the printed table and where it was written."""

    cells: list[Cell]
    results: dict[Cell, dict[str, Any]]
    table: str
    out: Path
    computed: int  # cells run now (the others were read back from an earlier run)


def _cost(cell: Cell) -> float:
    """Relative cost of a cell (physics steps in all), to start the longest first."""
    time_limit = dict(cell.policy.env_kwargs).get("time_limit", 1.0)
    return cell.episodes * time_limit / cell.physics_dt * (20.0 if cell.backend == "mechgym" else 1.0)


def _distinct(policies: list[Policy]) -> list[Policy]:
    """Run folders of the same name (``a/run``, ``b/run``) are told apart by their parent folder's name."""
    names = Counter(p.name for p in policies)
    return [replace(p, name=f"{Path(p.path).parent.name}/{p.name}") if names[p.name] > 1 else p
            for p in policies]


def prepare_engine(env_ids: Sequence[str]) -> None:
    """Load (and on a first run compile) the in-house engine's kernels here, before workers start, so that
    the workers find them in numba's cache instead of each compiling its own."""
    import gymnasium

    start = time.perf_counter()
    for env_id in env_ids:
        env = gymnasium.make(env_id, backend="mechgym")
        env.reset(seed=0)
        env.step(np.zeros(env.action_space.shape))
        env.close()
    print(f"engine ready in {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)


def evaluate(runs: Sequence[str], passive: Sequence[str], backends: Sequence[str], dts: Sequence[float],
             hold: str, episodes: int, seed: int, out: str | Path, *, scripted: Sequence[str] = (), workers: int = 1,
             ray: str | None = None, gifs: bool = True, progress: bool = True,
             command: Sequence[str] = ()) -> Evaluation:
    """Evaluate on the grid every run (a run folder or a shipped policy's name), zero actions on each env of
    ``passive`` and the hand-written controller of each env of ``scripted``."""
    unknown = [b for b in backends if b not in BACKENDS]
    if unknown:
        raise ValueError(f"unknown backends {unknown}; backends are {sorted(BACKENDS)}")
    baselines = [("passive", env_id) for env_id in passive] + [("scripted", env_id) for env_id in scripted]
    unknown = [env_id for _, env_id in baselines if env_id not in ENVIRONMENTS]
    if unknown:
        raise ValueError(f"unknown environments {unknown}; environments are {sorted(ENVIRONMENTS)}")
    if not runs and not baselines:
        raise ValueError("nothing to evaluate: give run folders, shipped policy names, --passive ENV_ID or "
                         "--scripted ENV_ID")
    policies = _distinct([run_policy(run) for run in runs]) + [baseline_policy(*b) for b in baselines]
    cells = plan(policies, backends, dts, hold, episodes, seed)
    out = Path(out)
    store = CellStore(out)
    results = {cell: result for cell in cells if (result := store.load(cell)) is not None}
    todo = sorted((cell for cell in cells if cell not in results), key=_cost, reverse=True)
    print(f"{len(cells)} cells ({len(policies)} policies x {len(backends)} backends x physics steps), "
          f"{episodes} episodes each; {len(results)} finished earlier in {out}", file=sys.stderr, flush=True)
    engine_envs = sorted({c.policy.env_id for c in todo if c.backend == "mechgym"})
    if engine_envs and (workers > 1 or ray is not None):
        prepare_engine(engine_envs)
    gif_folder = str(out / report.GIF_FOLDER) if gifs else None

    def finished(cell: Cell, result: dict[str, Any]) -> None:
        store.save(cell, result)
        results[cell] = result

    run_tasks(run_cell, {cell: (cell, gif_folder) for cell in todo}, finished, workers=workers, ray=ray,
              description="cells", progress=progress)
    settings = {"command": list(command), "backends": list(backends), "physics_dts": list(dts), "hold": hold,
                "episodes": episodes, "seed": seed}
    table = report.write(out, cells, results, settings)
    return Evaluation(cells, results, table, out, len(todo))
