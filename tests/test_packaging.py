"""A built wheel, installed into a fresh virtual environment, carries the bundled scenes as mechgym.envs."""

import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(out), str(ROOT)], check=True)
    (built,) = out.glob("mechgym-*.whl")
    return built


def test_the_wheel_holds_the_package_the_scenes_and_the_command(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    for scene in ("cube_drop", "gripper", "slider_crank"):
        assert f"mechgym/envs/{scene}.xml" in names
    assert "mechgym/envs/__init__.py" in names
    for algo in ("ppo", "sac"):
        assert f"mechgym/training/hyperparams/{algo}.yml" in names
    for policy in (ROOT / "mechgym" / "policies").glob("*/run.json"):
        for file in policy.parent.iterdir():
            assert file.relative_to(ROOT).as_posix() in names, f"shipped policy file {file.name} is missing"
    assert not any(name.startswith(("envs/", "tests/")) for name in names)
    for init in (ROOT / "mechgym").rglob("__init__.py"):
        assert init.relative_to(ROOT).as_posix() in names, f"{init.parent.name} is missing from the wheel"
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "mechgym = mechgym.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


@pytest.fixture(scope="module")
def fresh_venv(wheel, tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """A new virtual environment with only the wheel installed, and the environment variables to run it with.

    Dependencies (numpy, mujoco, ...) come from this interpreter's site-packages, appended after the fresh
    environment's own, so mechgym itself can only be found in the wheel (or in a working directory's source).
    """
    env = tmp_path_factory.mktemp("venv") / "venv"
    venv.EnvBuilder(with_pip=True).create(env)
    python = env / "bin" / "python"
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], check=True)
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    here = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(site, "_outer_deps.pth").write_text("\n".join(sorted(here)) + "\n")
    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return env, environment


def run_python(fresh_venv: tuple[Path, dict[str, str]], script: str, cwd: Path) -> str:
    """Run ``script`` with the fresh environment's Python in ``cwd``; its stdout, once it has exited with 0."""
    env, environment = fresh_venv
    result = subprocess.run([env / "bin" / "python", "-c", script], cwd=cwd, capture_output=True, text=True,
                            env=environment)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_a_fresh_venv_loads_every_bundled_scene_and_environment_from_the_wheel(fresh_venv, tmp_path):
    env, environment = fresh_venv
    script = (
        "import mechgym, pathlib, sys, gymnasium\n"
        "assert pathlib.Path(mechgym.__file__).is_relative_to(pathlib.Path(sys.prefix)), mechgym.__file__\n"
        "names = mechgym.bundled_scenes()\n"
        "assert names == ['cube_drop', 'gripper', 'slider_crank'], names\n"
        "for name in names:\n"
        "    sim = mechgym.load(name, backend='mujoco')\n"
        "    sim.step(10)\n"
        "for env_id in sorted(mechgym.ENVIRONMENTS):\n"
        "    gymnasium.make(env_id, backend='mujoco').reset(seed=0)\n"
        "print('ok', names)\n"
    )
    assert "ok" in run_python(fresh_venv, script, tmp_path)
    listed = subprocess.run([env / "bin" / "mechgym", "sweep", "cube-drop", "--help"], capture_output=True,
                            text=True, cwd=tmp_path, env=environment)
    assert listed.returncode == 0 and "--dt-ms" in listed.stdout


def test_from_the_root_of_a_checkout_the_source_package_finds_its_scenes_and_tasks(fresh_venv):
    """There Python imports the source folder mechgym/ ahead of the installed copy; envs/ beside it must serve
    as mechgym.envs (the README's example is run from where its first command leaves a user)."""
    script = (
        "import mechgym, pathlib, gymnasium\n"
        f"assert pathlib.Path(mechgym.__file__).parent == pathlib.Path({str(ROOT / 'mechgym')!r}), mechgym.__file__\n"
        "sim = mechgym.load('cube_drop', backend='mujoco'); sim.step(10)\n"
        "env = gymnasium.make('mechgym/Gripper-v0', backend='mujoco'); env.reset(seed=0)\n"
        "print('ok', mechgym.envs.__file__)\n"
    )
    assert f"ok {ROOT / 'envs' / '__init__.py'}" in run_python(fresh_venv, script, ROOT)
