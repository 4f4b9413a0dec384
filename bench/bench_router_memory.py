"""The router's billed duration and cost per lifecycle by Lambda memory size, its CPU capped as Lambda caps it.

Run: uv run --frozen python bench/bench_router_memory.py [--rounds 7] [--memory 128,256,512,768,1024,1769]

Lambda gives a function CPU in proportion to its memory: 1,769 MB is one vCPU. There is no Lambda here, so the
router runs in a worker process of its own whose CPU share is capped at M/1769 of one CPU for each memory size M,
with moto's server in another process, uncapped (so only the router is slowed, as only the function is on Lambda):

- by CFS bandwidth control when this machine lets the bench make a cgroup: `cpu.max` (cgroup v2) or
  `cpu.cfs_quota_us`/`cpu.cfs_period_us` (v1), period 20 ms (v1 takes no quota under 1 ms: 128 MB is 1.45 ms);
- else by a duty-cycle limiter (as `cpulimit` does): SIGCONT for M/1769 of every 10 ms, SIGSTOP for the rest.

The worker builds the router once (`bench_lifecycle_calls.py`'s refund graph and stack), runs one lifecycle
uncapped to warm it, then runs lifecycles on request: a start and its answer, each sent to the entry queue,
received and deleted as Lambda's event source does, `Router.handle` timed (wall and CPU). Memory sizes are
interleaved round by round, so the machine's other load falls on each alike. Per size: the median wall time of a
start and of an answer, billed as Lambda bills each invocation (rounded up to 1 ms), GB-seconds, and dollars per
million lifecycles at x86 and arm64 prices with $0.20 per million requests. Figures, not a test: it exits 0.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

MEMORY_MB = (128, 256, 512, 768, 1024, 1769)
ONE_VCPU_MB = 1769
CFS_PERIOD_US = 20_000
DUTY_PERIOD_S = 0.010
PRICE = {
    "request": 0.20 / 1e6,
    "x86_64": 0.0000166667,  # per GB-second
    "arm64": 0.0000133334,
}
INVOCATIONS = 2
"""A lifecycle is two router invocations: the start and the answer (batch size 1)."""


# -- the worker: the router in a process of its own --------------------------------------------------------------


def worker() -> int:
    """Build the router, warm it, then run one lifecycle per `run` line on stdin and print its timings."""
    import resource

    import boto3

    from agent_wait.host import HostSettings, build_router
    from bench_lifecycle_calls import REGION, Stack, asked_question, deliver

    stack = Stack(**json.loads(os.environ["BENCH_STACK"]))
    session = boto3.Session(region_name=REGION)
    router = build_router(HostSettings.from_env("router"), session=session)
    sqs = session.client("sqs")
    reader = session.client("dynamodb")
    serial = iter(range(10**9))

    def timed(message: dict[str, Any], thread_id: str) -> tuple[float, float]:
        cpu = time.process_time()
        wall = deliver(sqs, stack, router, message, thread_id)
        return wall, time.process_time() - cpu  # CPU includes the send and receive around it: an upper bound

    def lifecycle() -> dict[str, float]:
        thread_id = f"order-{os.getpid()}-{next(serial)}"
        start = timed({"thread_id": thread_id, "input": {"order_id": thread_id, "amount": 900}}, thread_id)
        question_id = asked_question(reader, stack, thread_id)
        answer = timed({"thread_id": thread_id, "question_id": question_id, "answer": {"action": "approve"}}, thread_id)
        rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KB on Linux
        return {"start": start[0], "answer": answer[0], "start_cpu": start[1], "answer_cpu": answer[1], "rss": rss_mb}

    lifecycle()
    print("ready", flush=True)
    for line in sys.stdin:
        if line.strip() != "run":
            break
        print(json.dumps(lifecycle()), flush=True)
    return 0


# -- capping the worker's CPU ------------------------------------------------------------------------------------


class Limiter(Protocol):
    name: str

    def cap(self, memory_mb: int) -> contextlib.AbstractContextManager[None]: ...

    def close(self) -> None: ...


class CfsLimiter:
    """CFS bandwidth control on a cgroup of the bench's own, holding only the worker."""

    def __init__(self, pid: int) -> None:
        v2 = Path("/sys/fs/cgroup/cgroup.controllers")
        if v2.exists() and "cpu" in v2.read_text().split():
            self.group, self.v2 = Path(f"/sys/fs/cgroup/agent-wait-bench-{os.getpid()}"), True
        else:
            self.group, self.v2 = Path(f"/sys/fs/cgroup/cpu/agent-wait-bench-{os.getpid()}"), False
        self.group.mkdir()
        try:
            (self.group / "cgroup.procs").write_text(str(pid))
        except OSError:
            self.group.rmdir()
            raise
        self.name = f"cgroup {'v2 cpu.max' if self.v2 else 'v1 cpu.cfs_quota_us'}, period {CFS_PERIOD_US // 1000} ms"

    def _set(self, quota_us: int | None) -> None:
        if self.v2:
            (self.group / "cpu.max").write_text(f"{quota_us or 'max'} {CFS_PERIOD_US}")
        else:
            (self.group / "cpu.cfs_period_us").write_text(str(CFS_PERIOD_US))
            (self.group / "cpu.cfs_quota_us").write_text(str(quota_us or -1))

    @contextlib.contextmanager
    def cap(self, memory_mb: int) -> Iterator[None]:
        self._set(round(CFS_PERIOD_US * min(memory_mb, ONE_VCPU_MB) / ONE_VCPU_MB))
        try:
            yield
        finally:
            self._set(None)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.group.rmdir()  # empty once the worker has exited


