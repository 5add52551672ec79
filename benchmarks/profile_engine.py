"""Where the engine's time goes: a per-function profile of one scene of ``bench_engine.py``, by Linux ``perf``.

    python benchmarks/profile_engine.py "double pendulum" [--steps N] [--top K]
    python benchmarks/profile_engine.py "gripper lifting its card" --steps 2000

Runs the scene's physics (``N`` steps in one ``sim.step`` call, after a warm-up that compiles or loads the
kernels) under ``perf record`` and prints the engine's functions by their share of the samples taken inside
the engine. perf cannot name numba's compiled functions by itself: after the warm-up this script writes
``/tmp/perf-<pid>.map`` (perf's map of just-in-time code) with every symbol that numba's execution engine
holds, named ``physics.<module>.<function>``. A function that LLVM inlined into its caller counts as its
caller. Needs ``perf`` (Debian's ``linux-perf``) and permission to sample (``kernel.perf_event_paranoid`` <= 2).
Not a test; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_engine  # noqa: E402

_CHILD = "_MECHGYM_PROFILE_CHILD"  # set in the process that perf records
LIFT = "gripper lifting its card"  # bench_engine's lift (one sim.step(1) per step, its Python included)


def _label(symbol: str) -> str:
    """``physics.constraints.factor`` for numba's mangled ``_ZN7mechgym7physics11constraints6factorB...``."""
    rest = symbol[3:] if symbol.startswith("_ZN") else symbol
    parts = []
    while rest[:1].isdigit() and len(parts) < 5:
        digits = re.match(r"\d+", rest)
        length, rest = int(digits.group()), rest[digits.end():]
        parts.append(rest[:length])
        rest = rest[length:]
    return ".".join(parts[1:]) if len(parts) > 1 else symbol


def write_perf_map() -> int:
    """Write /tmp/perf-<pid>.map for every function numba's execution engine holds; returns their number.
    A symbol's size is taken up to the next symbol's address (numba does not expose sizes)."""
    from numba.core.registry import cpu_target

    engine = cpu_target.target_context.codegen()._engine
    addresses = sorted((address, name) for name in engine._defined_symbols
                       if (address := engine._ee.get_function_address(name)))
    if not addresses:
        raise SystemExit("numba holds no compiled function to map (is NUMBA_DISABLE_JIT set?)")
    with open(f"/tmp/perf-{os.getpid()}.map", "w") as out:
        for (address, name), (following, _) in zip(addresses, [*addresses[1:], (addresses[-1][0] + 4096, "")],
                                                    strict=True):
            out.write(f"{address:x} {max(following - address, 1):x} {_label(name)}\n")
    return len(addresses)


def run_scene(name: str, steps: int) -> None:
    """The recorded process: warm up, map the compiled code, then step."""
    import mechgym

    if name == LIFT:
        sim = bench_engine.squeezing_gripper("mechgym")
        run = lambda: bench_engine.lift(sim, steps)  # noqa: E731
    else:
        sim = mechgym.load(bench_engine.spec_of(name), backend="mechgym", dt=bench_engine.DT.get(name, 1e-3))
        sim.step(10)  # (as bench_engine: from the scene's keyframe)
        run = lambda: sim.step(steps)  # noqa: E731
    write_perf_map()
    start = time.perf_counter()
    run()
    print(f"{name}: {1e6 * (time.perf_counter() - start) / steps:.2f} µs per step over {steps} steps", flush=True)


def report(data: Path, top: int) -> None:
    """Print the engine's functions by their share of the samples taken in the engine (self time)."""
    listing = subprocess.run(["perf", "report", "-i", str(data), "--no-children", "--sort", "symbol", "-g", "none",
                              "--stdio"], capture_output=True, text=True, check=True).stdout
    shares = []
    for line in listing.splitlines():
        match = re.match(r"\s*([\d.]+)%\s+\[\.\]\s+(physics\.\S+)", line)
        if match:
            shares.append((float(match.group(1)), match.group(2)))
    total = sum(share for share, _ in shares)
    if not total:
        raise SystemExit("perf recorded no samples in the engine's functions")
    print(f"{'share of the engine':>20s}  function ({total:.0f} % of all samples were in the engine)")
    for share, function in shares[:top]:
        print(f"{100 * share / total:19.1f}%  {function}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scene", choices=[*bench_engine.SCENES, LIFT], help="a scene of bench_engine.py")
    parser.add_argument("--steps", type=int, default=200_000, help="physics steps recorded")
    parser.add_argument("--top", type=int, default=25, help="functions printed")
    args = parser.parse_args()
    if os.environ.get(_CHILD):
        run_scene(args.scene, args.steps)
        return
    if shutil.which("perf") is None:
        raise SystemExit("needs Linux perf on the PATH (Debian: apt install linux-perf)")
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "perf.data"
        subprocess.run(["perf", "record", "-q", "-o", str(data), "--", sys.executable, __file__, args.scene,
                        "--steps", str(args.steps)], env={**os.environ, _CHILD: "1"}, check=True)
        report(data, args.top)


if __name__ == "__main__":
    main()
