"""``physics.tolerances``: one module of named values, each set once (a second assignment of a name would silently
change the value every module that imports it reads), each with its reason in a comment."""

from __future__ import annotations

import ast
import collections
import inspect

from mechgym.physics import tolerances


def _assignments() -> list[ast.Assign]:
    return [node for node in ast.parse(inspect.getsource(tolerances)).body if isinstance(node, ast.Assign)]


def test_every_tolerance_is_assigned_once():
    names = collections.Counter(target.id for node in _assignments() for target in node.targets)
    assert [name for name, count in names.items() if count > 1] == []


def test_every_tolerance_has_a_comment_that_gives_its_reason():
    """Each assignment has a comment on its own line or on the lines just above it (its unit and reason)."""
    lines = inspect.getsource(tolerances).splitlines()
    bare = []
    for node in _assignments():
        line = lines[node.lineno - 1]
        if "#" not in line and not lines[node.lineno - 2].lstrip().startswith("#"):
            bare.append(line)
    assert bare == []