class DutyCycleLimiter:
    """SIGSTOP and SIGCONT on the worker from a thread: running for M/1769 of every 10 ms."""

    name = f"SIGSTOP/SIGCONT duty cycle, period {DUTY_PERIOD_S * 1000:.0f} ms"

    def __init__(self, pid: int) -> None:
        self.pid = pid

    @contextlib.contextmanager
    def cap(self, memory_mb: int) -> Iterator[None]:
        share = min(memory_mb, ONE_VCPU_MB) / ONE_VCPU_MB
        stop = threading.Event()

        def cycle() -> None:
            while not stop.is_set():
                os.kill(self.pid, signal.SIGCONT)
                time.sleep(DUTY_PERIOD_S * share)
                if share < 1:
                    os.kill(self.pid, signal.SIGSTOP)
                    time.sleep(DUTY_PERIOD_S * (1 - share))

        thread = threading.Thread(target=cycle, daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()
            os.kill(self.pid, signal.SIGCONT)

    def close(self) -> None:
        pass


def limiter_for(pid: int) -> Limiter:
    try:
        return CfsLimiter(pid)
    except OSError:
        return DutyCycleLimiter(pid)


# -- the curve ---------------------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7, help="lifecycles per memory size, interleaved")
    parser.add_argument("--memory", default=",".join(map(str, MEMORY_MB)), help="sizes in MB, comma-separated")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker()
    from bench_lifecycle_calls import moto_stack

    sizes = [int(m) for m in args.memory.split(",")]
    runs: dict[int, list[dict[str, float]]] = {m: [] for m in sizes}
    with moto_stack("mem") as stack:
        env = {**os.environ, "BENCH_STACK": json.dumps(stack.__dict__)}
        child = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )
        assert child.stdin is not None
        assert child.stdout is not None
        try:
            if child.stdout.readline().strip() != "ready":
                raise RuntimeError("the router's worker did not start")
            limiter = limiter_for(child.pid)
            try:
                for _ in range(args.rounds):
                    for memory in sizes:
                        with limiter.cap(memory):
                            child.stdin.write("run\n")
                            child.stdin.flush()
                            runs[memory].append(json.loads(child.stdout.readline()))
            finally:
                child.stdin.close()
                child.wait(timeout=60)
                limiter.close()
        finally:
            if child.poll() is None:
                child.kill()
    report(runs, limiter.name, args.rounds)
    return 0


def report(runs: dict[int, list[dict[str, float]]], limiter: str, rounds: int) -> None:
    print(f"The router per lifecycle by memory size: {rounds} lifecycles each, interleaved; CPU capped by {limiter}")
    print("moto in its own process on 127.0.0.1, uncapped; the refund graph of bench_lifecycle_calls.py\n")
    print(
        f"{'memory':>7}{'CPU share':>10}{'start ms':>10}{'answer ms':>11}{'billed ms':>11}{'GB-s':>10}"
        f"{'$/M x86':>9}{'$/M arm64':>11}{'CPU ms':>8}"
    )
    rss = max(r["rss"] for rows in runs.values() for r in rows)
    cost: dict[int, tuple[float, float]] = {}
    for memory, rows in runs.items():
        start = statistics.median(r["start"] for r in rows) * 1000
        answer = statistics.median(r["answer"] for r in rows) * 1000
        cpu = statistics.median(r["start_cpu"] + r["answer_cpu"] for r in rows) * 1000
        billed = math.ceil(start) + math.ceil(answer)
        gb_s = billed / 1000 * memory / 1024
        x86 = (gb_s * PRICE["x86_64"] + INVOCATIONS * PRICE["request"]) * 1e6
        arm = (gb_s * PRICE["arm64"] + INVOCATIONS * PRICE["request"]) * 1e6
        fits = memory >= rss
        if fits:
            cost[memory] = (x86, arm)
        print(
            f"{memory:>5} MB{min(memory, ONE_VCPU_MB) / ONE_VCPU_MB:>10.3f}{start:>10.1f}{answer:>11.1f}{billed:>11}"
            f"{gb_s:>10.4f}{x86:>9.2f}{arm:>11.2f}{cpu:>8.0f}"
            + ("" if fits else "  (under the peak RSS: would not fit)")
        )
    print(f"\nThe worker's peak resident memory: {rss:.0f} MB (the router, its graph, boto3, the bench's own calls).")
    if not cost:
        print("No size measured holds it.")
        return
    cheapest = min(cost, key=lambda m: cost[m][0])
    print(
        f"Cheapest that fits: {cheapest} MB (${cost[cheapest][0]:.2f} per million lifecycles on x86, "
        f"${cost[cheapest][1]:.2f} on arm64)."
    )
    print(
        "Billed ms: each invocation's median rounded up to 1 ms, the start's plus the answer's. $/M: GB-s at"
        " $0.0000166667 (x86) or $0.0000133334 (arm64) per GB-second, plus $0.20 per million requests, two a lifecycle."
    )
    print(
        "The arm64 column assumes x86's duration: Graviton was not measured here. CPU ms: the worker's CPU time per"
        " lifecycle including its own send and receive (an upper bound on the router's). This machine's cores are not"
        " Lambda's, and moto on loopback answers faster than AWS does, so Lambda's figures differ: the curve's shape"
        " is what this measures."
    )


if __name__ == "__main__":
    raise SystemExit(main())
