"""``mechgym sweep cube-drop`` on MuJoCo reproduces seed 003's table, row for row."""

import csv

import pytest

from mechgym import cli
from mechgym.robustness import cube_drop, report

# Seed 003's table (MuJoCo 3.17): dt (ms) -> (centre at the first overlapping step (cm) or None,
# default contact stayed, lowest centre (cm) where the seed lists one, solref 0.005 1 stayed).
SEED_003 = {
    0.5: (32.32, False, None, True), 1: (32.21, False, None, True), 2: (31.99, True, 29.60, True),
    3: (31.34, False, None, True), 4: (32.43, True, 30.54, True), 6: (32.00, True, 30.84, True),
    8: (29.80, True, 29.65, True), 10: (28.47, False, None, False), 12: (30.69, True, 30.69, True),
    15: (27.36, False, None, False), 20: (30.72, True, 30.72, True), 25: (None, False, None, False),
    30: (None, False, None, False), 40: (None, False, None, False), 50: (None, False, None, False),
}


@pytest.fixture(scope="module")
def table():
    results = cube_drop.sweep(["mujoco"], [ms / 1000 for ms in SEED_003])
    return {(r.contact, round(1000 * r.dt, 6)): r for r in results}


@pytest.mark.parametrize("dt_ms", list(SEED_003))
def test_each_row_matches_seed_003(table, dt_ms):
    first, stayed_default, lowest, stayed_stiff = SEED_003[dt_ms]
    default, stiff = table[("default", dt_ms)], table[("solref 0.005 1", dt_ms)]
    assert default.stayed is stayed_default
    assert stiff.stayed is stayed_stiff
    for run in (default, stiff):
        assert run.contact_seen is (first is not None)
        if first is None:
            assert run.first_overlap is None
        else:
            assert round(100 * run.first_overlap, 2) == pytest.approx(first, abs=1e-9)
    if lowest is not None:
        assert round(100 * default.lowest, 2) == pytest.approx(lowest, abs=1e-9)


def semi_implicit_euler_first_overlap(dt, z0=1.30, half=0.025, top=0.30, bottom=0.29, g=9.81):
    """Seed 003's closed-form check: free fall with v += -g dt, z += v dt until the cube overlaps the slab."""
    z, v = z0, 0.0
    while z + half > bottom:
        v -= g * dt
        z += v * dt
        if z - half < top and z + half > bottom:
            return z
    return None


@pytest.mark.parametrize("dt_ms", list(SEED_003))
def test_first_overlap_is_free_fall_by_semi_implicit_euler(table, dt_ms):
    expected = semi_implicit_euler_first_overlap(dt_ms / 1000)
    measured = table[("default", dt_ms)].first_overlap
    assert measured == expected if expected is None else measured == pytest.approx(expected, abs=1e-12)


def test_step_length_is_impact_speed_times_dt(table):
    speed = (2 * 9.81 * 0.975) ** 0.5
    for (_, dt_ms), run in table.items():
        assert run.step_length == pytest.approx(speed * dt_ms / 1000, rel=1e-12)


def test_the_table_prints_every_row_and_the_counts(table):
    text = report.format_table(list(table.values()))
    assert "mujoco, default: stayed at 6 of 15 time steps" in text
    assert "mujoco, solref 0.005 1: stayed at 9 of 15 time steps" in text
    assert len([line for line in text.splitlines() if line.strip().split(" ")[0].replace(".", "").isdigit()]) == 15


def test_the_cli_writes_csv_and_plot_and_resumes_without_rerunning(tmp_path, capsys, monkeypatch):
    out, png = tmp_path / "sweep.csv", tmp_path / "sweep.png"
    assert cli.main(["sweep", "cube-drop", "--backend", "mujoco", "--dt-ms", "2", "10",
                     "--out", str(out), "--plot", str(png)]) == 0
    printed = capsys.readouterr().out
    assert "29.60 stayed" in printed and png.stat().st_size > 10_000
    with out.open() as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["contact"], r["dt_ms"], r["result"]) for r in rows] == [
        ("default", "2", "stayed"), ("default", "10", "fell"),
        ("solref 0.005 1", "2", "stayed"), ("solref 0.005 1", "10", "fell")]

    def no_new_runs(*args, **kwargs):
        raise AssertionError("a finished run was simulated again")

    monkeypatch.setattr(cube_drop, "run_drop", no_new_runs)
    assert cli.main(["sweep", "cube-drop", "--backend", "mujoco", "--dt-ms", "2", "10", "--out", str(out)]) == 0
    assert capsys.readouterr().out == printed


def test_an_interrupted_sweep_keeps_its_finished_runs(tmp_path, monkeypatch):
    log = report.CsvLog(tmp_path / "sweep.csv")
    real_run = cube_drop.run_drop
    calls = []

    def interrupted(backend, dt, contact="default"):
        if len(calls) == 2:
            raise KeyboardInterrupt
        calls.append(dt)
        return real_run(backend, dt, contact)

    monkeypatch.setattr(cube_drop, "run_drop", interrupted)
    with pytest.raises(KeyboardInterrupt):
        cube_drop.sweep(["mujoco"], [0.004, 0.008, 0.012], on_result=log.append)
    assert [r.dt for r in log.read()] == [0.004, 0.008]
    assert all(r.stayed for r in log.read())


def test_a_foreign_csv_is_refused(tmp_path):
    path = tmp_path / "other.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="not a cube-drop sweep CSV"):
        report.CsvLog(path).read()


def test_the_cli_reports_a_backend_that_cannot_run_the_scene_without_a_traceback(capsys, monkeypatch):
    def unsupported(*args, **kwargs):
        raise NotImplementedError("the engine cannot run this scene yet")

    monkeypatch.setattr(cube_drop, "run_drop", unsupported)
    assert cli.main(["sweep", "cube-drop", "--backend", "mechgym", "--dt-ms", "2"]) == 2
    assert "cannot run this scene yet" in capsys.readouterr().err
