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
    assert not any(name.startswith(("envs/", "tests/")) for name in names)
    for init in (ROOT / "mechgym").rglob("__init__.py"):
        assert init.relative_to(ROOT).as_posix() in names, f"{init.parent.name} is missing from the wheel"
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "mechgym = mechgym.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_a_fresh_venv_loads_every_bundled_scene_from_the_wheel(wheel, tmp_path):
    env = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env)
    python = env / "bin" / "python"
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], check=True)
    # Dependencies (numpy, mujoco, ...) come from this interpreter's site-packages, appended after the
    # fresh environment's own, so mechgym itself can only be found in the wheel.
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    here = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(site, "_outer_deps.pth").write_text("\n".join(sorted(here)) + "\n")
    script = (
        "import mechgym, pathlib, sys\n"
        "assert pathlib.Path(mechgym.__file__).is_relative_to(pathlib.Path(sys.prefix)), mechgym.__file__\n"
        "names = mechgym.bundled_scenes()\n"
        "assert names == ['cube_drop', 'gripper', 'slider_crank'], names\n"
        "for name in names:\n"
        "    sim = mechgym.load(name, backend='mujoco')\n"
        "    sim.step(10)\n"
        "print('ok', names)\n"
    )
    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    result = subprocess.run([python, "-c", script], cwd=tmp_path, capture_output=True, text=True, env=environment)
    assert result.returncode == 0, result.stderr
    assert "ok" in result.stdout
    command = env / "bin" / "mechgym"
    listed = subprocess.run([command, "sweep", "cube-drop", "--help"], capture_output=True, text=True,
                            cwd=tmp_path, env=environment)
    assert listed.returncode == 0 and "--dt-ms" in listed.stdout
