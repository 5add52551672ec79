"""mechgym.files: a Ctrl-C during a save takes effect after it."""

from __future__ import annotations

import io
import os
import signal

import pytest

from mechgym.files import interrupts_deferred


@pytest.fixture
def default_ctrl_c():
    """Python's own SIGINT handler for the test (a shell starts a background job with SIGINT ignored)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_a_ctrl_c_inside_the_block_is_raised_after_the_block_has_finished_its_save(default_ctrl_c):
    torch = pytest.importorskip("torch")
    done = []
    with pytest.raises(KeyboardInterrupt):
        with interrupts_deferred():
            os.kill(os.getpid(), signal.SIGINT)
            buffer = io.BytesIO()
            torch.save({"weights": torch.arange(10_000.0)}, buffer)  # (a zip writer, as a checkpoint's)
            done.append(buffer.getvalue())
    assert len(done) == 1
    assert torch.equal(torch.load(io.BytesIO(done[0]))["weights"], torch.arange(10_000.0))
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_without_a_ctrl_c_the_block_runs_and_the_handler_is_put_back():
    before = signal.getsignal(signal.SIGINT)
    with interrupts_deferred():
        assert signal.getsignal(signal.SIGINT) is not before
    assert signal.getsignal(signal.SIGINT) is before


def test_an_ignored_ctrl_c_stays_ignored():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with interrupts_deferred():
            os.kill(os.getpid(), signal.SIGINT)
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)
