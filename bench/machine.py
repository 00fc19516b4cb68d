"""What a benchmark prints about the machine it ran on (shared by bench/*)."""
from __future__ import annotations

import os
import platform


def quiet_threads(threads: str = "2") -> str:
    """Thread pools for an interleaved run, set before numpy, torch or a
    BLAS loads: `threads` threads everywhere, OpenMP passive, and OpenBLAS's
    pthreads asleep soon after each call (they spin 2^28 cycles by default,
    so two implementations' pools would steal the cores from each other;
    2^4 makes them sleep at once, as PASSIVE does for OpenMP)."""
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = threads
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    os.environ["OPENBLAS_THREAD_TIMEOUT"] = "4"
    return threads


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo), else what platform knows."""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "?"


def interleaved(fns, reps: int) -> dict:
    """Each of `fns` (name -> callable) once as a warm-up, then `reps` rounds
    running each once in turn: the seconds of every call, by name."""
    import time
    for fn in fns.values():
        fn()
    times = {k: [] for k in fns}
    for _ in range(reps):
        for k, fn in fns.items():
            t = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t)
    return times
