"""mechgym.physics.jit: kernels are compiled once per argument type, not once per literal constant, and without
the wrappers for Python, whose calls go to a twin."""

import importlib.util
import math
import os
import subprocess
import sys

from numba import njit
from numba.core.codegen import JITCodeLibrary

from mechgym.physics import jit
from mechgym.physics.jit import engine_source_stamp, from_python, kernel


def test_a_kernel_called_with_different_constants_is_compiled_once():
    @kernel
    def scaled(x, flag, index):
        return x * (index + 1) if flag else -x

    @kernel(literal_arguments=True)
    def scaled_per_constant(x, flag, index):
        return x * (index + 1) if flag else -x

    @njit
    def caller(x):
        return (scaled(x, True, 0) + scaled(x, False, 3) + scaled_per_constant(x, True, 0)
                + scaled_per_constant(x, False, 3))

    assert caller(2.0) == 2.0 - 2.0 + 2.0 - 2.0
    assert caller(1.5) == 0.0
    assert len(scaled.signatures) == 1
    assert len(scaled_per_constant.signatures) == 2


def test_the_engine_runs_as_plain_python_under_numba_disable_jit():
    """numba's debugging mode (every function its Python self) must still step a scene with joints and
    contacts, to the same state as the compiled engine."""
    code = ("import mechgym, numpy; sim = mechgym.load('gripper', dt=0.002); sim.ctrl = [-0.03, 0.02, 0.02]; "
            "sim.step(3); print(repr(numpy.round(sim.qpos, 12).tolist()))")
    plain = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "NUMBA_DISABLE_JIT": "1"})
    compiled = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert plain.stdout == compiled.stdout and plain.stdout.startswith("[")


def test_python_calls_a_kernel_through_its_twin_and_compiled_callers_call_it_without_a_wrapper():
    @kernel
    def doubled(x):
        return 2.0 * x

    @njit
    def caller(x):
        return doubled(x) + 1.0

    assert caller(1.5) == 4.0 and doubled(1.5) == 3.0
    twin = from_python(doubled)
    assert twin is not doubled and from_python(twin) is twin and from_python(caller) is caller
    assert len(doubled.signatures) == len(twin.signatures) == 1
    for dispatcher, wrapped in ((doubled, False), (twin, True)):
        (compiled,) = dispatcher.overloads.values()
        assert (compiled.library.get_pointer_to_function(compiled.fndesc.llvm_cpython_wrapper_name) != 0) == wrapped


def test_a_kernel_is_compiled_to_machine_code_only_inside_the_callers_that_python_calls(monkeypatch):
    """A kernel's code is linked into its callers' and compiled there; numba does not optimize and compile each
    level of a call tree with everything below it."""
    compiled_libraries = []
    finalize_specific = JITCodeLibrary._finalize_specific

    def recorded(library):
        compiled_libraries.append(library.name)
        return finalize_specific(library)

    monkeypatch.setattr(JITCodeLibrary, "_finalize_specific", recorded)

    @kernel
    def inner(x):
        return x + 1.0

    @kernel
    def middle(x):
        return 3.0 * inner(x)

    @njit
    def outer(x):
        return middle(x) - inner(x)

    assert outer(1.0) == 6.0 - 2.0 and middle(0.5) == 4.5
    names = " ".join(compiled_libraries)
    assert "outer" in names and "middle__from_python" in names
    assert not any(name.endswith(("inner", "middle")) for name in compiled_libraries)


def _long_function(name: str):
    """A function of 200 dependent float operations: above LLVM's own threshold for inlining."""
    lines = [f"def {name}(x):"] + [f"    x = math.sqrt(x * x + {k}.0) - 0.5 * x" for k in range(200)] + ["    return x"]
    namespace = {"math": math}
    exec("\n".join(lines), namespace)
    return namespace[name]


def test_llvm_inlines_an_inline_kernel_into_its_callers_however_long():
    inlined, called = kernel(inline=True)(_long_function("inlined")), kernel(_long_function("called"))

    @njit
    def caller(x):
        return inlined(x) + called(x) + inlined(x + 1.0)

    plain = _long_function("plain")
    assert caller(1.0) == plain(1.0) + plain(1.0) + plain(2.0)
    (code,) = caller.inspect_llvm().values()
    calls = [line for line in code.splitlines() if " call " in line]
    assert not any("inlined" in line for line in calls) and any("called" in line for line in calls)


def _fresh_module(path):
    """A new module object from ``path`` (new dispatchers, as in a new process)."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_an_edit_anywhere_in_the_engine_invalidates_the_cached_code_of_every_twin(tmp_path, monkeypatch):
    """numba stamps a cache file with its function's own source file only; a twin's code holds the kernels it
    calls from other modules, so its cache must go stale when any module of the engine changes."""
    path = tmp_path / "cached_kernel.py"
    path.write_text("from mechgym.physics.jit import kernel\n\n@kernel\ndef twice(x):\n    return 2.0 * x\n")
    first = from_python(_fresh_module(path).twice)
    assert first(1.5) == 3.0 and sum(first.stats.cache_misses.values()) == 1  # compiled and saved
    again = from_python(_fresh_module(path).twice)
    assert again(1.5) == 3.0 and sum(again.stats.cache_hits.values()) == 1  # the same engine: loaded
    monkeypatch.setattr(jit, "engine_source_stamp", lambda: "an edited engine")
    edited = from_python(_fresh_module(path).twice)
    assert edited(1.5) == 3.0 and sum(edited.stats.cache_misses.values()) == 1  # compiled anew
    assert sum(edited.stats.cache_hits.values()) == 0


def test_the_engine_source_stamp_follows_every_file_and_its_path(tmp_path):
    stamp = engine_source_stamp.__wrapped__
    (tmp_path / "contact").mkdir()
    (tmp_path / "step.py").write_text("x = 1\n")
    (tmp_path / "contact" / "solve.py").write_text("y = 2\n")
    (tmp_path / "notes.txt").write_text("not source")
    first = stamp(tmp_path)
    (tmp_path / "notes.txt").write_text("still not source")
    assert stamp(tmp_path) == first
    (tmp_path / "contact" / "solve.py").write_text("y = 3\n")
    assert stamp(tmp_path) != first
    (tmp_path / "contact" / "solve.py").write_text("y = 2\n")
    assert stamp(tmp_path) == first
    (tmp_path / "contact" / "solve.py").rename(tmp_path / "contact" / "sweep.py")
    assert stamp(tmp_path) != first
    assert engine_source_stamp() == stamp(jit.Path(jit.__file__).parent)
