"""Scene loading and the engine-only <custom> material properties."""

from pathlib import Path

import mujoco
import numpy as np
import pytest

import mechgym
from mechgym.scene import bundled_scene_path, compile_model, contact_material, load_spec

BALL = '<body name="ball" pos="0 0 1"><freejoint/><geom name="ball" type="sphere" size="0.1" friction="0.3"/></body>'
FLOOR = '<geom name="floor" type="plane" size="1 1 0.1" friction="0.6"/>'


def scene(custom: str = "") -> str:
    return f"<mujoco><custom>{custom}</custom><worldbody>{FLOOR}{BALL}</worldbody></mujoco>"


def test_bundled_scenes_are_the_three_environments():
    assert mechgym.bundled_scenes() == ["cube_drop", "gripper", "slider_crank"]


@pytest.mark.parametrize("name", ["cube_drop", "gripper", "slider_crank"])
def test_a_scene_loads_by_name_path_string_and_spec(name):
    path = bundled_scene_path(name)
    by_name = compile_model(name)
    for other in (path, str(path), path.read_text(), load_spec(name)):
        model = compile_model(other)
        assert (model.nbody, model.njnt, model.ngeom, model.nu) == (
            by_name.nbody, by_name.njnt, by_name.ngeom, by_name.nu)


def test_an_unknown_scene_name_lists_the_bundled_ones():
    with pytest.raises(ValueError, match="cube_drop"):
        compile_model("cube_dorp")


def test_a_missing_file_is_a_value_error():
    with pytest.raises(ValueError, match="no MJCF file"):
        compile_model(Path("/nonexistent/scene.xml"))


def test_mjcf_that_does_not_parse_or_compile_is_a_scene_error():
    with pytest.raises(mechgym.SceneError) as parse:
        compile_model("<mujoco><worldbody><geom type='sphere'</worldbody></mujoco>")
    assert parse.value.code == "scene.parse"
    with pytest.raises(mechgym.SceneError) as compiled:
        compile_model("<mujoco><worldbody><body><joint type='hinge'/></body></worldbody></mujoco>")
    assert compiled.value.code in {"scene.parse", "scene.compile"}


def test_material_defaults_are_zero_restitution_and_sliding_friction():
    material = contact_material(compile_model(scene()))
    np.testing.assert_array_equal(material.restitution, [0.0, 0.0])
    np.testing.assert_array_equal(material.static_friction, [0.6, 0.3])


def test_a_pair_uses_the_larger_value_of_its_two_geoms():
    model = compile_model(scene('<numeric name="restitution:ball" data="0.8"/>'
                                '<numeric name="static_friction:ball" data="0.9"/>'))
    material = contact_material(model)
    assert material.pair_restitution(0, 1) == material.pair_restitution(1, 0) == 0.8
    assert material.pair_static_friction(0, 1) == 0.9
    floor_only = contact_material(compile_model(scene('<numeric name="static_friction:floor" data="0.7"/>')))
    assert floor_only.pair_static_friction(0, 1) == 0.7


@pytest.mark.parametrize("custom, code", [
    ('<numeric name="restitution:nothing" data="0.5"/>', "custom.unknown-geom"),
    ('<numeric name="restitution:ball" data="1.5"/>', "custom.bad-value"),
    ('<numeric name="restitution:ball" data="0.5 0.5"/>', "custom.bad-value"),
    ('<numeric name="static_friction:ball" data="0.1"/>', "custom.bad-value"),  # below sliding 0.3
])
def test_bad_custom_numerics_are_scene_errors_with_stable_codes(custom, code):
    with pytest.raises(mechgym.SceneError) as error:
        contact_material(compile_model(scene(custom)))
    assert error.value.code == code


def test_scene_error_message_carries_the_code():
    error = mechgym.SceneError("custom.bad-value", "restitution must lie in [0, 1]")
    assert "custom.bad-value" in str(error) and error.message.startswith("restitution")


def test_specs_are_copied_not_mutated():
    spec = load_spec("cube_drop")
    copy = load_spec(spec)
    copy.geoms[0].name = "renamed"
    assert spec.geoms[0].name == "floor"
    assert isinstance(copy, mujoco.MjSpec)
