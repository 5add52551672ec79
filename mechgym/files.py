"""Writing files so that an interrupted process never leaves a half-written one behind."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
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


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Hold a Ctrl-C (SIGINT) that arrives in the block until the block is done, then deliver it as the process
    would have (a KeyboardInterrupt, by default). For writes that an exception inside would spoil: torch's zip
    writer interrupted mid-file raises its own RuntimeError on closing, in place of the KeyboardInterrupt, and the
    run would end with a traceback and exit code 1 instead of its saved checkpoint and 130. Outside the main thread
    (where Python delivers no signal), or where the handler was not installed from Python (it could not be put
    back), the block just runs."""
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or previous is None:
        yield
        return
    received = []
    signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if received:
            signal.raise_signal(signal.SIGINT)
