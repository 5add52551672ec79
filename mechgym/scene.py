"""Scenes: MJCF only, compiled by MuJoCo's own compiler for every backend.

A scene argument is one of
- a bundled scene name (``"cube_drop"``, see :func:`bundled_scenes`),
- a path to an MJCF file,
- an MJCF document as a string,
- a ``mujoco.MjSpec`` (used by sweeps that vary a scene before compiling it).

Engine-only material properties live in MJCF's ``<custom>`` section::

    <numeric name="restitution:GEOM" data="e"/>        # Newton restitution, 0 <= e <= 1, default 0
    <numeric name="static_friction:GEOM" data="mu_s"/>  # default: the geom's MJCF sliding friction

A contact pair uses the larger of its two geoms' values (MuJoCo's own rule for friction). Confinements (a free
body kept on the free side of a fixed surface; the in-house engine only) are text fields::

    <text name="confinement:NAME" data="body=BODY surface=GEOM margin=m rule=slide|reflect|stop ..."/>

(see :mod:`mechgym.physics.confinement`).
"""

from __future__ import annotations

import importlib.resources
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

from .errors import SceneError

RESTITUTION_PREFIX = "restitution:"
STATIC_FRICTION_PREFIX = "static_friction:"
CONFINEMENT_PREFIX = "confinement:"  # <text name="confinement:NAME" data="..."/> (mechgym.physics.confinement)


def bundled_scenes() -> list[str]:
    """Names of the scenes shipped in ``mechgym.envs`` (file stems of its ``*.xml``)."""
    root = importlib.resources.files("mechgym.envs")
    return sorted(entry.name[:-4] for entry in root.iterdir() if entry.name.endswith(".xml"))


def bundled_scene_path(name: str) -> Path:
    """Filesystem path of a bundled scene's MJCF file."""
    if name not in bundled_scenes():
        raise ValueError(f"unknown bundled scene {name!r}; bundled scenes are {bundled_scenes()}")
    return Path(str(importlib.resources.files("mechgym.envs").joinpath(f"{name}.xml")))


def load_spec(scene: str | Path | mujoco.MjSpec) -> mujoco.MjSpec:
    """Parse a scene argument into a fresh ``mujoco.MjSpec`` (a copy when given one)."""
    if isinstance(scene, mujoco.MjSpec):
        return scene.copy()
    if isinstance(scene, Path):
        return _spec_from_file(scene)
    if not isinstance(scene, str):
        raise TypeError(f"scene must be a name, a path, an MJCF string or an MjSpec, not {type(scene).__name__}")
    if scene.lstrip().startswith("<"):
        try:
            return mujoco.MjSpec.from_string(scene)
        except ValueError as err:
            raise SceneError("scene.parse", f"the MJCF string does not parse: {err}") from err
    if scene in bundled_scenes():
        return _spec_from_file(bundled_scene_path(scene))
    if Path(scene).suffix.lower() == ".xml" or Path(scene).exists():
        return _spec_from_file(Path(scene))
    raise ValueError(
        f"scene {scene!r} is neither a bundled scene {bundled_scenes()}, an existing MJCF file, nor an MJCF string"
    )


def _spec_from_file(path: Path) -> mujoco.MjSpec:
    if not path.is_file():
        raise ValueError(f"no MJCF file at {str(path)!r}; bundled scenes are {bundled_scenes()}")
    try:
        return mujoco.MjSpec.from_file(str(path))
    except ValueError as err:
        raise SceneError("scene.parse", f"{path} does not parse: {err}") from err


def compile_model(scene: str | Path | mujoco.MjSpec) -> mujoco.MjModel:
    """Compile a scene argument with MuJoCo's compiler; errors become ``SceneError('scene.compile')``."""
    spec = load_spec(scene)
    try:
        return spec.compile()
    except ValueError as err:
        raise SceneError("scene.compile", f"MuJoCo's compiler rejects the scene: {err}") from err


