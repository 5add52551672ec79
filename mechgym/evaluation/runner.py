"""The grid runner: calls of one function over many argument sets, in this process, in local worker
processes, or as Ray tasks, each result handed back as soon as it finishes.

The evaluation's cells and the cube-drop sweep's runs both go through :func:`run_tasks`; what is done with
a finished result (writing it to disk) is the caller's ``on_result``, so an interrupted grid keeps every
result that finished.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Hashable, Mapping
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any

LOCAL_RAY = "local"


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)))


def _progress(total: int, description: str, show: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=description, unit="cell", disable=not show or total == 0, dynamic_ncols=True)


def run_tasks(function: Callable[..., Any], tasks: Mapping[Hashable, tuple], on_result: Callable[[Hashable, Any],
              None], workers: int = 1, ray: str | None = None, description: str = "cells",
              progress: bool = True) -> None:
    """Call ``function(*tasks[key])`` for every key and pass each result to ``on_result(key, result)``.

    workers: local processes (1: run here, one after the other). ray: a Ray cluster's address, or
    ``"local"`` to start a Ray instance on this machine with ``workers`` CPUs; results are the same.
    Tasks are started in the order given (put the longest first).
    """
    with _progress(len(tasks), description, progress) as bar:
        def finished(key, result):
            on_result(key, result)
            bar.update()

        if ray is not None:
            _run_ray(function, tasks, finished, workers, ray)
        elif workers <= 1 or len(tasks) <= 1:
            for key, arguments in tasks.items():
                finished(key, function(*arguments))
        else:
            _run_processes(function, tasks, finished, workers)


def _run_processes(function, tasks, finished, workers: int) -> None:
    # spawn, not fork: the parent may hold torch's and numba's threads, which do not survive a fork.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=min(workers, len(tasks)), mp_context=context) as pool:
        pending = {pool.submit(function, *arguments): key for key, arguments in tasks.items()}
        try:
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    finished(pending.pop(future), future.result())
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def _run_ray(function, tasks, finished, workers: int, address: str) -> None:
    try:
        import ray
    except ImportError:
        raise ValueError("--ray needs Ray: pip install 'mechgym[ray]'") from None
    started_here = not ray.is_initialized()
    if started_here:
        settings: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                    "configure_logging": False}
        if address == LOCAL_RAY:
            ray.init(num_cpus=workers, **settings)
        else:
            ray.init(address=address, **settings)
    try:
        remote = ray.remote(num_cpus=1, max_retries=0)(function)
        pending = {remote.remote(*arguments): key for key, arguments in tasks.items()}
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for reference in done:
                finished(pending.pop(reference), ray.get(reference))
    finally:
        if started_here:
            ray.shutdown()
