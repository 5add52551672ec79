"""Where the engine's first (cold) compile goes: numba's compiles function by function, and LLVM's phases.

    python benchmarks/profile_compile.py [--envs CubeDrop Gripper SliderCrank] [--top K]

Runs the cold start of ``bench_envs`` (``gymnasium.make`` + reset + one step of each env on the in-house engine, in
a fresh process with numba's cache in an empty folder, so that everything compiles) and prints:
- each compiled function's own time (its compile less the compiles of the callees it triggered) and its whole
  time, from numba's ``numba:compile`` events;
- LLVM's share by phase, timed around numba's code library methods (function passes on each new module, a
  kernel's at level 1; module passes over a twin's library with the kernels it calls linked in; machine code):
  a kernel's code is only linked into its callers' (``physics.jit``), so the engine's code passes through the
  module passes and the machine code once per twin that Python calls.
numba's private code-library methods are wrapped for the phases (numba 0.68); a numba without them gets the
per-function table only. Not a test; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_envs  # noqa: E402

# Run in the fresh interpreter before bench_envs.COLD's first steps: the listener and the timers.
PRELUDE = r"""
import collections, json, time
from numba.core import codegen, event
from mechgym.physics import jit

stack, own, whole, count = [], collections.Counter(), collections.Counter(), collections.Counter()
phases = collections.Counter()


class Compiles(event.Listener):
    def on_start(self, ev):
        function = getattr(ev.data.get("dispatcher"), "py_func", None)
        name = f"{function.__module__}.{function.__qualname__}" if function is not None else "?"
        stack.append([name, time.perf_counter(), 0.0])

    def on_end(self, ev):
        name, start, inner = stack.pop()
        elapsed = time.perf_counter() - start
        if stack:
            stack[-1][2] += elapsed
        own[name] += elapsed - inner
        whole[name] = max(whole[name], elapsed)
        count[name] += 1


def timed(owner, method, phase):
    original = getattr(owner, method, None)
    if original is None:
        return

    def wrapper(self, *args):
        start = time.perf_counter()
        try:
            return original(self, *args)
        finally:
            phases[phase] += time.perf_counter() - start
    setattr(owner, method, wrapper)


timed(codegen.CPUCodeLibrary, "_optimize_functions", "function passes")
timed(jit._LinkedLibrary, "_optimize_functions", "function passes")
timed(codegen.CPUCodeLibrary, "_optimize_final_module", "module passes (with the callees linked in)")
timed(codegen.JITCodeLibrary, "_finalize_specific", "machine code")
event.register("numba:compile", Compiles())
"""
EPILOGUE = """print(json.dumps({"phases": phases, "functions": [(n, own[n], whole[n], count[n]) for n in own]}))"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", nargs="+", default=["CubeDrop", "Gripper", "SliderCrank"])
    parser.add_argument("--top", type=int, default=25, help="functions listed (default 25)")
    args = parser.parse_args()
    *_, seconds, report = bench_envs.cold_start([f"mechgym/{name}-v0" for name in args.envs], PRELUDE, EPILOGUE)
    total, result = float(seconds), json.loads(report)
    functions = result["functions"]
    print(f"cold start of {', '.join(args.envs)}: {total:.0f} s, {sum(c for *_, c in functions)} compiles")
    for phase, spent in result["phases"].items():
        print(f"  LLVM {phase:<45} {spent:6.1f} s  {100 * spent / total:4.1f} %")
    print(f"\n{'own s':>7} {'whole s':>8}  function (own: less the callees' compiles it triggered)")
    for name, mine, entire, times in sorted(functions, key=lambda row: -row[1])[:args.top]:
        print(f"{mine:7.1f} {entire:8.1f}  {name}" + (f"  (x{times})" if times > 1 else ""))


if __name__ == "__main__":
    main()