def confinement_fields(model: mujoco.MjModel) -> list[tuple[str, str]]:
    """(NAME, data) of each text field ``confinement:NAME`` that ``model`` declares."""
    fields = []
    for t in range(model.ntext):
        key = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_TEXT, t) or ""
        if key.startswith(CONFINEMENT_PREFIX):
            data = bytes(model.text_data[model.text_adr[t]:model.text_adr[t] + model.text_size[t]])
            fields.append((key[len(CONFINEMENT_PREFIX):], data.rstrip(b"\0").decode()))
    return fields


def confinement_names(model: mujoco.MjModel) -> list[str]:
    """The names of the confinements ``model`` declares."""
    return [name for name, _ in confinement_fields(model)]


def name_of(model: mujoco.MjModel, obj: mujoco.mjtObj, index: int) -> str:
    """Name of a model element, or ``"<type #index>"`` when it is unnamed."""
    name = mujoco.mj_id2name(model, obj, index)
    return name if name else f"<{obj.name[6:].lower()} #{index}>"


@dataclass(frozen=True)
class ContactMaterial:
    """Per-geom engine-only contact properties read from ``<custom>``.

    restitution:     (ngeom,) Newton coefficient of restitution, dimensionless, in [0, 1].
    static_friction: (ngeom,) static friction coefficient, dimensionless, >= the sliding coefficient.
    """

    restitution: np.ndarray
    static_friction: np.ndarray

    def pair_restitution(self, geom1: int, geom2: int) -> float:
        return float(max(self.restitution[geom1], self.restitution[geom2]))

    def pair_static_friction(self, geom1: int, geom2: int) -> float:
        return float(max(self.static_friction[geom1], self.static_friction[geom2]))


def contact_material(model: mujoco.MjModel) -> ContactMaterial:
    """Read ``restitution:GEOM`` and ``static_friction:GEOM`` numerics; bad entries raise ``SceneError``."""
    restitution = np.zeros(model.ngeom)
    static_friction = model.geom_friction[:, 0].copy()
    for index in range(model.nnumeric):
        key = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_NUMERIC, index) or ""
        for prefix, target in ((RESTITUTION_PREFIX, restitution), (STATIC_FRICTION_PREFIX, static_friction)):
            if key.startswith(prefix):
                geom = _geom_named(model, key, key[len(prefix):])
                target[geom] = _single_value(model, key, index)
    for geom in range(model.ngeom):
        geom_name = name_of(model, mujoco.mjtObj.mjOBJ_GEOM, geom)
        if not 0.0 <= restitution[geom] <= 1.0:
            raise SceneError(
                "custom.bad-value",
                f"<numeric name='restitution:{geom_name}'> is {restitution[geom]}; restitution must lie in [0, 1]",
            )
        sliding = model.geom_friction[geom, 0]
        if static_friction[geom] < sliding:
            raise SceneError(
                "custom.bad-value",
                f"<numeric name='static_friction:{geom_name}'> is {static_friction[geom]}, below the geom's "
                f"sliding friction {sliding}; static friction must be at least the kinetic one",
            )
    return ContactMaterial(restitution=restitution, static_friction=static_friction)


def _geom_named(model: mujoco.MjModel, key: str, geom_name: str) -> int:
    geom = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, geom_name)
    if geom < 0:
        names = [name_of(model, mujoco.mjtObj.mjOBJ_GEOM, g) for g in range(model.ngeom)]
        raise SceneError("custom.unknown-geom", f"<numeric name='{key}'> names no geom; geoms are {names}")
    return geom


def _single_value(model: mujoco.MjModel, key: str, index: int) -> float:
    size = model.numeric_size[index]
    value = model.numeric_data[model.numeric_adr[index]] if size == 1 else np.nan
    if size != 1 or not np.isfinite(value):
        raise SceneError("custom.bad-value", f"<numeric name='{key}'> must hold exactly one finite number")
    return float(value)
