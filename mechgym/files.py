"""Writing files so that an interrupted process never leaves a half-written one behind."""

from __future__ import annotations

import os
from pathlib import Path


def write_atomic(path: str | Path, data: bytes | str) -> Path:
    """Write ``data`` to ``path`` through a temporary file in the same folder, then rename it over ``path``.

    A reader sees either the old file or the whole new one; a kill in between leaves only the temporary file,
    which the next write replaces.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp{os.getpid()}")
    with temporary.open("wb") as handle:
        handle.write(data.encode() if isinstance(data, str) else data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
    return path
