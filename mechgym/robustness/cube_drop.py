"""The passive cube-drop sweep of seed 003: a 5 cm cube dropped from rest onto a 1 cm slab.

For each physics step dt and each contact setting it records, from the states the simulator samples
(one per step): the cube's centre at the first step that overlaps the slab, whether a cube-slab
contact was ever seen, the lowest centre, and whether the cube stayed on the slab (its final centre
above the slab's mid-plane) or fell through to the floor.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import mujoco

from .. import load
from ..scene import load_spec

SCENE = "cube_drop"
CUBE_BODY, CUBE_GEOM, SLAB_GEOM = "cube", "cube", "slab"
DT_MS = (0.5, 1, 2, 3, 4, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50)
DURATION = 2.0  # s: the cube lands at about 0.45 s and has settled or fallen long before 2 s
CONTACT_SETTINGS: dict[str, tuple[float, float] | None] = {
    "default": None,  # the scene's own contact parameters
    "solref 0.005 1": (0.005, 1.0),  # stiffer MuJoCo contact on both geoms (seed 003)
}


@dataclass(frozen=True)
class DropResult:
    """One run of the sweep. Lengths in m, times in s."""

    backend: str
    contact: str
    dt: float
    step_length: float  # impact speed sqrt(2 g h) times dt: how far the cube moves per step at impact
    first_overlap: float | None  # centre height at the first sampled state overlapping the slab
    contact_seen: bool  # a cube-slab contact was present at some sampled state
    lowest: float  # lowest sampled centre height
    final: float  # centre height at the end of the run
    stayed: bool  # final centre above the slab's mid-plane

    @property
    def key(self) -> tuple[str, str, float]:
        return (self.backend, self.contact, self.dt)


@dataclass(frozen=True)
class DropGeometry:
    """Heights (m) read from the compiled scene: nothing about the scene is restated here."""

    cube_half: float
    slab_top: float
    slab_bottom: float
    release_centre: float
    gravity: float

    @property
    def mid_plane(self) -> float:
        return 0.5 * (self.slab_top + self.slab_bottom)

    @property
    def impact_speed(self) -> float:
        """m/s at first touch: v = sqrt(2 g h), h = release centre - half size - slab top."""
        return math.sqrt(2.0 * self.gravity * (self.release_centre - self.cube_half - self.slab_top))

    def overlaps_slab(self, centre: float) -> bool:
        return centre - self.cube_half < self.slab_top and centre + self.cube_half > self.slab_bottom


def scene_spec(solref: tuple[float, float] | None) -> mujoco.MjSpec:
    """The bundled cube-drop scene, with ``solref`` set on the cube and the slab when given."""
    spec = load_spec(SCENE)
    if solref is not None:
        for geom in spec.geoms:
            if geom.name in (CUBE_GEOM, SLAB_GEOM):
                geom.solref = list(solref)
    return spec


def drop_geometry(model: mujoco.MjModel) -> DropGeometry:
    cube = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, CUBE_GEOM)
    slab = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, SLAB_GEOM)
    body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, CUBE_BODY)
    slab_z, slab_half = model.geom_pos[slab][2], model.geom_size[slab][2]
    return DropGeometry(
        cube_half=float(model.geom_size[cube][2]),
        slab_top=float(slab_z + slab_half),
        slab_bottom=float(slab_z - slab_half),
        release_centre=float(model.body_pos[body][2]),
        gravity=float(-model.opt.gravity[2]),
    )


def run_drop(backend: str, dt: float, contact: str = "default", duration: float = DURATION) -> DropResult:
    """Drop the cube once on ``backend`` with physics step ``dt`` (s) and the named contact setting."""
    sim = load(scene_spec(CONTACT_SETTINGS[contact]), backend=backend, dt=dt)
    geometry = drop_geometry(sim.model)
    first_overlap, contact_seen, lowest = None, False, math.inf
    centre = sim.body(CUBE_BODY).pos[2]
    for _ in range(round(duration / dt)):
        sim.step()
        centre = float(sim.body(CUBE_BODY).pos[2])
        lowest = min(lowest, centre)
        if first_overlap is None and geometry.overlaps_slab(centre):
            first_overlap = centre
        contact_seen = contact_seen or frozenset((CUBE_GEOM, SLAB_GEOM)) in sim.touching()
    return DropResult(backend, contact, dt, geometry.impact_speed * dt, first_overlap, contact_seen, lowest,
                      centre, centre > geometry.mid_plane)


def sweep(backends: Iterable[str], dts: Iterable[float], done: Iterable[DropResult] = (),
          on_result: Callable[[DropResult], None] | None = None, workers: int = 1, ray: str | None = None,
          progress: bool = False) -> list[DropResult]:
    """Every (backend, contact setting, dt) run, reusing ``done`` results; the others run on the grid runner
    (``workers`` local processes, or Ray at ``ray``), and ``on_result`` sees each as soon as it finishes (so
    an interrupted sweep keeps its finished runs)."""
    from ..evaluation.runner import run_tasks

    finished = {result.key: result for result in done}
    keys = [(backend, contact, dt) for backend in backends for contact in CONTACT_SETTINGS for dt in dts]
    todo = {key: (key[0], key[2], key[1]) for key in keys if key not in finished}

    def keep(key, result: DropResult) -> None:
        finished[key] = result
        if on_result is not None:
            on_result(result)

    run_tasks(run_drop, todo, keep, workers=workers, ray=ray, description="drops", progress=progress)
    return [finished[key] for key in keys]
