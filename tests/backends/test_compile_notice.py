"""The in-house engine says so, on stderr, when it compiles its numba kernels (a cold cache: minutes), and
says nothing when it loads them from numba's cache."""

from __future__ import annotations

import subprocess
import sys

from mechgym.backends.mechgym_backend import COMPILE_NOTICE

# A function of the engine's package compiled in a fresh process (its module is what the notice looks at;
# not cached: a function defined on the command line has no file for numba's cache).
COMPILES = """
from numba import njit
import mechgym.backends.mechgym_backend
def probe(x):
    return x + 1.0
probe.__module__ = "mechgym.physics.probe"
compiled = njit(probe)
assert compiled(1.0) == 2.0 and compiled(1) == 2.0
"""
# The engine's own kernels, which this test run has compiled or loaded already: numba's cache serves them.
CACHED = 'import mechgym; mechgym.load("cube_drop", backend="mechgym", dt=0.002).step(3)'


def stderr_of(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stderr


def test_compiling_an_engine_kernel_prints_the_notice_once_and_a_cached_engine_prints_nothing():
    stderr_of(CACHED)  # fills the cache when this test runs first
    assert stderr_of(COMPILES).count(COMPILE_NOTICE) == 1  # two compiles (float, int), one notice
    assert COMPILE_NOTICE not in stderr_of(CACHED)
