"""A process's CPU capped at the share Lambda gives a function of M MB (1,769 MB is one vCPU).

There is no Lambda here, so the benches that price Lambda's memory sizes (`bench_router_memory.py`,
`bench_cold_start.py --memory`) run the code in a process of its own and cap that process:

- by CFS bandwidth control when this machine lets the bench make a cgroup: `cpu.max` (cgroup v2) or
  `cpu.cfs_quota_us`/`cpu.cfs_period_us` (v1), period 20 ms (v1 takes no quota under 1 ms: 128 MB is 1.45 ms);
- else by a duty-cycle limiter (as `cpulimit` does): SIGCONT for M/1769 of every 10 ms, SIGSTOP for the rest.

A limiter is made once, given the process (`add`), and capped per measurement (`cap(memory_mb)`), so sizes can be
interleaved on one process.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

__all__ = ("ONE_VCPU_MB", "Limiter", "cpu_share", "limiter")

ONE_VCPU_MB = 1769
CFS_PERIOD_US = 20_000
DUTY_PERIOD_S = 0.010


def cpu_share(memory_mb: int) -> float:
    """The share of one vCPU Lambda gives a function of `memory_mb` (capped at one: more memory adds cores)."""
    return min(memory_mb, ONE_VCPU_MB) / ONE_VCPU_MB


class Limiter(Protocol):
    name: str

    def add(self, pid: int) -> None: ...

    def cap(self, memory_mb: int) -> contextlib.AbstractContextManager[None]: ...

    def close(self) -> None: ...


class CfsLimiter:
    """CFS bandwidth control on a cgroup of the bench's own, holding only the processes added to it."""

    def __init__(self) -> None:
        v2 = Path("/sys/fs/cgroup/cgroup.controllers")
        if v2.exists() and "cpu" in v2.read_text().split():
            self.group, self.v2 = Path(f"/sys/fs/cgroup/agent-wait-bench-{os.getpid()}"), True
        else:
            self.group, self.v2 = Path(f"/sys/fs/cgroup/cpu/agent-wait-bench-{os.getpid()}"), False
        self.group.mkdir()
        self.name = f"cgroup {'v2 cpu.max' if self.v2 else 'v1 cpu.cfs_quota_us'}, period {CFS_PERIOD_US // 1000} ms"

    def add(self, pid: int) -> None:
        (self.group / "cgroup.procs").write_text(str(pid))

    def _set(self, quota_us: int | None) -> None:
        if self.v2:
            (self.group / "cpu.max").write_text(f"{quota_us or 'max'} {CFS_PERIOD_US}")
        else:
            (self.group / "cpu.cfs_period_us").write_text(str(CFS_PERIOD_US))
            (self.group / "cpu.cfs_quota_us").write_text(str(quota_us or -1))

    @contextlib.contextmanager
    def cap(self, memory_mb: int) -> Iterator[None]:
        self._set(round(CFS_PERIOD_US * cpu_share(memory_mb)))
        try:
            yield
        finally:
            self._set(None)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.group.rmdir()  # empty once its processes have exited


class DutyCycleLimiter:
    """SIGSTOP and SIGCONT on the added process from a thread: running for M/1769 of every 10 ms."""

    name = f"SIGSTOP/SIGCONT duty cycle, period {DUTY_PERIOD_S * 1000:.0f} ms"

    def __init__(self) -> None:
        self.pid: int | None = None

    def add(self, pid: int) -> None:
        self.pid = pid

    def _signal(self, signum: int) -> None:
        if self.pid is not None:
            with contextlib.suppress(ProcessLookupError):  # it may exit while capped
                os.kill(self.pid, signum)

    @contextlib.contextmanager
    def cap(self, memory_mb: int) -> Iterator[None]:
        share = cpu_share(memory_mb)
        stop = threading.Event()

        def cycle() -> None:
            while not stop.is_set():
                self._signal(signal.SIGCONT)
                time.sleep(DUTY_PERIOD_S * share)
                if share < 1:
                    self._signal(signal.SIGSTOP)
                    time.sleep(DUTY_PERIOD_S * (1 - share))

        thread = threading.Thread(target=cycle, daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()
            self._signal(signal.SIGCONT)

    def close(self) -> None:
        pass


def limiter() -> Limiter:
    """CFS bandwidth control where this machine allows a cgroup of the bench's own, else the duty cycle."""
    try:
        return CfsLimiter()
    except OSError:
        return DutyCycleLimiter()
