"""Every speed figure of mechgym against MuJoCo's, in one run: physics, environments and vector envs.

    python benchmarks/run.py [--quick] [--json bench.json]

Runs, in this order and in the same process, ``bench_engine`` (µs per physics step, scene by scene),
``bench_envs`` (env steps per second of one env on each backend, start-up of a fresh process, the engine's
cold compile), ``bench_vector`` (vector env steps per second at N = 1, 16, 64, 256 against SyncVectorEnv
over MuJoCo and ``mujoco.rollout``) and ``bench_bin`` (N = 8, 64, 256 boxes dropped into a bin), prints
their tables, and writes them with the machine's description to a JSON file. ``--quick`` shortens every
timing (about ten times fewer steps; N up to 64; no cold compile; 8 boxes in the bin) for a first look.
Figures are ratios within one run: the machine's own speed cancels; its noise (±20 % on a 2-core machine)
does not.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_bin  # noqa: E402
import bench_engine  # noqa: E402
import bench_envs  # noqa: E402
import bench_vector  # noqa: E402


def machine() -> dict[str, object]:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
            "cores": cores, "python": platform.python_version(),
            **{package: metadata.version(package) for package in ("mechgym", "mujoco", "numba", "numpy",
                                                                  "gymnasium")}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter timings, N up to 64")
    parser.add_argument("--json", type=Path, default=Path("bench.json"), help="where to write the figures")
    args = parser.parse_args()
    engine_steps, env_steps = (10_000, 300) if args.quick else (100_000, 2000)
    sizes, vector_steps = ((1, 16, 64), 5) if args.quick else ((1, 16, 64, 256), 20)
    report = {"machine": machine(), "quick": args.quick}
    print(", ".join(f"{k} {v}" for k, v in report["machine"].items()), "\n", flush=True)
    report["engine"] = list(bench_engine.measure(engine_steps))
    bench_engine.print_rows(report["engine"], engine_steps)
    print()
    report["envs"] = list(bench_envs.measure(env_steps))
    bench_envs.print_rows(report["envs"], env_steps)
    if not args.quick:
        report["cold compile s"] = bench_envs.cold_compile()
        bench_envs.print_cold_compile(report["cold compile s"])
    print()
    report["vector"] = list(bench_vector.measure(sizes, vector_steps))
    bench_vector.print_rows(report["vector"])
    print()
    bin_sizes, bin_seconds = ((8,), 0.2) if args.quick else ((8, 64, 256), 0.5)
    report["bin"] = list(bench_bin.measure(bin_sizes, bin_seconds))
    bench_bin.print_rows(report["bin"], bin_seconds)
    args.json.write_text(json.dumps(report, indent=1) + "\n")
    print(f"\nwritten: {args.json}")


if __name__ == "__main__":
    main()
