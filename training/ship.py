"""Copy a finished run into the package as a shipped policy: ``python training/ship.py runs/CubeDrop-v0``.

The policy is named after the run folder; only run.json, model.zip and vecnormalize.pkl are copied (no
checkpoints), into ``mechgym/policies/<name>/``.
"""

import shutil
import sys
from pathlib import Path

from mechgym.training.runs import MODEL_FILE, RUN_FILE, SHIPPED, STATS_FILE, RunFolder


def ship(run: str) -> Path:
    folder = RunFolder.open(run)
    if not folder.record.get("finished"):
        raise SystemExit(f"ship.py: {folder.path} has not finished training")
    destination = SHIPPED / folder.name
    destination.mkdir(parents=True, exist_ok=True)
    for name in (RUN_FILE, MODEL_FILE, STATS_FILE):
        if (folder.path / name).is_file():
            shutil.copy2(folder.path / name, destination / name)
    return destination


if __name__ == "__main__":
    for argument in sys.argv[1:]:
        print(f"shipped {argument} as {ship(argument)}")
