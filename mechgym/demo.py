"""``mechgym demo``: the shipped policies and the hand-written controllers of the three environments across
physics steps on both backends.

Each environment is one evaluation (control period held) in ``<out>/<Name>``; ``<out>/report.md`` gathers
their dt margins and plots. ``--train`` first trains a small CubeDrop policy and evaluates it beside the
shipped one.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .evaluation import report
from .evaluation.evaluate import Evaluation, evaluate
from .files import write_atomic
from .training.runs import RunFolder, shipped_policies

# Physics steps per environment: divisors of the trained control period (20 ms; 1 ms for the slider-crank),
# from a quarter of the trained step to where the backends give out.
GRIDS = {
    "mechgym/CubeDrop-v0": (0.0005, 0.001, 0.002, 0.004, 0.005, 0.01),
    "mechgym/Gripper-v0": (0.001, 0.002, 0.004, 0.005, 0.01),
    "mechgym/SliderCrank-v0": (0.0001, 0.0002, 0.0005, 0.001),
}
TRAIN_TIMESTEPS = 100_000  # the --train CubeDrop run: about 2 minutes on 2 cores


def _train_small(out: Path) -> str:
    from .training.train import TrainSettings, train

    folder = out / "trained" / "CubeDrop-v0-small"
    if (folder / "run.json").is_file() and RunFolder.open(folder).record.get("finished"):
        print(f"using the policy trained earlier in {folder}", file=sys.stderr)
        return str(folder)
    print(f"training a CubeDrop policy for {TRAIN_TIMESTEPS} timesteps into {folder}", file=sys.stderr, flush=True)
    resume = (folder / "run.json").is_file()
    train(TrainSettings("mechgym/CubeDrop-v0", out=folder, timesteps=TRAIN_TIMESTEPS), resume=resume)
    return str(folder)


def run_demo(out: str | Path, episodes: int, workers: int, ray: str | None, with_training: bool) -> list[Evaluation]:
    out = Path(out)
    by_env: dict[str, list[str]] = {env_id: [] for env_id in GRIDS}
    for name in shipped_policies():
        by_env[RunFolder.open(name).env_id].append(name)
    if with_training:
        by_env["mechgym/CubeDrop-v0"].append(_train_small(out))
    evaluations = []
    for env_id, runs in by_env.items():
        name = env_id.split("/")[-1]
        policies = ", ".join([*(Path(r).name for r in runs), "the hand-written controller"])
        print(f"\n== {env_id}: {policies} on mechgym and mujoco, physics steps "
              f"{', '.join(f'{dt * 1000:g}' for dt in GRIDS[env_id])} ms, control period held", flush=True)
        evaluation = evaluate(runs, [], ["mechgym", "mujoco"], GRIDS[env_id], "control", episodes, 0, out / name,
                              scripted=[env_id], workers=workers, ray=ray, command=["mechgym", *sys.argv[1:]])
        print(evaluation.table, flush=True)
        evaluations.append(evaluation)
    write_atomic(out / report.REPORT_NAME, _index(evaluations))
    print(f"\nreport: {out / report.REPORT_NAME}", flush=True)
    return evaluations


def _index(evaluations: list[Evaluation]) -> str:
    parts = ["# mechgym demo: shipped policies across physics steps and backends", ""]
    for evaluation in evaluations:
        folder = evaluation.out.name
        table = report.rows(evaluation.cells, evaluation.results)
        parts += [f"## {table[0]['env_id']}", ""]
        parts += [f"- {line.sentence()}" for line in report.headlines(table)]
        parts += ["", f"![success]({folder}/{report.SUCCESS_PLOT})", "",
                  f"Cells, return plot and failing episodes: [{folder}/report.md]({folder}/report.md)", ""]
    return "\n".join(parts)
