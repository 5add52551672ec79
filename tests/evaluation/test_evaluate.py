"""mechgym evaluate end to end on two tiny runs (one trained on each backend): the grid's cells, files,
resuming, interruption, refusals, and the same cells from worker processes and from Ray."""

from __future__ import annotations

import csv
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mechgym import cli
from mechgym.evaluation import report
from mechgym.evaluation.evaluate import evaluate
from tests.tiny import tiny_run

pytest.importorskip("stable_baselines3")
ROOT = Path(__file__).resolve().parents[2]
BACKENDS, DTS, EPISODES = ["mechgym", "mujoco"], [0.002, 0.004], 3
TIMING = ("sim_per_wall",)  # the one column that depends on the machine's speed


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> list[Path]:
    folder = tmp_path_factory.mktemp("runs")
    return [tiny_run(folder / "on-mechgym" / "run", "mechgym"), tiny_run(folder / "on-mujoco" / "run", "mujoco",
                                                                         seed=1)]


def _evaluate(runs, out, **options):
    return evaluate([str(r) for r in runs], [], BACKENDS, DTS, "control", EPISODES, 0, out, progress=False,
                    **options)


@pytest.fixture(scope="module")
def finished(runs, tmp_path_factory):
    return _evaluate(runs, tmp_path_factory.mktemp("evaluation"))


def _cells(path: Path) -> list[dict[str, str]]:
    with (path / report.CSV_NAME).open() as handle:
        return [{k: v for k, v in row.items() if k not in TIMING} for row in csv.DictReader(handle)]


def test_two_runs_over_two_backends_and_two_steps_give_a_row_per_cell_and_the_plots(finished):
    rows = _cells(finished.out)
    assert len(rows) == 2 * 2 * 2  # each run's training configuration (4 ms on its backend) is in the grid
    assert {(r["train_backend"], r["backend"], float(r["physics_dt"]), int(r["decimation"])) for r in rows} == {
        (t, b, dt, round(0.02 / dt)) for t in BACKENDS for b in BACKENDS for dt in DTS}
    assert sum(r["reference"] == "True" for r in rows) == 2
    for row in rows:
        assert int(row["episodes"]) == EPISODES
        assert float(row["success_low"]) <= float(row["success_rate"]) <= float(row["success_high"])
        if row["gif"]:
            assert (finished.out / row["gif"]).read_bytes()[:6] == b"GIF89a"
    assert any(r["gif"] for r in rows), "an untrained cube falls: some cell must have a failing episode"
    for name in (report.SUCCESS_PLOT, report.RETURN_PLOT, report.MATRIX_PLOT):
        assert (finished.out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = (finished.out / report.REPORT_NAME).read_text()
    assert report.SUCCESS_PLOT in text and "dt margin" in text
    saved = json.loads((finished.out / report.JSON_NAME).read_text())
    assert len(saved["cells"]) == 8 and len(saved["headlines"]) == 4
    assert all(len(episodes) == EPISODES for episodes in saved["episodes"].values())


def test_the_same_seeds_run_in_every_cell(finished):
    saved = json.loads((finished.out / report.JSON_NAME).read_text())
    assert {tuple(e["seed"] for e in episodes) for episodes in saved["episodes"].values()} == {(0, 1, 2)}


def test_a_second_evaluation_into_the_same_folder_recomputes_nothing(runs, finished):
    before = (finished.out / report.CSV_NAME).read_text()
    again = _evaluate(runs, finished.out)
    assert again.computed == 0
    assert (finished.out / report.CSV_NAME).read_text() == before


@pytest.mark.slow
def test_an_evaluation_killed_halfway_resumes_to_the_same_cells(runs, finished, tmp_path):
    out = tmp_path / "killed"
    command = [sys.executable, "-m", "mechgym.cli", "evaluate", *map(str, runs), "--backends", ",".join(BACKENDS),
               "--physics-dt", ",".join(map(str, DTS)), "--episodes", str(EPISODES), "--workers", "1",
               "--out", str(out)]
    process = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while len(list((out / "cells").glob("*.json"))) < 3 and time.monotonic() < deadline:
        assert process.poll() is None, "the evaluation ended before it could be killed"
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    kept = len(list((out / "cells").glob("*.json")))
    assert 3 <= kept < 8
    resumed = _evaluate(runs, out)
    assert resumed.computed == 8 - kept
    assert _cells(out) == _cells(finished.out)


def test_worker_processes_give_the_same_cells(runs, finished, tmp_path):
    _evaluate(runs, tmp_path, workers=2)
    assert _cells(tmp_path) == _cells(finished.out)


@pytest.mark.slow
def test_ray_gives_the_same_cells_as_the_local_path(runs, finished, tmp_path):
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'mechgym[ray]')")
    _evaluate(runs, tmp_path, workers=2, ray="local")
    assert _cells(tmp_path) == _cells(finished.out)


def test_hold_control_refuses_a_step_that_does_not_divide_the_period_and_names_the_nearest(runs, tmp_path,
                                                                                         capsys):
    code = cli.main(["evaluate", str(runs[0]), "--physics-dt", "0.002,0.003", "--out", str(tmp_path)])
    assert code == 2
    err = capsys.readouterr().err
    assert "0.003 s does not divide" in err and "0.02 s" in err
    assert "0.00285714 s (decimation 7)" in err and "0.00333333 s (decimation 6)" in err
    assert "Traceback" not in err


def test_hold_decimation_keeps_the_trained_decimation(runs, tmp_path):
    result = evaluate([str(runs[1])], [], ["mujoco"], [0.002, 0.004], "decimation", 1, 0, tmp_path, progress=False)
    assert {(c.physics_dt, c.decimation) for c in result.cells} == {(0.002, 5), (0.004, 5)}


def test_baselines_are_evaluated_with_the_env_defaults_as_reference(tmp_path):
    result = evaluate([], ["mechgym/CubeDrop-v0"], ["mujoco"], [0.004], "control", 2, 0, tmp_path, progress=False,
                      scripted=["mechgym/CubeDrop-v0"], gifs=False)
    cells = {(c.policy.name, c.physics_dt, c.decimation, c.is_reference) for c in result.cells}
    assert cells == {(f"{kind}:mechgym/CubeDrop-v0", dt, decimation, reference) for kind in ("passive", "scripted")
                     for dt, decimation, reference in ((0.004, 5, False), (0.002, 10, True))}  # defaults 2 ms x 10
    rows = {(r["policy"], float(r["physics_dt"])): r for r in _cells(tmp_path)}
    assert rows["scripted:mechgym/CubeDrop-v0", 0.002]["successes"] == "2"  # the controller lands the cube


@pytest.mark.parametrize("damage", ["missing folder", "no run.json", "corrupt run.json", "no model"])
def test_a_missing_or_corrupt_run_folder_is_refused_cleanly(runs, tmp_path, capsys, damage):
    import shutil

    run = tmp_path / "run"
    if damage != "missing folder":
        shutil.copytree(runs[1], run)
    if damage == "no run.json":
        (run / "run.json").unlink()
    elif damage == "corrupt run.json":
        (run / "run.json").write_text('{"env_id": ')
    elif damage == "no model":
        (run / "model.zip").unlink()
    assert cli.main(["evaluate", str(run), "--backends", "mujoco", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and ("run.json" in err or "model.zip" in err or "neither a run folder" in err)
