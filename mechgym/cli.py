"""The ``mechgym`` command line."""

from __future__ import annotations

import argparse
import sys

from .backends import BACKENDS
from .errors import SceneError


def _sweep_cube_drop(args: argparse.Namespace) -> int:
    from .robustness import cube_drop, report

    log = report.CsvLog(args.out) if args.out else None
    done = log.read() if log else []
    if done:
        print(f"resuming: {len(done)} finished runs read from {args.out}", file=sys.stderr)
    results = cube_drop.sweep(args.backend, [ms / 1000 for ms in args.dt_ms], done=done,
                              on_result=log.append if log else None)
    print(report.format_table(results), flush=True)
    if args.plot:
        report.plot(results, args.plot)
        print(f"plot written to {args.plot}", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mechgym", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    sweep = commands.add_parser("sweep", help="dt sweeps of passive scenes")
    scenes = sweep.add_subparsers(dest="scene", required=True)
    drop = scenes.add_parser("cube-drop", help="seed 003: a 5 cm cube dropped onto a 1 cm slab")
    drop.add_argument("--backend", nargs="+", choices=sorted(BACKENDS), default=["mujoco"],
                      help="one or more backends, shown side by side")
    drop.add_argument("--dt-ms", nargs="+", type=float, default=list(_dt_default()),
                      help="physics steps in ms (default: seed 003's 15 values)")
    drop.add_argument("--out", help="CSV file; finished runs are appended as they end, and an existing file "
                                    "is resumed")
    drop.add_argument("--plot", help="PNG file for the plot")
    drop.set_defaults(run=_sweep_cube_drop)
    return parser


def _dt_default():
    from .robustness.cube_drop import DT_MS

    return DT_MS


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (SceneError, NotImplementedError, ValueError) as error:
        print(f"mechgym: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
