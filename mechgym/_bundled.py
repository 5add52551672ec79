"""Where ``mechgym.envs`` (the bundled scenes and tasks) comes from.

Installed, ``mechgym.envs`` is a subpackage built from the repository's top-level ``envs/`` folder
(pyproject's package-dir). An editable install maps it the same way. But Python run from the root of a
checkout imports the source folder ``mechgym/`` ahead of any installed copy, and that folder has no
``envs`` inside: there the top-level ``envs/`` beside it is bound as ``mechgym.envs``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


def bind_source_envs(package: str, package_dir: Path) -> None:
    """Make ``<package>.envs`` importable when ``package_dir`` is a checkout's source folder without it."""
    name = f"{package}.envs"
    if name in sys.modules or importlib.util.find_spec(name) is not None:
        return
    source = package_dir.parent / "envs" / "__init__.py"
    if not source.is_file():
        return  # nothing to bind; importing mechgym.envs will name the missing module
    spec = importlib.util.spec_from_file_location(name, source, submodule_search_locations=[str(source.parent)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    sys.modules[package].envs = module  # as the import system does for a subpackage
