"""Finished cells on disk: ``<out>/cells/<cell key>.json``, each written whole (temporary file, rename)."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..files import write_atomic
from .grid import Cell


def _plain(cell: Cell) -> dict[str, Any]:
    """The cell as JSON would give it back (tuples become lists)."""
    return json.loads(json.dumps(asdict(cell)))


class CellStore:
    """Reads and writes the results of cells in an evaluation's output folder."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.cells = self.folder / "cells"

    def path(self, cell: Cell) -> Path:
        return self.cells / f"{cell.key()}.json"

    def load(self, cell: Cell) -> dict[str, Any] | None:
        """The cell's result if it finished earlier; None if not (or if its file does not hold this cell)."""
        path = self.path(cell)
        if not path.is_file():
            return None
        try:
            saved = json.loads(path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            print(f"mechgym: {path} is unreadable ({error}); running that cell again", file=sys.stderr)
            return None
        if not isinstance(saved, dict) or saved.get("cell") != _plain(cell) or "result" not in saved:
            print(f"mechgym: {path} holds another cell; running this one again", file=sys.stderr)
            return None
        return saved["result"]

    def save(self, cell: Cell, result: dict[str, Any]) -> None:
        write_atomic(self.path(cell), json.dumps({"cell": _plain(cell), "result": result}, indent=1) + "\n")
